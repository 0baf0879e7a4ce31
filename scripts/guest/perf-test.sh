#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
# Suite "perf/test" of the check list: perf's own test runner on what the
# series adds to perf, its shell tests in tools/perf/tests/shell
# (test_ptsim*.sh, from the series), which initramfs.sh installs where perf
# test looks for them, tests/shell beside the perf binary.
#
#   perf-test.sh [PATTERN]    perf test PATTERN (default: ptsim)
#
# perf test prints no TAP: one line per test on stderr,
#   " 98: ptsim: snapshot mode                : Ok"
# (or "Skip", "Skip (reason)", "FAILED!").  Each becomes a TAP result named
# by the test's description: Ok is ok, Skip is a SKIP, anything else not
# ok; all of perf test -v's output goes before the results, as TAP
# comments.

log=${AUXLAB_OUT:-/tmp/out}/perf-test.log
mkdir -p "${log%/*}"
perf test -v "${1:-ptsim}" >"$log" 2>&1
echo "# perf test -v ${1:-ptsim}: exit status $?"
sed 's/^/# /' "$log"
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
