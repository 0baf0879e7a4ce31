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
 *
 * The fragmented case makes such memory itself, and asserts the
 * fallback: it fills free memory with pipe pages (unmovable: compaction
 * cannot undo it) and frees every other one, takes what is left in large
 * blocks with areas of ptsim_large, and maps a PREFER_LARGE area, which
 * must be complete from smaller pieces and trace, and NO_SG areas, whole
 * where they must be or refused.  Like mm's compaction_test it fills the
 * machine's free memory for a moment (down to a floor), so it does so
 * only as root and where less than FRAG_MAX_FREE_MIB is free, and skips,
 * saying so, elsewhere.
 */
#include <sys/resource.h>

#include "ptsim_lib.h"
#include "ptsim_acct.h"
#include "../kselftest_harness.h"

#define SETUP_AUX	PTSIM_DEBUGFS "/setup_aux"
#define NR_RUNS		16

/* Free blocks of the chunk's order must hold the area this many times. */
#define FREE_MARGIN		8

/* The fragmented case: machines with up to this much free memory. */
#define FRAG_MAX_FREE_MIB	8192L
/* It leaves this much free, and four times min_free_kbytes more. */
#define FRAG_FLOOR_MIB		96L
/* Areas of ptsim_large that take the large blocks left, at most. */
#define MAX_HOGS		32

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

/* Pipes full of unmovable pages, every other one freed (fragment()). */
struct frag {
	int *fds;	/* read and write ends of the pipes kept */
	int nr;
};

/*
 * Fill free memory down to the floor with the pages of pairs of pipes,
 * written one page to each pipe of a pair in turn, so that consecutive
 * page frames tend to go to the two pipes alternately; then close the
 * second pipe of every pair (only then: freed earlier, their pages would
 * be the next ones handed out).  About half of what was taken is free
 * again, in pages whose buddies the first pipes hold: single pages that
 * cannot merge.  A pipe's pages come from alloc_page() without
 * __GFP_MOVABLE, so compaction cannot move them away.  NULL, or why it
 * could not.
 */
static const char *fragment(struct frag *fr)
{
	static char why[200];
	long psz = sysconf(_SC_PAGESIZE), free_kb = meminfo_kb("MemFree");
	long floor_kb = FRAG_FLOOR_MIB * 1024 +
			4 * read_long("/proc/sys/vm/min_free_kbytes");
	int pipe_pages, max_fds, nr = 0, p[2][2], *fds, i, j, k;
	struct rlimit rl;
	char *page;

	if (free_kb < 0 || free_from_order(0) < 0)
		return "no /proc/meminfo or /proc/buddyinfo";
	if (free_kb > FRAG_MAX_FREE_MIB * 1024) {
		snprintf(why, sizeof(why),
			 "%ld MiB free: this case fills free memory, and does so only below %ld MiB",
			 free_kb / 1024, FRAG_MAX_FREE_MIB);
		return why;
	}
	/* Pipes of 1 MiB if we may (root may), else of the default size. */
	if (pipe(p[0]))
		return "pipe() failed";
	fcntl(p[0][1], F_SETPIPE_SZ, 1 << 20);
	pipe_pages = fcntl(p[0][1], F_GETPIPE_SZ) / psz;
	close(p[0][0]);
	close(p[0][1]);
	if (pipe_pages <= 0)
		return "F_GETPIPE_SZ failed";
	/* Four descriptors a pair, a pair for every two pipes' worth free. */
	max_fds = 2 * (free_kb / (pipe_pages * psz / 1024)) + 64;
	rl.rlim_cur = max_fds + 64;
	rl.rlim_max = rl.rlim_cur;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		snprintf(why, sizeof(why), "cannot raise RLIMIT_NOFILE to %d: %s",
			 max_fds + 64, strerror(errno));
		return why;
	}
	fds = calloc(max_fds, sizeof(int));
	page = malloc(psz);
	if (!fds || !page) {
		free(fds);
		free(page);
		return "out of memory";
	}
	memset(page, 0x5a, psz);
	while (nr + 4 <= max_fds && meminfo_kb("MemFree") > floor_kb) {
		if (pipe2(p[0], O_NONBLOCK))
			break;
		if (pipe2(p[1], O_NONBLOCK)) {
			close(p[0][0]);
			close(p[0][1]);
			break;
		}
		for (k = 0; k < 2; k++)
			fcntl(p[k][1], F_SETPIPE_SZ, pipe_pages * psz);
		for (j = 0; j < pipe_pages; j++)
			for (k = 0; k < 2; k++)
				if (write(p[k][1], page, psz) != psz)
					j = pipe_pages;
		for (k = 0; k < 2; k++) {
			fds[nr++] = p[k][0];
			fds[nr++] = p[k][1];
		}
	}
	free(page);
	/* Keep the first pipe of each pair, close the second. */
	fr->fds = fds;
	fr->nr = 0;
	for (i = 0; i < nr; i += 4) {
		fds[fr->nr++] = fds[i];
		fds[fr->nr++] = fds[i + 1];
		close(fds[i + 2]);
		close(fds[i + 3]);
	}
	if (!fr->nr)
		return "no pipe could be made";
	return NULL;
}

