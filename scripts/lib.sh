# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the auxlab harness scripts: paths, stage logging with
# elapsed time, and failure reporting.  Sourced, never executed.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=$(realpath -m "${BUILD:-$TOP/build}")
OUT=$(realpath -m "${OUT:-$TOP/out}")
CACHE=$(realpath -m "${AUXLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/auxlab}")
# The base (BASE, default the table's DEFAULT_BASE) and its pins, from the
# one table of bases and variants, scripts/kernels.py: BASE_NAME, BASE_DEFAULT
# (the DEFAULT_BASE), BASE_PKG,
# BASE_VERSION, BASE_SHA256, BASE_SUITE, BASE_TREE, ... and, if make check
# boots Debian's stock kernel of it, STOCK_*.
# use_base [NAME]: set them (and REPO, TREE, UTREE) for base NAME (default:
# BASE, else the table's DEFAULT_BASE); variant_env calls it for a
# variant on another base (its row's "base").
use_base() {
	local s
	s=$(BASE=${1:-${BASE:-}} python3 "$TOP/scripts/kernels.py" base-sh) ||
		{ echo "scripts/kernels.py base-sh failed" >&2; exit 1; }
	eval "$s"
	REPO=$BUILD/$BASE_TREE
	TREE=$BUILD/$BASE_OTREE
	UTREE=$BUILD/$BASE_UTREE
}
use_base
# $REPO is the base's git repository (build/linux-7.3, build/linux: the
# pristine base, tag "base").  $TREE is the "ours" kernel's tree, at
# branch "auxlab": $REPO itself, or on a base whose row names an otree
# (7.3) a work tree of it (build/ours-7.3/linux).  $UTREE is the
# "upstream" kernel's, a work tree of $REPO at branch "upstream"
# (build/upstream-7.3/linux).  Each variant's objects are beside its
# tree (build/ours-7.3/obj/qemu, build/upstream-7.3/obj/qemu): the same
# position relative to their sources (../../linux), so that ccache,
# which rewrites paths under CCACHE_BASEDIR relative to the compiler's
# working directory, sees the same command lines and hits on every
# object the two share.  $BUILD/obj/<variant> is a symlink to them, so
# every variant's objects are found there.
JOBS=${JOBS:-$(nproc)}
# The QEMU that boots the kernels: scripts/qemu.sh's (bookworm-backports'
# QEMU 10, extracted under $BUILD/qemu) if it is there, else the machine's.
if [ -z "${QEMU_BIN:-}" ] && [ -x "$BUILD/qemu/root/usr/bin/qemu-system-x86_64" ]; then
	QEMU_BIN=$BUILD/qemu/root/usr/bin/qemu-system-x86_64 QEMU_DATADIR=$BUILD/qemu/root/usr/share/qemu
fi
QEMU_BIN=${QEMU_BIN:-qemu-system-x86_64}
export QEMU_BIN QEMU_DATADIR
export TOP BUILD OUT CACHE REPO TREE UTREE JOBS

# Reproducible build identity: the same sources give the same objects, so
# ccache hits across clones and re-assemblies.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=auxlab KBUILD_BUILD_HOST=auxlab
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export CCACHE_BASEDIR=$TOP
# Objects compiled with -g (arch/x86/boot, realmode, objtool) would hash
# the working directory, which differs between clones and between the
# ours and upstream object directories; their debug info is never used.
export CCACHE_NOHASHDIR=1

# Time origin for "elapsed" in stage lines; inherited by child scripts so a
# whole "make check" reports one clock.
: "${AUXLAB_T0:=$(date +%s)}"
export AUXLAB_T0

elapsed() {
	local s=$(( $(date +%s) - AUXLAB_T0 ))
	printf '%02d:%02d' $((s / 60)) $((s % 60))
}

