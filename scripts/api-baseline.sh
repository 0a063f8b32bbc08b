#!/usr/bin/env bash
# Records the API baselines the build checks with japicmp (`verify` fails on a removed or changed
# signature): blis-api's whole jar, and of blis-engine, blis-latency and blis-workload the public
# types README's embedding examples and the consumer build use (the <includes> of the
# japicmp-maven-plugin in each module's pom.xml), into <module>/src/api-baseline/<module>.jar.
# Run it only when a release deliberately moves the baseline; additions never need it.
# Usage: scripts/api-baseline.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n "s:^  <version>\(.*\)</version>:\1:p" pom.xml | head -1)
./mvnw -B -ntp -q package -DskipTests -Djapicmp.skip -Dmaven.javadoc.skip -Dmaven.source.skip \
  -Dcyclonedx.skip -Dblis.cds.skip -pl blis-api,blis-workload,blis-latency,blis-engine -am
cp "blis-api/target/blis-api-$version.jar" blis-api/src/api-baseline/blis-api.jar
echo "blis-api: the whole jar"

# the other modules: only the classes their japicmp configuration includes (and nested classes)
for module in blis-workload blis-latency blis-engine; do
  classes=$(sed -n 's:.*<include>\(io\.blis\.[A-Za-z.$]*\)</include>.*:\1:p' "$module/pom.xml" \
    | sed 's/\$.*//' | sort -u)
  work=$(mktemp -d)
  (cd "$work" && jar --extract --file "$OLDPWD/$module/target/$module-$version.jar")
  files=()
  for c in $classes; do
    path=${c//.//}
    for f in "$work/$path.class" "$work/$path"\$*.class; do
      [[ -f $f ]] && files+=("${f#"$work"/}")
    done
  done
  mkdir -p "$module/src/api-baseline"
  rm -f "$module/src/api-baseline/$module.jar"
  (cd "$work" && jar --create --no-manifest --date 2026-01-01T00:00:00Z \
    --file "$OLDPWD/$module/src/api-baseline/$module.jar" "${files[@]}")
  rm -rf "$work"
  echo "$module: ${#files[@]} classes"
done
