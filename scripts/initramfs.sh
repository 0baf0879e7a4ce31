#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 4b: pack busybox-static, the guest programs and the suite lists into
# $BUILD/initramfs.cpio.gz.  One image serves every mode; the kernel command
# line (auxlab.mode=check|run|bench|profile|fuzz|selftest) picks the list
# /init runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

G=$BUILD/guest
# perf_fuzzer's operations in make check (scripts/guest/perf-fuzzer-run).
PF_CHECK_OPS=${PF_CHECK_OPS:-3000}
R=$BUILD/initramfs
BUSYBOX=/bin/busybox
# A dynamic busybox (Debian's "busybox" package) would find no libc in the
# guest: insist on busybox-static, i.e. no program interpreter.
if [ ! -x "$BUSYBOX" ] || readelf -l "$BUSYBOX" | grep -q 'program interpreter'; then
	die "$BUSYBOX is missing or not static (install busybox-static)"
fi

stage "initramfs: packing $R.cpio.gz"
rm -rf "$R"
mkdir -p "$R"/{bin,dev,proc,sys,tmp,tests}
cp "$BUSYBOX" "$R/bin/busybox"
cp "$G/guest-exit" "$R/bin/"
install -m 0755 "$TOP/scripts/guest/init" "$R/init"
cp -r "$G/perf_events" "$G/harness" "$G/modules" "$R/tests/"
cp "$G/aux-pmus" "$G/aux-record" "$G/aux-bench" "$R/tests/"
# perf (scripts/build-perf.sh) and the perf suite's guest half.
[ -x "$BUILD/perf/perf" ] || die "no $BUILD/perf/perf; run scripts/build-perf.sh"
cp "$BUILD/perf/perf" "$G/perf-spin" "$R/tests/"
install -m 0755 "$TOP/scripts/guest/perf-record.sh" "$R/tests/"
# perf_fuzzer, if it was built (scripts/build-perf-fuzzer.sh); without it
# its suite fails, saying why.
for f in perf_fuzzer replay_log; do
	[ -f "$G/$f" ] && cp "$G/$f" "$R/tests/"
done
cp "$G/aux-store-abi" "$R/tests/"
install -m 0755 "$TOP/scripts/guest/perf-fuzzer-run" "$TOP/scripts/guest/kmemleak-scan" \
	"$TOP/scripts/guest/gcov-collect" "$R/tests/"

