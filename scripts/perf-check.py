#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The host half of the perf suite: check what perf recorded in the guest.

scripts/guest/perf-record.sh leaves one directory per case under
RUNDIR/guest/perf/ (perf.data, record.log, case.txt).  Each is read here
with the same perf binary the guest ran (build/perf/perf), and with our
own decoder for a second opinion:

  perf report -D      AUXTRACE records and bytes, "Bad packet"s, the
                      AUX records' flags, samples and their AUX data, and
                      perf's own warnings ("AUX data lost", "had gaps");
  perf script --itrace=qwe
                      perf's Intel PT decoder, quick mode (no object code
                      needed): ptwrite events and trace errors.  The
                      payload of ptsim's data PTWs is a sequence number
                      per AUX buffer (per CPU here), which must go up by
                      one, or by exactly the records an OVF says were
                      dropped (its byte count follows it as a PTW);
  aux-decode          the AUX data and records of perf.data, extracted
                      into aux-record's format, must decode with libipt,
                      without unexplained gaps, and agree with perf on
                      bytes, PTWs, OVFs and gaps.

  perf report, perf script
                      perf's defaults, the full decoder, which walks the
                      traced program's code (from the initramfs, --symfs)
                      along the trace: no trace error but OVF, and the
                      report's top task (but the idle one, and perf
                      record in a system-wide case) is the workload, in
                      its own code.

The raw cases record ptsim_large, a PMU perf has no module for, through
perf's raw AUX path (tools/perf/Documentation/perf-raw-aux.txt): perf
report -D must take the raw AUXTRACE_INFO, perf script must run, the
data perf writes out under PERF_RAW_AUX_DIR must be the bytes of
perf.data's AUXTRACE records, buffer by buffer, and decode with
aux-decode from perf's own index files.  Case noaux is checked in the
guest (perf record must warn that the AUX area size is ignored, and
record); here its log again, and its perf.data, which must hold no AUX
data.

Prints TAP (one result per check, named "<case>: <what>") and, with
--summary, the perf-run line of make run for the case "demo".

  perf-check.py [--perf PERF] [--decoder AUX_DECODE] [--summary] RUNDIR
"""
import argparse
import concurrent.futures
import collections
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ktap import Ktap  # noqa: E402  (scripts/ktap.py: the one TAP writer)

AUX_TRUNCATED, AUX_PARTIAL, AUX_COLLISION = 0x01, 0x04, 0x08
REC_AUX, REC_AUXTRACE = 11, 71
RAW_TYPE = 0x10000	# PERF_AUXTRACE_RAW
RAW_PMU = 'ptsim_large'
NOAUX_MSG = 'no event has an AUX area perf records'
SAMPLE_BITS = [(1 << 1, 'tid'), (1 << 2, 'time'), (1 << 6, 'id'),
               (1 << 9, 'stream_id'), (1 << 7, 'cpu'), (1 << 16, 'identifier')]
PTW = re.compile(r'^\s*(?P<comm>.+?)\s+(?P<tid>\d+)\s+(?:\[(?P<cpu>\d+)\]\s+)?'
                 r'(?:(?P<time>[\d.]+):)?.*ptwrite:\s+IP: (?P<ip>\d) payload: (?P<val>0x[0-9a-f]+|0)')
ERR = re.compile(r'instruction trace error .* cpu (?P<cpu>-?\d+) .*code \d+: (?P<msg>.*)$')
SAMPLE = re.compile(r'PERF_RECORD_SAMPLE\(.*\): (?P<pid>-?\d+)/(?P<tid>-?\d+):')
TRACE_ERRORS = re.compile(r'(\d+) instruction trace errors')
# The workload of a case: its comm, and the DSOs of its own code.
WORKLOAD = {'demo': ('sh', ('busybox',))}
SPIN = ('perf-spin', ('perf-spin', '[vdso]'))
# The cases recorded system wide (-a), where ptsim traces every task,
# perf record itself among them (see top_task()).
SYSTEM_WIDE = {'cpu'}
# A record's sample_id in perf report -D: its CPU and time (ns), first.
AUX_TIME = re.compile(r'^-?\d+ (?P<time>\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_AUX ')
AUXTRACE = re.compile(r'PERF_RECORD_AUXTRACE size: (?P<size>0x[0-9a-f]+|0) .*cpu: (?P<cpu>-?\d+)')


class Tap(Ktap):
    def check(self, ok, name, detail=''):
        """One result; on failure the last lines of @detail say why."""
        return self.result(ok, name, () if ok else
                           ['  ' + l for l in str(detail).splitlines()[-8:]])


def read_perf_data(path, snapshot=False):
    """The AUX area data and records of perf.data, per AUX buffer (CPU)."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'PERFILE2':
        raise ValueError(f'{path}: not a perf.data file')
    attr_size, = struct.unpack_from('<Q', data, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<QQQQ', data, 24)
    # The sample_id trailer of the first event tells where the CPU is; perf
    # gives every event of a session the same layout.
    sample_type, = struct.unpack_from('<Q', data, attrs_off + 24)
    fields = [name for bit, name in SAMPLE_BITS if sample_type & bit]
    bufs = collections.defaultdict(lambda: {'copies': [], 'aux': [], 'bytes': bytearray()})
    nauxtrace = 0
    pos, end = data_off, data_off + data_size
    while pos + 8 <= end:
        rtype, misc, size = struct.unpack_from('<IHH', data, pos)
        if size < 8:
            raise ValueError(f'{path}: bad record at {pos}')
        if rtype == REC_AUXTRACE:
            dsize, offset, ref, idx, tid, cpu = struct.unpack_from('<QQQIiI', data, pos + 8)
            b = bufs[cpu]
            b['copies'].append((len(b['bytes']), offset, dsize))
            b['bytes'] += data[pos + size:pos + size + dsize]
            nauxtrace += 1
            pos += size + dsize
            continue
        if rtype == REC_AUX:
            aoff, asize, flags = struct.unpack_from('<QQQ', data, pos + 8)
            cpu = 0xffffffff
            if 'cpu' in fields:
                at = pos + size - 8 * (len(fields) - fields.index('cpu'))
                cpu, = struct.unpack_from('<I', data, at)
            bufs[cpu]['aux'].append((aoff, asize, flags))
        pos += size
    trimmed = 0 if snapshot else trim_padding(bufs)
    return bufs, nauxtrace, trimmed


def trim_padding(bufs):
    """Drop perf's padding between AUXTRACE records; the bytes dropped.

    perf pads every AUXTRACE record's data with zeros to 8 bytes, and
    starts the next one at the true end: drop the padding there (the
    last record's, at the end of the trace, decodes as PAD packets).
    """
    trimmed = 0
    for b in bufs.values():
        copies = b['copies']
        for i in range(len(copies) - 1):
            (foff, aoff, size), nxt = copies[i], copies[i + 1][1]
            over = aoff + size - nxt
            if 0 < over < 8 and not any(b['bytes'][foff + size - over:foff + size]):
                del b['bytes'][foff + size - over:foff + size]
                copies[i] = (foff, aoff, size - over)
                copies[i + 1:] = [(c[0] - over, c[1], c[2]) for c in copies[i + 1:]]
                trimmed += over
    return trimmed


def write_snapshot_dirs(bufs, outdir, aux_size):
    """One directory per snapshot of each buffer, each decoded alone.

    perf's AUXTRACE offset in snapshot mode is not a position in the AUX
    stream (Intel PT publishes aux_head as an offset into the buffer, and
    perf's snapshot code treats it so), and two snapshots may hold the
    same data: only each snapshot's own bytes can be checked.
    """
    dirs = []
    for cpu in sorted(c for c in bufs if bufs[c]['copies']):
        b = bufs[cpu]
        for k, (foff, aoff, size) in enumerate(b['copies']):
            d = os.path.join(outdir, f'cpu{cpu}-snapshot{k}')
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, 'aux.bin'), 'wb') as f:
                f.write(b['bytes'][foff:foff + size])
            with open(os.path.join(d, 'records.txt'), 'w') as f:
                f.write(f'pmu ptsim type=0 config=0x0 mode=snapshot aux_size={aux_size}\n')
                f.write(f'COPY file_off=0 aux_off={aoff} size={size}\n')
            dirs.append(d)
    return dirs


