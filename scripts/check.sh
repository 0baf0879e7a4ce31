#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make check": every test, on both kernels, then the harness's own
# self-test, then one summary.  Boots and self-tests run even if an earlier
# one failed, so a red run names everything that is wrong at once.
#
# Every trace a suite leaves in the guest (one directory per trace under
# $AUXLAB_TRACE_DIR, carried out by the transfer disk into
# out/check-<v>/guest/traces/) is decoded on the host by aux-decode, whose
# TAP (one case per trace) joins the results as suite "<v>/decode".  Output
# that did not come back intact is one failure, "<v>/xfer".
#
# The kernels (VARIANTS, default "qemu debug upstream") are ours (qemu,
# and debug: KASAN, lockdep, ...) and upstream: the base with everything of
# ours but the AUX rewrite (patches/rewrite), same qemu config, same guest.
# With both qemu and upstream booted, scripts/compare.py compares them:
# every result (ok, not ok, skip) per suite, and every file the suites
# left under $AUXLAB_OUT/diff/, must be identical; a difference is a
# failure of "compare/ours-vs-upstream", named, its lines shown.  The
# rewrite's own KUnit suites ("results" in patches/rewrite) are left out.
#
# Gates: the arm64 cross-build of the AUX users there (build-arm64.sh),
# style, the series and checkpatch, the docs, the decoder's self-test.
#
# The last line printed is "N passed, N failed[, N skipped]".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

