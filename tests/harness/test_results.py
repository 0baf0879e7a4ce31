# SPDX-License-Identifier: GPL-2.0
"""scripts/results.py on the synthetic logs of tests/harness/data/: a
green run ("clean": a KUnit suite with a pass, a skip and a
parameterised case; a kselftest program with two passes; a program
without TAP) and, one directory each, that run with one thing wrong,
which alone must turn it red, named.  See common.py."""
import os
import shutil
import subprocess

from .common import (TOP, Case, data, fails, generated, results, run, scratch_copy,
                     summary)


class Logs(Case):
    """A run's console.log and tests.log, as label x."""

    def check(self, case, want_rc, *args):
        rc, out = results(*args, f'x={data(case)}')
        self.assertOutput(case, out, rc, want_rc)
        return out

    def test_clean(self):
        """parser: a clean run passes with exact counts"""
        self.check('clean', 0)

    def test_kunit_fail(self):
        """parser: a failing KUnit case fails the run and is named"""
        self.check('kunit-fail', 1)

    def test_ksft_fail(self):
        """parser: a failing kselftest fails the run and is named"""
        self.check('ksft-fail', 1)

    def test_ksft_fail_diag(self):
        """parser: a failing kselftest's own lines on it follow its FAIL line"""
        self.check('ksft-fail-diag', 1)

    def test_warning(self):
        """parser: a WARNING splat fails an all-green run, counted once"""
        self.check('warning', 1)

    def test_warning_named(self):
        """parser: the WARNING splat is named"""
        rc, out = results(f'x={data("warning")}')
        self.assertEqual(fails(out), 'FAIL x/splat: WARNING: CPU: 0 PID: 1 at '
                         'kernel/events/ring_buffer.c:1 foo+0x1/0x2\n')

    def test_lockdep_rcu_kasan(self):
        """parser: lockdep, RCU stall and KASAN reports each fail the run"""
        self.check('lockdep-rcu-kasan', 1)

    def test_kunit_cut(self):
        """parser: a KUnit suite cut short fails the run"""
        self.check('kunit-cut', 1)

    def test_timeout(self):
        """parser: a program that timed out fails the run"""
        self.check('timeout', 1)

    def test_needs_skip(self):
        """parser: a suite the guest cannot run counts as skipped, not passed"""
        self.check('needs-skip', 0)

    def test_no_done(self):
        """parser: a guest that never reached the end of /init fails"""
        self.check('no-done', 1)

    def test_console_cut(self):
        """parser: a kernel log cut before /init's end marker fails"""
        self.check('console-cut', 1)

    def test_unfinished(self):
        """parser: a suite without its end marker fails"""
        self.check('unfinished', 1)

    def test_plan_more(self):
        """parser: more results than the plan announced fail"""
        self.check('plan-more', 1)

    def test_plan_fewer(self):
        """parser: fewer results than the plan announced fail"""
        self.check('plan-fewer', 1)

    def test_todo(self):
        """parser: a 'not ok' with a TODO directive fails (we have no TODO tests)"""
        self.check('todo', 1)

    def test_segv(self):
        """parser: a crash (exit 139) after all-ok results fails"""
        self.check('segv', 1)

    def test_no_tap(self):
        """parser: a perf_events program that exits 0 without TAP fails"""
        self.check('no-tap', 1)

    def test_reopen(self):
        """parser: a suite still open when the next begins fails"""
        self.check('reopen', 1)

    def test_midline(self):
        """parser: markers count mid-line (a last line without newline): a crash there fails"""
        self.check('midline', 1)

    def test_midline_counted_once(self):
        """parser: markers count mid-line: the crash is counted once, the next suite still counts"""
        rc, out = results(f'x={data("midline")}')
        self.assertEqual(summary(out), '4 passed, 1 failed, 1 skipped')

    def test_midline_result(self):
        """parser: markers count mid-line: a result before the marker counts, under its own name"""
        self.check('midline-result', 1)

    def test_kunit_top_plan(self):
        """kunit: a suite the top-level plan announced but never reported fails"""
        self.check('kunit-top-plan', 1)


