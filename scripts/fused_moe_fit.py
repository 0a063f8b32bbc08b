#!/usr/bin/env python3
"""Splits one fused-MoE layer's time into a fixed part and a weight-streaming part.

The measurement: vLLM's `benchmarks/kernels/benchmark_moe.py --model
mistralai/Mixtral-8x7B-Instruct-v0.1 -tp=2` on one H100 80GB HBM3 (bf16, the tuned config
E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json), as posted in vllm-project/vllm pull request
24700 (September 2025, "Tuned Config" column). Its "kernel time" is the whole fused-experts call of
one MoE layer on one GPU for a batch of M tokens with random routing: expert alignment, the
gate-up and down grouped GEMMs, the activation and the top-k sum.

The form (the one `trained-physics` uses, docs/gpu-efficiency.md "Fused MoE"):

    time(M) = per_moe_layer_us + expert_weight_load x distinct(M) x ideal_us_per_expert

with distinct(M) = E (1 - ((E - k) / E)^M) the expected experts hit by M tokens routed top-k, and
ideal_us_per_expert one expert's 16-bit gate, up and down slices on one GPU at the datasheet peak
HBM bandwidth. Least squares over the batch sweep gives both coefficients: a one-model fit of the
ground-truth runs cannot, because every step of those runs hits all 8 experts.

Standard library only. Prints the fit over batch 1-128 and over 1-48 (how stable it is) and each
point's residual.
"""

import json
from pathlib import Path

# tokens in the batch -> kernel time in us (PR 24700, H100, Mixtral-8x7B at TP 2, tuned config)
SWEEP = [(1, 144.03), (2, 229.28), (4, 351.10), (8, 434.98), (16, 471.49), (24, 478.27),
         (32, 487.35), (48, 487.85), (64, 483.14), (96, 494.42), (128, 491.39)]

EXPERTS, TOP_K = 8, 2
HIDDEN, INTERMEDIATE, TP = 4096, 14336, 2
# the H100 SXM's datasheet bandwidth, as the step model takes it: from the bundled GPU catalog
CATALOG = Path(__file__).resolve().parent.parent / "blis-latency/src/main/resources/io/blis/latency/gpus/gpus.json"


def ideal_us_per_expert():
    hbm_bytes_per_s = json.loads(CATALOG.read_text())["H100"]["hbm_bandwidth_tb_s"] * 1e12
    params = 3 * HIDDEN * INTERMEDIATE / TP  # gate, up and down slices of one expert on one GPU
    return params * 2 / hbm_bytes_per_s * 1e6


def distinct(m):
    return EXPERTS * (1 - ((EXPERTS - TOP_K) / EXPERTS) ** m)


def fit(points):
    """Least squares of y = a + b x; returns (a, b)."""
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - b * sx) / n, b


def main():
    unit = ideal_us_per_expert()
    print(f"one expert's weights on one GPU at peak HBM bandwidth: {unit:.2f} us")
    for label, upto in (("batch 1-128", 128), ("batch 1-48", 48)):
        pts = [(distinct(m) * unit, t) for m, t in SWEEP if m <= upto]
        a, b = fit(pts)
        print(f"{label}: per_moe_layer_us = {a:.1f}, expert_weight_load = {b:.3f} "
              f"(streams at {1 / b:.3f} of peak)")
        if upto == 128:
            for m, t in SWEEP:
                pred = a + b * distinct(m) * unit
                print(f"  M={m:4d} distinct={distinct(m):5.2f} measured {t:7.2f} us, "
                      f"form {pred:7.2f} us ({100 * (pred / t - 1):+.1f}%)")


if __name__ == "__main__":
    main()
