#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two runs of the same guest on two kernels: ours and upstream.

The two kernels differ only by the AUX rewrite (patches/rewrite) and boot
the same initramfs, so every test must come out the same on both.  Each
run directory is one of scripts/boot.sh's (console.log, tests.log, the
guest's files in guest/, decode.tap from make check's trace decoding and
perf.tap from its checks of the perf suite's recordings).

Compared:
  - every result, as results.py parses it (KUnit cases from the console,
    kselftest results and suites by exit status from the tests log, the
    host's decoding of each trace): per suite, the same result names with
    the same status (ok, not ok or skip; a skip's reason and a result's
    diagnostics may differ).  Kernel splats and an unfinished guest are
    failures of their own run, not compared.  Suites matching an
    --exclude glob (the rewrite's own KUnit suites) are left out, and
    listed as such;
  - every file the suites left under $AUXLAB_OUT/diff/ (guest/diff/ on
    the host): byte-identical between the two runs.

Prints TAP: one "ok" per suite that is identical and per identical file,
one "not ok" per differing result (naming the suite, the result and each
side's status) and per differing file (with the differing lines as "# "
diagnostics).  Exits 1 on any difference.

Usage: compare.py [--exclude GLOB]... OURS_RUNDIR UPSTREAM_RUNDIR
"""
import argparse
import collections
import difflib
import fnmatch
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402  (scripts/results.py: the one parser)

WORD = {'pass': 'ok', 'fail': 'not ok', 'skip': 'skip'}
MAX_DIFF_LINES = 40


def collect(rundir):
    """{suite: Counter((name, outcome))} of one run, or None without logs."""
    con = results.read(os.path.join(rundir, 'console.log'))
    tests = results.read(os.path.join(rundir, 'tests.log'))
    if con is None or tests is None:
        return None
    t = results.Tally()
    results.parse_kunit(con, t, '')
    results.parse_tests(tests, t, '')
    dec = os.path.join(rundir, 'decode.tap')
    if os.path.exists(dec):
        results.parse_tap_file('decode', dec, t)
    # The host's checks of the perf suite's recordings (perf-check.py).
    prf = os.path.join(rundir, 'perf.tap')
    if os.path.exists(prf):
        results.parse_tap_file('perf', prf, t)
    suites = collections.defaultdict(collections.Counter)
    for suite, outcome, name in t.results:
        suites[suite][(name, outcome)] += 1
    return suites


def files_under(top):
    out = {}
    for d, _, names in os.walk(top):
        for n in names:
            p = os.path.join(d, n)
            out[os.path.relpath(p, top)] = p
    return out


def clean(s):
    """A TAP description cannot hold '#' (it starts a directive)."""
    return s.replace('#', '%23')


def status(outcomes):
    return ','.join(WORD[o] for o in outcomes) if outcomes else 'missing'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--exclude', action='append', default=[], metavar='GLOB')
    ap.add_argument('ours')
    ap.add_argument('upstream')
    a = ap.parse_args()
    lines = []      # (ok, description, [diagnostics])
    sides = {'ours': a.ours, 'upstream': a.upstream}
    got = {k: collect(v) for k, v in sides.items()}
    for k, v in got.items():
        if v is None:
            lines.append((False, f'{k}: no logs in {sides[k]}', []))
    excluded = []
    if all(v is not None for v in got.values()):
        o, u = got['ours'], got['upstream']
        compared = 0
        for suite in sorted(set(o) | set(u)):
            if any(fnmatch.fnmatchcase(suite, g) for g in a.exclude):
                excluded.append(f'{suite} (ours {sum(o[suite].values())} results, '
                                f'upstream {sum(u[suite].values())})')
                continue
            compared += 1
            if o[suite] == u[suite]:
                lines.append((True, f'{suite}: {sum(o[suite].values())} results identical', []))
                continue
            names = sorted({n for n, _ in o[suite]} | {n for n, _ in u[suite]})
            for n in names:
                oo = sorted(x for (m, x), c in o[suite].items() if m == n for _ in range(c))
                uo = sorted(x for (m, x), c in u[suite].items() if m == n for _ in range(c))
                if oo != uo:
                    what = f'{suite}: {n}' if n else suite
                    lines.append((False, f'{what}: ours={status(oo)} upstream={status(uo)}', []))
        if compared == 0:
            lines.append((False, 'results: nothing to compare (no results on either kernel)', []))

    # Files the suites want compared byte for byte.
    fo = files_under(os.path.join(a.ours, 'guest', 'diff'))
    fu = files_under(os.path.join(a.upstream, 'guest', 'diff'))
    for rel in sorted(set(fo) | set(fu)):
        name = f'diff/{rel}'
        if rel not in fu or rel not in fo:
            lines.append((False, f'{name}: only in {"ours" if rel in fo else "upstream"}', []))
            continue
        with open(fo[rel], 'rb') as f:
            bo = f.read()
        with open(fu[rel], 'rb') as f:
            bu = f.read()
        if bo == bu:
            lines.append((True, f'{name}: identical ({len(bo)} bytes)', []))
            continue
        try:
            d = list(difflib.unified_diff(
                bo.decode().splitlines(), bu.decode().splitlines(),
                f'ours/{name}', f'upstream/{name}', lineterm='', n=1))
        except UnicodeDecodeError:
            first = next(i for i in range(min(len(bo), len(bu)) + 1)
                         if i == min(len(bo), len(bu)) or bo[i] != bu[i])
            d = [f'binary files differ: first at byte {first} '
                 f'(ours {len(bo)} bytes, upstream {len(bu)} bytes)']
        ndiff = sum(1 for x in d if x[:1] in '+-' and x[:3] not in ('+++', '---'))
        more = [f'... {len(d) - MAX_DIFF_LINES} more lines'] if len(d) > MAX_DIFF_LINES else []
        lines.append((False, f'{name}: differs ({ndiff} lines)', d[:MAX_DIFF_LINES] + more))

    print('TAP version 13')
    print(f'1..{len(lines)}')
    for x in excluded:
        print(f'# not compared (tests the AUX rewrite itself): {x}')
    for i, (ok, desc, diag) in enumerate(lines, 1):
        print(f'{"ok" if ok else "not ok"} {i} - {clean(desc)}')
        for d in diag:
            print(f'# {d}')
    return 0 if all(ok for ok, _, _ in lines) else 1


if __name__ == '__main__':
    sys.exit(main())