# check: every perf_events selftest program, upstream's and ours.
# Upstream's "settings" file gives the per-program timeout.
tmo=$(sed -n 's/^timeout=//p' "$TREE/tools/testing/selftests/perf_events/settings" 2>/dev/null)
tmo=${tmo:-120}
need() {	# the path a suite needs (scripts/guest/needs), or -
	awk -v s="$1" '$1 == s { print $2; f = 1 } END { if (!f) print "-" }' "$TOP/scripts/guest/needs"
}
# The fuzzer's short run (its default operation count) needs longer
# than the others on the debug kernel under TCG.
timeout_of() {
	case $1 in ptsim_fuzz) echo 600 ;; *) echo "$tmo" ;; esac
}
# ptsim_fuzz's hotplug phase is make fuzz's, not make check's: CPU
# hotplug under fork and exit alone, no perf involved, makes 6.12's
# scheduler warn "Dying CPU not properly vacated!" now and then
# (tests/ROBUSTNESS.md), which would fail make check for something that
# is not ours.
args_of() {
	case $1 in ptsim_fuzz) echo " -p replay,again,limits,unpriv,threads,faults,nth" ;; esac
}
# The demo (make run, below) and its check suite: the recorder and the
# workload it traces.
DEMO_RECORD="aux-record --flush-at-exit -C 1 -a 1024 -c 0x2401 -1 0x1d8fa0040000"
DEMO_LOAD="taskset -c 1 sh -c 'i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done'"
# One aux-record per CPU, all at once, each on a loop pinned to its CPU;
# every one must succeed (the 8-CPU boot's list, below).
EVERY_CPU_RECORD='rc=0; pids=; for c in $(seq 0 $(($(nproc) - 1))); do aux-record -C $c -o "$AUXLAB_TRACE_DIR/aux_record_cpu$c" -- taskset -c $c sh -c '"'"'i=0; while [ $i -lt 5000 ]; do i=$((i+1)); done'"'"' & pids="$pids $!"; done; for p in $pids; do wait $p || rc=1; done; exit $rc'
{
	echo "# name timeout-seconds needs command"
	for t in $(cd "$G/perf_events" && find . -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort); do
		# A 2 GiB AUX area needs more memory than the main boots have:
		# the 8-CPU boot's (below).
		[ "$t" != ptsim_large_test ] || continue
		echo "perf_events/$t $(timeout_of "$t") $(need "perf_events/$t") ./perf_events/$t$(args_of "$t")"
	done
	# The benchmark's smoke run: every figure once, tiny; it passes if
	# the benchmark works, whatever the numbers (make bench measures).
	echo "aux-bench/smoke 300 - aux-bench --smoke"
	# What an AUX area pins, with a PMU in a module (tests/modules).
	echo "modules/aux_testmod 120 - ./modules/aux_testmod_test"
	# The demo's pipeline (make run) in make check too: aux-record
	# --flush-at-exit, whose FLUSH must succeed; the host decodes the
	# trace (suite <kernel>/decode, case aux_record_flush), which fails
	# on an unexplained gap or a byte the flush left stranded.
	echo "aux-record/flush-at-exit 300 - $DEMO_RECORD -o \"\$AUXLAB_TRACE_DIR/aux_record_flush\" -- $DEMO_LOAD" \
		"&& grep -q '^FLUSH errno=0 ' \"\$AUXLAB_TRACE_DIR/aux_record_flush/records.txt\""
	# perf records ptsim (scripts/guest/perf-record.sh); the host checks
	# the recordings (scripts/perf-check.sh, suite <kernel>/perf).
	echo "perf/record 900 - perf-record.sh"
	echo "perf_fuzzer/aux_store_abi 60 - aux-store-abi"
	# The outside fuzzer's short run: seeded, bounded by operations, half
	# of its events on ptsim (scripts/guest/perf-fuzzer-run); last, so
	# that nothing it may leave behind reaches another suite.
	echo "perf_fuzzer 600 - perf-fuzzer-run $PF_CHECK_OPS 20261124 50"
} >"$R/tests/check.list"
# smp8 (make check's second boot of each kernel, with 8 CPUs and 6 GiB,
# scripts/check.sh): the cases where the number of CPUs matters.  ptsim
# on every CPU at once (every_cpu; perf record -a; one aux-record per
# CPU, each trace decoded on the host), AUX sampling in NMI and of a
# thread, the mlock allowance that scales with the online CPUs, the
# CPU hotplug cases, pause and resume from NMI on every CPU at once, a
# 2 GiB AUX area written past 2^32 bytes.
# Only cases bounded by work, not by time: eight CPUs of a TCG guest on
# two host cores get a small and uneven share each, and the cases that
# trace for a fixed time (per_cpu, the pause/resume ones of one task)
# then see too little to tell (seen on upstream and ours alike).
cat >"$R/tests/smp8.list" <<-LIST
	perf_events/ptsim_test 600 - ./perf_events/ptsim_test -t every_cpu -t pause_resume_every_cpu -t cpu_hotplug_task -t cpu_hotplug_cpu
	perf_events/ptsim_aux_abi_test 600 - ./perf_events/ptsim_aux_abi_test -t aux_sample_nmi -t aux_mlock_limit -t aux_mlock_limit_boundary
	perf_events/ptsim_inherit_test 600 - ./perf_events/ptsim_inherit_test -t aux_sample_thread -t aux_sample_thread_nmi
	perf_events/ptsim_large_test 600 - ./perf_events/ptsim_large_test
	aux-record/every-cpu 300 - $EVERY_CPU_RECORD
	perf/record 900 - perf-record.sh cpu sample