def write_decode_dirs(bufs, outdir, aux_size, mode):
    """aux-record's layout (aux.bin, records.txt), one directory per buffer."""
    if mode == 'snapshot':
        return write_snapshot_dirs(bufs, outdir, aux_size)
    dirs = []
    cpus = sorted(c for c in bufs if bufs[c]['copies'])
    for cpu in cpus:
        b = bufs[cpu]
        # AUX records of a per-task buffer carry no CPU of their buffer.
        aux = b['aux'] + (bufs[0xffffffff]['aux']
                          if len(cpus) == 1 and cpu != 0xffffffff and 0xffffffff in bufs else [])
        d = os.path.join(outdir, f'cpu{cpu}')
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'aux.bin'), 'wb') as f:
            f.write(b['bytes'])
        with open(os.path.join(d, 'records.txt'), 'w') as f:
            f.write(f'pmu ptsim type=0 config=0x0 mode={mode} aux_size={aux_size}\n')
            events = [(a[0], 0, f'AUX offset={a[0]} size={a[1]} flags=0x{a[2]:x}') for a in aux]
            events += [(c[1], 1, f'COPY file_off={c[0]} aux_off={c[1]} size={c[2]}') for c in b['copies']]
            # A record comes before the copy of its data.
            lines = [e[2] for e in sorted(events, key=lambda e: (e[0], e[1]))]
            f.write(''.join(l + '\n' for l in lines))
        dirs.append(d)
    return dirs


def run_lines(cmd, env=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors='replace', env=env)
    out, err = p.communicate()
    return p.returncode, out.splitlines(), err


def report_dump(perf, data, snapshot=False, env=None):
    rc, lines, err = run_lines([perf, 'report', '-D', '-i', data], env)
    r = {'rc': rc, 'err': err, 'auxtrace': 0, 'bytes': 0, 'bad': 0, 'cpus': set(),
         'info_type': None, 'info_pmu': None,
         'samples': collections.Counter(), 'aux_samples': collections.Counter(),
         'aux_flags': collections.Counter(), 'aux_records': 0, 'aux_times': []}
    cur = None
    in_sample = False	# dumping a sample's AUX data, not an AUXTRACE record
    synced = True	# past the first PSB of a snapshot's AUXTRACE record
    for l in lines:
        # A sample's AUX data is a snapshot of the trace that starts and
        # ends anywhere, also inside a packet: only the AUXTRACE records
        # hold the whole trace.  So does a snapshot of a buffer that has
        # wrapped: its oldest byte can be inside a packet, and perf's dump
        # does not look for a PSB first; from the first PSB on, it must
        # decode.
        if l.rstrip().endswith(' PSB'):
            synced = True
        if 'Bad packet' in l and not in_sample and synced:
            r['bad'] += 1
        if ': PERF_RECORD_' in l:
            in_sample = 'PERF_RECORD_SAMPLE' in l
        m = re.search(r'(?:^|PERF_RECORD_AUXTRACE_INFO) type: (\d+)$', l)
        if m and r['info_type'] is None:
            r['info_type'] = int(m.group(1))
        m = re.match(r'^  PMU Name\s+(\S+)$', l)
        if m:
            r['info_pmu'] = m.group(1)
        m = AUXTRACE.search(l)
        if m:
            synced = not snapshot
            r['auxtrace'] += 1
            r['bytes'] += int(m.group('size'), 16)
            r['cpus'].add(int(m.group('cpu')))
            continue
        if 'PERF_RECORD_AUX offset' in l:
            r['aux_records'] += 1
            m = AUX_TIME.match(l)
            if m:
                r['aux_times'].append(int(m.group('time')))
            fl = int(l.split('flags: ')[1].split()[0], 16)
            for bit, name in ((AUX_TRUNCATED, 'truncated'), (AUX_PARTIAL, 'partial'),
                              (AUX_COLLISION, 'collision')):
                if fl & bit:
                    r['aux_flags'][name] += 1
            continue
        m = SAMPLE.search(l)
        if m:
            cur = int(m.group('tid'))
            r['samples'][cur] += 1
            continue
        if l.startswith('. ... Intel Processor Trace data: size') and cur is not None:
            if int(l.split('size ')[1].split()[0]) > 0:
                r['aux_samples'][cur] += 1
            cur = None
    warn = {}
    for key, pat in (('lost', r'AUX data lost (\d+) times'),
                     ('partial', r'AUX data had gaps in it (\d+) times'),
                     ('collision', r'AUX data detected collision\s+(\d+) times')):
        m = re.search(pat, err)
        warn[key] = int(m.group(1)) if m else 0
    r['warn'] = warn
    return r


