#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 5: boot one kernel variant with the initramfs in QEMU.
#
#   boot.sh VARIANT MODE RUNDIR     e.g. boot.sh qemu check out/check-qemu
#
# Kernel console -> RUNDIR/console.log (ttyS0), /init's output ->
# RUNDIR/tests.log (ttyS1), followed live on stdout.  The guest ends itself
# through isa-debug-exit; a host-side timeout (TIMEOUT, seconds) bounds a
# hung guest.  Exit status 0 when the guest reached the end of /init.
#
# Acceleration: TCG unless ACCEL=kvm, or ACCEL=auto (the default) and a
# short probe boot under KVM proves a guest really runs there (on nested
# hosts /dev/kvm exists but guests hang).  ICOUNT=N adds "-icount shift=N"
# under TCG: the guest clock then follows executed instructions, for
# repeatable timings.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?variant} mode=${2:?mode} rundir=${3:?rundir}
kernel=$BUILD/obj/$variant/arch/x86/boot/bzImage
initrd=$BUILD/initramfs.cpio.gz
[ -f "$kernel" ] || die "no kernel $kernel"
[ -f "$initrd" ] || die "no initramfs $initrd"
case $variant in debug) dflt=2400 ;; *) dflt=1200 ;; esac
TIMEOUT=${TIMEOUT:-$dflt}
ACCEL=${ACCEL:-auto}

qemu() {	# qemu ACCEL MODE RUNDIR TIMEOUT
	local extra=()
	[ "$1" = tcg ] && [ -n "${ICOUNT:-}" ] && extra+=(-icount "shift=$ICOUNT,sleep=off")
	mkdir -p "$3"
	: >"$3/console.log"
	: >"$3/tests.log"
	local rc=0
	timeout -k 5 "$4" qemu-system-x86_64 \
		-accel "$1" -cpu max -smp 2 -m 2G "${extra[@]}" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 printk.devkmsg=on auxlab.mode=$2" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
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
		result=tcg
		if [ -w /dev/kvm ]; then
			info "boot: probing KVM (${PROBE_TIMEOUT:-20}s at most)"
			qemu kvm probe "$BUILD/kvm-probe" "${PROBE_TIMEOUT:-20}" || true
			grep -q '^HARNESS: done' "$BUILD/kvm-probe/tests.log" && result=kvm
		fi
		echo $result >"$BUILD/accel"
		info "boot: KVM $([ $result = kvm ] && echo works || echo 'does not work here'); using $result"
	fi
	accel=$(cat "$BUILD/accel")
fi

stage "boot[$variant/$mode]: QEMU $accel${ICOUNT:+ icount shift=$ICOUNT}, timeout ${TIMEOUT}s, logs in $rundir"
rc=0
start=$SECONDS
mkdir -p "$rundir"
: >"$rundir/tests.log"	# before tail starts: no stale lines from a last run
qemu "$accel" "$mode" "$rundir" "$TIMEOUT" &
qpid=$!
# Follow /init's output live; tail ends by itself once QEMU is gone.
sleep 0.2
tail -n +1 -F --pid=$qpid "$rundir/tests.log" 2>/dev/null | sed -u 's/^/    | /'
wait $qpid || rc=$?
echo "accel=$accel icount=${ICOUNT:-} seconds=$((SECONDS - start)) qemu_rc=$rc" >"$rundir/boot.info"
# isa-debug-exit makes QEMU exit with (status << 1) | 1: 1 is a clean end.
case $rc in
1) info "boot[$variant/$mode]: guest finished in $((SECONDS - start))s" ;;
124|137) warn "boot[$variant/$mode]: guest timed out after ${TIMEOUT}s" ;;
*) warn "boot[$variant/$mode]: QEMU exited with $rc (panic or error; see $rundir)" ;;
esac
grep -q '^HARNESS: done' "$rundir/tests.log"
