#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 3: configure and build one kernel variant out of tree.
#
#   build-kernel.sh qemu      ours: tinyconfig + configs/qemu.config
#                             + the ours-only fragments (patches/rewrite)
#   build-kernel.sh debug     ours: ... + configs/debug.config
#   build-kernel.sh kcsan     ours: ... + configs/kcsan.config (KCSAN;
#                             KASAN excludes it, so a kernel of its own,
#                             built by make fuzz FUZZ_KERNEL=kcsan only)
#   build-kernel.sh upstream  the upstream tree ($UTREE: everything of ours
#                             but the AUX rewrite): tinyconfig +
#                             configs/qemu.config
#   build-kernel.sh base      a tree without the series (make fixes: the
#                             base and the fixes): tinyconfig +
#                             configs/qemu.config less the options that no
#                             Kconfig file of the tree defines (ptsim's)
#   build-kernel.sh cov       make coverage's (scripts/coverage.sh): qemu
#   build-kernel.sh cov-upstream  and upstream + configs/coverage.config,
#                             gcov on the objects named in gcov_objs below
#
# Objects go to $BUILD/obj/<variant> (for upstream a symlink to
# $BUILD/upstream/obj/qemu, see UTREE in lib.sh); the compiler runs under
# ccache.  The .config is regenerated only when a fragment is newer than
# it, and the script fails if any requested option did not survive
# olddefconfig, so a typo or a broken dependency in a fragment cannot go
# unnoticed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-kernel.sh qemu|debug|kcsan|upstream|base|cov|cov-upstream}
frags=("$TOP/configs/qemu.config")
ours_frags() {	# the config fragments patches/rewrite keeps for ours
	local f
	for f in "$TOP"/configs/*.config; do
		in_rewrite config "configs/${f##*/}" && frags+=("$f")
	done
	return 0
}
case $variant in
qemu) src=$TREE O=$BUILD/obj/qemu; ours_frags ;;
debug) src=$TREE O=$BUILD/obj/debug; ours_frags; frags+=("$TOP/configs/debug.config") ;;
kcsan) src=$TREE O=$BUILD/obj/kcsan; ours_frags; frags+=("$TOP/configs/kcsan.config") ;;
upstream)
	src=$UTREE O=$BUILD/upstream/obj/qemu
	[ -d "$UTREE" ] || die "no upstream tree at $UTREE; run make tree"
	mkdir -p "$O" "$BUILD/obj"
	ln -sfn ../upstream/obj/qemu "$BUILD/obj/upstream"
	;;
base)
	src=$TREE O=$BUILD/obj/base
	mkdir -p "$O"
	# The fragment, rewritten only when its content changes (its mtime
	# decides whether the .config is regenerated).
	find "$src" -name 'Kconfig*' -not -path '*/.git/*' -print0 |
		xargs -0 sed -n 's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/CONFIG_\2/p' |
		sort -u >"$O/base.known"
	awk '
		FNR == NR { def[$0] = 1; next }
		/^CONFIG_/ { o = $0; sub(/=.*/, "", o) }
		/^# CONFIG_.* is not set$/ { o = $2 }
		/^CONFIG_/ || /^# CONFIG_.* is not set$/ {
			if (!(o in def)) { print o > "/dev/stderr"; next }
		}
		{ print }' "$O/base.known" "$TOP/configs/qemu.config" >"$O/base.config.new" 2>"$O/base.dropped"
	if cmp -s "$O/base.config.new" "$O/base.config"; then rm -f "$O/base.config.new"; else mv "$O/base.config.new" "$O/base.config"; fi
	[ ! -s "$O/base.dropped" ] ||
		info "config[base]: left out, not defined in this tree: $(tr '\n' ' ' <"$O/base.dropped")"
	frags=("$O/base.config")
	;;
cov) src=$TREE O=$BUILD/obj/cov; ours_frags; frags+=("$TOP/configs/coverage.config") ;;
cov-upstream)
	src=$UTREE O=$BUILD/upstream/obj/cov
	[ -d "$UTREE" ] || die "no upstream tree at $UTREE; run make tree"
	frags+=("$TOP/configs/coverage.config")
	mkdir -p "$O" "$BUILD/obj"
	ln -sfn ../upstream/obj/cov "$BUILD/obj/cov-upstream"
	;;
*) die "unknown variant $variant" ;;
esac
mkdir -p "$O"
KMAKE=(make -C "$src" O="$O" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc")
# gcov_objs DIR/OBJ...: profile exactly these objects.  kbuild's
# GCOV_PROFILE_<obj>.o is keyed by the object's file name alone, so each
# is set on the command line (passed to every sub-make) to "y" only in
# its own directory ($(obj)): no Makefile changes, nothing else
# profiled, and the other variants are built as before.
gcov_objs() {
	local f
	for f; do
		KMAKE+=("GCOV_PROFILE_${f##*/}=\$(if \$(filter ${f%/*},\$(obj)),y)")
	done
}
case $variant in
cov) gcov_objs kernel/events/aux.o kernel/events/flush.o \
	drivers/hwtracing/ptsim/ptsim-engine.o drivers/hwtracing/ptsim/ptsim-pmu.o \
	drivers/hwtracing/ptsim/ptsim-bench.o drivers/hwtracing/ptsim/ptsim-mark.o ;;
cov-upstream) gcov_objs kernel/events/ring_buffer.o kernel/events/core.o ;;
esac

# Print warnings and errors as they come, and a count of compiled objects
# every 30 seconds: the build is visibly alive without flooding the log.
progress() {
	local line n=0 last=$SECONDS
	while IFS= read -r line; do
		case $line in
		*warning:* | *error:* | *Error\ *) printf '%s\n' "$line" ;;
		'  CC '* | '  LD '* | '  AR '* | '  AS '*) n=$((n + 1)) ;;
		esac
		if [ $((SECONDS - last)) -ge 30 ]; then
			info "build: $n objects so far"
			last=$SECONDS
		fi
	done
	info "build: $n objects compiled or linked"
}

# patches/rewrite decides which fragments are ours-only: a change to it
# may change the set.
[ "$REWRITE" -nt "$O/.config" ] && rm -f "$O/.config"
newer=0
[ -f "$O/.config" ] || newer=1
for f in "${frags[@]}"; do [ "$f" -nt "$O/.config" ] && newer=1; done
[ $newer -eq 0 ] || stage "config[$variant]: tinyconfig + ${frags[*]##*/}"
kconfig_merge "$O" tinyconfig "${frags[@]}" || die "config[$variant]: fragment not honoured"

stage "build[$variant]: make -j$JOBS bzImage modules (log: $O/build.log)"
# This build's own ccache counters (the cache is shared with other builds).
export CCACHE_STATSLOG=$O/ccache-stats.log
rm -f "$CCACHE_STATSLOG"
set +e
"${KMAKE[@]}" bzImage modules 2>&1 | tee "$O/build.log" | progress
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { tail -n 30 "$O/build.log" >&2; die "build[$variant] failed (see $O/build.log)"; }
# The guest's programs are built once, against the ours tree's uapi headers
# (build-guest.sh), and run on every variant: upstream needs none.
[ "$variant" = upstream ] || "${KMAKE[@]}" -s headers_install INSTALL_HDR_PATH="$O/usr" >/dev/null
info "build[$variant]: $(du -h "$O/arch/x86/boot/bzImage" | cut -f1) bzImage; $(ccache_summary)"