def script_ptw(perf, data):
    """perf's decoder: PTW sequences per CPU, marks, errors, gaps."""
    rc, lines, err = run_lines([perf, 'script', '--itrace=qwe', '-i', data])
    r = {'rc': rc, 'err': err, 'ptw': 0, 'data': 0, 'marks': [], 'errors': collections.Counter(),
         'ovf': 0, 'gaps': 0, 'bad_gaps': [], 'cpus': set(), 'first': []}
    prev = {}	# cpu -> last data sequence number
    lost = {}	# cpu -> bytes an OVF reported, None while its PTW is due
    for l in lines:
        m = ERR.search(l)
        if m:
            cpu = int(m.group('cpu'))
            if m.group('msg').startswith('Overflow packet'):
                r['ovf'] += 1
                lost[cpu] = [None, lost.get(cpu, [0, 0])[1] if cpu in lost else 0]
            else:
                r['errors'][m.group('msg')] += 1
            continue
        m = PTW.match(l)
        if not m:
            continue
        r['ptw'] += 1
        # No CPU column with per-thread buffers (--per-thread): one each.
        cpu, val = int(m.group('cpu') or -1), int(m.group('val'), 16)
        if len(r['first']) < 4:
            r['first'].append(l.rstrip())
        if m.group('ip') == '1':
            r['marks'].append((cpu, val))
            continue
        if cpu in lost and lost[cpu][0] is None:
            # The PTW after an OVF: the bytes dropped, 16 per record.
            lost[cpu] = [True, lost[cpu][1] + val]
            continue
        r['data'] += 1
        r['cpus'].add(cpu)
        if cpu in prev and val != prev[cpu] + 1:
            r['gaps'] += 1
            dropped = lost.get(cpu, [None, 0])[1]
            if val != prev[cpu] + 1 + dropped // 16 or dropped % 16:
                r['bad_gaps'].append(f'cpu {cpu}: {prev[cpu]:#x} -> {val:#x}, OVF said {dropped} bytes')
        elif cpu in lost and lost[cpu][1]:
            r['bad_gaps'].append(f'cpu {cpu}: an OVF of {lost[cpu][1]} bytes and no gap at {val:#x}')
        lost.pop(cpu, None)
        prev[cpu] = val
    return r


def report_entries(lines):
    """The first table of perf report --sort comm,dso's LINES, entry by
    entry: "  47.08%  47.08%  perf-spin  [vdso]" (6.12's perf: two
    percentages; 7.3's: three), each as [its last percentage, comm, dso]."""
    top = []
    for l in lines:
        if re.match(r'^\s+[\d.]+%\s+[\d.]+%\s+\S', l):
            f = l.split()
            n = next((i for i, x in enumerate(f) if not re.match(r'^[\d.]+%$', x)), len(f))
            top.append(f[n - 1:])
        elif top and l.startswith('#'):
            break
    return top


def full_decode(perf, data, symfs):
    """perf report and perf script with perf's default itrace options.

    The trace errors other than OVF that perf script lists, the count
    perf report warns of, and perf report's entries by comm and DSO.
    """
    sym = ['--symfs', symfs, '-i', data]
    rc, lines, err = run_lines([perf, 'report', '--stdio', '-g', 'none',
                                '--sort', 'comm,dso'] + sym)
    m = TRACE_ERRORS.search(err)
    top = report_entries(lines)
    r = {'rc': rc, 'err': err, 'warned': int(m.group(1)) if m else 0,
         'top': top[:4], 'errors': collections.Counter(), 'ovf': 0}
    src, slines, serr = run_lines([perf, 'script'] + sym)
    r['rc'] = rc or src
    r['err'] += serr
    for l in slines:
        m = ERR.search(l)
        if m and m.group('msg').startswith('Overflow packet'):
            r['ovf'] += 1
        elif m:
            r['errors'][m.group('msg').split(' ip ')[0].strip()] += 1
    return r


