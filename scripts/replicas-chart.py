#!/usr/bin/env python3
"""Draws the ready replicas over time of autoscaled runs as one SVG.

Usage: scripts/replicas-chart.py OUT.svg LABEL=RESULT.json [LABEL=RESULT.json ...]

Each RESULT.json is the output of `blis run --autoscaler ...`; its `autoscaling.timeline` gives
the ready replicas at every scaling tick, drawn as a step line per run, hours on the x axis.
"""
import json
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
W, H = 900, 380
LEFT, RIGHT, TOP, BOTTOM = 60, 20, 40, 50


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out = argv[1]
    runs = []
    for arg in argv[2:]:
        label, _, path = arg.partition("=")
        if not path:
            sys.exit(f"expected LABEL=RESULT.json, got {arg!r}")
        with open(path) as f:
            tl = json.load(f)["autoscaling"]["timeline"]
        # only the samples where the replicas change (and the last): a step line needs no more
        pts = []
        for i, s in enumerate(tl):
            if not pts or s["ready"] != pts[-1][1] or i == len(tl) - 1:
                pts.append((s["t_s"] / 3600.0, s["ready"]))
        runs.append((label, pts))
    t_max = max(p[-1][0] for _, p in runs)
    y_max = max(max(r for _, r in p) for _, p in runs) + 1

    def x(t):
        return LEFT + (W - LEFT - RIGHT) * t / t_max

    def y(r):
        return H - BOTTOM - (H - TOP - BOTTOM) * r / y_max

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
             f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">ready replicas over the simulated day</text>']
    step = max(1, round(t_max / 12))
    t = 0
    while t <= t_max + 1e-9:
        parts.append(f'<line x1="{x(t):.1f}" y1="{TOP}" x2="{x(t):.1f}" y2="{H - BOTTOM}" stroke="#eee"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{t:g}</text>')
        t += step
    ystep = max(1, round(y_max / 8))
    for r in range(0, int(y_max) + 1, ystep):
        parts.append(f'<line x1="{LEFT}" y1="{y(r):.1f}" x2="{W - RIGHT}" y2="{y(r):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y(r) + 4:.1f}" text-anchor="end">{r}</text>')
    parts.append(f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle">hour of the day</text>')
    parts.append(f'<text x="16" y="{H / 2}" text-anchor="middle" transform="rotate(-90 16 {H / 2})">replicas</text>')
    for i, (label, pts) in enumerate(runs):
        color = COLORS[i % len(COLORS)]
        path = []
        prev = None
        for t, r in pts:
            if prev is not None:
                path.append(f"{x(t):.1f},{y(prev):.1f}")
            path.append(f"{x(t):.1f},{y(r):.1f}")
            prev = r
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(path)}"/>')
        parts.append(f'<rect x="{LEFT + 10}" y="{TOP + 6 + 18 * i}" width="14" height="4" fill="{color}"/>')
        parts.append(f'<text x="{LEFT + 30}" y="{TOP + 12 + 18 * i}">{label}</text>')
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv)
