// SPDX-License-Identifier: GPL-2.0
/*
 * How the perf core allocates the AUX area of a PMU that needs
 * (PERF_PMU_CAP_AUX_NO_SG) or prefers (PERF_PMU_CAP_AUX_PREFER_LARGE)
 * physically contiguous memory, as 6.12 defines it: chunks of one
 * watermark (rounded up to a power of two pages), and in overwrite mode
 * the whole area in one chunk.  ptsim registers its engine a second and a
 * third time as ptsim_nosg and ptsim_large with those capabilities, and
 * reports in debugfs (ptsim/setup_aux) how the pages it was given group
 * into physically contiguous runs; each test maps an area, checks the
 * runs, and streams a trace through it.
 *
 * What the allocator promises, and so what is asserted: each chunk is
 * tried at its order first and then one order lower at a time, with
 * __GFP_NORETRY, down to a single page; a PREFER_LARGE PMU takes what
 * it gets; a NO_SG PMU in overwrite mode gets the whole area in one
 * chunk or -ENOMEM; ptsim_nosg refuses (-ENOMEM) an area in which one of
 * its regions is not contiguous, as a driver for hardware without
 * scatter-gather must.  Runs no shorter than a chunk are promised only
 * where the allocator has blocks of that order to give: a case reads
 * /proc/buddyinfo before it maps, asserts whole chunks where free blocks
 * of the chunk's order hold the area many times over (a freshly booted
 * machine), and otherwise (one that has run for a while) only what the
 * fallback guarantees.  A run may be longer than a chunk (neighbouring
 * chunks can happen to be adjacent), never shorter than asserted.
 */
#include "ptsim_lib.h"
#include "../kselftest_harness.h"

#define SETUP_AUX	PTSIM_DEBUGFS "/setup_aux"
#define NR_RUNS		16

/* Free blocks of the chunk's order must hold the area this many times. */
#define FREE_MARGIN		8

/*
 * The runs of the last setup_aux: "pages N runs r0 r1 ...", rK runs of
 * 2^K pages or more (below 2^(K+1); the last counts all longer ones).
 * Returns the number of pages, -1 if the file cannot be read.
 */
static int read_runs(unsigned int *runs, int *nr_runs)
{
	FILE *f = fopen(SETUP_AUX, "r");
	int pages = -1, n = 0;

	if (!f)
		return -1;
	if (fscanf(f, "pages %d runs", &pages) != 1)
		pages = -1;
	while (n < NR_RUNS && fscanf(f, "%u", &runs[n]) == 1)
		n++;
	fclose(f);
	*nr_runs = n;
	return pages;
}

/* Runs in all, and (*@shorter) those of fewer than 2^@order pages. */
static int count_runs(const unsigned int *runs, int nr_runs,
		      unsigned int order, int *shorter)
{
	int i, total = 0;

	*shorter = 0;
	for (i = 0; i < nr_runs; i++) {
		if (i < (int)order)
			*shorter += runs[i];
		total += runs[i];
	}
	return total;
}

/*
 * Free pages in blocks of 2^@order pages or more, over every zone
 * (/proc/buddyinfo: "Node 0, zone   Normal  n0 n1 ..."); -1 if it
 * cannot be read.
 */
static long free_from_order(unsigned int order)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	char line[512], zone[32];
	long sum = 0, n;
	unsigned int o;
	int node, off;
	char *p;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone %31s%n", &node, zone, &off) != 2)
			continue;
		p = line + off;
		for (o = 0; sscanf(p, "%ld%n", &n, &off) == 1; o++, p += off)
			if (o >= order)
				sum += n << o;
	}
	fclose(f);
	return sum;
}

/*
 * Map @aux_pages of AUX area (overwrite mode if @snapshot) on an event
 * of PMU @pmu tracing a burner, and check the runs setup_aux got: none
 * shorter than 2^@order pages (the chunk) where the memory to give them
 * is free, else none shorter than 2^@floor, the least the fallback
 * promises for this PMU.  A PMU with a floor may refuse the area
 * (-ENOMEM) where memory is fragmented.  Then the trace must decode.
 */