LIST
# coverage (make coverage, scripts/coverage.sh): make check's suites, then
# the gcov data of the profiled objects, for the transfer disk.
{ cat "$R/tests/check.list"; echo "coverage/gcov 120 - gcov-collect"; } >"$R/tests/coverage.list"
# perf (scripts/perf-check.sh alone): the perf suite's recordings only.
grep '^perf/' "$R/tests/check.list" >"$R/tests/perf.list"
# run (the demo, scripts/run-demo.sh): the PMUs, then a busy shell loop on
# CPU 1 traced by a per-CPU ptsim event that holds data back, as trace
# hardware with a large on-chip buffer does: config 0x2401 is pt,tsc,branch
# (perf's default), config1 0x1d8fa0040000 is rate=256
# period=1000 fifo=22 drain=3, i.e. 4 KiB produced and 3 KiB drained per
# 1 ms tick into a 4 MiB FIFO.  When the loop is done the event is still
# running; aux-record --flush-at-exit flushes the FIFO before it stops the
# event, and the host decodes the trace and checks that the flush left
# nothing in the FIFO.  Then perf records the same loop on CPU 1 with
# ptsim's defaults (perf record -C 1 -e ptsim//), which the host reads
# with perf script (scripts/perf-check.py --summary).
cat >"$R/tests/run.list" <<-LIST
	aux-pmus 60 - aux-pmus
	ptsim-demo 300 - $DEMO_RECORD -o "\$AUXLAB_TRACE_DIR/demo" -- $DEMO_LOAD
	perf-demo 300 - mkdir -p "\$AUXLAB_OUT/perf/demo" && cd "\$AUXLAB_OUT/perf/demo" && perf record -C 1 -e ptsim// -- $DEMO_LOAD
LIST
# bench (make bench, scripts/bench.sh): the whole benchmark, each figure
# repeated; the numbers are TAP comments ("# BENCH ...") in tests.log.
# bench-cpus: the figures of all CPUs at once, for make bench's boots
# with BENCH_CPUS CPUs.
cat >"$R/tests/bench.list" <<-'LIST'
	aux-bench 7200 - aux-bench --reps 5
LIST
cat >"$R/tests/bench-cpus.list" <<-'LIST'
	aux-bench/cpus 7200 - aux-bench --reps 5 --figures cpus
LIST
# fuzz (make fuzz, scripts/fuzz.sh): the two fuzzers alone, ours then
# perf_fuzzer, and a kmemleak scan after them (debug kernel), with the options /init takes from the kernel command line
# (auxlab.seed=, auxlab.ops=, auxlab.threads=, auxlab.phases=,
# auxlab.pfops=, auxlab.pfpct=); the host's TIMEOUT bounds them.
cat >"$R/tests/fuzz.list" <<-'LIST'
	perf_events/ptsim_fuzz 86400 - ./perf_events/ptsim_fuzz $AUXLAB_FUZZ_ARGS
	perf_fuzzer 86400 - perf-fuzzer-run $AUXLAB_PF_ARGS
	kmemleak 600 - kmemleak-scan
LIST
# profile (make profile, scripts/profile.sh): one of aux-bench's loads,
# "auxlab.load=<txn|mmap>,<seconds>", sampled from the host.
cat >"$R/tests/profile.list" <<-'LIST'
	aux-bench/load 7200 - aux-bench --load $AUXLAB_LOAD
LIST
# harness/xfer leaves a known file (1.3 MB) for the transfer disk to carry.
cat >"$R/tests/selftest.list" <<-'LIST'
	harness/kunit_module 60 - insmod harness/harness_selftest.ko
	harness/deliberate_fail 60 - harness/deliberate_fail
	harness/xfer 60 - mkdir -p "$AUXLAB_OUT/harness" && seq 1 200000 >"$AUXLAB_OUT/harness/seq.txt"
LIST

(cd "$R" && find . -print0 | sort -z | cpio --null -o -H newc --quiet --reproducible) |
	gzip -1 >"$R.cpio.gz"
info "initramfs: $(du -h "$R.cpio.gz" | cut -f1), $(grep -vc '^#' "$R/tests/check.list") check suites"