VARIANTS=${VARIANTS:-qemu debug upstream}
runs=()
taps=()
decode() {	# decode VARIANT RUNDIR: add the TAP sources of its guest output
	local v=$1 rd=$2 xfer dirs
	rm -f "$rd/xfer.tap" "$rd/decode.tap" "$rd/decode.err"	# an earlier run's
	xfer=$(cat "$rd/xfer.txt" 2>/dev/null || echo "failed: no $rd/xfer.txt")
	if [ "${xfer%%:*}" = failed ]; then
		printf 'TAP version 13\n1..1\nnot ok 1 guest output transfer: %s\n' "${xfer#failed: }" >"$rd/xfer.tap"
		taps+=(--tap "$v/xfer=$rd/xfer.tap")
	fi
	mapfile -t dirs < <(find "$rd/guest/traces" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort)
	[ ${#dirs[@]} -gt 0 ] || return 0
	stage "decode[$v]: ${#dirs[@]} traces with aux-decode (TAP: $rd/decode.tap)"
	# No decoder, a crash or no TAP at all still counts: results.py fails a
	# TAP source without results.
	"$BUILD/host/aux-decode" --tap "${dirs[@]}" >"$rd/decode.tap" 2>"$rd/decode.err" ||
		info "decode[$v]: aux-decode exited with $? (stderr: $rd/decode.err)"
	info "decode[$v]: $(grep -c '^ok ' "$rd/decode.tap") ok, $(grep -c '^not ok ' "$rd/decode.tap") not ok"
	taps+=(--tap "$v/decode=$rd/decode.tap")
}
for v in $VARIANTS; do
	# No logs of an earlier run may stand in for a boot that failed to
	# start (the comparison reads them too).
	rm -rf "$OUT/check-$v"
	"$TOP/scripts/boot.sh" "$v" check "$OUT/check-$v" || true
	runs+=("$v=$OUT/check-$v")
	decode "$v" "$OUT/check-$v"
	# The fuzzer's summary: operations, fault injections, leaks.
	fz=$(sed -n 's/^# ptsim_fuzz: //p' "$OUT/check-$v/tests.log" | tail -n1)
	[ -z "$fz" ] || info "fuzz[$v]: $fz"
done

# perf_fuzzer's short run on each kernel, side by side: random, so its
# figures differ between kernels and are not compared; its pass or fail
# is in each run's TAP (scripts/guest/perf-fuzzer-run).  A fatal access
# is resolved to the fuzzer's function.
for v in $VARIANTS; do
	pf=$(sed -n 's/^# perf_fuzzer: seed=//p' "$OUT/check-$v/tests.log" 2>/dev/null | tail -n1)
	info "perf_fuzzer[$v]: seed=${pf:-? (no summary)}"
	ip=$(sed -n 's/^# auxlab-pf: fatal .* ip=\(0x[0-9a-f]*\).*/\1/p' "$OUT/check-$v/tests.log" 2>/dev/null | tail -n1)
	[ -z "$ip" ] || info "perf_fuzzer[$v]: the fatal access was in $(addr2line -f -s -e "$BUILD/guest/perf_fuzzer" "$ip" | paste -sd' ')"
done

# Ours against upstream: the same guest must give the same results.
if [[ " $VARIANTS " == *" qemu "* && " $VARIANTS " == *" upstream "* ]]; then
	stage "compare: ours (qemu) vs upstream, every result and every file under \$AUXLAB_OUT/diff"
	if compare_runs "$OUT/check-qemu" "$OUT/check-upstream" "$OUT/compare.tap"; then
		info "compare: identical ($(grep -c '^ok ' "$OUT/compare.tap") suites and files)"
	else
		warn "compare: ours and upstream differ (TAP: $OUT/compare.tap):"
		grep -v '^ok \|^TAP version\|^1\.\.' "$OUT/compare.tap" | head -n 80 | sed 's/^/    /'
	fi
	taps+=(--tap "compare/ours-vs-upstream=$OUT/compare.tap")
fi

# The AUX users of arm64 (CoreSight ETM4x/ETR, TRBE, SPE) build against
# ours; ARM64=0 skips the gate (a skip, never a pass).
if [ "${ARM64:-1}" = 1 ]; then
	"$TOP/scripts/build-arm64.sh" "$OUT/arm64.tap" || info "arm64: the cross-build gate failed (see $OUT/arm64.tap)"
else
	printf 'TAP version 13\n1..1\nok 1 - arm64 cross-build # SKIP ARM64=0\n' >"$OUT/arm64.tap"
fi
taps+=(--tap "arm64=$OUT/arm64.tap")

# Style gates over our files (SPDX, kernel-doc, sparse, W=1).
stage "style: SPDX, kernel-doc, sparse, W=1 on our files"
"$TOP/scripts/style.sh" >"$OUT/style.tap" 2>&1 || info "style: a gate failed (see $OUT/style.tap)"
taps+=(--tap "style=$OUT/style.tap")

# The series as reviewers get it: exported, and checkpatch --strict on
# every patch (zero errors and warnings; a CHECK only if justified).
stage "series: make series, checkpatch --strict"
if "$TOP/scripts/make-series.sh" >"$OUT/series.log" 2>&1; then
	"$TOP/scripts/checkpatch-series.sh" >"$OUT/checkpatch.tap" 2>"$OUT/checkpatch.err" ||
		info "series: checkpatch found problems (see $OUT/checkpatch.tap)"
else
	{ printf 'TAP version 13\n1..1\nnot ok 1 - make series\n'; tail -n 20 "$OUT/series.log" | sed 's/^/# /'; } >"$OUT/checkpatch.tap"
fi
taps+=(--tap "checkpatch=$OUT/checkpatch.tap")

# The documentation builds with zero warnings (make docs).
stage "docs: building our pages with Sphinx"
if "$TOP/scripts/build-docs.sh" >"$OUT/docs.log" 2>&1; then
	printf 'TAP version 13\n1..1\nok 1 - make docs: 0 warnings\n' >"$OUT/docs.tap"
else
	{ printf 'TAP version 13\n1..1\nnot ok 1 - make docs\n'; tail -n 20 "$OUT/docs.log" | sed 's/^/# /'; } >"$OUT/docs.tap"
fi
taps+=(--tap "docs=$OUT/docs.tap")

# The trace decoder's own self-test, on synthetic traces (host only).
stage "tools: aux-decode self-test"
"$TOP/tests/tools/decode-selftest.sh" "$OUT/decode-selftest" >"$OUT/decode-selftest.tap" 2>&1 ||
	info "tools: decode-selftest.sh failed (see $OUT/decode-selftest.tap)"
taps+=(--tap "tools/decode-selftest=$OUT/decode-selftest.tap")

if [ "${HARNESS_SELFTEST:-1}" = 1 ]; then
	"$TOP/tests/harness/selftest.sh" "$OUT/harness" || true
	taps+=(--tap "harness-selftest=$OUT/harness/tap.txt")
fi

stage "results"
"$TOP/scripts/results.py" --json "$OUT/results.json" "${taps[@]}" "${runs[@]}"
