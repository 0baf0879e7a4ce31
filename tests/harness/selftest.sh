#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the harness: proves that what "make check" reports can be
# trusted.  Writes TAP to OUTDIR/tap.txt, which check.sh folds into the
# summary.
#
#  - the unit tests of tests/harness/ (test_*.py, via tap.py): results.py,
#    the ours-vs-upstream comparison (compare.py), the gates' TAP, the
#    trace checker (aux-decode --tap) and perf-check.py's perf.data reader
#    on the files of tests/harness/data/, each kind of failure alone
#    turning a green run red, named; one result each.
#  - a real boot ("selftest" mode) that loads a KUnit module with a failing
#    case and a WARN_ON, and runs a kselftest with a failing case: all three
#    must be reported, and nothing else; a file a suite leaves in
#    $AUXLAB_OUT comes back intact through the transfer disk.
#  - the patch series mechanism: a commit applies, reverses and re-applies
#    to identical trees; a commit that no longer applies fails, naming it;
#    a commit after patches/series.txt's "rewrite:" line and the overlay
#    file it claims go into ours only, everything else into both;
#    re-assembly rewrites only the edited file, in both trees.
#  - make series: the sender's identity comes from GIT_AUTHOR_NAME/EMAIL
#    or git config, and its absence fails; a fix: commit after one that
#    is not a fix fails the series.
#  - the base download: a checksum mismatch is refused; a pinned version
#    gone from the archive falls back to the newest 6.12 with a warning.
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

D=$(realpath -m "${1:-$OUT/harness}")
rm -rf "$D"
mkdir -p "$D"
TAP=$D/tap.txt
ktap_open "$TAP"
result() {	# result OK? DESCRIPTION
	ktap_result "$@"
	if [ "$1" = 0 ]; then
		info "harness self-test: ok $((KTAP_TESTNO - 1)) $2"
	else
		warn "harness self-test: not ok $((KTAP_TESTNO - 1)) $2 (see $D)"
	fi
}
RESULTS=$TOP/scripts/results.py

stage "harness self-test: unit tests (tests/harness/test_*.py)"
# See the list above: one result per test, each failure's diff in
# unittest.log.  Nothing may skip here (AUXLAB_SELFTEST_STRICT).
rc=0
AUXLAB_SELFTEST_STRICT=1 python3 "$TOP/tests/harness/tap.py" >"$D/unittest.txt" 2>"$D/unittest.log" || rc=$?
while read -r st desc; do
	case $st in
	ok) result 0 "${desc#* - }" ;;
	not) result 1 "${desc#ok * - }" ;;
	esac
done <"$D/unittest.txt"
# tap.py itself failing (a crash before any result) is a failure of its own.
if [ $rc -gt 1 ] || [ ! -s "$D/unittest.txt" ]; then
	result 1 "unit tests: tap.py failed, exit status $rc"
fi

stage "harness self-test: the series' sender and the fixes-first rule"
# sender_identity: GIT_AUTHOR_* first, then the repository's git config;
# with neither (no global or system config either), a clear failure.
I=$D/ident
git init -q "$I"
noident() { env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "$@"; }
ok=1
if ! noident bash -c '. "$0"; sender_identity "$1"' "$TOP/scripts/lib.sh" "$I" 2>"$D/ident.err" &&
	grep -q '^no sender identity' "$D/ident.err"; then
	git -C "$I" config user.name 'Repo Config' && git -C "$I" config user.email repo@example.org
	id1=$(noident bash -c '. "$0"; sender_identity "$1" && echo "$SENDER_NAME <$SENDER_EMAIL>"' "$TOP/scripts/lib.sh" "$I")
	id2=$(noident GIT_AUTHOR_NAME='Env Name' GIT_AUTHOR_EMAIL=env@example.org \
		bash -c '. "$0"; sender_identity "$1" && echo "$SENDER_NAME <$SENDER_EMAIL>"' "$TOP/scripts/lib.sh" "$I")
	[ "$id1" = 'Repo Config <repo@example.org>' ] && [ "$id2" = 'Env Name <env@example.org>' ] && ok=0
fi
result $ok "series: the sender is GIT_AUTHOR_NAME/EMAIL, else git config user.name/email; neither fails, saying so"
# A fix: commit after one that is not a fix fails the series, naming
# both; the same commits with the fix first pass that check (and stop
# later: they have no content).
mkplan() {	# mkplan FILE FIRST SECOND: two commits, "b" the fix
	printf 'cover: c\n\nbody\n\n' >"$1"
	for s in "$2" "$3"; do
		printf 'commit: %s\n' "$s"
		[ "$s" = b ] && printf 'fix: fixes b\n'
		printf '\nbody of %s\n\n' "$s"
	done >>"$1"
}
mkplan "$D/plan-bad" a b
mkplan "$D/plan-good" b a
ms() { GIT_AUTHOR_NAME=x GIT_AUTHOR_EMAIL=x@example.org SERIES=$1 BUILD=$D/ms-build OUT=$D/ms-out \
	"$TOP/scripts/make-series.sh" >"$2" 2>&1; }
