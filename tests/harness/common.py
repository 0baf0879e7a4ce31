# SPDX-License-Identifier: GPL-2.0
"""What the harness's unit tests (tests/harness/test_*.py) share.

Each case reads its input from tests/harness/data/CASE/ (the logs, TAP
files, manifest or expected-skips a harness script reads) and compares
what the script printed with CASE/expected.txt, whole, so that a failure
shows a diff.  Every data file starts with its SPDX line, a comment the
parsers skip; it is not part of an expected output.

Run from the top of the repository:
  python3 -m unittest discover -s tests/harness -t .
  python3 -m unittest tests.harness.test_results.Logs.test_clean
"""
import atexit
import contextlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(TOP, 'tests', 'harness', 'data')
RESULTS = os.path.join(TOP, 'scripts', 'results.py')
SPDX = 'SPDX-License-Identifier:'
# selftest.sh sets it: a test that would skip (a binary not built) fails.
STRICT = os.environ.get('AUXLAB_SELFTEST_STRICT') == '1'


def data(case, *path):
    return os.path.join(DATA, case, *path)


def text(lines):
    """Lines as one string, trailing blanks dropped: what is compared."""
    return ''.join(l.rstrip() + '\n' for l in lines)


def expected(case, name='expected.txt'):
    """CASE's expected output, without its SPDX line (the first)."""
    with open(data(case, name)) as f:
        lines = f.read().splitlines()
    return text(lines[1:] if lines and SPDX in lines[0] else lines)


def run(*cmd, env=None, cwd=None):
    """(exit status, stdout and stderr as one string) of CMD."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=None if env is None else {**os.environ, **env}, cwd=cwd)
    return p.returncode, text(p.stdout.splitlines())


def load(path):
    """The script at PATH as a module (perf-check.py has no module name)."""
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_results = load(RESULTS)


def results(*args):
    """(exit status, stdout and stderr) of scripts/results.py ARGS, run in
    this process (a python3 started per case would take most of the time)."""
    out = io.StringIO()
    argv, sys.argv = sys.argv, [RESULTS, *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = _results.main()
    except SystemExit as e:
        # sys.exit(MESSAGE), as on a syntax error in a data file.
        rc = e.code if isinstance(e.code, int) else 1
        if isinstance(e.code, str):
            out.write(e.code + '\n')
    finally:
        sys.argv = argv
    return rc, text(out.getvalue().splitlines())


def generated(kind):
    """The file "tests/suites.py KIND" writes (manifest, expected-skips),
    in a temporary file removed at exit.  The manifest's derived counts
    need the built guest (GUEST, BUILD): without it the test skips, or
    fails under selftest.sh (STRICT)."""
    p = subprocess.run([sys.executable, os.path.join(TOP, 'tests', 'suites.py'), kind],
                       capture_output=True, text=True)
    if p.returncode:
        why = f'tests/suites.py {kind}: {p.stderr.strip()}'
        if STRICT or 'no ' not in p.stderr:
            raise AssertionError(why)
        raise unittest.SkipTest(why)
    fd, path = tempfile.mkstemp(prefix=f'harness-test.{kind}.')
    with os.fdopen(fd, 'w') as f:
        f.write(p.stdout)
    atexit.register(os.remove, path)
    return path


def fails(out):
    """The FAIL lines of a results.py output."""
    return text(l for l in out.splitlines() if l.startswith('FAIL '))


def summary(out):
    """The last line of a results.py output: "N passed, N failed, ..."."""
    return out.splitlines()[-1] if out else ''


def scratch_copy(src):
    """A copy of directory SRC in a new temporary directory (for a test
    that writes next to its data); the caller removes it."""
    d = tempfile.mkdtemp(prefix='harness-test.')
    shutil.copytree(src, d, dirs_exist_ok=True)
    return d


class Case(unittest.TestCase):
    maxDiff = None

    def scratch(self):
        """A temporary directory, removed after the test."""
        d = tempfile.mkdtemp(prefix='harness-test.')
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def assertExpected(self, case, got, name='expected.txt'):
        """GOT equals CASE's expected output NAME."""
        self.assertEqual(got, expected(case, name))

    def assertOutput(self, case, got, rc, want_rc, name='expected.txt'):
        """GOT equals CASE's expected output, and RC WANT_RC."""
        self.assertExpected(case, got, name)
        self.assertEqual(rc, want_rc, f'exit status; output:\n{got}')