static void contig(struct __test_metadata *_metadata, const char *pmu,
		   __u64 config, int aux_pages, bool snapshot,
		   unsigned int order, unsigned int floor)
{
	unsigned int runs[NR_RUNS] = { };
	struct perf_event_attr attr;
	int fd, go, status, pages, nr_runs = 0, short_runs, total, err;
	struct capture s;
	struct pt_check w;
	bool whole;
	long avail;
	pid_t pid;

	if (pmu_type(pmu) < 0)
		SKIP(return, "no %s PMU", pmu);
	/* What the test is about is in debugfs: without it, nothing to check. */
	if (ptsim_debugfs_missing())
		SKIP(return, "%s", ptsim_debugfs_missing());
	ptsim_attr(&attr, config);
	attr.type = pmu_type(pmu);
	pid = spawn_burner(100, -1, &go);
	ASSERT_GT(pid, 0);
	fd = perf_open(&attr, pid, -1, -1);
	ASSERT_GE(fd, 0) TH_LOG("%s: perf_event_open: %s", pmu, strerror(errno));
	/* Can the allocator give the area in blocks of 2^@order, with a margin? */
	avail = free_from_order(order);
	whole = avail >= (long)FREE_MARGIN * aux_pages;
	TH_LOG("%s: %ld pages free in blocks of 2^%u or more: %s", pmu,
	       avail, order,
	       whole ? "whole chunks asserted" : "fragmented, the fallback's floor asserted");
	err = capture_map(&s, fd, config, 16, aux_pages, snapshot);
	if (err && !whole && floor) {
		/* Refused as promised where the pieces cannot be had. */
		EXPECT_EQ(-ENOMEM, err) TH_LOG("%s: mmap: %s", pmu, strerror(-err));
		stop_burner(pid);
		close(fd);
		return;
	}
	ASSERT_EQ(0, err) TH_LOG("%s: mmap of %d AUX pages: %s", pmu, aux_pages,
				 strerror(-err));
	pages = read_runs(runs, &nr_runs);
	ASSERT_EQ(aux_pages, pages) TH_LOG("%s not readable", SETUP_AUX);
	total = count_runs(runs, nr_runs, whole ? order : floor, &short_runs);
	TH_LOG("%s: %d pages in %d runs, %d shorter than 2^%u", pmu, pages,
	       total, short_runs, whole ? order : floor);
	EXPECT_GT(total, 0);
	EXPECT_EQ(0, short_runs) TH_LOG("chunks smaller than the PMU asked for");

	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	release(go);
	if (snapshot) {
		/* The exit stops the event, which publishes aux_head. */
		status = -1;
		EXPECT_EQ(pid, waitpid(pid, &status, 0));
		capture_read_records(&s);
		capture_snapshot(&s);
	} else {
		status = capture_until_exit(&s, pid);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	pt_check_trace(&s, &w, 0);
	TH_LOG("%s: bytes=%zu ptw=%lu", pmu, s.len, w.ptw64);
	EXPECT_GT(w.ptw64, 0);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	close(fd);
	capture_free(&s);
}

/* Chunks of one watermark: the default, half of 256 pages. */
TEST(prefer_large_normal)
{
	contig(_metadata, "ptsim_large", 0, 256, false, 7, 0);
}

/* Overwrite mode: the whole area in one chunk. */
TEST(prefer_large_overwrite)
{
	contig(_metadata, "ptsim_large", 0, 64, true, 6, 0);
}

/*
 * No scatter-gather: 16-page regions, which the default watermark's
 * 32-page chunks hold, so ptsim_nosg accepts the area; on fragmented
 * memory it accepts smaller chunks that still hold each region whole.
 */
TEST(nosg_normal)
{
	contig(_metadata, "ptsim_nosg", PTSIM_CFG1_REGION(4), 64, false, 5, 4);
}

/* No scatter-gather in overwrite mode: one chunk, or no area at all. */
TEST(nosg_overwrite)
{
	contig(_metadata, "ptsim_nosg", 0, 64, true, 6, 6);
}

TEST_HARNESS_MAIN
