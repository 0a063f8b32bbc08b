#!/usr/bin/env bash
# The measure-validate-calibrate loop against a server whose behaviour the bundled coefficients do
# not describe: `blis serve` with the roofline latency model stands in for "your server". Observes
# one run (chatbot, 8 req/s), validates it with the bundled trained-physics coefficients,
# calibrates on it, validates again; then observes a second run (14 req/s, another seed) that the
# calibration did not see and validates it with both. About 4 minutes.
# Usage: scripts/observe-loop-demo.sh [blis.jar]   (build first: ./mvnw -B -q -DskipTests package)
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=$(realpath "${1:-blis-cli/target/blis.jar}")
OUT=$(mktemp -d)
cp "$JAR" "$OUT/blis.jar"   # a rebuild during the run must not pull the jar from under the JVMs
JAR="$OUT/blis.jar"
cd "$OUT"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
java -jar "$JAR" serve --port "$PORT" --model llama-2-7b --latency-model roofline > serve.json 2> serve.err &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true; rm -rf "$OUT"' EXIT
for _ in $(seq 1 50); do grep -q 'Ctrl-C stops' serve.err 2>/dev/null && break; sleep 0.2; done
observe() { # out-dir rate seed
  java -jar "$JAR" observe --endpoint "http://127.0.0.1:$PORT/v1" --served-model llama-2-7b --model llama-2-7b \
    --gpu H100 --max-num-seqs 256 --max-num-batched-tokens 2048 --out "$1" --workload chatbot --rate "$2" \
    --num-requests 400 --seed "$3" --progress-interval-s 0 2>/dev/null
}
validate() { # run-dir [coefficients]
  java -jar "$JAR" validate --experiments "$1/experiments.json" ${2:+--coefficients "$2"} | sed -n 2p
}
observe run1 8 42
echo "--- run 1, bundled coefficients";  validate run1
/usr/bin/time -f "calibrate: %e s" java -jar "$JAR" calibrate --experiments run1/experiments.json --out coeffs.yaml > /dev/null 2> calibrate.err
tail -1 calibrate.err
echo "--- run 1, calibrated on run 1";  validate run1 coeffs.yaml
observe run2 14 7
echo "--- run 2 (not calibrated on), bundled";  validate run2
echo "--- run 2 (not calibrated on), calibrated on run 1";  validate run2 coeffs.yaml
