#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make check": every test, on both kernels, then the harness's own
# self-test, then one summary.  Boots and self-tests run even if an earlier
# one failed, so a red run names everything that is wrong at once.
#
# The last line printed is "N passed, N failed[, N skipped]".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

VARIANTS=${VARIANTS:-qemu debug}
runs=()
for v in $VARIANTS; do
	"$TOP/scripts/boot.sh" "$v" check "$OUT/check-$v" || true
	runs+=("$v=$OUT/check-$v")
done

taps=()
if [ "${HARNESS_SELFTEST:-1}" = 1 ]; then
	"$TOP/tests/harness/selftest.sh" "$OUT/harness" || true
	taps+=(--tap "harness-selftest=$OUT/harness/tap.txt")
fi

stage "results"
"$TOP/scripts/results.py" --json "$OUT/results.json" "${taps[@]}" "${runs[@]}"
