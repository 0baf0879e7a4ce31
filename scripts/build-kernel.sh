#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 3: configure and build one kernel variant out of tree.
#
#   build-kernel.sh VARIANT   a row of scripts/kernels.py's VARIANTS: its
#                             tree (ours: $TREE, build/ours-7.3/linux;
#                             upstream: $UTREE, build/upstream-7.3/linux
#                             or on 6.12 build/upstream/linux,
#                             everything of ours but the AUX rewrite), its
#                             config fragments over tinyconfig (ours also
#                             merges those patches/rewrite keeps for it),
#                             the objects it profiles with gcov.  "base"
#                             (make fixes: a tree without the series) takes
#                             configs/qemu.config less the options that no
#                             Kconfig file of the tree defines (ptsim's);
#                             "base-6.12" the same for make fixes
#                             BASE=6.12.
#                             "kcsan" is built by make fuzz only, "cov"
#                             and "cov-upstream" by make coverage.
#
# Objects go to $BUILD/obj/<variant>, or beside the variant's tree (its
# row's obj: build/ours-7.3/obj/qemu, build/upstream-7.3/obj/qemu, on
# 6.12 build/upstream/obj/qemu, see REPO in lib.sh), which
# $BUILD/obj/<variant> then links to; the compiler runs under ccache.
# The .config is regenerated only when a fragment is newer than it, and
# the script fails if any requested option did not survive
# olddefconfig, so a typo or a broken dependency in a fragment cannot go
# unnoticed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-kernel.sh VARIANT (scripts/kernels.py list built)}
variant_env "$variant"
[ -n "$K_TREE" ] || die "$variant is not built here (scripts/kernels.py)"
src=$K_SRC O=$BUILD/${K_OBJ:-obj/$variant}
[ -d "$src" ] || die "no $K_TREE tree at $src; run make tree"
frags=()
for f in $K_FRAGS; do frags+=("$TOP/configs/$f"); done
if [ "$K_REWRITE_FRAGS" = 1 ]; then	# and those patches/rewrite keeps for ours
	for f in "$TOP"/configs/*.config; do
		in_rewrite config "configs/${f##*/}" && frags+=("$f")
	done
fi
mkdir -p "$O" "$BUILD/obj"
# Objects elsewhere (beside their tree, see REPO in lib.sh): linked
# from obj/<variant>, as every variant's objects are found.
# A directory there (objects of before the row had an obj) would take
# the link inside it.
if [ -n "$K_OBJ" ]; then
	[ -L "$BUILD/obj/$variant" ] || rm -rf "$BUILD/obj/$variant"
	ln -sfn "$(realpath --relative-to="$BUILD/obj" "$O")" "$BUILD/obj/$variant"
fi
if [ "$K_KNOWN_ONLY" = 1 ]; then
	# The fragments less the options no Kconfig file of the tree
	# defines; rewritten only when its content changes (its mtime
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
		{ print }' "$O/base.known" "${frags[@]}" >"$O/base.config.new" 2>"$O/base.dropped"
	if cmp -s "$O/base.config.new" "$O/base.config"; then rm -f "$O/base.config.new"; else mv "$O/base.config.new" "$O/base.config"; fi
	[ ! -s "$O/base.dropped" ] ||
		info "config[$variant]: left out, not defined in this tree: $(tr '\n' ' ' <"$O/base.dropped")"
	frags=("$O/base.config")
fi
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
# shellcheck disable=SC2086
[ -z "$K_GCOV" ] || gcov_objs $K_GCOV

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
[ "$K_HEADERS" = 0 ] || "${KMAKE[@]}" -s headers_install INSTALL_HDR_PATH="$O/usr" >/dev/null
info "build[$variant]: $(du -h "$O/arch/x86/boot/bzImage" | cut -f1) bzImage; $(ccache_summary)"
