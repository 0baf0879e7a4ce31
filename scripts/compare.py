#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two runs of the same guest on two kernels: ours and upstream.

The two kernels differ only by the AUX rewrite (the commits after
"rewrite:" in patches/series.txt, patches/rewrite) and boot
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

Some kernels are compared on a subset: a Debian stock kernel, which
runs a part of the suites with ptsim as a module (make check's
"stock-6.12" boot against upstream-6.12; "stock", Debian 13's 7.3,
against upstream), and 7.3's upstream against 6.12's (upstream-6.12).
--names stock-6.12,upstream-6.12 names the sides,
--subset compares only the suites, results and files the first run has,
and
--explained FILE ("tests/suites.py differences KERNEL") lists the
differences that are expected, each with its reason: such a difference is
"ok", its reason shown.  A line is SUITE RESULT STATUS-A STATUS-B
REASON..., fnmatch globs, the statuses as printed here (ok, not?ok, skip,
missing); a file under diff/ that differs is explained by a line whose
RESULT is its name (diff/FILE) and whose statuses are both "differs".

Usage: compare.py [--exclude GLOB]... [--names A,B] [--subset]
                  [--explained FILE] OURS_RUNDIR UPSTREAM_RUNDIR
"""
import argparse
import collections
import difflib
import fnmatch
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402  (scripts/results.py: the one parser)
from ktap import Ktap  # noqa: E402  (scripts/ktap.py: the one TAP writer)

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


def status(outcomes):
    return ','.join(WORD[o] for o in outcomes) if outcomes else 'missing'


def read_explained(path):
    """[(suite glob, result glob, status A glob, status B glob, reason)]."""
    out = []
    for i, w in results.data_lines(path):
        if len(w) < 5:
            sys.exit(f'{path}:{i}: want SUITE RESULT STATUS-A STATUS-B REASON...')
        out.append((w[0], w[1], w[2], w[3], ' '.join(w[4:])))
    return out


def explain(explained, suite, name, oo, uo):
    """The reason --explained gives for this difference, or None."""
    for s, r, x, y, why in explained:
        if (fnmatch.fnmatchcase(suite, s) and fnmatch.fnmatchcase(name, r)
                and fnmatch.fnmatchcase(status(oo), x)
                and fnmatch.fnmatchcase(status(uo), y)):
            return why
    return None


def explain_file(explained, name):
    """The reason --explained gives for a differing file: a line whose
    RESULT matches its diff/ name and whose statuses both match "differs"
    (its SUITE is the suite that leaves the file; not matched)."""
    for _, r, x, y, why in explained:
        if (fnmatch.fnmatchcase(name, r) and fnmatch.fnmatchcase('differs', x)
                and fnmatch.fnmatchcase('differs', y)):
            return why
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--exclude', action='append', default=[], metavar='GLOB')
    ap.add_argument('--names', default='ours,upstream')
    ap.add_argument('--subset', action='store_true')
    ap.add_argument('--explained', metavar='FILE')
    ap.add_argument('ours')
    ap.add_argument('upstream')
    a = ap.parse_args()
    na, nb = a.names.split(',')
    explained = read_explained(a.explained) if a.explained else []
    lines = []      # (ok, description, [diagnostics])
    sides = {'ours': a.ours, 'upstream': a.upstream}
    got = {k: collect(v) for k, v in sides.items()}
    for k, v in got.items():
        if v is None:
            lines.append((False, f'{na if k == "ours" else nb}: no logs in {sides[k]}', []))
    excluded = []
    if all(v is not None for v in got.values()):
        o, u = got['ours'], got['upstream']
        compared = 0
        for suite in sorted(set(o) if a.subset else set(o) | set(u)):
            if any(fnmatch.fnmatchcase(suite, g) for g in a.exclude):
                excluded.append(f'{suite} (ours {sum(o[suite].values())} results, '
                                f'upstream {sum(u[suite].values())})')
                continue
            compared += 1
            if a.subset:
                # Only the results the first run has (the stock boot runs
                # a part of the suites, and so leaves a part of the traces).
                names_o = {n for n, _ in o[suite]}
                u[suite] = collections.Counter({k: c for k, c in u[suite].items()
                                                if k[0] in names_o})
            if o[suite] == u[suite]:
                lines.append((True, f'{suite}: {sum(o[suite].values())} results identical', []))
                continue
            names = sorted({n for n, _ in o[suite]} | {n for n, _ in u[suite]})
            for n in names:
                oo = sorted(x for (m, x), c in o[suite].items() if m == n for _ in range(c))
                uo = sorted(x for (m, x), c in u[suite].items() if m == n for _ in range(c))
                if oo != uo:
                    what = f'{suite}: {n}' if n else suite
                    why = explain(explained, suite, n, oo, uo)
                    lines.append((why is not None,
                                  f'{what}: {na}={status(oo)} {nb}={status(uo)}'
                                  + (f' (explained: {why})' if why else ''), []))
        if compared == 0:
            lines.append((False, 'results: nothing to compare (no results on either kernel)', []))

    # Files the suites want compared byte for byte.
    fo = files_under(os.path.join(a.ours, 'guest', 'diff'))
    fu = files_under(os.path.join(a.upstream, 'guest', 'diff'))
    for rel in sorted(set(fo) if a.subset else set(fo) | set(fu)):
        name = f'diff/{rel}'
        if rel not in fu or rel not in fo:
            lines.append((False, f'{name}: only in {na if rel in fo else nb}', []))
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
                f'{na}/{name}', f'{nb}/{name}', lineterm='', n=1))
        except UnicodeDecodeError:
            first = next(i for i in range(min(len(bo), len(bu)) + 1)
                         if i == min(len(bo), len(bu)) or bo[i] != bu[i])
            d = [f'binary files differ: first at byte {first} '
                 f'({na} {len(bo)} bytes, {nb} {len(bu)} bytes)']
        ndiff = sum(1 for x in d if x[:1] in '+-' and x[:3] not in ('+++', '---'))
        more = [f'... {len(d) - MAX_DIFF_LINES} more lines'] if len(d) > MAX_DIFF_LINES else []
        why = explain_file(explained, name)
        lines.append((why is not None, f'{name}: differs ({ndiff} lines)'
                      + (f' (explained: {why})' if why else ''), d[:MAX_DIFF_LINES] + more))

    t = Ktap()
    for x in excluded:
        t.note(f'not compared (tests the AUX rewrite itself): {x}')
    for ok, desc, diag in lines:
        t.result(ok, desc, diag)
    t.print()
    return 1 if t.failed else 0


if __name__ == '__main__':
    sys.exit(main())