class Objects(Case):
    """Reports judged by whose they are, which comes from the kernel's
    objects (--objdir), here data/kcsan-obj/ compiled: one function of
    kernel/events/, one of ptsim."""

    @classmethod
    def setUpClass(cls):
        cls.obj = scratch_copy(data('kcsan-obj'))
        for d in ('kernel/events', 'drivers/hwtracing/ptsim'):
            src = os.path.join(cls.obj, d, 'fake.c')
            subprocess.run(['gcc', '-c', '-o', src[:-2] + '.o', src], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.obj, True)

    def check(self, case, want_rc, objects=True):
        rc, out = results(*(['--objdir', f'x={self.obj}'] if objects else []),
                          f'x={data(case)}')
        self.assertOutput(case, out, rc, want_rc)
        return out


class Kcsan(Objects):
    """KCSAN reports."""

    def test_ours(self):
        """parser: a KCSAN report in kernel/events/ or ptsim fails the run, named"""
        self.check('kcsan-ours', 1)

    def test_ours_once(self):
        """parser: a KCSAN report in kernel/events/ or ptsim is one failure"""
        rc, out = results('--objdir', f'x={self.obj}', f'x={data("kcsan-ours")}')
        self.assertEqual(summary(out), '5 passed, 1 failed, 1 skipped')

    def test_no_objects(self):
        """parser: a KCSAN report fails when the kernel's objects are not known"""
        self.check('kcsan-no-objects', 1, objects=False)

    def test_deep(self):
        """parser: a KCSAN report whose accesses are elsewhere, ours only calling one, is listed"""
        self.check('kcsan-deep', 0)

    def test_copy_helper(self):
        """parser: a KCSAN report in a copy helper is judged by its caller (ours: fails)"""
        self.check('kcsan-copy', 1)

    def test_unknown_origin(self):
        """parser: a KCSAN report with one access (unknown origin) is judged by it (elsewhere)"""
        self.check('kcsan-unknown', 0)

    def test_elsewhere(self):
        """parser: KCSAN reports elsewhere are listed, counted and named, not failed"""
        self.check('kcsan-else', 0)

    def test_elsewhere_green(self):
        """parser: KCSAN reports elsewhere leave a green run green"""
        rc, out = results('--objdir', f'x={self.obj}', f'x={data("kcsan-else")}')
        self.assertEqual((rc, summary(out)), (0, '5 passed, 0 failed, 1 skipped'))

    def test_irq(self):
        """parser: KCSAN, an interrupt in the watcher's delay: judged by where the task was (elsewhere)"""
        self.check('kcsan-irq', 0)

    def test_irq_ours(self):
        """parser: KCSAN, an interrupt in the watcher's delay: a task in our code fails"""
        self.check('kcsan-irq-ours', 1)


class AllocFailure(Objects):
    """Allocation failure reports (warn_alloc()), which fault injection
    makes."""

    def test_elsewhere(self):
        """parser: allocation failure reports outside our code are listed, named by caller, not failed"""
        self.check('alloc-else', 0)

    def test_ours(self):
        """parser: an allocation failure report with a function of ours in its stack fails"""
        self.check('alloc-ours', 1)

    def test_cut(self):
        """parser: an allocation failure report cut short fails (no caller to judge) and does not hide the splat after it"""
        self.check('alloc-cut', 1)


class Tap(Case):
    """TAP files (--tap): a bail-out, and the gates that write them."""

    def test_bail(self):
        """parser: 'Bail out!' in a TAP file fails the run, whatever the results before it"""
        rc, out = results('--tap', f'x/tools={data("bail", "bail.tap")}')
        self.assertOutput('bail', out, rc, 1)

    def test_decode_selftest_bail(self):
        """tools: decode-selftest.sh with a failing mktrace.py fails (no '1 passed')"""
        w = self.scratch()
        _, tap = run(f'{TOP}/tests/tools/decode-selftest.sh', f'{w}/w', env={'MKTRACE': 'false'})
        with open(f'{w}/decode-selftest.tap', 'w') as f:
            f.write(tap)
        rc, out = results('--tap', f'x/tools/decode-selftest={w}/decode-selftest.tap')
        self.assertOutput('decode-selftest-bail', out, rc, 1)

    def gate(self, case, *cmd):
        """run-gate.sh arm64 on a copy of CASE's arm64.tap (last run's,
        all ok), then results.py on that file."""
        w = self.scratch()
        shutil.copy(data(case, 'arm64.tap'), w)
        run(f'{TOP}/scripts/run-gate.sh', 'arm64', f'{w}/arm64.tap', *cmd)
        rc, out = results('--tap', f'arm64={w}/arm64.tap')
        self.assertOutput(case, out, rc, 1)

    def test_gate_dies(self):
        """gates: a gate that dies without writing its TAP fails; last run's TAP is not read"""
        self.gate('gate-dies', 'sh', '-c', 'exit 1')

    def test_gate_killed(self):
        """gates: a gate killed after some ok results fails"""
        self.gate('gate-killed', 'sh', '-c', 'printf "ok 1 - first half\\n" >"$0"; kill -9 $$',
                  os.path.join(self.scratch(), 'unused'))


