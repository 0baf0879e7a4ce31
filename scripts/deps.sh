#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the harness needs (among them what the
# static perf of scripts/build-perf.sh needs: libelf-dev, zlib1g-dev,
# flex, bison, pkg-config).  Idempotent: apt-get runs only when
# something is missing, so a warm machine pays a dpkg query.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils
	python3 git ccache qemu-system-x86 busybox-static libipt-dev
	sparse python3-sphinx python3-ply python3-git rsync coccinelle
	gcc-aarch64-linux-gnu
	zlib1g-dev pkg-config
	# pahole: the BTF of ptsim.ko built against a distribution kernel
	dwarves
	# the man-pages patch (scripts/man-page.sh): the page's source, lint
	manpages-dev mandoc man-db
)
# "deps.sh bench": what make bench needs on top (the plot).
[ "${1:-}" = bench ] && PKGS=(gnuplot-nox)
# "deps.sh coverage": make coverage's lcov (and genhtml).
[ "${1:-}" = coverage ] && PKGS=(lcov)

# Disk space: a fresh make check writes about 6 GiB (the two trees 4,
# kernel objects, guest outputs, caches), and the packages take 1.5 more
# on a new machine.  Said first, so that a run that later fails with "No
# space left on device" (one CI run did, at 54 minutes) says why at once.
if [ -z "${1:-}" ]; then
	mkdir -p "$BUILD"
	free=$(df -BG --output=avail "$BUILD" | tail -n 1 | tr -dc 0-9)
	info "disk: ${free} GiB free under $BUILD"
	[ "$free" -ge 8 ] || warn "disk: under 8 GiB free under $BUILD; make check needs about 8 on a new machine"
fi

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	info "packages: all ${#PKGS[@]} present"
	exit 0
fi
stage "installing packages: ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
info "packages installed"
