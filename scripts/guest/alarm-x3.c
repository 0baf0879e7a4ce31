// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into upstream's sigtrap_threads only (scripts/build-guest.sh,
 * with -Wl,--wrap=alarm): the kselftest harness's per-case alarm, 30 s,
 * becomes 90 s.  The test's source and its assertions are upstream's.
 *
 * Its stress cases are sized for hardware: on the debug kernel in a TCG
 * guest signal_stress_with_disable takes 21 s of its 30 on a quiet host
 * and timed out on CI's slower one.  A case that hangs still fails, after
 * 90 s, within the program's 450 (tests/suites.py).
 */
/* The linker's name for the C library's alarm() under --wrap=alarm. */
unsigned int __real_alarm(unsigned int seconds);

unsigned int __wrap_alarm(unsigned int seconds)
{
	return __real_alarm(seconds * 3);
}
