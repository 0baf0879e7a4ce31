#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Merge the aux-bench output of two kernels: "bench: ..." lines, JSON, plot.

Usage: bench.py --mode TEXT --machine TEXT --out DIR ours=LOG[,LOG...] upstream=LOG[,LOG...]

Each LOG is a guest's tests.log, one per boot of that kernel (the
repetitions of all boots are pooled, so that the spread also covers what
differs from boot to boot, such as how the pages of an area were
allocated); tools/aux/aux-bench prints every measured
quantity there as "# BENCH <name> <unit> <v1> <v2> ..." (one value per
repetition) and the page runs of each AUX area as "# RUNS <name> pages N
runs c0 c1 ...".  For every name measured on both kernels this prints

  bench: <name> ours=<median><unit> upstream=<median><unit> ratio=<o/u> spread=<pct>

where spread is the larger of the two kernels' half-range (max - min) / 2
as a percentage of their median: a ratio closer to 1 than the spread is
no difference.  For tput_* it also prints each kernel's fraction of the
guest's memcpy bandwidth.  Writes DIR/results.json and, with gnuplot,
DIR/bench.png: transaction cost and throughput against transaction size.

With --page PAGEDIR it also writes the results page PAGEDIR/RESULTS.md
(every figure with its median, min and max on both kernels, the date,
machine and QEMU mode, and what the units mean) and copies the plot to
PAGEDIR/bench.png.  "bench.py --page PAGEDIR --json DIR/results.json"
writes the page again from an earlier run's JSON.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

import kernels

BENCH = re.compile(r'^#\s*BENCH (\S+) (\S+)((?: \S+)+)\s*$')
RUNS = re.compile(r'^#\s*RUNS (\S+) pages (\d+) runs((?: \d+)+)\s*$')
SIZE = re.compile(r'^(txn|tput)_(\d+)([KM]?)$')


def parse(paths):
    """The figures of one kernel: the repetitions of all its boots pooled."""
    figs, runs = {}, {}
    for path in paths.split(','):
        parse_one(path, figs, runs)
    return figs, runs


def parse_one(path, figs, runs):
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = BENCH.match(line)
            if m:
                vals = [float(v) for v in m.group(3).split()]
                if m.group(1) in figs:
                    vals = figs[m.group(1)][1] + vals
                figs[m.group(1)] = (m.group(2), vals)
                continue
            m = RUNS.match(line)
            if m:
                # The last boot's: each boot's allocation differs.
                runs[m.group(1)] = {'pages': int(m.group(2)),
                                    'runs_by_order': [int(v) for v in m.group(3).split()]}


def summary(vals):
    med = statistics.median(vals)
    spread = (max(vals) - min(vals)) / 2 / med * 100 if med else 0.0
    return {'median': med, 'min': min(vals), 'max': max(vals),
            'spread_pct': spread, 'values': vals}


def fmt(v):
    return f'{v:.4g}'


