#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 5: boot one kernel variant with the initramfs in QEMU.
#
#   boot.sh VARIANT MODE RUNDIR     e.g. boot.sh qemu check out/check-qemu
#
# Kernel console -> RUNDIR/console.log (ttyS0), /init's output ->
# RUNDIR/tests.log (ttyS1), followed live on stdout.  The guest ends itself
# through isa-debug-exit; a host-side timeout (TIMEOUT, seconds) bounds a
# hung guest.
#
# Files the guest's suites leave in /tmp/out (traces, mostly) come back
# through a transfer disk: a sparse raw image RUNDIR/xfer.img (XFER_MB MiB,
# default 1024: the guest's tmpfs cannot hold more) attached as virtio-blk,
# onto which /init writes a tar of /tmp/out as its last act.  It is unpacked
# into RUNDIR/guest/ and deleted; an image still all zeros means the guest
# had nothing to send.  RUNDIR/xfer.txt says what happened ("ok files=N",
# "none", or "failed: why").
#
# APPEND adds words to the kernel command line, after the variant's own
# (its append in scripts/kernels.py) (e.g. the fuzz mode's
# auxlab.seed=N auxlab.ops=N, see scripts/guest/init).
#
# Exit status 0 when the guest reached the end of /init and its output, if
# any, came back complete.
#
# The kernel command line has acpi=noirq: the transfer disk is the one PCI
# device that needs an interrupt, and routing it through ACPI means running
# the _PRT method of QEMU's i440fx DSDT, an AML loop that the debug kernel
# (KASAN + lockdep) under TCG does not finish within ACPICA's 30 s loop
# timeout; the disk then gets no IRQ and its first read hangs the boot.  The
# PIIX router of the PCI BIOS table routes it at once.  ACPI still
# describes the CPUs (SMP) and everything else.
#
# And tsc=reliable: under TCG on a busy host the clocksource watchdog
# finds the TSC skewed against the HPET, marks it unstable and switches
# the clocksource to the HPET, whose every read is an emulated MMIO
# access.  From then on each clock read, and so each timer, schedule and
# time stamp, costs many times more, and a guest on a loaded host slows
# down further at an unpredictable moment (seen: the debug kernel's
# perf_fuzzer stalled past its own 60 s no-progress watchdog after such a
# switch, on a host with a load of 7 on 2 cores).  The guest's TSC is
# QEMU's and is as stable as the host's.
#
# And unknown_nmi_panic: ptsim sends its CPU NMIs (its PMI), and an NMI
# that no handler claims, one of ptsim's left unclaimed say, ends the
# boot at once instead of a line the run could go past
# (tests/modules/nmi_foreign provokes other NMIs while ptsim sends its
# own).  results.py counts the line as a splat as well.
#
# Acceleration: TCG unless ACCEL=kvm, or ACCEL=auto (the default) and a
# short probe boot under KVM proves a guest really runs there (on nested
# hosts /dev/kvm exists but guests hang).  ICOUNT=N adds "-icount shift=N"
# under TCG: the guest clock then follows executed instructions, for
# repeatable timings.  SMP (default 2) and MEM (default 2G) size the
# guest; QEMU_EXTRA adds arguments (make bench uses these).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?variant} mode=${2:?mode} rundir=${3:?rundir}
variant_env "$variant"
kernel=$BUILD/${K_KERNEL:-obj/$variant/arch/x86/boot/bzImage}
initrd=$BUILD/initramfs.cpio.gz
# A kernel not built here (the table's kernel and initrd: Debian's own,
# scripts/stock.sh) brings its modules (virtio_blk, ptsim.ko built
# against its headers) and their set-up in a second archive.
if [ -n "$K_INITRD" ]; then
	[ -f "$BUILD/$K_INITRD" ] || die "no $BUILD/$K_INITRD; run make kernel-$variant"
	cat "$initrd" "$BUILD/$K_INITRD" >"$(dirname "$BUILD/$K_INITRD")/initrd.cpio.gz"
	initrd=$(dirname "$BUILD/$K_INITRD")/initrd.cpio.gz
fi
[ -f "$kernel" ] || die "no kernel $kernel"
[ -f "$initrd" ] || die "no initramfs $initrd"
# The kselftest mode runs the installed selftests on their own root file
# system (bash, dash, coreutils, glibc; scripts/build-guest.sh): a second
# archive, unpacked over the first.
if [ "$mode" = kselftest ]; then
	[ -f "$BUILD/kselftest.cpio.gz" ] || die "no $BUILD/kselftest.cpio.gz; run scripts/initramfs.sh"
	cat "$initrd" "$BUILD/kselftest.cpio.gz" >"$BUILD/initramfs-kselftest.cpio.gz"
	initrd=$BUILD/initramfs-kselftest.cpio.gz
