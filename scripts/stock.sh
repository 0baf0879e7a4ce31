#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 3s: Debian's stock 6.12 kernel for make check's "stock" boot:
# the signed image and its headers at the version scripts/stock.env pins
# (apt-get download, sha256-checked, cached in ~/.cache/auxlab/stock; if
# the archive dropped that version, the newest linux-image-6.12.*+deb12-amd64
# with a loud warning, as fetch-base.sh does for the base), extracted
# into $BUILD/stock/root; ptsim.ko built against the headers with
# tools/ptsim-dkms, as a user would; and the archive boot.sh appends to
# the initramfs for this kernel ($BUILD/stock/modules.cpio.gz):
#
#   /lib/modules/auxlab/  virtio_blk.ko (a module in Debian's kernel, and
#                         the transfer disk is virtio-blk), ptsim.ko
#   /etc/auxlab-init      what /init runs first on this kernel: loads them,
#                         sets perf_event_paranoid to upstream's 2 (Debian
#                         defaults to 3, which its own patch adds)
#
# Debian's kernel has the serial console (8250), virtio-pci, devtmpfs,
# tmpfs, debugfs and gzip initramfs support built in; only virtio_blk is
# a module.  FETCH_ONLY=1 stops after the download and checksums.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$TOP/scripts/stock.env"

S=$BUILD/stock
C=$CACHE/stock
mkdir -p "$C" "$S"
pkgs() {	# the four packages of ABI $1
	echo "linux-image-$1-amd64 linux-headers-$1-amd64 linux-headers-$1-common linux-kbuild-$1"
}
deb_of() {	# deb_of PKG VERSION: its file name as apt-get download names it
	local arch=amd64
	case $1 in *-common) arch=all ;; esac
	echo "$C/${1}_${2//:/%3a}_$arch.deb"
}
dl() {	# dl VERSION PKG...
	local v=$1
	shift
	(cd "$C" && apt-get download "${@/%/=$v}" 2>"$C/download.err")
}

version=$STOCK_VERSION abi=$STOCK_ABI
missing=
for p in $(pkgs "$abi"); do [ -f "$(deb_of "$p" "$version")" ] || missing=1; done
if [ -n "$missing" ]; then
	stage "stock: fetching Debian's linux-image-$abi-amd64 $version and its headers"
	# shellcheck disable=SC2046
	dl "$version" $(pkgs "$abi") ||
	{ info "refreshing apt lists"; apt-get update -qq; dl "$version" $(pkgs "$abi"); } ||
	{
		# The security archive drops superseded versions: the newest
		# 6.12 image of the archive, visibly.
		img=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
			cut -d' ' -f1 | sort -V | tail -n1)
		[ -n "$img" ] || die "no linux-image-6.12.*+deb12-amd64 in the apt archive (run apt-get update?)"
		abi=${img#linux-image-}
		abi=${abi%-amd64}
		version=$(apt-cache policy "$img" | awk '/Candidate:/ {print $2}')
		cat >&2 <<-MSG
		************************************************************
		WARNING: linux-image-$STOCK_ABI-amd64 $STOCK_VERSION is no longer in the archive.
		WARNING: Falling back to the newest 6.12: $img $version.
		WARNING: Its sha256 is not pinned; update scripts/stock.env.
		************************************************************
		MSG
		# shellcheck disable=SC2046
		dl "$version" $(pkgs "$abi") || die "cannot download $img $version: $(cat "$C/download.err")"
	}
fi
for p in $(pkgs "$abi"); do
	deb=$(deb_of "$p" "$version")
	sum=$(sha256sum "$deb" | cut -d' ' -f1)
	if [ "$version" = "$STOCK_VERSION" ]; then
		case $p in
		linux-image-*) want=$STOCK_SHA256_IMAGE ;;
		*-common) want=$STOCK_SHA256_COMMON ;;
		linux-headers-*) want=$STOCK_SHA256_HEADERS ;;
		linux-kbuild-*) want=$STOCK_SHA256_KBUILD ;;
		esac
		[ "$sum" = "$want" ] || die "sha256 mismatch for $deb: got $sum, pinned $want"
	else
		warn "unpinned $p $version, sha256 $sum"
	fi
done
if [ "$version" = "$STOCK_VERSION" ]; then
	info "stock: $(pkgs "$abi" | wc -w) packages of $abi $version, sha256 ok"
else
	warn "stock: $(pkgs "$abi" | wc -w) packages of $abi $version, NOT pinned (see above)"
fi
[ -z "${FETCH_ONLY:-}" ] || exit 0

rel=$abi-amd64
R=$S/root
if [ "$(cat "$S/extracted" 2>/dev/null)" != "$rel $version" ]; then
	stage "stock: extracting into $R"
	rm -rf "$R" "$S/extracted"
	for p in $(pkgs "$abi"); do dpkg-deb -x "$(deb_of "$p" "$version")" "$R"; done
	# The headers' Makefile includes the common one by its absolute
	# path under /usr/src: point it at the extracted one.
	sed -i "s|^include /usr/src/|include $R/usr/src/|" "$R/usr/src/linux-headers-$rel/Makefile"
	echo "$rel $version" >"$S/extracted"
fi
KDIR=$R/usr/src/linux-headers-$rel
ln -sfn "root/boot/vmlinuz-$rel" "$S/vmlinuz"
echo "$rel" >"$S/release"

stage "stock: ptsim.ko against linux-headers-$rel (make -C tools/ptsim-dkms, log: $S/ptsim.log)"
make -C "$TOP/tools/ptsim-dkms" KDIR="$KDIR" BUILDDIR="$S/ptsim" >"$S/ptsim.log" 2>&1 ||
	die "ptsim.ko did not build against $rel (log: $S/ptsim.log)"
# Against Debian's headers ptsim has no flush callback (no pmu::flush).
info "stock: $(modinfo -F vermagic "$S/ptsim/ptsim.ko" 2>/dev/null || strings "$S/ptsim/ptsim.ko" | grep -m1 '^vermagic=')"

rm -rf "$S/initrd"
mkdir -p "$S/initrd/lib/modules/auxlab" "$S/initrd/etc"
xz -dc "$R/lib/modules/$rel/kernel/drivers/block/virtio_blk.ko.xz" >"$S/initrd/lib/modules/auxlab/virtio_blk.ko"
cp "$S/ptsim/ptsim.ko" "$S/initrd/lib/modules/auxlab/"
cat >"$S/initrd/etc/auxlab-init" <<-'INIT'
	# Sourced by /init before the suites (scripts/stock.sh): Debian's kernel.
	for m in virtio_blk ptsim; do
		if insmod "/lib/modules/auxlab/$m.ko"; then
			echo "HARNESS: insmod $m.ko"
		else
			echo "HARNESS: insmod $m.ko failed"
		fi
	done
	# Debian's default is 3 (its CONFIG_SECURITY_PERF_EVENTS_RESTRICT);
	# the other kernels have upstream's 2, which the suites expect.
	echo 2 >/proc/sys/kernel/perf_event_paranoid
INIT
(cd "$S/initrd" && find . -print0 | sort -z | cpio --null -o -H newc --quiet --reproducible) |
	gzip -1 >"$S/modules.cpio.gz"
info "stock: kernel $S/vmlinuz, modules in $S/modules.cpio.gz"
