#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn guest logs into per-suite results and one summary line.

Each run directory holds the two serial logs written by scripts/boot.sh:

  console.log  the kernel console: boot messages, KUnit's KTAP, splats;
  tests.log    what /init ran: "HARNESS: begin NAME", the program's TAP
               (kselftest) output, "HARNESS: end NAME rc=N", "HARNESS: skip
               NAME: why" for a suite not run, and "HARNESS: done".

Counted as results:
  - every KUnit test case (a KTAP result line at depth 1, under its suite);
    a parameterised case counts once, as KUnit itself reports it;
  - every kselftest result line ("ok N ..."/"not ok N ..." at depth 0);
    a program that prints no TAP counts once, by exit status (0 pass,
    4 skip, anything else fail); a plan with missing results, a non-zero
    exit without a failed result, a timeout or an unfinished suite fail;
  - every kernel splat (BUG, WARNING, KASAN, lockdep, RCU stall, Oops,
    panic, ...) is one failure, whatever the tests said;
  - a guest that never printed "HARNESS: done" is one failure, and so is
    a console log without /init's closing "HARNESS: console end" marker.

Usage: results.py [--json FILE] [--tap NAME=FILE ...] LABEL=RUNDIR ...
Prints failures by name, one line per suite, and last the line
"N passed, N failed, N skipped".  Exits 1 if anything failed.
"""
import argparse
import json
import re
import sys

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RESULT = re.compile(r'^(?P<ind>\s*)(?P<ok>ok|not ok) (?P<num>\d+)\s*-?\s*(?P<name>[^#]*?)'
                    r'\s*(?:#\s*(?P<dir>\w+)\b(?P<why>.*))?$')
SUBTEST = re.compile(r'^(?P<ind>\s*)# Subtest: (?P<name>\S+)')
PLAN = re.compile(r'^(?P<ind>\s*)1\.\.(?P<n>\d+)\s*$')
SPLATS = [re.compile(p) for p in (
    r'\bBUG: ', r'^WARNING: ', r'kernel BUG at', r'\bOops\b', r'Kernel panic',
    r'general protection fault', r'Unable to handle kernel', r'KASAN: ',
    r'UBSAN: ', r'INFO: task .* blocked for more than',
    r'rcu: INFO: .*detected stall', r'self-detected stall',
    r'INFO: trying to register non-static key', r'Call Trace:',
)]
# "Call Trace:" alone is not a splat when a real header already counted;
# it catches stack dumps (dump_stack) that have no header line at all.
TRACE_ONLY = SPLATS[-1]


class Tally:
    def __init__(self):
        self.suites = {}       # name -> [passed, failed, skipped]
        self.failures = []     # names of failed results
        self.results = []      # (suite, outcome, name): every result, in order

    def add(self, suite, outcome, what=None):
        self.results.append((suite, outcome, what or ''))
        cnt = self.suites.setdefault(suite, [0, 0, 0])
        cnt[{'pass': 0, 'fail': 1, 'skip': 2}[outcome]] += 1
        if outcome == 'fail':
            self.failures.append(f'{suite}: {what}' if what else suite)


def outcome(m):
    d = (m.group('dir') or '').upper()
    if d == 'SKIP':
        return 'skip'
    if m.group('ok') == 'ok' or d == 'TODO':
        return 'pass'
    return 'fail'


def read(path):
    try:
        with open(path, errors='replace') as f:
            return [TS.sub('', l.rstrip('\r\n').replace('\r', '')) for l in f]
    except FileNotFoundError:
        return None


def parse_kunit(lines, t, label):
    """KUnit KTAP from the console: suites at depth 0, cases at depth 1."""
    suite, planned, seen = None, 0, 0

    def close():
        if suite and seen < planned:
            for _ in range(planned - seen):
                t.add(f'{label}kunit/{suite}', 'fail',
                      'missing case results (crash or hang?)')

    for l in lines:
        m = SUBTEST.match(l)
        if m and len(m.group('ind')) == 4:
            close()
            suite, planned, seen = m.group('name'), 0, 0
            continue
        m = PLAN.match(l)
        if m and suite and len(m.group('ind')) == 4 and not planned:
            planned = int(m.group('n'))
            continue
        m = RESULT.match(l)
        if not m:
            continue
        depth = len(m.group('ind'))
        if depth == 4 and suite:
            seen += 1
            t.add(f'{label}kunit/{suite}', outcome(m), m.group('name'))
        elif depth == 0 and suite:
            # The suite's own line.  A failed suite with no case lines
            # (e.g. suite_init failed) still has to count as a failure.
            if seen == 0 and planned == 0:
                t.add(f'{label}kunit/{suite}', outcome(m), 'suite')
            close()
            suite, planned, seen = None, 0, 0
    close()


def parse_tests(lines, t, label):
    """Framed userspace suites from tests.log; returns True if 'done'."""
    cur, plan, nres, nfail, done = None, 0, 0, 0, False
    for l in lines:
        if l.startswith('HARNESS: begin '):
            cur, plan, nres, nfail = l.split()[2], 0, 0, 0
            continue
        if l.startswith('HARNESS: end ') and cur:
            rc = int(re.search(r'rc=(\d+)', l).group(1))
            name = f'{label}{cur}'
            if plan > nres:
                for _ in range(plan - nres):
                    t.add(name, 'fail', 'planned result missing')
            if nres == 0 and plan == 0:
                if rc == 0:
                    t.add(name, 'pass')
                elif rc == 4:
                    t.add(name, 'skip')
                else:
                    t.add(name, 'fail', 'timed out' if rc in (124, 143) else f'exit status {rc}')
            elif rc not in (0, 4) and nfail == 0 and plan <= nres:
                t.add(name, 'fail', 'timed out' if rc in (124, 143) else f'exit status {rc}')
            cur = None
            continue
        if l.startswith('HARNESS: skip ') and cur is None:
            # Not run: the guest lacks what it needs (scripts/guest/needs).
            name = l.split()[2].rstrip(':')
            t.add(f'{label}{name}', 'skip')
            continue
        if l.startswith('HARNESS: done'):
            done = True
            continue
        if cur is None:
            continue
        m = PLAN.match(l)
        if m and not m.group('ind'):
            plan = int(m.group('n'))
            continue
        if l.startswith('Bail out!'):
            t.add(f'{label}{cur}', 'fail', l)
            nfail += 1
            continue
        m = RESULT.match(l)
        if m and not m.group('ind'):
            nres += 1
            o = outcome(m)
            nfail += o == 'fail'
            t.add(f'{label}{cur}', o, m.group('name'))
    if cur is not None:
        t.add(f'{label}{cur}', 'fail', 'suite did not finish (guest crashed or hung)')
    return done


def scan_splats(lines, t, label):
    headed = False
    for l in lines:
        for p in SPLATS:
            if p.search(l):
                if p is TRACE_ONLY and headed:
                    break
                headed = p is not TRACE_ONLY
                t.add(f'{label}splat', 'fail', l.strip())
                break
        else:
            if l.startswith('---[ end trace'):
                headed = False


def parse_run(label, rundir, t):
    pre = f'{label}/'
    con = read(f'{rundir}/console.log')
    tests = read(f'{rundir}/tests.log')
    if con is None or tests is None:
        t.add(f'{pre}guest', 'fail', f'no logs in {rundir}')
        return
    parse_kunit(con, t, pre)
    scan_splats(con, t, pre)
    if not parse_tests(tests, t, pre):
        t.add(f'{pre}guest', 'fail', 'did not reach the end of /init (panic, hang or timeout)')
    elif 'HARNESS: console end' not in con:
        t.add(f'{pre}guest', 'fail', 'kernel console log ends early (its end marker is missing)')


def parse_tap_file(name, path, t):
    lines = read(path)
    if lines is None:
        t.add(name, 'fail', f'no results file {path}')
        return
    plan = n = 0
    for l in lines:
        m = PLAN.match(l)
        if m and not m.group('ind'):
            plan = int(m.group('n'))
        m = RESULT.match(l)
        if m and not m.group('ind'):
            n += 1
            t.add(name, outcome(m), m.group('name'))
    for _ in range(plan - n):
        t.add(name, 'fail', 'planned result missing')
    if n == 0:
        t.add(name, 'fail', 'no results')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--json')
    ap.add_argument('--tap', action='append', default=[], metavar='NAME=FILE')
    ap.add_argument('--quiet', action='store_true', help='no per-suite lines')
    ap.add_argument('runs', nargs='*', metavar='LABEL=RUNDIR')
    a = ap.parse_args()
    t = Tally()
    for r in a.runs:
        label, _, d = r.partition('=')
        parse_run(label, d, t)
    for r in a.tap:
        name, _, f = r.partition('=')
        parse_tap_file(name, f, t)
    tot = [sum(c[i] for c in t.suites.values()) for i in range(3)]
    if not a.quiet:
        for s, (p, f, k) in t.suites.items():
            print(f'  {s}: {p} passed, {f} failed, {k} skipped')
    for f in t.failures:
        print(f'FAIL {f}')
    if a.json:
        with open(a.json, 'w') as fh:
            json.dump({'suites': t.suites, 'failures': t.failures,
                       'passed': tot[0], 'failed': tot[1], 'skipped': tot[2]},
                      fh, indent=1)
    line = f'{tot[0]} passed, {tot[1]} failed'
    if tot[2]:
        line += f', {tot[2]} skipped'
    print(line)
    return 1 if tot[1] or not t.suites else 0


if __name__ == '__main__':
    sys.exit(main())
