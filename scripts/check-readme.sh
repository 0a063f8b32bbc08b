#!/usr/bin/env bash
# Runs every command block of README.md as a newcomer would: in a fresh clone of this repository
# (the committed HEAD), after the README's set-up command, with the ground truth beside the clone
# as ../shared. `blis` at the start of a command stands for `java -jar blis-cli/target/blis.jar`.
# Blocks fenced as ``` or ```bash run; ```text, ```yaml, ```java, ```xml do not (the Java examples
# are compiled and run by ReadmeJavaExamplesTest). A block right after
#   <!-- check-readme: skip (why) -->   never runs (it needs a GPU server, your files, ...);
#   <!-- check-readme: long (why) -->   runs only with --all (calibrations, the whole test suite).
# Usage: scripts/check-readme.sh [--all] [--keep]     (prints each command, stops at the first failure)
set -euo pipefail
ALL=0; KEEP=0
for a in "$@"; do
  case "$a" in
    --all) ALL=1 ;;
    --keep) KEEP=1 ;;
    *) echo "usage: scripts/check-readme.sh [--all] [--keep]" >&2; exit 2 ;;
  esac
done
REPO=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$(cd "$REPO/../shared" && pwd)
TMP=$(mktemp -d)
[ "$KEEP" = 1 ] || trap 'rm -rf "$TMP"' EXIT
git clone -q "$REPO" "$TMP/blis"
ln -s "$SHARED" "$TMP/shared"
cd "$TMP/blis"
python3 - "$ALL" > "$TMP/commands.sh" <<'PY'
import re, shlex, sys
run_long = sys.argv[1] == "1"
text = open("README.md", encoding="utf-8").read()
n = 0
for m in re.finditer(r"(<!-- check-readme: (skip|long)[^\n]*-->\n)?```(\w*)\n(.*?)```", text, re.S):
    marker, tag, body = m.group(2), m.group(3), m.group(4)
    if tag not in ("", "bash") or marker == "skip" or (marker == "long" and not run_long):
        continue
    line_no = text.count("\n", 0, m.start()) + 1
    command = ""
    for raw in body.split("\n"):
        line = raw.rstrip()
        if not command and (not line or line.lstrip().startswith("#")):
            continue
        command += line[:-1] + " " if line.endswith("\\") else line
        if line.endswith("\\"):
            continue
        if command.startswith("blis "):
            command = "java -jar blis-cli/target/blis.jar " + command[5:]
        n += 1
        print("echo " + shlex.quote(f"--- README.md:{line_no}: {command}"))
        # on a line of its own inside ( ), so that a trailing # comment ends there
        print(f"( {command}\n) > /dev/null || {{ echo 'FAILED: README.md block at line {line_no}'; exit 1; }}")
        command = ""
print(f"echo 'all {n} README commands ran'")
PY
bash -e "$TMP/commands.sh"
