# SPDX-License-Identifier: GPL-2.0
"""The trace checker as make check uses it: the host decoder
(build/host/aux-decode, make guest) with --tap, into results.py, on
synthetic ptsim traces written here (binary, so not under data/): a clean
one, one with an unexplained sequence gap, one with an undecodable byte.
Without the decoder the test skips, except under selftest.sh
(AUXLAB_SELFTEST_STRICT=1), where it fails.  See common.py."""
import os
import unittest

from .common import STRICT, TOP, Case, results, run

DECODER = os.path.join(os.environ.get('BUILD', os.path.join(TOP, 'build')), 'host', 'aux-decode')


def trace(d, seqs):
    """A PSB, a PSBEND, then per SEQ (< 256) a ptsim data record: a PTW
    with an 8-byte payload, the sequence number (LE), and six 1-bit TNT."""
    os.makedirs(d)
    aux = b'\x02\x82' * 8 + b'\x02\x23' + b''.join(
        b'\x02\x32' + bytes([s]) + b'\0' * 7 + b'\x06' * 6 for s in seqs)
    with open(f'{d}/aux.bin', 'wb') as f:
        f.write(aux)
    with open(f'{d}/records.txt', 'w') as f:
        f.write('pmu ptsim type=9 config=0x0 mode=normal aux_size=65536\n'
                f'AUX offset=0 size={len(aux)} flags=0x0\n'
                f'COPY file_off=0 aux_off=0 size={len(aux)}\n')


class Decode(Case):

    def test_clean_gap_garbage(self):
        """decode: a clean trace passes; an unexplained sequence gap and an undecodable byte each fail, named"""
        if not os.access(DECODER, os.X_OK):
            if STRICT:
                self.fail(f'no {DECODER} (make guest builds it)')
            raise unittest.SkipTest(f'no {DECODER} (make guest builds it)')
        w = self.scratch()
        trace(f'{w}/clean', [0, 1, 2, 3])
        trace(f'{w}/gap', [0, 1, 3, 4])            # 2 vanished, and nothing says why
        trace(f'{w}/garbage', [0, 1, 2])
        with open(f'{w}/garbage/aux.bin', 'r+b') as f:
            f.seek(28)
            f.write(b'\x02\xff')                   # no such opcode
        _, tap = run(DECODER, '--tap', f'{w}/clean', f'{w}/gap', f'{w}/garbage')
        with open(f'{w}/decode.tap', 'w') as f:
            f.write(tap)
        rc, out = results('--tap', f'x/decode={w}/decode.tap')
        self.assertOutput('decode', out, rc, 1)
