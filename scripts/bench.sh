#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make bench": the AUX area benchmark on ours and on upstream, side by side.
#
# Boots the qemu kernel (ours) and the upstream kernel (the same config and
# guest, without the AUX rewrite) side by side, BENCH_BOOTS times (default
# 2, see below), each running
# tools/aux/aux-bench (mode "bench" of the initramfs), under TCG with
# -icount: the guest clock then advances with executed instructions
# (shift=BENCH_ICOUNT, default 0, i.e. 1 ns per instruction), so the
# figures are instruction-driven and repeatable, whatever else the host
# is doing.  The guest has BENCH_SMP CPUs (default 1: with one CPU nothing
# else runs while the kernel times its transactions) and BENCH_MEM memory
# (default 2G: room for the 256 MiB AUX area).
#
# The figures of all CPUs at once (aux-bench --figures cpus, mode
# "bench-cpus", tput_<N>cpu_*) come from boots of their own, as many, with
# BENCH_CPUS CPUs (default 8; 0 leaves them out), so that the one-CPU
# figures above stay what they were.  Under -icount QEMU runs the CPUs of
# a guest in turn in one host thread, on one instruction clock: what the
# figures mean then is on the results page (scripts/bench.py).
#
# scripts/bench.py merges the runs into one "bench: ..." line per
# figure, out/bench/results.json and out/bench/bench.png (gnuplot), and
# writes the results page bench/RESULTS.md (with a copy of the plot,
# bench/bench.png) from them: commit both to publish a run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BENCH_ICOUNT=${BENCH_ICOUNT:-0}
BENCH_SMP=${BENCH_SMP:-1}
BENCH_MEM=${BENCH_MEM:-2G}
BENCH_BOOTS=${BENCH_BOOTS:-2}
BENCH_CPUS=${BENCH_CPUS:-8}
case $BENCH_BOOTS in ''|0|*[!0-9]*) die "bench: BENCH_BOOTS must be a number >= 1" ;; esac
case $BENCH_CPUS in ''|1|*[!0-9]*) die "bench: BENCH_CPUS must be 0 or a number >= 2" ;; esac
B=$OUT/bench
mkdir -p "$B"
mode="TCG -icount shift=$BENCH_ICOUNT,sleep=off, -smp $BENCH_SMP -m $BENCH_MEM"
[ "$BENCH_CPUS" = 0 ] || mode="$mode (the $BENCH_CPUS-CPU figures: -smp $BENCH_CPUS)"
mode="$mode, $BENCH_BOOTS boots of each kernel"
# The two kernels (bench in scripts/kernels.py: ours first) and their
# labels (their sides: ours, upstream).
read -r vo vu <<<"$(variants bench)"
variant_env "$vo"; so=$K_SIDE
variant_env "$vu"; su=$K_SIDE
stage "bench: $so ($vo) and $su ($vu), QEMU $mode"
# Both guests at once: under -icount their figures do not depend on how
# busy the host is, only the wall time does.
# BENCH_BOOTS boots of each kernel (default 2), one after the other: a
# figure that depends on the boot (the pages an area got from the page
# allocator, which the page runs show) differs between boots, not between
# the repetitions of one, so the spread must see more than one boot.
logs_o= logs_u=
boot_pair() {	# boot_pair GUEST-MODE SMP NAME: both kernels, into $B/<kernel>.NAME
	local gmode=$1 smp=$2 name=$3 v i pids=()

	for v in "$vo" "$vu"; do
		rm -rf "${B:?}/$v.$name"
		ICOUNT=$BENCH_ICOUNT SMP=$smp MEM=$BENCH_MEM ACCEL=tcg TIMEOUT=${TIMEOUT:-7200} \
			"$TOP/scripts/boot.sh" "$v" "$gmode" "$B/$v.$name" >"$B/$v.$name.boot.log" 2>&1 &
		pids+=($!)
	done
	for i in 0 1; do
		v=$([ "$i" = 0 ] && echo "$vo" || echo "$vu")
		wait "${pids[$i]}" || die "bench: the $v guest did not finish (see $B/$v.$name/ and $B/$v.$name.boot.log)"
		info "bench: $v boot $name ($gmode, -smp $smp) done ($(sed -n 's/.*seconds=\([0-9]*\).*/\1/p' "$B/$v.$name/boot.info") s)"
	done
	# Kernel splats make a benchmark run worthless: results.py names them.
	"$TOP/scripts/results.py" "$vo=$B/$vo.$name" "$vu=$B/$vu.$name" >"$B/results.$name.txt" ||
		{ cat "$B/results.$name.txt" >&2; die "bench: a benchmark run failed (see above)"; }
	logs_o=$logs_o${logs_o:+,}$B/$vo.$name/tests.log
	logs_u=$logs_u${logs_u:+,}$B/$vu.$name/tests.log
}
for n in $(seq 1 "$BENCH_BOOTS"); do
	boot_pair bench "$BENCH_SMP" "$n"
	[ "$BENCH_CPUS" = 0 ] || boot_pair bench-cpus "$BENCH_CPUS" "cpus.$n"
done
qemu_version=$("$QEMU_BIN" --version | sed -n '1s/.*version \([^ ]*\).*/QEMU \1/p')
"$TOP/scripts/bench.py" --page "$TOP/bench" --mode "$mode" \
	--machine "$(nproc) CPUs, $(uname -m), $(. /etc/os-release && echo "$PRETTY_NAME"), $qemu_version" \
	--out "$B" "$so=$logs_o" "$su=$logs_u"
