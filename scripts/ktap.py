# SPDX-License-Identifier: GPL-2.0
"""What the harness's Python tools share: the one TAP writer, and what
"ours" is in a kernel's objects.

    from ktap import Ktap, our_functions

Ktap keeps results and comments in order and prints them, numbered, after
the header and the plan (the count is known only at the end), as the
bash gates do with the kernel's ktap_helpers.sh (scripts/lib.sh):

    t = Ktap()
    t.note('read 3 files')
    t.result(ok, 'name', diag='why, one line or several')
    t.print()               # TAP version 13, 1..N, the lines
    sys.exit(t.failed > 0)

our_functions(OBJDIR): the functions defined by the objects of OURS, the
directories of this series' kernel code, under a kernel build directory
(by nm); None if there are no such objects.  results.py judges KCSAN
reports by them, kmemleak.py its leaks.
"""
import glob
import subprocess
import sys

OURS = ('kernel/events', 'drivers/hwtracing/ptsim')


class Ktap:
    def __init__(self):
        self.lines = []     # (ok, description) for a result, (None, text) for a comment
        self.failed = 0

    def result(self, ok, desc, diag='', directive=''):
        """One result, returned as a bool; @diag (a string or lines)
        follows it as comments, @directive after a '#' on its line."""
        ok = bool(ok)
        self.failed += not ok
        # A '#' in the description would start a directive.
        desc = desc.replace('#', '%23') + (f' # {directive}' if directive else '')
        self.lines.append((ok, desc))
        if isinstance(diag, str):
            diag = diag.splitlines()
        for l in diag:
            self.note(l)
        return ok

    def note(self, text):
        self.lines.append((None, text))

    def count(self):
        return sum(1 for ok, _ in self.lines if ok is not None)

    def print(self, file=None):
        file = file or sys.stdout
        print('TAP version 13', file=file)
        print(f'1..{self.count()}', file=file)
        n = 0
        for ok, text in self.lines:
            if ok is None:
                print(f'# {text}', file=file)
            else:
                n += 1
                print(f'{"ok" if ok else "not ok"} {n} - {text}', file=file)


def our_functions(objdir):
    """The functions (text symbols) the objects of OURS under @objdir
    define; None if it has none of them."""
    objs = [o for d in OURS for o in glob.glob(f'{objdir}/{d}/**/*.o', recursive=True)
            if not o.endswith('.mod.o')]
    if not objs:
        return None
    out = subprocess.run(['nm', '--defined-only', *objs], capture_output=True,
                         text=True, check=True).stdout
    return {w[2] for w in (l.split() for l in out.splitlines())
            if len(w) == 3 and w[1] in 'tTwW'}
