#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make check": every test, on both kernels, then the harness's own
# self-test, then one summary.  Boots and self-tests run even if an earlier
# one failed, so a red run names everything that is wrong at once.  The
# host work that needs no later boot runs beside the boots (beside(),
# below).
#
# Every trace a suite leaves in the guest (one directory per trace under
# $AUXLAB_TRACE_DIR, carried out by the transfer disk into
# out/check-<v>/guest/traces/) is decoded on the host by aux-decode, whose
# TAP (one case per trace) joins the results as suite "<v>/decode".  Output
# that did not come back intact is one failure, "<v>/xfer".
#
# What perf recorded in the guest (suite perf/record) is read on the host
# with the same perf binary and with aux-decode (scripts/perf-check.py):
# suite "<v>/perf", compared between ours and upstream like the decodes.
#
# The kernels (VARIANTS, default those scripts/kernels.py's VARIANTS
# table marks check: qemu upstream) are ours (qemu, and debug: KASAN,
# lockdep, ...), upstream: the base (7.3) with everything of ours but the
# AUX rewrite (patches/series.txt), same qemu config, same guest.  make
# check-6.12 runs this script on upstream and the kernels marked lts:
# upstream-6.12, the same commits on 6.12, with which upstream is
# compared on the suites it runs (the table explains what differs), and
# stock-6.12: Debian 12's own 6.12 kernel, with ptsim.ko built against
# its headers (scripts/stock.sh), running the "stock" list of
# tests/suites.py, compared with upstream-6.12 on those suites (the
# table explains what differs); stock, Debian 13's 7.3, is compared with
# upstream the same way when VARIANTS names both (make check-stock).
# With both qemu and upstream booted, scripts/compare.py compares them:
# every result (ok, not ok, skip) per suite, and every file the suites
# left under $AUXLAB_OUT/diff/, must be identical; a difference is a
# failure of "compare/ours-vs-upstream", named, its lines shown.  The
# rewrite's own KUnit suites ("results" in patches/rewrite) are left out.
#
# Gates: the arm64 cross-build of the AUX users there (build-arm64.sh),
# style, our .kunitconfig files (kunit-check.sh), the series and
# checkpatch, the docs, the decoder's self-test;
# each through run-gate.sh (its TAP deleted first, "not ok" if it dies).
#
# tests/suites.py's table names the suites each kernel must run, with
# their least result counts, and the only skips allowed: a missing, short,
# stale or unlisted suite and any other skip fail.  Its manifest, allowed
# skips and explained differences are generated into $OUT first.
#
# The last line printed is "N passed, N failed[, N skipped]".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# The kernels and what make check does with each: scripts/kernels.py.
VARIANTS=${VARIANTS:-$(variants check)}
export VARIANTS
# Every gate's TAP goes through run-gate.sh: deleted before the gate runs,
# a "not ok" if the gate dies without reporting a failure.
GATE=$TOP/scripts/run-gate.sh
mkdir -p "$OUT"
for f in manifest expected-skips known-bugs; do
	python3 "$TOP/tests/suites.py" "$f" >"$OUT/$f" || die "tests/suites.py $f failed"
done
# What a kernel compared on a subset may explain (its row's compare).
for v in $VARIANTS; do
	variant_env "$v"
	[ "${K_COMPARE#* }" = subset ] || continue
	python3 "$TOP/tests/suites.py" differences "$v" >"$OUT/$v-differences" ||
		die "tests/suites.py differences $v failed"
