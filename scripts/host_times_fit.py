#!/usr/bin/env python3
"""Estimates the host (CPU) time of each generation of vLLM's engine from the CHOOSING half of the
corpus of published measurements (docs/public-measurements), and writes the host-times table the
engine bundles (blis-engine/src/main/resources/io/blis/engine/host/host-times.yaml).

Standard library only; it runs the built CLI (blis-cli/target/blis.jar, `blis corpus`) once per
trial table. Never reads the reporting half.

For each generation (v0-before-0.3, v0-before-0.6, v0, v1) and its choosing-half points (by the point's vLLM
release and engine):
  loss(h) = mean over sources of (mean over the source's points of ln(predicted / measured)^2)
of the point's headline statistic, every source weighted alike whatever its number of points; for
v1, whose evidence is dominated by one publisher's bursts whose misses have other causes, the loss
is taken on what isolates the host time instead: each source's pairs of the same workload run with
and without async scheduling (ln of the synchronous-to-asynchronous ratio, predicted against
measured) and its points with at most 8 requests in flight, where the host time is a large share of
a step. Minimized by coordinate descent over a grid within physical bounds (per step <= 5 ms, per
extra tensor-parallel rank <= 1 ms, per request <= 150 us), then again leaving each source out to
report how the estimate carries to a source it has not seen.

Usage: python3 scripts/host_times_fit.py [--out FILE] [--no-loso]
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAR = os.path.join(ROOT, 'blis-cli', 'target', 'blis.jar')
CORPUS = os.path.join(ROOT, 'docs', 'public-measurements')
BOUNDS = {'per_step_us': (0, 5000), 'per_extra_rank_us': (0, 1000), 'per_request_us': (0, 150)}
GENERATIONS = [('v0-before-0.3', 'v0', '0.3.0'), ('v0-before-0.6', 'v0', '0.6.0'), ('v0', 'v0', None),
               ('v1', 'v1', None)]


def version_tuple(v):
    parts = v.split('.')
    return tuple(int(p) for p in (parts + ['0', '0'])[:3])


def generation_of(p):
    if p['engine'] == 'v1':
        return 'v1'
    v = version_tuple(p['vllm'])
    return 'v0-before-0.3' if v < (0, 3, 0) else 'v0-before-0.6' if v < (0, 6, 0) else 'v0'


def table(values, note):
    lines = ['# ' + l for l in note.splitlines()] + ['version: 1', 'generations:']
    for name, engine, until in GENERATIONS:
        v = values[name]
        lines.append('  - name: ' + name)
        lines.append('    engine: ' + engine)
        if until:
            lines.append('    until: "%s"' % until)
        for k in ('per_step_us', 'per_extra_rank_us', 'per_request_us'):
            lines.append('    %s: %g' % (k, v[k]))
    return '\n'.join(lines) + '\n'


def replay(values, sources, tmp):
    f = os.path.join(tmp, 'h.yaml')
    with open(f, 'w') as out:
        out.write(table(values, 'trial'))
    js = os.path.join(tmp, 'o.json')
    cmd = ['java', '-jar', os.path.join(tmp, 'blis.jar'), 'corpus', '--dir', CORPUS, '--half', 'choosing', '--host-times', f, '--out', js]
    for s in sources:
        cmd += ['--source', s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(js) as fh:
        return [p for p in json.load(fh)['points'] if 'statistics' in p]


def log_error(p):
    s = p['statistics'][p['headline']]
    if s['predicted'] is None or s['measured'] is None:
        return None
    e = s['error']
    return None if e is None or e <= -1 else math.log(1 + e)


def loss(gen, points, exclude=None):
    by_source = {}
    if gen != 'v1':
        for p in points:
            if generation_of(p) == gen and p['source'] != exclude:
                e = log_error(p)
                if e is not None:
                    by_source.setdefault(p['source'], []).append(e * e)
    else:
        # async/sync pairs of one workload: same source, ids that differ only by base/async
        pts = {(p['source'], p['id']): p for p in points if generation_of(p) == 'v1' and p['source'] != exclude}
        for (src, pid), p in pts.items():
            if pid.endswith('-base'):
                q = pts.get((src, pid[:-5] + '-async'))
                if q is not None and log_error(p) is not None and log_error(q) is not None:
                    # ln(pred_base/pred_async) - ln(obs_base/obs_async) = e_base - e_async
                    d = log_error(p) - log_error(q)
                    by_source.setdefault(src, []).append(d * d)
            c = p.get('workload', {}).get('max_concurrency', 0)
            if c and c <= 8:
                e = log_error(p)
                if e is not None:
                    by_source.setdefault(src, []).append(e * e)
    if not by_source:
        return float('nan')
    return sum(sum(v) / len(v) for v in by_source.values()) / len(by_source)


def grid(lo, hi):
    # 0, then 1/16 .. 16/16 of the bound in steps of 1/16 up to 1/4 and of 1/8 above
    steps = [1, 2, 3, 4, 6, 8, 10, 12, 14, 16]
    return sorted(set([0.0] + [round(hi * k / 16, 3) for k in steps if hi * k / 16 >= lo]))


# each generation's host time is bounded by the one before it
BOUNDED_BY = {'v0': 'v0-before-0.6', 'v1': 'v0'}


def fit(gen, sources, tmp, start, exclude=None, rounds=2):
    values = {g: dict(v) for g, v in start.items()}
    keys = ['per_step_us', 'per_request_us'] + (['per_extra_rank_us'])
    bounds = {k: (lo, min(hi, values[BOUNDED_BY[gen]][k]) if gen in BOUNDED_BY else hi)
              for k, (lo, hi) in BOUNDS.items()}
    for k in keys:
        values[gen][k] = min(values[gen][k], bounds[k][1])
    best = loss(gen, replay(values, sources, tmp), exclude)
    for _ in range(rounds):
        improved = False
        for k in keys:
            for x in grid(*bounds[k]):
                trial = {g: dict(v) for g, v in values.items()}
                trial[gen][k] = x
                l = loss(gen, replay(trial, sources, tmp), exclude)
                if l < best - 1e-12:
                    best, values, improved = l, trial, True
        if not improved:
            break
    return values, best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', default=os.path.join(ROOT, 'blis-engine', 'src', 'main', 'resources', 'io', 'blis',
                                                   'engine', 'host', 'host-times.yaml'))
    ap.add_argument('--no-loso', action='store_true', help='skip the leave-one-source-out refits')
    args = ap.parse_args()
    zero = {g: {'per_step_us': 0, 'per_extra_rank_us': 0, 'per_request_us': 0} for g, _, _ in GENERATIONS}
    with tempfile.TemporaryDirectory() as tmp:
        # a copy of the jar, so that a rebuild while this runs cannot break it
        shutil.copyfile(JAR, os.path.join(tmp, 'blis.jar'))
        everything = replay(zero, [], tmp)
        values = {g: dict(v) for g, v in zero.items()}
        report = []
        for gen, _, _ in GENERATIONS:
            sources = sorted({p['source'] for p in everything if generation_of(p) == gen})
            # only the sources the loss reads (for v1: those with async pairs or small closed loops)
            sources = [s for s in sources if not math.isnan(loss(gen, [p for p in everything if p['source'] == s]))]
            if not sources:
                continue
            before = loss(gen, everything)
            fitted, after = fit(gen, sources, tmp, values)
            values[gen] = fitted[gen]
            report.append('%s: %d choosing sources, loss %.4f -> %.4f, %s' % (
                gen, len(sources), before, after, fitted[gen]))
            print(report[-1], flush=True)
            if not args.no_loso and len(sources) > 1:
                for s in sources:
                    held, _ = fit(gen, sources, tmp, values, exclude=s, rounds=2)
                    pts = [p for p in replay(held, [s], tmp) if generation_of(p) == gen]
                    errs = sorted(abs(math.expm1(log_error(p))) * 100 for p in pts if log_error(p) is not None)
                    line = '  without %s: %s; its points median |error| %.1f%%' % (
                        s, held[gen], errs[len(errs) // 2] if errs else float('nan'))
                    report.append(line)
                    print(line, flush=True)
        note = ('Host (CPU) time of one engine step by generation of vLLM\'s engine: host = per_step_us +\n'
                'per_extra_rank_us x (tp - 1) + per_request_us x requests in the step. A synchronous engine adds\n'
                'it to the GPU\'s step; an asynchronous one (V1 with async scheduling, the default from 0.14, the\n'
                'release the bundled coefficients were fitted on) overlaps it with the GPU\'s step.\n'
                'Estimated by scripts/host_times_fit.py on the choosing half of docs/public-measurements only\n'
                '(its docstring says how); the reporting half was never read.\n' + '\n'.join(report))
        with open(args.out, 'w') as out:
            out.write(table(values, note))
        print('wrote', args.out)


if __name__ == '__main__':
    main()
