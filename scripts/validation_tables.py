#!/usr/bin/env python3
"""Markdown tables from the JSON of `blis validate` (or of `blis calibrate --report`).

Prints one row per experiment (observed / predicted mean E2E, TTFT and decode time per token,
their errors, E2E p90/p99 errors, failure percentages) and the median / mean / max of each error
over groups of experiments given as NAME=REGEX (matched against the id with re.search; an
experiment may fall in several groups; saturated runs are grouped apart unless the group name
starts with "sat"). When the results carry prediction intervals (`--intervals` / `--ensemble`),
also one row per experiment with its mean-E2E and mean-TTFT intervals and the coverage per group.

Usage: python3 scripts/validation_tables.py RESULTS_JSON [NAME=REGEX ...]
Standard library only.
"""
import json
import re
import statistics
import sys

METRICS = [("e2e_mean", "E2E mean"), ("e2e_p90", "E2E p90"), ("e2e_p99", "E2E p99"),
           ("ttft_mean", "TTFT mean"), ("ttft_p90", "TTFT p90"),
           ("decode_ms_per_token", "decode ms/token")]


def pct(v):
    return "n/a" if v is None else f"{v:.1f}%"


def num(v, digits):
    return "n/a" if v is None else f"{v:.{digits}f}"


def short(exp_id):
    # drop the date-time prefix of the fully specified runs
    return re.sub(r"^\d{8}-\d{6}-", "", exp_id)


def failed(stats):
    f = stats.get("failure_fraction")
    return "n/a" if f is None else f"{100 * f:.1f}"


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: validation_tables.py RESULTS_JSON [NAME=REGEX ...]")
    with open(sys.argv[1]) as f:
        exps = json.load(f)["experiments"]
    print("| experiment | sat | E2E mean obs / pred ms | APE | TTFT mean obs / pred ms | APE "
          "| decode ms/token obs / pred | APE | E2E p90 APE | E2E p99 APE | failed % obs / pred |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for e in exps:
        o, p, a = e["observed"], e["predicted"], e["ape_pct"]
        print(f"| {short(e['id'])} | {'yes' if e['saturated'] else 'no'} "
              f"| {num(o['e2e_mean'], 0)} / {num(p['e2e_mean'], 0)} | {pct(a['e2e_mean'])} "
              f"| {num(o['ttft_mean'], 1)} / {num(p['ttft_mean'], 1)} | {pct(a['ttft_mean'])} "
              f"| {num(o['decode_ms_per_token'], 2)} / {num(p['decode_ms_per_token'], 2)} "
              f"| {pct(a['decode_ms_per_token'])} | {pct(a['e2e_p90'])} | {pct(a['e2e_p99'])} "
              f"| {failed(o)} / {failed(p)} |")
    groups = [arg.split("=", 1) for arg in sys.argv[2:]]
    if any("interval" in e for e in exps):
        interval_table(exps, groups)
    if not groups:
        return
    print()
    print("| APE %, median / mean / max | runs | " + " | ".join(label for _, label in METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    for name, regex in groups:
        saturated = name.startswith("sat")
        sel = [e for e in exps if re.search(regex, e["id"]) and e["saturated"] == saturated]
        cells = []
        for key, _ in METRICS:
            vals = [e["ape_pct"][key] for e in sel if e["ape_pct"].get(key) is not None]
            cells.append("n/a" if not vals else
                         f"{statistics.median(vals):.1f} / {statistics.fmean(vals):.1f} / {max(vals):.1f}")
        print(f"| {name} | {len(sel)} | " + " | ".join(cells) + " |")


def inside(iv):
    v = iv.get("observed_inside")
    return "n/a" if v is None else ("yes" if v else "**no**")


def interval_table(exps, groups):
    level = next(e["interval"]["level"] for e in exps if "interval" in e)
    print()
    print(f"| experiment | sat | E2E mean obs ms | {100 * level:.0f}% interval ms | inside "
          f"| TTFT mean obs ms | {100 * level:.0f}% interval ms | inside |")
    print("|---|---|---|---|---|---|---|---|")
    for e in exps:
        if "interval" not in e:
            continue
        o, iv = e["observed"], e["interval"]
        a, t = iv["e2e_mean"], iv["ttft_mean"]
        print(f"| {short(e['id'])} | {'yes' if e['saturated'] else 'no'} "
              f"| {num(o['e2e_mean'], 0)} | {num(a['low'], 0)} - {num(a['high'], 0)} | {inside(a)} "
              f"| {num(o['ttft_mean'], 1)} | {num(t['low'], 1)} - {num(t['high'], 1)} | {inside(t)} |")
    if not groups:
        return
    print()
    print(f"| {100 * level:.0f}% interval coverage | runs | mean E2E inside | mean TTFT inside |")
    print("|---|---|---|---|")
    for name, regex in groups:
        saturated = name.startswith("sat")
        sel = [e for e in exps if "interval" in e and re.search(regex, e["id"]) and e["saturated"] == saturated]
        cells = []
        for key in ("e2e_mean", "ttft_mean"):
            flags = [e["interval"][key].get("observed_inside") for e in sel]
            flags = [f for f in flags if f is not None]
            cells.append("n/a" if not flags else f"{sum(flags)} of {len(flags)} ({100 * sum(flags) / len(flags):.0f}%)")
        print(f"| {name} | {len(sel)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
