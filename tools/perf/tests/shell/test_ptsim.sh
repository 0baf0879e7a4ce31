#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ptsim: record and decode a simulated Intel PT trace (exclusive)
#
# perf records ptsim as intel_pt (-e ptsim//, perf's default terms),
# perf report -D dumps the packets and perf script --itrace decodes
# ptsim's PTW packets, without a bad packet or a trace error.

shelldir=$(dirname "$0")
# shellcheck source=lib/ptsim.sh
. "$shelldir/lib/ptsim.sh"

ptsim_need ptsim
ptsim_tmpdir

data=$tmpdir/perf.data
# One tick a millisecond, 8 records of 16 bytes each: about 128 KB of
# trace, which perf report -D and perf script read in seconds under
# emulation too.  config1 is rate=8,period=1000 (ptsim's tick in us):
# perf takes a term "period" for the sample period.
ptsim_record "$tmpdir/record.log" -o "$data" -e ptsim/config1=0xfa0002000/ -- \
	perf test -w noploop 1
ptsim_dumped "$data"
ptsim_recorded_by ptsim
ptsim_decoded "$data" 1000
exit 0
