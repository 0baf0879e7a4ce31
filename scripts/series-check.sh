#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make series-check": prove that the exported series is what a reviewer
# can use.  On a fresh extract of the base package (not $REPO), in
# $BUILD/series-check/ours-7.3/linux (the place of $TREE under $BUILD):
#
#   1. the extract, committed as fetch-base.sh commits it, must be the very
#      commit tagged "base" in $TREE (same package, same bytes);
#   2. git am $OUT/series/*.patch must apply every patch cleanly: no
#      whitespace warnings, no fuzz, no offsets, nothing but "Applying:";
#   3. each applied commit must have the tree of its commit of branch
#      "series" (commit ids differ: make series dates its commits at export
#      time), and the last one the auxlab tree that "make check" tests;
#   4. it must build: the qemu kernel (tinyconfig + configs/qemu.config,
#      by scripts/build-kernel.sh) and, against its uapi headers, the
#      perf_events selftests and tools/aux, with -Werror as build-guest.sh
#      does.
#
# "make bisect-check" (--bisect) then also checks out every commit of the
# series in turn, oldest first, and builds the kernel, plus the userspace
# programs for commits that touch tools/, and reports ok/fail per step.
# Steps build incrementally in one object directory, emptied before the
# first, so each rebuilds only what its commit changed.
#
# The objects go to $BUILD/series-check/ours-7.3/obj/qemu (linked from
# obj/qemu): the same position relative to the source as
# build/ours-7.3/obj/qemu has to build/ours-7.3/linux, so ccache
# (CCACHE_BASEDIR, relative paths) serves the check from the test builds.
#
# A passing run is recorded in $OUT/series-check.txt (or bisect-check.txt)
# with the trees of the series it was run on (series_trees in lib.sh);
# make series quotes it in the cover letter while those are unchanged.
#
# "make fixes" (--fixes, from scripts/fixes.sh) does the same for the
# fixes exported to $OUT/fixes/, in $BUILD/fixes-check: git am on a fresh
# extract, each commit's tree that of its commit of branch "fixes", and
# the kernel built with configs/qemu.config less what the base does not
# define (build-kernel.sh base), plus the userspace programs if a fix
# touches tools/.  Nothing is recorded.  On another base (make fixes
# BASE=6.12): $OUT/fixes-6.12/ on a fresh extract of that base, in
# $BUILD/fixes-6.12-check, its kernel variant base-6.12.
#
# Usage: series-check.sh [--bisect | --fixes]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bisect=0 fixes=0
case ${1:-} in
--bisect) bisect=1 ;;
--fixes) fixes=1 ;;
'') ;;
*) die "usage: series-check.sh [--bisect | --fixes]" ;;
esac
if [ $fixes -eq 1 ]; then
	what=$(fixes_dir)-check SC=$BUILD/$(fixes_dir)-check SRC=$OUT/$(fixes_dir) REF=fixes KVARIANT=base
	# The kernel of another base is its own variant (scripts/kernels.py).
	[ "$BASE_NAME" = "$BASE_DEFAULT" ] || KVARIANT=base-$BASE_NAME
else
	what=series-check SC=$BUILD/series-check SRC=$OUT/series REF=series KVARIANT=qemu