def aux_decode(decoder, dirs):
    tot = collections.Counter()
    lines = []
    ok = True
    for d in dirs:
        p = subprocess.run([decoder, '-v', d], capture_output=True, text=True)
        ok = ok and p.returncode == 0
        s = [l for l in p.stdout.splitlines() if l.startswith('aux-decode: dir=')]
        if not s:
            return False, tot, p.stdout + p.stderr
        lines.append(s[-1])
        for k, v in re.findall(r' (\w+)=(\d+)\b', s[-1]):
            tot[k] += int(v)
        t = re.search(r'^  types:(.*)$', p.stdout, re.M)
        if t:
            for k, v in re.findall(r' ([\w.]+)=(\d+)', t.group(1)):
                tot['type_' + k] += int(v)
    return ok, tot, '\n'.join(lines)


def case_info(d):
    info = {}
    try:
        with open(os.path.join(d, 'case.txt')) as f:
            for l in f:
                k, _, v = l.strip().partition(' ')
                info[k] = v
    except FileNotFoundError:
        pass
    return info


def check_span(tap, name, rep, info):
    """The AUX records cover the workload's whole run.

    perf-spin spins for a fixed stretch of CLOCK_MONOTONIC time, and the
    event writes trace every tick it runs: its AUX records (their times,
    perf's clock) span that stretch however fast the guest is.  How many
    bytes it writes depends on how many ticks the host gives the guest
    (a figure for make bench, not a verdict), so only the span is one.
    A trace that stops early (a stuck transaction, an event disabled on
    the way) ends short of it.
    """
    ms = int(info.get('ms', '0'))
    t = rep['aux_times']
    span = (max(t) - min(t)) / 1e6 if t else 0
    tap.check(ms > 0 and span >= 0.9 * ms,
              f'{name}: the AUX records span the workload\'s run',
              f'{len(t)} timed AUX records over {span:.0f} ms of the workload\'s {ms} ms '
              f'(at least {0.9 * ms:.0f}); {rep["bytes"]} bytes')


def top_task(entries, comm, dsos, ignore=('swapper',)):
    """The task with the most of perf report --sort comm,dso's ENTRIES
    (['34.06%', COMM, DSO], ...) but those in IGNORE, and each task's
    share: its lines summed, the workload's (COMM) only those in its own
    code (DSOS: its binary and the vDSO, two lines).  IGNORE is the idle
    task (swapper), and in a system-wide case perf record too: there
    ptsim traces perf, which on the debug kernel under TCG needs about a
    CPU of its own to copy the AUX areas out (its read loop never gets to
    poll), so that which of it and the workload has more is the
    scheduler's choice, not the trace's."""
    share = collections.Counter()
    for t in entries:
        if len(t) >= 3 and t[1] not in ignore and (t[1] != comm or t[2] in dsos):
            share[t[1]] += float(t[0].rstrip('%'))
    return (share.most_common(1)[0][0] if share else None), share


def check_full_decode(tap, name, perf, data, symfs):
    """What a user sees first: perf report and perf script, defaults."""
    full = full_decode(perf, data, symfs)
    errs = sum(full['errors'].values())
    tap.check(full['rc'] == 0 and errs == 0 and full['warned'] == full['ovf'],
              f'{name}: perf report and perf script, full decode: no trace error but OVF',
              f'exit {full["rc"]}; perf report warned of {full["warned"]} errors, '
              f'{full["ovf"]} OVFs; ' + ', '.join(f'{v}x {k}' for k, v in full['errors'].most_common(4))
              + f' {full["err"].strip()[-200:]}')
    comm, dsos = WORKLOAD.get(name, SPIN)
    full['errors_total'] = errs
    # An idle CPU's ticks find no user IP and leave the trace at the last
    # one, so perf gives the idle task (swapper) the data records ptsim
    # writes there, at an IP it cannot resolve ([unknown]): with -a on 8
    # CPUs, most of the report.  Ranked without it, and without perf
    # record in a system-wide case (top_task()).
    ignore = ('swapper', 'perf') if name in SYSTEM_WIDE else ('swapper',)
    top, share = top_task(full['top'], comm, dsos, ignore)
    tap.note(f'{name}: perf report --sort comm,dso: ' + '; '.join(' '.join(t) for t in full['top']))
    tap.check(top == comm,
              f'{name}: perf report\'s top task but {" and ".join(ignore)} is the workload, in its own code',
              f'top entries {full["top"]}, shares {dict(share)}, wanted {comm} in {dsos}')
    return full


