#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every suite of the guest and of make check, in one table (SUITES).

A suite is one row: its command, the boot modes whose lists run it (each
mode may add arguments, or change the timeout), the path it needs, the
least number of results each kernel must report, the skips allowed and,
for the kernels compared with another on a subset (Debian's stock
kernels, 7.3's upstream against 6.12's), the differences that are
explained.  Everything else reads this table:

  suites.py lists DIR        the guest's lists, DIR/<mode>.list
                             (scripts/initramfs.sh; /init runs one)
  suites.py manifest         results.py --manifest's file
  suites.py expected-skips   results.py --expected-skips's file
  suites.py known-bugs       results.py --known-bugs's file
  suites.py differences KERNEL  compare.py --explained's file for KERNEL
  suites.py table            the table, for a reader (one line a suite)

A list line is "NAME TIMEOUT NEEDS COMMAND" (scripts/guest/init).  The
perf_events programs are found in the built guest (GUEST/perf_events):
each is in the check list, its line here or not; one without a row fails
make check ("no row in tests/suites.py").

Least results, derived where anything can derive them: a kselftest-
harness program (harness=True) lists its cases with "PROG -l", and its
minimum in each mode is the number of cases the mode's -t/-T/-f/-F/-v/-V/
-r filters keep; a suite that needs a path (needs=) may be one skip, so
1; ptsim_fuzz has one result per -p phase, perf-record.sh one per case,
perf-test.sh one per test_ptsim*.sh, and a script or C source with one
TAP plan "1..N" N (plan()).  By hand (min=N): KUnit, aux-bench's smoke
run, aux_testmod, the aux-record suites (judged by exit status) and the
host's decode and perf.  "suites.py table" says which is which.

