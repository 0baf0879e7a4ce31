#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ptsim: snapshot mode (exclusive)
#
# perf record -S on ptsim: a SIGUSR2 takes a snapshot of the AUX area,
# which perf report -D dumps and perf script decodes.

shelldir=$(dirname "$0")
# shellcheck source=lib/ptsim.sh
. "$shelldir/lib/ptsim.sh"

ptsim_need ptsim
ptsim_tmpdir

data=$tmpdir/perf.data
# perf record is the parent of the workload's shell and has its SIGUSR2
# handler set before it starts the workload; the shell waits half a
# second for the snapshot to be taken before it ends the recording.
# config1 is ptsim's rate=8,period=1000 (us): 128 bytes a millisecond,
# about 128 KB of trace.
# shellcheck disable=SC2016
ptsim_record "$tmpdir/record.log" -o "$data" -S -e ptsim/config1=0xfa0002000/ -- \
	sh -c 'perf test -w noploop 1; kill -USR2 $PPID; sleep 0.5'
ptsim_dumped "$data"
ptsim_recorded_by ptsim
ptsim_decoded "$data" 100
exit 0