def size_bytes(name):
    m = SIZE.match(name)
    if not m:
        return None
    return int(m.group(2)) << {'': 0, 'K': 10, 'M': 20}[m.group(3)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode')
    ap.add_argument('--machine')
    ap.add_argument('--out')
    ap.add_argument('--page', help='write RESULTS.md and bench.png here')
    ap.add_argument('--json', help='with --page: the results.json to write it from')
    ap.add_argument('logs', nargs='*', metavar='LABEL=LOG')
    a = ap.parse_args()
    if a.json:
        if not a.page or a.logs:
            ap.error('--json takes --page and no logs')
        with open(a.json) as f:
            res = json.load(f)
        png = os.path.join(os.path.dirname(a.json), 'bench.png')
        page(a.page, res, png if os.path.exists(png) else None)
        return
    if not (a.mode and a.machine and a.out) or len(a.logs) != 2:
        ap.error('--mode, --machine, --out and two LABEL=LOG are needed')
    labels, data = [], {}
    for arg in a.logs:
        label, path = arg.split('=', 1)
        labels.append(label)
        data[label] = parse(path)
    ours, up = labels
    fo, ro = data[ours]
    fu, ru = data[up]
    if not fo or not fu:
        sys.exit(f'bench.py: no BENCH lines from {ours if not fo else up}')

    # When the guests ran: the time of the ours log, not of this merge.
    when = datetime.datetime.fromtimestamp(os.path.getmtime(a.logs[0].split('=', 1)[1].split(',')[0]),
                                           datetime.timezone.utc)
    res = {'date': when.strftime('%Y-%m-%d %H:%M UTC'),
           'machine': a.machine, 'qemu_mode': a.mode, 'labels': [ours, up],
           'figures': {}, 'page_runs': {}}
    lines = [f'bench: mode: {a.mode}; times are guest time (instruction-driven under -icount)']
    for name in fo:
        if name not in fu:
            lines.append(f'bench: {name} measured on {ours} only')
            continue
        unit, vo = fo[name]
        _, vu = fu[name]
        so, su = summary(vo), summary(vu)
        ratio = so['median'] / su['median'] if su['median'] else float('nan')
        spread = max(so['spread_pct'], su['spread_pct'])
        res['figures'][name] = {'unit': unit, ours: so, up: su, 'ratio': ratio,
                                'spread_pct': spread, 'bytes': size_bytes(name)}
        lines.append(f'bench: {name} {ours}={fmt(so["median"])}{unit} '
                     f'{up}={fmt(su["median"])}{unit} ratio={ratio:.3f} spread={spread:.1f}%')
    mc = res['figures'].get('memcpy')
    if mc:
        for name, f in res['figures'].items():
            if name.startswith('tput_') and SIZE.match(name):
                po = f[ours]['median'] / mc[ours]['median'] * 100
                pu = f[up]['median'] / mc[up]['median'] * 100
                f['pct_of_memcpy'] = {ours: po, up: pu}
                lines.append(f'bench: {name}_of_memcpy {ours}={po:.1f}% {up}={pu:.1f}% '
                             f'ratio={po / pu:.3f} spread={f["spread_pct"]:.1f}%')
    for name in sorted(set(ro) | set(ru)):
        res['page_runs'][name] = {ours: ro.get(name), up: ru.get(name)}
        for lab, r in ((ours, ro.get(name)), (up, ru.get(name))):
            if r:
                hist = ' '.join(f'o{i}:{c}' for i, c in enumerate(r['runs_by_order']) if c)
                lines.append(f'bench: {name} page runs {lab}: {r["pages"]} pages, '
                             f'contiguous runs by log2 length {hist}')

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(a.out, 'bench.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    png = plot(a.out, res, ours, up)
    if a.page:
        page(a.page, res, png)


# What each figure measures, by name pattern, for the results page.
MEANING = [
    (r'txn_end_64$', 'the end of a 64-byte transaction alone (`bench_split`), one clock read included'),
    (r'txn_begin_64$', 'the beginning of a 64-byte transaction alone (`bench_split`), one clock read included'),
    (r'txn_', 'one AUX transaction of that many bytes (begin, the PMU writing the bytes, end, '
              '`PERF_RECORD_AUX`), timed in the kernel by ptsim\'s benchmark mode; the consumer keeps up'),
    (r'tput_(?P<n>\d+)cpu_each_',
     'each CPU\'s part of `tput_{n}cpu_<S>`: the bytes its consumer copied out in the same '
     'window, per microsecond, the values of all {n} CPUs of every repetition pooled: the median '
     'is the typical CPU, min and max the slowest and the fastest.  How the CPUs share the one '
     'clock follows QEMU\'s round robin and the guest\'s scheduler more than the AUX code, and '
     'varies widely from window to window, so the spread is large: `tput_{n}cpu_<S>` is the '
     'figure to compare'),
    (r'tput_(?P<n>\d+)cpu_',
     'what `tput_<S>` measures, on all {n} CPUs at once (a guest of its own, `-smp {n}`): each '
     'CPU with its own per-CPU event, 4 MiB AUX area (perf\'s default per CPU) and ptsim engine, '
     'and its own consumer pinned to it; the bytes all the consumers copy out per microsecond in '
     'a 500 ms window that opens 200 ms after they start (the steady state, the first fill of '
     'the areas behind them).  Under `-icount` QEMU runs the {n} virtual CPUs in turn in one '
     'host thread on one instruction clock: a microsecond is about 1000 instructions of the '
     'whole machine, not of each CPU, and each CPU has about 1/{n} of it (so the engines tick '
     'every {n}0 us, for as many instructions of a CPU between two ticks as in `tput_<S>`).  '
     'This is the machine\'s bytes per instruction with {n} CPUs tracing at once, to set beside '
     '`tput_<S>`: it adds what {n} at once cost in instructions (the scheduling of {n} '
     'consumers, {n} engines\' timers and PMIs, any work the AUX code does across CPUs, spinning '
     'on a lock whose holder is not running); it cannot show how the throughput scales on CPUs '
     'that really run at the same time, nor a cost paid in shared cache lines'),
    (r'tput_', 'bytes through the AUX area, ptsim writing transactions of that size as fast as the '
               'room allows, the consumer copying every byte out in 64 KiB blocks'),
    (r'memcpy$', 'the guest\'s user-space memcpy bandwidth in 64 KiB blocks'),
    (r'wake_', 'from the `PERF_RECORD_AUX` of the transaction crossing an `aux_watermark` of that '
               'size to `poll()` returning'),
    (r'mmap_', 'mmap() of an AUX area of that size'),
    (r'touch_', 'reading one byte of every page of an AUX area of that size right after its '
                'mmap() (the first access: a fault per page where pages are mapped on fault)'),
    (r'munmap_', 'munmap() of an AUX area of that size'),
    (r'cycle_', 'an mmap() + munmap() of a 1 MiB AUX area'),
    (r'work_untraced$', 'a fixed loop in a child, untraced'),
    (r'work_', 'the same loop traced per task by ptsim at that rate, the consumer running'),
    (r'flush_pending$', 'one `PERF_EVENT_IOC_FLUSH` right after the fifth tick since the last, with 5 KiB waiting in ptsim\'s FIFO'),
    (r'flush_none$', 'one `PERF_EVENT_IOC_FLUSH` with nothing waiting'),
]


def meaning(name):
    for pat, text in MEANING:
        m = re.match(pat, name)
        if m:
            return text.format(**m.groupdict()) if m.groupdict() else text
    return ''


def page(pagedir, res, png):
    """Write pagedir/RESULTS.md (and bench.png) from a run's results."""
    ours, up = res.get('labels', ['ours', 'upstream'])
    figs = res['figures']
    out = ['<!-- SPDX-License-Identifier: GPL-2.0 -->',
           '<!-- Generated by scripts/bench.py from out/bench/results.json (make bench): do not edit. -->',
           '',
           f'# AUX area benchmark: ours against upstream {kernels.base()[0]}',
           '',
           f'Run of {res["date"]} on {res["machine"]}; QEMU under {res["qemu_mode"]}.  '
           f'Each figure is the median of its repetitions on each kernel, those of '
           f'every boot pooled, with the '
           f'smallest and largest beside it.  `ratio` is {ours}/{up} of the medians; '
           f'`spread` is the larger of the two kernels\' half-range, in % of the median: '
           f'a ratio closer to 1 than the spread is no difference.',
           '',
           '**What the units mean here.**  The guests run under `-icount`: their clock '
           'follows the instructions they execute (at shift 0, one ns of guest time is about '
           'one guest instruction), so the figures repeat to the instruction whatever the '
           'host does.  It also means that an atomic operation, a memory barrier or a cache '
           'miss costs what any instruction costs: these figures count instructions, and '
           'they cannot show a cost that a real CPU pays in cycles (contended cache lines, '
           'barriers, misses).  MB/s are bytes per microsecond of such time, not a real '
           'machine\'s bandwidth.',
           '',
           f'| figure | {ours} median (min-max) | {up} median (min-max) | ratio | spread |',
           '|---|---|---|---|---|']

    def cell(s, unit):
        return f'{fmt(s["median"])} {unit} ({fmt(s["min"])}-{fmt(s["max"])})'

    for name, f in figs.items():
        out.append(f'| `{name}` | {cell(f[ours], f["unit"])} | {cell(f[up], f["unit"])} | '
                   f'{f["ratio"]:.3f} | {f["spread_pct"]:.1f} % |')
        if 'pct_of_memcpy' in f:
            p = f['pct_of_memcpy']
            out.append(f'| `{name}_of_memcpy` | {p[ours]:.1f} % | {p[up]:.1f} % | '
                       f'{p[ours] / p[up]:.3f} | {f["spread_pct"]:.1f} % |')
    # What the figures measure, one line per kind present in this run.
    out += ['', 'What each figure measures (`<S>`: the size in the figure\'s name, or for '
            '`work_<S>` the trace rate):', '']
    seen = []
    for name in figs:
        kind = re.sub(r'(?<=_)[0-9.]+[KM]?(B|MBps)?$', '<S>', name)
        if kind in seen:
            continue
        seen.append(kind)
        out.append(f'- `{kind}`: {meaning(name)}')
    out.append('- `tput_<S>_of_memcpy`: `tput_<S>` as a fraction of the guest\'s memcpy bandwidth')
    if res.get('page_runs'):
        out += ['', 'Physically contiguous runs of pages `setup_aux` received, by length '
                'rounded down to a power of two (the last order counts every longer run):', '']
        for name, r in res['page_runs'].items():
            for lab in (ours, up):
                if r.get(lab):
                    hist = ', '.join(f'{c} of 2^{i}' for i, c in
                                     enumerate(r[lab]['runs_by_order']) if c)
                    out.append(f'- `{name}`, {lab}: {r[lab]["pages"]} pages: {hist}')
    os.makedirs(pagedir, exist_ok=True)
    if png:
        out += ['', '![transaction cost and throughput against transaction size, '
                f'{ours} and {up}](bench.png)']
        if os.path.abspath(png) != os.path.abspath(os.path.join(pagedir, 'bench.png')):
            shutil.copyfile(png, os.path.join(pagedir, 'bench.png'))
    out += ['', 'How the figures are made: `tools/aux/aux-bench.c` and '
            '[the harness guide](../scripts/README.md) ("The other targets").', '']
    with open(os.path.join(pagedir, 'RESULTS.md'), 'w') as fh:
        fh.write('\n'.join(out))
    print(f'bench: results page {os.path.join(pagedir, "RESULTS.md")}')


def plot(out, res, ours, up):
    dat = os.path.join(out, 'bench.dat')
    with open(dat, 'w') as f:
        for kind in ('txn', 'tput'):
            f.write(f'# {kind}: bytes {ours} {up}\n')
            rows = sorted((v['bytes'], v[ours]['median'], v[up]['median'])
                          for k, v in res['figures'].items()
                          if k.startswith(kind + '_') and v['bytes'])
            for r in rows:
                f.write(f'{r[0]} {r[1]} {r[2]}\n')
            f.write('\n\n')
    if not shutil.which('gnuplot'):
        print('bench: no gnuplot, no plot', file=sys.stderr)
        return None
    png = os.path.join(out, 'bench.png')
    mc = res['figures'].get('memcpy')
    memcpy = (f', {mc[ours]["median"]} with lines dashtype 2 title "memcpy, 64 KiB blocks ({ours})"'
              f', {mc[up]["median"]} with lines dashtype 3 title "memcpy, 64 KiB blocks ({up})"'
              if mc else '')
    script = f'''
set terminal pngcairo size 1200,500 noenhanced font ",10"
set output "{png}"
set multiplot layout 1,2 title "perf AUX area, ours vs upstream {kernels.base()[0]} ({res['qemu_mode']}, {res['date']})"
set logscale xy 2
set format x "%.0b%B"
set xlabel "transaction size (bytes)"
set grid
set key top left
set title "cost of one AUX transaction (ns of guest time)"
plot "{dat}" index 0 using 1:2 with linespoints title "{ours}", "" index 0 using 1:3 with linespoints title "{up}"
set logscale y 10
set format y "%g"
set title "throughput, consumer copying out (MB/s of guest time)"
set key bottom right
plot "{dat}" index 1 using 1:2 with linespoints title "{ours}", "" index 1 using 1:3 with linespoints title "{up}"{memcpy}
unset multiplot
'''
    r = subprocess.run(['gnuplot'], input=script, text=True, capture_output=True)
    if r.returncode:
        print(f'bench: gnuplot failed: {r.stderr.strip()}', file=sys.stderr)
        return None
    print(f'bench: plot {png}')
    return png


if __name__ == '__main__':
    main()
