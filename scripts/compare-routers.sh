#!/usr/bin/env bash
# Compares the routers on the README's cluster workload; prints a Markdown table.
# Usage: scripts/compare-routers.sh [blis.jar]   (build it first: ./mvnw -B -q -DskipTests package)
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${1:-blis-cli/target/blis.jar}
OUT=$(mktemp -d)
echo "| router | completed | TTFT mean (ms) | TTFT p99 (ms) | E2E p99 (ms) | goodput (req/s) | KV hit rate | HOL events | regret mean (ms) | fitness |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for r in round-robin least-loaded weighted prefix-affinity always-busiest; do
  java -jar "$JAR" run --policy-config docs/examples/cluster-compare.yaml \
    --workload-spec docs/examples/cluster-workload.yaml --routing-policy "$r" \
    --trace-level decisions --counterfactual-k 1 \
    --fitness-weights goodput:0.4,ttft_p99:0.3,e2e_p99:0.3 > "$OUT/$r.json" 2>/dev/null
  python3 - "$r" "$OUT/$r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2])); o = r["overall"]
print("| %s | %d | %.0f | %.0f | %.0f | %.2f | %.3f | %d | %.1f | %.4f |" % (
    sys.argv[1], o["completed_requests"], o["ttft_ms"]["mean"], o["ttft_ms"]["p99"],
    o["e2e_ms"]["p99"], o["goodput_per_s"], r["engine"]["kv_token_hit_rate"],
    r["anomalies"]["hol_blocking_events"], r["decision_summary"]["regret_ms"]["mean"],
    r["fitness"]["score"]))
PY
done
rm -rf "$OUT"