def check_case(tap, name, d, perf, decoder, symfs):
    data = os.path.join(d, 'perf.data')
    info = case_info(d)
    mode = info.get('mode', 'normal')
    threads = int(info.get('threads', '1'))
    if not tap.check(os.path.isfile(data) and os.path.getsize(data) > 0, f'{name}: perf.data came back',
                     'no perf.data (see the guest\'s perf/record result)'):
        return None
    rep = report_dump(perf, data, mode == 'snapshot')
    scr = script_ptw(perf, data)
    tap.check(rep['rc'] == 0 and scr['rc'] == 0, f'{name}: perf report -D and perf script ran',
              f'exit {rep["rc"]}/{scr["rc"]}: {(rep["err"] + scr["err"]).strip()[-300:]}')
    tap.check(rep['bad'] == 0, f'{name}: 0 "Bad packet" in perf report -D', f'{rep["bad"]} bad packets')
    errors = sum(scr['errors'].values())
    tap.check(errors == 0, f'{name}: perf\'s decoder reports no trace error but OVF',
              ', '.join(f'{v}x {k}' for k, v in scr['errors'].items()))
    if mode == 'sample':
        res = {'rep': rep, 'scr': scr}
        # AUX sampling: every thread of the workload has samples, and
        # every sample carries AUX data (a snapshot of the leader's trace).
        tids = sorted(rep['samples'])
        tap.note(f'{name}: samples per thread: ' + ', '.join(
            f'{t}: {rep["aux_samples"][t]}/{rep["samples"][t]} with AUX data' for t in tids))
        tap.check(len(tids) >= threads, f'{name}: samples from every thread',
                  f'{len(tids)} threads sampled, {threads} ran')
        without = [t for t in tids if rep['aux_samples'][t] < rep['samples'][t]]
        tap.check(tids and not without, f'{name}: every thread\'s samples carry AUX data',
                  'threads with samples without AUX data: ' + ', '.join(
                      f'{t} ({rep["samples"][t] - rep["aux_samples"][t]} of {rep["samples"][t]})'
                      for t in without))
        return res

    tap.check(rep['auxtrace'] > 0 and rep['bytes'] > 0, f'{name}: AUX data recorded',
              f'{rep["auxtrace"]} AUXTRACE records, {rep["bytes"]} bytes')
    res = {'rep': rep, 'scr': scr, 'full': check_full_decode(tap, name, perf, data, symfs)}
    if mode == 'snapshot':
        # Two snapshots on SIGUSR2, each taken of every CPU's buffer.
        tap.check(rep['auxtrace'] >= 2, f'{name}: snapshots taken', f'{rep["auxtrace"]} AUXTRACE records')
    tap.check(scr['data'] > 0, f'{name}: perf decoded ptsim\'s PTW packets', f'{scr["data"]} data PTWs')
    if mode != 'snapshot':
        tap.check(not scr['bad_gaps'], f'{name}: PTW sequence contiguous on every CPU, but for what an OVF reports',
                  '; '.join(scr['bad_gaps'][:5]))
    # perf warns of lost AUX data exactly when the trace has gaps.
    warned = rep['warn']['lost'] + rep['warn']['partial'] + rep['warn']['collision']
    flagged = rep['aux_flags']['truncated'] + rep['aux_flags']['partial'] + rep['aux_flags']['collision']
    tap.check(warned == flagged, f'{name}: perf\'s loss warnings count the flagged AUX records',
              f'warnings {dict(rep["warn"])}, flags {dict(rep["aux_flags"])}')

    # Our decoder on the same bytes.
    bufs, nauxtrace, trimmed = read_perf_data(data, mode == 'snapshot')
    shutil.rmtree(os.path.join(d, 'decode'), ignore_errors=True)
    dirs = write_decode_dirs(bufs, os.path.join(d, 'decode'), int(info.get('aux_size', 0)) or 1 << 22,
                             mode)
    ok, tot, summary = aux_decode(decoder, dirs)
    for l in summary.splitlines():
        tap.note(f'{name}: {l}')
    tap.check(ok and tot['decode_errors'] == 0 and tot['unexplained_gaps'] == 0,
              f'{name}: aux-decode: no decode error, no unexplained gap', summary[-300:])
    tap.check(tot['bytes'] + trimmed == rep['bytes'] and nauxtrace == rep['auxtrace'],
              f'{name}: aux-decode and perf agree on the bytes',
              f'aux-decode {tot["bytes"]} + {trimmed} bytes of perf\'s padding, perf {rep["bytes"]}')
    if mode != 'snapshot':
        # Every PTW: ptsim's data, the OVFs' byte counts and the marks.
        tap.check(tot['type_ptw'] == scr['ptw'], f'{name}: aux-decode and perf agree on the PTWs',
                  f'aux-decode {tot["type_ptw"]}, perf {scr["ptw"]}')
        tap.check(tot['type_ovf'] == scr['ovf'] and tot['seq_gaps'] == scr['gaps'],
                  f'{name}: aux-decode and perf agree on OVFs and gaps',
                  f'OVF: aux-decode {tot["type_ovf"]}, perf {scr["ovf"]}; '
                  f'gaps: aux-decode {tot["seq_gaps"]}, perf {scr["gaps"]}')
        # perf warns of loss exactly when data was lost: a gap (with its
        # PARTIAL record), or a TRUNCATED record, after which the trace
        # ends (the kernel disabled the event on a full buffer).
        truncated = rep['aux_flags']['truncated']
        tap.check((tot['seq_gaps'] > 0 or truncated > 0) == (warned > 0),
                  f'{name}: perf warns of loss exactly when there are gaps',
                  f'{tot["seq_gaps"]} gaps, {truncated} TRUNCATED, {warned} warnings')
    res.update(tot=tot, warned=warned)
    return res


AUX_TIMED = re.compile(r'^\s*-?\d+ (?P<time>\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_AUX '
                       r'offset: (?:0x[0-9a-f]+|0) size: (?P<size>0x[0-9a-f]+|0) ')
DUMP_TSC = re.compile(r'^\.\s+[0-9a-f]+:\s.*\sTSC (?P<tsc>0x[0-9a-f]+)$')
DUMP_PTW = re.compile(r'^\.\s+[0-9a-f]+:\s.*\sPTWRITE (?P<val>0x[0-9a-f]+|0) IP:0$')
HELD_OK = 16 * 1024	# what a file may miss of the trace before it: a PSB's worth and more
FLUSHED_MIN = 64 * 1024	# what the FIFO must have held at the rotation
FLUSH_WINDOW = 50 * 1000000	# ns: the AUX records the rotation's flush wrote


TIME_CONV = re.compile(r'^\.\.\. Time (?P<key>Shift|Mult?iplier|Zero)\s+(?P<val>\d+)$')
TIME_CONV_KEYS = {'Shift': 'shift', 'Muliplier': 'mult', 'Multiplier': 'mult', 'Zero': 'zero'}


def time_conv(line):
    """A field of perf report -D's PERF_RECORD_TIME_CONV in LINE: ('shift',
    'mult' or 'zero', its value), else (None, None).  6.12's perf prints
    "Muliplier", 7.3's "Multiplier"."""
    m = TIME_CONV.match(line)
    return (TIME_CONV_KEYS[m.group('key')], int(m.group('val'))) if m else (None, None)