ok=1
if ! ms "$D/plan-bad" "$D/ms-bad.log" &&
	grep -q 'the fix: commit "b" comes after "a", which is not a fix' "$D/ms-bad.log" &&
	! ms "$D/plan-good" "$D/ms-good.log" && ! grep -q 'fix: commit' "$D/ms-good.log" &&
	grep -q 'has no commit with content' "$D/ms-good.log"; then
	ok=0
fi
result $ok "series: a fix: commit after a commit that is not a fix fails, named; fixes first pass"

finish() {
	ktap_close
	exit
}
# QUICK=1: the unit tests and the series checks alone (seconds, no boot,
# no tree changes).
[ "${QUICK:-0}" != 1 ] || finish

stage "harness self-test: stale guest programs"
# A program whose source is gone must not survive a guest rebuild (it
# would run as a suite of the next check).
sp=$BUILD/guest/perf_events/harness_stale_prog
mkdir -p "$(dirname "$sp")" && printf '#!/bin/sh\necho "1..1"\necho "ok 1 stale"\n' >"$sp" && chmod +x "$sp"
"$TOP/scripts/build-guest.sh" >"$D/build-guest.log" 2>&1
ok=1
[ ! -e "$sp" ] && [ -x "$BUILD/guest/perf_events/ptsim_test" ] && ok=0
result $ok "guest: a rebuild removes a stale program from the guest's suite directory"

stage "harness self-test: a real boot with a failing KUnit case, kselftest and WARN_ON"
r=$D/boot
mkdir -p "$r"
"$TOP/scripts/boot.sh" qemu selftest "$r" >"$D/boot.out" 2>&1
rc=0
"$RESULTS" selftest="$r" >"$r/results.txt" 2>&1 || rc=$?
fails=$(grep -c '^FAIL' "$r/results.txt")
ok=0
[ $rc = 1 ] || ok=1
grep -q '^FAIL selftest/kunit/harness_selftest: harness_selftest_fails$' "$r/results.txt" || ok=1
grep -q '^FAIL selftest/harness/deliberate_fail: global.fails_on_purpose$' "$r/results.txt" || ok=1
grep -Eq '^FAIL selftest/splat: WARNING: .*harness_warn_init' "$r/results.txt" || ok=1
grep -q '^  selftest/kunit/harness_selftest: 1 passed, 1 failed' "$r/results.txt" || ok=1
[ "$fails" = 3 ] || ok=1
result $ok "boot: the failing KUnit case, the failing kselftest and the WARN_ON are each reported, and nothing else ($fails failures)"
ok=1
cmp -s "$r/guest/harness/seq.txt" <(seq 1 200000) && grep -q '^ok files=1$' "$r/xfer.txt" && ok=0
result $ok "boot: a file the guest leaves in \$AUXLAB_OUT comes back intact through the transfer disk"

stage "harness self-test: patch series mechanism"
S=$D/series
mkdir -p "$S"
# The real series, its semantic patches and their macros, plus one commit
# before "rewrite:" (so in both kernels) that edits a file no build reads,
# so the build tree and its mtimes stay untouched (ASSEMBLE_REF: no
# checkout).
cp "$TOP"/patches/series.txt "$TOP"/patches/*.cocci "$TOP"/patches/cocci.h "$S/"
git -C "$TREE" show base:README >"$D/README.a"
sed '1s/.*/Linux kernel (harness self-test)/' "$D/README.a" >"$D/README.b"
{
	printf 'commit: harness self-test: edit README\n\nA shared commit.\n\ndiff --git a/README b/README\n'
	diff -u --label a/README --label b/README "$D/README.a" "$D/README.b"
	echo
} >"$D/zz.stanza"
awk -v f="$D/zz.stanza" '/^rewrite:/ { while ((getline l < f) > 0) print l } { print }' \
	"$TOP/patches/series.txt" >"$S/series.txt"
rc=0
SERIES=$S/series.txt ASSEMBLE_REF=refs/harness/selftest "$TOP/scripts/assemble.sh" --verify >"$D/assemble-good.log" 2>&1 || rc=$?
ok=1
[ $rc = 0 ] && git -C "$TREE" show refs/harness/selftest:README | head -1 | grep -q 'harness self-test' && ok=0
result $ok "series: a commit applies, reverses and re-applies to identical trees"

