#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The arm64 gate ("make arm64", and part of make check): the AUX area's
# users on arm64 build, unchanged, against ours.
#
# Cross-compiles (ARCH=arm64, CROSS_COMPILE=aarch64-linux-gnu-, under
# ccache) the ours tree's kernel/events/ and the drivers that write into
# the AUX area there: CoreSight (its perf glue, ETMv4/ETE, the TMC with
# its ETF and ETR sinks, CATU, ETB10, TRBE) and the SPE PMU.  The config
# is arm64 tinyconfig + configs/arm64.config (the drivers as modules),
# every option checked to have survived olddefconfig; only those
# directories and objects are built (make kernel/events/
# drivers/hwtracing/coresight/ drivers/perf/arm_spe_pmu.o), in
# $BUILD/obj/arm64, never a whole kernel.
#
# A compile does not link: a function the drivers call that ours no
# longer defines or exports would still compile.  So the gate also reads
# the objects' symbols: everything the driver modules leave undefined
# that kernel/events/ provides must be exported there, and no perf_*
# symbol they need may be missing from it.
#
# Usage: build-arm64.sh [TAPFILE]   (default $OUT/arm64.tap); stage lines
# on stdout, TAP into TAPFILE, exit status 1 if a case failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

TAP=$(realpath -m "${1:-$OUT/arm64.tap}")
O=$BUILD/obj/arm64
X=aarch64-linux-gnu-
FRAG=$TOP/configs/arm64.config
DIRS=(kernel/events/ drivers/hwtracing/coresight/ drivers/perf/arm_spe_pmu.o)
# The objects that must come out of it: the AUX users by name.
WANT=(
	drivers/hwtracing/coresight/coresight-etm-perf.o
	drivers/hwtracing/coresight/coresight-etm4x-core.o
	drivers/hwtracing/coresight/coresight-tmc-etf.o
	drivers/hwtracing/coresight/coresight-tmc-etr.o
	drivers/hwtracing/coresight/coresight-catu.o
	drivers/hwtracing/coresight/coresight-etb10.o
	drivers/hwtracing/coresight/coresight-trbe.o
	drivers/perf/arm_spe_pmu.o
)
mkdir -p "$O" "$(dirname "$TAP")"
KMAKE=(make -C "$TREE" O="$O" ARCH=arm64 CROSS_COMPILE=$X -j"$JOBS"
	CC="ccache ${X}gcc" HOSTCC="ccache gcc")
export CCACHE_STATSLOG=$O/ccache-stats.log
rm -f "$CCACHE_STATSLOG"

ktap_open "$TAP"
result() {	# result OK? DESCRIPTION [DIAGNOSTIC-FILE]
	ktap_result "$@"
	[ "$1" = 0 ] || warn "arm64: not ok - $2"
}
finish() {
	local rc=0
	ktap_close || rc=1
	info "arm64: $KTAP_CNT_PASS of $((KTAP_TESTNO - 1)) ok in $((SECONDS - start))s; $(ccache_summary) (TAP: $TAP)"
	exit $rc
}
start=$SECONDS

stage "arm64: cross-build of kernel/events/, CoreSight and SPE against ours (log: $O/build.log)"
if ! command -v "${X}gcc" >/dev/null; then
	result 1 "arm64: ${X}gcc is not installed (scripts/deps.sh installs gcc-aarch64-linux-gnu)"
	finish
fi
[ -d "$TREE/kernel/events" ] || die "no assembled tree in $TREE; run make tree"

# The config: arm64 tinyconfig + the fragment, every option checked.
if kconfig_merge "$O" tinyconfig "$FRAG" 2>"$O/config.err"; then
	result 0 "config: the $(grep -c '^CONFIG_' "$FRAG") options of configs/arm64.config survived olddefconfig"
else
	result 1 "config: configs/arm64.config not honoured by olddefconfig" "$O/config.err"
	finish
fi

# The build itself, directories and single objects only.
if "${KMAKE[@]}" "${DIRS[@]}" >"$O/build.log" 2>&1; then
	result 0 "build: ${DIRS[*]} compile for arm64 against ours"
else
	grep -E 'error|Error' "$O/build.log" >"$O/build.err" || tail -n 30 "$O/build.log" >"$O/build.err"
	result 1 "build: ${DIRS[*]} for arm64" "$O/build.err"
	finish
fi
missing=()
for o in "${WANT[@]}"; do [ -f "$O/$o" ] || missing+=("$o"); done
[ -f "$O/kernel/events/built-in.a" ] || missing+=(kernel/events/built-in.a)
result ${#missing[@]} "objects: kernel/events/ and the ${#WANT[@]} AUX users built${missing:+; missing: ${missing[*]}}"

# Link check by symbols.  Driver objects = the modules' objects.
mapfile -t drv < <(cd "$O" && ls drivers/hwtracing/coresight/*.o drivers/perf/arm_spe_pmu.o 2>/dev/null |
	grep -v '\.mod\.o$')
mapfile -t ev < <(cd "$O" && ls kernel/events/*.o)
NM=${X}nm
(cd "$O" && "$NM" --defined-only "${drv[@]}") 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$O/drv.def"
(cd "$O" && "$NM" -u "${drv[@]}") 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u |
	comm -23 - "$O/drv.def" >"$O/drv.undef"
(cd "$O" && "$NM" --defined-only "${ev[@]}") 2>/dev/null | awk 'NF == 3' >"$O/events.nm"
awk '$2 ~ /^[TDRBG]$/ { print $3 }' "$O/events.nm" | sort -u >"$O/events.def"	# global
awk '{ print $3 }' "$O/events.nm" | sort -u >"$O/events.all"	# with the export markers
: >"$O/symbols.err"
used=0
while IFS= read -r s; do
	if grep -qx -- "$s" "$O/events.def"; then
		used=$((used + 1))
		grep -qx -- "__export_symbol_$s\|__ksymtab_$s" "$O/events.all" ||
			echo "$s: defined in kernel/events/ but not exported; the modules cannot use it" >>"$O/symbols.err"
	elif [[ $s == perf_* || $s == __perf_* ]]; then
		echo "$s: used by the drivers, defined nowhere in kernel/events/" >>"$O/symbols.err"
	fi
done <"$O/drv.undef"
[ $used -gt 0 ] || echo "no symbol of kernel/events/ used by the drivers: the check saw nothing" >>"$O/symbols.err"
ok=0
[ -s "$O/symbols.err" ] && ok=1
result $ok "symbols: the $used kernel/events/ symbols the modules use are defined and exported ($(grep -x 'perf_aux_output_begin\|perf_aux_output_end\|perf_aux_output_skip\|perf_aux_output_flag\|perf_get_aux\|perf_report_aux_output_id' "$O/drv.undef" | paste -sd' '))" "$O/symbols.err"
finish