def switch_file(perf, data):
    """One --switch-output file, from perf report -D: its PERF_RECORD_AUX
    times and sizes, and per AUX buffer (CPU) its data PTWs: sequence
    number and the perf time of the TSC of the PSB+ before it (None
    before the first)."""
    rc, lines, err = run_lines([perf, 'report', '-D', '-i', data])
    aux, ptws, conv = [], collections.defaultdict(list), {}
    cpu, tsc = None, None
    for l in lines:
        m = AUX_TIMED.match(l)
        if m:
            aux.append((int(m.group('time')), int(m.group('size'), 16)))
            continue
        m = AUXTRACE.search(l)
        if m:
            cpu, tsc = int(m.group('cpu')), None
            continue
        m = DUMP_TSC.match(l)
        if m:
            tsc = int(m.group('tsc'), 16)
            continue
        m = DUMP_PTW.match(l)
        if m and cpu is not None:
            ptws[cpu].append((int(m.group('val'), 16), tsc))
            continue
        key, val = time_conv(l)
        if key:
            conv[key] = val

    def perf_time(t):
        """perf's tsc_to_perf_time(), from the file's TIME_CONV."""
        if t is None or len(conv) < 3:
            return None
        quot, rem = t >> conv['shift'], t & ((1 << conv['shift']) - 1)
        return (conv['zero'] + quot * conv['mult'] + ((rem * conv['mult']) >> conv['shift'])) % (1 << 64)
    ptws = {c: [(v, perf_time(t)) for v, t in p] for c, p in ptws.items()}
    return {'rc': rc, 'err': err, 'aux': aux, 'ptws': ptws, 'conv': len(conv) == 3}


def check_switch_case(tap, name, d, perf):
    """--switch-output with a FIFO holding data back: the rotation's file
    holds the trace of everything before the rotation (perf flushed)."""
    files = sorted(f for f in os.listdir(d) if f.startswith('perf.data.'))
    if not tap.check(len(files) >= 2, f'{name}: a file before and one after the rotation',
                     f'files: {files}'):
        return None
    per = [switch_file(perf, os.path.join(d, f)) for f in files]
    tap.check(all(p['rc'] == 0 and p['conv'] for p in per),
              f'{name}: perf report -D ran on every file, with its TIME_CONV',
              ' '.join(p['err'].strip()[-200:] for p in per))
    first = per[0]
    n1 = sum(len(p) for p in first['ptws'].values())
    n2 = sum(len(p) for f in per[1:] for p in f['ptws'].values())
    if not tap.check(first['aux'] and n1 and n2, f'{name}: trace in the files before and after the rotation',
                     f'{len(first["aux"])} AUX records, {n1} and {n2} data PTWs'):
        return None
    # The rotation: the last PERF_RECORD_AUX of its file.  Every data
    # record in a later file whose PSB+ has an earlier time was produced
    # before the rotation and held back: it should be in the first file.
    rot = max(t for t, _ in first['aux'])
    held = 16 * sum(1 for f in per[1:] for p in f['ptws'].values() for _, t in p
                    if t is not None and t < rot)
    flushed = sum(sz for t, sz in first['aux'] if t >= rot - FLUSH_WINDOW)
    tap.note(f'{name}: {len(files)} files, {n1} and {n2} data PTWs, rotation at {rot} ns; '
             f'the first file\'s last {FLUSH_WINDOW // 1000000} ms published {flushed} bytes; '
             f'held back at the rotation: {held} bytes')
    tap.check(flushed >= FLUSHED_MIN, f'{name}: the FIFO held data back, written out at the rotation',
              f'{flushed} bytes published in the last {FLUSH_WINDOW // 1000000} ms before the rotation, '
              f'fewer than {FLUSHED_MIN}')
    tap.check(held <= HELD_OK, f'{name}: the file before the rotation holds the trace of before it',
              f'{held} bytes of trace produced before the rotation are in later files '
              f'(allowed {HELD_OK}): perf did not flush')
    # ptsim numbers its data records per AUX buffer: each file goes on
    # where the one before ended, with no gap and no repeat.
    bad = []
    last = {}
    for f in per:
        for cpu, p in sorted(f['ptws'].items()):
            for v, _ in p:
                if cpu in last and v != last[cpu] + 1:
                    bad.append(f'cpu {cpu}: {last[cpu]:#x} -> {v:#x}')
                last[cpu] = v
    tap.check(not bad, f'{name}: the PTW sequence goes on from file to file without a gap',
              '; '.join(bad[:5]))
    return {'files': files, 'held': held}


def read_raw_dir(rawdir):
    """What perf wrote under PERF_RAW_AUX_DIR: per buffer, its bytes, its
    AUXTRACE copies (file_off, offset, size) and AUX records, keyed by the
    CPU of a per-CPU buffer (0xffffffff for a thread's, as in perf.data)."""
    bufs = {}
    names = sorted(f[:-4] for f in os.listdir(rawdir) if f.endswith('.txt')) \
        if os.path.isdir(rawdir) else []
    for n in names:
        b = {'copies': [], 'aux': [], 'bytes': bytearray(), 'name': n}
        with open(os.path.join(rawdir, n + '.bin'), 'rb') as f:
            b['bytes'] += f.read()
        with open(os.path.join(rawdir, n + '.txt')) as f:
            header = f.readline()
            for l in f:
                kv = dict(re.findall(r'(\w+)=(\S+)', l))
                if l.startswith('AUXTRACE '):
                    b['copies'].append((int(kv['file_off']), int(kv['offset']), int(kv['size'])))
                elif l.startswith('AUX '):
                    b['aux'].append((int(kv['offset']), int(kv['size']), int(kv['flags'], 16)))
        b['header'] = header.strip()
        key = int(n[3:]) if n.startswith('cpu') else 0xffffffff
        bufs[key] = b
    return bufs


