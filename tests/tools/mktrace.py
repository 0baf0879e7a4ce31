#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write synthetic ptsim recordings for testing tools/aux/aux-decode.

Usage: mktrace.py OUTDIR

Creates OUTDIR/<case>/{aux.bin,records.txt} for every case below, in the
directory format of Documentation/admin-guide/perf/ptsim.rst, and
OUTDIR/expected.txt with one line per case:

    <case> ok|fail|error [key=value ...] [err=<text to the end of the line>]

  ok/fail   aux-decode must exit 0/1 and print the summary fields given
            (bytes, aux_records, packets, decode_errors, seq_gaps,
            unexplained_gaps); "types=pad:N,psb:N,..." is the -v line of
            packet counts; "why=W" means -v prints a gap "explained by W"
            (or "UNEXPLAINED" for why=UNEXPLAINED).
  error     the directory is malformed: exit 1, no summary, and stderr
            contains the err= text.

Packet counts are derived from what was generated, not from a decoder: a
packet counts if it lies in a decodable part of the stream.
"""
import os
import sys

CLASSES = ['pad', 'psb', 'psbend', 'tsc', 'cbr', 'mode', 'fup', 'tip',
           'tip.pge', 'tip.pgd', 'tnt', 'ptw', 'ovf', 'other']

F_TRUNCATED, F_OVERWRITE, F_PARTIAL, F_COLLISION = 0x1, 0x2, 0x4, 0x8
RECORD = 16
USER_IP = 0x0000_5555_5555_1000


def le(v, n):
    return v.to_bytes(n, 'little')


# The Intel PT packets ptsim writes: (class, bytes).
def p_pad():
    return ('pad', b'\x00')


def p_psb():
    return ('psb', b'\x02\x82' * 8)


def p_psbend():
    return ('psbend', b'\x02\x23')


def p_tsc(tsc):
    return ('tsc', b'\x19' + le(tsc, 7))


def p_cbr(ratio):
    return ('cbr', b'\x02\x03' + bytes([ratio, 0]))


def p_mode_exec():
    return ('mode', b'\x99\x01')          # 64-bit (CS.L)


def p_fup(ip):
    return ('fup', b'\xdd' + le(ip, 8))   # IPBytes=110: full IP


def p_tip_pge(ip):
    if ip is None:
        return ('tip.pge', b'\x11')       # IP suppressed
    return ('tip.pge', b'\xd1' + le(ip, 8))


def p_tip_pgd():
    return ('tip.pgd', b'\x01')           # IP suppressed


def p_ptw64(v):
    return ('ptw', b'\x02\x32' + le(v, 8))


def p_ptw32(v):
    return ('ptw', b'\x02\x12' + le(v, 4))


def p_ovf():
    return ('ovf', b'\x02\xf3')


def p_tnt():
    return ('tnt', b'\x06')               # short TNT, one bit


class Stream:
    """The AUX stream at absolute offsets, and the packets put in it."""

    def __init__(self, region=4096, psb_period=2048, fill='tnt'):
        self.fill = fill      # a data record after its PTW: 'tnt' or 'pad'
        self.align = set()    # offsets of the PADs up to a region end
        self.buf = bytearray()
        self.pkts = []        # (offset, size, class)
        self.psbs = []        # offsets of PSB packets
        self.lost = []        # [begin, end): not decodable (after damage)
        self.seq = 0
        self.tsc = 0x10_0000
        self.region = region
        self.psb_period = psb_period
        self.since_psb = 0
        self.tracing = False

    def put(self, pkt):
        cls, raw = pkt
        if cls == 'psb':
            self.psbs.append(len(self.buf))
        self.pkts.append((len(self.buf), len(raw), cls))
        self.buf += raw

    def raw(self, data):
        """Bytes that are not a packet of ours (garbage, a cut packet)."""
        self.buf += data

    def pad(self, n):
        for _ in range(n):
            self.align.add(len(self.buf))
            self.put(p_pad())

    def group(self, pkts):
        """A record: never straddles a region end, PAD up to it instead."""
        size = sum(len(raw) for _, raw in pkts)
        used = len(self.buf) % self.region
        if used + size > self.region:
            self.pad(self.region - used)
        for p in pkts:
            self.put(p)
        self.since_psb += size

    def psb_plus(self):
        self.tsc += 12345
        pkts = [p_psb(), p_tsc(self.tsc), p_cbr(0x20), p_mode_exec()]
        if self.tracing:
            pkts.append(p_fup(USER_IP))
        pkts.append(p_psbend())
        self.group(pkts)
        self.since_psb = 0

    def enable(self, ip=USER_IP):
        self.psb_plus()
        self.group([p_tip_pge(ip)])
        self.tracing = True

    def disable(self):
        self.group([p_fup(USER_IP), p_tip_pgd()])
        self.tracing = False

    def data(self, n):
        for _ in range(n):
            if self.since_psb >= self.psb_period:
                self.psb_plus()
            fill = p_tnt() if self.fill == 'tnt' else p_pad()
            self.group([p_ptw64(self.seq)] + [fill] * 6)
            self.seq += 1

    def drop(self, n, count=None, ovf=True):
        """n records lost in the FIFO; OVF + PTW32(bytes dropped)."""
        self.seq += n
        if ovf:
            dropped = n * RECORD if count is None else count
            self.group([p_ovf(), p_ptw32(dropped), p_fup(USER_IP)])

    def corrupt(self, value=0x05):
        """Overwrite the last TNT written so far with an invalid opcode;
        everything up to the next PSB is lost to the decoder."""
        for i in range(len(self.pkts) - 1, -1, -1):
            off, _, cls = self.pkts[i]
            if cls == 'tnt':
                self.buf[off] = value
                self.lost.append([off, None])
                return
        raise ValueError('no TNT to corrupt')

    def counts(self, segments=None, snapshot=False):
        """Packet counts over decodable bytes of [(begin, end)] ranges."""
        if segments is None:
            segments = [(0, len(self.buf))]
        lost = []
        for b, e in self.lost:
            if e is None:
                e = min([p for p in self.psbs if p > b] + [len(self.buf)])
            lost.append((b, e))
        cnt = dict.fromkeys(CLASSES, 0)
        for sb, se in segments:
            start = sb
            if snapshot:
                first = [p for p in self.psbs if sb <= p and p + 16 <= se]
                if not first:
                    continue
                start = first[0]
            for off, size, cls in self.pkts:
                if off < start or off + size > se:
                    continue
                if any(b <= off < e for b, e in lost):
                    continue
                cnt[cls] += 1
        return cnt


class Recording:
    """A directory: the header, records and copies, in order."""

    def __init__(self, name, mode='normal', aux_size=1 << 20):
        self.name = name
        self.mode = mode
        self.aux_size = aux_size
        self.lines = ['pmu ptsim type=42 config=0x0 mode=%s aux_size=%d'
                      % (mode, aux_size)]
        self.bin = bytearray()
        self.aux_end = 0
        self.copied = 0
        self.naux = 0

    def itrace_start(self, pid=100, tid=100):
        self.lines.append('ITRACE_START pid=%d tid=%d' % (pid, tid))

    def lost(self, n):
        self.lines.append('LOST id=7 lost=%d' % n)

    def aux(self, s, flags=0, size=None):
        """A PERF_RECORD_AUX for what was written since the last one."""
        end = len(s.buf)
        if size is None:
            size = end - self.aux_end
        self.lines.append('AUX offset=%d size=%d flags=0x%x'
                          % (self.aux_end, size, flags))
        self.aux_end = end
        self.naux += 1

    def copy(self, s, upto=None):
        """Normal mode: copy [copied, upto) out, file_off == aux_off."""
        upto = len(s.buf) if upto is None else upto
        if upto > self.copied:
            self.lines.append('COPY file_off=%d aux_off=%d size=%d'
                              % (len(self.bin), self.copied,
                                 upto - self.copied))
            self.bin += s.buf[self.copied:upto]
            self.copied = upto

    def snapshot(self, s, prev):
        """Snapshot mode: the newest min(aux_size, head - prev) bytes below
        head, one COPY per side of the wrap.  Returns the head."""
        head = len(s.buf)
        n = min(self.aux_size, head - prev)
        start = head - n
        first = min(n, self.aux_size - start % self.aux_size)
        for a, ln in ((start, first), (start + first, n - first)):
            if ln:
                self.lines.append('COPY file_off=%d aux_off=%d size=%d'
                                  % (len(self.bin), a, ln))
                self.bin += s.buf[a:a + ln]
        self.lines.append('AUX offset=%d size=%d flags=0x%x'
                          % (head, head - self.aux_end, F_OVERWRITE))
        self.naux += 1
        self.aux_end = head
        return head

    def write(self, top, files=('records.txt', 'aux.bin')):
        d = os.path.join(top, self.name)
        os.makedirs(d, exist_ok=True)
        if 'records.txt' in files:
            with open(os.path.join(d, 'records.txt'), 'w') as f:
                f.write('\n'.join(self.lines) + '\n')
        if 'aux.bin' in files:
            with open(os.path.join(d, 'aux.bin'), 'wb') as f:
                f.write(self.bin)


def expect(out, rec, verdict, cnt=None, errors=0, gaps=0, unexplained=0,
           why=None, extra=()):
    fields = [rec.name, verdict, 'bytes=%d' % len(rec.bin),
              'aux_records=%d' % rec.naux]
    if cnt is not None:
        fields += ['packets=%d' % sum(cnt.values()),
                   'types=' + ','.join('%s:%d' % (c, cnt[c])
                                       for c in CLASSES)]
    fields += ['decode_errors=%d' % errors, 'seq_gaps=%d' % gaps,
               'unexplained_gaps=%d' % unexplained]
    if why:
        fields.append('why=' + why)
    fields += list(extra)
    out.append(' '.join(fields))


def normal_run(name, body, **kw):
    """A per-task recording: ITRACE_START, enable, body(s, rec), disable;
    an AUX record and a copy at every watermark (1 KiB)."""
    s = Stream(**kw)
    rec = Recording(name)
    rec.itrace_start()
    s.enable()
    body(s, rec)
    s.disable()
    rec.aux(s)
    rec.copy(s)
    return s, rec


def watermarked(s, rec, n, wm=1024):
    """n data records, an AUX record + copy every wm bytes."""
    for _ in range(n):
        s.data(1)
        if len(s.buf) - rec.aux_end >= wm:
            rec.aux(s)
            rec.copy(s)


def normal_cases(top, out):
    # Clean: PSB+ every 2 KiB, PAD at 4 KiB region ends, no gap.
    s, rec = normal_run('clean', lambda s, r: watermarked(s, r, 1000))
    rec.write(top)
    expect(out, rec, 'ok', s.counts())

    # FIFO overflow, OVF + PTW32 with the right byte count.
    def ovf_ok(s, r):
        watermarked(s, r, 100)
        s.drop(7)
        watermarked(s, r, 100)
    s, rec = normal_run('ovf-ok', ovf_ok)
    rec.write(top)
    expect(out, rec, 'ok', s.counts(), gaps=1, why='OVF')

    # Two overflows back to back: their byte counts add up.
    def ovf_twice(s, r):
        watermarked(s, r, 50)
        s.drop(3)
        s.drop(2)
        watermarked(s, r, 50)
    s, rec = normal_run('ovf-twice', ovf_twice)
    rec.write(top)
    expect(out, rec, 'ok', s.counts(), gaps=1, why='OVF')

    # OVF whose PTW32 payload does not match the records lost.
    def ovf_bad(s, r):
        watermarked(s, r, 100)
        s.drop(7, count=7 * RECORD - 16)
        watermarked(s, r, 100)
    s, rec = normal_run('ovf-bad-count', ovf_bad)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), gaps=1, unexplained=1,
           why='UNEXPLAINED')

    # Records vanish without any trace of why.
    def silent(s, r):
        watermarked(s, r, 100)
        s.drop(4, ovf=False)
        watermarked(s, r, 100)
    s, rec = normal_run('gap-no-reason', silent)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), gaps=1, unexplained=1,
           why='UNEXPLAINED')

    # AUX buffer full: TRUNCATED record, FIFO lost, re-enabled later.
    def truncated(s, r):
        watermarked(s, r, 200)
        r.aux(s, F_TRUNCATED)
        r.copy(s)
        s.tracing = False
        s.drop(30, ovf=False)
        s.enable()
        watermarked(s, r, 200)
    s, rec = normal_run('truncated', truncated)
    rec.write(top)
    expect(out, rec, 'ok', s.counts(), gaps=1, why='lossy')

    # A TRUNCATED record that ends elsewhere does not explain a gap.
    def trunc_elsewhere(s, r):
        watermarked(s, r, 50)
        r.aux(s, F_TRUNCATED)
        s.tracing = False
        s.enable()
        watermarked(s, r, 100)
        s.drop(5, ovf=False)
        watermarked(s, r, 100)
    s, rec = normal_run('truncated-elsewhere', trunc_elsewhere)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), gaps=1, unexplained=1,
           why='UNEXPLAINED')

    # PARTIAL and COLLISION records explain a gap as TRUNCATED does.
    def partial_collision(s, r):
        watermarked(s, r, 100)
        r.aux(s, F_PARTIAL)
        s.drop(2, ovf=False)
        watermarked(s, r, 100)
        r.aux(s, F_COLLISION)
        s.drop(9, ovf=False)
        watermarked(s, r, 100)
    s, rec = normal_run('partial-collision', partial_collision)
    rec.write(top)
    expect(out, rec, 'ok', s.counts(), gaps=2, why='lossy')

    # OVERWRITE alone is not a loss.
    def overwrite_flag(s, r):
        watermarked(s, r, 100)
        r.aux(s, F_OVERWRITE)
        s.drop(2, ovf=False)
        watermarked(s, r, 100)
    s, rec = normal_run('overwrite-flag-only', overwrite_flag)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), gaps=1, unexplained=1)

    # The first record of a buffer is number 0 ...
    def late_start(s, r):
        s.seq = 3
        watermarked(s, r, 100)
    s, rec = normal_run('first-seq-nonzero', late_start)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), gaps=1, unexplained=1,
           why='UNEXPLAINED')

    # ... unless a lossy AUX record before it says why it is not.
    def late_start_trunc(s, r):
        r.aux(s, F_TRUNCATED)
        s.seq = 3
        watermarked(s, r, 100)
    s, rec = normal_run('first-seq-truncated', late_start_trunc)
    rec.write(top)
    expect(out, rec, 'ok', s.counts(), gaps=1, why='lossy')

    # A sequence number going backwards is never explained, OVF or not.
    def backwards(s, r):
        watermarked(s, r, 100)
        s.seq -= 10
        s.drop(0)
        watermarked(s, r, 100)
    s, rec = normal_run('backwards', backwards)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), gaps=1, unexplained=1,
           why='UNEXPLAINED')

    # PAD before the first PSB, long PAD runs: all fine.  Small regions
    # make many PAD runs; LOST records are accepted.
    s = Stream(region=512, psb_period=4096)
    rec = Recording('pad-runs')
    s.pad(300)
    rec.itrace_start()
    rec.lost(3)
    s.enable()
    watermarked(s, rec, 500)
    s.disable()
    rec.aux(s)
    rec.copy(s)
    rec.write(top)
    expect(out, rec, 'ok', s.counts())

    # Bytes that are not PAD before the first PSB: one decode error.
    s = Stream()
    rec = Recording('leading-garbage')
    s.raw(b'\x02\x82\x02\x82\x77\x55')
    s.enable()
    watermarked(s, rec, 100)
    rec.aux(s)
    rec.copy(s)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), errors=1)

    # One corrupt byte: a decode error, resync at the next PSB; the
    # records in between are an unexplained gap.
    def corrupt(s, r):
        watermarked(s, r, 100)
        s.corrupt()
        watermarked(s, r, 300)
    s, rec = normal_run('corrupt-byte', corrupt)
    assert s.counts()['ptw'] < sum(c == 'ptw' for _, _, c in s.pkts)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), errors=1, gaps=1, unexplained=1)

    # A packet cut off at the end of the data.
    s = Stream()
    rec = Recording('cut-off')
    s.enable()
    watermarked(s, rec, 20)
    s.raw(p_ptw64(s.seq)[1][:6])
    rec.aux(s)
    rec.copy(s)
    rec.write(top)
    expect(out, rec, 'fail', s.counts(), errors=1)

    # Nothing recorded at all.
    rec = Recording('empty')
    rec.write(top)
    expect(out, rec, 'ok', dict.fromkeys(CLASSES, 0))


def flush_cases(top, out):
    """aux-record --flush-at-exit: a FLUSH line with ptsim's counter (the
    bytes queued before the ioctl: all but the alignment PADs) and
    aux_head around it."""
    def nonpad(s, upto):
        return sum(size for off, size, cls in s.pkts
                   if off not in s.align and off < upto)

    # held: records the flush still has to write out, as the counter sees
    # them; missing: counted bytes that never reach the buffer; fill: what
    # follows a data record's PTW (ptsim's PADs, or TNTs with its tnt bit).
    for name, held, missing, err, flags, verdict, stranded, fill in (
            ('flush-ok', 40, 0, 0, 0, 'ok', '0', 'tnt'),
            ('flush-pad-fill', 40, 0, 0, 0, 'ok', '0', 'pad'),
            ('flush-nothing-held', 0, 0, 0, 0, 'ok', '0', 'tnt'),
            ('flush-stranded', 40, 160, 0, 0, 'fail', '160', 'tnt'),
            ('flush-stranded-pad-fill', 40, 160, 0, 0, 'fail', '160', 'pad'),
            ('flush-failed', 0, 160, 25, 0, 'ok', '160', 'tnt'),
            ('flush-truncated', 40, 160, 0, F_TRUNCATED, 'ok', 'n/a', 'tnt')):
        s = Stream(fill=fill)
        rec = Recording(name)
        rec.itrace_start()
        s.enable()
        watermarked(s, rec, 300)
        rec.aux(s, flags)
        rec.copy(s)
        before = len(s.buf)
        s.data(held)
        rec.aux(s)
        rec.copy(s)
        head = len(s.buf)
        rec.lines.append('FLUSH errno=%d count=%d head_before=%d head=%d'
                         % (err, nonpad(s, head) + missing, before, head))
        s.disable()
        rec.aux(s)
        rec.copy(s)
        rec.write(top)
        extra = ['flush_errno=%d' % err, 'fifo_flushed=%d' % (head - before),
                 'fifo_stranded=' + stranded]
        expect(out, rec, verdict, s.counts(), extra=extra)

    # A snapshot cannot say what was stranded.
    s = Stream(psb_period=2048)
    rec = Recording('flush-snapshot', 'snapshot', 16384)
    s.enable()
    s.data(300)
    head = rec.snapshot(s, 0)
    rec.lines.append('FLUSH errno=0 count=%d head_before=0 head=%d'
                     % (nonpad(s, head), head))
    rec.write(top)
    expect(out, rec, 'ok', s.counts([(0, head)], snapshot=True),
           extra=['fifo_flushed=%d' % head, 'fifo_stranded=n/a'])


def snapshot_cases(top, out):
    aux_size = 16384

    # Snapshots far apart: each starts mid-stream (skipped up to its
    # first PSB), wraps the AUX area (two COPY lines), and the records
    # between snapshots are gone: a gap explained by the boundary.
    s = Stream(psb_period=2048)
    rec = Recording('snap-disjoint', 'snapshot', aux_size)
    rec.itrace_start()
    s.enable()
    prev = 0
    segs = []
    for n in (1500, 3000, 2500):
        s.data(n)
        head = rec.snapshot(s, prev)
        segs.append((head - min(aux_size, head - prev), head))
        prev = head
    s.disable()
    rec.write(top)
    expect(out, rec, 'ok', s.counts(segs, snapshot=True), gaps=2,
           why='snapshot')

    # Snapshots close together: each continues the previous one, so the
    # copies form one stream and there is no gap; one has no new data.
    s = Stream(psb_period=2048)
    rec = Recording('snap-contiguous', 'snapshot', aux_size)
    rec.itrace_start()
    s.enable()
    prev = 0
    for n in (300, 600, 0, 900, 50):
        s.data(n)
        prev = rec.snapshot(s, prev)
    rec.write(top)
    expect(out, rec, 'ok', s.counts([(0, prev)], snapshot=True))

    # Inside one snapshot, an OVF is fine and a silent gap is not.
    for name, ovf, verdict in (('snap-ovf', True, 'ok'),
                               ('snap-gap-inside', False, 'fail')):
        s = Stream(psb_period=2048)
        rec = Recording(name, 'snapshot', aux_size)
        s.enable()
        s.data(2000)
        s.drop(3, ovf=ovf)
        s.data(200)
        head = rec.snapshot(s, 0)
        segs = [(head - aux_size, head)]
        rec.write(top)
        bad = verdict == 'fail'
        expect(out, rec, verdict, s.counts(segs, snapshot=True), gaps=1,
               unexplained=int(bad), why='UNEXPLAINED' if bad else 'OVF')


def error_cases(top, out):
    def good(name):
        s = Stream()
        rec = Recording(name)
        s.enable()
        watermarked(s, rec, 50)
        rec.aux(s)
        rec.copy(s)
        return rec

    rec = good('no-records')
    rec.write(top, files=('aux.bin',))
    out.append('no-records error err=records.txt: No such file')

    rec = good('no-bin')
    rec.write(top, files=('records.txt',))
    out.append('no-bin error err=aux.bin: No such file')

    rec = good('bad-header')
    rec.lines[0] = 'ptsim type=42'
    rec.write(top)
    out.append("bad-header error err=the first line is not a 'pmu' header")

    rec = good('bad-mode')
    rec.lines[0] = rec.lines[0].replace('normal', 'sideways')
    rec.write(top)
    out.append("bad-mode error err=unknown mode 'sideways'")

    rec = good('copy-mismatch')
    rec.bin += b'\x00' * 8
    rec.write(top)
    out.append('copy-mismatch error err=COPY lines cover')

    rec = good('copy-not-sequential')
    rec.lines.append('COPY file_off=5 aux_off=99999 size=1')
    rec.write(top)
    out.append('copy-not-sequential error err=COPY file_off=5, expected')

    rec = good('unknown-record')
    rec.lines.append('SAMPLE ip=0x1234')
    rec.write(top)
    out.append("unknown-record error err=unknown record 'SAMPLE'")

    rec = good('bad-number')
    rec.lines.append('AUX offset=12z size=1 flags=0x0')
    rec.write(top)
    out.append("bad-number error err=offset: bad number '12z'")

    rec = good('missing-field')
    rec.lines.append('AUX offset=12 flags=0x0')
    rec.write(top)
    out.append('missing-field error err=missing field(s) in a AUX line')

    rec = good('flush-twice')
    rec.lines.append('FLUSH errno=0 count=0 head_before=0 head=0')
    rec.lines.append('FLUSH errno=0 count=0 head_before=0 head=0')
    rec.write(top)
    out.append('flush-twice error err=a second FLUSH line')

    rec = good('flush-backwards')
    rec.lines.append('FLUSH errno=0 count=0 head_before=10 head=5')
    rec.write(top)
    out.append('flush-backwards error err=FLUSH head below head_before')


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: mktrace.py OUTDIR')
    top = sys.argv[1]
    os.makedirs(top, exist_ok=True)
    out = []
    normal_cases(top, out)
    flush_cases(top, out)
    snapshot_cases(top, out)
    error_cases(top, out)
    with open(os.path.join(top, 'expected.txt'), 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
