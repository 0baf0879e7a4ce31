#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make run": the demo.  Boots the qemu kernel in "run" mode, where the
# guest lists its PMUs and records a busy shell loop with ptsim through the
# AUX area (aux-record, see the run list in tests/suites.py); the trace
# comes back over the transfer disk into RUNDIR/guest/traces/demo, is
# decoded and checked on the host with aux-decode (libipt), and the last
# line printed is
#
#   aux-run: pmu=ptsim bytes=N aux_records=N packets=N decode_errors=N seq_gaps=N unexplained_gaps=N fifo_flushed=N fifo_stranded=N
#
# fifo_flushed is how far the recorder's final PERF_EVENT_IOC_FLUSH moved
# aux_head; fifo_stranded is how many of the bytes ptsim had queued into
# its FIFO before that flush (its counter) were not in the AUX area after
# it (aux-decode's measure, from the FLUSH line of records.txt).
#
# Exit status 0 only if the guest ran cleanly (every suite passed, no
# kernel splat, /init finished), the trace was decoded, it is not empty,
# it has no decode errors and no unexplained sequence gaps, and the flush
# left nothing stranded.
#
#   run-demo.sh [RUNDIR]      default $OUT/run
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rundir=$(realpath -m "${1:-$OUT/run}")
trace=$rundir/guest/traces/demo
decoder=$BUILD/host/aux-decode
[ -x "$decoder" ] || die "no decoder $decoder; run scripts/build-guest.sh"

why=()	# the reasons the run failed
# boot.sh passes tsc=reliable: without it the clocksource watchdog
# could mark the TSC unstable at a moment that depends on the host's load,
# and from then on perf could not convert the TSC packets of the trace
# into time stamps.
"$TOP/scripts/boot.sh" qemu run "$rundir" || why+=("the guest did not finish cleanly")

# The same verdict "make check" would give on this boot: suites' exit
# status, splats on the console, an unfinished /init.
stage "run: results"
if ! "$TOP/scripts/results.py" run="$rundir" >"$rundir/results.txt" 2>&1; then
	why+=("the guest's results: $(grep -c '^FAIL' "$rundir/results.txt" || true) failures")
	grep '^FAIL' "$rundir/results.txt" || cat "$rundir/results.txt"
fi
grep -h '^aux-record:' "$rundir/tests.log" | sed 's/^/    guest: /' || true

[ -f "$trace/aux.bin" ] && [ -f "$trace/records.txt" ] ||
	die "run: no trace came back from the guest (wanted $trace/aux.bin and records.txt; see $rundir/tests.log)"

stage "run: decoding $trace on the host"
drc=0
"$decoder" "$trace" >"$rundir/decode.txt" || drc=$?
line=$(grep '^aux-decode: dir=' "$rundir/decode.txt" | tail -n1 || true)
[ -n "$line" ] || { cat "$rundir/decode.txt" >&2; die "run: aux-decode printed no summary (exit $drc)"; }
[ $drc -eq 0 ] || why+=("aux-decode exited with $drc (see $rundir/decode.txt)")

field() {	# field NAME: the value of NAME=... in the decoder's summary
	local v
	v=$(grep -o " $1=[^ ]*" <<<"$line" | head -n1 | cut -d= -f2 || true)
	[ -n "$v" ] || die "run: aux-decode's summary has no $1= field: $line"
	echo "$v"
}
pmu=$(awk '$1 == "pmu" { print $2; exit }' "$trace/records.txt")
summary="aux-run: pmu=${pmu:-unknown}"
for k in bytes aux_records packets decode_errors seq_gaps unexplained_gaps fifo_flushed fifo_stranded; do
	summary+=" $k=$(field $k)"
done
bytes=$(field bytes)
[ "$bytes" -gt 0 ] || why+=("the trace is empty")
[ "$bytes" -ge $((1 << 20)) ] || warn "run: only $bytes bytes traced; the demo should give megabytes"
[ "$(field decode_errors)" = 0 ] || why+=("decode errors")
[ "$(field unexplained_gaps)" = 0 ] || why+=("unexplained sequence gaps")
[ "$(field fifo_stranded)" = 0 ] || why+=("data stranded in the FIFO after the flush: $(field fifo_stranded) bytes")
info "trace kept in $trace (aux.bin, records.txt); decoder output in $rundir/decode.txt"

# The perf view of the same demo: perf recorded the loop too (perf-demo in
# the run list); the same perf binary reads it here (a few events of the
# loop's shell, symbolised from the initramfs where perf can: busybox is
# stripped), and perf's checks of
# the perf suite (scripts/perf-check.py) give the perf-run line.
stage "run: perf script on $rundir/guest/perf/demo"
perf_line=
if [ -f "$rundir/guest/perf/demo/perf.data" ]; then
	"$BUILD/perf/perf" script --itrace=qwp --symfs "$BUILD/initramfs" \
		-i "$rundir/guest/perf/demo/perf.data" 2>/dev/null |
		awk '$1 == "sh" && / psb: / && p < 2 { print; p++ }
		     $1 == "sh" && / ptwrite: / && w < 6 { print; w++ }' |
		cut -c1-150 | sed 's/^/    /' || true
	prc=0
	"$TOP/scripts/perf-check.py" --summary "$rundir" >"$rundir/perf.tap" 2>"$rundir/perf.err" || prc=$?
	perf_line=$(grep '^perf-run: ' "$rundir/perf.tap" || true)
	[ $prc -eq 0 ] || {
		grep -A8 '^not ok' "$rundir/perf.tap" | sed 's/^/    /'
		why+=("perf's checks of the demo failed (see $rundir/perf.tap)")
	}
	[ -n "$perf_line" ] || why+=("no perf-run summary (see $rundir/perf.tap)")
else
	why+=("perf recorded nothing (no $rundir/guest/perf/demo/perf.data; see $rundir/tests.log)")
fi
for w in "${why[@]}"; do warn "run: FAILED: $w"; done
echo "$summary"
echo "${perf_line:-perf-run: failed}"
[ ${#why[@]} -eq 0 ]
