#!/usr/bin/env bash
# Fuzzes one parser for a while: scripts/fuzz.sh TARGET [DURATION] [MAVEN ARGS...]
#   TARGET    a fuzz test class of blis-engine/src/test/java/io/blis/engine/fuzz, e.g. PolicyBundleFuzzTest
#   DURATION  how long, as Jazzer reads it: 30s, 10m, 2h (default 10m)
# New inputs that reach new code are kept in blis-engine/.cifuzz-corpus/ (not committed) and used
# again by the next run of the same target. A crashing input is written to the target's seed
# directory, src/test/resources/io/blis/engine/fuzz/<TARGET>Inputs/fuzz/, where every later
# build replays it: fix the parser, then commit the input as a regression seed. An input
# that runs longer than 10 s stops the run too (libFuzzer's timeout, a file timeout-<sha1>).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! -f blis-engine/src/test/java/io/blis/engine/fuzz/$1.java ]]; then
  echo "usage: scripts/fuzz.sh TARGET [DURATION] [MAVEN ARGS...]; TARGET one of:" \
    $(cd blis-engine/src/test/java/io/blis/engine/fuzz && ls *FuzzTest.java | sed 's/\.java$//') >&2
  exit 2
fi
target=$1
duration=${2:-10m}
shift $(( $# >= 2 ? 2 : 1 ))
JAZZER_FUZZ=1 exec ./mvnw -B -ntp -pl blis-engine -am test \
  -Dtest="$target" -Dsurefire.failIfNoSpecifiedTests=false \
  -Djazzer.max_duration="$duration" -Djazzer.max_executions=0 -Djazzer.instrument='io.blis.**' \
  -Djazzer.disabled_hooks=com.code_intelligence.jazzer.sanitizers.FilePathTraversal \
  -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1=-timeout=10 \
  "-DargLine=-Xmx1g -XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading" "$@"
