#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make fuzz": the check list on the debug kernels (FUZZ_CHECK, below),
# then boot a kernel (the debug one unless FUZZ_KERNEL says qemu,
# kcsan or upstream) in fuzz mode, where the guest runs ptsim_fuzz and then
# perf_fuzzer with the options given here (see the fuzz list in
# tests/suites.py), and judge the boot as make check would: the
# fuzzers' TAP (perf_fuzzer fails on any fatal signal or exit of its own,
# see scripts/guest/perf-fuzzer-run), every kernel splat, a guest that did
# not finish.  The last two lines printed are
#
#   perf_fuzzer: kernel=K seed=S ops=N ptsim_opens=N aux_maps=N data_maps=N
#                fixed_refused=N storm_stops=N child_kills=N end=E
#   fuzz: kernel=K seed=S ops=N injections=N leaks=N splats=N failures=N
#         kcsan_ours=N kcsan_elsewhere=N
#
# (the second one's counts are ptsim_fuzz's; splats and failures are the
# whole boot's; kcsan_ours counts the KCSAN reports with an access in
# kernel/events/ or ptsim, which fail and are among the splats,
# kcsan_elsewhere the others, which are listed in the line "kcsan: N
# reports elsewhere: ..." of results.txt and do not fail, see
# scripts/results.py; so are allocation failure reports outside our code,
# on a line "alloc: N failure reports elsewhere: ...").  Those lines and
# every FAIL line of results.txt are printed before the two above.
# Variables:
#   SEED         the fuzzers' seed (default 1)
#   OPS          ptsim_fuzz's operations per phase (default 2000; make
#                check runs 500)
#   PF_OPS       perf_fuzzer's operations (default 20000; 0: not run;
#                make check runs 3000)
#   PF_PCT       the share of perf_fuzzer's events drawn for ptsim and
#                ptsim_mark, in percent (default 50)
#   THREADS      threads of the "threads" phase (default 4)
#   PHASES       phases to run, comma-separated (default all, hotplug
#                included)
#   DURATION     seconds: the phases that are not replayed (threads,
#                hotplug, faults, nth) run this long each instead of OPS
#                operations (ptsim_fuzz -d); e.g. the 30-minute hotplug
#                run, PHASES=hotplug DURATION=1800 SMP=8 PF_OPS=0
#   FUZZ_KERNEL  debug (default: KASAN, lockdep, kmemleak), qemu, upstream
#                or kcsan (ours with KCSAN, configs/kcsan.config: the data
#                race detector, which excludes KASAN; no kmemleak scan),
#                or any other kernel of scripts/kernels.py built here
#                (upstream-debug: upstream's debug form; upstream-6.12:
#                6.12's upstream)
#   FUZZ_CHECK   the kernels booted with make check's list first (default:
#                debug upstream-debug; empty: none)
#   FUZZ_MANY    the kernels booted next with the 8-CPU list and more than
#                64 CPUs (default: many; empty: none)
#   SMP          the guest's CPUs (default 2); the hotplug phase takes
#                CPUs other than CPU 0 away, two at once with 4 or more
#   FAIR_SERVER  1 keeps the fair servers (new in 6.12) on when the
#                hotplug phase runs; by default /init turns them off then
#                (auxlab.fair_server=0): under CPU hotplug they make the
#                scheduler warn, perf or not (tests/ROBUSTNESS.md)
#   TIMEOUT      host-side limit in seconds (default from OPS, see below)
# Output in out/fuzz-<kernel>/ (console.log, tests.log, results.txt,
# guest/diff/ptsim_fuzz.trace, guest/perf_fuzzer/: its output and its log,
# which its replay_log replays).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

v=${FUZZ_KERNEL:-debug}
# Any kernel built here, on any base (scripts/kernels.py).
built=$(for b in $(variants bases); do python3 "$TOP/scripts/kernels.py" list built "$b"; done | xargs)
[[ " $built " == *" $v "* ]] || die "fuzz: FUZZ_KERNEL=$v is not a kernel built here ($built)"
seed=${SEED:-1}
ops=${OPS:-2000}
pf_ops=${PF_OPS:-20000}
pf_pct=${PF_PCT:-50}
secs=${DURATION:-0}
case $seed$ops$pf_ops$pf_pct$secs in *[!0-9]*) die "fuzz: SEED, OPS, PF_OPS, PF_PCT and DURATION must be numbers" ;; esac
rundir=$OUT/fuzz-$v
append="auxlab.seed=$seed auxlab.ops=$ops auxlab.pfops=$pf_ops auxlab.pfpct=$pf_pct"
[ -n "${THREADS:-}" ] && append+=" auxlab.threads=$THREADS"
# Every phase by default, hotplug included (ptsim_fuzz runs it only when
# -p names it).
append+=" auxlab.phases=${PHASES:-replay,again,limits,unpriv,threads,hotplug,faults,nth}"
[ "$secs" -gt 0 ] && append+=" auxlab.secs=$secs"
case ",${PHASES:-hotplug}," in
*,hotplug,*) [ "${FAIR_SERVER:-0}" = 1 ] || append+=" auxlab.fair_server=0" ;;
esac
# A run is fourteen times OPS operations (eight phases, "threads" and
# "hotplug" four times over).  The debug kernel under TCG ran 2.6 million
# in 62 to 70 min, 620 to 700 a second, on an idle host and on one busy with a make check
# part of the time; allow three times what 250 a second would take, plus
# the boot.
# perf_fuzzer on the debug kernel ran 2000 operations in 37 s (54 a
# second) on a host busy with other builds; allow three times what 25 a
# second would take.
# With DURATION, the four unreplayed phases take that long each and the
# four replayed ones OPS operations each, allowed for as above.
if [ "$secs" -gt 0 ]; then
	export TIMEOUT=${TIMEOUT:-$((600 + 4 * secs + ops * 4 * 3 / 250 + pf_ops * 3 / 25))}
