#!/bin/sh
# Regenerates the bundled measured kernel-efficiency table,
# blis-latency/src/main/resources/io/blis/latency/gpus/efficiency.json, from the public kernel
# profiles (Vidur's published per-operator timings: ../shared/reference/kernel-profiles, or the
# folder given as the first argument). Every figure is a plain statistic of the timings
# (docs/gpu-efficiency.md), so the same files give the same table. Rebuild afterwards:
#   ./mvnw -B -q -ntp -DskipTests package
# Usage: scripts/gpu-efficiency.sh [KERNEL_PROFILES_DIR]
set -eu
cd "$(dirname "$0")/.."
K=${1:-../shared/reference/kernel-profiles}
OUT=blis-latency/src/main/resources/io/blis/latency/gpus/efficiency.json
TMP=target/efficiency.json
JAR=blis-cli/target/blis.jar
[ -f "$JAR" ] || { echo "build first: ./mvnw -B -q -ntp -DskipTests package" >&2; exit 2; }
mkdir -p target
printf '{}\n' > "$TMP"
SRC="Vidur's published kernel profiles (microsoft/vidur 7d47513, data/profiling, MIT)"
java -jar "$JAR" gpu-profile --gpu H100 --from "$K/compute/h100" --from "$K/network/h100_dgx" \
  --table "$TMP" --source "$SRC: compute/h100, network/h100_dgx"
java -jar "$JAR" gpu-profile --gpu A100-80GB --from "$K/compute/a100" --from "$K/network/a100_dgx" \
  --table "$TMP" --source "$SRC: compute/a100, network/a100_dgx"
java -jar "$JAR" gpu-profile --gpu A40 --from "$K/compute/a40" \
  --table "$TMP" --source "$SRC: compute/a40 (no all-reduce timings for A40)"
cp "$TMP" "$OUT"
echo "wrote $OUT" >&2
