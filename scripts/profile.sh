#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make profile": where a benchmark figure's time goes, on ours and on
# upstream side by side.  Boots both kernels at once under TCG, one CPU,
# KASLR off, each running one of aux-bench's loads (LOAD: "txn", the
# 64-byte transactions of txn_64, or "mmap", the mmap and munmap of a
# 64 MiB area of mmap_64M) for SECS seconds of guest time, while
# scripts/guest-profile.py samples the guest's instruction pointer
# through the QEMU monitor.  Writes out/profile/<kernel>-<load>.txt
# (samples per kernel function) and prints both.
#
# No -icount here: the monitor's samples are spread over host time, and
# under -icount a blocked vCPU would bias them.  The figures of make
# bench come from make bench; this only says where they go.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

load=${LOAD:-txn}
secs=${SECS:-60}
case $load in txn|mmap) ;; *) die "profile: LOAD is txn or mmap" ;; esac
case $secs in ''|*[!0-9]*) die "profile: SECS must be a number" ;; esac
dir=$OUT/profile
mkdir -p "$dir"
pids=()
pair=$(variants bench)
for v in $pair; do
	sock=$dir/$v.sock
	rm -f "$sock"
	SMP=1 TIMEOUT=$((secs * 4 + 300)) APPEND="nokaslr auxlab.load=$load,$secs" \
		QEMU_EXTRA="-monitor unix:$sock,server,nowait" \
		"$TOP/scripts/boot.sh" "$v" profile "$dir/$v-run" >"$dir/$v-boot.log" 2>&1 &
	pids+=($!)
	"$TOP/scripts/guest-profile.py" "$sock" "$BUILD/obj/$v/vmlinux" \
		"$dir/$v-$load.txt" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
for v in $pair; do
	variant_env "$v"
	grep -h 'aux-bench: load' "$dir/$v-run/tests.log" || rc=1
	echo "profile: $v ($K_SIDE), load $load, $secs s:"
	sed -n '1,30p' "$dir/$v-$load.txt"
done
exit $rc