def check_raw_case(tap, name, d, perf, decoder, info):
    """A recording of ptsim_large through perf's raw AUX path."""
    data = os.path.join(d, 'perf.data')
    mode = info.get('mode', 'normal')
    if not tap.check(os.path.isfile(data) and os.path.getsize(data) > 0, f'{name}: perf.data came back',
                     'no perf.data (see the guest\'s perf/record result)'):
        return None
    rawdir = os.path.join(d, 'raw')
    shutil.rmtree(rawdir, ignore_errors=True)
    env = dict(os.environ, PERF_RAW_AUX_DIR=rawdir)
    rep = report_dump(perf, data, mode == 'snapshot', env)
    src, _, serr = run_lines([perf, 'script', '-i', data])
    tap.check(rep['rc'] == 0 and src == 0, f'{name}: perf report -D and perf script ran',
              f'exit {rep["rc"]}/{src}: {(rep["err"] + serr).strip()[-300:]}')
    tap.check(rep['info_type'] == RAW_TYPE and rep['info_pmu'] == RAW_PMU,
              f'{name}: recorded through the raw path (AUXTRACE_INFO type raw, PMU {RAW_PMU})',
              f'AUXTRACE_INFO type {rep["info_type"]}, PMU {rep["info_pmu"]}')
    tap.check(rep['auxtrace'] > 0 and rep['bytes'] > 0, f'{name}: AUX data recorded',
              f'{rep["auxtrace"]} AUXTRACE records, {rep["bytes"]} bytes')
    if mode == 'snapshot':
        tap.check(rep['auxtrace'] >= 2, f'{name}: snapshots taken', f'{rep["auxtrace"]} AUXTRACE records')

    # perf's files against perf.data read here: the same bytes, records
    # and copies, buffer by buffer, in order.
    raw = read_raw_dir(rawdir)
    ref, nauxtrace, _ = read_perf_data(data, snapshot=True)
    # A buffer nothing was copied from (a CPU the task left before any
    # snapshot: AUX records of no bytes) is in neither's bytes.
    ref = {k: v for k, v in ref.items() if v['copies']}
    copied = {k: v for k, v in raw.items() if v['copies']}
    diff = [f'{k:#x}' for k in set(ref) | set(copied)
            if k not in ref or k not in copied or ref[k]['bytes'] != copied[k]['bytes']
            or ref[k]['copies'] != copied[k]['copies']]
    ncopies = sum(len(b['copies']) for b in raw.values())
    tap.check(raw and not diff and ncopies == nauxtrace == rep['auxtrace'],
              f'{name}: PERF_RAW_AUX_DIR holds every buffer\'s bytes, in order',
              f'buffers {sorted(raw)} vs perf.data {sorted(ref)}; differ: {diff}; '
              f'copies {ncopies}, perf.data {nauxtrace}, perf -D {rep["auxtrace"]}')
    naux = sum(len(b['aux']) for b in raw.values())
    tap.check(naux == rep['aux_records'] > 0, f'{name}: the index files hold every AUX record',
              f'{naux} in the index files, {rep["aux_records"]} in perf report -D')
    tap.note(f'{name}: ' + ', '.join(f'{b["name"]}: {len(b["bytes"])} bytes, {len(b["copies"])} copies, '
                                      f'{len(b["aux"])} AUX' for b in raw.values()))

    warned = rep['warn']['lost'] + rep['warn']['partial'] + rep['warn']['collision']
    flagged = rep['aux_flags']['truncated'] + rep['aux_flags']['partial'] + rep['aux_flags']['collision']
    tap.check(warned == flagged, f'{name}: perf\'s loss warnings count the flagged AUX records',
              f'warnings {dict(rep["warn"])}, flags {dict(rep["aux_flags"])}')

    # aux-decode on what perf wrote out, with perf's index.
    trimmed = 0 if mode == 'snapshot' else trim_padding(raw)
    shutil.rmtree(os.path.join(d, 'decode'), ignore_errors=True)
    dirs = write_decode_dirs(raw, os.path.join(d, 'decode'), int(info.get('aux_size', 0)) or 1 << 22,
                             mode)
    ok, tot, summary = aux_decode(decoder, dirs)
    for l in summary.splitlines():
        tap.note(f'{name}: {l}')
    tap.check(dirs and ok and tot['decode_errors'] == 0 and tot['unexplained_gaps'] == 0,
              f'{name}: aux-decode: no decode error, no unexplained gap',
              summary[-300:] or 'nothing to decode')
    tap.check(tot['bytes'] > 0 and tot['bytes'] + trimmed == rep['bytes'],
              f'{name}: aux-decode and perf agree on the bytes',
              f'aux-decode {tot["bytes"]} + {trimmed} bytes of perf\'s padding, perf {rep["bytes"]}')
    if mode != 'snapshot':
        truncated = rep['aux_flags']['truncated']
        tap.check((tot['seq_gaps'] > 0 or truncated > 0) == (warned > 0),
                  f'{name}: perf warns of loss exactly when aux-decode finds gaps',
                  f'{tot["seq_gaps"]} gaps, {truncated} TRUNCATED, {warned} warnings')
    return {'rep': rep, 'tot': tot, 'warned': warned, 'raw': raw}


