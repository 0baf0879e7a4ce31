#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What the ptsim tests share: the skip where a PMU is absent, a temporary
# directory removed on exit, and the checks of a recording.
#
# ptsim (Documentation/admin-guide/perf/ptsim.rst) is a PMU that writes
# Intel PT packets into the AUX area without the hardware, which perf
# records and decodes as intel_pt; ptsim_large is the same engine under
# a name perf has no module for, which perf records raw
# (Documentation/perf-raw-aux.txt).  On an Intel machine intel_pt is
# there too, and perf must record each event with its own PMU.

# ptsim_need PMU...: exit 2 (skip) unless every PMU is registered.
ptsim_need()
{
	for pmu in "$@"; do
		if [ ! -d "/sys/bus/event_source/devices/$pmu" ]; then
			echo "No $pmu PMU: skip"
			exit 2
		fi
	done
}

# ptsim_tmpdir: make $tmpdir, removed with what is in it on exit.
ptsim_tmpdir()
{
	tmpdir=$(mktemp -d /tmp/perf-test-ptsim.XXXXXXXXXX)
	trap ptsim_cleanup EXIT
	trap 'ptsim_cleanup; exit 1' TERM INT
}

ptsim_cleanup()
{
	trap - EXIT TERM INT
	case "$tmpdir" in
	/tmp/perf-test-ptsim.*) rm -rf "$tmpdir" ;;
	esac
}

# ptsim_fail MESSAGE [FILE]: say why the test fails, with the end of
# FILE, and exit 1.
ptsim_fail()
{
	echo "FAIL: $1"
	if [ -n "$2" ] && [ -f "$2" ]; then
		tail -n 20 "$2"
	fi
	exit 1
}

# ptsim_record LOG perf-record-arguments...: perf record, its output in
# LOG; fail if it fails.
ptsim_record()
{
	log=$1
	shift
	if ! perf record -B -N "$@" >"$log" 2>&1; then
		ptsim_fail "perf record $*" "$log"
	fi
}

# ptsim_decoded DATA [MIN]: perf script decodes at least MIN (1) of
# ptsim's PTW packets from DATA, without a trace error.
ptsim_decoded()
{
	out=$tmpdir/script.txt
	if ! perf script --itrace=qwe -i "$1" >"$out" 2>&1; then
		ptsim_fail "perf script --itrace=qwe -i $1" "$out"
	fi
	if grep -q 'instruction trace error' "$out"; then
		ptsim_fail "perf script: trace errors in $1" "$out"
	fi
	n=$(grep -c 'ptwrite:' "$out")
	if [ "$n" -lt "${2:-1}" ]; then
		ptsim_fail "perf script: $n PTW packets decoded from $1, want ${2:-1}" "$out"
	fi
	echo "perf script: $n PTW packets decoded from $1"
}

# ptsim_dumped DATA [MIN]: perf report -D shows at least MIN (1)
# AUXTRACE records in DATA and no bad packet.
ptsim_dumped()
{
	out=$tmpdir/dump.txt
	if ! perf report -D -i "$1" >"$out" 2>&1; then
		ptsim_fail "perf report -D -i $1" "$out"
	fi
	if grep -q 'Bad packet' "$out"; then
		ptsim_fail "perf report -D: bad packets in $1" "$out"
	fi
	n=$(grep -c 'PERF_RECORD_AUXTRACE size' "$out")
	if [ "$n" -lt "${2:-1}" ]; then
		ptsim_fail "perf report -D: $n AUXTRACE records in $1, want ${2:-1}" "$out"
	fi
	echo "perf report -D: $n AUXTRACE records in $1"
}

# ptsim_recorded_by PMU: the last ptsim_dumped's recording was made by
# perf's intel-pt module (an AUXTRACE_INFO of Intel PT, type 1, not of
# the raw recorder) for PMU, whose type it names.
ptsim_recorded_by()
{
	out=$tmpdir/dump.txt
	type=$(cat "/sys/bus/event_source/devices/$1/type")
	if ! grep -q 'PERF_RECORD_AUXTRACE_INFO type: 1$' "$out"; then
		grep -A 2 'PERF_RECORD_AUXTRACE_INFO' "$out"
		ptsim_fail "perf report -D: no Intel PT AUXTRACE_INFO (not perf's intel-pt module)"
	fi
	if ! grep -q "^  PMU Type *$type\$" "$out"; then
		grep -A 2 'PERF_RECORD_AUXTRACE_INFO' "$out"
		ptsim_fail "perf report -D: the AUXTRACE_INFO does not name $1 (type $type)"
	fi
	echo "perf report -D: recorded as Intel PT of $1 (type $type)"
}
