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
 *
 * Then what an AUX area pins: an event G with its areas mapped is
 * closed, and the PMU unregistered (debugfs aux_share/unregister, as a
 * driver whose device goes away; 7.3 revokes G).  The area still holds
 * the PMU's setup_aux data, which free_aux, code of the module, frees
 * at munmap(): the module must not unload while the area is mapped, and
 * must once it is unmapped.
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
#define UNLOAD_MS	2000

static int failures, checks;

static void check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", ++checks, what);
	failures += !ok;
}

/* The checks' names, for their results and their skips alike. */
static const char *const what[] = {
	"SET_OUTPUT of an inherited per-task event to a mapped buffer: EINVAL",
	"no two transactions open on the buffer at once",
	"no warning (taint W) from the children's begins",
	"the PMU unregistered, its event's AUX area mapped",
	"the module stays loaded while the AUX area is mapped",
	"the module unloads once the area is unmapped",
};

/* Checks @first to @last (1-based) skipped for @why. */
static void skip(int first, int last, const char *why)
{
	for (; first <= last; first++)
		printf("ok %d - %s # SKIP %s\n", ++checks, what[first - 1], why);
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

/* Map @fd's data area (one page) and an AUX area of two pages. */
static int map_both(int fd, long psz, void **pg, void **aux)
{
	struct perf_event_mmap_page *p;

	p = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	p->aux_offset = 2 * psz;
	p->aux_size = 2 * psz;
	*aux = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    2 * psz);
	if (*aux == MAP_FAILED) {
		munmap(p, 2 * psz);
		return -1;
	}
	*pg = p;
	return 0;
}

static bool unload(void)
{
	return !syscall(SYS_delete_module, MOD, O_NONBLOCK);
}

/* Checks 4 to 6: the module pinned by a mapped AUX area, not longer. */
static void pinned(unsigned int type, long psz)
{
	int fd = open_event(type, false), wr, err;
	void *pg, *aux;
	bool gone;
	double end;

	if (fd < 0 || map_both(fd, psz, &pg, &aux)) {
		printf("Bail out! event G or its mapping: %s\n", strerror(errno));
		exit(1);
	}
	close(fd);
	wr = open(DBG "/unregister", O_WRONLY);
	if (wr < 0) {
		skip(4, 6, "this kernel cannot unregister a PMU with events (no "
			DBG "/unregister)");
		munmap(aux, 2 * psz);
		munmap(pg, 2 * psz);
		unload();
		return;
	}
	check(write(wr, "1", 1) == 1, what[3]);
	close(wr);
	gone = unload();
	err = errno;
	if (!gone)
		printf("# unload while mapped: %s\n", strerror(err));
	check(!gone, what[4]);
	munmap(aux, 2 * psz);	/* free_aux runs here, or after an RCU grace period */
	munmap(pg, 2 * psz);
	for (end = now_ms() + UNLOAD_MS; !gone && now_ms() < end; usleep(10000))
		gone = unload();
	check(gone, what[5]);
}

/* Checks 1 to 3: the inherited event refused, or two writers seen. */
static void one_writer(unsigned int type, long psz, const int cpu[2])
{
	int fe, ff, i;
	struct counts c0, c1;
	long t0, t1;
	void *pg, *aux;
	pid_t kid[2];

	ff = open_event(type, false);
	fe = open_event(type, true);
	if (ff < 0 || fe < 0 || map_both(ff, psz, &pg, &aux)) {
		printf("Bail out! events E, F or F's mapping: %s\n", strerror(errno));
		exit(1);
	}
	t0 = taint_flags();
	if (read_counts(&c0)) {
		printf("Bail out! cannot read " DBG "/counts\n");
		exit(1);
	}

	errno = 0;
	check(ioctl(fe, PERF_EVENT_IOC_SET_OUTPUT, ff) == -1 && errno == EINVAL,
	      what[0]);

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
	check(c1.most <= 1, what[1]);
	if (t0 < 0 || (t0 & TAINT_WARN))
		printf("# the kernel was tainted W before: the run's log tells\n");
	check(t0 < 0 || (t0 & TAINT_WARN) || !(t1 & TAINT_WARN), what[2]);

	munmap(aux, 2 * psz);
	munmap(pg, 2 * psz);
	close(fe);
	close(ff);
}

int main(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	int type, cpu[2];

	printf("TAP version 13\n1..6\n");
	if (modtest_load(MOD))
		return 1;
	type = auxc_pmu_type(MOD);
	if (type < 0) {
		printf("Bail out! no %s PMU\n", MOD);
		return 1;
	}
	if (two_cpus(cpu))
		skip(1, 3, "needs two CPUs");
	else
		one_writer(type, psz, cpu);
	pinned(type, psz);
	return failures ? 1 : 0;
}
