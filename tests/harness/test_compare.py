# SPDX-License-Identifier: GPL-2.0
"""The ours-vs-upstream comparison (compare_runs of scripts/lib.sh, that
is scripts/compare.py without the rewrite's own suites) on synthetic
pairs of runs, data/compare-*/{ours,upstream}: ours, a finished green run
that left guest/diff/fuzz/errno.txt, also has a KUnit suite of the
rewrite's own (perf_aux_selftest); upstream is the same run without it,
and one thing different.  Each case's compare.tap is compare.py's TAP,
expected.txt what results.py makes of it.  See common.py."""
from .common import TOP, Case, data, results, run, text


class Compare(Case):

    def check(self, case, want_rc):
        w = self.scratch()
        run('bash', '-c', '. "$0/scripts/lib.sh"; compare_runs "$1" "$2" "$3"',
            TOP, data(case, 'ours'), data(case, 'upstream'), f'{w}/compare.tap')
        with open(f'{w}/compare.tap') as f:
            self.assertExpected(case, text(f.read().splitlines()), 'compare.tap')
        rc, out = results('--tap', f'compare/ours-vs-upstream={w}/compare.tap')
        self.assertOutput(case, out, rc, want_rc)

    def test_identical(self):
        """compare: identical runs pass (a suite of the rewrite's own on ours only is not compared)"""
        self.check('compare-identical', 0)

    def test_status(self):
        """compare: one result with another status fails, named"""
        self.check('compare-status', 1)

    def test_diff_file(self):
        """compare: a file under $AUXLAB_OUT/diff/ that differs fails, named, its lines shown"""
        self.check('compare-diff', 1)

    def test_one_kernel(self):
        """compare: a suite that ran on one kernel only fails, named"""
        self.check('compare-one-kernel', 1)
