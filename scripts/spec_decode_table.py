#!/usr/bin/env python3
"""Replays the published speculative-decoding measurements of docs/speculative/replay.yaml.

Every point is run twice with `blis run` (without and with speculation, the same seed and
workload), and the table printed compares the replay's TPOT or throughput speedup with the
published one. Usage (from the repository root, after `./mvnw -B -ntp package -DskipTests`):

    python3 scripts/spec_decode_table.py [--jar blis-cli/target/blis.jar] [--host-us US] [--only SOURCE]

The half of each source follows docs/public-measurements' rule (SHA-256 of the source id: 0-7
choosing, 8-f reporting). Needs PyYAML-free parsing: replay.yaml is read with a tiny reader of its
flow mappings.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def half(source):
    return "choosing" if hashlib.sha256(source.encode()).hexdigest()[0] in "01234567" else "reporting"


def parse_flow(text):
    """One `{k: v, ...}` mapping of replay.yaml (numbers, bare strings, [lists])."""
    text = text.strip()
    assert text.startswith("{") and text.endswith("}"), text
    body = text[1:-1]
    out, key, buf, depth = {}, None, "", 0
    for ch in body + ",":
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == ":" and key is None and depth == 0:
            key, buf = buf.strip(), ""
        elif ch == "," and depth == 0:
            out[key] = value(buf.strip())
            key, buf = None, ""
        else:
            buf += ch
    return out


def value(v):
    if v.startswith("["):
        return [value(x.strip()) for x in v[1:-1].split(",")]
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def read_points(path):
    defaults, points = {}, []
    section = None
    for line in open(path, encoding="utf-8"):
        s = line.split("#", 1)[0].rstrip() if not line.lstrip().startswith("- {") else line.rstrip()
        if not s.strip():
            continue
        if s.startswith("defaults:"):
            section = "defaults"
        elif s.startswith("points:"):
            section = "points"
        elif section == "defaults" and s.startswith("  ") and ":" in s:
            k, v = s.strip().split(":", 1)
            defaults[k.strip()] = value(v.strip())
        elif section == "points" and s.strip().startswith("- {"):
            p = dict(defaults)
            p.update(parse_flow(s.strip()[2:]))
            points.append(p)
    return points


def run(jar, p, spec, host_us):
    model = p["model"]
    if model.endswith(".json"):
        model = os.path.join(ROOT, model)
    args = ["java", "-jar", jar, "run", "--model", model, "--gpu", p["gpu"], "--tp", str(p["tp"]),
            "--concurrency", str(p["concurrency"]), "--num-requests", str(p["requests"]),
            "--prompt-tokens", str(p["input"]), "--output-tokens", str(p["output"]), "--prompt-tokens-stdev", "0",
            "--output-tokens-stdev", "0", "--seed", "7"]
    if spec:
        args += ["--speculative-config", json.dumps({"method": p["method"], "num_speculative_tokens": p["k"]})]
        if "rates" in p:
            args += ["--speculative-acceptance", ",".join(str(r) for r in p["rates"])]
        else:
            args += ["--speculative-acceptance-rate", "%.6f" % ((p["al"] - 1) / p["k"])]
        if host_us is not None:
            args += ["--speculative-host-us", str(host_us)]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s: blis run failed: %s" % (p["id"], out.stderr.strip()[-400:]))
    d = json.loads(out.stdout)
    o = d["overall"]
    tpot = (o["e2e_ms"]["mean"] - o["ttft_ms"]["mean"]) / (p["output"] - 1)
    return tpot, o["output_tokens_per_s"], d.get("speculative_decoding")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jar", default=os.path.join(ROOT, "blis-cli/target/blis.jar"))
    ap.add_argument("--host-us", type=float, default=None)
    ap.add_argument("--only", default=None, help="one source id")
    a = ap.parse_args()
    points = read_points(os.path.join(ROOT, "docs/speculative/replay.yaml"))
    rows, errs = [], {"choosing": [], "reporting": []}
    print("| point | half | K | AL replayed | measured | replayed | error |")
    print("|---|---|---|---|---|---|---|")
    for p in points:
        if a.only and p["source"] != a.only:
            continue
        t0, thr0, _ = run(a.jar, p, False, a.host_us)
        t1, thr1, sd = run(a.jar, p, True, a.host_us)
        al = sd["mean_acceptance_length"] if sd else float("nan")
        h = half(p["source"])
        if "tpot_with" in p:
            meas = "TPOT %.2f / %.2f ms" % (p["tpot_without"], p["tpot_with"])
            pred = "TPOT %.2f / %.2f ms" % (t0, t1)
            err = t1 / p["tpot_with"] - 1
        else:
            meas = "speedup %.2f" % p["speedup"]
            pred = "speedup %.2f" % (thr1 / thr0)
            err = (thr1 / thr0) / p["speedup"] - 1
        errs[h].append(err)
        print("| %s | %s | %d | %.2f | %s | %s | %+.1f%% |" % (p["id"], h, p["k"], al, meas, pred, 100 * err))
    for h, e in errs.items():
        if e:
            print("%s: %d points, median |error| %.1f%%, max %.1f%%, within 15%%: %d" % (
                h, len(e), 100 * statistics.median(abs(x) for x in e), 100 * max(abs(x) for x in e),
                sum(1 for x in e if abs(x) <= 0.15)))


if __name__ == "__main__":
    main()
