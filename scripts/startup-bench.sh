#!/usr/bin/env bash
# Whole-process time of a first run, with and without the ./blis launcher (README "Speed",
# docs/speed.md#start-up): the default `blis run` and the replay of a 16,800-request ground-truth
# run, each as `java -jar blis-cli/target/blis.jar ...` and as `./blis ...`, timed by hyperfine
# (warm-up runs, then RUNS runs each). Prints median, min and mean CPU (user + system) per command,
# and the load average before and after: on a shared machine read the medians with it.
#
# Usage: scripts/startup-bench.sh [GROUNDTRUTH_DIR]   (default ../shared/groundtruth)
# Environment: RUNS (default 15), WARMUP (default 3), EXPERIMENT (default the Llama-2-7B "general"
# run, 16,800 requests), JAVA_HOME (else java on the PATH, as ./blis does).
# Build first: ./mvnw -B -q -DskipTests package (it also makes the archive ./blis maps).
set -euo pipefail
cd "$(dirname "$0")/.."
GT=${1:-../shared/groundtruth}
RUNS=${RUNS:-15}
WARMUP=${WARMUP:-3}
EXPERIMENT=${EXPERIMENT:-20260217-231439-llama-2-7b-tp1-general}
JAVA=java
if [ -n "${JAVA_HOME:-}" ]; then JAVA=$JAVA_HOME/bin/java; fi
command -v hyperfine > /dev/null || { echo "hyperfine not found (apt-get install hyperfine)" >&2; exit 1; }
[ -f blis-cli/target/blis.jar ] || { echo "no blis-cli/target/blis.jar: build first" >&2; exit 1; }
[ -f "$GT/requests/$EXPERIMENT.csv.gz" ] || { echo "no $GT/requests/$EXPERIMENT.csv.gz" >&2; exit 1; }
[ -f blis-cli/target/blis.jsa ] || echo "note: no blis-cli/target/blis.jsa, ./blis runs without its archive" >&2

REPLAY="replay --trace $GT/requests/$EXPERIMENT.csv.gz --experiments $GT/experiments.json --experiment $EXPERIMENT --max-num-seqs 128 --max-model-len 4096"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# same bytes either way (the launcher changes JVM options only)
for args in "run" "$REPLAY"; do
  # shellcheck disable=SC2086 # the arguments are words
  "$JAVA" -jar blis-cli/target/blis.jar $args > "$OUT/a.json"
  # shellcheck disable=SC2086
  ./blis $args > "$OUT/b.json"
  cmp -s "$OUT/a.json" "$OUT/b.json" || { echo "./blis $args printed other bytes than java -jar" >&2; exit 1; }
done

echo "$("$JAVA" -version 2>&1 | head -1); $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --style basic -w "$WARMUP" -r "$RUNS" --export-json "$OUT/times.json" \
  -n "java -jar blis.jar run" "$JAVA -jar blis-cli/target/blis.jar run" \
  -n "./blis run" "./blis run" \
  -n "java -jar blis.jar replay (16,800 requests)" "$JAVA -jar blis-cli/target/blis.jar $REPLAY" \
  -n "./blis replay (16,800 requests)" "./blis $REPLAY" > "$OUT/hyperfine.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT/times.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print(f"{'command':<45} {'median s':>9} {'min s':>7} {'CPU s':>7}  runs")
for r in rows:
    print(f"{r['command']:<45} {r['median']:>9.3f} {r['min']:>7.3f} {r['user'] + r['system']:>7.3f}  {len(r['times'])}")
PY
