// SPDX-License-Identifier: GPL-2.0
/*
 * An AUX area pins the module of its PMU's free_aux until it is freed.
 *
 * With aux_testmod.ko (an AUX PMU in a module that can hold a transaction
 * open at will), the test maps an AUX area, opens a transaction on it,
 * then unmaps everything and closes the event, so that the transaction
 * holds the area's last reference, as a writer caught in the unmap window
 * does (see kernel/events/aux.c).  The module must stay referenced
 * (refcnt 1, unloading refused) until the transaction ends; the free
 * then runs (from a workqueue) and calls free_aux, after which the module
 * unloads.  Before the area held its own module reference, refcnt was 0
 * at that point and the module could be unloaded with a free of its
 * pages still to call into it.
 *
 * Along the way, what ptsim never calls: the PMU's event_mapped runs for
 * the AUX mapping as for the data mapping, perf_get_aux() gives the open
 * transaction's setup_aux data, and perf_report_aux_output_id() puts a
 * PERF_RECORD_AUX_OUTPUT_HW_ID with the PMU's id into the data area.
 *
 * Ours only: 6.12's munmap() of an AUX area with a transaction still open
 * is a WARN (perf_mmap_close() checks aux_refcount), so on a kernel
 * without kernel/events/aux.c (no perf_aux_mmap in kallsyms) it skips.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "aux_sysfs.h"
#include "../modtest.h"

#define MOD	"aux_testmod"
#define DBG	"/sys/kernel/debug/" MOD
#define SKIPPED	"# SKIP 6.12 WARNs on munmap() of an AUX area with a transaction open"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define HW_ID	0xa0c0ffeeULL	/* AUX_TESTMOD_HW_ID */

static int failures, checks;

/* The results, in order: what each check() says. */
static const char *const results[] = {
	"AUX area mapped",
	"transaction begun",
	"event_mapped called for the data and the AUX mapping",
	"perf_get_aux() gives the transaction's setup_aux data",
	"PERF_RECORD_AUX_OUTPUT_HW_ID with the PMU's id in the data area",
	"the pending area holds the module",
	"unloading is refused while the area is pending",
	"transaction ended",
	"free_aux called once, after the end",
	"the module unloads once the area is freed",
};

static void check(bool ok)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", checks + 1,
	       results[checks]);
	checks++;
	failures += !ok;
}

static long read_long(const char *path)
{
	long long v;

	return auxc_read_ll(path, &v) ? -1 : v;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static bool ours(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !!strstr(line, " perf_aux_mmap\n");
	fclose(f);
	return found;
}

static int read_counts(int *setups, int *frees, int *mapped, int *gets)
{
	FILE *f = fopen(DBG "/counts", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "setup %d free %d mapped %d get %d", setups, frees,
		   mapped, gets);
	fclose(f);
	return n == 4 ? 0 : -1;
}

/* The hw_id of the first PERF_RECORD_AUX_OUTPUT_HW_ID in the data area. */
static bool find_hw_id(struct perf_event_mmap_page *pg, unsigned long long *id)
{
	unsigned long long head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	char *data = (char *)pg + pg->data_offset;
	unsigned long long pos;

	for (pos = 0; pos + sizeof(struct perf_event_header) <= head;) {
		struct perf_event_header *h = (void *)(data + pos % pg->data_size);

		if (!h->size)
			break;
		printf("# record type %u size %u\n", h->type, h->size);
		if (h->type == PERF_RECORD_AUX_OUTPUT_HW_ID &&
		    h->size >= sizeof(*h) + sizeof(*id)) {
			memcpy(id, h + 1, sizeof(*id));
			return true;
		}
		pos += h->size;
	}
	return false;
}

int main(void)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
	long psz = sysconf(_SC_PAGESIZE), refcnt;
	struct perf_event_mmap_page *pg;
	int fd, setups = -1, frees = -1, mapped = -1, gets = -1, tries, ret;
	unsigned long long hw_id = 0;
	void *aux;

	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(results));
	if (!ours()) {
		for (checks = 0; checks < (int)ARRAY_SIZE(results); checks++)
			printf("ok %d - %s " SKIPPED "\n", checks + 1,
			       results[checks]);
		return 0;
	}
	if (modtest_load(MOD))
		return 1;
	attr.type = auxc_pmu_type(MOD);
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("Bail out! perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 1;
	}
	pg->aux_offset = 2 * psz;
	pg->aux_size = 2 * psz;
	aux = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * psz);
	check(aux != MAP_FAILED);
	check(write_str(DBG "/hold", "1") == 0);
	read_counts(&setups, &frees, &mapped, &gets);
	printf("# event_mapped %d, perf_get_aux %d\n", mapped, gets);
	check(mapped == 2);
	check(gets == 1);
	check(find_hw_id(pg, &hw_id) && hw_id == HW_ID);

	/* The transaction now holds the area's last reference. */
	munmap(aux, 2 * psz);
	munmap(pg, 2 * psz);
	close(fd);
	refcnt = read_long("/sys/module/" MOD "/refcnt");
	printf("# refcnt with the area's free pending: %ld\n", refcnt);
	check(refcnt == 1);
	errno = 0;
	ret = syscall(SYS_delete_module, MOD, O_NONBLOCK);
	check(ret && (errno == EWOULDBLOCK || errno == EBUSY));
	if (!ret) {
		printf("Bail out! the module is gone with a free_aux still to call\n");
		return 1;
	}

	/* End it: the last reference goes, the free is deferred. */
	check(write_str(DBG "/hold", "0") == 0);
	for (tries = 0; tries < 1000; tries++) {
		if (read_long("/sys/module/" MOD "/refcnt") == 0)
			break;
		usleep(10 * 1000);
	}
	read_counts(&setups, &frees, &mapped, &gets);
	printf("# setup_aux %d free_aux %d, refcnt 0 after %d polls\n", setups,
	       frees, tries);
	check(setups == 1 && frees == 1);
	ret = syscall(SYS_delete_module, MOD, O_NONBLOCK);
	check(ret == 0);
	return failures ? 1 : 0;
}
