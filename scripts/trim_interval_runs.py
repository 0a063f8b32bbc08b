#!/usr/bin/env python3
"""Trims validation JSON (`blis validate --intervals --out`, or a cross-validation's held-out JSON)
to the fields `blis interval-scales` reads, so that the runs behind the bundled interval scales can
be checked in as a small test resource.

Kept per experiment: `id`, `observed` and `predicted` `e2e_mean` and `ttft_mean`, and under
`interval` each of `e2e_mean` and `ttft_mean` with its `member_log_sd` and `extrapolation_kinds`
(IntervalScalesCommand.read). Numbers are copied as they are, so `interval-scales` gives the same
scales on the trimmed file as on the whole one.

Usage: python3 scripts/trim_interval_runs.py IN_JSON OUT_JSON
The test resources of IntervalScalesCommandTest came from (inputs made as docs/validation.md,
"Estimating the scales", says):

  python3 scripts/trim_interval_runs.py docs/calibrated-cv-model.json \
      blis-cli/src/test/resources/interval-scales/held-out-folds.json
  python3 scripts/trim_interval_runs.py target/oos.json \
      blis-cli/src/test/resources/interval-scales/oos.json

and, for the scales of the axes the corpus of published measurements added (README, "Published
measurements"; the validation made again with top-k among the kinds, and the corpus's choosing half):

  python3 scripts/trim_interval_runs.py target/oos.json \
      blis-cli/src/test/resources/interval-scales/oos-topk.json
  python3 scripts/trim_interval_runs.py target/corpus-choosing.json \
      blis-cli/src/test/resources/interval-scales/corpus-choosing.json

Standard library only.
"""
import json
import sys

METRICS = ("e2e_mean", "ttft_mean")


def trim(exp):
    # a corpus point (blis corpus --out) carries the one metric its headline statistic stands for
    metrics = [m for m in METRICS if m in exp["observed"]]
    out = {"id": exp["id"]}
    for side in ("observed", "predicted"):
        out[side] = {m: exp[side][m] for m in metrics}
    interval = {}
    for m in metrics:
        iv = exp["interval"][m]
        interval[m] = {"member_log_sd": iv["member_log_sd"],
                       "extrapolation_kinds": iv.get("extrapolation_kinds", [])}
    out["interval"] = interval
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: trim_interval_runs.py IN_JSON OUT_JSON")
    with open(sys.argv[1]) as f:
        exps = json.load(f)["experiments"]
    with open(sys.argv[2], "w") as f:
        f.write("{\"experiments\": [\n")
        f.write(",\n".join(json.dumps(trim(e), separators=(", ", ": ")) for e in exps))
        f.write("\n]}\n")
    print(f"wrote {len(exps)} experiments to {sys.argv[2]}")


if __name__ == "__main__":
    main()
