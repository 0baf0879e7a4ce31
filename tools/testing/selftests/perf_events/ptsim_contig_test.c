// SPDX-License-Identifier: GPL-2.0
/*
 * How the perf core allocates the AUX area of a PMU that needs
 * (PERF_PMU_CAP_AUX_NO_SG) or prefers (PERF_PMU_CAP_AUX_PREFER_LARGE)
 * physically contiguous memory, as 6.12 defines it: chunks of one
 * watermark (rounded up to a power of two pages), and in overwrite mode
 * the whole area in one chunk.  ptsim registers its engine a second and a
 * third time as ptsim_nosg and ptsim_large with those capabilities, and
 * reports in debugfs (ptsim/setup_aux) how the pages it was given group
 * into physically contiguous runs; each test maps an area, checks that
 * no run is shorter than a chunk, and streams a trace through it.
 *
 * A run may be longer than a chunk (neighbouring chunks can happen to be
 * adjacent), never shorter.  The tests run in a freshly booted guest,
 * where blocks of these orders are free, so the fallback to smaller
 * chunks that the allocator has for a fragmented system does not happen.
 */
#include "ptsim_lib.h"
#include "../kselftest_harness.h"

#define SETUP_AUX	PTSIM_DEBUGFS "/setup_aux"
#define NR_RUNS		16

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

/*
 * Map @aux_pages of AUX area (overwrite mode if @snapshot) on an event
 * of PMU @pmu tracing a burner, check that setup_aux got runs of at
 * least 2^@order pages, and that the trace decodes.
 */
static void contig(struct __test_metadata *_metadata, const char *pmu,
		   __u64 config, int aux_pages, bool snapshot,
		   unsigned int order)
{
	unsigned int runs[NR_RUNS] = { };
	struct perf_event_attr attr;
	int fd, go, status, pages, nr_runs = 0, i, short_runs = 0;
	int total = 0;
	struct capture s;
	struct pt_check w;
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
	ASSERT_EQ(0, capture_map(&s, fd, config, 16, aux_pages, snapshot))
		TH_LOG("%s: mmap of %d AUX pages", pmu, aux_pages);
	pages = read_runs(runs, &nr_runs);
	ASSERT_EQ(aux_pages, pages) TH_LOG("%s not readable", SETUP_AUX);
	for (i = 0; i < nr_runs; i++) {
		if (i < (int)order)
			short_runs += runs[i];
		total += runs[i];
	}
	TH_LOG("%s: %d pages in %d runs, %d shorter than 2^%u", pmu, pages,
	       total, short_runs, order);
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
	contig(_metadata, "ptsim_large", 0, 256, false, 7);
}

/* Overwrite mode: the whole area in one chunk. */
TEST(prefer_large_overwrite)
{
	contig(_metadata, "ptsim_large", 0, 64, true, 6);
}

/*
 * No scatter-gather: 16-page regions, which the default watermark's
 * 32-page chunks hold, so ptsim_nosg accepts the area.
 */
TEST(nosg_normal)
{
	contig(_metadata, "ptsim_nosg", PTSIM_CFG1_REGION(4), 64, false, 5);
}

/* No scatter-gather in overwrite mode: one chunk, or no area at all. */
TEST(nosg_overwrite)
{
	contig(_metadata, "ptsim_nosg", 0, 64, true, 6);
}

TEST_HARNESS_MAIN
