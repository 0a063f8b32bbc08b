#!/usr/bin/env bash
# Timing of `blis serve` under load on this machine: a simulated Llama-2-7B on one H100 driven by
# `blis observe` over loopback with enough load to keep about 200 streams in flight, both on the
# same machine. Prints serve's own lateness (how late each token was written against its simulated
# time) and what the client recorded, then how many streams were in flight (from /metrics: running
# and waiting) and how much simulated time serve held back because it could not keep up.
# Usage: scripts/serve-timing.sh [RATE] [SECONDS] [blis.jar]   (build first: ./mvnw -B -q -DskipTests package)
# HOG=1 runs a CPU hog (one busy process) beside them, as on a machine shared with other work.
# SERVE_JAVA_OPTS adds JVM options to serve (-Xlog:gc:file=gc.log, -XX:+UseZGC).
# SERVE_FLAGS adds deployment flags to serve (for 800 streams: SERVE_FLAGS="--num-instances 4", whose
# four batches of 256 hold them).
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${1:-28}
SECONDS_=${2:-60}
JAR=${3:-blis-cli/target/blis.jar}
OUT=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
N=$(python3 -c "print(int($RATE*$SECONDS_))")
# shellcheck disable=SC2086
java ${SERVE_JAVA_OPTS:-} -jar "$JAR" serve --port "$PORT" --model llama-2-7b ${SERVE_FLAGS:-} > "$OUT/serve.json" 2> "$OUT/serve.err" &
SERVE=$!
HOGPID=
if [[ -n ${HOG:-} ]]; then
  (while :; do :; done) &
  HOGPID=$!
fi
trap 'kill $SERVE $HOGPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
for _ in $(seq 1 150); do grep -q 'Ctrl-C stops' "$OUT/serve.err" 2>/dev/null && break; sleep 0.2; done
java -jar "$JAR" observe --endpoint "http://127.0.0.1:$PORT/v1" --served-model llama-2-7b --model llama-2-7b \
  --out "$OUT/run" --rate "$RATE" --num-requests "$N" --prompt-tokens 128 --prompt-tokens-stdev 32 \
  --output-tokens 400 --output-tokens-stdev 100 --metrics-interval-s 0.5 --progress-interval-s 10 2>&1 \
  | grep -v '^blis observe: note'
curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^blis:simulated_time_held_back_seconds' || true
kill -TERM $SERVE 2>/dev/null || true
wait $SERVE 2>/dev/null || true
grep -E 'lateness|held back' "$OUT/serve.err"
python3 - "$OUT/run/experiments.json" "$OUT/run/metrics.csv" "$SECONDS_" <<'PY'
import csv, json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
m, c = e["server_metrics"], e["client"]
rows = [r for r in csv.DictReader(open(sys.argv[2])) if 10 <= float(r["time_s"]) <= float(sys.argv[3])]
steady = [float(r["running"]) for r in rows]
flight = [float(r["running"]) + float(r["waiting"]) for r in rows]
print("streams running (vllm:num_requests_running every 0.5 s): mean %.0f from 10 s to %s s, peak %d;"
      " in flight (running + waiting) mean %.0f, peak %.0f" % (
    sum(steady) / len(steady), sys.argv[3], m["peak_running"], sum(flight) / len(flight), max(flight)))
print("client send lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d of %d sent more than 10 ms late" % (
    c["send_lateness_ms"]["p50"], c["send_lateness_ms"]["p99"], c["send_lateness_ms"]["max"],
    c["late_sends"], c["requests_sent"]))
PY
