#!/usr/bin/env bash
# Runs the same workloads through this project and, when given, through a Go BLIS binary, and
# prints wall time, CPU time (user + system) and peak resident memory of each, with the ratios.
# Both read the same command line: this project accepts Go BLIS's flags.
#
# Usage: scripts/peer-bench.sh [--go-blis PATH] [--go-defaults FILE] [--requests N] [--cluster-requests N]
#   --go-blis PATH       a Go BLIS `simulation_worker`/`blis` binary (not built or shipped here);
#                        without it only this project's figures are printed
#   --go-defaults FILE   its defaults.yaml (default: defaults.yaml beside the binary)
#   --requests N         requests of the single-instance workload (default 20000)
#   --cluster-requests N requests of the 16-instance workload (default 20000)
# Needs GNU time (/usr/bin/time) and the jar (./mvnw -q package -DskipTests).
set -euo pipefail
cd "$(dirname "$0")/.."

go_blis=""
go_defaults=""
requests=20000
cluster_requests=20000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --go-blis) go_blis="$2"; shift 2 ;;
    --go-defaults) go_defaults="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --cluster-requests) cluster_requests="$2"; shift 2 ;;
    *) echo "peer-bench: unknown argument '$1' (expected --go-blis, --go-defaults, --requests, --cluster-requests)" >&2; exit 2 ;;
  esac
done
jar=blis-cli/target/blis.jar
[[ -f "$jar" ]] || { echo "peer-bench: $jar not found: build it with ./mvnw -q package -DskipTests" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "peer-bench: /usr/bin/time (GNU time) is needed" >&2; exit 2; }
if [[ -n "$go_blis" ]]; then
  [[ -x "$go_blis" ]] || { echo "peer-bench: --go-blis: '$go_blis' is not an executable file" >&2; exit 2; }
  [[ -n "$go_defaults" ]] || go_defaults="$(dirname "$go_blis")/defaults.yaml"
  [[ -f "$go_defaults" ]] || { echo "peer-bench: --go-defaults: '$go_defaults' not found" >&2; exit 2; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure NAME CMD...: runs CMD, prints "wall cpu rss_mb" (seconds, seconds, MiB)
measure() {
  local name=$1; shift
  if ! /usr/bin/time -f "%e %U %S %M" -o "$tmp/$name.time" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; then
    echo "peer-bench: $name failed; its last lines:" >&2
    tail -5 "$tmp/$name.err" >&2
    exit 1
  fi
  awk '{ printf "%.2f %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$tmp/$name.time"
}

workloads=(
  "single|run --model qwen/qwen3-14b --num-requests $requests --rate 10 --seed 42"
  "cluster16|run --model qwen/qwen3-14b --num-instances 16 --routing-policy least-loaded --num-requests $cluster_requests --rate 160 --seed 42"
)

printf '| workload | BLIS wall s | BLIS CPU s | BLIS peak MiB |'
[[ -n "$go_blis" ]] && printf ' Go BLIS wall s | Go BLIS CPU s | Go BLIS peak MiB | CPU ratio | wall ratio | memory ratio |'
printf '\n|---|---|---|---|'
[[ -n "$go_blis" ]] && printf -- '---|---|---|---|---|---|'
printf '\n'
for w in "${workloads[@]}"; do
  name=${w%%|*}
  args=${w#*|}
  # shellcheck disable=SC2086
  read -r jw jc jm < <(measure "$name-blis" java -jar "$jar" $args)
  row="| $name: \`$args\` | $jw | $jc | $jm |"
  if [[ -n "$go_blis" ]]; then
    # shellcheck disable=SC2086
    read -r gw gc gm < <(measure "$name-go" "$go_blis" $args --defaults-filepath "$go_defaults")
    ratios=$(awk -v gw="$gw" -v gc="$gc" -v gm="$gm" -v jw="$jw" -v jc="$jc" -v jm="$jm" \
      'BEGIN { printf "%.1f | %.1f | %.2f", gc / jc, gw / jw, gm / jm }')
    row="$row $gw | $gc | $gm | $ratios |"
  fi
  echo "$row"
done
[[ -n "$go_blis" ]] && echo "(ratios: Go BLIS / this project; above 1 means this project uses less)"
exit 0
