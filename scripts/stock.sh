#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 3s: Debian's stock kernel of a base, booted in mode "stock" (make
# check boots stock-6.12; stock by hand):
#
#   stock.sh [VARIANT]    a variant of scripts/kernels.py whose mode is
#                         "stock" (default: stock, Debian 13's 7.3 of
#                         trixie-backports; stock-6.12: Debian 12's 6.12)
#
# The signed image and its headers at the version scripts/kernels.py
# pins (the variant's base: BASES: stock; apt-get download, with the
# base's apt configuration, sha256-checked, cached in
# ~/.cache/auxlab/stock; if the archive dropped that version, the newest
# image its "newest" expression matches, with a loud warning: apt_fetch
# in lib.sh, as for the base), extracted into $BUILD/<variant>/root (the
# directory of the row's kernel); ptsim.ko built against the headers
# with tools/ptsim-dkms, as a user would; and the archive boot.sh appends
# to the initramfs for this kernel ($BUILD/<variant>/modules.cpio.gz):
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
#
# A kernel of another Debian release than this machine's (stock:
# trixie's, on bookworm) comes with kbuild programs (linux-kbuild-*)
# linked against that release's glibc.  Those that need a newer glibc
# than this machine's do not run here (7.3.4: modpost, objtool and
# resolve_btfids need GLIBC_2.38, bookworm has 2.36: "version
# `GLIBC_2.38' not found"); they are built from the base's source (the
# linux-source of the same Debian version, whose kbuild programs'
# sources the base's perf delta leaves as they are: the very source they
# were built from) with this machine's compiler, make modules_prepare
# with the headers' .config in $BUILD/<variant>/hostprogs, and put in
# their place in the extracted kbuild tree (log:
# $BUILD/<variant>/hostprogs.log).  The base's apt suite's compiler may
# be missing here too: the base's make_args (scripts/kernels.py) say
# what the module is built with instead.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:-stock}
variant_env "$variant"
if [ "$K_MODE" != stock ] || [ -z "$K_KERNEL" ]; then
	die "$variant is not a stock kernel (scripts/kernels.py list stock)"
fi
[ -n "$STOCK_VERSION" ] || die "base $BASE_NAME has no stock kernel (scripts/kernels.py)"

