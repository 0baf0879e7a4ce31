#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
# Suite "perf/test" of the check list: perf's own test runner on what the
# series adds to perf, its shell tests in tools/perf/tests/shell
# (test_ptsim*.sh, from the series), which initramfs.sh installs where perf
# test looks for them, tests/shell beside the perf binary.
#
#   perf-test.sh [-m MODULE] [PATTERN]
#                             perf test PATTERN (default: ptsim); with -m,
#                             MODULE (a test module's name, in
#                             /tests/modules) loaded around the run
#
# The suite modules/intel_pt_host runs the tests again with a PMU named
# intel_pt registered (tests/modules/intel_pt_host), as on an Intel host:
# perf must still give ptsim's events to its intel-pt module with ptsim's
# PMU, not record them raw.  A module that does not load, or does not
# unload after the run, is a Bail out!.
#
# perf test prints no TAP: one line per test on stderr,
#   " 98: ptsim: snapshot mode                : Ok"
# (or "Skip", "Skip (reason)", "FAILED!").  Each becomes a TAP result named
# by the test's description: Ok is ok, Skip is a SKIP, anything else not
# ok; all of perf test -v's output goes before the results, as TAP
# comments.

mod=
if [ "$1" = -m ]; then
	mod=$2
	shift 2
fi
log=${AUXLAB_OUT:-/tmp/out}/perf-test${mod:+-$mod}.log
mkdir -p "${log%/*}"
if [ -n "$mod" ]; then
	if ! insmod "/tests/modules/$mod.ko"; then
		echo "Bail out! insmod $mod.ko failed"
		exit 1
	fi
	pmus=
	for d in /sys/bus/event_source/devices/*; do
		pmus="$pmus ${d##*/}"
	done
	echo "# $mod loaded: PMUs$pmus"
fi
perf test -v "${1:-ptsim}" >"$log" 2>&1
echo "# perf test -v ${1:-ptsim}: exit status $?"
sed 's/^/# /' "$log"
if [ -n "$mod" ] && ! rmmod "$mod"; then
	echo "Bail out! rmmod $mod failed"
	exit 1
fi
res=${log%.log}.results
sed -En 's/^ *[0-9]+: (.*[^ ]) *: (Ok|Skip.*|FAILED!)$/\1|\2/p' "$log" >"$res"
echo "TAP version 13"
echo "1..$(wc -l <"$res")"
n=0 rc=0
while IFS='|' read -r desc status; do
	n=$((n + 1))
	case $status in
	Ok) echo "ok $n $desc" ;;
	Skip*) echo "ok $n $desc # SKIP perf test: $status" ;;
	*) echo "not ok $n $desc # perf test: $status"; rc=1 ;;
	esac
done <"$res"
exit $rc
