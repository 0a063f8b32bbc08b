#!/usr/bin/env python3
"""Time series of a serving run: decode batch, queue and per-token decode time over time.

Usage:
  python3 scripts/saturated_timeline.py TRACE.csv.gz [--output-len N] [--every S]
  python3 scripts/saturated_timeline.py RESULT.json  [--every S]   (blis replay --per-request)

TRACE is a ground-truth per-request CSV (shared/groundtruth/requests/<id>.csv.gz); RESULT is the
JSON that `blis replay ... --per-request` writes. Every --every seconds (default 40) it prints, at
that instant t (seconds since the first send):

  decoding   successful requests between their first and last token at t
  queued     requests sent but not yet at their first token (successes and, for a trace, the
             requests that later time out: a request that fails was never given a token here,
             so it is waiting in the server until the client gives up)
  ms/token   harmonic mean over the decoding requests of their own (e2e - ttft) / (output - 1);
             every running request gets one token per engine step, so this is the mean step
             time (ms) of the steps around t (each request averages over its whole decode)

Standard library only. Latencies in the inputs are ms, arrival in ms (CSV) or s (JSON).
"""
import argparse
import csv
import gzip
import json
import sys


def load_trace(path, output_len):
    rows = list(csv.DictReader(gzip.open(path, "rt") if path.endswith(".gz") else open(path)))
    ok, failed = [], []
    for r in rows:
        arrival = float(r["arrival_ms"])
        if r["ok"] == "1":
            ok.append((arrival, float(r["ttft_ms"]), float(r["e2e_ms"]), output_len))
        else:
            failed.append((arrival, float(r["e2e_ms"])))
    return ok, failed


def load_result(path):
    data = json.load(open(path))
    ok = []
    for r in data.get("requests", []):
        if r.get("outcome") == "completed":
            ok.append((r["arrival_s"] * 1000.0, r["ttft_ms"], r["e2e_ms"], r["output_tokens"]))
    return ok, []


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("path")
    p.add_argument("--output-len", type=int, default=1448,
                   help="configured output_len of a trace (default 1448, the reasoning runs)")
    p.add_argument("--every", type=float, default=40.0, help="seconds between rows")
    a = p.parse_args()
    if a.path.endswith(".json"):
        ok, failed = load_result(a.path)
    else:
        ok, failed = load_trace(a.path, a.output_len)
    if not ok:
        sys.exit(f"{a.path}: no successful requests")
    end_ms = max(arr + e2e for arr, _, e2e, _ in ok)
    print(f"{'t s':>6} {'decoding':>8} {'queued':>7} {'ms/token':>8}")
    t = a.every * 1000.0
    while t < end_ms:
        decoding, rate, queued = 0, 0.0, 0
        for arr, ttft, e2e, out in ok:
            if arr <= t < arr + ttft:
                queued += 1
            elif arr + ttft <= t < arr + e2e and out > 1:
                decoding += 1
                rate += (out - 1) / (e2e - ttft)
        queued += sum(1 for arr, e2e in failed if arr <= t < arr + e2e)
        step = decoding / rate if rate > 0 else float("nan")
        print(f"{t / 1000:6.0f} {decoding:8d} {queued:7d} {step:8.2f}")
        t += a.every * 1000.0


if __name__ == "__main__":
    main()
