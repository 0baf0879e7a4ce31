#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the harness's unit tests (tests/harness/test_*.py) for selftest.sh:
TAP on stdout (scripts/ktap.py), one result per test named by its
docstring and name, unittest's report (each failure's diff) on stderr.
Exits 1 if any test failed, erred or skipped.

Usage: tap.py [unittest discover options, e.g. -k PATTERN]
"""
import os
import sys
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'scripts'))
from ktap import Ktap  # noqa: E402


class Result(unittest.TextTestResult):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.tap = Ktap()

    def line(self, ok, test, why=''):
        name = test.id().removeprefix('tests.harness.')
        self.tap.result(ok, f'{test.shortDescription() or name} [{name}]{why}')

    def addSuccess(self, test):
        super().addSuccess(test)
        self.line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.line(False, test)

    def addError(self, test, err):
        super().addError(test, err)
        self.line(False, test, ' (error)')

    def addSkip(self, test, reason):
        # Nothing may skip here (AUXLAB_SELFTEST_STRICT): a skip is a case lost.
        super().addSkip(test, reason)
        self.line(False, test, f' (skipped: {reason})')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.line(False, test, ' (unexpected success)')


def main():
    sys.path.insert(0, TOP)
    suite = unittest.defaultTestLoader.discover(os.path.join(TOP, 'tests', 'harness'),
                                                top_level_dir=TOP)
    r = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Result).run(suite)
    r.tap.print()
    return 0 if r.wasSuccessful() and not r.skipped else 1


if __name__ == '__main__':
    sys.exit(main())
