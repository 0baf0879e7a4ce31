#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 1: fetch the pinned linux-source-6.12 package, verify it, extract it
# once into $TREE and record it there as a one-commit git repository tagged
# "base".  Later runs find the tag and return at once.
#
# FETCH_ONLY=1 stops after the download and checksum (harness self-test).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -z "${FETCH_ONLY:-}" ] && git -C "$TREE" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	info "base: $(git -C "$TREE" tag -l --format='%(contents:subject)' base)"
	exit 0
fi

stage "base: fetching $BASE_PKG $BASE_VERSION"
mkdir -p "$CACHE"
deb="$CACHE/${BASE_PKG}_${BASE_VERSION//:/%3a}_all.deb"
version=$BASE_VERSION
if [ ! -f "$deb" ]; then
	dl() { (cd "$CACHE" && apt-get download "$1" 2>"$CACHE/download.err"); }
	# A new machine may have no package lists yet: refresh once, then retry.
	dl "$BASE_PKG=$BASE_VERSION" || { info "refreshing apt lists"; apt-get update -qq; dl "$BASE_PKG=$BASE_VERSION"; } ||
	{
		# The security archive drops superseded versions.  Building on a
		# newer 6.12 is better than not building, but it must be visible.
		version=$(apt-cache policy "$BASE_PKG" | awk '/Candidate:/ {print $2}')
		[ -n "$version" ] && [ "$version" != "(none)" ] ||
			die "no $BASE_PKG in the apt archive (run apt-get update?)"
		cat >&2 <<-MSG
		************************************************************
		WARNING: $BASE_PKG $BASE_VERSION is no longer in the archive.
		WARNING: Falling back to the newest 6.12: $version.
		WARNING: Its sha256 is not pinned; update scripts/base.env.
		************************************************************
		MSG
		dl "$BASE_PKG=$version" || die "cannot download $BASE_PKG $version: $(cat "$CACHE/download.err")"
		deb="$CACHE/${BASE_PKG}_${version//:/%3a}_all.deb"
	}
fi
sum=$(sha256sum "$deb" | cut -d' ' -f1)
if [ "$version" = "$BASE_VERSION" ]; then
	[ "$sum" = "$BASE_SHA256" ] ||
		die "sha256 mismatch for $deb: got $sum, pinned $BASE_SHA256"
	info "sha256 ok ($sum)"
else
	warn "unpinned base $version, sha256 $sum"
fi
if [ -n "${FETCH_ONLY:-}" ]; then exit 0; fi

stage "base: extracting into $TREE and recording it as a git commit"
# Fixed identity and dates (extract_base in lib.sh): the same package gives
# the same commit id on every machine, so exported series and ccache are
# reproducible.
extract_base "$deb" "$TREE" "$BASE_PKG" "$version"
cd "$TREE"
git tag -a -m "$BASE_PKG $version (sha256 $sum)" base
info "base commit $(git rev-parse --short HEAD): $(git log -1 --format=%s)"