# stage NAME: one line per stage, with the time since the top-level command
# started; also appended, with the epoch, to $AUXLAB_STAGES if set (the
# Makefile sets it: out/stages.tsv, emptied by each make), for
# stage_times.
stage() {
	printf '[%s] == %s\n' "$(elapsed)" "$*"
	[ -z "${AUXLAB_STAGES:-}" ] || printf '%s\t%s\n' "$(date +%s)" "$*" >>"$AUXLAB_STAGES"
}
# stage_times [FILE END]: how long each stage of FILE (default
# $AUXLAB_STAGES) took (until the next one began, the last until END,
# default now), in minutes:seconds, and the total.
stage_times() {
	local f=${1:-${AUXLAB_STAGES:-}} end=${2:-$(date +%s)}
	[ -s "$f" ] || return 0
	awk -F'\t' -v now="$end" -v t0="$AUXLAB_T0" '
		{ t[NR] = $1; s[NR] = $2 }
		END {
			printf "    %6s %6s  %s\n", "start", "took", "stage"
			for (i = 1; i <= NR; i++) {
				d = (i < NR ? t[i + 1] : now) - t[i]
				printf "    %3d:%02d %3d:%02d  %s\n", (t[i] - t0) / 60, (t[i] - t0) % 60, d / 60, d % 60, s[i]
			}
			printf "    %6s %3d:%02d  total\n", "", (now - t0) / 60, (now - t0) % 60
		}' "$f"
}
info() { printf '[%s]    %s\n' "$(elapsed)" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "$(elapsed)" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$(elapsed)" "$*" >&2; exit 1; }

# A gate's TAP, written by the kernel's own KTAP helpers
# (tools/testing/selftests/kselftest/ktap_helpers.sh of the base tree):
#   ktap_open FILE|-              results kept aside: the plan comes first
#   ktap_result RC DESCRIPTION [DIAGNOSTIC-FILE]   ok if RC is 0; a
#                                 failure's file follows as comments
#   ktap_note TEXT                a comment where it stands
#   ktap_close                    header, plan, results, totals into FILE;
#                                 returns 1 if any result failed
#   ktap_test_skip DESCRIPTION >>"$KTAP_BODY"   the helpers' own, directly
# A '#' in a description would start a directive: it is written %23.
ktap_open() {
	local h=$TREE/tools/testing/selftests/kselftest/ktap_helpers.sh
	[ -f "$h" ] || die "no $h: the base tree is not assembled (make tree)"
	# shellcheck source=/dev/null
	. "$h"
	KTAP_FILE=$1
	KTAP_BODY=$(mktemp)
}
ktap_result() {
	local f=$-
	set -f	# the helpers echo the description unquoted
	if [ "$1" = 0 ]; then
		ktap_test_pass "${2//#/%23}"
	else
		ktap_test_fail "${2//#/%23}"
		[ -z "${3:-}" ] || [ ! -s "$3" ] || tail -n 40 "$3" | sed 's/^/# /'
	fi >>"$KTAP_BODY"
	[[ $f == *f* ]] || set +f
}
ktap_note() { printf '# %s\n' "$*" >>"$KTAP_BODY"; }
ktap_close() {
	if [ "$KTAP_FILE" = - ]; then ktap_emit; else ktap_emit >"$KTAP_FILE"; fi
	rm -f "$KTAP_BODY"
	[ "$KTAP_CNT_FAIL" = 0 ]
}
# ktap_one FILE RC DESCRIPTION [DIAGNOSTIC-FILE]: a TAP file of one result.
ktap_one() {
	ktap_open "$1"
	ktap_result "${@:2}"
	ktap_close
}
ktap_emit() {
	ktap_print_header
	ktap_set_plan $((KTAP_TESTNO - 1))
	cat "$KTAP_BODY"
	ktap_print_totals
}

# variant_env VARIANT: its row of scripts/kernels.py's VARIANTS as shell
# variables K_*: K_TREE (ours, upstream or empty: not built here), K_SIDE,
# K_FRAGS, K_REWRITE_FRAGS, K_KNOWN_ONLY, K_OBJ, K_HEADERS, K_GCOV,
# K_COVERAGE*, K_CHECK, K_SMP8, K_SMP8_MEM, K_KSELFTEST, K_BENCH,
# K_COMPARE ("VARIANT all|subset"), K_FOREIGN, K_MODE, K_KERNEL, K_INITRD,
# K_TEST_MODULES, K_TIMEOUT, K_CPU, K_TCG_THREADS, K_RETRY_BEFORE_INIT,
# K_APPEND (booleans 1 or 0, lists blank-separated); K_SRC, the tree's directory.
# The variant's base (K_BASE: its row's, else the table's DEFAULT_BASE)
# becomes the current one: BASE_*, TREE and UTREE are that base's until
# the next variant_env.
variant_env() {
	local s
	s=$(python3 "$TOP/scripts/kernels.py" sh "$1") || die "no kernel variant $1"
	eval "$s"
	[ "$K_BASE" = "$BASE_NAME" ] || use_base "$K_BASE"
	# shellcheck disable=SC2034	# for the caller
	case $K_TREE in
	ours) K_SRC=$TREE ;;
	upstream) K_SRC=$UTREE ;;
	*) K_SRC= ;;
	esac
}

