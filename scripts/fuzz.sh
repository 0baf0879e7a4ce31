#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make fuzz": boot a kernel (the debug one unless FUZZ_KERNEL says qemu
# or upstream) in fuzz mode, where the guest runs ptsim_fuzz alone with
# the options given here (see the fuzz list in scripts/initramfs.sh), and
# judge the boot as make check would: the fuzzer's TAP, every kernel
# splat, a guest that did not finish.  The last line printed is
#
#   fuzz: kernel=K seed=S ops=N injections=N leaks=N splats=N failures=N
#
# Variables:
#   SEED         the fuzzer's seed (default 1)
#   OPS          operations per phase (default 2000; make check runs 500)
#   THREADS      threads of the "threads" phase (default 4)
#   PHASES       phases to run, comma-separated (default all)
#   FUZZ_KERNEL  debug (default), qemu or upstream
#   TIMEOUT      host-side limit in seconds (default from OPS, see below)
# Output in out/fuzz-<kernel>/ (console.log, tests.log, results.txt,
# guest/diff/ptsim_fuzz.trace).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

v=${FUZZ_KERNEL:-debug}
seed=${SEED:-1}
ops=${OPS:-2000}
case $seed$ops in *[!0-9]*) die "fuzz: SEED and OPS must be numbers" ;; esac
rundir=$OUT/fuzz-$v
append="auxlab.seed=$seed auxlab.ops=$ops"
[ -n "${THREADS:-}" ] && append+=" auxlab.threads=$THREADS"
[ -n "${PHASES:-}" ] && append+=" auxlab.phases=$PHASES"
# A run is ten times OPS operations (seven phases, "threads" four times
# over).  The debug kernel under TCG ran 2.6 million in 62 to 70 min,
# 620 to 700 a second, on an idle host and on one busy with a make check
# part of the time; allow three times what 250 a second would take, plus
# the boot.
export TIMEOUT=${TIMEOUT:-$((600 + ops * 10 * 3 / 250))}

rc=0
APPEND=$append "$TOP/scripts/boot.sh" "$v" fuzz "$rundir" || rc=$?

stage "fuzz: results"
"$TOP/scripts/results.py" "fuzz-$v=$rundir" >"$rundir/results.txt" 2>&1 || rc=1
grep '^FAIL' "$rundir/results.txt" || true
summary=$(sed -n 's/^# ptsim_fuzz: //p' "$rundir/tests.log" | tail -n1)
[ -n "$summary" ] || { summary="seed=$seed ops=? injections=? leaks=?"; rc=1; }
splats=$(grep -c '^FAIL .*/splat:' "$rundir/results.txt" || true)
failures=$(grep -c '^FAIL ' "$rundir/results.txt" || true)
echo "fuzz: kernel=$v $summary splats=$splats failures=$failures"
exit $rc