class Skips(Case):
    """--expected-skips: a skip no line explains fails."""

    def check(self, case, want_rc):
        rc, out = results('--expected-skips', data(case, 'expected-skips'), f'x={data(case)}')
        self.assertOutput(case, out, rc, want_rc)
        return out

    def test_unlisted_case(self):
        """skips: a skip not in the expected list fails, named with its reason"""
        self.check('skips-unlisted', 1)

    def test_unlisted_suite(self):
        """skips: a suite the guest cannot run fails unless listed"""
        rc, out = results('--expected-skips', data('skips-unlisted', 'expected-skips'),
                          f'x={data("skips-unlisted")}')
        self.assertIn('FAIL x/hwpmu: unexpected skip (needs /sys/x), not allowed by tests/suites.py\n',
                      fails(out))

    def test_listed(self):
        """skips: listed skips (a case, a whole suite) do not fail"""
        self.check('skips-listed', 0)

    def test_repository_file(self):
        """skips: tests/suites.py's allowed skips parse"""
        rc, out = results('--expected-skips', generated('expected-skips'),
                          '--tap', f'x={data("bail", "bail.tap")}')
        self.assertEqual(out, '  x: 1 passed, 1 failed, 0 skipped\n'
                         'FAIL x: Bail out! mktrace.py failed\n1 passed, 1 failed\n')


class KnownBugs(Case):
    """--known-bugs: a failure a line names is known, listed apart, and
    does not fail the run; a splat only with the function its line names
    in its call trace."""

    def check(self, case, want_rc):
        rc, out = results('--known-bugs', data(case, 'known-bugs'), f'x={data(case)}')
        self.assertOutput(case, out, rc, want_rc)
        return out

    def test_known(self):
        """known bugs: the named result and its splat are known, the run green"""
        self.check('known-bug-green', 0)

    def test_without_file(self):
        """known bugs: without the file the same run fails both"""
        rc, out = results(f'x={data("known-bug-green")}')
        self.assertEqual(rc, 1)
        self.assertEqual(summary(out), '1 passed, 2 failed')

    def test_other_trace(self):
        """known bugs: the same warning from another caller, another failure: both fail"""
        out = self.check('known-bug', 1)
        self.assertIn('FAIL x/splat: WARNING: lib/refcount.c:25 at refcount_warn_saturate'
                      '+0x61/0xa0, CPU#0: other/201\n', fails(out))

    def test_repository_file(self):
        """known bugs: tests/suites.py's known bugs parse"""
        rc, out = results('--known-bugs', generated('known-bugs'), f'x={data("clean")}')
        self.assertEqual(rc, 0, out)


class Manifest(Case):
    """--manifest: every suite it names for a kernel, at least its
    minimum count; a suite it does not name fails."""

    def check(self, case, want_rc, label='x'):
        rc, out = results('--manifest', data(case, 'manifest'), f'{label}={data(case)}')
        self.assertOutput(case, out, rc, want_rc)

    def test_pass(self):
        """manifest: a run with every suite it names passes"""
        self.check('manifest-pass', 0)

    def test_missing(self):
        """manifest: a missing suite fails"""
        self.check('manifest-missing', 1)

    def test_fewer(self):
        """manifest: a suite with fewer results than its minimum fails"""
        self.check('manifest-fewer', 1)

    def test_stale(self):
        """manifest: a suite it does not name (a stale program) fails"""
        self.check('manifest-stale', 1)

    def test_smp8(self):
        """manifest: a "*" line does not apply to an @smp8 run, a "*@smp8" line does"""
        self.check('manifest-smp8', 0, 'x@smp8')

    def test_smp8_missing(self):
        """manifest: a suite missing from an @smp8 run fails"""
        self.check('manifest-smp8-missing', 1, 'x@smp8')

    def test_repository_file(self):
        """manifest: tests/suites.py's manifest parses"""
        rc, out = results('--manifest', generated('manifest'),
                          '--tap', f'x={data("bail", "bail.tap")}')
        self.assertEqual(out, '  x: 1 passed, 1 failed, 0 skipped\n'
                         'FAIL x: Bail out! mktrace.py failed\n1 passed, 1 failed\n')