# variants WHAT: the variant names of scripts/kernels.py list WHAT.
variants() { python3 "$TOP/scripts/kernels.py" list "$1"; }

# -- Debian packages -----------------------------------------------------------
# apt_config SUITE: APT_GET and APT_CACHE, the apt-get and apt-cache
# commands that see SUITE.  Empty: the machine's own apt configuration.
# Otherwise a project-local one, under $BUILD/apt/SUITE: its own sources
# file (SUITE of APT_MIRROR, signed by APT_KEYRING: scripts/kernels.py),
# package lists and cache; the machine's apt sources are neither read nor
# changed.
apt_config() {
	APT_GET=(apt-get) APT_CACHE=(apt-cache) APT_SUITE=$1
	[ -n "$1" ] || return 0
	local d=$BUILD/apt/$1 aptopts
	[ -f "$APT_KEYRING" ] || die "no $APT_KEYRING (debian-archive-keyring)"
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/preferences.d"
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$APT_MIRROR" "$1" "$APT_KEYRING" >"$d/auxlab.sources.new"
	if cmp -s "$d/auxlab.sources.new" "$d/auxlab.sources"; then
		rm -f "$d/auxlab.sources.new"
	else
		mv "$d/auxlab.sources.new" "$d/auxlab.sources"
		rm -rf "$d/lists" && mkdir -p "$d/lists/partial"
	fi
	aptopts=(-o "Dir::Etc::SourceList=$d/auxlab.sources" -o Dir::Etc::SourceParts=-
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache"
		-o "Dir::Etc::PreferencesParts=$d/preferences.d" -o Dir::Etc::Preferences=/dev/null)
	APT_GET=(apt-get "${aptopts[@]}") APT_CACHE=(apt-cache "${aptopts[@]}")
	# A new configuration has no package lists yet.
	[ -n "$(find "$d/lists" -maxdepth 1 -name '*_Packages*' -print -quit)" ] || apt_update
}
# apt_update: refresh the package lists of the configuration apt_config set.
apt_update() {
	info "refreshing apt lists${APT_SUITE:+ ($APT_SUITE, in $BUILD/apt/$APT_SUITE)}"
	"${APT_GET[@]}" update -qq
}

# apt_fetch DIR WHAT KEY VERSION NEWEST PKGS-FN: the Debian packages that
# the function PKGS-FN prints for the package KEY (KEY itself, or KEY
# and its companions), at VERSION, downloaded into DIR (unless they are
# there) with the commands of apt_config.  If the archive no longer has
# VERSION (the security archive drops superseded ones), the newest
# package whose name matches the regular expression NEWEST, at its
# candidate version, with a loud warning: WHAT names the base for it.
# Sets FETCHED_KEY and FETCHED_VERSION; the caller checks the sha256s
# (deb_file, deb_verify).
apt_fetch() {
	local dir=$1 what=$2 key=$3 version=$4 newest=$5 fn=$6 p missing=
	mkdir -p "$dir"
	for p in $("$fn" "$key"); do [ -n "$(deb_file "$dir" "$p" "$version")" ] || missing=1; done
	# shellcheck disable=SC2034	# for the caller
	FETCHED_KEY=$key FETCHED_VERSION=$version
	[ -n "$missing" ] || return 0
	# shellcheck disable=SC2046
	apt_download "$dir" "$version" $("$fn" "$key") && return 0
	# A machine whose lists are old: refresh once, then retry.
	apt_update
	# shellcheck disable=SC2046
	apt_download "$dir" "$version" $("$fn" "$key") && return 0
	key=$("${APT_CACHE[@]}" search --names-only "$newest" | cut -d' ' -f1 | sort -V | tail -n1)
	[ -n "$key" ] || die "no package matching $newest in the apt archive (run apt-get update?)"
	version=$("${APT_CACHE[@]}" policy "$key" | awk '/Candidate:/ {print $2}')
	if [ -z "$version" ] || [ "$version" = "(none)" ]; then die "no candidate version of $key in the apt archive"; fi
	cat >&2 <<-MSG
	************************************************************
	WARNING: $3 $4 is no longer in the archive.
	WARNING: Falling back to the newest $what: $key $version.
	WARNING: Its sha256 is not pinned; update scripts/kernels.py (BASES["$what"]).
	************************************************************
	MSG
	# shellcheck disable=SC2046
	apt_download "$dir" "$version" $("$fn" "$key") || die "cannot download $key $version: $(cat "$dir/download.err")"
	FETCHED_KEY=$key FETCHED_VERSION=$version
}
# apt_download DIR VERSION PKG...: apt-get download each PKG=VERSION into
# DIR; apt's complaints in DIR/download.err.
apt_download() {
	local dir=$1 v=$2
	shift 2
	(cd "$dir" && "${APT_GET[@]}" download "${@/%/=$v}" 2>"$dir/download.err")
}
# deb_file DIR PKG VERSION: the file apt-get download made of it, if any.
deb_file() {
	local f
	for f in "$1/${2}_${3//:/%3a}_"*.deb; do [ -f "$f" ] && echo "$f"; done
	return 0
}
# deb_verify FILE SHA256: fails, naming both, if FILE's sha256 differs.
deb_verify() {
	local sum
	sum=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$sum" = "$2" ] || die "sha256 mismatch for $1: got $sum, pinned $2"
}

