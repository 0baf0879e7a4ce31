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

# extract_base DEB DEST PKG VERSION: unpack the kernel source of the Debian
# package DEB into DEST (emptied first) and record it as one git commit on
# branch "pristine", with a fixed identity and date, so that the same
# package gives the same commit id wherever it is extracted.  Used by
# fetch-base.sh for the build tree and by series-check.sh for the fresh
# extract the series is applied to.
extract_base() {
	local deb=$1 dest=$2 pkg=$3 version=$4 tmp tarball
	tmp=$dest.deb
	rm -rf "$dest" "$tmp"
	mkdir -p "$dest" "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -C "$tmp" -x --wildcards '*.tar.xz'
	tarball=$(find "$tmp" -name 'linux-source-*.tar.xz' | head -n1)
	[ -n "$tarball" ] || die "no source tarball inside $deb"
	tar -C "$dest" --strip-components=1 -xJf "$tarball"
	rm -rf "$tmp"
	(
		cd "$dest" || exit 1
		git init -q -b pristine
		git config core.autocrlf false
		git config gc.auto 0
		# Debian's .gitignore ignores every top-level entry; record all.
		git add -A -f
		GIT_AUTHOR_NAME=auxlab GIT_AUTHOR_EMAIL=auxlab@localhost \
		GIT_COMMITTER_NAME=auxlab GIT_COMMITTER_EMAIL=auxlab@localhost \
		GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' \
			git commit -q -m "Linux $(make -s kernelversion) from Debian $pkg $version"
	)
}

# apply_entry DIR NAME [GIT-APPLY-OPTION...]: apply one entry of
# patches/series to the index GIT_INDEX_FILE of the repository in the
# current directory.  A .patch is applied with git apply --cached and the
# options given.  A .cocci is a Coccinelle semantic patch, used to remove
# upstream code without keeping a copy of it in this repository: its
# "// Files:" line names the files it transforms; each is taken from the
# index, run through spatch (with DIR/cocci.h for the macros spatch cannot
# parse), and put back.  A semantic patch that changes nothing in a file
# it names has gone stale, and fails like a patch that does not apply.
# spatch is slow on core.c, so its output is cached in $BUILD/cocci-cache
# by the hash of the semantic patch, the macros and the input.
apply_entry() {
	local dir=$1 name=$2 path=$1/$2 f blob key out tmp ver
	shift 2
	case $name in
	*.cocci) ;;
	*)
		git apply --cached "$@" "$path"
		return
		;;
	esac
	command -v spatch >/dev/null || { echo "spatch not installed (coccinelle)" >&2; return 1; }
	ver=$(spatch --version 2>/dev/null | head -n1)
	mkdir -p "$BUILD/cocci-cache"
	for f in $(sed -n 's|^// Files:||p' "$path"); do
		blob=$(git rev-parse -q --verify ":$f") || { echo "$name: $f is not in the tree" >&2; return 1; }
		key=$(cat "$path" "$dir/cocci.h" | { cat; printf '%s\n%s\n' "$blob" "$ver"; } | sha256sum | cut -c1-32)
		out=$BUILD/cocci-cache/$key
		if [ ! -f "$out" ]; then
			tmp=$(mktemp -d)
			git cat-file blob "$blob" >"$tmp/in.c"
			if ! spatch --very-quiet --macro-file "$dir/cocci.h" --sp-file "$path" \
				"$tmp/in.c" -o "$tmp/out.c" >"$tmp/log" 2>&1 || [ ! -s "$tmp/out.c" ]; then
				grep -v '^warning' "$tmp/log" >&2
				rm -rf "$tmp"
				echo "$name: spatch failed on $f" >&2
				return 1
			fi
			if cmp -s "$tmp/in.c" "$tmp/out.c"; then
				rm -rf "$tmp"
				echo "$name: changes nothing in $f (stale?)" >&2
				return 1
			fi
			mv "$tmp/out.c" "$out"
			rm -rf "$tmp"
		fi
		git update-index --cacheinfo "100644,$(git hash-object -w "$out"),$f"
	done
}

# entry_message DIR NAME: the commit message of an entry that is not in
# mail format, i.e. a semantic patch: its "// Subject:" line, a blank
# line, and its leading comment up to the first rule.
entry_message() {
	local path=$1/$2
	sed -n 's|^// Subject: ||p' "$path"
	echo
	sed -n -e '/^\/\/ Subject:/d' -e '/^\/\/ SPDX/d' -e '/^\/\/ Files:/d' \
		-e '/^@/q' -e 's|^// \{0,1\}||p' "$path" | sed -e '/./,$!d'
}
