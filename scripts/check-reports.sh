#!/usr/bin/env bash
# Opens BLIS HTML reports in headless Chromium and checks what each page records about itself (see
# io.blis.cli.report.ChartPage): every chart rendered with rows of data and drawn marks, and no
# script error, rejected promise, console error or console warning. Writes a screenshot of each
# page next to it (REPORT.png) to look at. ReportBrowserTest runs the same check in the test suite.
#
# Usage: scripts/check-reports.sh [REPORT.html ...]
#   Without arguments it writes a validate report (the small test experiment) and a sweep report
#   (the four-configuration test grid) with blis.jar into a temporary directory and checks those.
#   Build first (./mvnw -B -q -DskipTests package) and install Chromium (apt-get install -y chromium).
# Environment: CHROMIUM (default: chromium), BLIS_JAR (default: blis-cli/target/blis.jar),
#   WIDTH and HEIGHT of the screenshots (default 1200 and 2400), OUT (where reports are written when
#   none is given; default: a new temporary directory, printed).
# Exit status: 0 when every page passed, 1 when one did not, 2 for bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
CHROMIUM=${CHROMIUM:-chromium}
JAR=${BLIS_JAR:-blis-cli/target/blis.jar}
WIDTH=${WIDTH:-1200}
HEIGHT=${HEIGHT:-2400}
command -v "$CHROMIUM" >/dev/null || { echo "check-reports: no $CHROMIUM on PATH (apt-get install -y chromium)" >&2; exit 2; }

reports=("$@")
if [ ${#reports[@]} -eq 0 ]; then
  [ -f "$JAR" ] || { echo "check-reports: $JAR missing; build it with ./mvnw -B -q -DskipTests package" >&2; exit 2; }
  OUT=${OUT:-$(mktemp -d)}
  mkdir -p "$OUT"
  echo "writing reports to $OUT"
  java -jar "$JAR" validate --experiments blis-engine/src/test/resources/validate/experiments-small.json \
    --html "$OUT/validate.html" --threads 1 > /dev/null
  java -jar "$JAR" sweep --grid blis-cli/src/test/resources/report/sweep-grid.yaml --out "$OUT/sweep" \
    --quiet > /dev/null
  reports=("$OUT/validate.html" "$OUT/sweep/report.html")
fi

# one headless run per page; a fresh profile each time, nothing fetched, bounded in time
browse() {
  local profile
  profile=$(mktemp -d)
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
    --virtual-time-budget=20000 "$@" 2>/dev/null || true
  rm -rf "$profile"
}

attr() { # attr NAME TAG -> the attribute's value, empty when absent
  sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p" <<< "$2"
}

failed=0
for html in "${reports[@]}"; do
  [ -f "$html" ] || { echo "check-reports: no such file $html" >&2; exit 2; }
  path=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
  dom=$(browse --dump-dom "file://$path")
  body=$(grep -o '<body[^>]*>' <<< "$dom" | head -1 || true)
  box=$(grep -o '<div id="blis-errors"[^>]*>' <<< "$dom" | head -1 || true)
  charts=$(attr data-charts "$body")
  problems=()
  [ "$(attr data-rendered "$body")" = all ] || problems+=("not every chart finished rendering")
  [ "$(attr data-errors "$box")" = 0 ] || problems+=("$(attr data-errors "$box") errors")
  [ "$(attr data-warnings "$box")" = 0 ] || problems+=("$(attr data-warnings "$box") warnings")
  echo "$html: ${charts:-?} charts"
  while read -r tag; do
    [ -n "$tag" ] || continue
    id=$(attr id "$tag"); status=$(attr data-status "$tag"); rows=$(attr data-rows "$tag"); marks=$(attr data-marks "$tag")
    echo "  $id: $status, ${rows:-0} rows, ${marks:-0} marks"
    if [ "$status" != rendered ] || [ "${rows:-0}" -eq 0 ] || [ "${marks:-0}" -eq 0 ]; then
      problems+=("$id not drawn with data")
    fi
  done <<< "$(grep -o '<div class="blis-chart[^"]*"[^>]*>' <<< "$dom" || true)"
  grep -o '<div class="blis-\(error\|warning\)">[^<]*' <<< "$dom" | sed 's/<div class="blis-[a-z]*">/  /' || true
  browse --hide-scrollbars --window-size="$WIDTH,$HEIGHT" --screenshot="${path%.html}.png" "file://$path"
  if [ ${#problems[@]} -eq 0 ]; then
    echo "  ok; screenshot ${path%.html}.png"
  else
    joined=$(printf '%s; ' "${problems[@]}")
    echo "  FAILED: ${joined%; }"
    failed=1
  fi
done
exit $failed