fi
# Where build-kernel.sh, run with BUILD=$SC, finds the base's tree.
FRESH=$SC/${TREE#"$BUILD"/}
# The variant's objects where build-kernel.sh (BUILD=$SC) puts them:
# beside its tree (its row's obj) or in obj/<variant>.  Not the link
# obj/<variant> to them: emptied with rm -rf, the link would go, and the
# objects would stay.
variant_env "$KVARIANT"
O=$SC/${K_OBJ:-obj/$KVARIANT}
LOGS=$SC/logs
# The commits git am makes here are never sent: a fixed committer, so
# that no git identity need be configured for them.
export GIT_COMMITTER_NAME=auxlab GIT_COMMITTER_EMAIL=auxlab@localhost

git -C "$TREE" rev-parse -q --verify "refs/heads/$REF" >/dev/null || die "no $REF branch; run make ${REF}"
mapfile -t patches < <(find "$SRC" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
	! -name '0000-cover-letter.patch' | sort)
[ ${#patches[@]} -gt 0 ] || die "no patches in $SRC; run make ${REF}"
mkdir -p "$LOGS"

# -- 1. a fresh extract of the base --------------------------------------
# The package and its checksum are named by the base tag fetch-base.sh
# wrote: "<package> <version> (sha256 <sum>)".
read -r pkg ver _ sum_paren < <(git -C "$TREE" tag -l --format='%(contents:subject)' base)
sum=${sum_paren%)}
deb=$CACHE/${pkg}_${ver//:/%3a}_all.deb
[ -f "$deb" ] || die "$deb is not in the download cache; run make base"
[ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sum" ] || die "sha256 of $deb is not the base's $sum"

stage "$what: extracting $pkg $ver afresh into $FRESH"
# The same recipe as fetch-base.sh, so that the same bytes give the same
# commit.
extract_base "$deb" "$FRESH" "$pkg" "$ver"
cd "$FRESH"
git branch -q -m pristine series-check
git tag base
[ "$(git rev-parse HEAD)" = "$(git -C "$TREE" rev-parse 'base^{commit}')" ] ||
	die "the fresh extract ($(git rev-parse --short HEAD)) is not the base of $TREE"
info "fresh base is commit $(git rev-parse --short HEAD), as in $TREE"

# -- 2. git am ------------------------------------------------------------
stage "$what: git am ${#patches[@]} patches from ${SRC#"$TOP"/}/"
if ! git am --whitespace=error-all "${patches[@]}" >"$LOGS/am.log" 2>&1; then
	cat "$LOGS/am.log" >&2
	git am --abort 2>/dev/null || true
	die "git am failed (log: $LOGS/am.log)"
fi
# Anything but "Applying: ..." is a warning (whitespace, offset, fuzz).
if grep -v '^Applying: ' "$LOGS/am.log" >&2; then
	die "git am printed more than \"Applying:\" lines (above)"
fi
am_tip=$(git rev-parse HEAD)
info "applied ${#patches[@]} patches cleanly"

# -- 3. the same trees as the series, and as auxlab ------------------------
# Commit by commit: the trees git am made must be those of $REF, in order.
# Ids cannot be compared (identity and dates are the export's), trees can.
if ! diff <(git -C "$TREE" log --reverse --format='%T %s' "base..$REF") \
	<(git log --reverse --format='%T %s' base..HEAD) >"$LOGS/trees.diff"; then
	cat "$LOGS/trees.diff" >&2
	die "the applied commits do not have the trees of branch $REF (above: < $REF, > applied)"
fi
if [ $fixes -eq 0 ]; then
	[ "$(git rev-parse 'HEAD^{tree}')" = "$(git -C "$TREE" rev-parse 'auxlab^{tree}')" ] || {
		git fetch -q "$TREE" auxlab && git diff --stat FETCH_HEAD HEAD >&2
		die "the applied series is not the auxlab tree (above: auxlab -> applied)"
	}
	info "result: each commit's tree that of series, the last identical to auxlab"
else
	info "result: each commit's tree that of branch fixes ($(git rev-parse --short 'HEAD^{tree}') at the tip)"
fi

# -- 4. builds ------------------------------------------------------------
# build_kernel LOG: the qemu kernel of the checked-out $FRESH in $O.
build_kernel() {
	BUILD=$SC "$TOP/scripts/build-kernel.sh" "$KVARIANT" >"$1" 2>&1
}
# build_user LOG: perf_events selftests and tools/aux against $O's headers,
# with build-guest.sh's flags.
build_user() {
	local log=$1 hdr=$O/usr/include
	{
		rm -rf "$SC/user" && mkdir -p "$SC/user/perf_events" &&
		make -s -C "$FRESH/tools/testing/selftests/perf_events" OUTPUT="$SC/user/perf_events" \
			CC="ccache gcc" KHDR_INCLUDES="-isystem $hdr" USERCFLAGS="-static -Werror" \
			USERLDFLAGS=-static &&
		# tools/aux's own Makefile, with build-guest.sh's options; a
		# commit before it (or before tools/aux) has nothing to build.
		{ [ ! -f "$FRESH/tools/aux/Makefile" ] ||
		  make -s -C "$FRESH/tools/aux" O="$SC/user" CC="ccache gcc" STATIC=1 \
			KHDR_INCLUDES="-isystem $hdr" EXTRA_CFLAGS=-Werror; }
	} >"$log" 2>&1
}
failed=0
# step LABEL COMMIT: build one commit, print one line, never stop the run.
step() {
	local label=$1 c=$2 t0=$SECONDS kres=ok ures=- subject log
	log=$LOGS/${label//\//-of-}
	subject=$(git log -1 --format=%s "$c")
	git checkout -q --detach "$c"
	# Every step builds with the tip's .config: an option the series adds
	# later is dropped by kconfig for this step, and never lost for the
	# next one.  A fresh mtime makes kbuild sync it.
	if [ -f "$SC/tip.config" ]; then cp "$SC/tip.config" "$O/.config"; fi
	build_kernel "$log-kernel.log" || { kres=FAIL; failed=$((failed + 1)); }
	# The userspace programs: at the tip if the series touches tools/
	# (the fixes may not), and in a bisect for each commit that does.
	if { [ "$label" = tip ] && [ -n "$(git diff --name-only base "$c" -- tools/)" ]; } ||
		{ [ "$label" != tip ] && [ -n "$(git diff-tree --no-commit-id --name-only -r "$c" -- tools/)" ]; }; then
		if [ $kres = ok ]; then
			ures=ok
			build_user "$log-user.log" || { ures=FAIL; failed=$((failed + 1)); }
		else
			ures=skipped
		fi
	fi
	info "$(printf '%-6s %-4s user=%-7s %4ds  %s' "$label" "$kres" "$ures" $((SECONDS - t0)) "$subject")"
	if [ "$kres" = FAIL ]; then tail -n 20 "$log-kernel.log" | sed 's/^/        /' >&2; fi
	if [ "$ures" = FAIL ]; then tail -n 20 "$log-user.log" | sed 's/^/        /' >&2; fi
}

stage "$what: building the tip (kernel: $O, logs: $LOGS)"
rm -f "$SC/tip.config"
# From an empty object directory: the extract gives every file the mtime
# it has in the package, older than the objects of an earlier run, so an
# object built from a file that this series no longer changes would be
# kept.  ccache makes the full build cheap.
rm -rf "$O"
step tip "$am_tip"
[ $failed -eq 0 ] || die "$what: the tip does not build"
cp "$O/.config" "$SC/tip.config"
if [ $fixes -eq 1 ]; then
	info "$what: ok (${#patches[@]} patches)"
	exit 0
fi

n=${#patches[@]}
if [ $bisect -eq 1 ]; then
	stage "bisect-check: building each of the $n commits in turn"
	t0=$SECONDS
	# Forward from an empty object directory.  Going back from the tip
	# would prove nothing: kbuild keeps an object whose source is gone
	# (its dependency list is wildcarded), so a commit that lacks a file
	# a later one adds would build "fine" from the tip's objects.  For
	# the same reason, objects of sources that a step deletes go too.
	rm -rf "$O"
	mkdir -p "$O"
	i=0 prev=
	while read -r c; do
		i=$((i + 1))
		if [ -n "$prev" ]; then
			while read -r f; do
				rm -f "$O/${f%.*}.o" "$(dirname "$O/$f")/.$(basename "${f%.*}").o.cmd"
			done < <(git diff --name-only --diff-filter=D "$prev" "$c" -- '*.c' '*.S')
		fi
		step "$i/$n" "$c"
		prev=$c
	done < <(git rev-list --reverse base..series-check)
	git checkout -q --detach "$am_tip"
	info "bisect-check: $n steps, $failed failures, $((SECONDS - t0)) s"
	[ $failed -eq 0 ] || die "bisect-check: $failed builds failed (logs: $LOGS)"
fi

# -- record -----------------------------------------------------------------
when=$(date -u '+%Y-%m-%d')
if [ $bisect -eq 1 ]; then
	rec=$OUT/bisect-check.txt
	text="The series applies with git am to a fresh extract of the base without fuzz or whitespace warnings, and each of its $n patches builds (x86_64 kernel, and the perf_events selftests and tools/aux where a patch touches tools/); checked on $when."
else
	rec=$OUT/series-check.txt
	text="The series applies with git am to a fresh extract of the base without fuzz or whitespace warnings, and the result builds (x86_64 kernel, perf_events selftests, tools/aux); checked on $when."
fi
printf 'trees=%s\ndate=%s\ntext=%s\n' "$(series_trees . base..HEAD)" "$when" "$text" >"$rec"
info "series-check: ok (recorded in ${rec#"$TOP"/})"