sed -i 's/^-Linux kernel$/-Linux kernel, edited since/' "$S/series.txt"
rc=0
SERIES=$S/series.txt ASSEMBLE_REF=refs/harness/selftest "$TOP/scripts/assemble.sh" >"$D/assemble-bad.log" 2>&1 || rc=$?
ok=1
[ $rc != 0 ] && grep -q 'commit [0-9]* "harness self-test: edit README" of .* does not apply' "$D/assemble-bad.log" && ok=0
result $ok "series: a commit that no longer applies fails with a message naming it"
git -C "$TREE" update-ref -d refs/harness/selftest 2>/dev/null

# The AUX rewrite goes into ours only: a commit after "rewrite:" (an edit
# and the overlay file it claims, kernel/events/aux-*) must be in ours
# and not in upstream; the shared commit (README, restored) and the other
# overlay files of kernel/events/ (flush.c) in both.
sed -i 's/^-Linux kernel, edited since$/-Linux kernel/' "$S/series.txt"
git -C "$TREE" show base:CREDITS >"$D/CREDITS.a"
sed '1s/.*/(rewrite probe)/' "$D/CREDITS.a" >"$D/CREDITS.b"
rprobe=kernel/events/aux-harness-selftest-probe.txt
{
	printf '\ncommit: harness self-test: rewrite probe\nfiles: %s\n\nOurs only.\n\ndiff --git a/CREDITS b/CREDITS\n' "$rprobe"
	diff -u --label a/CREDITS --label b/CREDITS "$D/CREDITS.a" "$D/CREDITS.b"
} >>"$S/series.txt"
trap 'rm -f "$TOP/$rprobe"' EXIT
echo "harness self-test: rewrite probe" >"$TOP/$rprobe"
rc=0
SERIES=$S/series.txt ASSEMBLE_REF=refs/harness/ours ASSEMBLE_UPSTREAM_REF=refs/harness/upstream \
	"$TOP/scripts/assemble.sh" >"$D/assemble-rewrite.log" 2>&1 || rc=$?
rm -f "$TOP/$rprobe"
has() { git -C "$TREE" cat-file -e "$1:$2" 2>/dev/null; }
first() { git -C "$TREE" show "$1:$2" | head -n1; }
ok=1
[ $rc = 0 ] &&
	has refs/harness/ours "$rprobe" && ! has refs/harness/upstream "$rprobe" &&
	[ "$(first refs/harness/ours CREDITS)" = '(rewrite probe)' ] &&
	[ "$(first refs/harness/upstream CREDITS)" != '(rewrite probe)' ] &&
	first refs/harness/ours README | grep -q 'harness self-test' &&
	first refs/harness/upstream README | grep -q 'harness self-test' &&
	has refs/harness/upstream tools/aux/aux-record.c &&
	has refs/harness/upstream kernel/events/flush.c && ok=0
result $ok "series: the AUX rewrite (a commit after rewrite:, the overlay file it claims) goes into ours only, the rest (flush.c too) into both"
git -C "$TREE" update-ref -d refs/harness/ours 2>/dev/null
git -C "$TREE" update-ref -d refs/harness/upstream 2>/dev/null

# Re-assembly must leave unchanged files alone (their mtimes drive kbuild):
# add a file to the overlay, re-assemble, and only that file may change.
probe=tools/aux/harness-selftest-probe.txt
samples=(Makefile include/linux/perf_event.h kernel/events/core.c tools/aux/aux-pmus.c)
mtimes() { (cd "$TREE" && stat -c '%n %Y.%y' "${samples[@]}"); (cd "$UTREE" && stat -c '%n %Y.%y' "${samples[@]}"); }
"$TOP/scripts/assemble.sh" >"$D/assemble-sync.log" 2>&1	# in sync first
before=$(mtimes)
trap 'rm -f "$TOP/$probe"' EXIT
echo "harness self-test probe" >"$TOP/$probe"
"$TOP/scripts/assemble.sh" >"$D/assemble-probe.log" 2>&1
present=no
[ -f "$TREE/$probe" ] && [ -f "$UTREE/$probe" ] && present=yes
rm -f "$TOP/$probe"
"$TOP/scripts/assemble.sh" >>"$D/assemble-probe.log" 2>&1
ok=1
[ "$before" = "$(mtimes)" ] && [ $present = yes ] &&
	[ "$(grep -c 'tree\[ours\]: .* 1 files changed' "$D/assemble-probe.log")" = 2 ] &&
	[ "$(grep -c 'tree\[upstream\]: .* 1 files changed' "$D/assemble-probe.log")" = 2 ] &&
	[ ! -e "$TREE/$probe" ] && [ ! -e "$UTREE/$probe" ] && ok=0