done
runs=()
objdirs=()	# each run's kernel objects, for KCSAN reports (results.py)
taps=()
decode() {	# decode VARIANT RUNDIR: add the TAP sources of its guest output
	local v=$1 rd=$2 xfer dirs
	rm -f "$rd/xfer.tap" "$rd/decode.tap" "$rd/decode.err"	# an earlier run's
	xfer=$(cat "$rd/xfer.txt" 2>/dev/null || echo "failed: no $rd/xfer.txt")
	if [ "${xfer%%:*}" = failed ]; then
		ktap_one "$rd/xfer.tap" 1 "guest output transfer: ${xfer#failed: }"
		taps+=(--tap "$v/xfer=$rd/xfer.tap")
	fi
	mapfile -t dirs < <(find "$rd/guest/traces" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort)
	# No traces, no "<v>/decode" suite: the manifest fails the run.
	[ ${#dirs[@]} -gt 0 ] || { warn "decode[$v]: the guest left no traces"; return 0; }
	stage "decode[$v]: ${#dirs[@]} traces with aux-decode (TAP: $rd/decode.tap)"
	# No decoder, a crash or no TAP at all still counts: results.py fails a
	# TAP source without results.
	"$GATE" "$v/decode" "$rd/decode.tap" bash -c '"$0" --tap "${@:3}" >"$1" 2>"$2"' \
		"$BUILD/host/aux-decode" "$rd/decode.tap" "$rd/decode.err" "${dirs[@]}" ||
		info "decode[$v]: aux-decode exited with $? (stderr: $rd/decode.err)"
	info "decode[$v]: $(grep -c '^ok ' "$rd/decode.tap") ok, $(grep -c '^not ok ' "$rd/decode.tap") not ok"
	taps+=(--tap "$v/decode=$rd/decode.tap")
}
# perf_check VARIANT RUNDIR: the host half of the perf suite: what perf
# recorded in the guest (guest/perf/<case>/perf.data), read with the same
# perf and with aux-decode (scripts/perf-check.py); TAP suite "<v>/perf".
perf_check() {
	local v=$1 rd=$2
	rm -f "$rd/perf.tap" "$rd/perf.err"
	stage "perf[$v]: perf report, perf script and aux-decode on the perf suite's recordings"
	"$TOP/scripts/perf-check.py" "$rd" >"$rd/perf.tap" 2>"$rd/perf.err" ||
		info "perf[$v]: perf-check.py exited with $? (stderr: $rd/perf.err)"
	info "perf[$v]: $(grep -c '^ok ' "$rd/perf.tap") ok, $(grep -c '^not ok ' "$rd/perf.tap") not ok"
	grep -h '^# [a-z]*: bytes=' "$rd/perf.tap" | sed 's/^# /    /' || true
	taps+=(--tap "$v/perf=$rd/perf.tap")
}
# host_checks VARIANT RUNDIR: a boot's host half, decode and perf.
host_checks() { decode "$1" "$2"; perf_check "$1" "$2"; }

# Host work beside the boots.  A guest's suites mostly keep one of its
# two vCPUs busy, so a boot leaves the host's other core mostly idle:
# what needs no later boot runs in the background instead of between
# them (each boot's host checks beside the next boot; the gates that
# read only the trees beside all of them).  beside NAME COMMAND...
# starts one: its output goes to $OUT/beside/NAME.log, its stage lines
# to their own file, its TAP sources to NAME.taps; join_beside waits for
# every job, then prints each one's output and stage times and adds its
# TAP sources.  A job that dies leaves its TAP files as they are, which
# fails the run (run-gate.sh, results.py).
beside_jobs=()
beside() {
	local name=$1
	shift
	mkdir -p "$OUT/beside"
	rm -f "$OUT/beside/$name".*
	(
		taps=()
		AUXLAB_STAGES=$OUT/beside/$name.stages
		: >"$AUXLAB_STAGES"
		"$@"
		[ ${#taps[@]} -eq 0 ] || printf '%s\n' "${taps[@]}" >"$OUT/beside/$name.taps"
		date +%s >"$OUT/beside/$name.end"
	) >"$OUT/beside/$name.log" 2>&1 &
	beside_jobs+=("$name=$!")
}
join_beside() {
	local j name t
	for j in "${beside_jobs[@]}"; do
		wait "${j#*=}"
		name=${j%%=*}
		info "beside the boots, $name (log $OUT/beside/$name.log):"
		sed 's/^/    | /' "$OUT/beside/$name.log"
		[ ! -s "$OUT/beside/$name.taps" ] || mapfile -t -O ${#taps[@]} taps <"$OUT/beside/$name.taps"
		t=$(cat "$OUT/beside/$name.end" 2>/dev/null) && stage_times "$OUT/beside/$name.stages" "$t"
	done
	beside_jobs=()
}

# The gates that read only the trees and the kernels' configurations
# (GATES=0: none of the gates, for make fuzz's check boots, which are
# judged on their kernels' results alone), beside the boots: the arm64
# cross-build, style, the series and checkpatch, the docs, the decoder's
# self-test, our .kunitconfig files; then, in the same job, the harness
# self-test, which re-assembles the trees (gates_job, below).
tree_gates() {
	# The AUX users of arm64 (CoreSight ETM4x/ETR, TRBE, SPE) build against
	# ours; ARM64=0 skips the gate (a skip, never a pass).
	if [ "${ARM64:-1}" = 1 ]; then
		"$GATE" arm64 "$OUT/arm64.tap" "$TOP/scripts/build-arm64.sh" "$OUT/arm64.tap" ||
			info "arm64: the cross-build gate failed (see $OUT/arm64.tap)"
	else
		ktap_open "$OUT/arm64.tap"
		ktap_test_skip "arm64 cross-build (ARM64=0)" >>"$KTAP_BODY"
		ktap_close
	fi

	# Style gates over our files (SPDX, kernel-doc, sparse, W=1).
	stage "style: SPDX, kernel-doc, sparse, W=1 on our files"
	"$GATE" -o style "$OUT/style.tap" "$TOP/scripts/style.sh" || info "style: a gate failed (see $OUT/style.tap)"

	# The series as reviewers get it: exported, and checkpatch --strict on
	# every patch (zero errors and warnings; a CHECK only if justified).
	stage "series: make series, checkpatch --strict"
	rm -f "$OUT/checkpatch.tap"
	if "$TOP/scripts/make-series.sh" >"$OUT/series.log" 2>&1; then
		"$GATE" checkpatch "$OUT/checkpatch.tap" bash -c '"$0" >"$1" 2>"$2"' \
			"$TOP/scripts/checkpatch-series.sh" "$OUT/checkpatch.tap" "$OUT/checkpatch.err" ||
			info "series: checkpatch found problems (see $OUT/checkpatch.tap)"
	else
		ktap_one "$OUT/checkpatch.tap" 1 "make series" "$OUT/series.log"
	fi

	# The documentation builds with zero warnings (make docs).
	stage "docs: building our pages with Sphinx"
	if "$TOP/scripts/build-docs.sh" >"$OUT/docs.log" 2>&1; then
		ktap_one "$OUT/docs.tap" 0 "make docs: 0 warnings"
	else
		ktap_one "$OUT/docs.tap" 1 "make docs" "$OUT/docs.log"
	fi

	# The trace decoder's own self-test, on synthetic traces (host only).
	stage "tools: aux-decode self-test"
	"$GATE" -o tools/decode-selftest "$OUT/decode-selftest.tap" \
		"$TOP/tests/tools/decode-selftest.sh" "$OUT/decode-selftest" ||
		info "tools: decode-selftest.sh failed (see $OUT/decode-selftest.tap)"

	kunit_gate
}
# Our .kunitconfig files: kunit.py accepts them, and the kernels of
# VARIANTS run what "kunit.py run --kunitconfig=DIR" would
# (scripts/kunit-check.sh).
kunit_gate() {
	stage "kunit: our .kunitconfig files against kunit.py and the kernels' configurations"
	"$GATE" kunitconfig "$OUT/kunitconfig.tap" "$TOP/scripts/kunit-check.sh" "$OUT/kunitconfig.tap" ||
		info "kunit: a .kunitconfig check failed (see $OUT/kunitconfig.tap)"
}
# The harness self-test, after the gates (it re-assembles the trees the
# gates read) and beside the boots, which read no tree but the test
# modules' headers (boot.sh), and those no step of it edits: its
# re-assemblies rewrite only the probe files they add (README, CREDITS,
# tools/aux/, a ptsim header nothing includes), and its guest rebuild
# leaves the initramfs the boots use as it is.
harness_selftest() {
	"$GATE" harness-selftest "$OUT/harness/tap.txt" "$TOP/tests/harness/selftest.sh" "$OUT/harness" || true
}
# gates_job: the gates, then the harness self-test (HARNESS_SELFTEST=0:
# not run).
gates_job() {
	tree_gates
	[ "${HARNESS_SELFTEST:-1}" != 1 ] || harness_selftest
}
# GATES=kunitconfig: that gate alone (make check-6.12: the 6.12 trees'
# .kunitconfig files against their kernels).
case ${GATES:-1} in
0) warn "GATES=0: no gate runs (arm64, style, kunitconfig, series, docs, self-tests)" ;;
kunitconfig) warn "GATES=kunitconfig: the kunitconfig gate alone (no arm64, style, series, docs, self-tests)" ;;
esac
if [ "${GATES:-1}" = 1 ] || [ "${GATES:-1}" = kunitconfig ]; then
	# Their TAP sources, named here: a gate the job never reached has no
	# TAP, and results.py fails a TAP source without results.
	gate_taps=(kunitconfig=kunitconfig.tap)
	[ "${GATES:-1}" != 1 ] || gate_taps+=(arm64=arm64.tap style=style.tap checkpatch=checkpatch.tap
		docs=docs.tap tools/decode-selftest=decode-selftest.tap)
	[ "${GATES:-1}" != 1 ] || [ "${HARNESS_SELFTEST:-1}" != 1 ] || gate_taps+=(harness-selftest=harness/tap.txt)
	for g in "${gate_taps[@]}"; do
		rm -f "$OUT/${g#*=}"
		taps+=(--tap "${g%%=*}=$OUT/${g#*=}")
	done
	if [ "${GATES:-1}" = 1 ]; then beside gates gates_job; else beside gates kunit_gate; fi
fi
# CHECK_BOOTS=0: no main boot (make fuzz's many-CPU run: the second boot
# alone).
main_boots=$VARIANTS
[ "${CHECK_BOOTS:-1}" = 1 ] || { main_boots=; warn "CHECK_BOOTS=0: no main boot of $VARIANTS"; }
for v in $main_boots; do
	# No logs of an earlier run may stand in for a boot that failed to
	# start (the comparison reads them too).
	rm -rf "$OUT/check-$v"
	variant_env "$v"
	"$TOP/scripts/boot.sh" "$v" "$K_MODE" "$OUT/check-$v" || true
	# Debian's kernel has crashed once in early boot under QEMU TCG, an
	# int3 oops in run_timer_softirq() at 1.5 s, before /init (no module
	# loaded, no suite run): a boot, not a test run.  Its likely cause,
	# a stale int3 of its text patching run by another TCG thread, is
	# gone since boot.sh boots it on one (see there); should a boot still
	# die before /init, only for that kernel (retry_before_init in
	# scripts/kernels.py), boot it once more, loudly; its log is kept.
	if [ "$K_RETRY_BEFORE_INIT" = 1 ] && ! grep -q '^HARNESS: guest up' "$OUT/check-$v/tests.log" 2>/dev/null; then
		warn "boot[$v]: the guest never reached /init: $(grep -m1 -E 'Oops:|BUG:|Kernel panic' "$OUT/check-$v/console.log" 2>/dev/null); booting it once more (first console: $OUT/$v-boot1-console.log)"
		cp "$OUT/check-$v/console.log" "$OUT/$v-boot1-console.log" 2>/dev/null
		rm -rf "$OUT/check-$v"
		"$TOP/scripts/boot.sh" "$v" "$K_MODE" "$OUT/check-$v" || true
	fi
	runs+=("$v=$OUT/check-$v")
	[ "$K_FOREIGN" = 1 ] || objdirs+=(--objdir "$v=$BUILD/obj/$v")
	beside "host-$v" host_checks "$v" "$OUT/check-$v"
	# The fuzzer's summary: operations, fault injections, leaks.
	fz=$(sed -n 's/^# ptsim_fuzz: //p' "$OUT/check-$v/tests.log" | tail -n1)
	[ -z "$fz" ] || info "fuzz[$v]: $fz"
done

# The second boot of each kernel but debug (SMP8_VARIANTS, default
# the kernels of VARIANTS whose row in scripts/kernels.py says smp8;
# empty for none): 8 CPUs (its row's smp8_cpus: "many", 72), the smp8 list of
# tests/suites.py (the cases where the number of CPUs matters), run
# label "<v>@smp8", 6 GiB.  Not debug by default: it would cost make
# check 5 minutes.  With debug asked for, 2 GiB (KASAN's set-up of 6 GiB
# costs a minute of TCG time).  KUnit ran in the main boot: not again
# here; nor does lockdep validate (lockdep.prove_locking=0), which it
# does in ours' main boot (configs/lockdep.config; upstream's has the
# same append in scripts/kernels.py): under TCG with 8 CPUs it doubles
# the boot's time.
SMP8_VARIANTS=${SMP8_VARIANTS-$(variants smp8)}
for v in $SMP8_VARIANTS; do
	variant_env "$v"
	l=$v@smp8 rd=$OUT/check-$v-smp8
	rm -rf "$rd"
	SMP=$K_SMP8_CPUS MEM=$K_SMP8_MEM APPEND="kunit.enable=0 lockdep.prove_locking=0" \
		"$TOP/scripts/boot.sh" "$v" smp8 "$rd" || true
	runs+=("$l=$rd")
	objdirs+=(--objdir "$l=$BUILD/obj/$v")
	beside "host-$l" host_checks "$l" "$rd"
done

# The perf_events selftests the way kernel CI runs them, once: the qemu
# kernel (the cheapest; KUnit off) boots with the kselftest list, the
# installed tree's run_kselftest.sh -c perf_events at perf_event_paranoid
# -1 on a root file system with bash and coreutils
# (scripts/guest/kselftest-run), run label "qemu@kselftest", judged by the
# runner's TAP, one result per program.  Not compared: one kernel.  As on
# a CI machine rather than our guest: debugfs not mounted, and three CPUs
# of which CPU 1 is offline (online 0,2: sparse ids; kselftest-run).
# Lockdep validated in the main boot; not here (as smp8, above).
# (The kernels: kselftest in scripts/kernels.py, if among VARIANTS: qemu
# in make check; debug, the slowest, in make fuzz's check phase, with a
# limit of its row's timeout if that is longer.)
for v in $(variants kselftest); do
	[[ " $VARIANTS " == *" $v "* ]] || continue
	variant_env "$v"
	l=$v@kselftest rd=$OUT/check-$v-kselftest
	rm -rf "$rd"
	SMP=3 TIMEOUT=${TIMEOUT:-$((K_TIMEOUT > 2100 ? K_TIMEOUT : 2100))} \
		APPEND="kunit.enable=0 lockdep.prove_locking=0" \
		"$TOP/scripts/boot.sh" "$v" kselftest "$rd" || true
	runs+=("$l=$rd")
	objdirs+=(--objdir "$l=$BUILD/obj/$v")
done

# perf_fuzzer's short run on each kernel, side by side: random, so its
# figures differ between kernels and are not compared; its pass or fail
# is in each run's TAP (scripts/guest/perf-fuzzer-run).  A fatal access
# is resolved to the fuzzer's function.
for v in $main_boots; do
	pf=$(sed -n 's/^# perf_fuzzer: seed=//p' "$OUT/check-$v/tests.log" 2>/dev/null | tail -n1)
	info "perf_fuzzer[$v]: seed=${pf:-? (no summary)}"
	ip=$(sed -n 's/^# auxlab-pf: fatal .* ip=\(0x[0-9a-f]*\).*/\1/p' "$OUT/check-$v/tests.log" 2>/dev/null | tail -n1)
	[ -z "$ip" ] || info "perf_fuzzer[$v]: the fatal access was in $(addr2line -f -s -e "$BUILD/guest/perf_fuzzer" "$ip" | paste -sd' ')"
done

join_beside

# Each kernel against the one its row of scripts/kernels.py compares it
# with (compare), if both were booted.  "all": ours (qemu) against
# upstream, the same guest must give the same results, every result and
# every file under $AUXLAB_OUT/diff, in the main boots and in the 8-CPU
# ones (suite compare/ours-vs-upstream[@smp8]).  "subset": a Debian
# stock kernel against the upstream kernel of its base, on the suites
# the stock boot runs, and upstream against upstream-6.12, on the suites
# upstream runs: the same results, or a difference tests/suites.py
# explains (what ptsim as a module and a kernel without this series
# cannot do, a 7.x behaviour).
# versus V W KIND SUFFIX: compare run check-V$SUFFIX with check-W$SUFFIX.
versus() {
	local v=$1 w=$2 kind=$3 sfx=$4 vs ws tap name
	variant_env "$w"
	ws=$K_SIDE
	variant_env "$v"
	vs=$K_SIDE
	name=compare/$vs-vs-$ws${sfx/-/@}
	if [ "$kind" = all ]; then
		# qemu's is compare.tap; another variant's its own.
		tap=$OUT/compare$sfx.tap
		[ "$v" = qemu ] || tap=$OUT/compare-$v$sfx.tap
		stage "compare${sfx:+[${sfx#-}]}: $vs ($v) vs $ws, every result and every file under \$AUXLAB_OUT/diff"
		if compare_runs "$OUT/check-$v$sfx" "$OUT/check-$w$sfx" "$tap"; then
			info "compare${sfx:+[${sfx#-}]}: identical ($(grep -c '^ok ' "$tap") suites and files)"
		else
			warn "compare${sfx:+[${sfx#-}]}: $vs and $ws differ (TAP: $tap):"
			grep -v '^ok \|^TAP version\|^1\.\.' "$tap" | head -n 80 | sed 's/^/    /'
		fi
	else
		tap=$OUT/compare-$v.tap
		stage "compare[$v]: $v vs $ws, on the $v boot's suites"
		if "$TOP/scripts/compare.py" --names "$v,$ws" --subset \
			--explained "$OUT/$v-differences" \
			"$OUT/check-$v" "$OUT/check-$w" >"$tap" 2>&1; then
			info "compare[$v]: $(grep -c '^ok ' "$tap") suites and files identical or explained"
		else
			warn "compare[$v]: $v and $ws differ (TAP: $tap):"
			grep -v '^ok \|^TAP version\|^1\.\.' "$tap" | head -n 80 | sed 's/^/    /'
		fi
		grep '(explained: ' "$tap" | sed 's/^ok [0-9]* - /    explained: /' || true
	fi
	taps+=(--tap "$name=$tap")
}
for v in $VARIANTS; do
	variant_env "$v"
	[ -n "$K_COMPARE" ] || continue
	read -r w kind <<<"$K_COMPARE"
	[[ " $VARIANTS " == *" $w "* ]] || continue
	versus "$v" "$w" "$kind" ""
	[ "$kind" = all ] || continue
	[[ " $SMP8_VARIANTS " == *" $v "* && " $SMP8_VARIANTS " == *" $w "* ]] || continue
	versus "$v" "$w" "$kind" -smp8
done

stage "results"
# The stage lines are collected by make (the Makefile's AUXLAB_STAGES);
# run by hand, there are none.
if [ -n "${AUXLAB_STAGES:-}" ]; then
	info "the stages' times (from $AUXLAB_STAGES):"
	stage_times
fi
# The manifest and the allowed skips, from tests/suites.py (above).
# make series reports $OUT/results.json in the cover letter as make
# check's last run: only a whole make check writes it (every kernel and
# gate); any other run (make fuzz's check boots, VARIANTS=..., GATES=0)
# writes results-partial.json.
json=$OUT/results.json
if [ "$VARIANTS" != "$(variants check)" ] || [ "$SMP8_VARIANTS" != "$(VARIANTS='' variants smp8)" ] ||
	[ "${GATES:-1}" != 1 ] || [ "${HARNESS_SELFTEST:-1}" != 1 ] || [ "${CHECK_BOOTS:-1}" != 1 ]; then
	json=$OUT/results-partial.json
	info "not a whole make check: results in $json, not results.json (the cover letter's)"
fi
"$TOP/scripts/results.py" --json "$json" \
	--manifest "$OUT/manifest" --expected-skips "$OUT/expected-skips" \
	--known-bugs "$OUT/known-bugs" \
	"${taps[@]}" "${objdirs[@]}" "${runs[@]}"
