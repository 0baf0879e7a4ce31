#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The QEMU that boots every kernel: bookworm-backports' qemu-system-x86
# (with qemu-system-common and qemu-system-data) at the version
# scripts/kernels.py pins (QEMU), downloaded through a project-local apt
# configuration (lib.sh, apt_config), checked against its sha256s and
# extracted into $BUILD/qemu/root, not installed.  boot.sh runs
# $QEMU_BIN with -L $QEMU_DATADIR (lib.sh sets both when the extracted
# tree is there).  The machine's qemu-system-x86 (deps.sh installs it:
# its libraries are QEMU 10's too) is the fallback: if the download
# fails, say so and leave it in use.  Idempotent: a stamp names the
# version extracted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dest=$BUILD/qemu
qemu_pkgs() { echo "$1 qemu-system-common qemu-system-data"; }
if [ -x "$dest/root/usr/bin/qemu-system-x86_64" ] && [ "$(cat "$dest/stamp" 2>/dev/null)" = "$QEMU_PINNED" ]; then
	info "qemu: $QEMU_PINNED ($QEMU_SUITE) in ${dest#"$TOP"/}"
	exit 0
fi
stage "qemu: fetching qemu-system-x86 $QEMU_PINNED from $QEMU_SUITE"
apt_config "$QEMU_SUITE"
if ! (apt_fetch "$CACHE/qemu" qemu qemu-system-x86 "$QEMU_PINNED" '^qemu-system-x86$' qemu_pkgs &&
	echo "$FETCHED_VERSION" >"$CACHE/qemu/fetched"); then
	warn "qemu: cannot fetch QEMU $QEMU_PINNED; booting with the machine's $(qemu-system-x86_64 --version | head -n 1)"
	exit 0
fi
version=$(cat "$CACHE/qemu/fetched")
rm -rf "$dest"
mkdir -p "$dest/root"
for p in $(qemu_pkgs qemu-system-x86); do
	deb=$(deb_file "$CACHE/qemu" "$p" "$version")
	[ -n "$deb" ] || die "qemu: no $p $version in $CACHE/qemu"
	if [ "$version" = "$QEMU_PINNED" ]; then
		var=QEMU_SHA256_$(echo "$p" | tr 'a-z-' 'A-Z_')
		deb_verify "$deb" "${!var}"
	fi
	dpkg -x "$deb" "$dest/root"
done
echo "$version" >"$dest/stamp"
info "qemu: $("$dest/root/usr/bin/qemu-system-x86_64" -L "$dest/root/usr/share/qemu" --version | head -n 1)"
