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
# Identity and dates are fixed, so the same inputs give the same commit
# ids on every machine (series-check.sh relies on that).
#
# Usage: make-series.sh            (needs the assembled tree: make tree)
#        PLAN=file make-series.sh  use another plan (tests)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PLAN=$(realpath -m "${PLAN:-$TOP/patches/series-plan}")
SERIES_DIR=$TOP/patches
DEST=$OUT/series
NAME='Seed 436f2ba4 maintainers'
EMAIL='maintainers@users.noreply.a-seed-436f2ba4.example'
# The first commit's date; each further commit is one minute later, so mail
# clients list them in order and ids stay reproducible.
EPOCH=$(date -u -d '2026-01-01T00:00:00Z' +%s)
WRAP=72

[ -f "$PLAN" ] || die "no plan: $PLAN"
# A failed run must not leave an older export behind looking current.
rm -rf "$DEST"
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

# -- parse the plan -----------------------------------------------------------
n=0                     # number of commit entries
subj=() fpats=() ppats=() body=()
cover_subj='' cover_body=''
state=top lineno=0
plan_err() { die "$PLAN:$lineno: $*"; }
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	case $line in '#'*) continue ;; esac
	case $line in
	'cover: '*)
		[ $state = top ] || plan_err "cover: must come before the first commit:"
		cover_subj=${line#cover: }
		state=cover
		continue ;;
	'commit: '*)
		subj[n]=${line#commit: } fpats[n]='' ppats[n]='' body[n]=''
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
	header)
		case $line in
		'files: '*) fpats[i]+=" ${line#files: }" ;;
		'patches: '*) ppats[i]+=" ${line#patches: }" ;;
		'') state=body ;;
		*) plan_err "expected files:, patches: or a blank line" ;;
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
trap 'rm -f "$idx" "$idx.lock" "$idx.check" "$idx.check.lock" "$msg"' EXIT
export GIT_INDEX_FILE=$idx
git read-tree base
tip=$(git rev-parse "base^{commit}")
made=0
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
	d=$(date -u -d "@$((EPOCH + made * 60))" +%Y-%m-%dT%H:%M:%SZ)
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
	info "$(printf '%2d' "$made") ${subj[i]} (${#files[@]} files, ${#pl[@]} patches)"
done
unset GIT_INDEX_FILE
git update-ref refs/heads/series "$tip"

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
	# series-check.sh records what it proved for one series tip; the ids
	# are reproducible, so a record for this tip is a record for this
	# series.  A bisect-check proves everything a series-check does.
	for sc in "$OUT/bisect-check.txt" "$OUT/series-check.txt"; do
		if [ -f "$sc" ] && [ "$(sed -n 's/^series=//p' "$sc")" = "$(git rev-parse series)" ]; then
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
print(f"  {'figure':<16} {'ours':>12} {'upstream':>12} {'ratio':>6} {'spread':>7}")
for n, f in d['figures'].items():
    u = f['unit']
    o = f"{f['ours']['median']:.4g}{u}"
    up = f"{f['upstream']['median']:.4g}{u}"
    print(f"  {n:<16} {o:>12} {up:>12} {f['ratio']:6.3f} {f['spread_pct']:6.1f}%")
PY
	else
		echo "Not measured yet (make bench)."
	fi
}

mkdir -p "$DEST"
git format-patch -q --cover-letter --base=base -o "$DEST" base..series >/dev/null
cover=$(find "$DEST" -name '0000-cover-letter.patch')
[ -n "$cover" ] || die "git format-patch wrote no cover letter"
blurb=$BUILD/series.blurb
trap 'rm -f "$idx" "$idx.lock" "$idx.check" "$idx.check.lock" "$msg" "$blurb"*' EXIT
# Called directly, not in $(...), so that set -e stops on their failures.
tests_text >"$blurb.tests"
bench_text >"$blurb.bench"
tests=$(cat "$blurb.tests")
bench=$(cat "$blurb.bench")
# Fill in the body: trim blank lines at both ends, then the placeholders.
printf '%s' "$cover_body" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' |
	awk -v tests="$tests" -v bench="$bench" \
		'$0 == "@TESTS@" { print tests; next } $0 == "@BENCH@" { print bench; next } { print }' >"$blurb"
# format-patch dates the cover letter "now"; the tip's date keeps the
# export reproducible.
awk -v subj="$cover_subj" -v blurb="$blurb" -v date="$(git log -1 --format=%aD series)" '
	!seen_date && /^Date: / { print "Date: " date; seen_date = 1; next }
	(i = index($0, "*** SUBJECT HERE ***")) { print substr($0, 1, i - 1) subj; next }
	$0 == "*** BLURB HERE ***" { while ((getline l < blurb) > 0) print l; next }
	{ print }' "$cover" >"$cover.new"
mv "$cover.new" "$cover"
grep -q '\*\*\*' "$cover" && die "cover letter still has a *** placeholder ***"
info "exported $(find "$DEST" -name '*.patch' | wc -l) files to $DEST (cover letter: ${cover#"$TOP"/})"
