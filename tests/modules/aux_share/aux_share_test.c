// SPDX-License-Identifier: GPL-2.0
/*
 * One buffer, one writer at a time: the copies of an inherited per-task
 * event never write into a mapped buffer.
 *
 * The copies of an inherited per-task event run wherever their tasks
 * run, on several CPUs at once, and write into their parent's buffer.
 * perf_mmap() refuses to map such an event for that reason; but
 * PERF_EVENT_IOC_SET_OUTPUT could join it to the buffer of another
 * event of the same task, a mapped one.  With an AUX PMU that is not
 * exclusive (aux_share.ko, as s390's cpum_sf), two children on two CPUs
 * then both begin AUX transactions on that buffer: the second begin
 * trips the core's nesting WARN (a warning any user who may trace the
 * task can reach: a crash with panic_on_warn), or both get the area and
 * race on its producer state.
 *
 * The test opens F (the PMU, this task, not inherited), maps its data
 * and AUX areas, opens E (inherited) and asks for SET_OUTPUT E -> F: it
 * must be refused (EINVAL).  If it is not, E is enabled and two children
 * busy on two CPUs are forked: no two transactions may be open at once,
 * and the kernel must not warn (taint W).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "aux_sysfs.h"
#include "../modtest.h"

#define MOD		"aux_share"
#define DBG		"/sys/kernel/debug/" MOD
#define TAINT_WARN	0x200	/* bit 9, "W" */
#define BUSY_MS		500

static int failures, checks;

static void check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", ++checks, what);
	failures += !ok;
}

struct counts {
	int begun, refused, most;
};

static int read_counts(struct counts *c)
{
	FILE *f = fopen(DBG "/counts", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "begun %d refused %d most_open %d", &c->begun,
		   &c->refused, &c->most);
	fclose(f);
	return n == 3 ? 0 : -1;
}

static long taint_flags(void)
{
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");
	long t = -1;

	if (f) {
		if (fscanf(f, "%ld", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

static int open_event(unsigned int type, bool inherit)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = type, .disabled = 1,
		.inherit = inherit,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* The first two CPUs this task may run on, or -1. */
static int two_cpus(int cpu[2])
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	return n == 2 ? 0 : -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A child busy on @cpu for BUSY_MS, its inherited event running. */
static pid_t busy_child(int cpu)
{
	pid_t pid = fork();
	cpu_set_t set;
	double end;

	if (pid)
		return pid;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (end = now_ms() + BUSY_MS; now_ms() < end;)
		;
	_exit(0);
}

int main(void)
{
	long psz = sysconf(_SC_PAGESIZE), t0, t1;
	struct perf_event_mmap_page *pg;
	struct counts c0, c1;
	int type, fe, ff, cpu[2], i;
	pid_t kid[2];
	void *aux;

	printf("TAP version 13\n1..3\n");
	if (two_cpus(cpu)) {
		for (i = 1; i <= 3; i++)
			printf("ok %d # SKIP needs two CPUs\n", i);
		return 0;
	}
	if (modtest_load(MOD))
		return 1;
	type = auxc_pmu_type(MOD);
	ff = type < 0 ? -1 : open_event(type, false);
	fe = type < 0 ? -1 : open_event(type, true);
	if (ff < 0 || fe < 0) {
		printf("Bail out! no %s PMU or perf_event_open: %s\n", MOD,
		       strerror(errno));
		return 1;
	}
	pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, ff, 0);
	if (pg == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 1;
	}
	pg->aux_offset = 2 * psz;
	pg->aux_size = 2 * psz;
	aux = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, ff,
		   2 * psz);
	if (aux == MAP_FAILED) {
		printf("Bail out! AUX mmap: %s\n", strerror(errno));
		return 1;
	}
	t0 = taint_flags();
	if (read_counts(&c0)) {
		printf("Bail out! cannot read " DBG "/counts\n");
		return 1;
	}

	errno = 0;
	check(ioctl(fe, PERF_EVENT_IOC_SET_OUTPUT, ff) == -1 && errno == EINVAL,
	      "SET_OUTPUT of an inherited per-task event to a mapped buffer: EINVAL");

	/* Refused or not, run the children: with it refused, nobody writes. */
	ioctl(fe, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 2; i++)
		kid[i] = busy_child(cpu[i]);
	for (i = 0; i < 2; i++)
		if (kid[i] > 0)
			waitpid(kid[i], NULL, 0);
	ioctl(fe, PERF_EVENT_IOC_DISABLE, 0);
	read_counts(&c1);
	t1 = taint_flags();
	printf("# children on CPUs %d and %d: begun %d refused %d, most open at once %d\n",
	       cpu[0], cpu[1], c1.begun - c0.begun, c1.refused - c0.refused,
	       c1.most);
	check(c1.most <= 1, "no two transactions open on the buffer at once");
	if (t0 < 0 || (t0 & TAINT_WARN))
		printf("# the kernel was tainted W before: the run's log tells\n");
	check(t0 < 0 || (t0 & TAINT_WARN) || !(t1 & TAINT_WARN),
	      "no warning (taint W) from the children's begins");

	munmap(aux, 2 * psz);
	munmap(pg, 2 * psz);
	close(fe);
	close(ff);
	if (syscall(SYS_delete_module, MOD, O_NONBLOCK))
		printf("# cannot unload %s: %s\n", MOD, strerror(errno));
	return failures ? 1 : 0;
}
