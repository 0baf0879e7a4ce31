# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the auxlab harness scripts: paths, stage logging with
# elapsed time, and failure reporting.  Sourced, never executed.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=$(realpath -m "${BUILD:-$TOP/build}")
OUT=$(realpath -m "${OUT:-$TOP/out}")
CACHE=$(realpath -m "${AUXLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/auxlab}")
TREE=$BUILD/linux
JOBS=${JOBS:-$(nproc)}
export TOP BUILD OUT CACHE TREE JOBS

# Reproducible build identity: the same sources give the same objects, so
# ccache hits across clones and re-assemblies.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=auxlab KBUILD_BUILD_HOST=auxlab
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export CCACHE_BASEDIR=$TOP

# Time origin for "elapsed" in stage lines; inherited by child scripts so a
# whole "make check" reports one clock.
: "${AUXLAB_T0:=$(date +%s)}"
export AUXLAB_T0

elapsed() {
	local s=$(( $(date +%s) - AUXLAB_T0 ))
	printf '%02d:%02d' $((s / 60)) $((s % 60))
}

# stage NAME: one line per stage, with the time since the top-level command
# started.
stage() { printf '[%s] == %s\n' "$(elapsed)" "$*"; }
info() { printf '[%s]    %s\n' "$(elapsed)" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "$(elapsed)" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$(elapsed)" "$*" >&2; exit 1; }

# Pinned base version and checksum live in one file.
# shellcheck source=../scripts/base.env
. "$TOP/scripts/base.env"
