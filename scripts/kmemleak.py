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
import glob
import os
import re
import subprocess
import sys

OURS = ('kernel/events', 'drivers/hwtracing/ptsim')


def our_functions(objdir):
    """Names of the functions built from the directories in OURS."""
    objs = []
    for d in OURS:
        objs += [o for o in glob.glob(os.path.join(objdir, d, '*.o'))
                 if not o.endswith('.mod.o')]
    names = set()
    if objs:
        out = subprocess.run(['nm', '--defined-only'] + objs, check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'tTwW':
                names.add(f[2])
    return names


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
    print('TAP version 13')
    try:
        text = open(report).read()
    except OSError as e:
        print('1..1')
        print(f'not ok 1 kmemleak report # {e}')
        return
    ours = our_functions(objdir)
    if not ours:
        print('1..1')
        print(f'not ok 1 kmemleak report # no objects of {", ".join(OURS)} in {objdir}')
        return
    found = list(objects(text))
    bad = [(h, next(f for f in fr if f in ours), ls)
           for h, fr, ls in found if any(f in ours for f in fr)]
    print(f'1..{1 + len(bad)}')
    print(f'# kmemleak: {len(found)} unreferenced objects, {len(bad)} from '
          f'{" or ".join(OURS)}')
    print('ok 1 kmemleak report read')
    for i, (h, fn, ls) in enumerate(bad, 2):
        print(f'not ok {i} unreferenced object from {fn}: {h}')
        for l in ls[1:]:
            print(f'#   {l}')
    for h, fr, ls in found:
        if not any(f in ours for f in fr):
            print(f'# not ours: {h} ({" < ".join(fr[:4])})')


if __name__ == '__main__':
    main()
