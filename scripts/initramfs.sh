#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 4b: pack busybox-static, the guest programs and the suite lists into
# $BUILD/initramfs.cpio.gz.  One image serves every mode; the kernel command
# line (auxlab.mode=check|stock|smp8|coverage|run|bench|bench-cpus|fuzz|
# profile|selftest|kselftest) picks the list /init runs (tests/suites.py
# writes them).  The kselftest mode's root file system is a second archive,
# $BUILD/kselftest.cpio.gz.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

G=$BUILD/guest
R=$BUILD/initramfs
BUSYBOX=/bin/busybox
# A dynamic busybox (Debian's "busybox" package) would find no libc in the
# guest: insist on busybox-static, i.e. no program interpreter.
if [ ! -x "$BUSYBOX" ] || readelf -l "$BUSYBOX" | grep -q 'program interpreter'; then
	die "$BUSYBOX is missing or not static (install busybox-static)"
fi

stage "initramfs: packing $R.cpio.gz"
rm -rf "$R"
mkdir -p "$R"/{bin,dev,proc,sys,tmp,tests}
cp "$BUSYBOX" "$R/bin/busybox"
cp "$G/guest-exit" "$R/bin/"
install -m 0755 "$TOP/scripts/guest/init" "$R/init"
cp -r "$G/perf_events" "$G/harness" "$G/modules" "$R/tests/"
cp "$G/aux-pmus" "$G/aux-record" "$G/aux-bench" "$R/tests/"
# perf (scripts/build-perf.sh) and the perf suite's guest half.
[ -x "$BUILD/perf/perf" ] || die "no $BUILD/perf/perf; run scripts/build-perf.sh"
cp "$BUILD/perf/perf" "$G/perf-spin" "$R/tests/"
install -m 0755 "$TOP/scripts/guest/perf-record.sh" "$TOP/scripts/guest/perf-test.sh" "$R/tests/"
# perf test's shell tests of the series ("perf test: Add shell tests ..."), where perf test looks
# for them: tests/shell beside the perf binary.
mkdir -p "$R/tests/tests/shell/lib"
install -m 0755 "$TREE"/tools/perf/tests/shell/test_ptsim*.sh "$R/tests/tests/shell/"
install -m 0644 "$TREE/tools/perf/tests/shell/lib/ptsim.sh" "$R/tests/tests/shell/lib/"
# perf_fuzzer, if it was built (scripts/build-perf-fuzzer.sh); without it
# its suite fails, saying why.
for f in perf_fuzzer replay_log; do
	[ -f "$G/$f" ] && cp "$G/$f" "$R/tests/"
done
cp "$G/aux-store-abi" "$R/tests/"
install -m 0755 "$TOP/scripts/guest/perf-fuzzer-run" "$TOP/scripts/guest/kmemleak-scan" \
	"$TOP/scripts/guest/kmemleak-scan-area" \
	"$TOP/scripts/guest/gcov-collect" "$TOP/scripts/guest/ptsim-module-test" \
	"$TOP/scripts/guest/pmu-config" "$TOP/scripts/guest/hotplug-loop" \
	"$TOP/scripts/guest/kselftest-run" "$R/tests/"

# The lists, one per mode: tests/suites.py, from its table and the
# perf_events programs of the built guest.
GUEST=$G python3 "$TOP/tests/suites.py" lists "$R/tests" ||
	die "tests/suites.py lists failed"

(cd "$R" && find . -print0 | sort -z | cpio --null -o -H newc --quiet --reproducible) |
	gzip -1 >"$R.cpio.gz"
# The kselftest boot's root file system (scripts/build-guest.sh): an
# archive of its own, which boot.sh appends to this one in that mode.
[ -d "$G/kselftest-root/kselftest" ] || die "no $G/kselftest-root; run scripts/build-guest.sh"
(cd "$G/kselftest-root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet --reproducible) |
	gzip -1 >"$BUILD/kselftest.cpio.gz"
info "initramfs: $(du -h "$R.cpio.gz" | cut -f1), $(grep -vc '^#' "$R/tests/check.list") check suites"
