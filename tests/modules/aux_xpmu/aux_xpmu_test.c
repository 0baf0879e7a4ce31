// SPDX-License-Identifier: GPL-2.0
/*
 * An AUX area is written only by events of the PMU that set it up.
 *
 * perf_event_set_output() refuses to join two AUX events of different
 * PMUs, but it looks only at the event it is given: an AUX event of PMU
 * B redirected to a software event that is itself redirected to an
 * event of PMU A ends up in A's buffer, and when A has mapped an AUX
 * area there, B's perf_aux_output_begin() is handed A's setup_aux data
 * (on arm64: arm_spe programmed with cs_etm's).  With aux_xpmu.ko (two
 * AUX PMUs, each beginning a transaction when its event starts and
 * telling whose data the begin returned), the test builds that chain
 * and starts B's event: its begins must be refused.
 *
 * Then the same for a chain built before A maps its area, and A's own
 * event, which must still get its own data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "aux_sysfs.h"
#include "../modtest.h"

#define MOD	"aux_xpmu"
#define DBG	"/sys/kernel/debug/" MOD

static int failures, checks;

static void check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", ++checks, what);
	failures += !ok;
}

struct counts {
	int own, foreign, none;
};

static int read_counts(struct counts *c)
{
	FILE *f = fopen(DBG "/counts", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "own %d foreign %d none %d", &c->own, &c->foreign, &c->none);
	fclose(f);
	return n == 3 ? 0 : -1;
}

static int open_event(unsigned int type, unsigned long long config)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = type, .config = config, .disabled = 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* Enable @fd for a moment (its PMU begins and ends a transaction). */
static void pulse(int fd)
{
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

/*
 * A's event with its data and AUX areas mapped (@early: B's chain is
 * built first), a software event redirected to it, B's event redirected
 * to that one; then B's event and A's are started.
 */
static int chain(unsigned int a, unsigned int b, bool early)
{
	long psz = sysconf(_SC_PAGESIZE);
	int fa, fsw, fb = -1, ret = -1;
	struct perf_event_mmap_page *pg;
	struct counts c0, c1, c2;
	void *aux = MAP_FAILED;

	fa = open_event(a, 0);
	fsw = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	if (fa < 0 || fsw < 0) {
		printf("Bail out! perf_event_open: %s\n", strerror(errno));
		return -1;
	}
	pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 0);
	if (pg == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return -1;
	}
	if (ioctl(fsw, PERF_EVENT_IOC_SET_OUTPUT, fa)) {
		printf("Bail out! SET_OUTPUT dummy -> A: %s\n", strerror(errno));
		goto out;
	}
	if (!early) {
		pg->aux_offset = 2 * psz;
		pg->aux_size = 2 * psz;
		aux = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 2 * psz);
	}
	fb = open_event(b, 0);
	if (fb < 0) {
		printf("Bail out! perf_event_open B: %s\n", strerror(errno));
		goto out;
	}
	/* Allowed: the software event is no AUX event. */
	check(ioctl(fb, PERF_EVENT_IOC_SET_OUTPUT, fsw) == 0,
	      early ? "B redirected to a software event on A's buffer, before A's AUX area"
		    : "B redirected to a software event on A's buffer");
	if (early) {
		pg->aux_offset = 2 * psz;
		pg->aux_size = 2 * psz;
		aux = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 2 * psz);
	}
	if (aux == MAP_FAILED) {
		printf("Bail out! AUX mmap: %s\n", strerror(errno));
		goto out;
	}
	if (read_counts(&c0))
		goto out;
	pulse(fb);
	read_counts(&c1);
	pulse(fa);
	read_counts(&c2);
	printf("# B: own %d foreign %d none %d; then A: own %d\n", c1.own - c0.own,
	       c1.foreign - c0.foreign, c1.none - c0.none, c2.own - c1.own);
	check(c1.foreign == c0.foreign && c1.none > c0.none,
	      early ? "B's begins refused (redirected before the area)"
		    : "B's begins refused: B gets no data of A's setup_aux");
	check(c2.own == c1.own + 1 && c2.foreign == c1.foreign,
	      early ? "A's begin gets its own data (redirected before the area)"
		    : "A's begin gets its own data");
	ret = 0;
out:
	if (aux != MAP_FAILED)
		munmap(aux, 2 * psz);
	munmap(pg, 2 * psz);
	if (fb >= 0)
		close(fb);
	close(fsw);
	close(fa);
	return ret;
}

int main(void)
{
	int a, b;

	printf("TAP version 13\n1..6\n");
	if (modtest_load(MOD))
		return 1;
	a = auxc_pmu_type("aux_xpmu_a");
	b = auxc_pmu_type("aux_xpmu_b");
	if (a < 0 || b < 0) {
		printf("Bail out! no aux_xpmu_a/aux_xpmu_b PMU\n");
		return 1;
	}
	if (chain(a, b, false) || chain(a, b, true))
		return 1;
	if (syscall(SYS_delete_module, MOD, O_NONBLOCK))
		printf("# cannot unload %s: %s\n", MOD, strerror(errno));
	return failures ? 1 : 0;
}