static void unfragment(struct frag *fr)
{
	int i;

	for (i = 0; i < fr->nr; i++)
		close(fr->fds[i]);
	free(fr->fds);
	fr->fds = NULL;
	fr->nr = 0;
}

/*
 * Map @pages of AUX area of @pmu (@config; overwrite mode if @snapshot)
 * on a new event of task @pid (@fd, not enabled): 0 and the runs in
 * @runs, or -errno.
 */
static int map_runs(const char *pmu, __u64 config, pid_t pid, int pages,
		    bool snapshot, struct capture *s, int *fd,
		    unsigned int *runs, int *nr_runs)
{
	struct perf_event_attr attr;
	int err;

	ptsim_attr(&attr, config);
	attr.type = pmu_type(pmu);
	*fd = perf_open(&attr, pid, -1, -1);
	if (*fd < 0)
		return -errno;
	err = capture_map(s, *fd, config, 16, pages, snapshot);
	if (err) {
		close(*fd);
		return err;
	}
	if (read_runs(runs, nr_runs) != pages) {
		capture_free(s);
		close(*fd);
		return -EIO;
	}
	return 0;
}

/*
 * Memory the allocator cannot give in large blocks.  fragment() leaves
 * single pages and, above its floor, what it did not reach, mostly in
 * large blocks.  Areas of ptsim_large in overwrite mode (chunks of the
 * whole area, capped at MAX_PAGE_ORDER) no larger than what is free in
 * blocks of 2^6 pages or more, so served from those first, then take
 * them until fewer than 2^6 such pages are left.  ptsim_large is
 * exclusive, as intel_pt is: one event per context, so each area is on
 * an event of its own task, a child that waits.  The blocks of 2 to 32
 * pages the kernel's own small allocations need stay.  Then, as
 * promised: a PREFER_LARGE area of 512 pages is complete, from smaller
 * pieces (runs shorter than 2^6 pages: there is nothing larger to give),
 * and traces; a NO_SG area in overwrite mode is one chunk of 2^6 or
 * -ENOMEM; one with 16-page regions has each region whole, or -ENOMEM.
 * Once the memory is back, the same NO_SG area maps in one piece, and
 * VmPin is what it was.
 */
/* Filling memory takes its time under emulation: more than the default 30 s. */
FIXTURE(frag) {};
FIXTURE_SETUP(frag) {}
FIXTURE_TEARDOWN(frag) {}

