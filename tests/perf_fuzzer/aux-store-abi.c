// SPDX-License-Identifier: GPL-2.0
/*
 * aux-store-abi: what a load or a store into each page of a perf buffer
 * gives, on a ptsim event, as kselftest TAP.  Written for the SIGBUS that
 * perf_fuzzer once died of on our kernel (issue 19): its "mmap read"
 * operation writes aux_tail through a mapping slot that may by then hold
 * another event's AUX area, i.e. it stores into an AUX page.  The ABI, the
 * same on both kernels: the user page (page 0 of the data mapping) is the
 * one page userspace may write; a store into a data page or into an AUX
 * page of a writable mapping is SIGBUS (the fault handlers refuse write
 * faults and page_mkwrite past page 0), into a read-only mapping SIGSEGV;
 * loads from every page of both areas work.
 *
 * Each case's access runs under a SIGBUS/SIGSEGV handler that jumps back
 * (perf mappings are not inherited by fork(), so a child could not make
 * it); the result names the signal expected and the one seen.
 * make check runs it on ours and on upstream, and compares the two.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "aux_sysfs.h"

#define DATA_PAGES	256	/* 257-page mapping, as in the fuzzer's run */
#define AUX_PAGES	2

static sigjmp_buf env;
static long page;
static int nr, failed;

static void on_fault(int sig)
{
	siglongjmp(env, sig);
}

/*
 * The signal that one load (store == 0) or store at @p gives, or 0.
 * volatile: the access must happen, exactly once, here.
 */
static int access_gives(volatile char *p, int store)
{
	int sig = sigsetjmp(env, 1);

	if (sig)
		return sig;
	if (store)
		*p = 1;
	else
		(void)*p;
	return 0;
}

static const char *signame(int sig)
{
	return sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" :
	       sig ? "another signal" : "no signal";
}

static void check(const char *name, volatile char *p, int store, int want)
{
	int got = access_gives(p, store);

	nr++;
	if (got != want)
		failed++;
	printf("%sok %d %s # %s: %s (want %s)\n", got == want ? "" : "not ",
	       nr, name, store ? "store" : "load", signame(got),
	       signame(want));
}

struct buf {
	int fd;
	char *data, *aux;
};

/*
 * A ptsim event on @cpu with its data and AUX areas mapped; on failure,
 * the step that failed (errno says why).  ptsim takes one event per
 * context, hence CPU events, on two CPUs.
 */
static const char *map_event(struct buf *b, int aux_prot, int cpu)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *up;
	int type = auxc_pmu_type("ptsim");

	if (type < 0)
		return "no ptsim PMU";
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	b->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);
	if (b->fd < 0)
		return "perf_event_open()";
	b->data = mmap(NULL, (DATA_PAGES + 1) * page, PROT_READ | PROT_WRITE,
		       MAP_SHARED, b->fd, 0);
	if (b->data == MAP_FAILED)
		return "data mmap()";
	up = (struct perf_event_mmap_page *)b->data;
	up->aux_offset = (DATA_PAGES + 1) * page;
	up->aux_size = AUX_PAGES * page;
	b->aux = mmap(NULL, AUX_PAGES * page, aux_prot, MAP_SHARED, b->fd,
		      up->aux_offset);
	return b->aux == MAP_FAILED ? "AUX mmap()" : NULL;
}

int main(void)
{
	size_t tail = offsetof(struct perf_event_mmap_page, aux_tail);
	struct buf a, b, ro;
	struct sigaction sa;
	const char *err;

	page = sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);

	printf("TAP version 13\n1..10\n");
	err = map_event(&a, PROT_READ | PROT_WRITE, 0);
	if (!err)
		err = map_event(&ro, PROT_READ, 1);
	if (err) {
		printf("Bail out! %s: %m\n", err);
		return 1;
	}
	check("user_page_store", a.data + tail, 1, 0);
	check("data_page_load", a.data + page, 0, 0);
	check("data_page_store", a.data + page, 1, SIGBUS);
	check("aux_rw_page0_store_unmapped", a.aux, 1, SIGBUS);
	check("aux_rw_page0_load", a.aux, 0, 0);
	check("aux_rw_page0_store_mapped", a.aux, 1, SIGBUS);
	check("aux_ro_store", ro.aux, 1, SIGSEGV);
	munmap(ro.aux, AUX_PAGES * page);
	munmap(ro.data, (DATA_PAGES + 1) * page);
	close(ro.fd);

	/*
	 * perf_fuzzer's sequence: A's data area is unmapped and its slot
	 * taken by another event's AUX area (B's); the "mmap read" of A's
	 * AUX area then loads aux_head and stores aux_tail through the slot,
	 * i.e. into B's AUX page 0, at the offset of aux_tail.
	 */
	munmap(a.data, (DATA_PAGES + 1) * page);
	check("aux_load_after_data_unmap", a.aux + page, 0, 0);
	err = map_event(&b, PROT_READ | PROT_WRITE, 1);
	if (err) {
		printf("Bail out! second event: %s: %m\n", err);
		return 1;
	}
	check("stale_slot_aux_head_load", b.aux + tail, 0, 0);
	check("stale_slot_aux_tail_store", b.aux + tail, 1, SIGBUS);
	return failed ? 1 : 0;
}
