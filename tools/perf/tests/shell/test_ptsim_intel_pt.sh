#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ptsim: recorded beside an intel_pt PMU (exclusive)
#
# On an Intel machine with ptsim loaded, both PMUs that write Intel PT
# are registered, and perf's intel-pt module serves both: each event is
# recorded with its own PMU, whose type the AUXTRACE_INFO names for the
# decoder to find the events by, and events of both at once are
# refused.  It skips without either PMU; make check registers a PMU
# named intel_pt that traces nothing (tests/modules/intel_pt_host).

shelldir=$(dirname "$0")
# shellcheck source=lib/ptsim.sh
. "$shelldir/lib/ptsim.sh"

ptsim_need intel_pt ptsim
ptsim_tmpdir

# intel_pt with perf's defaults: recorded by the intel-pt module for
# intel_pt (its trace, if any, is not looked at).
ptsim_record "$tmpdir/intel_pt.log" -o "$tmpdir/intel_pt.data" -e intel_pt// -- true
ptsim_dumped "$tmpdir/intel_pt.data" 0
ptsim_recorded_by intel_pt

# ptsim, as in test_ptsim.sh: recorded for ptsim, and decoded.
data=$tmpdir/ptsim.data
ptsim_record "$tmpdir/ptsim.log" -o "$data" -e ptsim/config1=0xfa0002000/ -- \
	perf test -w noploop 1
ptsim_dumped "$data"
ptsim_recorded_by ptsim
ptsim_decoded "$data" 1000

# Both at once: refused, naming both.
log=$tmpdir/both.log
if perf record -B -N -o "$tmpdir/both.data" -e intel_pt// -e ptsim// -- true >"$log" 2>&1; then
	ptsim_fail "perf record of intel_pt and ptsim events together succeeded" "$log"
fi
if ! grep -q 'intel_pt and ptsim may not be used together' "$log"; then
	ptsim_fail "perf record of intel_pt and ptsim events together: not refused as such" "$log"
fi
echo "perf record: intel_pt and ptsim events together refused"
exit 0
