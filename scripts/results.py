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
    4 skip, anything else fail), except that perf_events/*, aux-bench*
    and perf/test must print TAP (NEED_TAP: without it they fail); a
    plan with missing results or with fewer results than printed, a
    "Bail out!", a TODO
    directive (we have no TODO tests), a non-zero exit without a failed
    result, a timeout or an unfinished suite fail, and so does a suite
    still open when the next begins.  The HARNESS markers count wherever
    they are in a line: a program's last line may lack its newline;
  - every kernel splat (BUG, WARNING, KASAN, lockdep, RCU stall, Oops,
    panic, ...) is one failure, whatever the tests said;
  - a KCSAN report ("BUG: KCSAN: ...", the KCSAN kernel) is one failure
    if either of its two accesses is made by a function of kernel/events/
    or drivers/hwtracing/ptsim/ (our code and the perf core it drives):
    the first frame of the access's stack, or a copy helper's caller;
    any other KCSAN report is listed, not failed: "kcsan: N reports
    elsewhere: f1, f2".  Which functions those directories define comes
    from the kernel's objects (--objdir LABEL=DIR, nm); a run without its
    objects fails every KCSAN report, as nothing proves it is elsewhere;
  - a guest that never printed "HARNESS: done" is one failure, and so is
    a console log without /init's closing "HARNESS: console end" marker;
  - KUnit's top-level plan: a suite it announced but never reported
    fails;
  - TAP files (--tap): the same rules (plan, Bail out!, TODO), and a
    file without results fails.

With --expected-skips FILE ("tests/suites.py expected-skips"), a skip that
no line of FILE explains is a failure.  With --known-bugs FILE
("tests/suites.py known-bugs"), a failure that a line of FILE names is
"known": a mainline bug of a kernel not built here (Debian's stock
kernel), with the fix that removes it; counted and listed apart
("KNOWN ..."), it does not fail the run.  A line names a result (its
suite and name), or a splat by its header and a function its call
trace must have, so that only that bug's splat is excused.  With
--manifest FILE ("tests/suites.py manifest"), every suite FILE names
for a run's kernel must have at least its minimum number of results
there, and a suite of a run that FILE does not name fails (a stale or
unlisted program).

Usage: results.py [--json FILE] [--expected-skips FILE] [--known-bugs FILE]
                  [--manifest FILE]
                  [--tap NAME=FILE ...] [--objdir LABEL=DIR ...] LABEL=RUNDIR ...
Prints failures by name, one line per suite, and last the line
"N passed, N failed, N skipped".  Exits 1 if anything failed.
"""
import argparse
import fnmatch
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# scripts/ktap.py: what is ours (a KCSAN report's accessing functions in
# it make the report ours, see kcsan_report()).
from ktap import OURS, our_functions  # noqa: E402
import kernels  # noqa: E402

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RESULT = re.compile(r'^(?P<ind>\s*)(?P<ok>ok|not ok) (?P<num>\d+)\s*-?\s*(?P<name>[^#]*?)'
                    r'\s*(?:#\s*(?P<dir>\w+)\b(?P<why>.*))?$')
SUBTEST = re.compile(r'^(?P<ind>\s*)# Subtest: (?P<name>\S+)')
PLAN = re.compile(r'^(?P<ind>\s*)1\.\.(?P<n>\d+)\s*$')
KTAP = re.compile(r'^(?P<ind>\s*)K?TAP version \d+')
# /init's markers in tests.log, found anywhere in a line: a program whose
# last output line has no newline shares its line with the end marker.
MARK = re.compile(r'HARNESS: (?:begin|end|skip|done)\b')
# Programs that must print TAP: exiting 0 without a result is a failure.
NEED_TAP = ('perf_events/*', 'aux-bench*', 'perf/test', 'kselftest/*')
SPLATS = [re.compile(p) for p in (
    r'\bBUG: ', r'^WARNING: ', r'kernel BUG at', r'\bOops\b', r'Kernel panic',
    r'general protection fault', r'Unable to handle kernel', r'KASAN: ',
    r'UBSAN: ', r'INFO: task .* blocked for more than',
    r'rcu: INFO: .*detected stall', r'self-detected stall',
    r'INFO: trying to register non-static key',
    r'NMI received for unknown reason', r'Call Trace:',
)]
# "Call Trace:" alone is not a splat when a real header already counted;
# it catches stack dumps (dump_stack) that have no header line at all.
TRACE_ONLY = SPLATS[-1]
# KCSAN (lib/kcsan/report.c): "BUG: KCSAN: data-race in A / B", then per
# access a line "read to 0x... of 8 bytes by task 1 on cpu 0:" (or "race
# at unknown origin, with read to ...") and its stack, one frame a line,
# "func+0x1/0x2"; the report ends with a line of '='.
KCSAN = re.compile(r'BUG: KCSAN: (?P<what>.*)$')
KCSAN_FRAME = re.compile(r'^\s*(?:\[\s*[^]]*\]\s*)?(?P<fn>[A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+')
KCSAN_END = re.compile(r'^={20,}')
KCSAN_ACCESS = re.compile(r'^(?:read|write|read-write|race at unknown origin)\b.* on cpu \d+:')
# Generic helpers that access memory for their caller (a copy into a perf
# buffer): a report's access in one of them is its caller's.
KCSAN_HELPER = re.compile(r'^_*(?:mem(?:cpy|set|move|cmp)\w*|copy_\w+|raw_copy_\w+|'
                          r'rep_(?:movs|stos)_alternative|str\w+|__asan_\w+|__tsan_\w+)$')
# An allocation failure report (mm's warn_alloc(): "COMM: page allocation
# failure: order:N, ..." or "COMM: vmalloc error: size N, ..."), then the
# task's stack (dump_stack()).  Fault injection (ptsim_fuzz's faults and
# nth phases arm it around perf system calls, fork() included) makes
# allocations fail on purpose, and one that does not pass __GFP_NOWARN
# prints this.  A report whose stack has a function of ours fails (an
# allocation whose failure we make the kernel warn about); any other is
# counted and named by its first frame outside the allocator (a stack with
# none, cut short, fails too), on a line
# "alloc: N failure reports elsewhere: ...", and does not fail.
WARN_ALLOC = re.compile(r': (?:page allocation failure: order:\d+|vmalloc error: size \d+),')
ALLOC_HELPER = re.compile(r'^_*(?:dump_stack\w*|warn_alloc\w*|\w*vmalloc\w*|alloc_pages\w*|'
                          r'\w*alloc_frozen_pages\w*|\w*folio_alloc\w*|get_free_pages\w*|'
                          r'\w*kmalloc\w*|\w*vmap\w*|get_vm_area\w*|alloc_vmap_area\w*|'
                          r'\w*_noprof)$')
TASK_END = re.compile(r'</TASK>|</IRQ>|\bMem-Info:')


class Tally:
    def __init__(self, skips=None, bugs=()):
        self.suites = {}       # name -> [passed, failed, skipped, known]
        self.failures = []     # names of failed results
        self.results = []      # (suite, outcome, name): every result, in order
        self.skips = skips     # [(suite-glob, result-glob)] or None: any skip
        self.bugs = list(bugs)  # [(suite-glob, result-glob, frame, fix)]
        self.known = []        # "suite: what": failures a known bug explains
        self.kcsan_elsewhere = []  # "A / B": KCSAN reports listed, not failed
        self.alloc_elsewhere = []  # first frame: allocation failure reports listed
        self.why = {}          # failure -> the test's own lines on it

    def known_bug(self, suite, what, frames):
        """The fix of the known bug that explains failure WHAT of SUITE: a
        result's line has frame "-", a splat's (FRAMES: its call trace)
        the function that trace must have."""
        for s, r, frame, fix in self.bugs:
            if fnmatch.fnmatchcase(suite, s) and fnmatch.fnmatchcase(what or '', r) and \
                    (frame in frames if frames is not None else frame == '-'):
                return fix
        return None

    def add(self, suite, outcome, what=None, why='', frames=None):
        # A skip without a name (a whole suite, ksft_test_result_skip())
        # is matched by its reason.
        if outcome == 'skip' and self.skips is not None and not any(
                fnmatch.fnmatchcase(suite, s) and
                fnmatch.fnmatchcase(what or (why or '').strip(), r)
                for s, r in self.skips):
            outcome = 'fail'
            why = (why or '').strip()
            what = (f'{what}: ' if what else '') + 'unexpected skip' + \
                (f' ({why})' if why else '') + ', not allowed by tests/suites.py'
        fix = self.known_bug(suite, what, frames) if outcome == 'fail' else None
        if fix:
            outcome = 'known'
            self.known.append(f'{suite}: {what} (a mainline bug, fixed by "{fix}")')
        self.results.append((suite, outcome, what or ''))
        cnt = self.suites.setdefault(suite, [0, 0, 0, 0])
        cnt[{'pass': 0, 'fail': 1, 'skip': 2, 'known': 3}[outcome]] += 1
        if outcome == 'fail':
            self.failures.append(f'{suite}: {what}' if what else suite)

    def result(self, suite, m, diag=()):
        """Add the TAP result line matched by RESULT; DIAG, the test's
        diagnostic lines before it, is kept for a failure."""
        d = (m.group('dir') or '').upper()
        name = m.group('name')
        if d == 'TODO':
            # We have no TODO tests: a TODO hides a failure.
            self.add(suite, 'fail', f'{name} (TODO directive: we have no TODO tests)')
        elif d == 'SKIP':
            self.add(suite, 'skip', name, m.group('why') or '')
        else:
            self.add(suite, 'pass' if m.group('ok') == 'ok' else 'fail', name)
            if self.results[-1][1] == 'fail' and diag:
                self.why[self.failures[-1]] = list(diag)[-WHY_LINES:]
        return self.results[-1][1]


def read(path):
    try:
        with open(path, errors='replace') as f:
            return [TS.sub('', l.rstrip('\r\n').replace('\r', '')) for l in f]
    except FileNotFoundError:
        return None


def parse_kunit(lines, t, label):
    """KUnit KTAP from the console: suites at depth 0, cases at depth 1.

    Each top-level KTAP block (the boot's, a loaded module's) announces
    its suites with a plan; a suite announced and never reported fails."""
    suite, planned, seen = None, 0, 0
    top_plan, top_seen, top_open = 0, 0, False

    def close():
        if suite and seen < planned:
            for _ in range(planned - seen):
                t.add(f'{label}kunit/{suite}', 'fail',
                      'missing case results (crash or hang?)')

    def close_top():
        if top_open and top_seen < top_plan:
            t.add(f'{label}kunit', 'fail',
                  f'{top_plan - top_seen} of {top_plan} planned suites never reported (crash or hang?)')

    for l in lines:
        m = KTAP.match(l)
        if m and not m.group('ind'):
            close()
            suite, planned, seen = None, 0, 0
            close_top()
            top_plan, top_seen, top_open = 0, 0, True
            continue
        m = SUBTEST.match(l)
        if m and len(m.group('ind')) == 4:
            close()
            suite, planned, seen = m.group('name'), 0, 0
            continue
        m = PLAN.match(l)
        if m and not m.group('ind') and top_open and not top_plan:
            top_plan = int(m.group('n'))
            continue
        if m and suite and len(m.group('ind')) == 4 and not planned:
            planned = int(m.group('n'))
            continue
        m = RESULT.match(l)
        if not m:
            continue
        depth = len(m.group('ind'))
        if depth == 4 and suite:
            seen += 1
            t.result(f'{label}kunit/{suite}', m)
        elif depth == 0 and suite:
            # The suite's own line.  A failed suite with no case lines
            # (e.g. suite_init failed) still has to count as a failure.
            top_seen += 1
            if seen == 0 and planned == 0:
                t.add(f'{label}kunit/{suite}', 'fail' if m.group('ok') != 'ok' else
                      'skip' if (m.group('dir') or '').upper() == 'SKIP' else 'pass',
                      'suite', m.group('why') or '')
            close()
            suite, planned, seen = None, 0, 0
    close()
    close_top()


def split_markers(lines):
    """Lines, with each HARNESS marker starting a line of its own."""
    for l in lines:
        starts = [m.start() for m in MARK.finditer(l)]
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
        for a, b in zip(starts, starts[1:] + [len(l)]):
            yield l[a:b]


# A failed test's diagnostic lines shown under its FAIL line: the last
# this many "# " lines it printed (a kselftest case's "Expected ..." and
# TH_LOG lines), so that a log that keeps only the end of make check's
# output still says why.
WHY_LINES = 6
# kselftest harness lines that say nothing of why a case failed.
NOT_WHY = re.compile(r'^#\s+(RUN|OK|FAIL|SKIP|PASSED|FAILED|Totals|Starting)\b')


def parse_tests(lines, t, label):
    """Framed userspace suites from tests.log; returns True if 'done'."""
    cur, plan, nres, nfail, done = None, 0, 0, 0, False
    diag = []

    def unfinished(why):
        t.add(f'{label}{cur}', 'fail', why)

    for l in split_markers(lines):
        if l.startswith('HARNESS: begin '):
            if cur is not None:
                unfinished(f'suite did not finish ({l.strip()} while it was running)')
            cur, plan, nres, nfail, diag = l.split()[2], 0, 0, 0, []
            continue
        if l.startswith('HARNESS: end ') and cur:
            m = re.search(r'rc=(\d+)', l)
            rc = int(m.group(1)) if m else -1
            name = f'{label}{cur}'
            if plan > nres:
                for _ in range(plan - nres):
                    t.add(name, 'fail', 'planned result missing')
            if plan and nres > plan:
                t.add(name, 'fail', f'{nres} results, only {plan} planned')
            if nres == 0 and plan == 0:
                need = any(fnmatch.fnmatchcase(cur, g) for g in NEED_TAP)
                if rc == 0 and need:
                    t.add(name, 'fail', 'exit status 0 without any TAP result')
                elif rc == 0:
                    t.add(name, 'pass')
                elif rc == 4:
                    t.add(name, 'skip', None, 'exit status 4 (skip)')
                else:
                    t.add(name, 'fail', 'timed out' if rc in (124, 143) else f'exit status {rc}')
            elif rc not in (0, 4) and nfail == 0 and plan <= nres:
                t.add(name, 'fail', 'timed out' if rc in (124, 143) else f'exit status {rc}')
            cur = None
            continue
        if l.startswith('HARNESS: skip '):
            if cur is not None:
                unfinished(f'suite did not finish ({l.strip()} while it was running)')
                cur = None
            # Not run: the guest lacks what it needs (a suite's needs=,
            # tests/suites.py).
            name = l.split()[2].rstrip(':')
            t.add(f'{label}{name}', 'skip', None, l.partition(': ')[2].partition(': ')[2])
            continue
        if l.startswith('HARNESS: done'):
            if cur is not None:
                unfinished('suite did not finish (HARNESS: done while it was running)')
                cur = None
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
            # A known bug's failure explains a non-zero exit as a failure does.
            nfail += t.result(f'{label}{cur}', m, diag) in ('fail', 'known')
            diag = []
        elif l.startswith('#') and not NOT_WHY.match(l):
            diag.append(l)
    if cur is not None:
        t.add(f'{label}{cur}', 'fail', 'suite did not finish (guest crashed or hung)')
    return done


def kcsan_accessor(st):
    """The function that made the access a KCSAN stack starts with: its
    first frame, or for a generic copy helper the helper's caller."""
    for f in st:
        if not KCSAN_HELPER.match(f):
            return f
    return None


def kcsan_report(lines, i, t, label, ours):
    """Judge the KCSAN report whose header is lines[i]; returns its end."""
    head = KCSAN.search(lines[i]).group(0).strip()
    what = KCSAN.search(lines[i]).group('what')
    stacks, j = [], i + 1
    while j < len(lines) and not KCSAN_END.match(lines[j]) and \
            not KCSAN.search(lines[j]):
        if KCSAN_ACCESS.search(lines[j]):
            stacks.append([])
        m = KCSAN_FRAME.match(lines[j])
        if m and stacks:
            stacks[-1].append(m.group('fn'))
        j += 1
    # A race is ours when one of its two accesses is made by a function
    # of ours: the first frame of each access's stack (see KCSAN_HELPER),
    # not any frame below it (perf_event_open() calling capable(), whose
    # write to current->flags races with an interrupt, is not a race in
    # perf).
    accessors = [kcsan_accessor(st) for st in stacks]
    # An interrupt that hit the watching task in its delay, on the same
    # CPU: the interrupt's stack runs on through kcsan_setup_watchpoint
    # into the task's watched access, the frame after it, while the
    # task's own stack in the report can be an unwinder's garbage (seen
    # with the guessing unwinder: one frame of ring_buffer.c or core.c
    # repeated 60 times).  The two accesses are the interrupt's and the
    # watched one.
    for st in stacks:
        if 'kcsan_setup_watchpoint' in st:
            k = st.index('kcsan_setup_watchpoint') + 1
            accessors = [kcsan_accessor(st), kcsan_accessor(st[k:])]
            if k < len(st):
                what += f' (the task was in {st[k]})'
            break
    if ours is None:
        t.add(f'{label}splat', 'fail', f'{head} (no kernel objects to tell whose it is)')
        return j
    # One access only ("race at unknown origin"): judged by that one.
    mine = sorted({f for f in accessors if f in ours})
    if mine or not accessors or None in accessors:
        t.add(f'{label}splat', 'fail', head + (f' (an access in {" or ".join(OURS)}: '
                                               f'{", ".join(mine)})' if mine else ' (no stack to judge)'))
    else:
        t.kcsan_elsewhere.append(re.sub(r'^data-race in ', '', what).strip())
    return j


def alloc_report(lines, i, t, label, ours):
    """Judge the allocation failure report whose header is lines[i] (see
    WARN_ALLOC); returns the index of the line after its stack."""
    head = TS.sub('', lines[i]).strip()
    j, frames = i + 1, []
    # The stack starts within a few lines (CPU:, Tainted:, Hardware name:).
    while j < len(lines) and j <= i + 6 and not TRACE_ONLY.search(lines[j]):
        j += 1
    if j >= len(lines) or not TRACE_ONLY.search(lines[j]):
        t.add(f'{label}splat', 'fail', f'{head} (no stack to judge)')
        return i + 1
    j += 1
    # To its end, but never past another report's header (a stack cut
    # short must not hide what follows it).
    while j < len(lines) and j <= i + 100 and not TASK_END.search(lines[j]):
        if KCSAN.search(lines[j]) or WARN_ALLOC.search(lines[j]) or \
                any(p.search(lines[j]) for p in SPLATS):
            break
        m = KCSAN_FRAME.match(lines[j])
        if m:
            frames.append(m.group('fn'))
        j += 1
    if ours is None:
        t.add(f'{label}splat', 'fail', f'{head} (no kernel objects to tell whose it is)')
        return j
    mine = [f for f in frames if f in ours]
    if mine:
        t.add(f'{label}splat', 'fail', f'{head} (called from {", ".join(mine)}, '
              f'in {" or ".join(OURS)})')
        return j
    caller = next((f for f in frames if not ALLOC_HELPER.match(f.split('.')[0])), None)
    if caller is None:
        # Cut short inside the allocator: whose it is cannot be told.
        t.add(f'{label}splat', 'fail', f'{head} (no caller in its stack)')
    else:
        t.alloc_elsewhere.append(caller)
    return j


def splat_frames(lines, i):
    """The functions of the call trace of the splat whose header ends
    before lines[i]: its frames up to its end ("---[ end trace"), the
    next report's header, or 150 lines."""
    frames = []
    for l in lines[i:i + 150]:
        if l.startswith('---[ end trace') or KCSAN.search(l) or WARN_ALLOC.search(l) or \
                any(p.search(l) for p in SPLATS if p is not TRACE_ONLY):
            break
        m = KCSAN_FRAME.match(l)
        if m:
            frames.append(m.group('fn'))
    return frames


def scan_splats(lines, t, label, ours=None):
    """Kernel splats in the console log.  OURS: the function names of
    kernel/events/ and ptsim (our_functions), None if unknown."""
    headed = False
    i = 0
    while i < len(lines):
        l = lines[i]
        if KCSAN.search(l):
            i = kcsan_report(lines, i, t, label, ours)
            headed = False
            continue
        if WARN_ALLOC.search(l):
            i = alloc_report(lines, i, t, label, ours)
            headed = False
            continue
        for p in SPLATS:
            if p.search(l):
                if p is TRACE_ONLY and headed:
                    break
                headed = p is not TRACE_ONLY
                t.add(f'{label}splat', 'fail', l.strip(),
                      frames=splat_frames(lines, i + 1))
                break
        else:
            if l.startswith('---[ end trace'):
                headed = False
        i += 1


def parse_run(label, rundir, t, objdir=None):
    pre = f'{label}/'
    con = read(f'{rundir}/console.log')
    tests = read(f'{rundir}/tests.log')
    if con is None or tests is None:
        t.add(f'{pre}guest', 'fail', f'no logs in {rundir}')
        return
    parse_kunit(con, t, pre)
    scan_splats(con, t, pre, our_functions(objdir) if objdir else None)
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
        if l.startswith('Bail out!'):
            t.add(name, 'fail', l)
            continue
        m = PLAN.match(l)
        if m and not m.group('ind'):
            plan = int(m.group('n'))
        m = RESULT.match(l)
        if m and not m.group('ind'):
            n += 1
            t.result(name, m)
    for _ in range(plan - n):
        t.add(name, 'fail', 'planned result missing')
    if plan and n > plan:
        t.add(name, 'fail', f'{n} results, only {plan} planned')
    if n == 0:
        t.add(name, 'fail', 'no results')


def data_lines(path):
    """The non-comment lines of a data file (a manifest, ...), split."""
    with open(path) as f:
        for i, l in enumerate(f, 1):
            l = l.strip()
            if l and not l.startswith('#'):
                yield i, l.split()


def read_skips(path):
    """The allowed skips: SUITE-GLOB RESULT-GLOB REASON...

    SUITE-GLOB is the result's suite as the summary names it, kernel first
    ("qemu/perf_events/mmap", "arm64"); RESULT-GLOB the result's name, or,
    for a result without one (a suite the guest could not run, one that
    exited 4), its skip reason.  fnmatch globs ("*" matches "/" too; "?"
    for a space)."""
    out = []
    for i, w in data_lines(path):
        if len(w) < 3:
            sys.exit(f'{path}:{i}: want SUITE-GLOB RESULT-GLOB REASON')
        out.append((w[0], w[1]))
    return out


def read_bugs(path):
    """The known bugs: SUITE-GLOB RESULT-GLOB FRAME FIX..., globs as in
    read_skips(); FRAME "-" for a result, else the function a splat's
    call trace must have (SUITE-GLOB then "KERNEL/splat", RESULT-GLOB a
    glob of its header)."""
    out = []
    for i, w in data_lines(path):
        if len(w) < 4:
            sys.exit(f'{path}:{i}: want SUITE-GLOB RESULT-GLOB FRAME FIX')
        out.append((w[0], w[1], w[2], ' '.join(w[3:])))
    return out


# Suites that hold only failures of a run as a whole (splats, an unfinished
# guest, a lost transfer, KUnit suites never reported, this check): never
# in the manifest, never "no row in tests/suites.py".
FAILURE_ONLY = ('splat', 'guest', 'xfer', 'kunit', 'manifest')


# Kernels not built here, which run a list of their own and have lines of
# their own in the manifest: Debian's stock kernel (scripts/stock.sh);
# "foreign" in scripts/kernels.py.
FOREIGN = kernels.foreign()


def kernel_matches(label, kernels):
    """A manifest line's KERNELS against a run label: "*" is the main boot
    of every kernel built here (a label without "@", not in FOREIGN), any
    other word an fnmatch glob of labels ("qemu", "*@smp8" for the 8-CPU
    boots, "stock")."""
    return any('@' not in label and label not in FOREIGN if k == '*'
               else fnmatch.fnmatchcase(label, k)
               for k in kernels)


def check_manifest(path, labels, t):
    """The manifest: KERNELS SUITE MIN-RESULTS, per run label.  KERNELS is
    "*" (see kernel_matches()) or comma-separated run-label globs
    ("qemu,debug", "*@smp8", "stock"); SUITE a glob of the suite's name
    without the kernel."""
    entries = []
    for i, w in data_lines(path):
        if len(w) != 3 or not w[2].isdigit():
            sys.exit(f'{path}:{i}: want KERNELS SUITE MIN-RESULTS')
        entries.append((w[0].split(','), w[1], int(w[2])))
    for label in labels:
        mine = [(s, n) for k, s, n in entries if kernel_matches(label, k)]
        for s, n in mine:
            got = sum(sum(c) for name, c in t.suites.items()
                      if fnmatch.fnmatchcase(name, f'{label}/{s}'))
            if got < n:
                t.add(f'{label}/manifest', 'fail',
                      f'{s}: {got} results, tests/suites.py wants at least {n}'
                      + (' (suite missing)' if got == 0 else ''))
        for name in list(t.suites):
            if name.startswith(f'{label}/') and name[len(label) + 1:] not in FAILURE_ONLY and not any(
                    fnmatch.fnmatchcase(name, f'{label}/{s}') for s, _ in mine):
                t.add(f'{label}/manifest', 'fail',
                      f'{name[len(label) + 1:]}: no row in tests/suites.py (a stale program, '
                      'or a new suite that needs its row)')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--json')
    ap.add_argument('--tap', action='append', default=[], metavar='NAME=FILE')
    ap.add_argument('--expected-skips', metavar='FILE')
    ap.add_argument('--known-bugs', metavar='FILE')
    ap.add_argument('--manifest', metavar='FILE')
    ap.add_argument('--objdir', action='append', default=[], metavar='LABEL=DIR',
                    help='the kernel objects of run LABEL: whose a KCSAN report is')
    ap.add_argument('--quiet', action='store_true', help='no per-suite lines')
    ap.add_argument('runs', nargs='*', metavar='LABEL=RUNDIR')
    a = ap.parse_args()
    t = Tally(read_skips(a.expected_skips) if a.expected_skips else None,
              read_bugs(a.known_bugs) if a.known_bugs else ())
    labels = []
    objdirs = dict(o.partition('=')[::2] for o in a.objdir)
    for r in a.runs:
        label, _, d = r.partition('=')
        labels.append(label)
        parse_run(label, d, t, objdirs.get(label))
    for r in a.tap:
        name, _, f = r.partition('=')
        parse_tap_file(name, f, t)
    if a.manifest:
        check_manifest(a.manifest, labels, t)
    tot = [sum(c[i] for c in t.suites.values()) for i in range(4)]
    if not a.quiet:
        for s, (p, f, k, n) in t.suites.items():
            print(f'  {s}: {p} passed, {f} failed, {k} skipped' + (f', {n} known' if n else ''))
    for f in t.failures:
        print(f'FAIL {f}')
        for w in t.why.get(f, ()):
            print(f'     {w}')
    for k in t.known:
        print(f'KNOWN {k}')
    if t.kcsan_elsewhere:
        names = sorted(set(t.kcsan_elsewhere))
        print(f'kcsan: {len(t.kcsan_elsewhere)} reports elsewhere: {", ".join(names)}')
    if t.alloc_elsewhere:
        names = sorted(set(t.alloc_elsewhere))
        print(f'alloc: {len(t.alloc_elsewhere)} failure reports elsewhere: {", ".join(names)}')
    if a.json:
        with open(a.json, 'w') as fh:
            json.dump({'suites': t.suites, 'failures': t.failures,
                       'passed': tot[0], 'failed': tot[1], 'skipped': tot[2],
                       'known': tot[3], 'known_bugs': t.known,
                       'kcsan_elsewhere': t.kcsan_elsewhere,
                       'alloc_elsewhere': t.alloc_elsewhere, 'why': t.why},
                      fh, indent=1)
    line = f'{tot[0]} passed, {tot[1]} failed'
    if tot[2]:
        line += f', {tot[2]} skipped'
    if tot[3]:
        line += f', {tot[3]} known mainline bugs'
    print(line)
    return 1 if tot[1] or not t.suites else 0


if __name__ == '__main__':
    sys.exit(main())
