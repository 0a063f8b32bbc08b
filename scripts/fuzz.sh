#!/usr/bin/env bash
# Fuzzes one parser for a while: scripts/fuzz.sh TARGET [DURATION] [MAVEN ARGS...]
#   TARGET    a fuzz test class (blis-engine/src/test/java/io/blis/engine/fuzz, or
#             blis-cli/src/test/java/io/blis/cli/fuzz for the server's), e.g. PolicyBundleFuzzTest
#   DURATION  how long, as Jazzer reads it: 30s, 10m, 2h (default 10m)
# New inputs that reach new code are kept in <module>/.cifuzz-corpus/ (not committed) and used
# again by the next run of the same target. A crashing input is written to the target's seed
# directory, <module>/src/test/resources/<package>/<TARGET>Inputs/fuzz/, where every later
# build replays it: fix the parser, then commit the input as a regression seed. An input
# that runs longer than 10 s stops the run too (libFuzzer's timeout, a file timeout-<sha1>).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(blis-engine/src/test/java/io/blis/engine/fuzz/*FuzzTest.java blis-cli/src/test/java/io/blis/cli/fuzz/*FuzzTest.java)
module=
for f in "${targets[@]}"; do
  [[ $# -ge 1 && $(basename "$f" .java) == "$1" ]] && module=${f%%/*}
done
if [[ -z $module ]]; then
  echo "usage: scripts/fuzz.sh TARGET [DURATION] [MAVEN ARGS...]; TARGET one of:" \
    $(for f in "${targets[@]}"; do basename "$f" .java; done) >&2
  exit 2
fi
target=$1
duration=${2:-10m}
shift $(( $# >= 2 ? 2 : 1 ))
JAZZER_FUZZ=1 exec ./mvnw -B -ntp -pl "$module" -am test \
  -Dtest="$target" -Dsurefire.failIfNoSpecifiedTests=false \
  -Djazzer.max_duration="$duration" -Djazzer.max_executions=0 -Djazzer.instrument='io.blis.**' \
  -Djazzer.disabled_hooks=com.code_intelligence.jazzer.sanitizers.FilePathTraversal \
  -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1=-timeout=10 \
  "-DargLine=-Xmx1g -XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading" "$@"
