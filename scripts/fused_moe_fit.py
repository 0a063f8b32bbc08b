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

A second sweep (added 2026-12-06) separates a fixed time per distinct expert, which Mixtral's 8
large experts cannot show: sglang's port of the same Triton fused-MoE kernel timed for
Qwen3-235B-A22B-Instruct-2507 at TP 8 on one H200 (FP8 w8a8, 128 experts of 192 columns per GPU,
top-8; sgl-project/sglang pull request 11730, "Without tuned kernel", batch 1-32, the part of the
sweep published in full). Its experts' weights take under 0.5 us each to stream, so what grows with
the experts hit is mostly fixed per expert. The joint fit

    time(M) = a_sweep + c x distinct(M) + expert_weight_load x distinct(M) x ideal_us_per_expert

(one fixed part per sweep, c and the streaming share common to both) is printed last; `trained-physics`
takes c (0.35 us) as the per-distinct-expert time of every fused-MoE layer, scaled to other GPUs by
their GEMM fixed time (docs/gpu-efficiency.md, "Fused MoE layers").
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


# tokens in the batch -> kernel time in us (sglang PR 11730, H200, Qwen3-235B-A22B at TP 8, fp8, untuned)
SWEEP_QWEN3 = [(1, 31.70), (2, 36.56), (4, 49.67), (8, 66.87), (16, 92.36), (24, 117.38), (32, 124.99)]
QWEN3_EXPERTS, QWEN3_TOP_K, QWEN3_HIDDEN, QWEN3_COLUMNS = 128, 8, 4096, 192  # 1536 / TP 8 per GPU


def solve(rows, ys):
    """Least squares of relative errors: rows x = ys, each row divided by its y (normal equations)."""
    n = len(rows[0])
    ata = [[0.0] * n for _ in range(n)]
    atb = [0.0] * n
    for r, y in zip(rows, ys):
        w = [v / y for v in r]
        for i in range(n):
            atb[i] += w[i]
            for j in range(n):
                ata[i][j] += w[i] * w[j]
    # Gauss-Jordan elimination
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(ata[k][i]))
        ata[i], ata[p] = ata[p], ata[i]
        atb[i], atb[p] = atb[p], atb[i]
        for k in range(n):
            if k != i:
                f = ata[k][i] / ata[i][i]
                ata[k] = [a - f * b for a, b in zip(ata[k], ata[i])]
                atb[k] -= f * atb[i]
    return [atb[i] / ata[i][i] for i in range(n)]


def joint():
    catalog = json.loads(CATALOG.read_text())
    unit_mix = ideal_us_per_expert()
    unit_q = 3 * QWEN3_HIDDEN * QWEN3_COLUMNS * 1 / (catalog["H200"]["hbm_bandwidth_tb_s"] * 1e12) * 1e6
    rows, ys = [], []
    for m, t in SWEEP:
        e = distinct(m)
        rows.append([1, 0, e, e * unit_mix])
        ys.append(t)
    for m, t in SWEEP_QWEN3:
        e = QWEN3_EXPERTS * (1 - ((QWEN3_EXPERTS - QWEN3_TOP_K) / QWEN3_EXPERTS) ** m)
        rows.append([0, 1, e, e * unit_q])
        ys.append(t)
    a_mix, a_q, c, b = solve(rows, ys)
    print(f"joint fit: fixed {a_mix:.1f} us (Mixtral, H100) and {a_q:.1f} us (Qwen3-235B, H200) per layer, "
          f"{c:.3f} us per distinct expert, streaming at {1 / b:.3f} of peak")
    worst = max(abs(sum(x * v for x, v in zip(r, (a_mix, a_q, c, b))) / y - 1) for r, y in zip(rows, ys))
    print(f"  largest residual {100 * worst:.1f}% over {len(ys)} points")


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
    joint()


if __name__ == "__main__":
    main()