def check_noaux(tap, name, d):
    log = os.path.join(d, 'record.log')
    text = open(log, errors='replace').read() if os.path.isfile(log) else ''
    data = os.path.join(d, 'perf.data')
    tap.check(NOAUX_MSG in text,
              f'{name}: perf record warned of an AUX area size without an AUX event',
              f'record.log: {text.strip()[-300:]}')
    try:
        bufs, nauxtrace, _ = read_perf_data(data)
        why = f'{nauxtrace} AUXTRACE records, {sum(len(b["aux"]) for b in bufs.values())} AUX records'
        ok = nauxtrace == 0 and not bufs
    except (OSError, ValueError, struct.error) as e:
        ok, why = False, str(e)
    tap.check(ok, f'{name}: perf record recorded, without AUX data', why)


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.environ.get('BUILD') or os.path.join(top, 'build')
    ap = argparse.ArgumentParser()
    ap.add_argument('--perf', default=os.path.join(build, 'perf/perf'))
    ap.add_argument('--decoder', default=os.path.join(build, 'host/aux-decode'))
    ap.add_argument('--symfs', default=os.path.join(build, 'initramfs'),
                    help='the guest\'s files, for perf to find the traced code')
    ap.add_argument('--summary', action='store_true', help='the perf-run line of case "demo"')
    ap.add_argument('rundir')
    a = ap.parse_args()
    root = os.path.join(a.rundir, 'guest', 'perf')
    tap = Tap()
    cases = sorted(c for c in os.listdir(root) if os.path.isdir(os.path.join(root, c))) \
        if os.path.isdir(root) else []
    # The cases scripts/guest/perf-record.sh says it ran (its list is
    # the one home of the cases), "demo" for make run.
    want = ['demo']
    if not a.summary:
        try:
            with open(os.path.join(root, 'cases.txt')) as f:
                want = f.read().split()
        except FileNotFoundError:
            want = []
            tap.check(False, 'perf-record.sh: cases.txt came back',
                      f'no {os.path.join(root, "cases.txt")}')
    for c in want:
        if c not in cases:
            tap.check(False, f'{c}: recorded', f'no {os.path.join(root, c)}')
    def one(c):
        """Case c's checks, into a Tap of its own."""
        tap = Tap()
        cd = os.path.join(root, c)
        if c == 'noaux':
            check_noaux(tap, c, cd)
            return tap, None
        if c == 'switch':
            check_switch_case(tap, c, cd, a.perf)
            return tap, None
        if c.startswith('raw'):
            r = check_raw_case(tap, c, cd, a.perf, a.decoder, case_info(cd))
        else:
            r = check_case(tap, c, cd, a.perf, a.decoder, a.symfs)
        if r and 'tot' in r and 'scr' in r:
            tap.note(f'{c}: bytes={r["rep"]["bytes"]} auxtrace={r["rep"]["auxtrace"]} '
                     f'ptw={r["scr"]["ptw"]} data_ptw={r["scr"]["data"]} marks={len(r["scr"]["marks"])} '
                     f'ovf={r["scr"]["ovf"]} gaps={r["scr"]["gaps"]} '
                     f'warnings={r["warned"]} cpus={len(r["scr"]["cpus"])}')
        if c in ('task', 'raw') and r:
            check_span(tap, c, r['rep'], case_info(cd))
        if c == 'cpu' and r:
            ncpu = int(case_info(cd).get('cpus', '2'))
            tap.check(len(r['rep']['cpus']) >= ncpu, 'cpu: trace from every CPU',
                      f'AUX data from CPUs {sorted(r["rep"]["cpus"])} of {ncpu}')
        if c == 'raw_loss' and r:
            # The loss, seen by perf (PARTIAL records and its warning) and
            # by aux-decode (OVFs and the sequence gaps they explain).
            tap.check(r['rep']['aux_flags']['partial'] > 0 and r['warned'] > 0
                      and r['tot']['type_ovf'] > 0 and r['tot']['seq_gaps'] > 0,
                      'raw_loss: the forced loss happened, and perf and aux-decode saw it',
                      f'PARTIAL {r["rep"]["aux_flags"]["partial"]}, warnings {r["warned"]}, '
                      f'OVF {r["tot"]["type_ovf"]}, gaps {r["tot"]["seq_gaps"]}')
        if c == 'loss' and r and 'tot' in r:
            tap.check(r['scr']['ovf'] > 0 and r['warned'] > 0 and r['tot']['seq_gaps'] > 0,
                      'loss: the forced loss happened, and perf and aux-decode saw it',
                      f'OVF {r["scr"]["ovf"]}, warnings {r["warned"]}, gaps {r["tot"]["seq_gaps"]}')
        if c == 'mark' and r:
            # perf record opens the group on every CPU for the task: one
            # ptsim_mark event per CPU, numbering its samples 1, 2, 3...
            # into that CPU's buffer.
            per_cpu = collections.defaultdict(list)
            for cpu, val in r['scr']['marks']:
                per_cpu[cpu].append(val)
            bad = {cpu: v[:8] for cpu, v in per_cpu.items() if v != list(range(1, len(v) + 1))}
            tap.check(per_cpu and not bad,
                      'mark: ptsim_mark samples in perf\'s decoded trace, numbered 1, 2, 3... per CPU',
                      f'{len(r["scr"]["marks"])} marks; out of sequence: {bad}')
        return tap, r

    # The cases are independent and spend their time in perf and
    # aux-decode: one thread per CPU, the results in case order.
    res = {}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for c, (t, r) in zip(cases, pool.map(one, cases)):
            tap.lines += t.lines
            tap.failed += t.failed
            res[c] = r
    if a.summary and res.get('demo'):
        r = res['demo']
        for l in r['scr']['first']:
            print(l, file=sys.stderr)
    tap.print()
    if a.summary and res.get('demo') and 'tot' in res['demo']:
        r = res['demo']
        print(f'perf-run: bytes={r["rep"]["bytes"]} auxtrace={r["rep"]["auxtrace"]} '
              f'bad_packets={r["rep"]["bad"]} ptw_gaps={r["scr"]["gaps"]} '
              f'trace_errors={r["full"]["errors_total"]}')
    return 1 if tap.failed else 0


if __name__ == '__main__':
    sys.exit(main())
