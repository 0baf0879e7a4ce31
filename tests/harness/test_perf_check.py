# SPDX-License-Identifier: GPL-2.0
"""scripts/perf-check.py's own parts, without perf: its reader of
perf.data (AUXTRACE and AUX records per CPU, perf's padding between
AUXTRACE records dropped), the check of case noaux on its record.log
(data/perf-noaux*/) and a perf.data written here, and its TAP.  See
common.py."""
import contextlib
import io
import os
import shutil
import struct

from .common import TOP, Case, data, load

pc = load(os.path.join(TOP, 'scripts', 'perf-check.py'))

CPU = 1 << 7                    # PERF_SAMPLE_CPU


def perf_data(path, records):
    """A perf.data of one event (sample_type CPU, its sample_id trailer on
    the AUX records) holding RECORDS: ('auxtrace', cpu, aux offset, bytes)
    or ('aux', cpu, aux offset, size, flags)."""
    body = b''
    for r in records:
        if r[0] == 'auxtrace':
            _, cpu, off, b = r
            body += struct.pack('<IHHQQQIiII', pc.REC_AUXTRACE, 0, 48, len(b), off, 0, 0, -1,
                                cpu, 0) + b
        else:
            _, cpu, off, size, flags = r
            body += struct.pack('<IHHQQQII', pc.REC_AUX, 0, 40, off, size, flags, cpu, 0)
    attr = struct.pack('<IIQQQ', 0, 128, 0, 0, CPU).ljust(128, b'\0')
    head = b'PERFILE2' + struct.pack('<QQQQQQ', 104, 128, 104, len(attr),
                                     104 + len(attr), len(body))
    with open(path, 'wb') as f:
        f.write(head.ljust(104, b'\0') + attr + body)


class PerfData(Case):

    def test_records_per_cpu(self):
        """perf-check: perf.data's AUXTRACE data and AUX records, per CPU"""
        p = os.path.join(self.scratch(), 'perf.data')
        perf_data(p, [('auxtrace', 0, 0, b'abcdefgh'), ('aux', 0, 0, 8, 0),
                      ('auxtrace', 2, 0, b'ABCDEFGH'), ('aux', 2, 0, 8, pc.AUX_TRUNCATED),
                      ('auxtrace', 0, 8, b'ijklmnop'), ('aux', 0, 8, 8, pc.AUX_COLLISION)])
        bufs, nauxtrace, trimmed = pc.read_perf_data(p)
        self.assertEqual((nauxtrace, trimmed), (3, 0))
        self.assertEqual({cpu: (bytes(b['bytes']), b['copies'], b['aux']) for cpu, b in bufs.items()},
                         {0: (b'abcdefghijklmnop', [(0, 0, 8), (8, 8, 8)],
                              [(0, 8, 0), (8, 8, pc.AUX_COLLISION)]),
                          2: (b'ABCDEFGH', [(0, 0, 8)], [(0, 8, pc.AUX_TRUNCATED)])})

    def test_padding(self):
        """perf-check: perf's zero padding of an AUXTRACE record, overlapped by the next, is dropped"""
        p = os.path.join(self.scratch(), 'perf.data')
        # 5 bytes of trace padded to 8; the next record starts at 5.
        perf_data(p, [('auxtrace', 0, 0, b'abcde\0\0\0'), ('auxtrace', 0, 5, b'fghijk\0\0')])
        bufs, nauxtrace, trimmed = pc.read_perf_data(p)
        self.assertEqual((nauxtrace, trimmed), (2, 3))
        self.assertEqual((bytes(bufs[0]['bytes']), bufs[0]['copies']),
                         (b'abcdefghijk\0\0', [(0, 0, 5), (5, 5, 8)]))

    def test_not_perf_data(self):
        """perf-check: a file that is not a perf.data is refused"""
        p = os.path.join(self.scratch(), 'perf.data')
        with open(p, 'wb') as f:
            f.write(b'PERFILE1' + bytes(200))
        with self.assertRaisesRegex(ValueError, 'not a perf.data file'):
            pc.read_perf_data(p)


class Noaux(Case):
    """Case noaux: perf record with an AUX area size and no AUX event."""

    def check(self, case, records):
        d = self.scratch()
        shutil.copy(data(case, 'record.log'), d)
        perf_data(os.path.join(d, 'perf.data'), records)
        tap = pc.Tap()
        pc.check_noaux(tap, 'noaux', d)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            tap.print()
        self.assertExpected(case, out.getvalue())
        return tap

    def test_pass(self):
        """perf-check: noaux, a warning and a perf.data without AUX data, passes"""
        self.assertEqual(self.check('perf-noaux', []).failed, 0)

    def test_fail(self):
        """perf-check: noaux, no warning and AUX data recorded, fails both checks, saying why"""
        tap = self.check('perf-noaux-aux', [('auxtrace', 0, 0, b'abcdefgh'), ('aux', 0, 0, 8, 0)])
        self.assertEqual(tap.failed, 2)


