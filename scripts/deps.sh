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
)
# "deps.sh bench": what make bench needs on top (the plot).
[ "${1:-}" = bench ] && PKGS=(gnuplot-nox)
# "deps.sh coverage": make coverage's lcov (and genhtml).
[ "${1:-}" = coverage ] && PKGS=(lcov)

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