Environment: BUILD (default TOP/build), GUEST (BUILD/guest), TREE
(BUILD/linux), PF_CHECK_OPS (perf_fuzzer's operations in make check).
"""
import argparse
import fnmatch
import glob
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'scripts'))
import kernels  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get('BUILD') or os.path.join(TOP, 'build')
GUEST = os.environ.get('GUEST') or os.path.join(BUILD, 'guest')
TREE = os.environ.get('TREE') or os.path.join(BUILD, 'linux')
PF_CHECK_OPS = os.environ.get('PF_CHECK_OPS') or '3000'

# The boot modes whose runs results.py checks against the manifest, and
# the run labels (kernels) each one's minimum applies to: "*" the main
# boot of every kernel built here, "*@smp8" their 8-CPU boots, "stock"
# the kernels whose main boot runs the stock list (Debian's kernel:
# scripts/kernels.py), "*@kselftest" the runner's boot (scripts/check.sh).
# The stock kernels (stock-6.12: Debian 12's 6.12; stock: Debian 13's
# 7.3), as a run-label list for their skips and minimums.
STOCK = ','.join(kernels.of_mode('stock'))
# The kernels built here on 7.3 (ours and upstream, each with its debug
# form), for the skips that follow from 7.3's behaviour.
ON73 = ','.join(n for n in kernels.VARIANTS if kernels.on_base(n, '7.3')
                and kernels.variant(n)['tree'] and not kernels.variant(n)['fresh'])
MANIFEST_KERNELS = {'check': '*', 'stock': STOCK, 'smp8': '*@smp8',
                    'kselftest': '*@kselftest'}
# Lists that start with another's lines, and lists with a header line.
INCLUDES = {'coverage': 'check'}
HEADER = {'check': '# name timeout-seconds needs command'}
MODES = ('check', 'stock', 'smp8', 'coverage', 'run', 'bench', 'bench-cpus',
         'fuzz', 'profile', 'selftest', 'hotplug', 'kselftest')

# The demo (make run) and its check suite: aux-record with a per-CPU
# ptsim event that holds data back, as trace hardware with a large
# on-chip buffer does: pt,tsc,branch is perf's default; rate=256
# period=1000 fifo=22 drain=3 produce 4 KiB and drain 3 KiB per 1 ms tick
# into a 4 MiB FIFO (ptsim's sysfs format terms, encoded in the guest by
# scripts/guest/pmu-config).  When the loop is done the event is still
# running; --flush-at-exit flushes the FIFO before it stops the event,
# and the host decodes the trace and checks that the flush left nothing
# in the FIFO.
DEMO_RECORD = ('cfg=$(pmu-config ptsim/pt,tsc,branch,rate=256,period=1000,fifo=22,drain=3/) && '
               'aux-record --flush-at-exit -C 1 -a 1024 $cfg')
DEMO_LOAD = "taskset -c 1 sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'"
# One aux-record per CPU, all at once, each on a loop pinned to its CPU;
# every one must succeed.
EVERY_CPU_RECORD = (
    'rc=0; pids=; for c in $(seq 0 $(($(nproc) - 1))); do aux-record -C $c '
    '-o "$AUXLAB_TRACE_DIR/aux_record_cpu$c" -- taskset -c $c sh -c '
    "'i=0; while [ $i -lt 5000 ]; do i=$((i+1)); done' & pids=\"$pids $!\"; done; "
    'for p in $pids; do wait $p || rc=1; done; exit $rc')
NO_FAULTS = 'fail-nth and failslab need the debug kernel'
# ptsim_fuzz's trace of its deterministic phases, compared between ours
# and upstream (scripts/compare.py: the files under $AUXLAB_OUT/diff).
FUZZ_TRACE = '-T "$AUXLAB_OUT/diff/ptsim_fuzz.trace"'
# The stock kernels' ptsim is a module: neither 6.12 nor 7.3 exports
# perf_output_copy_aux() (AUX sampling) or perf_event_overflow()
# (ptsim_mark's PMI), and neither has PERF_EVENT_IOC_FLUSH.
# 6.12 throttles a member alone (7.3's perf_event_throttle_group(), from
# 6.16, stops the whole group, the ptsim leader in NMI).
THROTTLE_MEMBER = "6.12 throttles a member alone, not its group (6.16)"
# 6.12's perf_pmu_unregister() revokes no events (it came with
# da916e96e2de), so the test cannot unregister a PMU under a mapped
# event there (tests/modules/aux_share).
UNREGISTER_612 = "6.12 cannot unregister a PMU with events (no revoke)"
NO_PMI = "ptsim_mark as a module has no PMI: 6.12 and 7.3 do not export perf_event_overflow()"
NO_FLUSH = "PERF_EVENT_IOC_FLUSH is this series' (ENOTTY on 6.12 and 7.3)"
# The shared forms map the AUX area through a ptsim event redirected to a
# dummy's buffer: 7.3 refuses that (EBUSY, the series' 7.3 fix "perf/core:
# Refuse an AUX mmap() through an event without a mapping"), and the
# cases skip in their setup.
SHARED_REFUSED = ("7.3 refuses an AUX mmap() through an event redirected to another's "
                  'buffer (EBUSY)')
# Debian 13's 7.3.4 (stock), without that fix, maps the AUX area through
# the redirected event, and perf_mmap_aux() increments that event's
# mmap_count from 0: "refcount_t: addition on 0; use-after-free" in
# perf_mmap() (once a boot, in the first shared case, which passes), and
# form.shared.pause_without_buffer's AUX mmap() fails with EINVAL (seen
# in the stock boot: make check-stock).
SHARED_FIX = 'perf/core: Refuse an AUX mmap() through an event without a mapping'
# Splats of known mainline bugs, by kernel: (kernels, header glob, a
# function the call trace must have, the fix).  Only kernels not built
# here have any (results.py --known-bugs).
KNOWN_SPLATS = [
    ('stock', 'WARNING:?lib/refcount.c:*refcount_warn_saturate*', 'perf_mmap', SHARED_FIX),
]


def plan(src):
    """The TAP plan "1..N" written once in SRC (a guest script, a C
    source), relative to the top: its N, whatever the mode's args."""
    with open(f'{TOP}/{src}') as f:
        n = re.findall(r'(?<![\d.])1\.\.(\d+)\b', f.read())
    if len(n) != 1:
        sys.exit(f'suites.py: {src}: want one TAP plan "1..N", found {len(n)}')
    return lambda args: int(n[0])


def perf_record_cases(args):
    """scripts/guest/perf-record.sh: one result per case, those named or
    all of its ALL="..."."""
    if args.split():
        return len(args.split())
    with open(f'{TOP}/scripts/guest/perf-record.sh') as f:
        return len(next(l for l in f if l.startswith('ALL=')).split('"')[1].split())


def perf_test_cases(args):
    """scripts/guest/perf-test.sh: one result per perf test shell test the
    guest has, the series' test_ptsim*.sh (scripts/initramfs.sh)."""
    return len(glob.glob(f'{TREE}/tools/perf/tests/shell/test_ptsim*.sh'))


def S(name, cmd=None, timeout=None, modes=None, harness=False, needs=None,
      min=None, skips=(), differs=(), bugs=()):
    """One suite.

    cmd      the command (a perf_events program's default: ./perf_events/NAME)
    timeout  seconds (a perf_events program's default: the settings file's)
    modes    {mode: {}} the lists it is in; per mode 'args' (appended to
             cmd), 'timeout', 'min', 'after' (its place in that list: after
             the named suite, not in table order)
    harness  a kselftest-harness program: its minimum is derived (PROG -l)
    needs    (path, reason): /init skips the suite if the path is missing,
             and that skip is allowed
    min      least results: an int (every manifest mode it is in), a
             function of the mode's args, or {kernels: n} for a suite no
             list runs (KUnit, the host's)
    skips    allowed skips: (kernels, result-glob, reason); kernels a
             comma-separated list of run-label globs, or None for a suite
             not run per kernel (a gate)
    differs  explained differences of a kernel from the one it is compared
             with on a subset (scripts/kernels.py's compare):
             (kernels, result-glob, its status, the other's, reason),
             kernels comma-separated globs; without kernels, Debian's
             stock kernels (against upstream)
    bugs     known mainline bugs of a kernel not built here (Debian's
             stock kernel, which has none of the series' fixes): (kernels,
             result-glob, the subject of the series' fix that removes
             it); such a failure is "known", not a failure of the run
             (results.py --known-bugs; a splat of that bug: KNOWN_SPLATS)
    """
    differs = [d if len(d) == 5 else (STOCK, *d) for d in differs]
    return dict(name=name, cmd=cmd, timeout=timeout, modes=modes or {}, harness=harness,
                needs=needs, min=min, skips=list(skips), differs=differs, bugs=list(bugs))


def P(prog, **kw):
    """A perf_events program (tools/testing/selftests/perf_events)."""
    kw.setdefault('cmd', f'./perf_events/{prog}')
    kw.setdefault('modes', {'check': {}})
    return S(f'perf_events/{prog}', **kw)


SUITES = [
    # -- KUnit (the console): no list runs them --
    S('kunit/ptsim_pkt', min={'*': 1}),
    # the rewrite's own suite: ours only (not compared with upstream, so
    # only this line notices if it stops running)
    S('kunit/perf_aux', min={'qemu,debug': 17}),
    # The reproducer of the series' mm/kmemleak fix (its warning under
    # object->lock, lockdep at a CPU offline), first: later, vmalloc serves a
    # module's areas from its per-node pools, kmemleak adds no scan area
    # and the reproducer reproduces nothing (it then fails).  A skip
    # without kmemleak, failslab and lockdep: it runs on the debug kernel.
    S('kmemleak/scan_area', 'kmemleak-scan-area', 120, {'check': {}},
      min=plan('scripts/guest/kmemleak-scan-area'), skips=[
        ('qemu', '*', "the kmemleak fix's reproducer needs kmemleak, failslab and lockdep: the debug kernel's"),
        ('upstream,upstream-6.12', '*', 'the same')]),
    # -- the kselftest programs (tools/testing/selftests/perf_events);
    # the check list runs every one the guest has, in name order --
    P('ptsim_test', harness=True, modes={
        'check': {},
        # 6.12.117 fails full_buffer_disables (2 of 3 boots: "CPU 0: a
        # full buffer did not disable"), the bug the series' fix "perf/aux:
        # Disable the event for real when its AUX area is full" fixes
        # (mainline 1476b218327b, v6.16-rc4): left out, so not compared.
        # Its hotplug fixture made Debian's kernel crash under QEMU's
        # CMPXCHG16B, which the stock boot hides since (scripts/boot.sh;
        # tests/ROBUSTNESS.md, "CPU hotplug on Debian's kernel").
        'stock': {'args': '-T full_buffer_disables', 'after': 'perf/record'},
        'smp8': {'args': '-t every_cpu -t pause_resume_every_cpu -t cpu_hotplug_task -t cpu_hotplug_cpu',
                 'timeout': 600}},
      # The fixtures mark and mark_form (the cases whose pause and resume
      # come from ptsim_mark's PMI) skip in their setup without it.
      skips=[(STOCK, 'mark.*', 'the same: the pause and resume come from ptsim_mark\'s PMI'),
             (STOCK, 'mark_form.*', 'the same'),
             (ON73, 'form.shared.*', SHARED_REFUSED),
             (ON73, 'mark_form.shared.*', 'the same'),
             ('upstream-6.12', 'mark.throttle_in_nmi', THROTTLE_MEMBER)],
      bugs=[('stock', 'form.shared.pause_without_buffer', SHARED_FIX)],
      differs=[('stock', 'form.shared.*', 'ok', 'skip', 'a mainline bug of 7.3.4 maps it: ' + SHARED_FIX),
               ('stock', 'form.shared.pause_without_buffer', 'not?ok', 'skip',
                'a mainline bug of 7.3.4: ' + SHARED_FIX),
               ('mark.*', 'skip', 'ok', "pause and resume from ptsim_mark's PMI: no PMI in a module"),
               ('mark_form.*', 'skip', 'ok', 'the same'),
               ('upstream', 'form.shared.*', 'skip', 'ok', SHARED_REFUSED + ', 6.12 maps it'),
               ('upstream', 'mark_form.shared.*', 'skip', 'ok', 'the same'),
               ('upstream', 'mark.throttle_in_nmi', 'ok', 'skip', THROTTLE_MEMBER)]),
    P('ptsim_aux_abi_test', harness=True, modes={
        'check': {}, 'stock': {},
        # aux_sample.nmi.samples and the two aux_mlock.*.limit.
        'smp8': {'args': '-v nmi -f aux_mlock', 'timeout': 600}},
      skips=[(STOCK, 'aux_sample*',
              'ptsim as a module has no AUX sampling: 6.12 and 7.3 do not export perf_output_copy_aux()'),
             (STOCK, 'mark_pmi.aux_output_errnos_mark', NO_PMI),
             (STOCK, 'unpriv.*.mark_samples_user_ips*', NO_PMI),
             (STOCK, 'ptsim.aux_record_format_only_is_silent', NO_FLUSH),
             (ON73, 'aux_sample.shared_nmi.*', SHARED_REFUSED)],
      differs=[('upstream', 'aux_sample.shared_nmi.*', 'skip', 'ok', SHARED_REFUSED + ', 6.12 maps it'),
               ('aux_sample*', 'skip', 'ok',
                'AUX sampling: a module has no pmu::snapshot_aux (perf_output_copy_aux() is not exported)'),
               ('mark_pmi.aux_output_errnos_mark', 'skip', 'ok',
                "a module's ptsim_mark has no PMI (perf_event_overflow() is not exported), "
                'so it refuses sampling without aux_output'),
               ('unpriv.*.mark_samples_user_ips*', 'skip', 'ok', NO_PMI),
               ('ptsim.aux_record_format_only_is_silent', 'skip', 'ok', NO_FLUSH)]),
    P('ptsim_inherit_test', harness=True, modes={
        'check': {},
        # member.{task_clock,nmi}.aux_sample_thread
        'smp8': {'args': '-t aux_sample_thread', 'timeout': 600}}),
    # A 2 GiB AUX area needs 3.5 GiB: the 8-CPU boots only (6 GiB; the
    # debug kernel's has 2 GiB).
    P('ptsim_large_test', harness=True, modes={'smp8': {'timeout': 600}}, skips=[
        ('debug@smp8', 'large.*',
         "a 2 GiB AUX area needs 3.5 GiB of MemTotal; the debug kernel's 8-CPU boot has 2 GiB")]),
    P('aux_mmap_abi', harness=True),
    P('mmap', harness=True),
    # What a buffer's mappings charge (the 7.3 fix "perf/core: Charge a
    # perf buffer mapped again only once"); a software event, every kernel.
    P('mmap_accounting', harness=True),
    P('ptsim_contig_test', harness=True),
    P('ptsim_cve_test', harness=True, skips=[
        ('qemu,upstream,upstream-6.12', 'fault_injection.*', NO_FAULTS)]),
    P('ptsim_flush_test', harness=True),
    # A rotation by DISABLE/ENABLE, PAUSE_OUTPUT and FLUSH (callback and
    # generic path): its figures are the table in the FLUSH commit's
    # message; it asserts what holds at any speed (nothing lost, nothing
    # twice, nothing left in the FIFO after DISABLE or FLUSH).  On the
    # stock kernels (ptsim as a module) DISABLE/ENABLE and PAUSE_OUTPUT
    # are measured on a kernel without the series; FLUSH skips (ENOTTY).
    P('ptsim_rotate_test', harness=True, modes={'check': {}, 'stock': {}},
      skips=[(STOCK, 'rotate.flush*', NO_FLUSH)],
      differs=[('rotate.flush*', 'skip', 'ok', NO_FLUSH)]),
    # What an unprivileged user may cost a CPU with ptsim (caps/user_*:
    # PMIs, AUX records and bytes per tick, ticks per second), six cases
    # of a few seconds each; it skips on a ptsim without those caps.
    P('ptsim_hostile_test', harness=True),
    # Not kselftest-harness: one result per phase (-p).  Its short run
    # needs longer than the others on the debug kernel under TCG; its
    # hotplug phase is make fuzz's, not make check's: CPU hotplug under
    # fork and exit alone makes 6.12's scheduler warn "Dying CPU not
    # properly vacated!" now and then (tests/ROBUSTNESS.md).
    P('ptsim_fuzz', timeout=600, min=lambda args: len(args.split('-p ')[1].split()[0].split(',')), modes={
        'check': {'args': f'-p replay,again,limits,unpriv,threads,faults,nth {FUZZ_TRACE}'},
        # make fuzz (scripts/fuzz.sh): the options /init takes from the
        # kernel command line (auxlab.seed=, .ops=, .threads=, .phases=)
        'fuzz': {'args': f'$AUXLAB_FUZZ_ARGS {FUZZ_TRACE}', 'timeout': 86400}},
      skips=[('qemu,upstream,upstream-6.12', 'faults:?no?fault?injection*',
              'phase "faults" (ksft: "ok 6 # SKIP faults: ...")'),
             ('qemu,upstream,upstream-6.12', 'nth:?no?fault?injection*', 'phase "nth"')]),
    # Upstream's, with the series' fix "selftests/perf_events: Skip
    # remove_on_exec without an instructions event": its fixture skips
    # where no PMU counts instructions.
    P('remove_on_exec', harness=True, skips=[
        (f'{ON73},upstream-6.12', 'remove_on_exec.*',
         'counts hardware instructions; TCG emulates no PMU')]),
    # Upstream's; its harness's per-case alarm tripled (90 s) at build
    # time (scripts/guest/alarm-x3.c): five cases at most that long.  On
    # the debug kernel under a loaded host it took 99 s.
    P('sigtrap_threads', harness=True, timeout=450),
    P('watermark_signal', harness=True),
    # The perf_events programs as kernel CI runs them (the kselftest boot,
    # scripts/check.sh): the tree "make -C tools/testing/selftests
    # TARGETS=perf_events install" made, run by its run_kselftest.sh -c
    # perf_events, each program with no arguments under the settings
    # file's timeout, at perf_event_paranoid -1, with none of the
    # harness's variables (scripts/guest/kselftest-run).  One result per
    # program, "ok N selftests: perf_events: PROG": every one the guest
    # has; a program's skips are its own (its TAP, "# "-prefixed).  The
    # runner gives each program the settings file's timeout; on the qemu
    # kernel all of them take about 70 s.
    S('kselftest/perf_events', 'kselftest-run -1', 1800, {'kselftest': {}},
      min=lambda args: len(guest_programs())),
    # -- tools --
    # The benchmark's smoke run: every figure once, tiny; it passes if the
    # benchmark works, whatever the numbers (make bench measures).
    S('aux-bench/smoke', 'aux-bench --smoke', 300, {'check': {}}, min=14),
    # What an AUX area pins, with a PMU in a module (tests/modules).
    S('modules/aux_testmod', './modules/aux_testmod_test', 120, {'check': {}}, min=10, skips=[
        ('upstream-debug,upstream', '*', '7.3 WARNs on munmap() of an AUX area with a transaction open '
         '(perf_mmap_close() checks aux_refcount)'),
        ('upstream-6.12', '*', 'the same on 6.12')]),
    # An AUX area is written only by the PMU that set it up, also through
    # a chain of SET_OUTPUT via a software event (two AUX PMUs in a
    # module, tests/modules/aux_xpmu).
    S('modules/aux_xpmu', './modules/aux_xpmu_test', 120, {'check': {}},
      min=plan('tests/modules/aux_xpmu/aux_xpmu_test.c')),
    # The copies of an inherited per-task event never write into a mapped
    # buffer: SET_OUTPUT of such an event is refused, else two children
    # on two CPUs begin AUX transactions on one buffer at once (a
    # non-exclusive AUX PMU in a module, tests/modules/aux_share).
    S('modules/aux_share', './modules/aux_share_test', 120, {'check': {}},
      min=plan('tests/modules/aux_share/aux_share_test.c'),
      skips=[('upstream-6.12', '*unregistered,*', UNREGISTER_612),
             ('upstream-6.12', '*module*', 'the same')],
      differs=[('upstream', '*unregistered,*', 'ok', 'skip', UNREGISTER_612),
               ('upstream', '*module*', 'ok', 'skip', 'the same')]),
    # ptsim claims its NMIs at NMI_LOCAL, so an NMI_UNKNOWN handler is
    # shown none of them, privileged or not; and only as many NMIs as it
    # sent: foreign NMIs sent to CPU 1 while ptsim raises its PMIs there
    # (the check boots have unknown_nmi_panic).
    S('modules/nmi_foreign', './modules/nmi_foreign_test', 300, {'check': {}},
      min=6),
    # The demo's pipeline (make run) in make check: aux-record
    # --flush-at-exit, whose FLUSH must succeed; the host decodes the trace
    # (suite <kernel>/decode, case aux_record_flush), which fails on an
    # unexplained gap or a byte the flush left stranded.
    S('aux-record/flush-at-exit',
      f'{DEMO_RECORD} -o "$AUXLAB_TRACE_DIR/aux_record_flush" -- {DEMO_LOAD} '
      '''&& grep -q '^FLUSH errno=0 ' "$AUXLAB_TRACE_DIR/aux_record_flush/records.txt"''',
      300, {'check': {}}, min=1),
    S('aux-record/every-cpu', EVERY_CPU_RECORD, 300, {'smp8': {}}, min=1),
    # perf records ptsim (scripts/guest/perf-record.sh); the host checks
    # the recordings (scripts/perf-check.py, suite <kernel>/perf).
    S('perf/record', 'perf-record.sh', 900, {
        'check': {}, 'stock': {}, 'smp8': {'args': 'cpu sample'}}, min=perf_record_cases,
      skips=[(STOCK, 'sample', 'the same: perf record with aux-sample-size (ptsim has no AUX sampling)'),
             (STOCK, 'switch', "the --switch-output rotation's flush: no PERF_EVENT_IOC_FLUSH on 6.12 and 7.3 "
              "(ptsim's caps/flush 0)")],
      differs=[('sample', 'skip', 'ok', 'the same: perf record of a group with aux-sample-size needs '
                "ptsim's pmu::snapshot_aux"),
               ('switch', 'skip', 'ok', 'perf flushes the AUX areas at a --switch-output rotation with '
                "PERF_EVENT_IOC_FLUSH, this series' (ptsim's caps/flush 0)")]),
    # perf test's shell tests of ptsim, raw recording and the flush
    # (scripts/guest/perf-test.sh wraps their results into TAP).
    S('perf/test', 'perf-test.sh ptsim', 600, {'check': {}}, min=perf_test_cases,
      skips=[('*', 'ptsim:?recorded?beside?an?intel_pt?PMU',
              'no intel_pt PMU: the suite modules/intel_pt_host registers one')]),
    # The same tests with a PMU named intel_pt registered, as on an Intel
    # host (tests/modules/intel_pt_host: perf's discovery of it, no
    # trace): perf's intel-pt module must still take ptsim's events, with
    # ptsim's PMU, and intel_pt's with intel_pt's.  What it checks is the
    # perf tool, the same binary on every kernel: one boot runs it, the
    # kselftest boot (after the runner, its CPU back online), not the
    # three check boots (about 45 s of TCG time each).
    S('modules/intel_pt_host', 'perf-test.sh -m intel_pt_host ptsim', 600, {'kselftest': {}},
      min=perf_test_cases),
    # ptsim as a module (the stock boot's only): unloading refused while
    # an event is open with its AUX area mapped; unload, reload.
    S('ptsim/module', 'ptsim-module-test', 300, {'stock': {}}, min=plan('scripts/guest/ptsim-module-test'),
      differs=[('*', 'ok', 'missing', "ptsim-module-test unloads and reloads ptsim.ko: the stock boot's only")]),
    S('perf_fuzzer/aux_store_abi', 'aux-store-abi', 60, {'check': {}},
      min=plan('tests/perf_fuzzer/aux-store-abi.c')),
    # The outside fuzzer's short run: seeded, bounded by operations, half
    # of its events on ptsim (scripts/guest/perf-fuzzer-run); last, so that
    # nothing it may leave behind reaches another suite.  make fuzz's takes
    # auxlab.pfops= and auxlab.pfpct=.
    S('perf_fuzzer', 'perf-fuzzer-run', 600, {
        'check': {'args': f'{PF_CHECK_OPS} 20261124 50'}, 'stock': {'args': f'{PF_CHECK_OPS} 20261124 50'},
        'fuzz': {'args': '$AUXLAB_PF_ARGS', 'timeout': 86400}}, min=plan('scripts/guest/perf-fuzzer-run')),
    # The boot mode hotplug (by hand: scripts/boot.sh KERNEL hotplug DIR):
    # ptsim_test's CPU hotplug cases 200 times over, the reproducer of
    # Debian's kernel's crash (tests/ROBUSTNESS.md, "CPU hotplug on
    # Debian's kernel").
    S('ptsim_test/hotplug-loop', 'hotplug-loop 200', 3600, {'hotplug': {}}),
    # make fuzz: a kmemleak scan after the two fuzzers (debug kernel).
    S('kmemleak', 'kmemleak-scan', 600, {'fuzz': {}}),
    # make coverage (scripts/coverage.sh): the gcov data, for the transfer disk.
    S('coverage/gcov', 'gcov-collect', 120, {'coverage': {}}),
    # -- the host's checks (scripts/check.sh): no list runs them --
    # aux-decode on every trace the guest left
    S('decode', min={'*': 32, STOCK: 25, '*@smp8': 17},
      differs=[('module_*', 'ok', 'missing', 'the traces ptsim-module-test leaves'),
               ('upstream', 'throttle_in_nmi', 'ok', 'missing',
                "ptsim_test's throttle_in_nmi trace: " + THROTTLE_MEMBER)]),
    # perf's recordings (scripts/perf-check.py)
    S('perf', min={'*': 134, STOCK: 135, '*@smp8': 20}),
    # -- make run (scripts/run-demo.sh): the PMUs, the demo's recording
    # (DEMO_RECORD), then perf on the same loop with ptsim's defaults, which
    # the host reads with perf script (scripts/perf-check.py --summary) --
    S('aux-pmus', 'aux-pmus', 60, {'run': {}}),
    S('ptsim-demo', f'{DEMO_RECORD} -o "$AUXLAB_TRACE_DIR/demo" -- {DEMO_LOAD}', 300, {'run': {}}),
    S('perf-demo', 'mkdir -p "$AUXLAB_OUT/perf/demo" && cd "$AUXLAB_OUT/perf/demo" && '
      f'perf record -C 1 -e ptsim// -- {DEMO_LOAD}', 300, {'run': {}}),
    # -- make bench (scripts/bench.sh): each figure repeated, the numbers
    # TAP comments ("# BENCH ..."); bench-cpus: the figures of all CPUs at
    # once, for the boots with BENCH_CPUS CPUs --
    S('aux-bench', 'aux-bench --reps 5', 7200, {'bench': {}}),
    S('aux-bench/cpus', 'aux-bench --reps 5 --figures cpus', 7200, {'bench-cpus': {}}),
    # make profile (scripts/profile.sh): one of aux-bench's loads,
    # "auxlab.load=<txn|mmap>,<seconds>", sampled from the host.
    S('aux-bench/load', 'aux-bench --load $AUXLAB_LOAD', 7200, {'profile': {}}),
    # -- the harness's self-test (tests/harness); harness/xfer leaves a
    # known file (1.3 MB) for the transfer disk to carry --
    S('harness/kunit_module', 'insmod harness/harness_selftest.ko', 60, {'selftest': {}}),
    S('harness/deliberate_fail', 'harness/deliberate_fail', 60, {'selftest': {}}),
    S('harness/xfer', 'mkdir -p "$AUXLAB_OUT/harness" && seq 1 200000 >"$AUXLAB_OUT/harness/seq.txt"',
      60, {'selftest': {}}),
    # -- gates (scripts/check.sh) --
    S('arm64', skips=[(None, 'arm64?cross-build?(ARM64=0)', 'ARM64=0: the arm64 cross-build was not asked for')]),
]
BY_NAME = {s['name']: s for s in SUITES}


def settings_timeout():
    """Upstream's per-program timeout (perf_events/settings), or 120."""
    try:
        with open(f'{TREE}/tools/testing/selftests/perf_events/settings') as f:
            for l in f:
                if l.startswith('timeout='):
                    return int(l.split('=', 1)[1])
    except FileNotFoundError:
        pass
    return 120


def guest_programs():
    """The perf_events programs of the built guest, in name order."""
    d = f'{GUEST}/perf_events'
    if not os.path.isdir(d):
        sys.exit(f'suites.py: no {d}: build the guest (scripts/build-guest.sh)')
    return sorted(f for f in os.listdir(d)
                  if os.path.isfile(f'{d}/{f}') and os.stat(f'{d}/{f}').st_mode & 0o100)


def run_of(s, mode):
    """(timeout, command) of suite S in MODE."""
    m = s['modes'][mode]
    tmo = m.get('timeout') or s['timeout'] or settings_timeout()
    cmd = s['cmd'] + (f' {m["args"]}' if m.get('args') else '')
    return tmo, cmd


def line(s, mode):
    tmo, cmd = run_of(s, mode)
    return f'{s["name"]} {tmo} {s["needs"][0] if s["needs"] else "-"} {cmd}'


def mode_suites(mode):
    """The suites of MODE's list, in order (without INCLUDES)."""
    if mode == 'check':
        # Every program the guest has, in name order (a row or not), then
        # the others in table order; kmemleak/scan_area first (see its row).
        out = [s for s in SUITES if 'check' in s['modes'] and s['name'] == 'kmemleak/scan_area']
        for p in guest_programs():
            s = BY_NAME.get(f'perf_events/{p}')
            if s is None:
                # No row: it runs, and fails make check (not in the manifest).
                print(f'suites.py: perf_events/{p} has no row in tests/suites.py', file=sys.stderr)
                s = P(p)
            if 'check' in s['modes']:
                out.append(s)
        out += [s for s in SUITES if 'check' in s['modes'] and s not in out
                and not s['name'].startswith('perf_events/')]
    else:
        out = [s for s in SUITES if mode in s['modes']]
    for s in [s for s in out if s['modes'][mode].get('after')]:
        out.remove(s)
        out.insert([x['name'] for x in out].index(s['modes'][mode]['after']) + 1, s)
    return out


def mode_lines(mode):
    ls = mode_lines(INCLUDES[mode]) if mode in INCLUDES else \
        [HEADER[mode]] if mode in HEADER else []
    return ls + [line(s, mode) for s in mode_suites(mode)]


def cmd_lists(a):
    os.makedirs(a.dir, exist_ok=True)
    for mode in MODES:
        with open(f'{a.dir}/{mode}.list', 'w') as f:
            f.write(''.join(l + '\n' for l in mode_lines(mode)))


# -- least results --

def harness_cases(prog):
    """A kselftest-harness program's cases, (fixture, variant, test), from
    "PROG -l" (kselftest_harness.h: test_harness_list_tests(), columns of
    20 and 25 characters; each fixture's variants and tests side by side)."""
    path = f'{GUEST}/perf_events/{prog}'
    p = subprocess.run([path, '-l'], capture_output=True, text=True, timeout=30)
    out = p.stderr.splitlines()
    if not out or not out[0].startswith('# FIXTURE'):
        sys.exit(f'suites.py: {path} -l: not a kselftest-harness list ({p.stderr[:200]!r})')
    fixtures = []   # [name, [variants], [tests]]
    for l in out[1:]:
        if l.startswith('-----'):
            continue
        f, v, t = l[:20].strip(), l[21:46].strip(), l[47:].strip()
        if f:
            fixtures.append([f, [], []])
        if v:
            fixtures[-1][1].append(v)
        if t:
            fixtures[-1][2].append(t)
    return [(f, v, t) for f, vs, ts in fixtures for v in (vs or ['']) for t in ts]


def harness_enabled(args, f, v, t):
    """kselftest_harness.h's test_enabled(): the first filter that names
    the case decides; with no positive filter, every other case runs."""
    w = shlex.split(args)
    positive = False
    for o, x in zip(w[::2], w[1::2]):
        positive |= o[1].islower()
        if o in ('-t', '-T') and x == t or o in ('-f', '-F') and x == f or \
                o in ('-v', '-V') and x == v:
            return o[1].islower()
        if o == '-r' and x == f'{f}.{v + "." if v else ""}{t}':
            return True
    return not positive


def minimum(s, mode):
    m = s['modes'][mode]
    if 'min' in m:
        return m['min']
    if s['needs']:
        return 1    # a skip of the whole suite is one result
    if s['harness']:
        args = m.get('args', '')
        return sum(harness_enabled(args, *c) for c in harness_cases(s['name'].split('/', 1)[1]))
    if callable(s['min']):
        return s['min'](m.get('args', ''))
    if s['min'] is None:
        sys.exit(f'suites.py: {s["name"]}: no min= and nothing to derive it from')
    return s['min']


def manifest():
    """(kernels, suite, least results), as results.py --manifest reads them."""
    out = []
    for s in SUITES:
        if isinstance(s['min'], dict):
            out += [(k, s['name'], n) for k, n in s['min'].items()]
        for mode, k in MANIFEST_KERNELS.items():
            if mode in s['modes']:
                out.append((k, s['name'], minimum(s, mode)))
    return out


def generated(kind, header, rows, widths):
    """KIND's file: its origin, its column HEADER, ROWS in WIDTHS."""
    print(f'# Generated by tests/suites.py {kind}: edit tests/suites.py.')
    print(f'# {header}')
    for r in rows:
        print(' '.join(f'{c:{w}}' for c, w in zip(r, widths)))


def cmd_manifest(a):
    generated('manifest', 'KERNELS SUITE MIN-RESULTS (scripts/results.py --manifest)',
              manifest(), (15, 39, ''))


def fix_subject(fix):
    """FIX, the subject of a fix of patches/series.txt (a commit stanza
    with a fix: line), or exit: a known bug names the fix that removes
    it, and that fix must be in the series."""
    with open(f'{TOP}/patches/series.txt') as f:
        stanzas = f.read().split('\ncommit: ')
    if not any(st.startswith(fix + '\n') and '\nfix: ' in st for st in stanzas):
        sys.exit(f'suites.py: known bug fixed by "{fix}": no such fix in patches/series.txt')
    return fix


def known_bugs():
    """(suite-glob, result-glob, frame, fix), as results.py --known-bugs
    reads them: each suite's bugs= (frame "-") and KNOWN_SPLATS."""
    out = []
    for s in SUITES:
        for k, r, fix in s['bugs']:
            for kk in k.split(','):
                out.append((f'{kk}/{s["name"]}', r, '-', fix_subject(fix)))
    for k, head, frame, fix in KNOWN_SPLATS:
        for kk in k.split(','):
            out.append((f'{kk}/splat', head, frame, fix_subject(fix)))
    return out


def cmd_known_bugs(a):
    generated('known-bugs', 'SUITE-GLOB RESULT-GLOB FRAME FIX (scripts/results.py --known-bugs)',
              known_bugs(), (40, 40, 12, ''))


def expected_skips():
    out = []
    for s in SUITES:
        if s['needs']:
            out.append(('*/' + s['name'], 'needs*', s['needs'][1]))
        for k, r, why in s['skips']:
            for kk in (k.split(',') if k else [None]):
                out.append((f'{kk}/{s["name"]}' if kk else s['name'], r, why))
    return out


def cmd_expected_skips(a):
    generated('expected-skips', 'SUITE-GLOB RESULT-GLOB REASON (scripts/results.py --expected-skips)',
              expected_skips(), (40, 28, ''))


def differences(name):
    """The differences explained for kernel NAME against the one it is
    compared with: (suite, result-glob, its status, the other's, reason)."""
    out = []
    for s in SUITES:
        for d in s['differs']:
            kernels, d = d[0], d[1:]
            if any(fnmatch.fnmatchcase(name, k) for k in kernels.split(',')):
                out.append((s['name'], *d))
    return out


def cmd_differences(a):
    kernels.variant(a.kernel)
    generated(f'differences {a.kernel}',
              f'SUITE RESULT {a.kernel.upper()} OTHER REASON (scripts/compare.py --explained)',
              differences(a.kernel), (31, 40, 5, 8, ''))


def cmd_table(a):
    mins = {}
    for k, s, n in manifest():
        mins.setdefault(s, []).append(f'{k}:{n}')
    for s in SUITES:
        modes = ','.join(m for m in MODES if m in s['modes']) or '-'
        how = '' if s['name'] not in mins else ' (derived)' if \
            s['harness'] or s['needs'] or callable(s['min']) else ' (by hand)'
        print(f'{s["name"]:32} {modes:22} min {" ".join(mins.get(s["name"], ["-"]))}{how}'
              + (f'  needs {s["needs"][0]}' if s['needs'] else '')
              + (f'  {len(s["skips"])} skips' if s['skips'] else ''))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('lists', help="write DIR/<mode>.list, the guest's lists")
    p.add_argument('dir')
    p.set_defaults(fn=cmd_lists)
    for name, fn in (('manifest', cmd_manifest), ('expected-skips', cmd_expected_skips),
                     ('known-bugs', cmd_known_bugs), ('table', cmd_table)):
        sub.add_parser(name).set_defaults(fn=fn)
    p = sub.add_parser('differences', help="compare.py --explained's file for KERNEL")
    p.add_argument('kernel')
    p.set_defaults(fn=cmd_differences)
    a = ap.parse_args()
    a.fn(a)


if __name__ == '__main__':
    main()
