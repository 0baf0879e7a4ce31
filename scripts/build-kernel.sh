#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 3: configure and build one kernel variant out of tree.
#
#   build-kernel.sh qemu     tinyconfig + configs/qemu.config
#   build-kernel.sh debug    ... + configs/debug.config
#
# Objects go to $BUILD/obj/<variant>; the compiler runs under ccache.  The
# .config is regenerated only when a fragment is newer than it, and the
# script fails if any requested option did not survive olddefconfig, so a
# typo or a broken dependency in a fragment cannot go unnoticed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-kernel.sh qemu|debug}
O=$BUILD/obj/$variant
frags=("$TOP/configs/qemu.config" "$TOP/configs/ours.config")
[ "$variant" = debug ] && frags+=("$TOP/configs/debug.config")
case $variant in qemu|debug) ;; *) die "unknown variant $variant" ;; esac
mkdir -p "$O"
KMAKE=(make -C "$TREE" O="$O" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc")

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

regen=0
[ -f "$O/.config" ] || regen=1
for f in "${frags[@]}"; do [ "$f" -nt "$O/.config" ] && regen=1; done
if [ $regen -eq 1 ]; then
	stage "config[$variant]: tinyconfig + ${frags[*]##*/}"
	"${KMAKE[@]}" -s tinyconfig >/dev/null
	(cd "$TREE" && scripts/kconfig/merge_config.sh -m -O "$O" "$O/.config" "${frags[@]}") >"$O/merge.log"
	"${KMAKE[@]}" -s olddefconfig >/dev/null
	bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) opt=${line%%=*}; want=$line ;;
		'# CONFIG_'*' is not set') opt=${line#\# }; opt=${opt%% *}; want="# $opt is not set" ;;
		*) continue ;;
		esac
		have=$(grep -E "^($opt=|# $opt is not set)" "$O/.config" || echo "# $opt is not set")
		if [ "$have" != "$want" ]; then
			warn "config[$variant]: asked for '$want', got '$have'"
			bad=1
		fi
	done < <(cat "${frags[@]}")
	[ $bad -eq 0 ] || { rm -f "$O/.config"; die "config[$variant]: fragment not honoured"; }
fi

stage "build[$variant]: make -j$JOBS bzImage modules (log: $O/build.log)"
set +e
"${KMAKE[@]}" bzImage modules 2>&1 | tee "$O/build.log" | progress
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { tail -n 30 "$O/build.log" >&2; die "build[$variant] failed (see $O/build.log)"; }
"${KMAKE[@]}" -s headers_install INSTALL_HDR_PATH="$O/usr" >/dev/null
info "build[$variant]: $(du -h "$O/arch/x86/boot/bzImage" | cut -f1) bzImage"
