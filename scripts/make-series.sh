#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make series": the work as a reviewable patch series.
#
# patches/series.txt describes the work as the logical commits reviewers
# get (scripts/series.py reads it); this script builds them on branch
# "series" in $TREE, one commit per stanza, as assemble.sh builds auxlab
# from the same file, but signed by the sender, dated at export and with
# the stricter whitespace check of git am; it proves that the result is
# the very same tree as auxlab, and exports it with git format-patch
# --cover-letter into $OUT/series/.
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
# Fixes: the commits with a "fix:" header line fix upstream code and
# stand on their own.  They come first (series.py fails otherwise), so
# they are the first commits of the series, on the base alone; branch
# "fixes" points at the last of them.  A fix's selftest (a "test-of:"
# line naming the fix) is one of them, placed after its fix, with no
# fix: text of its own: the cover's list of fixes names it under its
# fix.  With --fixes, they are exported
# instead as a series of their own, with the fixes-cover: letter, into
# $OUT/fixes/ (make fixes, scripts/fixes.sh).
#
# The series' patch for man-pages (patches/man-pages/, PERF_EVENT_IOC_FLUSH
# in perf_event_open.2) goes with it, into $OUT/series/man-pages/, applied
# to Debian's page and linted (scripts/man-page.sh).
#
# On another base than the default (make fixes BASE=6.12), only the fixes
# are built there, from their "base 6.12:" blocks (a fix dropped on that
# base is left out), and each must have the tree of its commit of branch
# "upstream" of that base (assemble.sh, make tree-6.12); they go to
# $OUT/fixes-6.12/ with the fixes-cover 6.12: letter if the series has one.
# The fixes' export also gets, from scripts/fixes-mail.py: a note after
# the "---" of each patch that applies only on top of an earlier one, and
# the cover letter's @DEPENDS@ paragraph.  Every export, the fixes on
# each base and the series, gets the To: and Cc: of each mail from the
# base's scripts/get_maintainer.pl (the cover letter the union), with
# the base's MAINTAINERS for the fixes and the series' for the series.
#
# Usage: make-series.sh             (needs the assembled tree: make tree)
#        make-series.sh --fixes     export the fixes into $OUT/fixes/
#        SERIES=file make-series.sh use another series file (tests)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

fixes=0
case ${1:-} in
--fixes) fixes=1 ;;
'') ;;
*) die "usage: make-series.sh [--fixes]" ;;
esac
if [ $fixes -eq 1 ]; then DEST=$OUT/$(fixes_dir); else DEST=$OUT/series; fi
# On another base only the fixes are made (see top).
other_base=0
[ "$BASE_NAME" = "$BASE_DEFAULT" ] || other_base=1
[ $fixes -eq 1 ] || [ $other_base -eq 0 ] || die "make series is for the default base $BASE_DEFAULT only"
WRAP=72
mat=$BUILD/series.commits

# A failed run must not leave an older export behind looking current.
rm -rf "$DEST"

