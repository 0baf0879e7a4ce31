/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leak accounting and fault injection for the AUX area robustness tests
 * (ptsim_cve_test, ptsim_fuzz): ptsim_acct.h declares them, ptsim_acct.c
 * has them.
 *
 * What a perf buffer charges, and where it can be seen from user space:
 *
 *  - Pages up to the user's perf_event_mlock_kb allowance (times the number
 *    of online CPUs) are charged to the user's perf_mlock, which no file
 *    shows.  perf_mlock_probe() measures it: with a known allowance of L
 *    pages it maps a probe buffer of 1 + N > L pages; perf charges
 *    min(perf_mlock, L) + 1 + N - L pages of that to the process's
 *    pinned_vm, which /proc/self/status shows as VmPin.
 *  - Pages beyond the allowance are charged to the mapping process's
 *    pinned_vm (VmPin).  With perf_event_mlock_kb at 0 every page of every
 *    buffer is, so VmPin counts exactly what the process has mapped.
 *
 * Both charges must go back to where they were once every buffer is
 * unmapped.  So must the number of open file descriptors and of mappings.
 *
 * Fault injection (CONFIG_FAULT_INJECTION and friends, the debug kernel):
 * failslab, fail_page_alloc and fail_usercopy are configured through
 * debugfs with verbose=0, so an injected failure prints nothing (no stack
 * dump, which the harness would count as a splat), and with task-filter,
 * so only a task that set its make-it-fail is affected.  Two ways to fire:
 *
 *  - fi_nth_arm(): /proc/thread-self/fail-nth makes exactly the Nth
 *    allocation or user copy of this thread fail, whatever the probability;
 *    sweeping N from 1 until nothing fires takes every failure point of a
 *    system call once, in order.
 *  - fi_setup() with a probability and a budget of "times"; the number of
 *    failures injected is the budget used up (fi_fired()).
 */
#ifndef PTSIM_LEAK_H
#define PTSIM_LEAK_H

#include "ptsim_lib.h"
#include <dirent.h>
#include <linux/capability.h>
#include <sys/resource.h>

#include "ptsim_acct.h"

/*
 * Flags shared between threads and processes, and memory the kernel maps
 * (whose reads must really happen): atomics rather than volatile.
 */
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static inline char peek(const char *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline __u64 peek64(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

#endif /* PTSIM_LEAK_H */
