#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the harness: proves that what "make check" reports can be
# trusted.  Writes TAP to OUTDIR/tap.txt, which check.sh folds into the
# summary.
#
#  - results.py on synthetic logs: a clean run passes with exact counts; a
#    failing KUnit case, a failing kselftest, a WARNING splat, a crashed
#    KUnit suite, a timed-out program and an unfinished guest each turn an
#    otherwise green run red, and are named; a KCSAN report with an access
#    in kernel/events/ or ptsim fails, one elsewhere is listed, not failed.
#  - the ours-vs-upstream comparison (compare_runs, scripts/compare.py) on
#    a synthetic pair of runs: identical results and files pass, and so
#    does a KUnit suite of the rewrite's own that only ours has; one
#    result with another status, and one line of a file under
#    $AUXLAB_OUT/diff/, each fail, named, the differing line shown.
#  - the trace checker as "make check" uses it (aux-decode --tap into
#    results.py) on synthetic traces: a clean one passes; an unexplained
#    sequence gap and an undecodable byte each fail the run, named.
#  - a real boot ("selftest" mode) that loads a KUnit module with a failing
#    case and a WARN_ON, and runs a kselftest with a failing case: all three
#    must be reported, and nothing else; a file a suite leaves in
#    $AUXLAB_OUT comes back intact through the transfer disk.
#  - the patch series mechanism: a patch applies, reverses and re-applies
#    to identical trees; a patch that no longer applies fails, naming it;
#    a 01xx entry and an overlay file under kernel/events/ (the AUX
#    rewrite, patches/rewrite) go into ours only, everything else into
#    both; re-assembly rewrites only the edited file, in both trees.
#  - make series: the sender's identity comes from GIT_AUTHOR_NAME/EMAIL
#    or git config, and its absence fails; a fix: commit after one that
#    is not a fix fails the plan.
#  - the base download: a checksum mismatch is refused; a pinned version
#    gone from the archive falls back to the newest 6.12 with a warning.
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

D=$(realpath -m "${1:-$OUT/harness}")
rm -rf "$D"
mkdir -p "$D"
TAP=$D/tap.txt
n=0
: >"$TAP.body"
result() {	# result OK? DESCRIPTION ('#' would start a TAP directive: %23)
	set -- "$1" "${2//#/%23}"
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2" >>"$TAP.body"
		info "harness self-test: ok $n $2"
	else
		echo "not ok $n $2" >>"$TAP.body"
		warn "harness self-test: not ok $n $2 (see $D)"
	fi
}
RESULTS=$TOP/scripts/results.py

stage "harness self-test: result parser on synthetic logs"
# A green run: KUnit suite with a pass, a skip and a parameterised case;
# a kselftest program with two passes; a program without TAP output.
mkrun() {	# mkrun DIR ; then append to DIR/console.log and DIR/tests.log
	mkdir -p "$1"
	cat >"$1/console.log" <<-'LOG'
	[    0.500000] Linux version 6.12.117
	[    1.000000] KTAP version 1
	[    1.000001] 1..1
	[    1.000002]     KTAP version 1
	[    1.000003]     # Subtest: demo
	[    1.000004]     1..3
	[    1.000005]     ok 1 demo_pass
	[    1.000006]     ok 2 demo_skip # SKIP not here
	[    1.000007]         KTAP version 1
	[    1.000008]         # Subtest: demo_param
	[    1.000009]         ok 1 p1
	[    1.000010]         ok 2 p2
	[    1.000011]     ok 3 demo_param
	[    1.000012] # demo: pass:2 fail:0 skip:1 total:3
	[    1.000013] ok 1 demo
	[    9.000000] HARNESS: console end
	LOG
	cat >"$1/tests.log" <<-'LOG'
	HARNESS: guest up: mode=check
	HARNESS: begin perf_events/prog
	TAP version 13
	1..2
	ok 1 global.a
	ok 2 global.b
	# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
	HARNESS: end perf_events/prog rc=0
	HARNESS: begin plain
	HARNESS: end plain rc=0
	LOG
}
expect() {	# expect DESC WANT-RC WANT-REGEX DIR
	local out rc=0
	out=$("$RESULTS" x="$4" 2>&1) || rc=$?
	printf '%s\n' "$out" >"$4/results.txt"
	if [ "$rc" = "$2" ] && grep -Eq "$3" <<<"$out"; then
		result 0 "$1"
	else
		result 1 "$1 (rc=$rc, wanted $2 and /$3/)"
	fi
}

r=$D/p-clean; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
expect "parser: a clean run passes with exact counts" 0 '^5 passed, 0 failed, 1 skipped$' "$r"

r=$D/p-kunit; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/    ok 1 demo_pass/    not ok 1 demo_pass/; s/^\(\[.*\]\) ok 1 demo$/\1 not ok 1 demo/' "$r/console.log"
expect "parser: a failing KUnit case fails the run and is named" 1 'FAIL x/kunit/demo: demo_pass' "$r"

r=$D/p-ksft; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/^ok 2 global.b/not ok 2 global.b/; s/prog rc=0/prog rc=1/' "$r/tests.log"
expect "parser: a failing kselftest fails the run and is named" 1 'FAIL x/perf_events/prog: global.b' "$r"

r=$D/p-warn; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
cat >>"$r/console.log" <<-'LOG'
[    2.000000] ------------[ cut here ]------------
[    2.000001] WARNING: CPU: 0 PID: 1 at kernel/events/ring_buffer.c:1 foo+0x1/0x2
[    2.000002] Call Trace:
[    2.000003] ---[ end trace 0000000000000000 ]---
LOG
expect "parser: a WARNING splat fails an all-green run, counted once" 1 '^5 passed, 1 failed, 1 skipped$' "$r"
expect "parser: the WARNING splat is named" 1 'FAIL x/splat: WARNING: CPU: 0 PID: 1 at kernel/events' "$r"