class TopTask(Case):
    """The report's top task but the idle one, each task's lines summed."""

    def test_workload_over_two_lines(self):
        """perf: the workload's two lines (binary, vDSO) outrank perf's one (debug kernel, CI)"""
        top = [['34.06%', 'perf', 'perf'], ['27.26%', 'perf-spin', '[vdso]'],
               ['27.11%', 'perf-spin', 'perf-spin'], ['5.29%', 'swapper', '[unknown]']]
        self.assertEqual(pc.top_task(top, *pc.SPIN)[0], 'perf-spin')

    def test_perf_on_top_fails(self):
        """perf: perf itself above the workload's own code is not the workload"""
        top = [['60.00%', 'swapper', '[unknown]'], ['20.00%', 'perf', 'perf'],
               ['15.00%', 'perf-spin', 'perf-spin'], ['4.00%', 'perf-spin', 'libc.so']]
        self.assertEqual(pc.top_task(top, *pc.SPIN)[0], 'perf')

    def test_system_wide_ranks_without_perf(self):
        """perf: system wide, perf record above the workload is left out (debug kernel, CI)"""
        top = [['44.10%', 'perf', 'perf'], ['18.69%', 'swapper', '[unknown]'],
               ['16.94%', 'perf-spin', 'perf-spin'], ['10.23%', 'perf-spin', '[vdso]']]
        self.assertEqual(pc.top_task(top, *pc.SPIN, ('swapper', 'perf'))[0], 'perf-spin')

    def test_system_wide_other_task_on_top_fails(self):
        """perf: system wide, another task above the workload's own code is not the workload"""
        top = [['44.10%', 'perf', 'perf'], ['30.00%', 'kworker/0:1', '[unknown]'],
               ['16.94%', 'perf-spin', 'perf-spin'], ['8.00%', 'perf-spin', '[unknown]']]
        self.assertEqual(pc.top_task(top, *pc.SPIN, ('swapper', 'perf'))[0], 'kworker/0:1')


class Report(Case):
    """What perf prints, as 6.12's and 7.3's perf print it."""

    def test_entries_two_and_three_percentages(self):
        """perf: perf report's entries with 6.12's two percentages and 7.3's three"""
        lines = ['# Overhead  Command  Shared Object', '#',
                 '    47.08%  47.08%  perf-spin  [vdso]',
                 '    52.61%  52.64%  52.61%  perf-spin  perf-spin', '', '#', '# (end)']
        self.assertEqual(pc.report_entries(lines), [['47.08%', 'perf-spin', '[vdso]'],
                                                     ['52.61%', 'perf-spin', 'perf-spin']])

    def test_time_conv(self):
        """perf: TIME_CONV's fields, "Muliplier" (6.12's perf) and "Multiplier" (7.3's)"""
        self.assertEqual(pc.time_conv('... Time Muliplier 878160183'), ('mult', 878160183))
        self.assertEqual(pc.time_conv('... Time Multiplier     878160183'), ('mult', 878160183))
        self.assertEqual(pc.time_conv('... Time Shift      31'), ('shift', 31))
        self.assertEqual(pc.time_conv('... Cap Time Zero   1'), (None, None))


class Span(Case):
    """The AUX records' times against the workload's milliseconds."""

    LINE = '1 {} 0x3c0 [0x40]: PERF_RECORD_AUX offset: 0 size: 0xffe flags: 0 []'

    def span(self, times, ms):
        for t in times:
            self.assertTrue(pc.AUX_TIME.match(self.LINE.format(t)))
        tap = pc.Tap()
        with contextlib.redirect_stdout(io.StringIO()):
            pc.check_span(tap, 'raw', {'aux_times': times, 'bytes': 1}, {'ms': str(ms)})
        return tap.failed

    def test_whole_run(self):
        """perf: AUX records over 1020 ms of a 1000 ms workload span it (CI's slow stock boot)"""
        self.assertEqual(self.span([37300621082, 37800000000, 38320705203], 1000), 0)

    def test_short_run_fails(self):
        """perf: AUX records over 1020 ms of a 2000 ms workload, or none, fail"""
        self.assertEqual(self.span([37300621082, 38320705203], 2000), 1)
        self.assertEqual(self.span([], 1000), 1)
        self.assertEqual(self.span([37300621082, 38320705203], 0), 1)