# -- read the series ---------------------------------------------------------
# scripts/series.py parses and checks it (the format, the fixes first,
# every overlay file claimed once) and writes the commits into $mat.
series_materialize "$mat" || die "${SERIES#"$TOP"/} cannot be read (above)"
mapfile -t nums < <(cut -f1 "$mat/commits")
mapfile -t subj < <(cut -f2- "$mat/commits")
n=${#nums[@]}
[ "$n" -gt 0 ] || die "${SERIES#"$TOP"/} has no commit with content"
# nfix: the fixes; nfx: what make fixes exports, the fixes and their
# selftests (test-of:), the first commits.
nfix=0 nfx=0
for k in "${nums[@]}"; do
	[ ! -f "$mat/$k.fix" ] || nfix=$((nfix + 1))
	[ ! -f "$mat/$k.fix" ] && [ ! -f "$mat/$k.test-of" ] || nfx=$((nfx + 1))
done
if [ $fixes -eq 1 ]; then
	[ -f "$mat/fixes-cover.subject" ] || die "${SERIES#"$TOP"/} has no fixes-cover: stanza"
	[ $nfix -gt 0 ] || die "${SERIES#"$TOP"/} declares no fix: commits"
fi

# -- the sender ---------------------------------------------------------------
# Author, committer and Signed-off-by of every exported commit (see top).
sender_identity "$TOP" || die "no sender identity to sign the series with (above)"
NAME=$SENDER_NAME EMAIL=$SENDER_EMAIL

if [ $other_base -eq 1 ]; then
	git -C "$TREE" rev-parse -q --verify refs/heads/upstream >/dev/null ||
		die "no upstream branch in $TREE; run make tree BASE=$BASE_NAME"
	# The fixes come first (series.py checks it): only they are made.
	n=$nfx
else
	git -C "$TREE" rev-parse -q --verify refs/heads/auxlab >/dev/null ||
		die "no auxlab branch in $TREE; run make tree"
fi
info "series: $n commits ($nfix fixes$([ $nfx -eq $nfix ] || echo " and $((nfx - nfix)) of their selftests")), $(cat "$mat"/*.files | wc -l) overlay files"

# -- build the commits --------------------------------------------------------
cd "$TREE"
export GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL
export GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$EMAIL
idx=$BUILD/series.index
msg=$BUILD/series.msg
blurb=$BUILD/series.blurb
trap 'rm -rf "$idx" "$idx.lock" "$idx.check" "$idx.check.lock" "$msg" "$blurb" "$blurb".* "$mat"' EXIT
export GIT_INDEX_FILE=$idx
git read-tree base
tip=$(git rev-parse "base^{commit}")
made=0 fixes_tip=''
# The export time: the cover letter is dated T0, the k-th commit T0 + k
# seconds, so that the last is not later than now.
T0=$(($(date +%s) - n - 1))
for ((i = 0; i < n; i++)); do
	k=${nums[i]}
	# --whitespace=error-all: git am would warn about what nowarn lets
	# through, and the series must apply silently.
	out=$(stage_commit "$mat" "$k" --whitespace=error-all 2>&1) || {
		printf '%s\n' "$out" >&2
		die "\"${subj[i]}\" does not apply (on the base + the commits before it)"
	}
	t=$(git write-tree)
	[ "$t" != "$(git rev-parse "$tip^{tree}")" ] || die "\"${subj[i]}\" changes nothing"
	{
		cat "$mat/$k.msg"
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
		die "\"${subj[i]}\" has whitespace errors that git am would warn about (above); fix the files"
	fi
	made=$((made + 1))
	fx=''
	if [ -f "$mat/$k.fix" ]; then fixes_tip=$tip fx='fix: '; fi
	if [ -f "$mat/$k.test-of" ]; then fixes_tip=$tip fx='test of a fix: '; fi
	info "$(printf '%2d' "$made") $fx${subj[i]} ($(wc -l <"$mat/$k.files") files$([ ! -f "$mat/$k.cocci" ] || echo ', a semantic patch')$([ ! -f "$mat/$k.diff" ] || echo ', a diff'))"
done
unset GIT_INDEX_FILE
[ $other_base -eq 1 ] || git update-ref refs/heads/series "$tip"
# The fixes are the first commits (checked above), on the base alone.
if [ -n "$fixes_tip" ]; then
	git update-ref refs/heads/fixes "$fixes_tip"
else
	git update-ref -d refs/heads/fixes 2>/dev/null || true
	[ $fixes -eq 0 ] || die "no fix: commit has content yet"
fi

# The series must be the same work as what we build and test, byte for byte.
if [ $other_base -eq 1 ]; then
	# Each fix the tree of its commit of upstream (the same commits,
	# assembled by assemble.sh).
	if ! diff <(git log --reverse --format='%T %s' base..upstream | head -n "$made") \
		<(git log --reverse --format='%T %s' base..fixes) >&2; then
		die "the fixes on $BASE_NAME do not have the trees of branch upstream's first $made commits (above: < upstream, > fixes)"
	fi
	info "fixes on $BASE_NAME: $made commits, each the tree of its commit of upstream"
else
	if ! git diff --quiet auxlab series; then
		git diff --stat auxlab series >&2
		die "the series tree differs from auxlab (above: auxlab -> series)"
	fi
	info "series: $made commits, tip $(git rev-parse --short series), tree identical to auxlab"
fi

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
print(f"{d['passed']} passed, {d['failed']} failed, {d['skipped']} skipped"
      + (f", {d['known']} known mainline bugs of Debian's kernel." if d.get('known') else "."))
print()
w = max(len(s) for s in d['suites'])
print(f"  {'suite':<{w}}  pass  fail  skip")
for s, (ok, nok, skip, *_) in d["suites"].items():
    print(f"  {s:<{w}}  {ok:4}  {nok:4}  {skip:4}")
for f in d.get('failures', []):
    print(f"  failed: {f}")
for k in d.get('known_bugs', []):
    print(f"  known: {k}")
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

# fixes_text: the fixes, one paragraph each: the subject, then the
# commit's fix: text (what it fixes, how it was found), indented, and
# the selftest that comes with it, if any (test-of:).
fixes_text() {
	local i j=0 t
	for ((i = 0; i < n; i++)); do
		[ -f "$mat/${nums[i]}.fix" ] || continue
		j=$((j + 1))
		[ $j -eq 1 ] || echo
		printf '%d. %s\n' $j "${subj[i]}" | fmt -w $WRAP
		fmt -w $((WRAP - 3)) "$mat/${nums[i]}.fix" | sed 's/^/   /'
		for ((t = i + 1; t < n; t++)); do
			[ -f "$mat/${nums[t]}.test-of" ] &&
				[ "$(cat "$mat/${nums[t]}.test-of")" = "${subj[i]}" ] || continue
			printf 'Its selftest: patch %d, "%s".\n' $((t + 1)) "${subj[t]}" |
				fmt -w $((WRAP - 3)) | sed 's/^/   /'
		done
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
	: >"$blurb.tests"; : >"$blurb.bench"; : >"$blurb.fixes"; : >"$blurb.depends"
	if grep -qx '@TESTS@' <<<"$body"; then tests_text >"$blurb.tests"; fi
	if grep -qx '@BENCH@' <<<"$body"; then bench_text >"$blurb.bench"; fi
	if grep -qx '@FIXES@' <<<"$body"; then fixes_text >"$blurb.fixes"; fi
	# Which patch needs which (a note after "---" in each that does).
	if [ $fixes -eq 1 ]; then
		python3 "$TOP/scripts/fixes-mail.py" depends --repo . "$DEST" >"$blurb.depends"
	fi
	# Fill in the body: trim blank lines at both ends, then the
	# placeholders.
	printf '%s' "$body" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' |
		awk -v t="$blurb.tests" -v b="$blurb.bench" -v f="$blurb.fixes" -v d="$blurb.depends" '
			function put(file,  l) { while ((getline l < file) > 0) print l; close(file) }
			$0 == "@TESTS@" { put(t); next }
			$0 == "@BENCH@" { put(b); next }
			$0 == "@FIXES@" { put(f); next }
			$0 == "@DEPENDS@" { put(d); next }
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
	# The recipients (see top): by the base's MAINTAINERS for the fixes,
	# by the series' own (its entry for the files it adds) for the series.
	python3 "$TOP/scripts/fixes-mail.py" recipients --tree "$TREE" \
		--base "$([ $fixes -eq 1 ] && echo base || echo series)" "$DEST" ||
		die "get_maintainer.pl failed on $(basename "$DEST") (above)"
	info "exported $(find "$DEST" -name '*.patch' | wc -l) files to $DEST (cover letter: ${cover#"$TOP"/})"
}

if [ $fixes -eq 1 ]; then
	export_series base..fixes "$(cat "$mat/fixes-cover.subject")" "$(cat "$mat/fixes-cover.body")"
else
	export_series base..series "$(cat "$mat/cover.subject")" "$(cat "$mat/cover.body")"
	# The man page of the series' ioctl, a patch for man-pages.
	"$TOP/scripts/man-page.sh" "$DEST/man-pages"
fi