result $ok "assemble: adding and removing an overlay file rewrites only that file, in both trees"

# The chains are kept by the hash of their inputs (refs/auxlab-memo/):
# an edit inside an overlay file must not be answered from that memo,
# and undoing it must be (the chain built before, the file restored).
cprobe=tools/aux/Makefile
cp "$TOP/$cprobe" "$D/cprobe.orig"
trap 'cp "$D/cprobe.orig" "$TOP/$cprobe"; rm -f "$TOP/$probe"' EXIT
# A new edit each run: the memo keeps the chain of the last one, and the
# same edit again would be answered from it (a second make check in the
# same tree).
echo "# harness self-test: a content edit $(date +%s.%N)" >>"$TOP/$cprobe"
"$TOP/scripts/assemble.sh" >"$D/assemble-memo.log" 2>&1
edited=no
tail -n1 "$TREE/$cprobe" | grep -q 'a content edit' && tail -n1 "$UTREE/$cprobe" | grep -q 'a content edit' && edited=yes
cp "$D/cprobe.orig" "$TOP/$cprobe"
"$TOP/scripts/assemble.sh" >>"$D/assemble-memo.log" 2>&1
ok=1
[ $edited = yes ] && cmp -s "$TOP/$cprobe" "$TREE/$cprobe" && cmp -s "$TOP/$cprobe" "$UTREE/$cprobe" &&
	[ "$(grep -c 'ours: .*: as assembled before' "$D/assemble-memo.log")" = 1 ] &&
	[ "$(grep -c 'upstream: .*: as assembled before' "$D/assemble-memo.log")" = 1 ] && ok=0
result $ok "assemble: an overlay file's edit is assembled, not taken from the memo of chains; undoing it is"

stage "harness self-test: base download"
C=$D/cache
mkdir -p "$C"
# The base's pins (BASE_*: scripts/kernels.py, through lib.sh).
echo "not a package" >"$C/${BASE_PKG}_${BASE_VERSION}_all.deb"
rc=0
AUXLAB_CACHE=$C FETCH_ONLY=1 "$TOP/scripts/fetch-base.sh" >"$D/fetch-bad.log" 2>&1 || rc=$?
ok=1
[ $rc != 0 ] && grep -q 'sha256 mismatch' "$D/fetch-bad.log" && ok=0
result $ok "base: a download whose sha256 differs from the pin is refused"
rm -rf "$C"; mkdir -p "$C"
rc=0
AUXLAB_CACHE=$C FETCH_ONLY=1 BASE_VERSION=$BASE_NAME.0-0~gone "$TOP/scripts/fetch-base.sh" >"$D/fetch-gone.log" 2>&1 || rc=$?
ok=1
[ $rc = 0 ] && grep -q "Falling back to the newest $BASE_NAME" "$D/fetch-gone.log" &&
	ls "$C/${BASE_PKG}_$BASE_NAME."*_all.deb >/dev/null 2>&1 && ok=0
result $ok "base: a pinned version gone from the archive falls back to the newest $BASE_NAME, loudly"
rm -rf "$C"

stage "harness self-test: style gates"
# A header of ours without an SPDX line and with a kernel-doc comment that
# misses its parameter: both gates must fail, naming it.
sprobe=drivers/hwtracing/ptsim/harness-style-probe.h
trap 'rm -f "$TOP/$sprobe"' EXIT
printf '/**\n * probe_fn() - a parameter left undescribed\n */\nint probe_fn(int x);\n' >"$TOP/$sprobe"
"$TOP/scripts/assemble.sh" >"$D/assemble-style.log" 2>&1
rc=0
"$TOP/scripts/style.sh" >"$D/style-bad.tap" 2>&1 || rc=$?
rm -f "$TOP/$sprobe"
"$TOP/scripts/assemble.sh" >>"$D/assemble-style.log" 2>&1
ok=1
[ $rc != 0 ] && grep -q '^not ok 1 spdx' "$D/style-bad.tap" &&
	grep -q 'harness-style-probe.h: no SPDX' "$D/style-bad.tap" &&
	grep -q '^not ok 2 kernel-doc' "$D/style-bad.tap" &&
	grep -q 'probe_fn' "$D/style-bad.tap" && ok=0
result $ok "style: a file without SPDX and a broken kernel-doc comment each fail their gate"

finish