# extract_base DEB DEST PKG VERSION: unpack the kernel source of the Debian
# package DEB into DEST (emptied first) and record it as a git commit on
# branch "pristine" (tag "debian"), then apply patches/base/$BASE_NAME.patch,
# which takes Debian's perf delta out (scripts/README.md, "Debian's perf
# delta"), as a second commit, the base; both with a fixed identity and
# date, so that the same package gives the same commit ids wherever it is
# extracted.  (This commit
# is never sent: the series' mails carry the sender's identity, see
# sender_identity.)  Used by
# fetch-base.sh for the build tree and by series-check.sh for the fresh
# extract the series is applied to.
extract_base() {
	local deb=$1 dest=$2 pkg=$3 version=$4 tmp tarball
	local delta=$TOP/patches/base/$BASE_NAME.patch
	[ -f "$delta" ] || die "no $delta (Debian's perf delta of base $BASE_NAME)"
	tmp=$dest.deb
	rm -rf "$dest" "$tmp"
	mkdir -p "$dest" "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -C "$tmp" -x --wildcards '*.tar.xz'
	tarball=$(find "$tmp" -name 'linux-source-*.tar.xz' | head -n1)
	[ -n "$tarball" ] || die "no source tarball inside $deb"
	# Debian's tarball is xz in many blocks: xz decompresses them on every
	# core.
	tar -C "$dest" --strip-components=1 -I 'xz -T0' -xf "$tarball"
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
		git tag debian
		git apply --index "$delta" || exit 1
		GIT_AUTHOR_NAME=auxlab GIT_AUTHOR_EMAIL=auxlab@localhost \
		GIT_COMMITTER_NAME=auxlab GIT_COMMITTER_EMAIL=auxlab@localhost \
		GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' \
			git commit -q -m "$(sed '/^diff --git/,$d' "$delta")"
	) || die "extracting $pkg $version into $dest failed"
}

# base_delta_current REPO: whether REPO's base (tag "base") is its tag
# "debian" with today's patches/base/$BASE_NAME.patch applied (the same
# git patch-id), i.e. not a base extracted before that patch or with an
# older one.
base_delta_current() {
	local want have
	git -C "$1" rev-parse -q --verify refs/tags/debian >/dev/null || return 1
	want=$(git patch-id --stable <"$TOP/patches/base/$BASE_NAME.patch" | cut -d' ' -f1)
	have=$(git -C "$1" diff debian 'base^{commit}' | git patch-id --stable | cut -d' ' -f1)
	[ -n "$want" ] && [ "$want" = "$have" ]
}

# sender_identity REPO: set SENDER_NAME and SENDER_EMAIL to the identity
# the exported series is sent as: GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL if
# set, else user.name / user.email of REPO's git configuration (local,
# global or system).  Fails, saying how to set it, if either is missing.
# Only mail that leaves the project carries it (make-series.sh); the
# internal commits (extract_base, assemble.sh, series-check.sh's git am)
# use a fixed identity of their own.
sender_identity() {
	SENDER_NAME=${GIT_AUTHOR_NAME:-$(git -C "$1" config user.name || true)}
	SENDER_EMAIL=${GIT_AUTHOR_EMAIL:-$(git -C "$1" config user.email || true)}
	if [ -z "$SENDER_NAME" ] || [ -z "$SENDER_EMAIL" ]; then
		echo "no sender identity (name: '${SENDER_NAME}', email: '${SENDER_EMAIL}'):" \
			"set user.name and user.email (git config in $1, or --global)," \
			"or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL" >&2
		return 1
	fi
}

