#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
# The guest half of the perf suite (suite "perf/record" of the check list),
#
#   perf-record.sh [CASE...]    the cases named, or all of them
#
# (the 8-CPU boot of make check runs "cpu sample"):
# the perf tool of the assembled tree records ptsim through the AUX area,
# one case per directory under $AUXLAB_OUT/perf/, which the transfer disk
# carries to the host.  There scripts/perf-check.py reads every recording
# with the same perf binary (perf report -D, perf script) and with
# aux-decode, and gives the verdicts (suite "<kernel>/perf").
#
# Here a case passes if perf record exited with 0 and wrote a non-empty
# perf.data.  Each directory also holds record.log, perf record's output
# (its "AUX data lost" / "had gaps" warnings are checked on the host), and
# case.txt, what the host needs to know: the AUX area size, the mode, the
# number of threads of the workload, the number of CPUs, how long the
# workload spins (ms).  cases.txt names the cases run, for the host to
# check that each came back.
#
# Every workload runs for a fixed stretch of guest time (perf-spin), so
# what a case records does not depend on how fast the guest is; the
# checks on the host only use lower bounds that hold at any speed.
#
# The cases (numbered as in scripts/perf-check.py; tests/suites.py counts
# ALL's words as the suite's least results):
#   task      perf's defaults, per task: perf record -e ptsim//
#   cpu       per CPU, every CPU (-a), an AUX area of 16 MiB (-m ,4096),
#             one spinning thread per CPU: trace from every CPU
#   snapshot  snapshot mode (-S), snapshots taken on SIGUSR2
#   loss      a FIFO that overflows every tick and PARTIAL on the records
#             holding the OVF (ptsim's aux_loss): perf must warn of gaps
#   sample    AUX sampling of an inherited group on 4 threads: a software
#             clock event with aux-sample-size, led by ptsim
#   mark      aux_output: ptsim_mark samples written into ptsim's trace
#   thread    per-thread mmaps (--per-thread) and an AUX area of 1 MiB
#             instead of perf's 4 MiB (-m ,256)
#   switch    --switch-output=signal with a FIFO that holds data back
#             (ptsim.rst: it grows by 1 KiB a tick), on CPU 1 (-C 1: a
#             per-task event's FIFO is written out at every sched-out):
#             the workload, pinned to CPU 1, signals perf record, on
#             CPU 0, after 600 ms and spins on; perf flushes the AUX
#             events (PERF_EVENT_IOC_FLUSH) before it closes the first
#             file, which must then hold all the trace of before
#
# The raw cases: ptsim_large, the same engine registered under a name perf
# has no module for (the series teaches it "ptsim" only), so perf records it
# through the raw path when asked to, --aux-raw
# (tools/perf/Documentation/perf-raw-aux.txt: perf maps a one-page AUX
# area for an event of the PMU, and the kernel lets it).  The terms are
# those perf gives ptsim by default.
#   raw           per task, perf's default AUX area size
#   raw_thread    --per-thread, -m ,256
#   raw_snapshot  -S, snapshots on SIGUSR2
#   raw_loss      the loss case's FIFO overflow, PARTIAL on the records
#   noaux         -m ,16 on cpu-clock, which has no AUX area: perf must
#                 warn that the size is ignored, and record (expect_warn)

O=${AUXLAB_OUT:-/tmp/out}/perf
MS=1000
THREADS=4
CPUS=$(nproc)
ALL="task cpu snapshot loss sample mark thread switch raw raw_thread raw_snapshot raw_loss noaux"
CASES=${*:-$ALL}
n=0
mkdir -p "$O"
# ptsim built as a module has no AUX sampling (caps/aux_sample 0), and
# on a kernel without this series no flush (caps/flush 0, see ptsim.rst):
# cases "sample" and "switch" (whose rotation perf flushes) are then
# skips, and not among the cases the host checks (cases.txt).
cap() { cat "/sys/bus/event_source/devices/ptsim/caps/$1" 2>/dev/null; }
no_aux_sample= no_flush=
[ "$(cap aux_sample)" != 0 ] ||
	no_aux_sample="ptsim has no AUX sampling (a module: caps/aux_sample 0)"
[ "$(cap flush)" != 0 ] ||
	no_flush="the kernel has no PERF_EVENT_IOC_FLUSH (ptsim's caps/flush 0)"
for c in $CASES; do
	case $c in
	sample) [ -z "$no_aux_sample" ] ;;
	switch) [ -z "$no_flush" ] ;;
	esac && printf '%s ' "$c"
done >"$O/cases.txt"

want() {	# want NAME: is case NAME to run?
	case " $CASES " in *" $1 "*) return 0 ;; esac
	return 1
}