TEST_F_TIMEOUT(frag, fragmented, 300)
{
	int fd, nfd, go, status, nr_runs = 0, short_runs, total, err, h, nr_hogs = 0;
	int hog_fds[MAX_HOGS], hog_go[MAX_HOGS], hogged = 0;
	struct capture s, n, hogs[MAX_HOGS];
	unsigned int runs[NR_RUNS] = { };
	long large, vm_pin = vm_pin_pages();
	pid_t pid, hog_pid[MAX_HOGS];
	struct perf_event_attr attr;
	struct frag fr = { };
	struct pt_check w;
	const char *why;

	if (pmu_type("ptsim_large") < 0 || pmu_type("ptsim_nosg") < 0)
		SKIP(return, "no ptsim_large or ptsim_nosg PMU");
	if (ptsim_debugfs_missing())
		SKIP(return, "%s", ptsim_debugfs_missing());
	if (geteuid())
		SKIP(return, "not root: it fills free memory, maps past perf_event_mlock_kb");

	why = fragment(&fr);
	if (why)
		SKIP(return, "%s", why);
	TH_LOG("%d pipes hold %ld MiB; %ld MiB free, pages in blocks of 2^6+: %ld, of 2 to 32: %ld",
	       fr.nr / 2, ((long)fr.nr / 2 * fcntl(fr.fds[1], F_GETPIPE_SZ)) >> 20,
	       meminfo_kb("MemFree") / 1024, free_from_order(6),
	       free_from_order(1) - free_from_order(6));
	while (nr_hogs < MAX_HOGS && (large = free_from_order(6)) >= 64) {
		for (h = 64; 2L * h <= large; h *= 2)
			;
		hog_pid[nr_hogs] = spawn_burner(0, -1, &hog_go[nr_hogs]);
		ASSERT_GT(hog_pid[nr_hogs], 0);
		err = map_runs("ptsim_large", 0, hog_pid[nr_hogs], h, true,
			       &hogs[nr_hogs], &hog_fds[nr_hogs], runs, &nr_runs);
		if (err) {
			stop_burner(hog_pid[nr_hogs]);
			close(hog_go[nr_hogs]);
		}
		ASSERT_EQ(0, err) TH_LOG("ptsim_large: %d pages: %s", h, strerror(-err));
		nr_hogs++;
		hogged += h;
	}
	large = free_from_order(6);
	TH_LOG("%d ptsim_large areas hold %d pages; left in blocks of 2^6+: %ld, of 2 to 32: %ld",
	       nr_hogs, hogged, large, free_from_order(1) - large);

	/* The PREFER_LARGE area, on a burner that waits for go. */
	ptsim_attr(&attr, 0);
	attr.type = pmu_type("ptsim_large");
	pid = spawn_burner(100, -1, &go);
	ASSERT_GT(pid, 0);
	fd = perf_open(&attr, pid, -1, -1);
	ASSERT_GE(fd, 0) TH_LOG("ptsim_large: perf_event_open: %s", strerror(errno));
	err = capture_map(&s, fd, 0, 16, 512, false);
	ASSERT_EQ(0, err) TH_LOG("ptsim_large: mmap of 512 AUX pages on fragmented memory: %s",
				 strerror(-err));
	ASSERT_EQ(512, read_runs(runs, &nr_runs));
	total = count_runs(runs, nr_runs, 6, &short_runs);
	TH_LOG("ptsim_large: 512 pages in %d runs, %d shorter than 2^6", total, short_runs);
	/* Else the case did not reach the fallback: it tested nothing. */
	EXPECT_GT(short_runs, 0) TH_LOG("no fallback: %ld pages were free in blocks of 2^6 or more",
					large);

	/* NO_SG overwrite: the whole area in one chunk, or -ENOMEM. */
	err = map_runs("ptsim_nosg", 0, 0, 64, true, &n, &nfd, runs, &nr_runs);
	TH_LOG("ptsim_nosg overwrite, 64 pages, %ld free in blocks of 2^6 or more: %s",
	       free_from_order(6), err ? strerror(-err) : "mapped");
	if (err) {
		EXPECT_EQ(-ENOMEM, err);
	} else {
		total = count_runs(runs, nr_runs, 6, &short_runs);
		EXPECT_EQ(1, total) TH_LOG("overwrite mode without scatter-gather in %d pieces",
					   total);
		EXPECT_EQ(0, short_runs);
		capture_free(&n);
		close(nfd);
	}

	/* NO_SG with 16-page regions: each region whole, or -ENOMEM. */
	err = map_runs("ptsim_nosg", PTSIM_CFG1_REGION(4), 0, 64, false, &n, &nfd,
		       runs, &nr_runs);
	TH_LOG("ptsim_nosg, 16-page regions, 64 pages, %ld free in blocks of 2^4 or more: %s",
	       free_from_order(4), err ? strerror(-err) : "mapped");
	if (err) {
		EXPECT_EQ(-ENOMEM, err);
	} else {
		count_runs(runs, nr_runs, 4, &short_runs);
		EXPECT_EQ(0, short_runs) TH_LOG("a region split over pieces");
		capture_free(&n);
		close(nfd);
	}

	/* The fallback's area traces. */
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	release(go);
	status = capture_until_exit(&s, pid);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	pt_check_trace(&s, &w, 0);
	TH_LOG("ptsim_large: bytes=%zu ptw=%lu", s.len, w.ptw64);
	EXPECT_GT(w.ptw64, 0);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	close(fd);
	capture_free(&s);

	/*
	 * Memory back (the children hold copies of the pipes too): the
	 * NO_SG overwrite area in one piece.
	 */
	while (nr_hogs--) {
		capture_free(&hogs[nr_hogs]);
		close(hog_fds[nr_hogs]);
		EXPECT_TRUE(stop_burner(hog_pid[nr_hogs]));
		close(hog_go[nr_hogs]);
	}
	unfragment(&fr);
	err = map_runs("ptsim_nosg", 0, 0, 64, true, &n, &nfd, runs, &nr_runs);
	ASSERT_EQ(0, err) TH_LOG("ptsim_nosg overwrite after the memory came back: %s",
				 strerror(-err));
	total = count_runs(runs, nr_runs, 6, &short_runs);
	EXPECT_EQ(1, total);
	capture_free(&n);
	close(nfd);
	EXPECT_EQ(vm_pin, vm_pin_pages()) TH_LOG("VmPin not back to what it was");
}

TEST_HARNESS_MAIN
