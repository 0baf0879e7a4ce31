#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make series": the work as a reviewable patch series.
#
# The build layout (branch auxlab: base + one overlay commit + one commit
# per patch) is not how reviewers want it.  patches/series-plan lists the
# logical commits instead; this script builds them on branch "series" in
# $TREE, one commit per plan entry, proves that the result is the very same
# tree as auxlab, and exports it with git format-patch --cover-letter into
# $OUT/series/.
#
# Nothing may be silently left out: every overlay file and every patch in
# patches/series must be claimed by exactly one plan entry.
#
# Commits are made with a private index (read-tree / add / apply --cached /
# commit-tree) like assemble.sh does, so the auxlab checkout that the
# kernel builds use is never touched; "series" is never checked out.
#
# The commits, and so the mails, carry the sender's identity: author,
# committer and Signed-off-by are GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL if
# set, else user.name / user.email of this repository's git config; the
# export fails if there is neither.  Dates are the export time, one second
# apart (the cover letter first), so that mail clients keep the order.
# Commit ids therefore differ from one export to the next: what stays is
# the tree of each commit, which series-check.sh records and compares
# (series_trees in lib.sh).
#
# Fixes: the plan's commits with a "fix:" header line fix upstream code
# and stand on their own.  They must come first in the plan (an error
# otherwise), so they are the first commits of the series, on the base
# alone; branch "fixes" points at the last of them.  With --fixes, they
# are exported instead as a series of their own, with the plan's
# fixes-cover: letter, into $OUT/fixes/ (make fixes, scripts/fixes.sh).
#
# Usage: make-series.sh            (needs the assembled tree: make tree)
#        make-series.sh --fixes    export the fixes into $OUT/fixes/
#        PLAN=file make-series.sh  use another plan (tests)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

fixes=0
case ${1:-} in
--fixes) fixes=1 ;;
'') ;;
*) die "usage: make-series.sh [--fixes]" ;;
esac
PLAN=$(realpath -m "${PLAN:-$TOP/patches/series-plan}")
SERIES_DIR=$TOP/patches
if [ $fixes -eq 1 ]; then DEST=$OUT/fixes; else DEST=$OUT/series; fi
WRAP=72

[ -f "$PLAN" ] || die "no plan: $PLAN"
# A failed run must not leave an older export behind looking current.
rm -rf "$DEST"

