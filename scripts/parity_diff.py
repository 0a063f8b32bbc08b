#!/usr/bin/env python3
"""Lists the upstream test cases behind docs/vllm-parity.md and diffs them against its table.

Usage:
  python3 scripts/parity_diff.py --vllm PATH_TO_VLLM_CHECKOUT [--go PATH_TO_INFERENCE_SIM_CHECKOUT]
                                 [--table docs/vllm-parity.md] [--strict]

For every upstream test file the table names (a row's first cell is `tests/.../file.py::test_name`
or `sim/.../file_test.go::TestName`), the checkout's file is read and its test functions listed:
top-level `def test_*` in Python (methods of `Test*` classes as `Class::test_*`), `func Test*` in
Go. It prints the functions the table does not have yet ("not yet read") and the rows whose
function the checkout no longer has ("gone upstream"), with counts per file. Files the table does
not name are not listed; pass --all-core to list every test file under tests/v1/core too.
--strict exits 1 when anything is not yet read or gone. The checkouts are read as they are: check
out the commit you want compared (the table's header names the commit each file was read at).
"""
import argparse
import os
import re
import sys

ROW = re.compile(r"^\|\s*`?([^|`]+?\.(?:py|go))::([A-Za-z0-9_:]+)`?\s*\|")


def table_rows(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows.setdefault(m.group(1).strip(), set()).add(m.group(2).strip())
    return rows


def python_tests(text):
    names, cls = [], None
    for line in text.splitlines():
        c = re.match(r"^class (Test\w*)", line)
        if c:
            cls = c.group(1)
            continue
        if re.match(r"^\S", line) and not line.startswith(("def ", "async def ", "@", "class ")):
            cls = None
        top = re.match(r"^(?:async )?def (test\w*)\s*\(", line)
        if top:
            cls = None
            names.append(top.group(1))
            continue
        meth = re.match(r"^    (?:async )?def (test\w*)\s*\(", line)
        if meth and cls:
            names.append(cls + "::" + meth.group(1))
    return names


def go_tests(text):
    return re.findall(r"^func (Test\w+)\s*\(", text, re.M)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm")
    ap.add_argument("--go")
    ap.add_argument("--table", default=os.path.join(os.path.dirname(__file__), "..", "docs", "vllm-parity.md"))
    ap.add_argument("--all-core", action="store_true")
    ap.add_argument("--strict", action="store_true")
    a = ap.parse_args()
    if not a.vllm and not a.go:
        ap.error("give --vllm and/or --go: a checkout of the upstream repository")
    rows = table_rows(a.table)
    files = dict(rows)
    if a.all_core and a.vllm:
        core = os.path.join(a.vllm, "tests", "v1", "core")
        for d, _, fs in os.walk(core):
            for f in fs:
                if f.startswith("test_") and f.endswith(".py"):
                    files.setdefault(os.path.relpath(os.path.join(d, f), a.vllm), set())
    missing = gone = 0
    for rel in sorted(files):
        root = a.go if rel.endswith(".go") else a.vllm
        if root is None:
            continue
        p = os.path.join(root, rel)
        if not os.path.exists(p):
            print(f"{rel}: gone upstream (the whole file), {len(files[rel])} rows")
            gone += len(files[rel])
            continue
        with open(p, encoding="utf-8") as f:
            text = f.read()
        upstream = go_tests(text) if rel.endswith(".go") else python_tests(text)
        new = [t for t in upstream if t not in files[rel]]
        old = sorted(t for t in files[rel] if t not in upstream)
        print(f"{rel}: {len(upstream)} upstream, {len(files[rel])} in the table, "
              f"{len(new)} not yet read, {len(old)} gone upstream")
        for t in new:
            print(f"  not yet read: {rel}::{t}")
        for t in old:
            print(f"  gone upstream: {rel}::{t}")
        missing += len(new)
        gone += len(old)
    print(f"total: {missing} not yet read, {gone} gone upstream")
    return 1 if a.strict and (missing or gone) else 0


if __name__ == "__main__":
    sys.exit(main())