S=$BUILD/$(dirname "$K_KERNEL")
C=$CACHE/stock
mkdir -p "$C" "$S"
# pkg ROLE ABI: the package of that role (STOCK_PACKAGES).
pkg() {
	case $1 in
	image | binary | modules | headers) echo "linux-$1-$2-amd64" ;;
	common) echo "linux-headers-$2-common" ;;
	kbuild) echo "linux-kbuild-$2" ;;
	*) die "unknown stock package role $1 (scripts/kernels.py)" ;;
	esac
}
pkgs() {	# pkgs IMAGE: the packages of linux-image-<abi>-amd64 (STOCK_PACKAGES)
	local abi=${1#linux-image-} r
	abi=${abi%-amd64}
	for r in $STOCK_PACKAGES; do pkg "$r" "$abi"; done
}

info "stock[$variant]: Debian's linux-image-$STOCK_ABI-amd64 $STOCK_VERSION and its headers${BASE_SUITE:+ ($BASE_SUITE)}"
apt_config "$BASE_SUITE"
apt_fetch "$C" "$BASE_NAME" "linux-image-$STOCK_ABI-amd64" "$STOCK_VERSION" "$STOCK_NEWEST" pkgs
version=$FETCHED_VERSION abi=${FETCHED_KEY#linux-image-}
abi=${abi%-amd64}
for r in $STOCK_PACKAGES; do
	p=$(pkg "$r" "$abi")
	deb=$(deb_file "$C" "$p" "$version")
	[ -n "$deb" ] || die "no $p $version in $C"
	if [ "$version" = "$STOCK_PINNED" ]; then
		want=STOCK_SHA256_${r^^}
		[ -n "${!want:-}" ] || die "no sha256 pinned for $p (scripts/kernels.py: stock sha256 '$r')"
		deb_verify "$deb" "${!want}"
	else
		warn "unpinned $p $version, sha256 $(sha256sum "$deb" | cut -d' ' -f1)"
	fi
done
if [ "$version" = "$STOCK_PINNED" ]; then
	info "stock[$variant]: $(pkgs "$FETCHED_KEY" | wc -w) packages of $abi $version, sha256 ok"
else
	warn "stock[$variant]: $(pkgs "$FETCHED_KEY" | wc -w) packages of $abi $version, NOT pinned (see above)"
fi
[ -z "${FETCH_ONLY:-}" ] || exit 0

rel=$abi-amd64
R=$S/root
if [ "$(cat "$S/extracted" 2>/dev/null)" != "$rel $version" ]; then
	stage "stock[$variant]: extracting into $R"
	rm -rf "$R" "$S/extracted"
	for r in $STOCK_PACKAGES; do
		deb=$(deb_file "$C" "$(pkg "$r" "$abi")" "$version")
		if [ "$r" = modules ]; then
			# 7.x's modules package (110 MB): only the module the boot loads.
			dpkg-deb --fsys-tarfile "$deb" | tar -C "$R" -x --wildcards '*/virtio_blk.ko*'
		else
			dpkg-deb -x "$deb" "$R"
		fi
	done
	# The headers' Makefile names its own directory (7.x: KBUILD_OUTPUT)
	# and includes the common one by their absolute paths under
	# /usr/src: point them at the extracted ones.
	sed -i -e "s|^include /usr/src/|include $R/usr/src/|" \
		-e "s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$R/usr/src/|" "$R/usr/src/linux-headers-$rel/Makefile"
	echo "$rel $version" >"$S/extracted"
fi
KDIR=$R/usr/src/linux-headers-$rel
# 6.12: /boot/vmlinuz-<rel> and /lib/modules (linux-image); 7.x:
# /usr/lib/modules/<rel>/vmlinuz (linux-binary) and /usr/lib/modules.
vmlinuz=
for k in "boot/vmlinuz-$rel" "usr/lib/modules/$rel/vmlinuz"; do [ -f "$R/$k" ] && vmlinuz=$k; done
[ -n "$vmlinuz" ] || die "no kernel image of $rel in $R"
virtio_blk=$(find "$R/lib/modules/$rel" "$R/usr/lib/modules/$rel" -name 'virtio_blk.ko*' 2>/dev/null | head -n1 || true)
[ -n "$virtio_blk" ] || die "no virtio_blk.ko of $rel in $R"
ln -sfn "root/$vmlinuz" "$S/vmlinuz"
echo "$rel" >"$S/release"

# The kbuild programs this machine's glibc cannot run (see the top):
# each ELF of the kbuild package that asks for a newer GLIBC_ symbol
# version than this machine's glibc has.
KB=$(realpath "$KDIR/scripts/..")
glibc=$(getconf GNU_LIBC_VERSION | cut -d' ' -f2)
stale=()
while IFS= read -r f; do
	need=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
	[ -n "$need" ] || continue
	[ "$(printf '%s\n%s\n' "$need" "$glibc" | sort -V | tail -n1)" != "$glibc" ] || continue
	f=${f#"$KB"/}
	case $f in
	# Debian's wrappers pick <program>.real-<kind> by the object's ELF
	# class and byte order (modpost) or the architecture (objtool): only
	# this machine's is ever run.
	*.real-lsb-64 | *.real-x86) ;;
	*.real-*) continue ;;
	esac
	stale+=("$f:$need")
done < <(find "$KB" -type f -perm -u+x -exec sh -c 'head -c4 "$1" | grep -q ELF' sh {} \; -print | sort)
if [ ${#stale[@]} -gt 0 ]; then
	info "stock[$variant]: kbuild programs that need a newer glibc than this machine's $glibc: ${stale[*]}"
	H=$S/hostprogs
	[ -e "$REPO/.git" ] || BASE=$BASE_NAME "$TOP/scripts/fetch-base.sh"
	src=$(git -C "$REPO" rev-parse 'debian^{tree}')
	[ "$BASE_VERSION" = "$version" ] ||
		warn "stock[$variant]: the kbuild programs come from $BASE_PKG $BASE_VERSION, the kernel is $version"
	# The programs' sources must be Debian's as unpacked (tag "debian",
	# the stock kernel's own; the base's perf delta, patches/base/,
	# touches none of them), whatever of the series is checked out in
	# $REPO.
	git -C "$REPO" diff --quiet debian -- scripts tools/objtool tools/bpf tools/lib tools/include \
		tools/build tools/scripts tools/arch Makefile arch/x86/Makefile arch/x86/tools ||
		die "$REPO differs from its base in the kbuild programs' sources; cannot build them for $rel"
	if [ "$(cat "$S/hostprogs.done" 2>/dev/null)" != "$src $rel" ]; then
		stage "stock[$variant]: the kbuild programs from $BASE_PKG $BASE_VERSION's source (make modules_prepare, log: $S/hostprogs.log)"
		rm -rf "$H" "$S/hostprogs.done"
		mkdir -p "$H"
		cp "$KDIR/.config" "$H/.config"
		{ make -C "$REPO" O="$H" ARCH=x86_64 olddefconfig &&
			make -C "$REPO" O="$H" ARCH=x86_64 -j"$JOBS" modules_prepare; } >"$S/hostprogs.log" 2>&1 ||
			die "the kbuild programs of $rel did not build (log: $S/hostprogs.log)"
		echo "$src $rel" >"$S/hostprogs.done"
	fi
	for e in "${stale[@]}"; do
		f=${e%:*} to=${e%:*}
		to=${to%.real-*}
		[ -x "$H/$to" ] || die "no $to in $H to replace $f with (log: $S/hostprogs.log)"
		install -m 755 "$H/$to" "$KB/$f"
		info "stock[$variant]: $f <- $H/$to"
	done
fi

read -ra args <<<"$STOCK_MAKE_ARGS"
stage "stock[$variant]: ptsim.ko against linux-headers-$rel (make -C tools/ptsim-dkms${args[*]:+ ${args[*]}}, log: $S/ptsim.log)"
make -C "$TOP/tools/ptsim-dkms" KDIR="$KDIR" BUILDDIR="$S/ptsim" "${args[@]}" >"$S/ptsim.log" 2>&1 ||
	die "ptsim.ko did not build against $rel (log: $S/ptsim.log)"
# Against Debian's headers ptsim has no flush callback (no pmu::flush).
info "stock[$variant]: $(modinfo -F vermagic "$S/ptsim/ptsim.ko" 2>/dev/null || strings "$S/ptsim/ptsim.ko" | grep -m1 '^vermagic=')"

rm -rf "$S/initrd"
mkdir -p "$S/initrd/lib/modules/auxlab" "$S/initrd/etc"
case $virtio_blk in
*.xz) xz -dc "$virtio_blk" ;;
*.zst) zstd -qdc "$virtio_blk" ;;
*) cat "$virtio_blk" ;;
esac >"$S/initrd/lib/modules/auxlab/virtio_blk.ko"
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
info "stock[$variant]: kernel $S/vmlinuz, modules in $S/modules.cpio.gz"
