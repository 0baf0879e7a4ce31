#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The man-pages patch of the series: PERF_EVENT_IOC_FLUSH in
# perf_event_open(2), for the man-pages project (not the kernel).
#
#   man-page.sh DEST
#
# patches/man-pages/*.patch each hold a subject line, the message, a line
# "---" and a diff against Debian's man2/perf_event_open.2 (manpages-dev
# ships the page's roff source, scripts/deps.sh installs it).  Each is
# made a commit on that page in a git repository of its own
# ($BUILD/man-pages), signed by the sender as make series signs the
# kernel series, and exported with git format-patch into DEST, To: and
# Cc: as man-pages' CONTRIBUTING asks (its maintainer and linux-man), the
# perf list in Cc:.  make series calls it (DEST $OUT/series/man-pages).
#
# Fails if a patch does not apply, or if the page with it draws a warning
# from "mandoc -T lint -W warning" or from groff ("man --warnings") that
# the page without it does not.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEST=${1:?usage: man-page.sh DEST}
PAGE=man2/perf_event_open.2
REL=usr/share/man/$PAGE.gz
SRC=/$REL
MP=$BUILD/man-pages
TO='Alejandro Colomar <alx@kernel.org>'
CC=(linux-man@vger.kernel.org linux-perf-users@vger.kernel.org)

command -v mandoc >/dev/null || die "man-pages: no mandoc (run scripts/deps.sh)"
sender_identity "$TOP" || die "man-pages: no sender identity to sign the patch with (above)"
ver=$(dpkg-query -W -f='${Version}' manpages-dev 2>/dev/null || true)
[ -n "$ver" ] || die "man-pages: manpages-dev is not installed (run scripts/deps.sh)"
# A system that leaves man pages out (dpkg path-exclude, as container
# images do) has the package but not the page: take it from the package.
if [ ! -f "$SRC" ]; then
	rm -rf "$BUILD/manpages-dev" && mkdir -p "$BUILD/manpages-dev"
	(cd "$BUILD/manpages-dev" && apt-get download -q "manpages-dev=$ver" >/dev/null &&
		dpkg-deb -x manpages-dev_*.deb root) ||
		die "man-pages: no $SRC, and apt-get download manpages-dev=$ver failed"
	SRC=$BUILD/manpages-dev/root/$REL
fi

# lint FILE: every warning mandoc and groff give the page, one per line,
# without the file name and line numbers (a patch moves those).
lint() {
	{
		mandoc -T lint -W warning "$1" 2>&1 || true
		MANWIDTH=80 man --warnings -E UTF-8 -l "$1" 2>&1 >/dev/null || true
	} | sed -E 's/^([a-z]+: )[^:]*:[0-9]+(:[0-9]+)?: /\1/' | sort
}

rm -rf "$MP" "$DEST"
mkdir -p "$MP/man2" "$DEST"
git -C "$MP" init -q
zcat "$SRC" >"$MP/$PAGE"
export GIT_AUTHOR_NAME=$SENDER_NAME GIT_AUTHOR_EMAIL=$SENDER_EMAIL
export GIT_COMMITTER_NAME=$SENDER_NAME GIT_COMMITTER_EMAIL=$SENDER_EMAIL
git -C "$MP" add "$PAGE"
git -C "$MP" commit -q -m "perf_event_open.2 of Debian's manpages-dev $ver"
git -C "$MP" tag base
before=$(lint "$MP/$PAGE")
n=0
for p in "$TOP"/patches/man-pages/*.patch; do
	[ -e "$p" ] || die "man-pages: no patch under patches/man-pages/"
	rel=${p#"$TOP"/}
	msg=$MP/msg
	sed -n '/^---$/q;p' "$p" >"$msg"
	printf '\nSigned-off-by: %s <%s>\n' "$SENDER_NAME" "$SENDER_EMAIL" >>"$msg"
	sed -n '/^---$/,$p' "$p" | sed 1d >"$MP/diff"
	git -C "$MP" apply --check "$MP/diff" 2>&1 ||
		die "man-pages: $rel does not apply to Debian's $PAGE (manpages-dev $ver)"
	git -C "$MP" apply "$MP/diff"
	git -C "$MP" commit -q -a -F "$msg"
	n=$((n + 1))
done
new=$(comm -13 <(printf '%s\n' "$before") <(lint "$MP/$PAGE") | sed '/^$/d')
[ -z "$new" ] || die "man-pages: the patched $PAGE draws warnings:"$'\n'"$new"
git -C "$MP" format-patch -q -o "$DEST" --to="$TO" "${CC[@]/#/--cc=}" base..HEAD
info "man-pages: $n patch(es) on manpages-dev $ver's $PAGE, mandoc and groff silent, in ${DEST#"$TOP"/}"
