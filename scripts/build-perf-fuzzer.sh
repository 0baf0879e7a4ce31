#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 4a': build Vince Weaver's perf_fuzzer (and its replay_log) static
# for the guest, from the tarball in ../shared/third_party/ (see the README
# there; PERF_FUZZER_TARBALL names another).  It is third-party code: never
# copied into this repository, extracted into $BUILD/perf_fuzzer at build
# time, with our patches (tests/perf_fuzzer/*.patch) applied and our hooks
# (tests/perf_fuzzer/auxlab-hooks.c) linked in through -Wl,--wrap.
#
#   build-perf-fuzzer.sh OUTDIR     -> OUTDIR/perf_fuzzer, OUTDIR/replay_log
#
# Without the tarball nothing is built and the guest's perf_fuzzer suite
# reports itself failed (scripts/guest/perf-fuzzer-run): a missing fuzzer is
# never a pass.  Rebuilt only when the tarball, a patch, the hooks or the
# sysfs reader they use (tools/aux/lib/aux_sysfs.c) change.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${1:?output directory}
tarball=${PERF_FUZZER_TARBALL:-}
if [ -z "$tarball" ]; then
	for t in "$TOP"/../shared/third_party/perf_event_tests-*.tar.gz; do
		[ -f "$t" ] && tarball=$t
	done
fi
rm -f "$out/perf_fuzzer" "$out/replay_log"
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	warn "perf_fuzzer: no perf_event_tests tarball in $TOP/../shared/third_party (or PERF_FUZZER_TARBALL); the guest's perf_fuzzer suite will fail"
	exit 0
fi

src=$BUILD/perf_fuzzer
hooks=$TOP/tests/perf_fuzzer/auxlab-hooks.c
mapfile -t patches < <(find "$TOP/tests/perf_fuzzer" -name '*.patch' | sort)
# tools/aux/lib's sysfs reader, which the hooks use
auxlib=$TOP/tools/aux/lib
stamp=$(sha256sum "$tarball" "$hooks" "$auxlib"/aux_sysfs.[ch] "${patches[@]}" |
	sha256sum | cut -c1-16)
if [ "$(cat "$src/.stamp" 2>/dev/null)" != "$stamp" ]; then
	stage "perf_fuzzer: building from $(basename "$tarball") (static, ${#patches[@]} patches of ours)"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xzf "$tarball" -C "$src" --strip-components=1
	for p in "${patches[@]}"; do
		patch -s -p1 -d "$src" <"$p" || die "perf_fuzzer: $(basename "$p") does not apply"
	done
	cc="ccache gcc"
	make -s -C "$src/lib" CC="$cc" >"$src/build.log" 2>&1 ||
		{ tail -n 20 "$src/build.log" >&2; die "perf_fuzzer: lib failed to build"; }
	# Our hooks: -Wall -Wextra -Werror; the fuzzer's own files build with
	# its flags, warnings and all (third-party code, not ours to fix).
	$cc -O2 -g -Wall -Wextra -Werror -I "$src/fuzzer" -I "$auxlib" -c -o "$src/auxlab-hooks.o" "$hooks"
	$cc -O2 -g -Wall -Wextra -Werror -c -o "$src/aux_sysfs.o" "$auxlib/aux_sysfs.c"
	# The hooks object goes first, so the archives after it resolve the
	# __real_ symbols it calls.
	make -s -C "$src/fuzzer" CC="$cc" \
		LDFLAGS="-static $src/auxlab-hooks.o $src/aux_sysfs.o -Wl,--wrap=perf_event_open,--wrap=mmap,--wrap=signal" \
		perf_fuzzer >>"$src/build.log" 2>&1 ||
		{ tail -n 20 "$src/build.log" >&2; die "perf_fuzzer: perf_fuzzer failed to build"; }
	make -s -C "$src/fuzzer" CC="$cc" LDFLAGS=-static replay_log >>"$src/build.log" 2>&1 ||
		{ tail -n 20 "$src/build.log" >&2; die "perf_fuzzer: replay_log failed to build"; }
	echo "$stamp" >"$src/.stamp"
fi
mkdir -p "$out"
cp "$src/fuzzer/perf_fuzzer" "$src/fuzzer/replay_log" "$out/"
info "perf_fuzzer: $out/perf_fuzzer ($(du -h "$out/perf_fuzzer" | cut -f1)), replay_log"
