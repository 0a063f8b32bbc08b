#!/usr/bin/env python3
"""Markdown tables of corpus replays (the JSON `blis corpus --out` writes): one row per source with
each replay's median and largest absolute error of the points' headline statistics, its median
signed error and how many points its 90% intervals hold, then one row per half and axis.

Usage: python3 scripts/corpus_tables.py LABEL=FILE [LABEL=FILE ...]
The last file's sources and points set the rows; a point another file did not replay shows as
missing there (its count is given). Standard library only.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return {(p['source'], p['id']): p for p in json.load(f)['points']}


def error(p):
    if 'statistics' not in p:
        return None
    e = p['statistics'].get(p['headline'], {}).get('error')
    return None if e is None else 100 * e


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def cell(points):
    errs = [e for e in (error(p) for p in points) if e is not None]
    if not errs:
        return 'not replayed'
    ape = [abs(e) for e in errs]
    ivs = [p for p in points if 'interval' in p]
    cov = '%d/%d' % (sum(1 for p in ivs if p['interval']['covered']), len(ivs)) if ivs else '-'
    missing = len(points) - len(errs)
    return '%.1f%% / %.1f%% / %+.1f%% / %s%s' % (median(ape), max(ape), median(errs), cov,
                                               ' (%d not replayed)' % missing if missing else '')


def main():
    runs = []
    for arg in sys.argv[1:]:
        label, _, path = arg.partition('=')
        runs.append((label, load(path)))
    if not runs:
        sys.exit(__doc__)
    last = runs[-1][1]
    sources = []
    for (s, _), p in last.items():
        if s not in sources:
            sources.append(s)
    print('| source | half | points | ' + ' | '.join(l + ': median / max / signed median / in 90% interval'
                                                  for l, _ in runs) + ' |')
    print('|---|---|---|' + '---|' * len(runs))
    for s in sorted(sources, key=lambda x: (last[next(k for k in last if k[0] == x)]['half'], x)):
        keys = [k for k in last if k[0] == s]
        half = last[keys[0]]['half']
        cells = [cell([r[k] for k in keys if k in r]) for _, r in runs]
        print('| %s | %s | %d | %s |' % (s, half, len(keys), ' | '.join(cells)))
    print()
    print('| half | points | ' + ' | '.join(l for l, _ in runs) + ' |')
    print('|---|---|' + '---|' * len(runs))
    for half in ('choosing', 'reporting'):
        keys = [k for k in last if last[k]['half'] == half]
        print('| %s | %d | %s |' % (half, len(keys), ' | '.join(cell([r[k] for k in keys if k in r]) for _, r in runs)))


if __name__ == '__main__':
    main()
