#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 1: fetch the base's pinned linux-source package (BASE, default
# 7.3: scripts/kernels.py's BASES has the pins), verify it, extract it
# once into $REPO (build/linux-7.3 for 7.3, build/linux for 6.12) and
# record it there as a git repository: Debian's source as unpacked (tag
# "debian"), then patches/base/$BASE_NAME.patch, which takes Debian's
# perf delta out, the commit tagged "base".  Later runs find the tag
# and return at once (refusing a base made without today's patch).
#
# FETCH_ONLY=1 stops after the download and checksum (harness self-test).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -z "${FETCH_ONLY:-}" ] && git -C "$REPO" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	base_delta_current "$REPO" ||
		die "$REPO's base is not Debian's package with patches/base/$BASE_NAME.patch" \
			"applied (extracted before it or with another version of it): remove" \
			"$REPO and the work trees made of it (git -C $REPO worktree list)" \
			"and run make base again"
	info "base: $(git -C "$REPO" tag -l --format='%(contents:subject)' base)"
	exit 0
fi

stage "base: fetching $BASE_PKG $BASE_VERSION${BASE_SUITE:+ from $BASE_SUITE}"
apt_config "$BASE_SUITE"
one() { echo "$1"; }	# the source package alone
apt_fetch "$CACHE" "$BASE_NAME" "$BASE_PKG" "$BASE_VERSION" "$BASE_NEWEST" one
version=$FETCHED_VERSION
deb=$(deb_file "$CACHE" "$BASE_PKG" "$version")
if [ "$version" = "$BASE_PINNED" ]; then
	deb_verify "$deb" "$BASE_SHA256"
	info "sha256 ok ($BASE_SHA256)"
else
	warn "unpinned base $version, sha256 $(sha256sum "$deb" | cut -d' ' -f1)"
fi
sum=$(sha256sum "$deb" | cut -d' ' -f1)
if [ -n "${FETCH_ONLY:-}" ]; then exit 0; fi

stage "base: extracting into $REPO and recording it as a git commit"
# Fixed identity and dates (extract_base in lib.sh): the same package gives
# the same commit id on every machine, so exported series and ccache are
# reproducible.
extract_base "$deb" "$REPO" "$BASE_PKG" "$version"
cd "$REPO"
git tag -a -m "$BASE_PKG $version (sha256 $sum)" base
info "base commit $(git rev-parse --short HEAD): $(git log -1 --format=%s)"
info "base: $(du -sh "$REPO" | cut -f1) in $REPO"