# record NAME AUX_BYTES MODE CMD...: run CMD in $O/NAME, one TAP result.
record() {
	name=$1 aux=$2 mode=$3
	shift 3
	want "$name" || return 0
	n=$((n + 1))
	mkdir -p "$O/$name"
	printf 'aux_size %s\nmode %s\nthreads %s\ncpus %s\nms %s\n' \
		"$aux" "$mode" "$THREADS" "$CPUS" "$MS" >"$O/$name/case.txt"
	echo "# $name: $*"
	(cd "$O/$name" && "$@") >"$O/$name/record.log" 2>&1
	rc=$?
	sed 's/^/#   /' "$O/$name/record.log" | tail -n 12
	# --switch-output writes perf.data.<time> files, no perf.data.
	out=$O/$name/perf.data
	if [ "$mode" = switch ]; then
		for out in "$O/$name"/perf.data.*; do
			break
		done
	fi
	if [ $rc -ne 0 ]; then
		echo "not ok $n $name # perf record exited with $rc"
	elif [ ! -s "$out" ]; then
		echo "not ok $n $name # no perf.data"
	else
		# The size goes on a line of its own: a result's name must be
		# the same on every kernel (make check compares them).
		echo "# $name: $(basename "$out") of $(wc -c <"$out") bytes"
		echo "ok $n $name"
	fi
}

# skip NAME REASON: one TAP skip.
skip() {
	want "$1" || return 0
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

# expect_warn NAME MESSAGE CMD...: CMD must succeed, print MESSAGE and
# write a perf.data; one TAP result.
expect_warn() {
	name=$1 msg=$2
	shift 2
	want "$name" || return 0
	n=$((n + 1))
	mkdir -p "$O/$name"
	printf 'mode warn\n' >"$O/$name/case.txt"
	echo "# $name: $*"
	(cd "$O/$name" && "$@") >"$O/$name/record.log" 2>&1
	rc=$?
	sed 's/^/#   /' "$O/$name/record.log" | tail -n 6
	if [ $rc -ne 0 ]; then
		echo "not ok $n $name # perf record exited with $rc"
	elif ! grep -q "$msg" "$O/$name/record.log"; then
		echo "not ok $n $name # perf record did not say: $msg"
	elif [ ! -s "$O/$name/perf.data" ]; then
		echo "not ok $n $name # no perf.data"
	else
		echo "ok $n $name"
	fi
}

echo "TAP version 13"
plan=0
for c in $CASES; do
	case " $ALL " in *" $c "*) ;; *) echo "Bail out! no case $c"; exit 1 ;; esac
	plan=$((plan + 1))
done
echo "1..$plan"
record task 4194304 normal \
	perf record -e ptsim// -- perf-spin "$MS"
# -m ,4096: 16 MiB per CPU is more than ptsim writes in the run (at most
# 14.3 MB per CPU seen, debug kernel), so the case does not depend on
# perf's reader keeping up: with perf's default 4 MiB, on the debug
# kernel under TCG with both CPUs spinning, the reader once fell behind,
# the buffer filled, and the TRUNCATED gap failed the case's "no loss"
# checks.  The loss case tests loss.
record cpu 16777216 normal \
	perf record -a -m ,4096 -e ptsim// -- perf-spin -t "$CPUS" "$MS"
# perf record is the workload's parent, and has its SIGUSR2 handler set
# before it starts it: the workload signals it at 300 and 600 ms, while it
# spins (not a shell between spins: on the debug kernel a shell's start,
# fork and exec took more CPU than the spins, and so most of the
# snapshots).
record snapshot 4194304 snapshot \
	perf record -S -e ptsim// -- perf-spin -s 300 -r 900
# 1024 records (16 KiB) a tick into a 512-byte FIFO drained at 1 KiB a
# tick: every tick drops records and reports them with an OVF.
record loss 4194304 normal \
	perf record -e ptsim/rate=1024,fifo=9,drain=1,aux_loss=1/ -- perf-spin "$MS"
if [ -n "$no_aux_sample" ]; then
	skip sample "$no_aux_sample"
else
	record sample 0 sample \
		perf record -e '{ptsim//,cpu-clock/aux-sample-size=4096/}' -- perf-spin -t "$THREADS" "$MS"
fi
# ptsim_mark samples only with a fixed period (no frequency) and only
# with aux_output: one mark every 8 ticks of its leader's engine.
record mark 4194304 normal \
	perf record -e '{ptsim//,ptsim_mark/aux-output,period=8/}' -- perf-spin "$MS"
record thread 1048576 normal \
	perf record --per-thread -m ,256 -e ptsim// -- perf-spin "$MS"
# 2 KiB a tick (1 ms) into a 4 MiB FIFO drained at 1 KiB a tick
# (ptsim.rst): config1 is rate=128,period=1000,fifo=22,drain=1, as one
# value because perf takes a term "period" for the sample period.
HOLD=config1=0xd8fa0020000
if [ -n "$no_flush" ]; then
	skip switch "$no_flush"
else
	record switch 4194304 switch \
		taskset -c 0 perf record -C 1 --switch-output=signal -e "ptsim/$HOLD/" -- \
		taskset -c 1 perf-spin -s 600 900
fi
RAW=ptsim_large/pt,tsc,branch
record raw 4194304 normal \
	perf record --aux-raw -e "$RAW/" -- perf-spin "$MS"
record raw_thread 1048576 normal \
	perf record --aux-raw --per-thread -m ,256 -e "$RAW/" -- perf-spin "$MS"
record raw_snapshot 4194304 snapshot \
	perf record --aux-raw -S -e "$RAW/" -- perf-spin -s 300 -r 900
record raw_loss 4194304 normal \
	perf record --aux-raw -e "$RAW,rate=1024,fifo=9,drain=1,aux_loss=1/" -- perf-spin "$MS"
expect_warn noaux "no event has an AUX area perf records" \
	perf record -m ,16 -e cpu-clock -- perf-spin 100
