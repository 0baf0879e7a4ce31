#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a kmemleak report (scripts/guest/kmemleak-scan) as kselftest TAP.

    kmemleak.py REPORT OBJDIR > kmemleak.tap

Every unreferenced object whose allocation backtrace has a frame in a
function of kernel/events/ or drivers/hwtracing/ptsim/ (the symbols of
those objects in OBJDIR, the debug kernel's build directory, by nm) is
one failure, named by its first such frame, its size and its backtrace.
Other objects are listed as TAP comments, not failed: they are not ours
(a boot-time allocation kmemleak cannot follow, say).  No report at all
is one failure: the scan did not happen or its output was lost.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ktap import OURS, Ktap, our_functions  # noqa: E402  (scripts/ktap.py)


def objects(text):
    """(header, [frame function names], lines) per reported object."""
    for block in re.split(r'(?m)^(?=unreferenced object)', text):
        if not block.startswith('unreferenced object'):
            continue
        lines = block.rstrip('\n').splitlines()
        frames = []
        for l in lines:
            # "    perf_aux_mmap+0x537/0xe50", or with the address first,
            # "    [<ffffffff81234567>] perf_aux_mmap+0x537/0xe50".
            m = re.match(r'\s+(?:\[<[0-9a-f]+>\] )?([A-Za-z0-9_.]+)\+0x', l)
            if m:
                frames.append(m.group(1).split('.')[0])
        yield lines[0], frames, lines


def main():
    report, objdir = sys.argv[1], sys.argv[2]
    t = Ktap()
    try:
        text = open(report).read()
    except OSError as e:
        t.result(False, 'kmemleak report', directive=str(e))
        t.print()
        return
    ours = our_functions(objdir)
    if not ours:
        t.result(False, 'kmemleak report', directive=f'no objects of {", ".join(OURS)} in {objdir}')
        t.print()
        return
    found = list(objects(text))
    bad = [(h, next(f for f in fr if f in ours), ls)
           for h, fr, ls in found if any(f in ours for f in fr)]
    t.note(f'kmemleak: {len(found)} unreferenced objects, {len(bad)} from '
           f'{" or ".join(OURS)}')
    t.result(True, 'kmemleak report read')
    for h, fn, ls in bad:
        t.result(False, f'unreferenced object from {fn}: {h}', ['  ' + l for l in ls[1:]])
    for h, fr, ls in found:
        if not any(f in ours for f in fr):
            t.note(f'not ours: {h} ({" < ".join(fr[:4])})')
    t.print()


if __name__ == '__main__':
    main()
