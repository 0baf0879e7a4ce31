#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of tools/aux/aux-decode on the host, with synthetic ptsim
# recordings from mktrace.py: every case must get the verdict, summary
# fields, packet counts and gap explanations that mktrace.py expects.
# Then the TAP output, the exit status over several DIRs and the usage
# errors.  Prints TAP; exits 1 if anything did not match.
#
# Usage: decode-selftest.sh [WORKDIR]   (default: a temporary directory,
# removed afterwards; a WORKDIR given is kept).  MKTRACE=CMD replaces
# "python3 mktrace.py" (the harness self-test makes it fail).
# Needs gcc, make, python3, libipt-dev and the assembled tree (make tree).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)

if [ $# -ge 1 ]; then
	W=$1
	rm -rf "$W"
	mkdir -p "$W"
else
	W=$(mktemp -d)
	trap 'rm -rf "$W"' EXIT
fi
DEC=$W/aux-decode
T=$W/traces
KTREE=${TREE:-${BUILD:-$TOP/build}/linux}

# TAP by the kernel's own helpers; ktap_finished at the end fails the run
# unless every planned result was written and passed.
# shellcheck source=/dev/null
. "$KTREE/tools/testing/selftests/kselftest/ktap_helpers.sh" ||
	{ echo "Bail out! no ktap_helpers.sh in $KTREE (make tree)"; exit 1; }
ktap_print_header
result() {	# result STATUS DESCRIPTION [DIAGNOSTIC...]
	local st=$1 desc=$2 f=$-
	shift 2
	set -f	# the helpers echo the description unquoted
	if [ "$st" = 0 ]; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
		for d in "$@"; do
			printf '%s\n' "$d" | sed 's/^/# /'
		done
	fi
	[[ $f == *f* ]] || set +f
}

bail() {
	ktap_exit_fail_msg "$*"
}

# The plan comes first: the build, one result per case mktrace.py
# writes, and the EXTRA checks after them.  Before it is known (mktrace.py
# failed) or when a step the rest needs fails, "Bail out!": results.py
# fails the run on it, so a bail-out can never read as "1 passed".
EXTRA=7
${MKTRACE:-python3 "$HERE/mktrace.py"} "$T" >"$W/mktrace.log" 2>&1 ||
	bail "mktrace.py failed: $(tail -n 3 "$W/mktrace.log" | paste -sd' ')"
[ -s "$T/expected.txt" ] || bail "mktrace.py wrote no cases ($T/expected.txt)"
ktap_set_plan $((1 + $(wc -l <"$T/expected.txt") + EXTRA))
# With tools/aux's own Makefile, in the assembled tree (which has
# tools/scripts/Makefile.include and tools/include).
mkdir -p "$W/bin"
make -s -C "$KTREE/tools/aux" O="$W/bin" EXTRA_CFLAGS=-Werror \
	>"$W/build.log" 2>&1 && mv "$W/bin/aux-decode" "$DEC" 2>>"$W/build.log" ||
	bail "aux-decode does not build: $(head -5 "$W/build.log")"
result 0 "aux-decode builds with -Wall -Wextra -Werror"

# One case: run aux-decode -v on it and compare with its expected line.
check_case() {	# check_case NAME VERDICT FIELDS...
	local name=$1 verdict=$2 out err rc want why f errtext=
	local -a diag=()
	shift 2
	out=$("$DEC" -v "$T/$name" 2>"$W/stderr")
	rc=$?
	err=$(cat "$W/stderr")
	case $verdict in
	ok) want=0 ;;
	*) want=1 ;;
	esac
	[ "$rc" = "$want" ] || diag+=("exit status $rc, expected $want")
	if [ "$verdict" = error ]; then
		errtext=${*#err=}
		[[ $err == *"$errtext"* ]] ||
			diag+=("stderr lacks '$errtext': $err")
		! grep -q '^aux-decode: dir=' <<<"$out" ||
			diag+=("summary printed for a malformed directory")
	else
		local sum
		sum=$(grep '^aux-decode: dir=' <<<"$out")
		[ -z "$err" ] || diag+=("unexpected stderr: $err")
		for f in "$@"; do
			case $f in
			types=*)
				f=${f#types=}
				f=${f//:/=}
				grep -qxF "  types: ${f//,/ }" <<<"$out" ||
					diag+=("types line is not '${f//,/ }'")
				;;
			why=UNEXPLAINED)
				grep -q '^  gap: .* UNEXPLAINED' <<<"$out" ||
					diag+=("no UNEXPLAINED gap line")
				;;
			why=*)
				why=${f#why=}
				grep -q "^  gap: .* explained by $why" <<<"$out" ||
					diag+=("no gap 'explained by $why'")
				;;
			*)
				[[ " $sum " == *" $f "* ]] ||
					diag+=("summary lacks $f")
				;;
			esac
		done
	fi
	if [ ${#diag[@]} -eq 0 ]; then
		result 0 "$name: $verdict"
	else
		result 1 "$name: $verdict" "${diag[@]}" "output: $out"
	fi
}

while read -r name verdict rest; do
	# shellcheck disable=SC2086 # fields are space-separated words
	if [ "$verdict" = error ]; then
		check_case "$name" "$verdict" "$rest"
	else
		check_case "$name" "$verdict" $rest
	fi
done <"$T/expected.txt"

# --tap over several DIRs: plan, numbering, basenames, "# " diagnostics,
# exit status 1 because some are not ok.
out=$("$DEC" --tap "$T/clean" "$T/corrupt-byte/" "$T/no-bin" "$T/snap-disjoint")
rc=$?
expect=$(printf '%s\n' "TAP version 13" "1..4" "ok 1 - clean" \
	"not ok 2 - corrupt-byte" "not ok 3 - no-bin" "ok 4 - snap-disjoint")
got=$(grep -v '^# ' <<<"$out")
st=0
[ "$rc" = 1 ] && [ "$got" = "$expect" ] || st=1
grep -q '^# error: .*aux.bin' <<<"$out" || st=1
grep -q '^# aux-decode: dir=.*/clean bytes=' <<<"$out" || st=1
result $st "--tap: plan, one result per DIR, diagnostics, exit 1" \
	"exit status $rc" "$out"

out=$("$DEC" --tap -v "$T/clean" "$T/ovf-ok" "$T/snap-ovf")
rc=$?
st=0
[ "$rc" = 0 ] || st=1
[ "$(grep -c '^ok ' <<<"$out")" = 3 ] || st=1
! grep -vq '^# \|^ok \|^TAP version 13$\|^1\.\.3$' <<<"$out" || st=1
result $st "--tap -v: all ok, exit 0, only TAP lines" "exit status $rc" "$out"

"$DEC" "$T/clean" "$T/ovf-ok" >/dev/null 2>&1
rc=$?
[ "$rc" = 0 ]
result $? "all DIRs ok: exit 0" "exit status $rc"

"$DEC" "$T/clean" "$T/gap-no-reason" "$T/ovf-ok" >"$W/out" 2>&1
rc=$?
st=0
[ "$rc" = 1 ] && [ "$(grep -c '^aux-decode: dir=' "$W/out")" = 3 ] || st=1
result $st "one DIR not ok among three: all decoded, exit 1" \
	"exit status $rc" "$(cat "$W/out")"

"$DEC" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ]
result $? "no DIR: usage error, exit 2" "exit status $rc"

"$DEC" --bogus "$T/clean" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ]
result $? "unknown option: usage error, exit 2" "exit status $rc"

"$DEC" "$W/does-not-exist" >/dev/null 2>"$W/stderr"
rc=$?
[ "$rc" = 1 ] && grep -q 'does-not-exist/records.txt: No such file' "$W/stderr"
result $? "missing DIR: clear error, exit 1" "exit status $rc" "$(cat "$W/stderr")"

ktap_finished
