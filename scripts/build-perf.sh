#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 4c: the perf tool of the assembled tree (tools/perf, with the
# series' patches), built once as a static binary, $BUILD/perf/perf.
#
# The same binary records in the guest (copied into the initramfs) and
# reads the recordings on the host (perf report -D, perf script), where
# formatting millions of packets takes seconds instead of minutes under
# TCG.  Static, so it needs no libraries in the guest; every optional
# feature that would need one is switched off, which leaves what the
# AUX area needs: perf record's auxtrace code and the Intel PT decoder.
#
# Built with ccache, and only when its sources changed: the stamp is the
# git tree of every tools/ directory perf is built from, in the ours tree,
# plus the options below; both kernels share the binary (the patch is
# before the rewrite, so it is the same in both trees).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

P=$BUILD/perf
# NO_RUST: 7.3's perf test has a workload in Rust (linked in by ld -r),
# which the host's ar cannot index through its LLVM plugin; 6.12 has none.
PERF_OPTS=(
	LDFLAGS=-static NO_JEVENTS=1 NO_LIBPYTHON=1 NO_LIBPERL=1
	NO_LIBTRACEEVENT=1 NO_LIBDW=1 NO_DWARF=1 NO_LIBUNWIND=1
	NO_LIBDW_DWARF_UNWIND=1 NO_SLANG=1 NO_GTK2=1 NO_JVMTI=1 NO_LIBNUMA=1
	NO_LIBCAP=1 NO_LIBBABELTRACE=1 NO_LIBCRYPTO=1 NO_LIBZSTD=1
	NO_CAPSTONE=1 NO_LIBPFM4=1 NO_LIBLLVM=1 NO_LIBBPF=1 BUILD_BPF_SKEL=0
	NO_SDT=1 NO_DEMANGLE=1 NO_LIBAUDIT=1 NO_SHELLCHECK=1
	NO_LIBBIONIC=1 NO_LIBCLANGLLVM=1 NO_BACKTRACE=1 NO_LZMA=1 NO_RUST=1
	WERROR=0
)
stamp=$( {
	git -C "$TREE" rev-parse HEAD:tools/perf HEAD:tools/lib HEAD:tools/include \
		HEAD:tools/arch HEAD:tools/build HEAD:tools/scripts
	printf '%s\n' "${PERF_OPTS[@]}"
} | sha256sum | cut -c1-16)

if [ -x "$P/perf" ] && [ "$(cat "$P/stamp" 2>/dev/null)" = "$stamp" ]; then
	info "perf: up to date ($P/perf, $(du -h "$P/perf" | cut -f1))"
	exit 0
fi
stage "perf: building static tools/perf (JOBS=$JOBS, log $P/build.log)"
mkdir -p "$P"
rm -f "$P/stamp"
# perf's Makefile runs its own sub-make and ignores make's -j: pass JOBS.
# ccache caches the C compiles; the output directory keeps the objects, so
# a change to one file of tools/perf rebuilds that file.
if ! make -C "$TREE/tools/perf" O="$P" JOBS="$JOBS" CC="ccache gcc" HOSTCC="ccache gcc" \
	"${PERF_OPTS[@]}" perf >"$P/build.log" 2>&1; then
	tail -n 40 "$P/build.log" >&2
	die "perf failed to build (see $P/build.log)"
fi
# A static binary has no program interpreter; a dynamic one would find no
# libraries in the guest.
if readelf -l "$P/perf" | grep -q 'program interpreter'; then
	die "$P/perf is not static"
fi
"$P/perf" version >/dev/null || die "$P/perf does not run on the host"
echo "$stamp" >"$P/stamp"
info "perf: $("$P/perf" version), $(du -h "$P/perf" | cut -f1), $P/perf"