# series_trees REPO RANGE: one line that names the content of the commits
# of RANGE, oldest first: the sha256 of their tree ids.  Two exports of the
# same work have it in common, whatever their identities and dates, and so
# does the same series applied elsewhere with git am; series-check.sh
# records it and make-series.sh looks it up.
series_trees() {
	git -C "$1" log --reverse --format=%T "$2" | sha256sum | cut -d' ' -f1
}

# -- the series ----------------------------------------------------------------
# patches/series.txt (SERIES=file: another one) describes all of our work
# on the base, one stanza per commit: its overlay files, its semantic
# patch if any, its diff to upstream files, its message.  Only
# scripts/series.py reads it; the scripts take the commits from
# series_materialize.
SERIES=$(realpath -m "${SERIES:-$TOP/patches/series.txt}")

# fixes_dir: where make fixes exports the fixes of the base $BASE_NAME,
# under $OUT: "fixes" on the default base (7.3), "fixes-6.12" on 6.12.
fixes_dir() {
	if [ "$BASE_NAME" = "$BASE_DEFAULT" ]; then echo fixes; else echo "fixes-$BASE_NAME"; fi
}

# series_materialize DIR [--upstream]: the commits of $SERIES for the
# base $BASE_NAME (each commit's "base NAME:" block where it has one;
# with --upstream: those before its "rewrite:" line) written into DIR, emptied
# first: DIR/commits lists them ("NNN<TAB>subject"), DIR/NNN.msg,
# NNN.files, NNN.diff, NNN.cocci, NNN.fix and NNN.test-of hold each one's
# parts, the cover letters are DIR/cover.subject, cover.body, fixes-cover.subject
# and fixes-cover.body (scripts/series.py).  Fails, naming the line, on a
# mistake in the file or an overlay file claimed by no commit or by two.
series_materialize() {
	local dir=$1
	shift
	rm -rf "$dir"
	python3 "$TOP/scripts/series.py" --file "$SERIES" --top "$TOP" materialize "$dir" --base "$BASE_NAME" "$@"
}

# stage_commit DIR NNN [GIT-APPLY-OPTION...]: put commit NNN of the series
# materialized in DIR into the index GIT_INDEX_FILE of the repository in
# the current directory: its overlay files (copied from $TOP), then its
# semantic patch, then its diff (git apply --cached with the options
# given).
stage_commit() {
	local dir=$1 n=$2 gitdir cocci files=()
	shift 2
	if [ -s "$dir/$n.files" ]; then
		mapfile -t files <"$dir/$n.files"
		gitdir=$(git rev-parse --absolute-git-dir)
		(cd "$TOP" && git --git-dir="$gitdir" --work-tree="$TOP" add -f -- "${files[@]}")
	fi
	if [ -f "$dir/$n.cocci" ]; then
		cocci=$(cat "$dir/$n.cocci")
		apply_cocci "$(dirname "$cocci")" "$(basename "$cocci")" || return
	fi
	if [ -f "$dir/$n.diff" ]; then
		git apply --cached "$@" "$dir/$n.diff"
	fi
}

