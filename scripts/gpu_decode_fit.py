#!/usr/bin/env python3
"""Per-GPU decode fit of the two-stage "general-lite" runs of experiments_partial.json (tier C).

For each run, each load stage gives one point: mean concurrency by Little's law (rate x mean E2E)
and decode ms per token ((E2E - TTFT) / (output_len - 1)). The two points give a line
step_ms = a + b x concurrency: a is the fixed cost of a decode step, b the cost per running request.
Standard library only. Usage: gpu_decode_fit.py PATH/TO/experiments_partial.json
"""
import json
import sys

RATES = (2.5, 6.0)      # rps of the two general-lite stages
OUTPUT_LEN = 248        # general profile; decode spans output_len - 1 tokens


def fit(run):
    points = []
    for stage, rate in zip(("stage_0", "stage_1"), RATES):
        s = run["observed"][stage]
        e2e, ttft = s["e2e_ms"]["mean"], s["ttft_ms"]["mean"]
        points.append((rate * e2e / 1000.0, (e2e - ttft) / (OUTPUT_LEN - 1)))
    (x0, y0), (x1, y1) = points
    slope = (y1 - y0) / (x1 - x0)
    return y0 - slope * x0, slope, points


def main(path):
    runs = json.load(open(path))["tier_C_s2r_eval"]
    print("| run | GPU | TP | concurrency stage 0 / 1 | decode ms/token stage 0 / 1 | a: fixed ms | b: ms per request |")
    print("|---|---|---|---|---|---|---|")
    for run in runs:
        if "general-lite" not in run["id"] or not all(k in run["observed"] for k in ("stage_0", "stage_1")):
            continue
        a, b, pts = fit(run)
        print(f"| {run['id'].split(':', 1)[1]} | {run['hardware']} | {run['tp']} | "
              f"{pts[0][0]:.1f} / {pts[1][0]:.1f} | {pts[0][1]:.2f} / {pts[1][1]:.2f} | {a:.2f} | {b:.3f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gpu_decode_fit.py PATH/TO/experiments_partial.json")
    main(sys.argv[1])