# -- parse the plan -----------------------------------------------------------
n=0                     # number of commit entries
subj=() fpats=() ppats=() body=() fix=()
cover_subj='' cover_body='' fcover_subj='' fcover_body=''
state=top lineno=0
plan_err() { die "$PLAN:$lineno: $*"; }
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	case $line in '#'*) continue ;; esac
	case $line in
	'cover: '* | 'fixes-cover: '*)
		[ $n -eq 0 ] || plan_err "${line%%:*}: must come before the first commit:"
		if [ "${line%%:*}" = cover ]; then
			cover_subj=${line#cover: }
			state=cover
		else
			fcover_subj=${line#fixes-cover: }
			state=fcover
		fi
		continue ;;
	'commit: '*)
		subj[n]=${line#commit: } fpats[n]='' ppats[n]='' body[n]='' fix[n]=''
		n=$((n + 1))
		state=header
		continue ;;
	esac
	i=$((n - 1))
	case $state in
	top)
		[ -z "$line" ] || plan_err "text outside a cover: or commit: stanza" ;;
	cover)
		cover_body+=$line$'\n' ;;
	fcover)
		fcover_body+=$line$'\n' ;;
	header)
		case $line in
		'files: '*) fpats[i]+=" ${line#files: }" ;;
		'patches: '*) ppats[i]+=" ${line#patches: }" ;;
		'fix: '*)
			[[ ${line#fix: } =~ [^[:space:]] ]] || plan_err "fix: needs a text (what it fixes, how it was found)"
			# Joined as fmt(1) reads it: two blanks after a
			# sentence.
			case ${fix[i]} in
			'') ;;
			*[.?!]) fix[i]+='  ' ;;
			*) fix[i]+=' ' ;;
			esac
			fix[i]+=${line#fix: } ;;
		'') state=body ;;
		*) plan_err "expected files:, patches:, fix: or a blank line" ;;
		esac ;;
	body)
		# Trailers (Fixes:, Link:, ...) are never wrapped.
		[[ ${#line} -le $WRAP || $line =~ ^(Fixes|Link|Closes):\  ]] ||
			plan_err "body line longer than $WRAP columns"
		body[i]+=$line$'\n' ;;
	esac
done <"$PLAN"
[ "$n" -gt 0 ] || die "$PLAN has no commit: entries"
[ -n "$cover_subj" ] || die "$PLAN has no cover: stanza"
# Fixes first: a fix after a feature commit would neither reach the
# maintainers first in the main series nor be tested on the base alone.
nfix=0 plain=''
for ((i = 0; i < n; i++)); do
	if [ -z "${fix[i]}" ]; then
		[ -n "$plain" ] || plain=${subj[i]}
		continue
	fi
	nfix=$((nfix + 1))
	[ -z "$plain" ] || die "$PLAN: the fix: commit \"${subj[i]}\" comes after \"$plain\", which is not a fix; the fixes must come first (move it up, or delete its fix: line and move it below the last fix)"
done
if [ $fixes -eq 1 ]; then
	[ -n "$fcover_subj" ] || die "$PLAN has no fixes-cover: stanza"
	[ $nfix -gt 0 ] || die "$PLAN declares no fix: commits"
fi

# -- the sender ---------------------------------------------------------------
# Author, committer and Signed-off-by of every exported commit (see top).
sender_identity "$TOP" || die "no sender identity to sign the series with (above)"
NAME=$SENDER_NAME EMAIL=$SENDER_EMAIL

git -C "$TREE" rev-parse -q --verify refs/heads/auxlab >/dev/null ||
	die "no auxlab branch in $TREE; run make tree"

# -- what must be claimed -----------------------------------------------------
# The overlay directories are assemble.sh's: read them from there, so that
# the two scripts cannot disagree about what "our files" are.
dirs_line=$(sed -n 's/^OVERLAY_DIRS=(\(.*\))$/\1/p' "$TOP/scripts/assemble.sh")
[ -n "$dirs_line" ] || die "cannot find OVERLAY_DIRS=(...) in scripts/assemble.sh"
read -r -a overlay_dirs <<<"$dirs_line"
# The same listing as assemble.sh: tracked and untracked-but-not-ignored.
mapfile -t overlay < <(cd "$TOP" && git ls-files --cached --others --exclude-standard \
	-- "${overlay_dirs[@]}" | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
mapfile -t series < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$SERIES_DIR/series" | grep -v '^$' || true)

# -- claims ------------------------------------------------------------------
# match NAME PATTERN: a trailing "/" is a directory prefix, anything else a
# glob against the whole path in which * also matches "/".
match() {
	local name=$1 pat=${2#\?}
	if [ "${pat: -1}" = / ]; then
		[[ $name == "$pat"* ]]
	else
		# shellcheck disable=SC2053  # the pattern is a glob on purpose
		[[ $name == $pat ]]
	fi
}
declare -A file_owner patch_owner
bad=0
claim() {	# claim KIND NAME: find the one entry whose patterns match NAME
	local kind=$1 name=$2 i p owners=() pats
	for ((i = 0; i < n; i++)); do
		if [ "$kind" = file ]; then pats=${fpats[i]}; else pats=${ppats[i]}; fi
		read -r -a pats <<<"$pats"
		for p in "${pats[@]}"; do
			if match "$name" "$p"; then owners+=("$i"); break; fi
		done
	done
	case ${#owners[@]} in
	1) if [ "$kind" = file ]; then file_owner[$name]=${owners[0]}; else patch_owner[$name]=${owners[0]}; fi ;;
	0) printf 'ERROR: %s %s is claimed by no commit in %s\n' "$kind" "$name" "${PLAN##*/}" >&2; bad=1 ;;
	*) printf 'ERROR: %s %s is claimed by %d commits:%s\n' "$kind" "$name" ${#owners[@]} \
		"$(for i in "${owners[@]}"; do printf ' "%s"' "${subj[i]}"; done)" >&2; bad=1 ;;
	esac
}
for f in "${overlay[@]}"; do claim file "$f"; done
for p in "${series[@]}"; do claim patch "$p"; done
# A pattern that matches nothing is most likely a typo or a rename, which
# would otherwise go unnoticed until the file it meant is left out.
for ((i = 0; i < n; i++)); do
	read -r -a fp <<<"${fpats[i]}"
	read -r -a pp <<<"${ppats[i]}"
	for p in "${fp[@]}" "${pp[@]}"; do
		[ "${p:0:1}" = '?' ] && continue
		hit=0
		for f in "${overlay[@]}" "${series[@]}"; do
			if match "$f" "$p"; then hit=1; break; fi
		done
		[ $hit -eq 1 ] || { printf 'ERROR: pattern "%s" of "%s" matches nothing\n' "$p" "${subj[i]}" >&2; bad=1; }
	done
done
[ $bad -eq 0 ] || die "patches/series-plan does not cover the work exactly once (see above)"
info "plan: $n commits claim ${#overlay[@]} overlay files and ${#series[@]} patches"

# -- build the commits --------------------------------------------------------
cd "$TREE"
export GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL
export GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$EMAIL
idx=$BUILD/series.index
msg=$BUILD/series.msg
blurb=$BUILD/series.blurb
trap 'rm -f "$idx" "$idx.lock" "$idx.check" "$idx.check.lock" "$msg" "$blurb" "$blurb".*' EXIT
export GIT_INDEX_FILE=$idx
git read-tree base
tip=$(git rev-parse "base^{commit}")
made=0 fixes_tip=''
# The export time: the cover letter is dated T0, the k-th commit T0 + k
# seconds, so that the last is not later than now.
T0=$(($(date +%s) - n - 1))
for ((i = 0; i < n; i++)); do
	files=() pl=()
	for f in "${overlay[@]}"; do
		if [ "${file_owner[$f]}" = "$i" ]; then files+=("$f"); fi
	done
	# Patches in the order of patches/series: later ones may need the
	# context of earlier ones.
	for p in "${series[@]}"; do
		if [ "${patch_owner[$p]}" = "$i" ]; then pl+=("$p"); fi
	done
	if [ $((${#files[@]} + ${#pl[@]})) -eq 0 ]; then
		warn "plan: \"${subj[i]}\" has no content yet; left out of the series"
		continue
	fi
	if [ ${#files[@]} -gt 0 ]; then
		(cd "$TOP" && git --git-dir="$TREE/.git" --work-tree="$TOP" add -f -- "${files[@]}")
	fi
	for p in "${pl[@]}"; do
		# --whitespace=error-all: git am would warn about what nowarn
		# lets through here, and the series must apply silently.
		out=$(apply_entry "$SERIES_DIR" "$p" --whitespace=error-all 2>&1) || {
			printf '%s\n' "$out" >&2
			die "plan: $p does not apply in \"${subj[i]}\" (a patch it needs comes later in the plan?)"
		}
	done
	t=$(git write-tree)
	[ "$t" != "$(git rev-parse "$tip^{tree}")" ] || die "plan: \"${subj[i]}\" changes nothing"
	# Trim leading and trailing blank lines of the body; sign it off.
	{
		printf '%s\n\n' "${subj[i]}"
		printf '%s' "${body[i]}" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}'
		printf '\nSigned-off-by: %s <%s>\n' "$NAME" "$EMAIL"
	} >"$msg"
	d=$(date -u -d "@$((T0 + made + 1))" +%Y-%m-%dT%H:%M:%SZ)
	prev=$tip
	tip=$(GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit-tree "$t" -p "$tip" -F "$msg")
	# The overlay files are copied, not applied, so nothing has checked
	# their whitespace yet.  Apply the commit's diff as git am will, on its
	# parent in a scratch index, with git am's whitespace warnings made
	# errors (git diff --check would be stricter: it also takes a reST
	# "=======" underline for a conflict marker).
	GIT_INDEX_FILE=$idx.check git read-tree "$prev"
	if ! out=$(git diff --binary "$prev" "$tip" |
		GIT_INDEX_FILE=$idx.check git apply --cached --whitespace=error-all 2>&1); then
		printf '%s\n' "$out" >&2
		# git apply names only "<stdin>"; diff --check names the files.
		git diff --check "$prev" "$tip" |
			awk '/: leftover conflict marker$/ { skip = 1; next } skip { skip = 0; next } 1' >&2 || true
		die "plan: \"${subj[i]}\" has whitespace errors that git am would warn about (above); fix the files"
	fi
	made=$((made + 1))
	if [ -n "${fix[i]}" ]; then fixes_tip=$tip; fi
	info "$(printf '%2d' "$made") ${fix[i]:+fix: }${subj[i]} (${#files[@]} files, ${#pl[@]} patches)"
done
unset GIT_INDEX_FILE
git update-ref refs/heads/series "$tip"
# The fixes are the first commits (checked above), on the base alone.
if [ -n "$fixes_tip" ]; then
	git update-ref refs/heads/fixes "$fixes_tip"
else
	git update-ref -d refs/heads/fixes 2>/dev/null || true
	[ $fixes -eq 0 ] || die "no fix: commit has content yet"
fi

# The series must be the same work as what we build and test, byte for byte.
if ! git diff --quiet auxlab series; then
	git diff --stat auxlab series >&2
	die "the series tree differs from auxlab (above: auxlab -> series)"
fi
info "series: $made commits, tip $(git rev-parse --short series), tree identical to auxlab"

# -- export -------------------------------------------------------------------
# Results of the last checks, for the cover letter.  Only what was recorded
# is reported; a check recorded for another series tip does not count.
tests_text() {
	local rj=$OUT/results.json sc
	if [ -f "$rj" ]; then
		# Python at column 0: a <<- heredoc would strip its indentation.
		python3 - "$rj" <<'PY'
import json, os, sys, time
p = sys.argv[1]
d = json.load(open(p))
when = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(os.path.getmtime(p)))
print(f"Last recorded run (make check, {when}):")
print(f"{d['passed']} passed, {d['failed']} failed, {d['skipped']} skipped.")
print()
w = max(len(s) for s in d['suites'])
print(f"  {'suite':<{w}}  pass  fail  skip")
for s, (ok, nok, skip) in d['suites'].items():
    print(f"  {s:<{w}}  {ok:4}  {nok:4}  {skip:4}")
for f in d.get('failures', []):
    print(f"  failed: {f}")
PY
	else
		echo "No test results recorded yet (make check has not been run)."
	fi
	# series-check.sh records what it proved for a series by the trees
	# of its commits (commit ids change with every export's dates), so a
	# record with this series' trees is a record for this series.  A
	# bisect-check proves everything a series-check does.
	for sc in "$OUT/bisect-check.txt" "$OUT/series-check.txt"; do
		if [ -f "$sc" ] && [ "$(sed -n 's/^trees=//p' "$sc")" = "$(series_trees . base..series)" ]; then
			echo
			sed -n 's/^text=//p' "$sc" | fmt -w $WRAP
			break
		fi
	done
}
bench_text() {
	local bj=$OUT/bench/results.json
	if [ -f "$bj" ]; then
		# The table of the last make bench (scripts/bench.py), in 72
		# columns: medians of guest time under -icount.
		python3 - "$bj" <<'PY'
import json, sys, textwrap
d = json.load(open(sys.argv[1]))
print(textwrap.fill(f"make bench, {d['date']}, {d['machine']}; QEMU {d['qemu_mode']}.  "
                    "Medians of guest time; ratio = ours/upstream; spread = the larger "
                    "half-range of the two, in % of the median.", 72))
print()
print(f"  {'figure':<18} {'ours':>12} {'upstream':>12} {'ratio':>6} {'spread':>7}")
for n, f in d['figures'].items():
    u = f['unit']
    o = f"{f['ours']['median']:.4g}{u}"
    up = f"{f['upstream']['median']:.4g}{u}"
    print(f"  {n:<18} {o:>12} {up:>12} {f['ratio']:6.3f} {f['spread_pct']:6.1f}%")
PY
	else
		echo "Not measured yet (make bench)."
	fi
}

# fixes_text: the fixes, one paragraph each: the subject, then the plan's
# fix: text (what it fixes, how it was found), indented.
fixes_text() {
	local i k=0
	for ((i = 0; i < n; i++)); do
		[ -n "${fix[i]}" ] || continue
		k=$((k + 1))
		[ $k -eq 1 ] || echo
		printf '%d. %s\n' $k "${subj[i]}" | fmt -w $WRAP
		printf '%s\n' "${fix[i]}" | fmt -w $((WRAP - 3)) | sed 's/^/   /'
	done
}

# export_series RANGE SUBJECT BODY: git format-patch RANGE with a cover
# letter into $DEST; the cover letter gets SUBJECT and BODY, in which the
# placeholder lines @TESTS@, @BENCH@ and @FIXES@ are filled in.
export_series() {
	local range=$1 subject=$2 body=$3 cover
	mkdir -p "$DEST"
	git format-patch -q --cover-letter --base=base -o "$DEST" "$range" >/dev/null
	cover=$(find "$DEST" -name '0000-cover-letter.patch')
	[ -n "$cover" ] || die "git format-patch wrote no cover letter"
	# Called directly, not in $(...), so that set -e stops on their
	# failures; only the placeholders the body has.
	: >"$blurb.tests"; : >"$blurb.bench"; : >"$blurb.fixes"
	if grep -qx '@TESTS@' <<<"$body"; then tests_text >"$blurb.tests"; fi
	if grep -qx '@BENCH@' <<<"$body"; then bench_text >"$blurb.bench"; fi
	if grep -qx '@FIXES@' <<<"$body"; then fixes_text >"$blurb.fixes"; fi
	# Fill in the body: trim blank lines at both ends, then the
	# placeholders.
	printf '%s' "$body" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' |
		awk -v t="$blurb.tests" -v b="$blurb.bench" -v f="$blurb.fixes" '
			function put(file,  l) { while ((getline l < file) > 0) print l; close(file) }
			$0 == "@TESTS@" { put(t); next }
			$0 == "@BENCH@" { put(b); next }
			$0 == "@FIXES@" { put(f); next }
			{ print }' >"$blurb"
	# format-patch dates the cover letter "now"; T0 puts it one second
	# before the first patch, so that it is listed first.
	awk -v subj="$subject" -v blurb="$blurb" -v date="$(date -u -R -d "@$T0")" '
		!seen_date && /^Date: / { print "Date: " date; seen_date = 1; next }
		(i = index($0, "*** SUBJECT HERE ***")) { print substr($0, 1, i - 1) subj; next }
		$0 == "*** BLURB HERE ***" { while ((getline l < blurb) > 0) print l; next }
		{ print }' "$cover" >"$cover.new"
	mv "$cover.new" "$cover"
	if grep -q '\*\*\*' "$cover"; then die "cover letter still has a *** placeholder ***"; fi
	info "exported $(find "$DEST" -name '*.patch' | wc -l) files to $DEST (cover letter: ${cover#"$TOP"/})"
}

if [ $fixes -eq 1 ]; then
	export_series base..fixes "$fcover_subj" "$fcover_body"
else
	export_series base..series "$cover_subj" "$cover_body"
fi