# apply_cocci DIR NAME: apply the Coccinelle semantic patch DIR/NAME (a
# commit's cocci: in patches/series.txt) to the index GIT_INDEX_FILE of
# the repository in the current directory.  A semantic patch removes
# upstream code without keeping a copy of it in this repository: its
# "// Files:" line names the files it transforms; each is taken from the
# index, run through spatch (with DIR/cocci.h for the macros spatch cannot
# parse), and put back.  A semantic patch that changes nothing in a file
# it names has gone stale, and fails like a patch that does not apply.
# spatch is slow on core.c, so its output is cached in $BUILD/cocci-cache
# by the hash of the semantic patch, the macros and the input.
apply_cocci() {
	local dir=$1 name=$2 path=$1/$2 f blob key out tmp ver
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

# ccache_summary: one line of this build's ccache counters, from the stats
# log that CCACHE_STATSLOG names (per build: the cache itself is shared by
# every clone and CI run on the machine).  Kbuild's compiler probes
# (cc-option, on /dev/null) are not compilations and are left out.
ccache_summary() {
	[ -s "${CCACHE_STATSLOG:-}" ] || { echo "ccache: no compilations"; return 0; }
	awk '
		/^# / { f = $2; next }
		f == "/dev/null" { next }
		$1 == "direct_cache_hit" { d++ }
		$1 == "preprocessed_cache_hit" { p++ }
		$1 == "cache_miss" { m++ }
		END { printf "ccache: %d/%d hits (%d direct, %d preprocessed)\n", d + p, d + p + m, d, p }
	' "$CCACHE_STATSLOG"
}

# -- the AUX rewrite ---------------------------------------------------------
# The AUX area rewrite's commits (what the "upstream" kernel leaves out)
# are those after the "rewrite:" line of patches/series.txt.  What else
# only ours has, patches/rewrite names, one glob per line after a keyword:
#	config GLOB	config fragments (configs/) merged for ours only
#	results GLOB	result suites that exist only because they test the
#			rewrite; make check does not compare them
# Globs are bash patterns, in which '*' also matches '/'.
REWRITE=$(realpath -m "${REWRITE:-$TOP/patches/rewrite}")

# rewrite_globs KIND: the globs of one kind, one per line.
rewrite_globs() {
	[ -f "$REWRITE" ] || return 0
	sed -e 's/#.*//' "$REWRITE" | awk -v k="$1" '$1 == k && NF == 2 { print $2 }'
}

# in_rewrite KIND NAME: true if NAME matches a glob of that kind.
in_rewrite() {
	local g
	while IFS= read -r g; do
		# shellcheck disable=SC2053	# unquoted: a pattern
		[[ $2 == $g ]] && return 0
	done < <(rewrite_globs "$1")
	return 1
}

# compare_runs OURS-RUNDIR UPSTREAM-RUNDIR TAPFILE: scripts/compare.py on
# two runs of the same guest, leaving out the result suites patches/rewrite
# marks as the rewrite's own; TAP into TAPFILE, status 1 on a difference.
compare_runs() {
	local g excl=()
	while IFS= read -r g; do excl+=(--exclude "$g"); done < <(rewrite_globs results)
	"$TOP/scripts/compare.py" "${excl[@]}" "$1" "$2" >"$3" 2>&1
}

# -- kernel configuration ----------------------------------------------------
# kconfig_merge O BASE-TARGET FRAGMENT...: with KMAKE set to the make
# command for O (tree and ARCH included), BASE-TARGET (tinyconfig) + the
# fragments via merge_config.sh, then olddefconfig; fails, naming them,
# if any option a fragment asks for did not survive olddefconfig (a typo
# or an unmet dependency would otherwise go unnoticed).  Regenerates only
# when a fragment is newer than O/.config.
kconfig_merge() {
	local o=$1 base=$2 f regen=0 bad=0 line opt have
	local -A want=()
	local -a order=()
	shift 2
	[ -f "$o/.config" ] || regen=1
	for f; do [ "$f" -nt "$o/.config" ] && regen=1; done
	[ $regen -eq 1 ] || return 0
	"${KMAKE[@]}" -s "$base" >/dev/null
	(cd "$TREE" && scripts/kconfig/merge_config.sh -m -O "$o" "$o/.config" "$@") >"$o/merge.log"
	"${KMAKE[@]}" -s olddefconfig >/dev/null
	# What each option was asked for: a later fragment's line wins, as in
	# merge_config.sh (configs/many.config raises qemu.config's NR_CPUS).
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) opt=${line%%=*} ;;
		'# CONFIG_'*' is not set') opt=${line#\# }; opt=${opt%% *}; line="# $opt is not set" ;;
		*) continue ;;
		esac
		[ -n "${want[$opt]+set}" ] || order+=("$opt")
		want[$opt]=$line
	done < <(cat "$@")
	for opt in "${order[@]}"; do
		have=$(grep -E "^($opt=|# $opt is not set)" "$o/.config" || echo "# $opt is not set")
		if [ "$have" != "${want[$opt]}" ]; then
			warn "config in $o: asked for '${want[$opt]}', got '$have'"
			bad=1
		fi
	done
	[ $bad -eq 0 ] || { rm -f "$o/.config"; echo "fragment not honoured: ${*##*/}" >&2; return 1; }
}
