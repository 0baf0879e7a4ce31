#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 4a: build the guest's statically linked programs into $BUILD/guest.
#
#   - upstream's tools/testing/selftests/perf_events (built from the
#     assembled tree with its own Makefile, so our additions to that
#     directory are built the same way);
#   - our tools (tools/aux, with its own Makefile): aux-pmus, the recorder
#     aux-record and the benchmark aux-bench for the guest; the trace
#     decoder aux-decode for the host, in $BUILD/host, linked with libipt
#     (which has no static build in Debian);
#   - perf_fuzzer and its replay_log (build-perf-fuzzer.sh);
#   - the guest helpers (scripts/guest) and the harness self-test pieces
#     (tests/harness), including an out-of-tree KUnit module built against
#     the qemu kernel.
#
# uapi headers come from the qemu kernel's headers_install, i.e. from the
# assembled tree, not from the host's /usr/include.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

G=$BUILD/guest
HDR=$BUILD/obj/qemu/usr/include
[ -d "$HDR" ] || die "no kernel headers at $HDR; build the qemu kernel first"
# From scratch: a program whose source is gone (renamed, dropped from a
# Makefile) must not survive here and run as a suite of the next check.
rm -rf "$G"
mkdir -p "$G/perf_events" "$G/harness"
CC=(ccache gcc)
UCFLAGS=(-O2 -Wall -Wextra -Werror -static -isystem "$HDR" -I "$TREE/tools/include")
AUXLIB=(-I "$TOP/tools/aux/lib")
AUXLIB_SRCS=("$TOP/tools/aux/lib/aux_sysfs.c")

stage "guest: building static test programs"
# -Werror: ours must be warning-free, and upstream's programs are on the
# pinned base, so a warning means a change of ours broke something.
make -s -C "$TREE/tools/testing/selftests/perf_events" OUTPUT="$G/perf_events" \
	CC="${CC[*]}" KHDR_INCLUDES="-isystem $HDR" USERCFLAGS="-static -Werror" USERLDFLAGS=-static \
	>"$G/selftests.log" 2>&1 || { cat "$G/selftests.log" >&2; die "perf_events selftests failed to build"; }
# sigtrap_threads again, its harness's per-case alarm tripled
# (scripts/guest/alarm-x3.c says why).
"${CC[@]}" -O2 -Wall -Werror -c -o "$G/alarm-x3.o" "$TOP/scripts/guest/alarm-x3.c"
rm -f "$G/perf_events/sigtrap_threads"
make -s -C "$TREE/tools/testing/selftests/perf_events" OUTPUT="$G/perf_events" \
	CC="${CC[*]}" KHDR_INCLUDES="-isystem $HDR" USERCFLAGS="-static -Werror" \
	USERLDFLAGS="-static -Wl,--wrap=alarm $G/alarm-x3.o" "$G/perf_events/sigtrap_threads" \
	>>"$G/selftests.log" 2>&1 || { cat "$G/selftests.log" >&2; die "sigtrap_threads failed to build"; }
rm -f "$G/alarm-x3.o"
info "perf_events selftests: $(cd "$G/perf_events" && find . -maxdepth 1 -type f -perm -u+x -printf '%f ' )"

# The same selftests as kernel CI installs them, for make check's
# kselftest boot (scripts/guest/kselftest-run): "make -C
# tools/testing/selftests TARGETS=perf_events install" with the qemu
# kernel's objects as O= (what kselftest-install does: objects in
# O/kselftest, the uapi headers of O/usr/include), built as CI builds
# them (dynamic, the target's own flags), and the root file system they
# run on: the installed tree in /kselftest, bash, dash as /bin/sh,
# coreutils' timeout and stdbuf (the runner calls /usr/bin/timeout
# --foreground, which busybox lacks), and every shared library these
# load, from the host.  scripts/initramfs.sh packs it as an archive of
# its own, which boot.sh appends for that boot only.
K=$G/kselftest-root
mkdir -p "$K"
make -s -C "$TREE/tools/testing/selftests" O="$BUILD/obj/qemu" TARGETS=perf_events \
	CC="${CC[*]}" KSFT_INSTALL_PATH="$K/kselftest" install >"$G/kselftest-install.log" 2>&1 ||
	{ cat "$G/kselftest-install.log" >&2; die "make -C tools/testing/selftests TARGETS=perf_events install failed"; }
grep -q '^perf_events:' "$K/kselftest/kselftest-list.txt" ||
	die "the installed tree lists no perf_events program ($K/kselftest/kselftest-list.txt)"
for f in /bin/bash /bin/dash /usr/bin/timeout /usr/bin/stdbuf /usr/libexec/coreutils/libstdbuf.so; do
	[ -e "$f" ] || die "$f is missing (bash, dash and coreutils are needed for the kselftest root file system)"
	install -D -m 0755 "$f" "$K$f"
