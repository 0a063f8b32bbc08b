#!/usr/bin/env python3
"""Ground-truth analysis of the vLLM H100 runs (stdlib only).

Usage: python3 scripts/groundtruth_analysis.py [path/to/experiments.json] > out.md

For every experiment and load stage it derives, from the per-request trace:
  * mean concurrency by Little's law (throughput x mean E2E) and by time average over the stage,
  * the time-averaged number of requests in decode (sum of (E2E - TTFT) over the stage span),
  * the time-averaged KV context held by decoding requests (input + tokens generated so far),
  * decode ms per token = (E2E_mean - TTFT_mean) / (output_len - 1) with the configured output_len,
  * the ideal (peak-bandwidth) weight-read and KV-read time per decode step,
and fits, per model, decode_step_ms = a + b * decode_batch (least squares over the
non-saturated stages), and the efficiency ratio observed / ideal-memory-time.
"""
import csv
import gzip
import json
import math
import os
import sys

BW_BYTES_PER_MS = 3.35e12 / 1e3  # H100 SXM HBM3 peak, bytes per ms


def model_bytes(cfg):
    """Weight bytes (fp16/bf16) and KV bytes per token of a HF config (whole model)."""
    d = cfg["hidden_size"]
    layers = cfg["num_hidden_layers"]
    heads = cfg["num_attention_heads"]
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or d // heads
    ff = cfg["intermediate_size"]
    vocab = cfg["vocab_size"]
    experts = cfg.get("num_local_experts") or 1
    attn = d * (heads * head_dim) * 2 + d * (kv_heads * head_dim) * 2
    mlp = 3 * d * ff * experts + (d * experts if experts > 1 else 0)
    params = layers * (attn + mlp + 2 * d) + 2 * vocab * d + d
    kv_per_token = 2 * layers * kv_heads * head_dim * 2
    return params * 2, kv_per_token


def read_trace(path):
    rows = []
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows


def lsq(xs, ys):
    n = len(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx if sxx > 0 else 0.0
    return my - b * mx, b


def main():
    exp_path = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/groundtruth/experiments.json"
    base = os.path.dirname(os.path.abspath(exp_path))
    doc = json.load(open(exp_path))
    points = {}  # model -> list of (batch, step_ms, ideal_ms, saturated)
    print("| experiment | stage | rate rps | in tok | out | E2E ms | TTFT ms | decode ms/tok |"
          " L=X*E2E | L time-avg | decode batch | ctx/req | weights ms | KV ms | ideal ms |"
          " obs/ideal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in doc["experiments"]:
        cfg = json.load(open(os.path.join(base, e["model_config"])))
        tp = e["tp"]
        w_bytes, kv_tok = model_bytes(cfg)
        weights_ms = w_bytes / tp / BW_BYTES_PER_MS
        out_len = e["workload"]["data"]["output_len"]
        sat = e["status"]["saturated"]
        rows = read_trace(os.path.join(base, e["per_request_trace"]))
        short = e["id"].split("-", 2)[2]
        for st in e["observed"]["stages"]:
            s = st["stage"]
            ok = [r for r in rows if int(r["stage"]) == s and r["ok"] == "1"]
            allr = [r for r in rows if int(r["stage"]) == s]
            start = min(float(r["arrival_ms"]) for r in allr)
            end = max(float(r["arrival_ms"]) + float(r["e2e_ms"]) for r in allr)
            span = end - start
            e2e_mean = st["e2e_ms"]["mean"]
            ttft_mean = st["ttft_ms"]["mean"]
            little = st["throughput"]["requests_per_s"] * e2e_mean / 1000.0
            busy = sum(float(r["e2e_ms"]) for r in allr) / span
            dec_time = [(float(r["e2e_ms"]) - float(r["ttft_ms"]), int(r["input_tokens"])) for r in ok]
            dec_batch = sum(t for t, _ in dec_time) / span
            ctx_tokens = sum(t * (i + out_len / 2.0) for t, i in dec_time) / span
            ctx_per_req = ctx_tokens / dec_batch if dec_batch > 0 else 0
            kv_ms = ctx_tokens * kv_tok / tp / BW_BYTES_PER_MS
            ideal = weights_ms + kv_ms
            dpt = st["derived"]["decode_ms_per_token_est"]
            print(f"| {short} | {s} | {st['requested_rate_rps']} | {st['prompt_len_mean']:.0f} |"
                  f" {out_len} | {e2e_mean:.0f} | {ttft_mean:.1f} | {dpt:.2f} | {little:.1f} |"
                  f" {busy:.1f} | {dec_batch:.1f} | {ctx_per_req:.0f} | {weights_ms:.2f} |"
                  f" {kv_ms:.2f} | {ideal:.2f} | {dpt / ideal:.2f} |")
            points.setdefault(e["model"], []).append((dec_batch, dpt, ideal, weights_ms, kv_ms, sat))
    print()
    print("| model | fit a (ms/step) | fit b (ms per decoding request) | max rel. residual |"
          " weights ms | KV ms per request (at ctx) | obs - ideal (mean ms) |")
    print("|---|---|---|---|---|---|---|")
    for model, pts in points.items():
        ns = [p for p in pts if not p[5]]
        a, b = lsq([p[0] for p in ns], [p[1] for p in ns])
        res = max(abs(a + b * p[0] - p[1]) / p[1] for p in ns)
        kv_per_req = sum(p[4] / p[0] for p in ns) / len(ns)
        gap = sum(p[1] - p[2] for p in ns) / len(ns)
        print(f"| {model} | {a:.2f} | {b:.4f} | {100 * res:.1f}% | {ns[0][3]:.2f} |"
              f" {kv_per_req:.4f} | {gap:.2f} |")


if __name__ == "__main__":
    main()
