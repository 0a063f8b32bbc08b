#!/usr/bin/env python3
"""A before/after Markdown table of two `blis validate` JSON results on the same runs.

One row per experiment found in both (optionally only ids matching REGEX, re.search): the GPU and
TP from the experiment id's deployment when present, observed mean E2E, the predicted mean E2E and
its signed error before and after (negative: predicted too fast), the same for decode time per
token, and, when AFTER carries prediction intervals, whether its 90% mean-E2E interval covers the
observation. Then the median and maximum absolute mean-E2E error of each group NAME=REGEX.

Usage: python3 scripts/compare_validations.py BEFORE_JSON AFTER_JSON [--only REGEX] [NAME=REGEX ...]
Standard library only.
"""
import json
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        return {e["id"]: e for e in json.load(f)["experiments"]}


def signed(obs, pred):
    if obs is None or pred is None or obs == 0:
        return None
    return 100.0 * (pred - obs) / obs


def fmt(v):
    return "n/a" if v is None else f"{v:+.1f}%"


def covered(e):
    iv = e.get("interval", {}).get("e2e_mean")
    if not iv:
        return ""
    obs = e["observed"]["e2e_mean"]
    inside = iv["low"] <= obs <= iv["high"]
    return f"{iv['low']:.0f} - {iv['high']:.0f} ({'in' if inside else 'out'})"


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    before, after = load(argv[1]), load(argv[2])
    only = None
    groups = []
    rest = argv[3:]
    i = 0
    while i < len(rest):
        if rest[i] == "--only":
            only = re.compile(rest[i + 1])
            i += 2
            continue
        name, regex = rest[i].split("=", 1)
        groups.append((name, re.compile(regex)))
        i += 1
    ids = [k for k in after if k in before and (only is None or only.search(k))]
    print("| run | mean E2E observed ms | before: predicted ms (error) | after: predicted ms (error) "
          "| decode ms/token observed | before | after | 90% interval of mean E2E, after |")
    print("|---|---|---|---|---|---|---|---|")
    rows = {}
    for k in ids:
        b, a = before[k], after[k]
        o = a["observed"]
        eb = signed(o["e2e_mean"], b["predicted"]["e2e_mean"])
        ea = signed(o["e2e_mean"], a["predicted"]["e2e_mean"])
        db = signed(o["decode_ms_per_token"], b["predicted"]["decode_ms_per_token"])
        da = signed(o["decode_ms_per_token"], a["predicted"]["decode_ms_per_token"])
        rows[k] = (eb, ea)
        print(f"| {k} | {o['e2e_mean']:.0f} | {b['predicted']['e2e_mean']:.0f} ({fmt(eb)}) "
              f"| {a['predicted']['e2e_mean']:.0f} ({fmt(ea)}) | {o['decode_ms_per_token']:.2f} "
              f"| {fmt(db)} | {fmt(da)} | {covered(a)} |")
    if groups:
        print()
        print("| group | runs | mean-E2E APE before: median / max | after: median / max |")
        print("|---|---|---|---|")
        for name, regex in groups:
            sel = [rows[k] for k in ids if regex.search(k)]
            if not sel:
                continue
            b = [abs(x[0]) for x in sel if x[0] is not None]
            a = [abs(x[1]) for x in sel if x[1] is not None]
            print(f"| {name} | {len(sel)} | {statistics.median(b):.1f}% / {max(b):.1f}% "
                  f"| {statistics.median(a):.1f}% / {max(a):.1f}% |")


if __name__ == "__main__":
    main(sys.argv)
