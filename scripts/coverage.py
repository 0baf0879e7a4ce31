#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-file line and branch coverage from an lcov tracefile, with the
unexecuted lines and their justifications (make coverage).

Usage: coverage.py --info FILE --label LABEL --out DIR
                   [--file NAME ...] [--functions NAME:FUNC,FUNC...]
                   [--range NAME:LABEL:FUNC:START-TEXT ...]
                   [--goal NAME=PERCENT ...] [--unreachable FILE]

For every --file (a source file's name, e.g. aux.c; matched against the
end of the tracefile's SF: paths) it prints

  coverage: LABEL NAME lines=NN.N% (hit/total) branches=NN.N% (hit/total)
            functions=hit/total unexecuted=N

and writes DIR/NAME.unexecuted: one line per unexecuted line,
"NAME:LINE<TAB>FUNCTION<TAB>source text".  "lines" are what gcov counts
as executable lines; "branches" are gcov's branch outcomes (each
direction of a conditional jump), a branch is hit if it was taken at
least once.

--functions NAME:F1,F2,... adds a line for only those functions of NAME
("NAME[aux functions]"), --range NAME:LABEL:FUNC:TEXT one for the lines of
FUNC from the first whose text contains TEXT to the end of the block that
contains it (the AUX branch of upstream's perf_mmap()).

--unreachable FILE (tests/coverage/unreachable) lists, one line each
(tab-separated), the lines no test can reach and why:

  FILE  FUNCTION  TEXT  REASON

TEXT is the line's source text, stripped of surrounding blanks, matched
exactly; one entry covers every line of FUNCTION with that text.  Where
that is ambiguous, TEXT may be "PREVIOUS ;; TEXT": PREVIOUS is the text
of the closest non-blank line above it (and "A ;; B ;; TEXT" the two
closest, nearest last, and so on).  Every
entry is printed with the figures.  An unexecuted line of a --goal file
that no entry names is "unjustified"; an entry that names an executed
line, or no line at all, is "stale".  A REASON that begins with "race:"
names a line that only a race reaches: a run may hit it by chance, which
is reported, not failed.  Either fails, as does a --goal file
below its percentage of lines.  Exit status 1 on any failure.
"""
import argparse
import os
import re
import sys


def parse_info(path):
    """{source path: {'lines': {n: count}, 'br': [(line, taken)], 'fn': [(start, name)], 'fnhit': {name: count}}}"""
    files = {}
    cur = None
    with open(path) as f:
        for raw in f:
            line = raw.rstrip('\n')
            if line.startswith('SF:'):
                cur = files.setdefault(line[3:], {'lines': {}, 'br': [], 'fn': [], 'fnhit': {}})
            elif cur is None:
                continue
            elif line.startswith('DA:'):
                n, c = line[3:].split(',')[:2]
                cur['lines'][int(n)] = cur['lines'].get(int(n), 0) + int(c)
            elif line.startswith('BRDA:'):
                n, _blk, _br, taken = line[5:].split(',')
                cur['br'].append((int(n), 0 if taken == '-' else int(taken)))
            elif line.startswith('FN:'):
                n, name = line[3:].split(',', 1)
                cur['fn'].append((int(n), name))
            elif line.startswith('FNDA:'):
                c, name = line[5:].split(',', 1)
                cur['fnhit'][name] = cur['fnhit'].get(name, 0) + int(c)
            elif line == 'end_of_record':
                cur = None
    return files


def find(files, name):
    """The record of the source whose path ends in /NAME (or NAME)."""
    hits = [p for p in files if p == name or p.endswith('/' + name)]
    if len(hits) != 1:
        return None, None
    return hits[0], files[hits[0]]


def func_of(rec):
    """line -> the function it is in: the last FN: start at or before it."""
    starts = sorted(rec['fn'])

    def lookup(n):
        best = '-'
        for s, name in starts:
            if s <= n:
                best = name
            else:
                break
        return best
    return lookup


def read_source(path):
    try:
        with open(path, errors='replace') as f:
            return f.read().split('\n')
    except OSError:
        return []


def pct(hit, total):
    return f'{100.0 * hit / total:.1f}%' if total else 'n/a'


def figures(rec, only=None):
    """(line hit, line total, branch hit, branch total) for the lines in
    the set ONLY, or all."""
    lines = {n: c for n, c in rec['lines'].items() if only is None or n in only}
    br = [(n, t) for n, t in rec['br'] if only is None or n in only]
    return (sum(1 for c in lines.values() if c > 0), len(lines),
            sum(1 for _n, t in br if t > 0), len(br))


def fmt(label, name, fig, extra=''):
    lh, lt, bh, bt = fig
    return (f'coverage: {label} {name} lines={pct(lh, lt)} ({lh}/{lt}) '
            f'branches={pct(bh, bt)} ({bh}/{bt}){extra}')


def block_lines(src, start):
    """Line numbers (1-based) from START to the end of the block that
    contains START's line (the line whose '}' closes it), by brace depth."""
    depth = 0
    out = set()
    for i in range(start - 1, len(src)):
        out.add(i + 1)
        code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '', src[i].split('//')[0])
        depth += code.count('{') - code.count('}')
        if depth < 0:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--info', required=True)
    ap.add_argument('--label', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--file', action='append', default=[])
    ap.add_argument('--functions', action='append', default=[])
    ap.add_argument('--range', action='append', default=[])
    ap.add_argument('--goal', action='append', default=[])
    ap.add_argument('--unreachable')
    a = ap.parse_args()
    files = parse_info(a.info)
    os.makedirs(a.out, exist_ok=True)
    goals = dict((g.split('=')[0], float(g.split('=')[1])) for g in a.goal)
    failures = []

    entries = []
    if a.unreachable:
        with open(a.unreachable) as f:
            for num, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith('#'):
                    continue
                parts = line.rstrip('\n').split('\t')
                parts = [p for p in parts if p != '']
                if len(parts) != 4:
                    failures.append(f'{a.unreachable}:{num}: want 4 tab-separated fields, got {len(parts)}')
                    continue
                entries.append({'where': f'{a.unreachable}:{num}', 'file': parts[0], 'func': parts[1],
                                'text': parts[2].strip(), 'why': parts[3], 'unexec': 0, 'exec': 0})

    for name in a.file:
        path, rec = find(files, name)
        if rec is None:
            failures.append(f'{name}: not (or not once) in {a.info}')
            print(f'coverage: {a.label} {name} no data')
            continue
        src = read_source(path)
        fn = func_of(rec)
        fnhit = sum(1 for _s, n in rec['fn'] if rec['fnhit'].get(n, 0) > 0)
        unexec = sorted(n for n, c in rec['lines'].items() if c == 0)
        text = (lambda n: src[n - 1].strip() if 0 < n <= len(src) else '?')

        def above(n, k):
            """The texts of the k closest non-blank lines above line n, nearest last."""
            out = []
            for m in range(n - 1, 0, -1):
                if len(out) == k:
                    break
                if text(m):
                    out.insert(0, text(m))
            return out

        def names(e, n):
            if e['func'] != fn(n):
                return False
            *ctx, t = e['text'].split(' ;; ')
            return t == text(n) and above(n, len(ctx)) == ctx
        mine = [e for e in entries if e['file'] == name]
        justified = 0
        unjust = []
        for n in unexec:
            m = [e for e in mine if names(e, n)]
            for e in m:
                e['unexec'] += 1
            if m:
                justified += 1
            else:
                unjust.append(n)
        for n, c in rec['lines'].items():
            if c > 0:
                for e in mine:
                    if names(e, n):
                        e['exec'] += 1
        with open(os.path.join(a.out, name + '.unexecuted'), 'w') as f:
            for n in unexec:
                f.write(f'{name}:{n}\t{fn(n)}\t{text(n)}\n')
        fig = figures(rec)
        extra = f' functions={fnhit}/{len(rec["fn"])} unexecuted={len(unexec)}'
        if name in goals:
            extra += f' justified={justified} unjustified={len(unjust)} goal={goals[name]:g}%'
            lh, lt = fig[0], fig[1]
            if lt == 0 or 100.0 * lh / lt < goals[name]:
                failures.append(f'{name}: {pct(lh, lt)} of its lines executed, below the goal of {goals[name]:g}%')
            for n in unjust:
                failures.append(f'{name}:{n}: unexecuted and not in {a.unreachable}: {fn(n)}: {text(n)}')
        print(fmt(a.label, name, fig, extra))

    for spec in a.functions:
        name, funcs = spec.split(':', 1)
        path, rec = find(files, name)
        if rec is None:
            continue
        want = set(funcs.split(','))
        fn = func_of(rec)
        only = {n for n in rec['lines'] if fn(n) in want}
        found = {n for _s, n in rec['fn'] if n in want}
        print(fmt(a.label, f'{name}[{len(found)} AUX functions]', figures(rec, only)))
        with open(os.path.join(a.out, name + '.aux-functions'), 'w') as f:
            for func in sorted(found):
                sub = {n for n in only if fn(n) == func}
                lh, lt, bh, bt = figures(rec, sub)
                f.write(f'{func}\tlines={pct(lh, lt)} ({lh}/{lt})\tbranches={pct(bh, bt)} ({bh}/{bt})\n')

    for spec in a.range:
        name, label, func, needle = spec.split(':', 3)
        path, rec = find(files, name)
        if rec is None:
            continue
        src = read_source(path)
        fn = func_of(rec)
        starts = [n for n in range(1, len(src) + 1) if needle in src[n - 1] and fn(n) == func]
        if not starts:
            failures.append(f'{name}: no line of {func} contains {needle!r}')
            continue
        only = block_lines(src, starts[0]) & set(rec['lines'])
        print(fmt(a.label, f'{name}[{label}]', figures(rec, only)))
        with open(os.path.join(a.out, f'{name}.{label}.unexecuted'), 'w') as f:
            for n in sorted(only):
                if rec['lines'][n] == 0:
                    f.write(f'{name}:{n}\t{func}\t{src[n - 1].strip()}\n')

    for e in entries:
        state = 'ok'
        if e['exec'] and e['why'].startswith('race:'):
            state = f'race, hit by chance this run: {e["exec"]} line(s) executed'
        elif e['exec']:
            state = f'STALE: executed {e["exec"]} times'
            failures.append(f'{e["where"]}: listed as unreachable but executed: {e["file"]} {e["func"]}: {e["text"]}')
        elif not e['unexec'] and any(e['file'] == n for n in a.file):
            state = 'STALE: names no line'
            failures.append(f'{e["where"]}: names no line: {e["file"]} {e["func"]}: {e["text"]}')
        if any(e['file'] == n for n in a.file):
            print(f'coverage: {a.label} unreachable {e["file"]} {e["func"]}: {e["text"]} '
                  f'[{e["unexec"]} line(s), {state}] -- {e["why"]}')
    for msg in failures:
        print(f'coverage: FAIL {a.label}: {msg}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
