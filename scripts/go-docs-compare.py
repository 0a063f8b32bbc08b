#!/usr/bin/env python3
"""Runs every `blis run` line of Go BLIS's docs (the list GoBlisCommandsTest runs) here and with
the Go BLIS binary, and prints mean TTFT, E2E and ITL of both as a markdown table, largest TTFT
ratio first.

    python3 scripts/go-docs-compare.py [--go-dir ../shared/tools/go-blis] [--jar blis-cli/target/blis.jar]

The lines run in a scratch folder holding the files beside the list (chat.yaml, examples/, ...)
and the Go binary's own model and hardware files. Go's figures are its cluster object's (the
last object when there is one instance)."""
import argparse, json, os, shlex, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LIST_DIR = os.path.join(HERE, '..', 'blis-cli', 'src', 'test', 'resources', 'io', 'blis', 'cli', 'goblis')


def objects(text):
    """Every top-level JSON object printed in text (Go prints one per instance, then the cluster's)."""
    dec, i, out = json.JSONDecoder(), 0, []
    while (j := text.find('{', i)) >= 0:
        try:
            o, i = dec.raw_decode(text, j)
            out.append(o)
        except ValueError:
            i = j + 1
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--go-dir', default=os.path.join(HERE, '..', '..', 'shared', 'tools', 'go-blis'))
    p.add_argument('--jar', default=os.path.join(HERE, '..', 'blis-cli', 'target', 'blis.jar'))
    a = p.parse_args()
    jar = os.path.abspath(a.jar)
    work = tempfile.mkdtemp(prefix='go-docs-compare-')
    shutil.copytree(LIST_DIR, work, dirs_exist_ok=True)
    for name in os.listdir(a.go_dir):  # Go's binary, defaults, model and hardware files
        src = os.path.join(a.go_dir, name)
        dst = os.path.join(work, name)
        if os.path.isdir(src):
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    rows = []
    for line in open(os.path.join(LIST_DIR, 'docs-commands.txt')):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        args = shlex.split(line.split(' | ')[0])
        if args[1] != 'run':
            continue
        go = subprocess.run(['./go-blis'] + args[1:], cwd=work, capture_output=True, text=True).stdout
        found = [o for o in objects(go) if isinstance(o, dict) and 'ttft_mean_ms' in o]
        cluster = [o for o in found if o.get('instance_id') == 'cluster'] or found[-1:]
        ours = subprocess.run(['java', '-jar', jar] + args[1:], cwd=work, capture_output=True, text=True).stdout
        try:
            o = json.loads(ours)['overall']
            here = (o['ttft_ms']['mean'], o['e2e_ms']['mean'], o['itl_ms']['mean'])
        except (ValueError, KeyError):
            here = None
        there = (cluster[0]['ttft_mean_ms'], cluster[0]['e2e_mean_ms'], cluster[0].get('itl_mean_ms')) if cluster else None
        rows.append((' '.join(args[2:]), here, there))
        print('.', end='', file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rows.sort(key=lambda r: -(r[1][0] / r[2][0]) if r[1] and r[2] and r[2][0] else 0)
    print('| line (`blis run ...`) | TTFT here / Go, ms | ratio | E2E here / Go, ms | ratio | ITL ratio |')
    print('|---|---|---|---|---|---|')
    for cmd, h, g in rows:
        if not h or not g:
            print(f'| `{cmd}` | {"no result here" if not h else ""}{"no result from Go" if not g else ""} | | | | |')
            continue
        itl = f'{h[2] / g[2]:.2f}' if g[2] else ''
        print(f'| `{cmd}` | {h[0]:.1f} / {g[0]:.1f} | {h[0] / g[0]:.2f} | {h[1]:.0f} / {g[1]:.0f} | {h[1] / g[1]:.2f} | {itl} |')
    shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