r=$D/p-lockdep; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
cat >>"$r/console.log" <<-'LOG'
[    2.000000] ======================================================
[    2.000001] WARNING: possible circular locking dependency detected
[    3.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[    4.000000] BUG: KASAN: use-after-free in perf_mmap+0x1/0x2
LOG
expect "parser: lockdep, RCU stall and KASAN reports each fail the run" 1 '^5 passed, 3 failed, 1 skipped$' "$r"

r=$D/p-crash; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i '/demo_skip/,$d' "$r/console.log"
expect "parser: a KUnit suite cut short fails the run" 1 'FAIL x/kunit/demo: missing case results' "$r"

r=$D/p-tmo; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/plain rc=0/plain rc=124/' "$r/tests.log"
expect "parser: a program that timed out fails the run" 1 'FAIL x/plain: timed out' "$r"

r=$D/p-needs; mkrun "$r"; printf 'HARNESS: skip hwpmu: needs /sys/x\nHARNESS: done\n' >>"$r/tests.log"
expect "parser: a suite the guest cannot run counts as skipped, not passed" 0 '^5 passed, 0 failed, 2 skipped$' "$r"

r=$D/p-nodone; mkrun "$r"
expect "parser: a guest that never reached the end of /init fails" 1 'FAIL x/guest: did not reach the end' "$r"

r=$D/p-cut; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i '/console end/d' "$r/console.log"
expect "parser: a kernel log cut before /init's end marker fails" 1 'FAIL x/guest: kernel console log ends early' "$r"

r=$D/p-unfinished; mkrun "$r"; printf 'HARNESS: begin hung\nok 1 x\n' >>"$r/tests.log"
expect "parser: a suite without its end marker fails" 1 'FAIL x/hung: suite did not finish' "$r"

# Issue 17: every way a suite can go missing, skip, bail out or go stale.
expectx() {	# expectx DESC WANT-RC WANT-REGEX DIR RESULTS-ARGS...: results.py with options
	local desc=$1 want=$2 re=$3 dir=$4 out rc=0
	shift 4
	out=$("$RESULTS" "$@" x="$dir" 2>&1) || rc=$?
	printf '%s\n' "$out" >"$dir/results.txt"
	if [ "$rc" = "$want" ] && grep -Eq "$re" <<<"$out"; then
		result 0 "$desc"
	else
		result 1 "$desc (rc=$rc, wanted $want and /$re/)"
	fi
}
# KCSAN (issue 19): a report with an access made in kernel/events/ or
# ptsim fails, one elsewhere is listed and does not; which functions are
# ours comes from the kernel's objects (--objdir), here a fake object tree.
ko=$D/kcsan-obj
mkdir -p "$ko/kernel/events" "$ko/drivers/hwtracing/ptsim"
echo 'void perf_aux_fake_output(void) {}' >"$ko/kernel/events/fake.c"
echo 'void ptsim_fake_hrtimer(void) {}' >"$ko/drivers/hwtracing/ptsim/fake.c"
gcc -c -o "$ko/kernel/events/fake.o" "$ko/kernel/events/fake.c"
gcc -c -o "$ko/drivers/hwtracing/ptsim/fake.o" "$ko/drivers/hwtracing/ptsim/fake.c"
kcsan_log() {	# kcsan_log DIR A B DEEP: a KCSAN report, A and B racing, DEEP under B
	cat >>"$1/console.log" <<-LOG
	[    2.000000] ==================================================================
	[    2.000001] BUG: KCSAN: data-race in $2 / $3
	[    2.000002]
	[    2.000003] write to 0xffff888003a1c0d8 of 8 bytes by interrupt on cpu 1:
	[    2.000004]  $2+0x3c/0x120
	[    2.000005]  __hrtimer_run_queues+0x1a2/0x3c0
	[    2.000006]
	[    2.000007] read to 0xffff888003a1c0d8 of 8 bytes by task 88 on cpu 0:
	[    2.000008]  $3+0x21/0x90
	[    2.000009]  $4+0x50/0x80
	[    2.000010]  do_syscall_64+0x9e/0x1a0
	[    2.000011]
	[    2.000012] value changed: 0x0000000000001000 -> 0x0000000000002000
	[    2.000013]
	[    2.000014] Reported by Kernel Concurrency Sanitizer on:
	[    2.000015] CPU: 0 UID: 0 PID: 88 Comm: ptsim_fuzz Not tainted 6.12.117 #1
	[    2.000016] ==================================================================
	LOG
}
r=$D/p-kcsan-ours; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
kcsan_log "$r" ptsim_fake_hrtimer perf_aux_fake_output x64_sys_call
expectx "parser: a KCSAN report in kernel/events/ or ptsim fails the run, named" \
	1 '^FAIL x/splat: BUG: KCSAN: data-race in ptsim_fake_hrtimer / perf_aux_fake_output \(an access in' \
	"$r" --objdir "x=$ko"
expectx "parser: a KCSAN report in kernel/events/ or ptsim is one failure" \
	1 '^5 passed, 1 failed, 1 skipped$' "$r" --objdir "x=$ko"
expectx "parser: a KCSAN report fails when the kernel's objects are not known" \
	1 'FAIL x/splat: BUG: KCSAN: .*no kernel objects' "$r"
r=$D/p-kcsan-deep; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
kcsan_log "$r" tick_sched_timer capable perf_aux_fake_output
expectx "parser: a KCSAN report whose accesses are elsewhere, ours only calling one, is listed" \
	0 '^kcsan: 1 reports elsewhere: tick_sched_timer / capable$' \
	"$r" --objdir "x=$ko"
r=$D/p-kcsan-copy; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
kcsan_log "$r" tick_sched_timer memcpy_orig perf_aux_fake_output
expectx "parser: a KCSAN report in a copy helper is judged by its caller (ours: fails)" \
	1 '^FAIL x/splat: BUG: KCSAN: data-race in tick_sched_timer / memcpy_orig \(an access in .*: perf_aux_fake_output\)' \
	"$r" --objdir "x=$ko"
r=$D/p-kcsan-unknown; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
cat >>"$r/console.log" <<-LOG
	[    2.000000] ==================================================================
	[    2.000001] BUG: KCSAN: data-race in tick_sched_timer
	[    2.000002]
	[    2.000003] race at unknown origin, with read to 0xffff888003a1c0d8 of 8 bytes by interrupt on cpu 1:
	[    2.000004]  tick_sched_timer+0x3c/0x120
	[    2.000005]  perf_aux_fake_output+0x1a2/0x3c0
	[    2.000006]
	[    2.000007] ==================================================================
	LOG
expectx "parser: a KCSAN report with one access (unknown origin) is judged by it (elsewhere)" \
	0 '^kcsan: 1 reports elsewhere: tick_sched_timer$' "$r" --objdir "x=$ko"
r=$D/p-kcsan-else; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
kcsan_log "$r" tick_sched_timer ktime_get x64_sys_call
kcsan_log "$r" rcu_sched_clock_irq rcu_gp_kthread x64_sys_call
expectx "parser: KCSAN reports elsewhere are listed, counted and named, not failed" \
	0 '^kcsan: 2 reports elsewhere: rcu_sched_clock_irq / rcu_gp_kthread, tick_sched_timer / ktime_get$' \
	"$r" --objdir "x=$ko"
expectx "parser: KCSAN reports elsewhere leave a green run green" \
	0 '^5 passed, 0 failed, 1 skipped$' "$r" --objdir "x=$ko"

# An interrupt in the watcher's delay on the same CPU: its stack runs on
# through kcsan_setup_watchpoint into the task's real access (WATCHED);
# the task's own stack (GARBAGE, as an emulated vsyscall gave) is not
# judged.
kcsan_irq_log() {	# kcsan_irq_log DIR WATCHED GARBAGE
	cat >>"$1/console.log" <<-LOG
	[    2.000000] ==================================================================
	[    2.000001] BUG: KCSAN: data-race in $3 / timekeeping_advance
	[    2.000002]
	[    2.000003] write to 0xffffffff81c01f08 of 280 bytes by interrupt on cpu 0:
	[    2.000004]  timekeeping_advance+0x6c7/0xb30
	[    2.000005]  __sysvec_apic_timer_interrupt+0x56/0x80
	[    2.000006]  delay_tsc+0x22/0x70
	[    2.000007]  kcsan_setup_watchpoint+0x1ea/0x450
	[    2.000008]  $2+0x10/0x20
	[    2.000009]  __x64_sys_time+0x1b/0x40
	[    2.000010]
	[    2.000011] read to 0xffffffff81c01f78 of 8 bytes by task 4015 on cpu 0:
	[    2.000012]  $3+0x8d/0x5c0
	[    2.000013]  $3+0x8d/0x5c0
	[    2.000014]
	[    2.000015] Reported by Kernel Concurrency Sanitizer on:
	[    2.000016] ==================================================================
	LOG
}
r=$D/p-kcsan-irq; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
kcsan_irq_log "$r" ktime_get_real_seconds perf_aux_fake_output
expectx "parser: KCSAN, an interrupt in the watcher's delay: judged by where the task was (elsewhere)" \
	0 '^kcsan: 1 reports elsewhere: perf_aux_fake_output / timekeeping_advance \(the task was in ktime_get_real_seconds\)$' \
	"$r" --objdir "x=$ko"
r=$D/p-kcsan-irq2; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
kcsan_irq_log "$r" perf_aux_fake_output ktime_get
expectx "parser: KCSAN, an interrupt in the watcher's delay: a task in our code fails" \
	1 '^FAIL x/splat: BUG: KCSAN: data-race in ktime_get / timekeeping_advance \(an access in .*: perf_aux_fake_output\)' \
	"$r" --objdir "x=$ko"

r=$D/p-more; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/^ok 2 global.b/ok 2 global.b\nok 3 global.c/' "$r/tests.log"
expect "parser: more results than the plan announced fail" 1 'FAIL x/perf_events/prog: 3 results, only 2 planned' "$r"

r=$D/p-fewer; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i '/^ok 2 global.b/d' "$r/tests.log"
expect "parser: fewer results than the plan announced fail" 1 'FAIL x/perf_events/prog: planned result missing' "$r"

r=$D/p-todo; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/^ok 2 global.b/not ok 2 global.b # TODO later/' "$r/tests.log"
expect "parser: a 'not ok' with a TODO directive fails (we have no TODO tests)" 1 'FAIL x/perf_events/prog: global.b \(TODO directive' "$r"

r=$D/p-segv; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/prog rc=0/prog rc=139/' "$r/tests.log"
expect "parser: a crash (exit 139) after all-ok results fails" 1 'FAIL x/perf_events/prog: exit status 139$' "$r"

r=$D/p-notap; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
printf 'HARNESS: begin perf_events/silent\nHARNESS: end perf_events/silent rc=0\n' >>"$r/tests.log"
expect "parser: a perf_events program that exits 0 without TAP fails" 1 'FAIL x/perf_events/silent: exit status 0 without any TAP result' "$r"

r=$D/p-reopen; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i '/HARNESS: end perf_events\/prog/d' "$r/tests.log"
expect "parser: a suite still open when the next begins fails" 1 'FAIL x/perf_events/prog: suite did not finish \(HARNESS: begin plain' "$r"

r=$D/p-midline; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
# The program crashed in its second case, its last line without newline:
# /init's end marker shares that line.
sed -i '/^# Totals/d; /HARNESS: end perf_events\/prog/d; s/^ok 2 global.b$/# running global.bHARNESS: end perf_events\/prog rc=139/' "$r/tests.log"
expect "parser: markers count mid-line (a last line without newline): a crash there fails" \
	1 '^FAIL x/perf_events/prog: planned result missing$' "$r"
expect "parser: markers count mid-line: the crash is counted once, the next suite still counts" \
	1 '^4 passed, 1 failed, 1 skipped$' "$r"
r=$D/p-midline2; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i '/^# Totals/d; /HARNESS: end perf_events\/prog/d; s/^ok 2 global.b$/not ok 2 global.bHARNESS: end perf_events\/prog rc=1/' "$r/tests.log"
expect "parser: markers count mid-line: a result before the marker counts, under its own name" \
	1 '^FAIL x/perf_events/prog: global.b$' "$r"

r=$D/p-bail; mkdir -p "$r"
printf 'TAP version 13\nok 1 - builds\nBail out! mktrace.py failed\n1..1\n' >"$r/bail.tap"
rc=0; "$RESULTS" --tap "x/tools=$r/bail.tap" >"$r/results.txt" 2>&1 || rc=$?
ok=1; [ $rc = 1 ] && grep -q '^FAIL x/tools: Bail out! mktrace.py failed$' "$r/results.txt" && ok=0
result $ok "parser: 'Bail out!' in a TAP file fails the run, whatever the results before it"

r=$D/p-decode-bail; mkdir -p "$r"
MKTRACE=false "$TOP/tests/tools/decode-selftest.sh" "$r/w" >"$r/decode-selftest.tap" 2>&1
rc=0; "$RESULTS" --tap "x/tools/decode-selftest=$r/decode-selftest.tap" >"$r/results.txt" 2>&1 || rc=$?
ok=1; [ $rc = 1 ] && grep -q '^FAIL x/tools/decode-selftest: Bail out! mktrace.py failed' "$r/results.txt" &&
	grep -q '^0 passed' "$r/results.txt" && ok=0
result $ok "tools: decode-selftest.sh with a failing mktrace.py fails (no '1 passed')"

# A gate (the arm64 cross-build) dies before it writes its TAP: last
# run's all-ok file must not be read as this run's.
r=$D/p-gate; mkdir -p "$r"
printf 'TAP version 13\n1..1\nok 1 - last run passed\n' >"$r/arm64.tap"
"$TOP/scripts/run-gate.sh" arm64 "$r/arm64.tap" sh -c 'exit 1' >/dev/null 2>&1
rc=0; "$RESULTS" --tap "arm64=$r/arm64.tap" >"$r/results.txt" 2>&1 || rc=$?
ok=1; [ $rc = 1 ] && grep -q '^FAIL arm64: arm64: exited with status 1 without reporting a failure' "$r/results.txt" &&
	grep -q '^0 passed, 1 failed$' "$r/results.txt" && ok=0
result $ok "gates: a gate that dies without writing its TAP fails; last run's TAP is not read"
printf 'TAP version 13\n1..1\nok 1 - last run passed\n' >"$r/arm64.tap"
"$TOP/scripts/run-gate.sh" arm64 "$r/arm64.tap" sh -c 'printf "ok 1 - first half\n" >"$0"; kill -9 $$' "$r/arm64.tap" >/dev/null 2>&1
rc=0; "$RESULTS" --tap "arm64=$r/arm64.tap" >"$r/results2.txt" 2>&1 || rc=$?
ok=1; [ $rc = 1 ] && grep -q '^FAIL arm64: arm64: exited with status 137 without reporting a failure' "$r/results2.txt" && ok=0
result $ok "gates: a gate killed after some ok results fails"

# Skips fail unless tests/expected-skips lists them.
printf '# synthetic\nx/kunit/demo  demo_skip  not here\n' >"$D/skips"
r=$D/p-skips; mkrun "$r"; printf 'HARNESS: skip hwpmu: needs /sys/x\nHARNESS: done\n' >>"$r/tests.log"
sed -i 's/^ok 2 global.b/ok 2 global.b # SKIP no ptsim PMU/' "$r/tests.log"
expectx "skips: a skip not in the expected list fails, named with its reason" \
	1 '^FAIL x/perf_events/prog: global.b: unexpected skip \(no ptsim PMU\)' "$r" --expected-skips "$D/skips"
expectx "skips: a suite the guest cannot run fails unless listed" \
	1 '^FAIL x/hwpmu: unexpected skip \(needs /sys/x\)' "$r" --expected-skips "$D/skips"
printf 'x/hwpmu needs?/sys/x no PMU here\nx/perf_events/prog global.* ptsim\n' >>"$D/skips"
expectx "skips: listed skips (a case, a whole suite) do not fail" \
	0 '^4 passed, 0 failed, 3 skipped$' "$r" --expected-skips "$D/skips"
ok=1; "$RESULTS" --expected-skips "$TOP/tests/expected-skips" --tap "x=$D/p-bail/bail.tap" >/dev/null 2>&1
[ $? = 1 ] && ok=0	# parses (exit 1 is the bail-out, 2 would be a syntax error)
result $ok "skips: tests/expected-skips parses"

# The manifest: every suite it names for a kernel must be there with at
# least its minimum count; a suite it does not name (a stale program) fails.
printf '# synthetic\n*  kunit/demo  3\nx,y  perf_events/prog  2\n*  plain  1\ny  kunit/other  1\n' >"$D/manifest"
r=$D/p-manifest; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
expectx "manifest: a run with every suite it names passes" 0 '^5 passed, 0 failed, 1 skipped$' "$r" --manifest "$D/manifest"
sed -i '/HARNESS: begin plain/,/HARNESS: end plain/d' "$r/tests.log"
expectx "manifest: a missing suite fails" 1 '^FAIL x/manifest: plain: 0 results, tests/manifest wants at least 1 \(suite missing\)' \
	"$r" --manifest "$D/manifest"
r=$D/p-manifest2; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i '/^ok 2 global.b/d; s/^1\.\.2$/1..1/' "$r/tests.log"
expectx "manifest: a suite with fewer results than its minimum fails" \
	1 '^FAIL x/manifest: perf_events/prog: 1 results, tests/manifest wants at least 2$' "$r" --manifest "$D/manifest"
r=$D/p-manifest3; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
printf 'HARNESS: begin perf_events/stale\n1..1\nok 1 old\nHARNESS: end perf_events/stale rc=0\n' >>"$r/tests.log"
expectx "manifest: a suite it does not name (a stale program) fails" \
	1 '^FAIL x/manifest: perf_events/stale: not in tests/manifest' "$r" --manifest "$D/manifest"
# The 8-CPU boots, labelled "<kernel>@smp8": "*" names the main boots'
# suites only, "*@smp8" theirs.
r=$D/p-manifest8; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
printf '# synthetic\n*  absent  1\n*@smp8  kunit/demo  3\n*@smp8  perf_events/prog  2\n*@smp8  plain  1\n' >"$D/manifest8"
ok=1; out=$("$RESULTS" --manifest "$D/manifest8" "x@smp8=$r" 2>&1) && grep -q '^5 passed, 0 failed, 1 skipped$' <<<"$out" && ok=0
result $ok "manifest: a \"*\" line does not apply to an @smp8 run, a \"*@smp8\" line does"
printf '*@smp8  absent  1\n' >>"$D/manifest8"
ok=1; out=$("$RESULTS" --manifest "$D/manifest8" "x@smp8=$r" 2>&1) ||
	grep -q '^FAIL x@smp8/manifest: absent: 0 results, tests/manifest wants at least 1 (suite missing)' <<<"$out" && ok=0
result $ok "manifest: a suite missing from an @smp8 run fails"
r=$D/p-ktop; mkrun "$r"; echo 'HARNESS: done' >>"$r/tests.log"
sed -i 's/^\(\[.*\]\) 1\.\.1$/\1 1..2/' "$r/console.log"
expect "kunit: a suite the top-level plan announced but never reported fails" \
	1 '^FAIL x/kunit: 1 of 2 planned suites never reported' "$r"
ok=1; "$RESULTS" --manifest "$TOP/tests/manifest" --tap "x=$D/p-bail/bail.tap" >/dev/null 2>&1
[ $? = 1 ] && ok=0
result $ok "manifest: tests/manifest parses"

stage "harness self-test: ours-vs-upstream comparison on synthetic runs"
cmprun() {	# cmprun DIR: a finished run that left a file for comparison
	mkrun "$1"
	echo 'HARNESS: done' >>"$1/tests.log"
	mkdir -p "$1/guest/diff/fuzz"
	seq 1 20 | sed 's/$/ EINVAL/' >"$1/guest/diff/fuzz/errno.txt"
}
cmpexpect() {	# cmpexpect DESC WANT-RC WANT-REGEX [REGEX-IN-TAP]
	local out rc=0 ok=1
	compare_runs "$D/c-ours" "$D/c-up" "$D/c-compare.tap"
	out=$("$RESULTS" --tap "compare/ours-vs-upstream=$D/c-compare.tap" 2>&1) || rc=$?
	printf '%s\n' "$out" >"$D/c-results.txt"
	[ "$rc" = "$2" ] && grep -Eq "$3" <<<"$out" && ok=0
	[ -z "${4:-}" ] || grep -Eq "$4" "$D/c-compare.tap" || ok=1
	cp "$D/c-compare.tap" "$D/c-compare.$n.tap"
	result $ok "$1"
}
rm -rf "$D/c-ours" "$D/c-up"
cmprun "$D/c-ours"
cmprun "$D/c-up"
# The rewrite's own KUnit suite runs on ours only.
cat >>"$D/c-ours/console.log" <<-'LOG'
[    1.100000]     KTAP version 1
[    1.100001]     # Subtest: perf_aux_selftest
[    1.100002]     1..1
[    1.100003]     ok 1 perf_aux_wrap
[    1.100004] ok 2 perf_aux_selftest
LOG
cmpexpect "compare: identical runs pass (a suite of the rewrite's own on ours only is not compared)" \
	0 '^4 passed, 0 failed$' '^# not compared .*kunit/perf_aux_selftest'
sed -i 's/^ok 2 global.b/not ok 2 global.b/' "$D/c-up/tests.log"
cmpexpect "compare: one result with another status fails, named" \
	1 'FAIL compare/ours-vs-upstream: perf_events/prog: global.b: ours=ok upstream=not ok$'
sed -i 's/^not ok 2 global.b/ok 2 global.b/' "$D/c-up/tests.log"
sed -i '7s/EINVAL/EBUSY/' "$D/c-up/guest/diff/fuzz/errno.txt"
cmpexpect "compare: a file under \$AUXLAB_OUT/diff/ that differs fails, named, its lines shown" \
	1 'FAIL compare/ours-vs-upstream: diff/fuzz/errno.txt: differs \(2 lines\)$' '^# \+7 EBUSY$'

sed -i '7s/EBUSY/EINVAL/' "$D/c-up/guest/diff/fuzz/errno.txt"
printf 'HARNESS: begin perf_events/new\n1..1\nok 1 global.x\nHARNESS: end perf_events/new rc=0\n' >>"$D/c-up/tests.log"
cmpexpect "compare: a suite that ran on one kernel only fails, named" \
	1 'FAIL compare/ours-vs-upstream: perf_events/new: global.x: ours=missing upstream=ok$'

stage "harness self-test: trace decoding on synthetic traces"
mktrace() {	# mktrace DIR SEQ...: PSB, PSBEND, one ptsim data record per SEQ (< 256)
	local d=$1 s size
	shift
	mkdir -p "$d"
	{
		printf '\002\202%.0s' 1 2 3 4 5 6 7 8		# PSB
		printf '\002\043'				# PSBEND
		for s; do
			# PTW with an 8-byte payload, the sequence number (LE)
			printf "\\002\\062\\$(printf %03o "$s")\\000\\000\\000\\000\\000\\000\\000"
			printf '\006%.0s' 1 2 3 4 5 6		# six 1-bit TNT
		done
	} >"$d/aux.bin"
	size=$(stat -c %s "$d/aux.bin")
	printf 'pmu ptsim type=9 config=0x0 mode=normal aux_size=65536\n%s\n%s\n' \
		"AUX offset=0 size=$size flags=0x0" "COPY file_off=0 aux_off=0 size=$size" >"$d/records.txt"
}
T=$D/traces
mktrace "$T/clean" 0 1 2 3
mktrace "$T/gap" 0 1 3 4	# record 2 vanished, and nothing says why
mktrace "$T/garbage" 0 1 2
printf '\002\377' | dd of="$T/garbage/aux.bin" bs=1 seek=28 conv=notrunc status=none	# no such opcode
"$BUILD/host/aux-decode" --tap "$T"/* >"$D/decode.tap" 2>&1
rc=0
"$RESULTS" --tap "x/decode=$D/decode.tap" >"$D/decode-results.txt" 2>&1 || rc=$?
ok=1
[ $rc = 1 ] && grep -q '^1 passed, 2 failed$' "$D/decode-results.txt" &&
	grep -q '^FAIL x/decode: gap$' "$D/decode-results.txt" &&
	grep -q '^FAIL x/decode: garbage$' "$D/decode-results.txt" && ok=0
result $ok "decode: a clean trace passes; an unexplained sequence gap and an undecodable byte each fail, named"

stage "harness self-test: the series' sender and the fixes-first rule"
# sender_identity: GIT_AUTHOR_* first, then the repository's git config;
# with neither (no global or system config either), a clear failure.
I=$D/ident
git init -q "$I"
noident() { env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "$@"; }
ok=1
if ! noident bash -c '. "$0"; sender_identity "$1"' "$TOP/scripts/lib.sh" "$I" 2>"$D/ident.err" &&
	grep -q '^no sender identity' "$D/ident.err"; then
	git -C "$I" config user.name 'Repo Config' && git -C "$I" config user.email repo@example.org
	id1=$(noident bash -c '. "$0"; sender_identity "$1" && echo "$SENDER_NAME <$SENDER_EMAIL>"' "$TOP/scripts/lib.sh" "$I")
	id2=$(noident GIT_AUTHOR_NAME='Env Name' GIT_AUTHOR_EMAIL=env@example.org \
		bash -c '. "$0"; sender_identity "$1" && echo "$SENDER_NAME <$SENDER_EMAIL>"' "$TOP/scripts/lib.sh" "$I")
	[ "$id1" = 'Repo Config <repo@example.org>' ] && [ "$id2" = 'Env Name <env@example.org>' ] && ok=0
fi
result $ok "series: the sender is GIT_AUTHOR_NAME/EMAIL, else git config user.name/email; neither fails, saying so"
# A fix: commit after one that is not a fix fails the plan, naming both;
# the same commits with the fix first pass that check (and stop later,
# at the missing tree of this scratch BUILD).
mkplan() {	# mkplan FILE FIRST SECOND: two commits, "b" the fix
	printf 'cover: c\n\nbody\n\n' >"$1"
	for s in "$2" "$3"; do
		printf 'commit: %s\nfiles: %s\n' "$s" "$s"
		[ "$s" = b ] && printf 'fix: fixes b\n'
		printf '\nbody of %s\n\n' "$s"
	done >>"$1"
}
mkplan "$D/plan-bad" a b
mkplan "$D/plan-good" b a
ms() { GIT_AUTHOR_NAME=x GIT_AUTHOR_EMAIL=x@example.org PLAN=$1 BUILD=$D/ms-build OUT=$D/ms-out \
	"$TOP/scripts/make-series.sh" >"$2" 2>&1; }
ok=1
if ! ms "$D/plan-bad" "$D/ms-bad.log" &&
	grep -q 'the fix: commit "b" comes after "a", which is not a fix' "$D/ms-bad.log" &&
	! ms "$D/plan-good" "$D/ms-good.log" && ! grep -q 'fix: commit' "$D/ms-good.log" &&
	grep -q 'no auxlab branch' "$D/ms-good.log"; then
	ok=0
fi
result $ok "series: a fix: commit after a commit that is not a fix fails, named; fixes first pass"

finish() {
	{ echo "TAP version 13"; echo "1..$n"; cat "$TAP.body"; } >"$TAP"
	rm -f "$TAP.body"
	! grep -q '^not ok' "$TAP"
	exit
}
# QUICK=1: the synthetic cases alone (seconds, no boot, no tree changes).
[ "${QUICK:-0}" != 1 ] || finish

stage "harness self-test: stale guest programs"
# A program whose source is gone must not survive a guest rebuild (it
# would run as a suite of the next check).
sp=$BUILD/guest/perf_events/harness_stale_prog
mkdir -p "$(dirname "$sp")" && printf '#!/bin/sh\necho "1..1"\necho "ok 1 stale"\n' >"$sp" && chmod +x "$sp"
"$TOP/scripts/build-guest.sh" >"$D/build-guest.log" 2>&1
ok=1
[ ! -e "$sp" ] && [ -x "$BUILD/guest/perf_events/ptsim_test" ] && ok=0
result $ok "guest: a rebuild removes a stale program from the guest's suite directory"

stage "harness self-test: a real boot with a failing KUnit case, kselftest and WARN_ON"
r=$D/boot
mkdir -p "$r"
"$TOP/scripts/boot.sh" qemu selftest "$r" >"$D/boot.out" 2>&1
rc=0
"$RESULTS" selftest="$r" >"$r/results.txt" 2>&1 || rc=$?
fails=$(grep -c '^FAIL' "$r/results.txt")
ok=0
[ $rc = 1 ] || ok=1
grep -q '^FAIL selftest/kunit/harness_selftest: harness_selftest_fails$' "$r/results.txt" || ok=1
grep -q '^FAIL selftest/harness/deliberate_fail: global.fails_on_purpose$' "$r/results.txt" || ok=1
grep -Eq '^FAIL selftest/splat: WARNING: .*harness_warn_init' "$r/results.txt" || ok=1
grep -q '^  selftest/kunit/harness_selftest: 1 passed, 1 failed' "$r/results.txt" || ok=1
[ "$fails" = 3 ] || ok=1
result $ok "boot: the failing KUnit case, the failing kselftest and the WARN_ON are each reported, and nothing else ($fails failures)"
ok=1
cmp -s "$r/guest/harness/seq.txt" <(seq 1 200000) && grep -q '^ok files=1$' "$r/xfer.txt" && ok=0
result $ok "boot: a file the guest leaves in \$AUXLAB_OUT comes back intact through the transfer disk"

stage "harness self-test: patch series mechanism"
S=$D/series
mkdir -p "$S"
# The real series plus one extra patch to a file no build reads, so the
# build tree and its mtimes stay untouched (ASSEMBLE_REF: no checkout).
sed -e 's/#.*//' "$TOP/patches/series" | grep -v '^[[:space:]]*$' | while read -r p; do
	cp "$TOP/patches/$p" "$S/"; echo "$p"
done >"$S/series"
git -C "$TREE" show base:README >"$D/README.a"
sed '1s/.*/Linux kernel (harness self-test)/' "$D/README.a" >"$D/README.b"
diff -u --label a/README --label b/README "$D/README.a" "$D/README.b" >"$S/zz-selftest.patch"
echo zz-selftest.patch >>"$S/series"
rc=0
SERIES_DIR=$S ASSEMBLE_REF=refs/harness/selftest "$TOP/scripts/assemble.sh" --verify >"$D/assemble-good.log" 2>&1 || rc=$?
ok=1
[ $rc = 0 ] && git -C "$TREE" show refs/harness/selftest:README | head -1 | grep -q 'harness self-test' && ok=0
result $ok "series: a patch applies, reverses and re-applies to identical trees"

sed -i 's/^-Linux kernel$/-Linux kernel, edited since/' "$S/zz-selftest.patch"
rc=0
SERIES_DIR=$S ASSEMBLE_REF=refs/harness/selftest "$TOP/scripts/assemble.sh" >"$D/assemble-bad.log" 2>&1 || rc=$?
ok=1
[ $rc != 0 ] && grep -q 'patch zz-selftest.patch does not apply' "$D/assemble-bad.log" && ok=0
result $ok "series: a patch that no longer applies fails with a message naming it"
git -C "$TREE" update-ref -d refs/harness/selftest 2>/dev/null

# The AUX rewrite goes into ours only: a 01xx series entry and an overlay
# file kernel/events/aux* (patches/rewrite) must be in ours and not in
# upstream; a shared entry (zz-selftest.patch, restored) and the other
# overlay files of kernel/events/ (flush.c) in both.
sed -i 's/^-Linux kernel, edited since$/-Linux kernel/' "$S/zz-selftest.patch"
git -C "$TREE" show base:CREDITS >"$D/CREDITS.a"
sed '1s/.*/(rewrite probe)/' "$D/CREDITS.a" >"$D/CREDITS.b"
diff -u --label a/CREDITS --label b/CREDITS "$D/CREDITS.a" "$D/CREDITS.b" >"$S/0199-rewrite-probe.patch"
echo 0199-rewrite-probe.patch >>"$S/series"
rprobe=kernel/events/aux-harness-selftest-probe.txt
trap 'rm -f "$TOP/$rprobe"' EXIT
echo "harness self-test: rewrite probe" >"$TOP/$rprobe"
rc=0
SERIES_DIR=$S ASSEMBLE_REF=refs/harness/ours ASSEMBLE_UPSTREAM_REF=refs/harness/upstream \
	"$TOP/scripts/assemble.sh" >"$D/assemble-rewrite.log" 2>&1 || rc=$?
rm -f "$TOP/$rprobe"
has() { git -C "$TREE" cat-file -e "$1:$2" 2>/dev/null; }
first() { git -C "$TREE" show "$1:$2" | head -n1; }
ok=1
[ $rc = 0 ] &&
	has refs/harness/ours "$rprobe" && ! has refs/harness/upstream "$rprobe" &&
	[ "$(first refs/harness/ours CREDITS)" = '(rewrite probe)' ] &&
	[ "$(first refs/harness/upstream CREDITS)" != '(rewrite probe)' ] &&
	first refs/harness/ours README | grep -q 'harness self-test' &&
	first refs/harness/upstream README | grep -q 'harness self-test' &&
	has refs/harness/upstream tools/aux/aux-record.c &&
	has refs/harness/upstream kernel/events/flush.c && ok=0
result $ok "series: the AUX rewrite (a 01xx entry, a kernel/events/aux* overlay file) goes into ours only, the rest (flush.c too) into both"
git -C "$TREE" update-ref -d refs/harness/ours 2>/dev/null
git -C "$TREE" update-ref -d refs/harness/upstream 2>/dev/null

# Re-assembly must leave unchanged files alone (their mtimes drive kbuild):
# add a file to the overlay, re-assemble, and only that file may change.
probe=tools/aux/harness-selftest-probe.txt
samples=(Makefile include/linux/perf_event.h kernel/events/core.c tools/aux/aux-pmus.c)
mtimes() { (cd "$TREE" && stat -c '%n %Y.%y' "${samples[@]}"); (cd "$UTREE" && stat -c '%n %Y.%y' "${samples[@]}"); }
"$TOP/scripts/assemble.sh" >"$D/assemble-sync.log" 2>&1	# in sync first
before=$(mtimes)
trap 'rm -f "$TOP/$probe"' EXIT
echo "harness self-test probe" >"$TOP/$probe"
"$TOP/scripts/assemble.sh" >"$D/assemble-probe.log" 2>&1
present=no
[ -f "$TREE/$probe" ] && [ -f "$UTREE/$probe" ] && present=yes
rm -f "$TOP/$probe"
"$TOP/scripts/assemble.sh" >>"$D/assemble-probe.log" 2>&1
ok=1
[ "$before" = "$(mtimes)" ] && [ $present = yes ] &&
	[ "$(grep -c 'tree\[ours\]: .* 1 files changed' "$D/assemble-probe.log")" = 2 ] &&
	[ "$(grep -c 'tree\[upstream\]: .* 1 files changed' "$D/assemble-probe.log")" = 2 ] &&
	[ ! -e "$TREE/$probe" ] && [ ! -e "$UTREE/$probe" ] && ok=0
result $ok "assemble: adding and removing an overlay file rewrites only that file, in both trees"

stage "harness self-test: base download"
C=$D/cache
mkdir -p "$C"
. "$TOP/scripts/base.env"
echo "not a package" >"$C/${BASE_PKG}_${BASE_VERSION}_all.deb"
rc=0
AUXLAB_CACHE=$C FETCH_ONLY=1 "$TOP/scripts/fetch-base.sh" >"$D/fetch-bad.log" 2>&1 || rc=$?
ok=1
[ $rc != 0 ] && grep -q 'sha256 mismatch' "$D/fetch-bad.log" && ok=0
result $ok "base: a download whose sha256 differs from the pin is refused"
rm -rf "$C"; mkdir -p "$C"
rc=0
AUXLAB_CACHE=$C FETCH_ONLY=1 BASE_VERSION=6.12.0-0~gone "$TOP/scripts/fetch-base.sh" >"$D/fetch-gone.log" 2>&1 || rc=$?
ok=1
[ $rc = 0 ] && grep -q 'Falling back to the newest 6.12' "$D/fetch-gone.log" &&
	ls "$C/${BASE_PKG}_6.12."*_all.deb >/dev/null 2>&1 && ok=0
result $ok "base: a pinned version gone from the archive falls back to the newest 6.12, loudly"
rm -rf "$C"

stage "harness self-test: style gates"
# A header of ours without an SPDX line and with a kernel-doc comment that
# misses its parameter: both gates must fail, naming it.
sprobe=drivers/hwtracing/ptsim/harness-style-probe.h
trap 'rm -f "$TOP/$sprobe"' EXIT
printf '/**\n * probe_fn() - a parameter left undescribed\n */\nint probe_fn(int x);\n' >"$TOP/$sprobe"
"$TOP/scripts/assemble.sh" >"$D/assemble-style.log" 2>&1
rc=0
"$TOP/scripts/style.sh" >"$D/style-bad.tap" 2>&1 || rc=$?
rm -f "$TOP/$sprobe"
"$TOP/scripts/assemble.sh" >>"$D/assemble-style.log" 2>&1
ok=1
[ $rc != 0 ] && grep -q '^not ok 1 - spdx' "$D/style-bad.tap" &&
	grep -q 'harness-style-probe.h: no SPDX' "$D/style-bad.tap" &&
	grep -q '^not ok 2 - kernel-doc' "$D/style-bad.tap" &&
	grep -q 'probe_fn' "$D/style-bad.tap" && ok=0
result $ok "style: a file without SPDX and a broken kernel-doc comment each fail their gate"

finish
