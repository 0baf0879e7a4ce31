/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Accounting and fault injection for the robustness tests: what a perf
 * buffer charges and where user space sees it, the process's files and
 * mappings, privileges, and debugfs fault injection (ptsim_leak.h says
 * more).
 */
#ifndef PTSIM_ACCT_H
#define PTSIM_ACCT_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

long read_long(const char *path);
int write_str(const char *path, const char *val);
int write_long(const char *path, long v);

#define NO_VALUE	LONG_MIN

long status_kb(const char *name);
long vm_pin_pages(void);
long meminfo_kb(const char *name);
long count_fds(void);
long count_maps(void);
long count_perf_maps(void);
int dummy_open(void);
long perf_mlock_probe(void);

/* What must come back to its baseline once everything is unmapped. */
struct acct {
	long vm_pin;		/* pages, VmPin */
	long perf_mlock;	/* pages, perf_mlock_probe(), -1: not checked */
	long fds;
	long maps;		/* all mappings, -1: not checked */
	long perf_maps;		/* mappings of perf buffers */
	long mem_free_kb;	/* MemFree + what we hold ourselves, see below */
	long aux_bufs;		/* ptsim AUX buffers alive, -1: not readable */
	long events;		/* ptsim events alive, -1: not readable */
};

long ptsim_aux_bufs(void);
long ptsim_events(void);
long mem_free_or_ours_kb(void);
void acct_take(struct acct *a, bool probe);

/* Free memory may dip this much for reasons that are not leaks. */
#define MEMFREE_SLACK_KB	(32 * 1024)

int acct_diff(const struct acct *base, const struct acct *now,
	      char *why, size_t len);
int acct_settle(const struct acct *base, struct acct *now,
		char *why, size_t len);

/* privileges */

#define NOBODY_UID	65534	/* and gid */

int cap_drop(int cap);
int set_memlock(rlim_t bytes);
int become_user(uid_t uid);

/* fault injection */

int fi_knob(const char *attr, const char *knob, const char *val);
long fi_read(const char *attr, const char *knob);
bool fi_available(void);
int fi_setup(int probability, int interval, long times);
void fi_off(void);
long fi_fired(long times);
int fi_task_open(void);
void fi_task(int fd, bool on);
int fi_nth_open(void);
int fi_nth_arm(int fd, unsigned int nth);
bool fi_nth_fired(int fd);

#endif /* PTSIM_ACCT_H */
