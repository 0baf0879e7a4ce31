#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make coverage": which lines and branches of the AUX code make check's
# suites execute, on ours and on upstream.
#
# Two gcov kernels (scripts/build-kernel.sh cov and cov-upstream:
# configs/coverage.config, i.e. CONFIG_GCOV_KERNEL and the fault injection
# of the debug kernel, profiling only kernel/events/aux.o, flush.o and
# the objects of drivers/hwtracing/ptsim/ on ours, kernel/events/ring_buffer.o
# and core.o on upstream) each boot once in mode "coverage": make check's
# suite list, then scripts/guest/gcov-collect, which sends the gcov data
# out through the transfer disk.  On the host lcov reads it against the
# build's objects, and scripts/coverage.py prints one line per file:
#
#   coverage: ours aux.c lines=NN.N% (hit/total) branches=NN.N% (hit/total) ...
#
# and for upstream also its AUX functions alone (what the rewrite
# replaces: tests/coverage/upstream-aux-functions, perf_mmap_aux() among
# them).  Out in out/coverage/: <label>/<file>.unexecuted (file:line,
# function, source text of every line not executed), <label>/html/ (lcov's
# report), <label>/lcov.info, run-<label>/ (the boot's logs).
#
# Goal: at least COVERAGE_GOAL (95) percent of the lines of aux.c and
# flush.c; every line they leave unexecuted is either reached by a test
# or listed, with the reason none can reach it, in
# tests/coverage/unreachable, which is printed with the figures.  An
# unexecuted line not listed there, a listed line that was executed, and a
# figure below the goal fail make coverage (exit status 1).  The suites'
# own results are summarised ("results: ...") but judged by make check.
#
# Variables: COVERAGE_KERNELS (default "ours upstream": the sides whose
# gcov variants scripts/kernels.py names), TIMEOUT.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

GOAL=${COVERAGE_GOAL:-95}
C=$OUT/coverage
kernels=${COVERAGE_KERNELS:-ours upstream}
rc=0
mkdir -p "$C"

# gcov data of one boot into the objects' directory, where lcov finds the
# .gcno files.  The guest names each file by its build path; only the
# part below the objects' directory counts.
place_gcda() {	# place_gcda RUNDIR OBJDIR VARIANT
	local rd=$1 o=$2 v=$3 f rel n=0
	find "$o" -name '*.gcda' -delete
	while IFS= read -r f; do
		rel=${f#*/obj/cov/}
		[ "$rel" != "$f" ] || { warn "coverage[$v]: $f is not under an obj/cov directory"; continue; }
		mkdir -p "$o/$(dirname "$rel")"
		cp "$f" "$o/$rel"
		n=$((n + 1))
	done < <(find "$rd/guest/gcov" -name '*.gcda' 2>/dev/null)
	echo $n
}

for k in $kernels; do
	# The gcov variant of each, its files and goal: scripts/kernels.py.
	v=$(python3 "$TOP/scripts/kernels.py" coverage "$k") || die "coverage: unknown kernel $k"
	variant_env "$v"
	read -ra files <<<"$K_COVERAGE_FILES"
	o=$(realpath "$BUILD/obj/$v")
	rd=$C/run-$k
	rm -rf "$rd" "${C:?}/$k"
	mkdir -p "$C/$k"
	TIMEOUT=${TIMEOUT:-2400} "$TOP/scripts/boot.sh" "$v" coverage "$rd" || {
		warn "coverage[$k]: the guest did not finish cleanly (see $rd)"
		rc=1
	}
	# The suites' results, for the record: make check judges them.
	"$TOP/scripts/results.py" "cov-$k=$rd" >"$rd/results.txt" 2>&1 || true
	info "coverage[$k]: suites: $(tail -n1 "$rd/results.txt")"
	n=$(place_gcda "$rd" "$o" "$k")
	if [ "$n" = 0 ]; then
		warn "coverage[$k]: no gcov data came back (see $rd/tests.log)"
		echo "coverage: FAIL $k: no gcov data"
		rc=1
		continue
	fi
	stage "coverage[$k]: lcov on $n gcov data files"
	# gcov resolves the sources from the objects' directory, as the
	# compiler was given them.
	if ! lcov --quiet --capture --rc lcov_branch_coverage=1 --base-directory "$o" \
		--directory "$o" --output-file "$C/$k/lcov.info" >"$C/$k/lcov.log" 2>&1; then
		tail -n 20 "$C/$k/lcov.log" >&2
		echo "coverage: FAIL $k: lcov failed (see $C/$k/lcov.log)"
		rc=1
		continue
	fi
	genhtml --quiet --branch-coverage --output-directory "$C/$k/html" "$C/$k/lcov.info" \
		>"$C/$k/genhtml.log" 2>&1 || warn "coverage[$k]: genhtml failed (see $C/$k/genhtml.log)"
	args=(--info "$C/$k/lcov.info" --label "$k" --out "$C/$k")
	for f in "${files[@]}"; do args+=(--file "$f"); done
	if [ "$K_COVERAGE_GOAL" = 1 ]; then
		args+=(--goal "aux.c=$GOAL" --goal "flush.c=$GOAL" --unreachable "$TOP/tests/coverage/unreachable")
	else
		# The upstream code our rewrite replaces, function by function
		# (the same list as patches/0100-*.cocci removes, perf_mmap()'s
		# AUX branch among them: perf_mmap_aux() on 7.3).
		for f in ring_buffer.c core.c; do
			args+=(--functions "$f:$(grep -v '^#' "$TOP/tests/coverage/upstream-aux-functions" | paste -sd,)")
		done
	fi
	"$TOP/scripts/coverage.py" "${args[@]}" | tee "$C/$k/summary.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
done

stage "coverage: figures in $C/<kernel>/summary.txt, unexecuted lines in $C/<kernel>/*.unexecuted"
grep -h '^coverage: [a-z]* [a-z_]*\.c' "$C"/*/summary.txt 2>/dev/null || true
exit $rc
