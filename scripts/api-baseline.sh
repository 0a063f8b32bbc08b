#!/usr/bin/env bash
# Records the API baselines the build checks with japicmp (`verify` fails on a removed or changed
# signature): blis-api's whole jar, and of blis-engine the public types README's embedding examples
# and the consumer build use (the <includes> of blis-engine/pom.xml's japicmp execution).
# Run it only when a release deliberately moves the baseline; additions never need it.
# Usage: scripts/api-baseline.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n "s:^  <version>\(.*\)</version>:\1:p" pom.xml | head -1)
./mvnw -B -ntp -q package -DskipTests -Djapicmp.skip -Dmaven.javadoc.skip -Dmaven.source.skip \
  -Dcyclonedx.skip -Dblis.cds.skip -pl blis-api,blis-engine -am
cp "blis-api/target/blis-api-$version.jar" blis-api/src/api-baseline/blis-api.jar

# blis-engine: only the classes its japicmp execution includes (and their nested classes)
classes=$(sed -n 's:.*<include>\(io\.blis\.engine\.[A-Za-z.$]*\)</include>.*:\1:p' blis-engine/pom.xml \
  | sed 's/\$.*//' | sort -u)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && jar --extract --file "$OLDPWD/blis-engine/target/blis-engine-$version.jar")
files=()
for c in $classes; do
  path=${c//.//}
  for f in "$work/$path.class" "$work/$path"\$*.class; do
    [[ -f $f ]] && files+=("${f#"$work"/}")
  done
done
rm -f blis-engine/src/api-baseline/blis-engine.jar
(cd "$work" && jar --create --no-manifest --date 2026-01-01T00:00:00Z \
  --file "$OLDPWD/blis-engine/src/api-baseline/blis-engine.jar" "${files[@]}")
echo "baselines: blis-api/src/api-baseline/blis-api.jar, blis-engine/src/api-baseline/blis-engine.jar (${#files[@]} classes)"
