#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 3s: Debian's stock kernel of the base for make check's "stock"
# boot: the signed image and its headers at the version scripts/kernels.py
# pins (BASES: stock; apt-get download, sha256-checked, cached in
# ~/.cache/auxlab/stock; if the archive dropped that version, the newest
# image its "newest" expression matches, with a loud warning: apt_fetch
# in lib.sh, as for the base), extracted
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
[ -n "$STOCK_VERSION" ] || die "base $BASE_NAME has no stock kernel (scripts/kernels.py)"

S=$BUILD/stock
C=$CACHE/stock
mkdir -p "$C" "$S"
pkgs() {	# pkgs IMAGE: the four packages of linux-image-<abi>-amd64
	local abi=${1#linux-image-}
	abi=${abi%-amd64}
	echo "linux-image-$abi-amd64 linux-headers-$abi-amd64 linux-headers-$abi-common linux-kbuild-$abi"
}

info "stock: Debian's linux-image-$STOCK_ABI-amd64 $STOCK_VERSION and its headers"
apt_config "$BASE_SUITE"
apt_fetch "$C" "$BASE_NAME" "linux-image-$STOCK_ABI-amd64" "$STOCK_VERSION" "$STOCK_NEWEST" pkgs
version=$FETCHED_VERSION abi=${FETCHED_KEY#linux-image-}
abi=${abi%-amd64}
for p in $(pkgs "$FETCHED_KEY"); do
	deb=$(deb_file "$C" "$p" "$version")
	if [ "$version" = "$STOCK_PINNED" ]; then
		case $p in
		linux-image-*) want=$STOCK_SHA256_IMAGE ;;
		*-common) want=$STOCK_SHA256_COMMON ;;
		linux-headers-*) want=$STOCK_SHA256_HEADERS ;;
		linux-kbuild-*) want=$STOCK_SHA256_KBUILD ;;
		esac
		deb_verify "$deb" "$want"
	else
		warn "unpinned $p $version, sha256 $(sha256sum "$deb" | cut -d' ' -f1)"
	fi
done
if [ "$version" = "$STOCK_PINNED" ]; then
	info "stock: $(pkgs "$FETCHED_KEY" | wc -w) packages of $abi $version, sha256 ok"
else
	warn "stock: $(pkgs "$FETCHED_KEY" | wc -w) packages of $abi $version, NOT pinned (see above)"
fi
[ -z "${FETCH_ONLY:-}" ] || exit 0

rel=$abi-amd64
R=$S/root
if [ "$(cat "$S/extracted" 2>/dev/null)" != "$rel $version" ]; then
	stage "stock: extracting into $R"
	rm -rf "$R" "$S/extracted"
	for p in $(pkgs "$FETCHED_KEY"); do dpkg-deb -x "$(deb_file "$C" "$p" "$version")" "$R"; done
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