else
	export TIMEOUT=${TIMEOUT:-$((600 + ops * 14 * 3 / 250 + pf_ops * 3 / 25))}
fi

rc=0
# First the check list on the kernels of FUZZ_CHECK (default those
# scripts/kernels.py marks fuzz_check: the debug kernels, ours and
# 7.3's upstream; empty: none), judged as make check judges them but
# without its gates (scripts/check.sh, GATES=0): make check's time goes
# to a second base instead.  Its last line, "N passed, N failed", comes
# before the fuzzers'.
FUZZ_CHECK=${FUZZ_CHECK-$(variants fuzz-check)}
if [ -n "$FUZZ_CHECK" ]; then
	stage "fuzz: the check list on $FUZZ_CHECK"
	VARIANTS=$FUZZ_CHECK SMP8_VARIANTS= GATES=0 "$TOP/scripts/check.sh" || rc=1
fi
# Then more CPUs than 64, as on a large kernel CI machine: the kernels of
# FUZZ_MANY (default those marked fuzz_many: "many", NR_CPUS 128) get
# make check's second boot alone, the 8-CPU list with their row's
# smp8_cpus (72), label "<v>@smp8", judged as make check judges its
# 8-CPU boots (CHECK_BOOTS=0: no main boot).
FUZZ_MANY=${FUZZ_MANY-$(variants fuzz-many)}
if [ -n "$FUZZ_MANY" ]; then
	stage "fuzz: the 8-CPU list with more CPUs on $FUZZ_MANY"
	VARIANTS=$FUZZ_MANY SMP8_VARIANTS=$FUZZ_MANY CHECK_BOOTS=0 GATES=0 \
		"$TOP/scripts/check.sh" || rc=1
fi
APPEND=$append "$TOP/scripts/boot.sh" "$v" fuzz "$rundir" || rc=1

# kmemleak's report after the fuzzers (a kernel with kmemleak, i.e. the
# debug one): unreferenced objects from kernel/events or ptsim fail.
taps=()
if grep -q '^# kmemleak: ' "$rundir/tests.log"; then
	"$TOP/scripts/kmemleak.py" "$rundir/guest/kmemleak.txt" "$BUILD/obj/$v" >"$rundir/kmemleak.tap"
	taps+=(--tap "fuzz-$v/kmemleak-report=$rundir/kmemleak.tap")
	info "kmemleak: $(sed -n 's/^# kmemleak: //p' "$rundir/kmemleak.tap")"
fi

stage "fuzz: results"
"$TOP/scripts/results.py" "${taps[@]}" --objdir "fuzz-$v=$BUILD/obj/$v" \
	"fuzz-$v=$rundir" >"$rundir/results.txt" 2>&1 || rc=1
grep -E '^(FAIL|kcsan:|alloc:)' "$rundir/results.txt" || true
summary=$(sed -n 's/^# ptsim_fuzz: //p' "$rundir/tests.log" | tail -n1)
[ -n "$summary" ] || { summary="seed=$seed ops=? injections=? leaks=?"; rc=1; }
splats=$(grep -c '^FAIL .*/splat:' "$rundir/results.txt" || true)
kcsan_ours=$(grep -c '^FAIL .*/splat: BUG: KCSAN:' "$rundir/results.txt" || true)
kcsan_else=$(sed -n 's/^kcsan: \([0-9]*\) reports elsewhere.*/\1/p' "$rundir/results.txt")
failures=$(grep -c '^FAIL ' "$rundir/results.txt" || true)
pf=$(sed -n 's/^# perf_fuzzer: seed=//p' "$rundir/tests.log" | tail -n1)
if [ "$pf_ops" != 0 ]; then
	[ -n "$pf" ] || { pf="$seed ops=? (no summary: see $rundir/tests.log)"; rc=1; }
	# A fatal signal's instruction, resolved in the binary the guest ran.
	ip=$(sed -n 's/^# auxlab-pf: fatal .* ip=\(0x[0-9a-f]*\).*/\1/p' "$rundir/tests.log" | tail -n1)
	[ -z "$ip" ] || info "perf_fuzzer: the fatal access was in $(addr2line -f -s -e "$BUILD/guest/perf_fuzzer" "$ip" | paste -sd' ')"
	echo "perf_fuzzer: kernel=$v seed=$pf"
fi
echo "fuzz: kernel=$v $summary splats=$splats failures=$failures kcsan_ours=$kcsan_ours kcsan_elsewhere=${kcsan_else:-0}"
exit $rc