fi

# The test modules (tests/modules/*/, each with its kbuild Makefile) must
# match the kernel they are loaded into: built here against this variant's
# objects, they go into a second archive appended to the initramfs (the
# kernel unpacks both), under /tests/modules.  Only "check", "coverage"
# (which runs its list) and "kselftest" (modules/intel_pt_host) load them.
if { [ "$mode" = check ] || [ "$mode" = coverage ] || [ "$mode" = kselftest ]; } && [ "$K_TEST_MODULES" = 1 ]; then
	mods=$BUILD/modules/$variant
	rm -rf "$mods"
	mkdir -p "$mods/src" "$mods/root/tests/modules"
	for d in "$TOP"/tests/modules/*/; do
		[ -f "$d/Makefile" ] || continue
		n=$(basename "$d")
		cp -r "$d" "$mods/src/$n"
		make -s -C "$BUILD/obj/$variant" M="$mods/src/$n" CC="ccache gcc" modules \
			>"$mods/$n.log" 2>&1 || die "test module $n failed to build for $variant (log: $mods/$n.log)"
		cp "$mods/src/$n"/*.ko "$mods/root/tests/modules/"
	done
	(cd "$mods/root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet --reproducible) |
		gzip -1 >"$mods/modules.cpio.gz"
	cat "$initrd" "$mods/modules.cpio.gz" >"$mods/initrd.cpio.gz"
	initrd=$mods/initrd.cpio.gz
fi
TIMEOUT=${TIMEOUT:-$K_TIMEOUT}
ACCEL=${ACCEL:-auto}
XFER_MB=${XFER_MB:-1024}
SMP=${SMP:-2}
MEM=${MEM:-2G}

qemu() {	# qemu ACCEL MODE RUNDIR TIMEOUT
	local extra=()
	[ "$1" = tcg ] && [ -n "${ICOUNT:-}" ] && extra+=(-icount "shift=$ICOUNT,sleep=off")
	# QEMU_EXTRA: more QEMU arguments, split on blanks.
	# shellcheck disable=SC2206
	[ -n "${QEMU_EXTRA:-}" ] && extra+=($QEMU_EXTRA)
	[ -z "${QEMU_DATADIR:-}" ] || extra+=(-L "$QEMU_DATADIR")
	mkdir -p "$3"
	: >"$3/console.log"
	: >"$3/tests.log"
	# A fresh image every boot: stale blocks from an earlier run would
	# read back as that run's output.  Sparse, so only what the guest
	# writes takes host disk space.
	rm -f "$3/xfer.img"
	truncate -s "${XFER_MB}M" "$3/xfer.img"
	local rc=0
	timeout -k 5 "$4" "$QEMU_BIN" \
		-accel "$1" -cpu "$cpu" -smp "$SMP" -m "$MEM" "${extra[@]}" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 printk.devkmsg=on acpi=noirq tsc=reliable unknown_nmi_panic auxlab.mode=$2${K_APPEND:+ $K_APPEND}${APPEND:+ $APPEND}" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-drive file="$3/xfer.img",format=raw,if=none,id=xfer \
		-device virtio-blk-pci,drive=xfer \
		-chardev file,id=con,path="$3/console.log" -serial chardev:con \
		-chardev file,id=tst,path="$3/tests.log" -serial chardev:tst \
		</dev/null >"$3/qemu.log" 2>&1 || rc=$?
	return $rc
}

# Decide on KVM once per build directory: the probe costs a few seconds
# when KVM works and PROBE_TIMEOUT when it hangs.
accel=tcg
if [ "$ACCEL" = kvm ]; then
	accel=kvm
elif [ "$ACCEL" = auto ] && [ -z "${ICOUNT:-}" ]; then
	if [ ! -f "$BUILD/accel" ]; then
		result=tcg prc=
		if [ -w /dev/kvm ]; then
			# In a subshell with its stderr discarded: where KVM is
			# broken QEMU may die of a signal, and bash would report
			# that with the whole QEMU command line.  The verdict is
			# the one line below; QEMU's own words stay in its log.
			prc=0
			(qemu kvm probe "$BUILD/kvm-probe" "${PROBE_TIMEOUT:-20}") 2>/dev/null || prc=$?
			rm -f "$BUILD/kvm-probe/xfer.img"
			if grep -q '^HARNESS: done' "$BUILD/kvm-probe/tests.log"; then
				result=kvm why="a probe boot finished"
			elif [ $prc -eq 124 ] || [ $prc -eq 137 ]; then
				why="a probe boot did not finish in ${PROBE_TIMEOUT:-20} s"
			elif [ $prc -gt 128 ]; then
				why="QEMU died of signal $((prc - 128)) ($(kill -l $((prc - 128)) 2>/dev/null || echo '?'))"
			else
				why="QEMU exited with $prc"
			fi
		else
			why="/dev/kvm is not writable"
		fi
		echo $result >"$BUILD/accel"
		info "boot: KVM $([ $result = kvm ] && echo works || echo 'does not work here'): $why; using $result${prc:+ (QEMU log: $BUILD/kvm-probe/qemu.log)}"
	fi
	accel=$(cat "$BUILD/accel")
fi

# Debian's kernel (stock) has CONFIG_JUMP_LABEL, ours has not: it patches
# its text with int3 (text_poke_bp()) whenever a static key flips.  It
# died of "Oops: int3" in __schedule() while perf_fuzzer toggled
# scheduler tracepoints, and in run_timer_softirq() at 1.5 s into a boot;
# most likely another vCPU of multi-threaded TCG ran a stale int3 after
# the patch was done (not proven).  One host thread for all vCPUs leaves
# no such window: no oops since.
#
# (It also booted without CMPXCHG16B, -cpu max,-cx16, while the harness
# ran QEMU 7.2, whose TCG made this kernel die in SLUB's lockless paths
# under CPU offline with an RFLAGS no x86 CPU can hold; under QEMU 10,
# scripts/qemu.sh, it does not: tests/ROBUSTNESS.md, "CPU hotplug on
# Debian's kernel".)
# (The table's tcg_threads and cpu: scripts/kernels.py.)
cpu=max
if [ "$accel" = tcg ]; then
	cpu=$K_CPU
	[ -z "$K_TCG_THREADS" ] || accel=tcg,thread=$K_TCG_THREADS
fi
stage "boot[$variant/$mode]: QEMU $accel cpu=$cpu${ICOUNT:+ icount shift=$ICOUNT} smp=$SMP mem=$MEM, timeout ${TIMEOUT}s, logs in $rundir"
rc=0
start=$SECONDS
mkdir -p "$rundir"
: >"$rundir/tests.log"	# before tail starts: no stale lines from a last run
rm -rf "$rundir/guest" "$rundir/xfer.txt"	# no output of an earlier run either
qemu "$accel" "$mode" "$rundir" "$TIMEOUT" &
qpid=$!
# Follow /init's output live; tail ends by itself once QEMU is gone.
sleep 0.2
tail -n +1 -F --pid=$qpid "$rundir/tests.log" 2>/dev/null | sed -u 's/^/    | /'
wait $qpid || rc=$?
echo "accel=$accel icount=${ICOUNT:-} smp=$SMP mem=$MEM seconds=$((SECONDS - start)) qemu_rc=$rc" >"$rundir/boot.info"
# isa-debug-exit makes QEMU exit with (status << 1) | 1: 1 is a clean end.
case $rc in
1) info "boot[$variant/$mode]: guest finished in $((SECONDS - start))s" ;;
124|137) warn "boot[$variant/$mode]: guest timed out after ${TIMEOUT}s" ;;
*) warn "boot[$variant/$mode]: QEMU exited with $rc (panic or error; see $rundir)" ;;
esac

# Unpack what the guest sent.  /init announces "HARNESS: out files=N" once
# the tar is on the disk; the count catches a truncated or unreadable tar.
xfer=none
said=$(grep '^HARNESS: out ' "$rundir/tests.log" | tail -n1 || true)
sent=$(sed -n 's/^HARNESS: out files=\([0-9]*\).*/\1/p' <<<"$said")
mkdir -p "$rundir/guest"
if [ -n "$said" ] && [ -z "$sent" ]; then
	xfer="failed: ${said#HARNESS: out error: }"	# the guest could not send
elif ! tar -xf "$rundir/xfer.img" -C "$rundir/guest" 2>"$rundir/xfer.err"; then
	xfer="failed: tar could not read the transfer disk: $(head -n1 "$rundir/xfer.err")"
else
	got=$(find "$rundir/guest" -type f | wc -l)
	if [ -n "$sent" ] && [ "$got" != "$sent" ]; then
		xfer="failed: the guest sent $sent files, $got arrived"
	elif [ -n "$sent" ]; then
		xfer="ok files=$got"
	elif [ "$got" != 0 ]; then
		xfer="failed: $got files on the disk but no 'HARNESS: out' line"
	fi
fi
rm -f "$rundir/xfer.img" "$rundir/xfer.err"
echo "$xfer" >"$rundir/xfer.txt"
case $xfer in
none) ;;
ok*) info "boot[$variant/$mode]: guest output in $rundir/guest ($(du -sh "$rundir/guest" | cut -f1), ${xfer#ok })" ;;
*) warn "boot[$variant/$mode]: guest output: $xfer" ;;
esac

grep -q '^HARNESS: done' "$rundir/tests.log" && [ "${xfer%%:*}" != failed ]
