#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Merge the aux-bench output of two kernels: "bench: ..." lines, JSON, plot.

Usage: bench.py --mode TEXT --machine TEXT --out DIR ours=LOG upstream=LOG

Each LOG is a guest's tests.log; tools/aux/aux-bench prints every measured
quantity there as "# BENCH <name> <unit> <v1> <v2> ..." (one value per
repetition) and the page runs of each AUX area as "# RUNS <name> pages N
runs c0 c1 ...".  For every name measured on both kernels this prints

  bench: <name> ours=<median><unit> upstream=<median><unit> ratio=<o/u> spread=<pct>

where spread is the larger of the two kernels' half-range (max - min) / 2
as a percentage of their median: a ratio closer to 1 than the spread is
no difference.  For tput_* it also prints each kernel's fraction of the
guest's memcpy bandwidth.  Writes DIR/results.json and, with gnuplot,
DIR/bench.png: transaction cost and throughput against transaction size.
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

BENCH = re.compile(r'^#\s*BENCH (\S+) (\S+)((?: \S+)+)\s*$')
RUNS = re.compile(r'^#\s*RUNS (\S+) pages (\d+) runs((?: \d+)+)\s*$')
SIZE = re.compile(r'^(txn|tput)_(\d+)([KM]?)$')


def parse(path):
    figs, runs = {}, {}
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = BENCH.match(line)
            if m:
                figs[m.group(1)] = (m.group(2), [float(v) for v in m.group(3).split()])
                continue
            m = RUNS.match(line)
            if m:
                runs[m.group(1)] = {'pages': int(m.group(2)),
                                    'runs_by_order': [int(v) for v in m.group(3).split()]}
    return figs, runs


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
    ap.add_argument('--mode', required=True)
    ap.add_argument('--machine', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('logs', nargs=2, metavar='LABEL=LOG')
    a = ap.parse_args()
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
    when = datetime.datetime.fromtimestamp(os.path.getmtime(a.logs[0].split('=', 1)[1]),
                                           datetime.timezone.utc)
    res = {'date': when.strftime('%Y-%m-%d %H:%M UTC'),
           'machine': a.machine, 'qemu_mode': a.mode, 'figures': {}, 'page_runs': {}}
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
            if name.startswith('tput_'):
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
    plot(a.out, res, ours, up)


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
        return
    png = os.path.join(out, 'bench.png')
    mc = res['figures'].get('memcpy')
    memcpy = (f', {mc[ours]["median"]} with lines dashtype 2 title "memcpy, 64 KiB blocks ({ours})"'
              f', {mc[up]["median"]} with lines dashtype 3 title "memcpy, 64 KiB blocks ({up})"'
              if mc else '')
    script = f'''
set terminal pngcairo size 1200,500 noenhanced font ",10"
set output "{png}"
set multiplot layout 1,2 title "perf AUX area, ours vs upstream 6.12 ({res['qemu_mode']}, {res['date']})"
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
    else:
        print(f'bench: plot {png}')


if __name__ == '__main__':
    main()