done
ln -sfn dash "$K/bin/sh"
# Their libraries, and the dynamic loader, at the paths ldd names.
while read -r lib; do
	[ -e "$K$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$K$lib"
done < <(find "$K" -type f -perm -u+x -exec ldd {} + 2>/dev/null |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u)
[ -e "$K/lib64/ld-linux-x86-64.so.2" ] || die "no dynamic loader in $K (ldd found nothing to copy)"
info "kselftest tree: $(grep -c '^perf_events:' "$K/kselftest/kselftest-list.txt") perf_events programs installed, root file system in $K"

# The recorder and the decoder are the demo and the trace checker of every
# test: a tree without them cannot pass, so their absence is an error.
# tools/aux is built with its own Makefile, as a user builds it: the
# guest's programs (aux-pmus, aux-record, and aux-bench for make bench and
# its smoke suite) static against the kernel's headers with -Werror, the
# decoder for the host, against the same headers (the PERF_AUX_FLAG values
# it explains gaps with) and the host's libipt (libipt-dev).
[ -f "$TREE/tools/aux/Makefile" ] ||
	die "tools/aux/Makefile is missing from the assembled tree (add it to the overlay and re-run make)"
mkdir -p "$BUILD/host"
make -s -C "$TREE/tools/aux" O="$G" CC="${CC[*]}" STATIC=1 KHDR_INCLUDES="-isystem $HDR" \
	EXTRA_CFLAGS=-Werror >"$G/aux-tools.log" 2>&1 ||
	{ cat "$G/aux-tools.log" >&2; die "tools/aux failed to build"; }
for t in aux-pmus aux-record aux-bench aux-decode; do
	[ -x "$G/$t" ] || die "tools/aux built no $t (aux-decode needs libipt-dev)"
done
mv "$G/aux-decode" "$BUILD/host/aux-decode"
"${CC[@]}" "${UCFLAGS[@]}" -o "$G/guest-exit" "$TOP/scripts/guest/guest-exit.c"
# The perf suite's workload (scripts/guest/perf-record.sh).
"${CC[@]}" "${UCFLAGS[@]}" -pthread -o "$G/perf-spin" "$TOP/scripts/guest/perf-spin.c"
# What a load or store into each page of a perf buffer gives (the ABI
# perf_fuzzer's SIGBUS is judged by), and the outside fuzzer itself,
# perf_fuzzer, from ../shared/third_party.
# tools/aux/lib's sysfs reader (AUXLIB) goes into the programs of ours
# built here, as into the tools and the selftests.
"${CC[@]}" "${UCFLAGS[@]}" "${AUXLIB[@]}" -o "$G/aux-store-abi" \
	"$TOP/tests/perf_fuzzer/aux-store-abi.c" "${AUXLIB_SRCS[@]}"
"$TOP/scripts/build-perf-fuzzer.sh" "$G"

# Harness self-test: a kselftest that must fail, and a KUnit module whose
# case must fail and whose init must WARN.
# kselftest_harness.h is not -Wextra clean; build as lib.mk does (-Wall).
"${CC[@]}" -O2 -Wall -Werror -static -isystem "$HDR" -I "$TREE/tools/testing/selftests" \
	-o "$G/harness/deliberate_fail" "$TOP/tests/harness/deliberate_fail.c"
# The programs of the test modules (tests/modules; the modules themselves
# are built per kernel by boot.sh).
mkdir -p "$G/modules"
"${CC[@]}" "${UCFLAGS[@]}" "${AUXLIB[@]}" -o "$G/modules/aux_testmod_test" \
	"$TOP/tests/modules/aux_testmod/aux_testmod_test.c" "${AUXLIB_SRCS[@]}"
"${CC[@]}" "${UCFLAGS[@]}" "${AUXLIB[@]}" -pthread -o "$G/modules/nmi_foreign_test" \
	"$TOP/tests/modules/nmi_foreign/nmi_foreign_test.c" "${AUXLIB_SRCS[@]}"
"${CC[@]}" "${UCFLAGS[@]}" "${AUXLIB[@]}" -o "$G/modules/aux_xpmu_test" \
	"$TOP/tests/modules/aux_xpmu/aux_xpmu_test.c" "${AUXLIB_SRCS[@]}"
"${CC[@]}" "${UCFLAGS[@]}" "${AUXLIB[@]}" -o "$G/modules/aux_share_test" \
	"$TOP/tests/modules/aux_share/aux_share_test.c" "${AUXLIB_SRCS[@]}"

rm -rf "$BUILD/harness-mod" && cp -r "$TOP/tests/harness/module" "$BUILD/harness-mod"
make -s -C "$BUILD/obj/qemu" M="$BUILD/harness-mod" CC="${CC[*]}" modules \
	>"$G/harness/module.log" 2>&1 || { cat "$G/harness/module.log" >&2; die "harness module failed to build"; }
cp "$BUILD/harness-mod/harness_selftest.ko" "$G/harness/"
info "guest programs ready in $G, host decoder $BUILD/host/aux-decode"
