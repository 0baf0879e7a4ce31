// SPDX-License-Identifier: GPL-2.0
/*
 * Regression tests for the bugs the perf AUX area has had, driven through
 * the ptsim PMU: one test (or a few) per bug, each saying in its comment
 * how it fails on a kernel with the fix reverted.
 *
 * Most of these bugs leak a reference, and a leaked reference shows as
 * locked memory that is never given back.  The tests set
 * perf_event_mlock_kb to 0, so that every page of every perf buffer is
 * charged to the mapping process's pinned_vm (VmPin in /proc/self/status):
 * VmPin then counts exactly the pages the test has mapped, and must be 0
 * once it has unmapped everything.  At the end each test also checks,
 * against the values before it started, the user's perf_mlock (measured
 * as ptsim_leak.h explains), its file descriptors and its perf mappings.
 *
 * The races are bounded both in rounds and in time (a few seconds under
 * TCG); the number of rounds that ran is logged.  None of them asserts
 * anything about time.  Each runs at least RACE_MIN_ROUNDS rounds however
 * long they take (the time bound only ends the rounds after those), and
 * asserts that it did, and that the racing side really ran: a race test
 * must prove the race was run.
 */
#include "ptsim_leak.h"
#include <pthread.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include "ptsim_harness.h"

#define RACE_SECONDS	4
#define RACE_MIN_ROUNDS	20

struct peer;

/*
 * What every case's fixture keeps: cve (the cases that need nothing
 * more), aux_fail (one case in variants), fault_injection (the debug
 * kernel's: @nfd is this thread's fail-nth, opened before the baseline
 * is taken) and two_cpus.  Each needs root and the ptsim PMU; a fixture
 * skips its cases, with the reason, where anything is missing.
 */
struct cve {
	long psz;
	long mlock_kb;		/* perf_event_mlock_kb to put back */
	long paranoid;		/* perf_event_paranoid to put back, or LONG_MIN */
	struct acct base;
	pid_t kids[2];
	struct peer *peer;
	int nfd;
};

static void cve_begin(struct __test_metadata *_metadata, struct cve *c,
		      unsigned int needs)
{
	c->mlock_kb = -1;
	c->paranoid = LONG_MIN;
	c->kids[0] = 0;
	c->kids[1] = 0;
	c->peer = NULL;
	c->nfd = -1;
	c->psz = sysconf(_SC_PAGESIZE);
	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_ROOT |
		   PTSIM_NEED_DEBUGFS | needs);
	if (_metadata->exit_code)
		return;
	if (needs & PTSIM_NEED_FAULTS) {
		ASSERT_EQ(0, fi_setup(0, 1, -1));
		c->nfd = fi_nth_open();
		ASSERT_LE(0, c->nfd);
	}
	c->mlock_kb = read_long(MLOCK_SYSCTL);
	ASSERT_LE(0, c->mlock_kb);
	acct_take(&c->base, true);
	ASSERT_LE(0, c->base.perf_mlock) TH_LOG("cannot measure perf_mlock");
	ASSERT_LE(0, c->base.aux_bufs)
		TH_LOG("cannot read %s/{setup,free}_aux_calls", PTSIM_DEBUGFS);
	ASSERT_LE(0, c->base.events)
		TH_LOG("cannot read %s/events", PTSIM_DEBUGFS);
	/* glibc keeps the stacks of joined threads: count perf mappings only. */
	c->base.maps = -1;
	ASSERT_EQ(0, c->base.vm_pin);
	/* Every page of every perf buffer is charged to VmPin from now on. */
	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, 0));
}

static void peer_stop(struct peer *pr);

static void cve_end(struct cve *c)
{
	int i;

	peer_stop(c->peer);
	for (i = 0; i < 2; i++)
		if (c->kids[i] > 0) {
			kill(c->kids[i], SIGKILL);
			waitpid(c->kids[i], NULL, 0);
		}
	if (c->nfd >= 0)
		close(c->nfd);
	if (c->mlock_kb >= 0)
		write_long(MLOCK_SYSCTL, c->mlock_kb);
	if (c->paranoid != LONG_MIN)
		write_long(PARANOID_SYSCTL, c->paranoid);
}

FIXTURE(cve) { struct cve c; };
FIXTURE_SETUP(cve)
{
	cve_begin(_metadata, &self->c, 0);
}

FIXTURE_TEARDOWN(cve)
{
	cve_end(&self->c);
}

FIXTURE(fault_injection) { struct cve c; };
FIXTURE_SETUP(fault_injection)
{
	cve_begin(_metadata, &self->c, PTSIM_NEED_FAULTS);
}

FIXTURE_TEARDOWN(fault_injection)
{
	cve_end(&self->c);
}

FIXTURE(two_cpus) { struct cve c; };
FIXTURE_SETUP(two_cpus)
{
	cve_begin(_metadata, &self->c, PTSIM_NEED_2CPUS);
}

FIXTURE_TEARDOWN(two_cpus)
{
	cve_end(&self->c);
}

/*
 * Everything this test took is given back (see the top of the file).
 * elsewhere: pages charged to, or uncharged from, another process's VmPin
 * that are this process's to account for (see struct peer).
 */
static void expect_baseline_with(struct __test_metadata *_metadata,
				 struct cve *c, long elsewhere)
{
	struct acct base = c->base, now;
	char why[512];

	base.vm_pin -= elsewhere;
	/*
	 * A peer forked after the test opened its events holds copies of
	 * their descriptors, so they are alive while it runs: the tests
	 * with a peer stop it first.
	 */
	ASSERT_EQ(NULL, c->peer);
	EXPECT_EQ(0, acct_settle(&base, &now, why, sizeof(why)))
		TH_LOG("leaked: %s", why);
}

#define expect_baseline(c)	expect_baseline_with(_metadata, c, 0)

/* A child that only waits to be killed: a task to attach events to. */
static pid_t spawn_idle(void)
{
	pid_t pid = fork();

	if (!pid) {
		for (;;)
			pause();
	}
	return pid;
}

/* A ptsim event with perf's default config, on @pid and @cpu. */
static int open_on(pid_t pid, int cpu)
{
	struct perf_event_attr attr;

	ptsim_attr(&attr, 0);
	return perf_open(&attr, pid, cpu, -1);
}

/*
 * E and F: ptsim events on two idle children, both bound to CPU 0 (the
 * first online CPU, as everywhere here: online_cpu(0); CPU 1 is the
 * second).
 */
static void open_e_f(struct __test_metadata *_metadata, struct cve *c,
		     int *fe, int *ff)
{
	c->kids[0] = spawn_idle();
	c->kids[1] = spawn_idle();
	ASSERT_GT(c->kids[0], 0);
	ASSERT_GT(c->kids[1], 0);
	*fe = open_on(c->kids[0], online_cpu(0));
	ASSERT_LE(0, *fe) TH_LOG("perf_event_open: %s", strerror(errno));
	*ff = open_on(c->kids[1], online_cpu(0));
	ASSERT_LE(0, *ff) TH_LOG("perf_event_open: %s", strerror(errno));
}

/*
 * Map @pages data pages and the user page; unless @aux_size is 0, have
 * the user page ask for an AUX area of @aux_size at @aux_off.
 */
static struct perf_event_mmap_page *map_data(int fd, long psz, int pages,
					     __u64 aux_off, __u64 aux_size)
{
	struct perf_event_mmap_page *pg = mmap(NULL, (1 + pages) * psz,
					       PROT_READ | PROT_WRITE,
					       MAP_SHARED, fd, 0);

	if (pg == MAP_FAILED)
		return NULL;
	if (aux_size) {
		pg->aux_offset = aux_off;
		pg->aux_size = aux_size;
	}
	return pg;
}

static void *map_aux(int fd, __u64 off, __u64 size)
{
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
}

static double now_s(void)
{
	return now_ms() / 1000;
}

/*
 * ---- a peer process ----
 *
 * Two threads of one process cannot race in perf_mmap() or against
 * perf_mmap_close(): mmap() and munmap() take the mm's mmap_lock for
 * writing around them.  The races these bugs need are between two
 * processes that map the same buffer, here the test and a child that
 * shares its descriptors and runs mmap() or munmap() on command, both
 * released at once.  Upstream charges locked memory to the mm of the
 * mapping that allocates and uncharges it from the mm of the last
 * unmapping, which may be the other one; a kernel may also uncharge the
 * mm it charged.  Either way the sum of both processes' VmPin, read after
 * everything is done, is the invariant.
 */
enum { PEER_MMAP = 1, PEER_MUNMAP, PEER_NOP };

struct peer {
	int seq, ready, go, done;
	int op, fd, prot;
	__u64 off, len;
	void *addr;		/* PEER_MUNMAP: what; PEER_MMAP: the result */
	int err;
	long vm_pin;		/* the child's VmPin after the operation */
	pid_t pid;
};

static void peer_main(struct peer *pr)
{
	int seq = 0;

	for (;;) {
		while (LOAD(pr->seq) == seq)
			;
		seq = LOAD(pr->seq);
		STORE(pr->ready, seq);
		while (LOAD(pr->go) != seq)
			;
		errno = 0;
		if (pr->op == PEER_MMAP)
			pr->addr = mmap(NULL, pr->len, pr->prot, MAP_SHARED,
					pr->fd, pr->off);
		else if (pr->op == PEER_MUNMAP)
			pr->err = munmap(pr->addr, pr->len) ? errno : 0;
		if (pr->op == PEER_MMAP)
			pr->err = pr->addr == MAP_FAILED ? errno : 0;
		pr->vm_pin = vm_pin_pages();
		STORE(pr->done, seq);
	}
}

static struct peer *peer_start(void)
{
	pid_t pid;
	struct peer *pr = mmap(NULL, sizeof(*pr), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (pr == MAP_FAILED)
		return NULL;
	memset((void *)pr, 0, sizeof(*pr));
	/*
	 * Only the parent stores the pid: @pr is shared, and a child that
	 * stored its 0 there after the parent would make peer_stop() leave
	 * it running, with the test's descriptors, until the test exits.
	 */
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		peer_main(pr);
	}
	if (pid < 0) {
		munmap((void *)pr, sizeof(*pr));
		return NULL;
	}
	pr->pid = pid;
	return pr;
}

/* Post a command; the peer waits for peer_go(). */
static void peer_post(struct peer *pr, int op, int fd, __u64 off, __u64 len,
		      void *addr)
{
	pr->op = op;
	pr->fd = fd;
	pr->off = off;
	pr->len = len;
	pr->prot = PROT_READ | PROT_WRITE;
	pr->addr = addr;
	STORE(pr->seq, pr->seq + 1);
	while (pr->pid > 0 && LOAD(pr->ready) != pr->seq)
		;
}

static void peer_go(struct peer *pr)
{
	STORE(pr->go, pr->seq);
}

/* Wait for the peer's result; false if it died (a kernel oops kills it). */
static bool peer_wait(struct peer *pr)
{
	unsigned long spins = 0;

	while (LOAD(pr->done) != pr->seq)
		if (!(++spins & 0xfffff) && waitpid(pr->pid, NULL, WNOHANG)) {
			pr->pid = 0;
			return false;
		}
	return true;
}

/* Run a command in the peer alone. */
static bool peer_run(struct peer *pr, int op, int fd, __u64 off, __u64 len,
		     void *addr)
{
	peer_post(pr, op, fd, off, len, addr);
	peer_go(pr);
	return peer_wait(pr);
}

static void peer_stop(struct peer *pr)
{
	if (!pr)
		return;
	if (pr->pid > 0) {
		kill(pr->pid, SIGKILL);
		waitpid(pr->pid, NULL, 0);
	}
	munmap((void *)pr, sizeof(*pr));
}

/*
 * CVE-2024-46713: AUX serialization across buffers shared with
 * PERF_EVENT_IOC_SET_OUTPUT.
 *
 * E and F are ptsim events on two other tasks, both bound to CPU 0 (the
 * only way two events of an exclusive PMU can share a buffer); F's output
 * goes to E's buffer.  Each round, this process maps the AUX area through
 * E while a child maps it through F, at once.  The buffer must get one
 * AUX area: both calls succeed and the AUX pages are charged once.  F's
 * data area is mapped too where the kernel allows it (6.12); since
 * d06bf78e55d5 it refuses with EBUSY, which is checked, and the race runs
 * all the same: F's AUX mmap() needs only the buffer, E's mapping.  A
 * kernel may refuse F's AUX mmap() the same way (EBUSY: F maps a buffer
 * it does not own): then E's must succeed and be charged alone, and the
 * race this case is for cannot be run (logged); any other failure of
 * either side fails the case.
 *
 * With the fix reverted (perf_mmap() serializing the AUX branch with the
 * event's mmap_mutex instead of the buffer's aux_mutex), E and F hold
 * different mutexes, both processes can find the buffer without an AUX
 * area and both allocate one: the two VmPin show the AUX pages twice
 * right after the race, and after the munmap()s the first area's charge
 * is never given back (its pages leak too).  One side may also see the
 * other's area half built and fail with EINVAL.
 *
 * Seen 2026-11-23 on the upstream kernel with the two lines that take
 * rb->aux_mutex in perf_mmap() removed: round 1 reported "VmPin 137
 * pages in all, want 73: two AUX areas", then "VmPin 73 pages in all
 * after the AUX munmap()s, want 9", and the leak check "vm_pin 0 -> 64,
 * perf_mlock 0 -> 512".
 */
TEST_F_TIMEOUT(cve, aux_serialization_set_output, 60)
{
	const int data_pages = 8, aux_pages = 64;
	struct perf_event_mmap_page *pe, *pf;
	int fe, ff, rounds = 0, bad = 0, refused = 0;
	struct peer *pr;
	long elsewhere;
	double end;

	open_e_f(_metadata, &self->c, &fe, &ff);

	pe = map_data(fe, self->c.psz, data_pages, 0, 0);
	ASSERT_NE(NULL, pe);
	ASSERT_EQ(0, ioctl(ff, PERF_EVENT_IOC_SET_OUTPUT, fe));
	/*
	 * A second mapping of the same buffer, through F.  Since
	 * d06bf78e55d5 the data area of an event whose output goes to
	 * another's buffer cannot be mapped (EBUSY: both would write the
	 * same user page); the AUX area still can, and the race is between
	 * the two AUX mmap()s.
	 */
	errno = 0;
	pf = map_data(ff, self->c.psz, data_pages, 0, 0);
	if (!pf)
		ASSERT_EQ(EBUSY, errno)
			TH_LOG("data mmap through F: %s, want success or EBUSY",
			       strerror(errno));
	ASSERT_EQ(1 + data_pages, vm_pin_pages());
	pe->aux_offset = (1 + data_pages) * self->c.psz;
	pe->aux_size = aux_pages * self->c.psz;
	if (pf)
		ASSERT_EQ(pe->aux_offset, pf->aux_offset) TH_LOG("not one buffer");
	pr = peer_start();
	ASSERT_NE(NULL, pr);
	self->c.peer = pr;

	end = now_s() + RACE_SECONDS;
	while (rounds < 300 && (rounds < RACE_MIN_ROUNDS || now_s() < end) && !bad) {
		int err, err_b;
		void *a, *b;
		long pin;

		/* The peer maps through F while this process maps through E. */
		peer_post(pr, PEER_MMAP, ff, pe->aux_offset, pe->aux_size, NULL);
		peer_go(pr);
		a = map_aux(fe, pe->aux_offset, pe->aux_size);
		err = errno;
		ASSERT_TRUE(peer_wait(pr)) TH_LOG("round %d: the peer died", rounds);
		rounds++;
		b = pr->addr;
		err_b = pr->err;
		ASSERT_TRUE(peer_run(pr, PEER_NOP, -1, 0, 0, NULL));
		pin = vm_pin_pages() + pr->vm_pin;
		/* A kernel that refuses F any alias of E's buffer: see above. */
		if (b == MAP_FAILED && err_b == EBUSY && a != MAP_FAILED) {
			refused++;
			if (pin != 1 + data_pages + aux_pages) {
				bad++;
				TH_LOG("round %d: VmPin %ld pages, want %d: F's refusal charged",
				       rounds, pin, 1 + data_pages + aux_pages);
			}
		} else if (a == MAP_FAILED || b == MAP_FAILED) {
			bad++;
			TH_LOG("round %d: mmap through E: %s, through F: %s",
			       rounds, a == MAP_FAILED ? strerror(err) : "ok",
			       b == MAP_FAILED ? strerror(err_b) : "ok");
		} else if (pin != 1 + data_pages + aux_pages) {
			bad++;
			TH_LOG("round %d: VmPin %ld pages in all, want %d: two AUX areas",
			       rounds, pin, 1 + data_pages + aux_pages);
		}
		if (b != MAP_FAILED)
			ASSERT_TRUE(peer_run(pr, PEER_MUNMAP, -1, 0, pe->aux_size, b))
				TH_LOG("round %d: the peer died", rounds);
		if (a != MAP_FAILED)
			munmap(a, pe->aux_size);
		ASSERT_TRUE(peer_run(pr, PEER_NOP, -1, 0, 0, NULL));
		pin = vm_pin_pages() + pr->vm_pin;
		if (pin != 1 + data_pages) {
			bad++;
			TH_LOG("round %d: VmPin %ld pages in all after the AUX munmap()s, want %d",
			       rounds, pin, 1 + data_pages);
		}
	}
	TH_LOG("%d rounds, F's AUX mmap() refused (EBUSY) in %d%s", rounds, refused,
	       refused == rounds ? ": this kernel allows no alias, no race to run" : "");
	EXPECT_EQ(0, bad);
	EXPECT_LE(RACE_MIN_ROUNDS, rounds);
	if (pf)
		munmap(pf, (1 + data_pages) * self->c.psz);
	munmap(pe, (1 + data_pages) * self->c.psz);
	close(ff);
	close(fe);
	ASSERT_TRUE(peer_run(pr, PEER_NOP, -1, 0, 0, NULL));
	EXPECT_EQ(0, vm_pin_pages() + pr->vm_pin);
	elsewhere = pr->vm_pin;
	peer_stop(pr);
	self->c.peer = NULL;
	expect_baseline_with(_metadata, &self->c, elsewhere);
}

/*
 * CVE-2025-38563: a perf mapping must not be split.
 *
 * perf counts mappings by offset and size (a VMA at offset 0 is the data
 * area, one at aux_pgoff the AUX area), and open()/close() of a VMA
 * take and drop those counts whole.  Every way of splitting a data or an
 * AUX mapping must fail with EINVAL and leave it as it was: munmap() of a
 * part, mprotect() of a part, mremap() to a smaller size, and an mmap()
 * with MAP_FIXED over a part.  Growing it with mremap() fails (EFAULT,
 * the mapping is VM_DONTEXPAND); moving it whole is allowed, and so is
 * zapping its pages with MADV_DONTNEED, or it fails with EINVAL (since
 * 6.14's b709eb872e19 a perf mapping is VM_PFNMAP, which MADV_DONTNEED
 * refuses): either is accepted, any other result fails, and after it the
 * mapping must be as it was.  Afterwards everything goes back.
 *
 * With the fix reverted (no perf_mmap_may_split()), the partial munmap()
 * of the AUX mapping succeeds: the kernel calls perf_mmap_open() for the
 * new VMA, and the pieces' offsets no longer match aux_pgoff when they
 * are closed, so the AUX area's count never reaches zero.  The test
 * fails on the first EXPECT (munmap() returned 0), and at the end VmPin
 * still holds the AUX pages.  A split data mapping leaves a piece at a
 * non-zero offset that perf_mmap_open() counts as an AUX mapping.
 *
 * Seen 2026-11-23 on the upstream kernel with the .may_split line
 * removed from perf_mmap_vmops: every partial munmap() and MAP_FIXED of
 * both the data and the AUX mapping succeeded (20 EXPECTs of -1 and
 * EINVAL failed, "data: munmap of the first page" and so on), and the
 * test then died of SIGSEGV on a page it had been refused to unmap.
 */
TEST_F_TIMEOUT(cve, vma_split, 60)
{
	const int data_pages = 8, aux_pages = 16;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	long alen = aux_pages * psz;
	struct perf_event_mmap_page *pg;
	char *maps[2], *aux, *r;
	long lens[2];
	int fd, i;

	fd = open_on(0, -1);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
	pg = map_data(fd, psz, data_pages, dlen, alen);
	ASSERT_NE(NULL, pg);
	aux = map_aux(fd, pg->aux_offset, pg->aux_size);
	ASSERT_NE(MAP_FAILED, aux) TH_LOG("AUX mmap: %s", strerror(errno));
	ASSERT_EQ(1 + data_pages + aux_pages, vm_pin_pages());

	maps[0] = (char *)pg;
	lens[0] = dlen;
	maps[1] = aux;
	lens[1] = alen;
	for (i = 0; i < 2; i++) {
		char *m = maps[i];
		long len = lens[i];
		const char *what = i ? "AUX" : "data";

		errno = 0;
		EXPECT_EQ(-1, munmap(m, psz)) TH_LOG("%s: munmap of the first page", what);
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(-1, munmap(m + len - psz, psz))
			TH_LOG("%s: munmap of the last page", what);
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(-1, munmap(m + psz, psz)) TH_LOG("%s: munmap of a middle page", what);
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(-1, mprotect(m, psz, PROT_READ)) TH_LOG("%s: mprotect of a part", what);
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(MAP_FAILED, mremap(m, len, len - psz, 0))
			TH_LOG("%s: mremap to a smaller size", what);
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(MAP_FAILED, mremap(m, len, len + psz, MREMAP_MAYMOVE))
			TH_LOG("%s: mremap to a larger size", what);
		EXPECT_EQ(EFAULT, errno);
		errno = 0;
		EXPECT_EQ(MAP_FAILED, mmap(m + psz, psz, PROT_READ,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0))
			TH_LOG("%s: MAP_FIXED over a part", what);
		EXPECT_EQ(EINVAL, errno);
		/*
		 * Zapping pages splits nothing: 6.12 allows it (they fault
		 * back in); since b709eb872e19 (6.14) a perf mapping is
		 * VM_PFNMAP, mapped whole at mmap() time, and MADV_DONTNEED
		 * is refused with EINVAL.  Either way nothing may change.
		 */
		errno = 0;
		if (madvise(m + psz, psz, MADV_DONTNEED))
			EXPECT_EQ(EINVAL, errno)
				TH_LOG("%s: MADV_DONTNEED: %s, want success or EINVAL",
				       what, strerror(errno));
		/* Nothing changed: still mapped, still charged once. */
		EXPECT_EQ(1 + data_pages + aux_pages, vm_pin_pages());
		EXPECT_EQ(2, count_perf_maps());
	}
	/* The user page and the AUX pages are still there. */
	EXPECT_EQ((__u64)dlen, pg->aux_offset);
	EXPECT_EQ(0, aux[alen - 1]);
	EXPECT_EQ(0, aux[psz]);

	/* Moving a whole mapping is fine, and it keeps working. */
	r = mmap(NULL, alen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	r = mremap(aux, alen, alen, MREMAP_MAYMOVE | MREMAP_FIXED, r);
	ASSERT_NE(MAP_FAILED, r) TH_LOG("moving the AUX mapping: %s", strerror(errno));
	aux = r;
	EXPECT_EQ(0, aux[0]);
	EXPECT_EQ(1 + data_pages + aux_pages, vm_pin_pages());

	EXPECT_EQ(0, munmap(aux, alen));
	EXPECT_EQ(1 + data_pages, vm_pin_pages());
	EXPECT_EQ(0, munmap(pg, dlen));
	EXPECT_EQ(0, vm_pin_pages());

	/* The event can be mapped again: nothing of it was left behind. */
	pg = map_data(fd, psz, data_pages, dlen, alen);
	ASSERT_NE(NULL, pg);
	aux = map_aux(fd, pg->aux_offset, pg->aux_size);
	EXPECT_NE(MAP_FAILED, aux) TH_LOG("AUX mmap: %s", strerror(errno));
	if (aux != MAP_FAILED)
		munmap(aux, alen);
	munmap(pg, dlen);
	close(fd);
	expect_baseline(&self->c);
}

/*
 * The 2025 fixes of perf_mmap()'s error paths (e.g. "perf/core: Don't
 * leak AUX buffer refcount on allocation failure"): an AUX mmap() that
 * fails after perf took a reference on the buffer must give it back, and
 * must leave the data mapping, the locked memory and the pinned memory
 * exactly as they were.  Each failure is repeated many times, so that a
 * leak of one page per failure adds up.
 *
 * With that fix reverted (no atomic_dec(&rb->mmap_count) when the AUX
 * branch fails after its atomic_inc_not_zero()), the buffer keeps a count
 * that no VMA holds: the munmap() of the data area is then not the last
 * one, the buffer is never detached and its data pages are never
 * uncharged.  Each test fails in its first round: VmPin is still
 * 1 + data pages after the data munmap().
 *
 * Seen 2026-11-23 on the upstream kernel with that atomic_dec() removed:
 * aux_fail's eopnotsupp, enomem and eperm (then aux_fail_eopnotsupp and
 * so on) each failed in round 0 ("VmPin 5 after the data munmap(), want
 * 0", then "leaked: vm_pin 0 -> 5"); aux_fail_einval passed, as it
 * must: its mmap() fails before the reference is taken.
 */
FIXTURE(aux_fail) { struct cve c; };
FIXTURE_VARIANT(aux_fail) {
	bool dummy;		/* the dummy event, else ptsim */
	int aux_pages;		/* the AUX area's size, or ... */
	__u64 aux_bytes;	/* ... this */
	int err;
	bool memlock;		/* RLIMIT_MEMLOCK for the data area alone */
};

/* A PMU without an AUX area: EOPNOTSUPP, from the buffer allocation. */
FIXTURE_VARIANT_ADD(aux_fail, eopnotsupp) {
	.dummy = true, .aux_pages = 4, .err = EOPNOTSUPP,
};

/*
 * An AUX area whose page array perf cannot allocate: 4 GiB has 2^20
 * pages, an array of 8 MiB, above the largest kmalloc().  ENOMEM, and
 * nothing of it was charged.
 */
FIXTURE_VARIANT_ADD(aux_fail, enomem) { .aux_bytes = 1ULL << 32, .err = ENOMEM };

/*
 * Over RLIMIT_MEMLOCK without CAP_IPC_LOCK: EPERM from the accounting,
 * after perf took its reference on the buffer.  perf enforces the limit
 * only when perf_is_paranoid(), i.e. at perf_event_paranoid 0 and above:
 * at -1 the test sets 0 for the case (the fixture puts it back).
 */
FIXTURE_VARIANT_ADD(aux_fail, eperm) {
	.aux_pages = 16, .err = EPERM, .memlock = true,
};

FIXTURE_SETUP(aux_fail)
{
	cve_begin(_metadata, &self->c, 0);
}

FIXTURE_TEARDOWN(aux_fail)
{
	cve_end(&self->c);
}

TEST_F_TIMEOUT(aux_fail, mmap, 60)
{
	const int data_pages = 4;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	__u64 aux_size = variant->aux_bytes ?: variant->aux_pages * psz;
	struct perf_event_mmap_page *pg;
	int fd, i, bad = 0;
	void *aux;

	fd = variant->dummy ? dummy_open() : open_on(0, -1);
	ASSERT_LE(0, fd);
	if (variant->memlock) {
		self->c.paranoid = read_long(PARANOID_SYSCTL);
		ASSERT_NE(LONG_MIN, self->c.paranoid);
		if (self->c.paranoid >= 0)
			self->c.paranoid = LONG_MIN;	/* nothing to put back */
		else
			ASSERT_EQ(0, write_long(PARANOID_SYSCTL, 0));
		/* Room for the data area (5 pages), not for 16 AUX pages more. */
		ASSERT_EQ(0, cap_drop(CAP_IPC_LOCK));
		ASSERT_EQ(0, set_memlock(5 * psz));
	}
	for (i = 0; i < 200 && !bad; i++) {
		pg = map_data(fd, psz, data_pages, dlen, aux_size);
		ASSERT_NE(NULL, pg) TH_LOG("data mmap: %s", strerror(errno));
		errno = 0;
		aux = map_aux(fd, pg->aux_offset, aux_size);
		if (aux != MAP_FAILED || errno != variant->err) {
			bad++;
			TH_LOG("round %d: AUX mmap of %llu bytes: %s, want %s", i,
			       (unsigned long long)aux_size,
			       aux == MAP_FAILED ? strerror(errno) : "mapped",
			       strerror(variant->err));
			if (aux != MAP_FAILED)
				munmap(aux, aux_size);
		}
		/* The data mapping is intact and still charged once. */
		if (vm_pin_pages() != 1 + data_pages) {
			bad++;
			TH_LOG("round %d: VmPin %ld after the failure, want %d",
			       i, vm_pin_pages(), 1 + data_pages);
		}
		pg->data_tail = pg->data_head;
		if (pg->aux_size != aux_size) {
			bad++;
			TH_LOG("round %d: the user page changed", i);
		}
		munmap(pg, dlen);
		if (vm_pin_pages()) {
			bad++;
			TH_LOG("round %d: VmPin %ld after the data munmap(), want 0",
			       i, vm_pin_pages());
		}
	}
	TH_LOG("%d rounds", i);
	EXPECT_EQ(0, bad);

	/* With room again, the event maps an AUX area (without AUX, not). */
	if (variant->memlock)
		ASSERT_EQ(0, set_memlock(RLIM_INFINITY));
	pg = map_data(fd, psz, 4, dlen, 4 * psz);
	ASSERT_NE(NULL, pg) TH_LOG("data mmap: %s", strerror(errno));
	aux = map_aux(fd, pg->aux_offset, pg->aux_size);
	EXPECT_EQ(!variant->dummy, aux != MAP_FAILED) TH_LOG("AUX mmap: %s", strerror(errno));
	if (aux != MAP_FAILED)
		munmap(aux, pg->aux_size);
	munmap(pg, dlen);
	EXPECT_EQ(0, vm_pin_pages());
	close(fd);
	expect_baseline(&self->c);
}

/*
 * Requests refused before perf looks at the buffer (EINVAL) take and
 * leave nothing either.
 */
TEST_F_TIMEOUT(cve, aux_fail_einval, 60)
{
	const int data_pages = 4;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	struct perf_event_mmap_page *pg;
	void *aux, *aux2;
	int fd, i;

	fd = open_on(0, -1);
	ASSERT_LE(0, fd);
	for (i = 0; i < 50; i++) {
		pg = map_data(fd, psz, data_pages, 0, 0);
		ASSERT_NE(NULL, pg);
		/* Inside the data area. */
		pg->aux_offset = psz;
		pg->aux_size = 4 * psz;
		EXPECT_EQ(MAP_FAILED, map_aux(fd, psz, 4 * psz));
		EXPECT_EQ(EINVAL, errno);
		/* Not a power of two pages. */
		pg->aux_offset = dlen;
		pg->aux_size = 3 * psz;
		EXPECT_EQ(MAP_FAILED, map_aux(fd, dlen, 3 * psz));
		EXPECT_EQ(EINVAL, errno);
		/* Length other than aux_size. */
		pg->aux_size = 4 * psz;
		EXPECT_EQ(MAP_FAILED, map_aux(fd, dlen, 8 * psz));
		EXPECT_EQ(EINVAL, errno);
		/* A second mapping must match the first. */
		aux = map_aux(fd, dlen, 4 * psz);
		ASSERT_NE(MAP_FAILED, aux);
		pg->aux_size = 8 * psz;
		EXPECT_EQ(MAP_FAILED, map_aux(fd, dlen, 8 * psz));
		EXPECT_EQ(EINVAL, errno);
		pg->aux_size = 4 * psz;
		aux2 = map_aux(fd, dlen, 4 * psz);
		EXPECT_NE(MAP_FAILED, aux2);
		EXPECT_EQ(1 + data_pages + 4, vm_pin_pages());
		if (aux2 != MAP_FAILED)
			munmap(aux2, 4 * psz);
		munmap(aux, 4 * psz);
		EXPECT_EQ(1 + data_pages, vm_pin_pages());
		munmap(pg, dlen);
		ASSERT_EQ(0, vm_pin_pages());
	}
	close(fd);
	expect_baseline(&self->c);
}

/*
 * An AUX mmap() through an event whose output goes to another event's
 * buffer (PERF_EVENT_IOC_SET_OUTPUT): F has E's buffer but no mapping of
 * its own.
 *
 * 6.12 maps the AUX area through F (its mmap_count, an atomic_t, counts
 * up from 0, and the munmap() takes it back to 0, detaching F from the
 * buffer).  Mainline since the mmap() counts became refcount_t
 * (448f97fba901, 6.17) increments F's count at 0: "refcount_t: addition
 * on 0; use-after-free", a WARN, the count saturated for good, so that F
 * can no longer be redirected (EINVAL), and an underflow WARN at a later
 * munmap().  With the fix "perf/core: Refuse an AUX mmap() through an
 * event without a mapping" the mmap() fails with EBUSY, as mapping the
 * data area through F does.  Either way: no WARN (the kernel gets no W
 * taint here), F can be redirected again, nothing is left charged.
 *
 * Seen 2026-11-29 on 7.3.4: the WARN above in the first round, then
 * "clearing F's output: Invalid argument".
 */
TEST_F_TIMEOUT(cve, aux_map_through_output_event, 60)
{
	const int data_pages = 8, aux_pages = 16;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	long tainted = read_long("/proc/sys/kernel/tainted");
	struct perf_event_mmap_page *pe;
	int fe, ff, i, mapped = 0;
	void *aux;

	open_e_f(_metadata, &self->c, &fe, &ff);
	for (i = 0; i < 10; i++) {
		pe = map_data(fe, psz, data_pages, dlen, aux_pages * psz);
		ASSERT_NE(NULL, pe);
		ASSERT_EQ(0, ioctl(ff, PERF_EVENT_IOC_SET_OUTPUT, fe))
			TH_LOG("round %d: redirecting F: %s", i, strerror(errno));
		aux = map_aux(ff, dlen, aux_pages * psz);
		if (aux == MAP_FAILED) {
			EXPECT_EQ(EBUSY, errno)
				TH_LOG("round %d: AUX mmap() through F: %s", i,
				       strerror(errno));
		} else {
			mapped++;
			EXPECT_EQ(1 + data_pages + aux_pages, vm_pin_pages());
			munmap(aux, aux_pages * psz);
		}
		munmap(pe, dlen);
		EXPECT_EQ(0, vm_pin_pages());
		ASSERT_EQ(0, ioctl(ff, PERF_EVENT_IOC_SET_OUTPUT, -1L))
			TH_LOG("round %d: clearing F's output: %s", i, strerror(errno));
	}
	TH_LOG("%d rounds, the AUX mmap() through F succeeded in %d", i, mapped);
	if (tainted < 0 || (tainted & (1 << 9)))
		TH_LOG("the kernel was tainted W before: only the console shows a WARN");
	else
		EXPECT_EQ(0, read_long("/proc/sys/kernel/tainted") & (1 << 9))
			TH_LOG("a WARN (taint W) during the case");
	close(ff);
	close(fe);
	expect_baseline(&self->c);
}

/*
 * Allocation failures anywhere in the AUX mmap() (and in opening and
 * mapping the event): with fault injection, fail the 1st, 2nd, ...
 * allocation or user copy of the call until one runs through without
 * reaching the armed failure.  Each call must either fail cleanly or
 * succeed, and leave nothing behind.  Needs the debug kernel's fault
 * injection; skipped without it.
 *
 * This covers the same fixes as above at every failure point rather than
 * three: with them reverted it fails as they do.
 */
TEST_F_TIMEOUT(fault_injection, aux_fail_injected, 300)
{
	const int data_pages = 4, aux_pages = 16;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	int fd, nth, fired_total = 0, bad = 0, step;
	struct perf_event_mmap_page *pg;
	bool fired;
	void *p;

	for (step = 0; step < 3; step++) {
		for (nth = 1; nth < 1000; nth++) {
			pg = NULL;
			fd = -1;
			if (step > 0) {
				fd = open_on(0, -1);
				ASSERT_LE(0, fd);
			}
			if (step > 1) {
				pg = map_data(fd, psz, data_pages, dlen, aux_pages * psz);
				ASSERT_NE(NULL, pg);
			}
			ASSERT_EQ(0, fi_nth_arm(self->c.nfd, nth));
			switch (step) {
			case 0:
				fd = open_on(0, -1);
				p = fd >= 0 ? NULL : MAP_FAILED;
				break;
			case 1:
				p = mmap(NULL, dlen, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0);
				break;
			default:
				p = map_aux(fd, dlen, aux_pages * psz);
				break;
			}
			fired = fi_nth_fired(self->c.nfd);
			fired_total += fired;
			if (step == 1 && p != MAP_FAILED)
				pg = p;
			if (step == 2 && p != MAP_FAILED)
				munmap(p, aux_pages * psz);
			if (vm_pin_pages() != (pg ? 1 + data_pages : 0)) {
				bad++;
				TH_LOG("step %d, failure %d: VmPin %ld", step,
				       nth, vm_pin_pages());
			}
			if (pg)
				munmap(pg, dlen);
			if (fd >= 0)
				close(fd);
			if (vm_pin_pages()) {
				bad++;
				TH_LOG("step %d, failure %d: VmPin %ld after munmap()",
				       step, nth, vm_pin_pages());
			}
			if (!fired) {
				/* Past the last failure point: it must work. */
				EXPECT_NE(MAP_FAILED, p)
					TH_LOG("step %d: %s", step, strerror(errno));
				break;
			}
		}
		TH_LOG("step %d (%s): %d failure points", step,
		       step == 0 ? "perf_event_open" : step == 1 ? "data mmap" : "AUX mmap",
		       nth - 1);
	}
	EXPECT_EQ(0, bad);
	EXPECT_LT(0, fired_total) TH_LOG("fault injection never fired");
	expect_baseline(&self->c);
}

/*
 * The fallback of a contiguous AUX area's allocation (see ptsim_contig_test,
 * whose freshly booted guest never needs it): for a PMU that prefers
 * large chunks (ptsim_large), a chunk whose order cannot be had is taken
 * one order smaller, so a failed page allocation does not fail the
 * mmap(); for one without scatter-gather in overwrite mode (ptsim_nosg,
 * a read-only mapping), which needs the whole area in one chunk, a
 * smaller chunk fails it with ENOMEM.  With fault injection, fail the
 * 1st, 2nd, ... allocation of the AUX mmap() as aux_fail_injected does:
 * every call fails with ENOMEM or succeeds, nothing is left behind, and
 * on ptsim_large at least one injected failure is absorbed by the
 * fallback.  Without the fallback every one fails the call on a kernel
 * whose other allocations in the call all fail it too (make coverage's:
 * 8 of 8); on the debug kernel kmemleak's and KASAN's own allocations
 * absorb some as well, so there only the coverage kernel's run proves it.
 */
TEST_F_TIMEOUT(fault_injection, aux_fail_fallback, 300)
{
	static const struct fallback_pmu {
		const char *pmu;
		bool overwrite;
	} pmus[] = {
		{ "ptsim_large", false },
		{ "ptsim_nosg", true },
	};
	const int data_pages = 4, aux_pages = 64;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	int fd, nth, bad, absorbed, failed, err, prot;
	struct perf_event_mmap_page *pg;
	struct perf_event_attr attr;
	unsigned int c;
	bool fired;
	void *p;

	for (c = 0; c < ARRAY_SIZE(pmus); c++) {
		prot = pmus[c].overwrite ? PROT_READ : PROT_READ | PROT_WRITE;
		ptsim_attr(&attr, 0);
		attr.type = pmu_type(pmus[c].pmu);
		ASSERT_LE(0, (int)attr.type) TH_LOG("no %s PMU", pmus[c].pmu);
		bad = 0;
		absorbed = 0;
		failed = 0;
		for (nth = 1; nth < 1000; nth++) {
			fd = perf_open(&attr, 0, -1, -1);
			ASSERT_LE(0, fd);
			pg = map_data(fd, psz, data_pages, dlen, aux_pages * psz);
			ASSERT_NE(NULL, pg);
			ASSERT_EQ(0, fi_nth_arm(self->c.nfd, nth));
			p = mmap(NULL, aux_pages * psz, prot, MAP_SHARED, fd, dlen);
			err = errno;
			fired = fi_nth_fired(self->c.nfd);
			if (p == MAP_FAILED) {
				failed++;
				if (err != ENOMEM) {
					bad++;
					TH_LOG("%s, failure %d: %s", pmus[c].pmu,
					       nth, strerror(err));
				}
			} else {
				absorbed += fired;
				munmap(p, aux_pages * psz);
			}
			munmap(pg, dlen);
			close(fd);
			if (vm_pin_pages()) {
				bad++;
				TH_LOG("%s, failure %d: VmPin %ld after munmap()",
				       pmus[c].pmu, nth, vm_pin_pages());
			}
			if (!fired) {
				/* Past the last failure point: it must work. */
				EXPECT_NE(MAP_FAILED, p)
					TH_LOG("%s: %s", pmus[c].pmu, strerror(err));
				break;
			}
		}
		TH_LOG("%s%s: %d failure points, %d failed the mmap(), %d absorbed",
		       pmus[c].pmu, pmus[c].overwrite ? " (overwrite)" : "",
		       nth - 1, failed, absorbed);
		EXPECT_EQ(0, bad);
		EXPECT_LT(0, failed) TH_LOG("fault injection never failed the mmap()");
		if (!pmus[c].overwrite)
			EXPECT_LT(0, absorbed)
				TH_LOG("no failure was absorbed by the fallback");
	}
	expect_baseline(&self->c);
}

/*
 * An AUX member's reference on its group leader, when its open fails.
 *
 * perf_event_open() of an event that uses its leader's AUX area (an
 * aux_output event, an AUX sampler, an aux_pause/aux_resume event) takes
 * a reference on the leader in perf_get_aux_event().  The leader drops it
 * when the member leaves the group; a member whose open fails after that
 * point never joined the group, so the failure path must drop it itself.
 * With fault injection, fail the 1st, 2nd, ... allocation or user copy
 * of each member's open until one runs through without reaching the
 * armed failure; every open must fail with ENOMEM or EFAULT or succeed,
 * and once the leader is closed too no ptsim event may be left alive
 * (debugfs ptsim/events).
 *
 * Without the fix "perf/core: Drop the AUX event reference when
 * perf_event_open() fails", on the debug kernel: "leaked: ptsim_events
 * 0 -> 6", two leaders for each kind (the failure points after
 * perf_get_aux_event() are anon_inode_getfile()'s allocations, its
 * dentry and its file: read in the code, not traced).  The leaked
 * leaders are per-task events of an exclusive PMU, so ptsim's exclusive
 * count stays and every later per-CPU ptsim event fails with EBUSY:
 * ptsim_flush_test and ptsim_test's per_cpu failed after it in that
 * boot.  make fuzz found it first: kmemleak reported ptsim events,
 * never freed, after ptsim_fuzz's faults phase.
 */
TEST_F_TIMEOUT(fault_injection, aux_member_open_injected, 300)
{
	struct perf_event_attr clock = {
		.size = sizeof(clock),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = 1000000,
		.disabled = 1,
	};
	struct perf_event_attr members[3];
	static const char * const names[] = {
		"aux_sample_size", "aux_pause", "aux_output",
	};
	int fd, mfd, nth, bad, failed, err;
	unsigned int k, kinds = 2;
	bool fired;

	members[0] = clock;
	members[0].sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_AUX;
	members[0].aux_sample_size = 4096;
	members[1] = clock;
	members[1].aux_pause = 1;
	if (pmu_type("ptsim_mark") >= 0) {
		memset(&members[2], 0, sizeof(members[2]));
		members[2].size = sizeof(members[2]);
		members[2].type = pmu_type("ptsim_mark");
		members[2].sample_period = 16;
		members[2].aux_output = 1;
		members[2].disabled = 1;
		kinds = 3;
	}

	for (k = 0; k < kinds; k++) {
		bad = 0;
		failed = 0;
		for (nth = 1; nth < 1000; nth++) {
			fd = open_on(0, -1);
			ASSERT_LE(0, fd) TH_LOG("ptsim: %s", strerror(errno));
			ASSERT_EQ(0, fi_nth_arm(self->c.nfd, nth));
			mfd = perf_open(&members[k], 0, -1, fd);
			err = errno;
			fired = fi_nth_fired(self->c.nfd);
			if (mfd < 0) {
				failed++;
				if (err != ENOMEM && err != EFAULT) {
					bad++;
					TH_LOG("%s, failure %d: %s", names[k], nth,
					       strerror(err));
				}
			} else {
				close(mfd);
			}
			close(fd);
			if (!fired) {
				/* Past the last failure point: it must work. */
				EXPECT_LE(0, mfd)
					TH_LOG("%s: %s", names[k], strerror(err));
				break;
			}
		}
		TH_LOG("%s: %d failure points, %d failed the open", names[k],
		       nth - 1, failed);
		EXPECT_EQ(0, bad);
		EXPECT_LT(0, failed) TH_LOG("fault injection never failed the open");
	}
	expect_baseline(&self->c);
}

/*
 * An AUX member of an exclusive PMU, refused with EBUSY: its reference
 * on the leader.
 *
 * ptsim is exclusive (PERF_PMU_CAP_EXCLUSIVE, as intel_pt is): one event
 * per context, and per-task and per-CPU events never at once.  A second
 * ptsim event opened into a ptsim leader's group with aux_sample_size,
 * aux_pause or aux_resume takes a reference on the leader in
 * perf_get_aux_event(), then fails the exclusive check with EBUSY.  The
 * open must fail with EBUSY, and take nothing with it: once the leader
 * is closed, no ptsim event is alive, and an event of the other kind
 * (per-CPU after a per-task leader, per-task after a per-CPU one) opens.
 * No fault injection, so it runs on every kernel; the per-task form is
 * also run as nobody at perf_event_paranoid 2, since that is all it
 * takes.
 *
 * Without aux_member_open_injected's fix the leader is never freed
 * after its close(): the leak check reports "ptsim_events 0 -> 1" after
 * the first open, and with it the PMU's exclusive count stays, so the
 * per-CPU open that follows fails with EBUSY (after a per-task leader:
 * until the next boot, for every user).  Seen 2026-11-25 on the upstream
 * kernel with that fix reverted: "ptsim_events 0 -> 1", "-> 2", "-> 3"
 * for the three kinds, each followed by "a per-CPU ptsim event after the
 * ... member: Device or resource busy", then the per-CPU leader itself
 * EBUSY; a second run in the same boot started from 3 and left 6.
 */
enum member_kind { MEMBER_SAMPLER, MEMBER_PAUSE, MEMBER_RESUME, MEMBER_KINDS };

static const char * const member_kind_name[] = {
	"aux_sample_size", "aux_pause", "aux_resume",
};

static void exclusive_member_attr(struct perf_event_attr *attr,
				  enum member_kind kind)
{
	ptsim_attr(attr, 0);
	switch (kind) {
	case MEMBER_SAMPLER:
		attr->sample_type |= PERF_SAMPLE_AUX;
		attr->aux_sample_size = 4096;
		break;
	case MEMBER_PAUSE:
		attr->aux_pause = 1;
		break;
	default:
		attr->aux_resume = 1;
		break;
	}
}

/*
 * Open a ptsim leader (per-task if @cpu is -1, else on @cpu) and the
 * @kind member into its group, close both; the member's errno, 0 if it
 * opened, -1 if the leader did not.
 */
static int exclusive_member_open(enum member_kind kind, int cpu)
{
	struct perf_event_attr member;
	pid_t pid = cpu < 0 ? 0 : -1;
	int fd, mfd, err;

	exclusive_member_attr(&member, kind);
	fd = open_on(pid, cpu);
	if (fd < 0)
		return -1;
	mfd = perf_open(&member, pid, cpu, fd);
	err = mfd < 0 ? errno : 0;
	if (mfd >= 0)
		close(mfd);
	close(fd);
	return err;
}

TEST_F_TIMEOUT(cve, aux_member_exclusive_busy, 60)
{
	long old_paranoid;
	char why[512];
	struct acct now;
	int kind, form, err, fd, p[2], status;
	pid_t pid;

	for (form = 0; form < 2; form++) {
		/* form 0: a per-task leader; form 1: a per-CPU one, on CPU 0. */
		int cpu = form ? online_cpu(0) : -1;

		for (kind = 0; kind < MEMBER_KINDS; kind++) {
			err = exclusive_member_open(kind, cpu);
			ASSERT_LE(0, err) TH_LOG("ptsim leader: %s", strerror(errno));
			EXPECT_EQ(EBUSY, err)
				TH_LOG("%s member of a %s leader: %s",
				       member_kind_name[kind],
				       form ? "per-CPU" : "per-task",
				       err ? strerror(err) : "opened");
			EXPECT_EQ(0, acct_settle(&self->c.base, &now, why, sizeof(why)))
				TH_LOG("%s member of a %s leader: leaked: %s",
				       member_kind_name[kind],
				       form ? "per-CPU" : "per-task", why);
			/* The other kind of event: refused while a leader lives. */
			fd = form ? open_on(0, -1) : open_on(-1, online_cpu(0));
			EXPECT_LE(0, fd)
				TH_LOG("a %s ptsim event after the %s member: %s",
				       form ? "per-task" : "per-CPU",
				       member_kind_name[kind], strerror(errno));
			if (fd >= 0)
				close(fd);
		}
	}

	/* The same as nobody, which may trace itself at paranoid 2. */
	old_paranoid = read_long(PARANOID_SYSCTL);
	ASSERT_NE(LONG_MIN, old_paranoid);
	if (old_paranoid > 2 || old_paranoid < 0)
		ASSERT_EQ(0, write_long(PARANOID_SYSCTL, 2));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	if (!pid) {
		close(p[0]);
		if (setgid(65534) || setuid(65534))
			err = -2;
		else
			err = exclusive_member_open(MEMBER_PAUSE, -1);
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	close(p[1]);
	err = -3;
	EXPECT_EQ(sizeof(err), read(p[0], &err, sizeof(err)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, write_long(PARANOID_SYSCTL, old_paranoid));
	ASSERT_NE(-2, err) TH_LOG("cannot become nobody");
	ASSERT_NE(-1, err) TH_LOG("nobody cannot open a per-task ptsim event");
	EXPECT_EQ(EBUSY, err)
		TH_LOG("nobody's aux_pause member: %s",
		       err ? strerror(err) : "opened");
	fd = open_on(-1, online_cpu(0));
	EXPECT_LE(0, fd)
		TH_LOG("a per-CPU ptsim event after nobody's member: %s",
		       strerror(errno));
	if (fd >= 0)
		close(fd);
	expect_baseline(&self->c);
}

/*
 * An AUX area mapped by another user than its buffer: charged to and
 * uncharged from the user who maps it.
 *
 * Root opens a ptsim event and maps its data area (root is the buffer's
 * user).  A child, as nobody (no CAP_IPC_LOCK, RLIMIT_MEMLOCK 0, so
 * nothing may go to its VmPin), maps and unmaps the AUX area through the
 * inherited descriptor, four times.  perf_event_mlock_kb gives each user
 * room for one AUX area and not two, so nobody's maps succeed only if
 * each munmap() gives nobody back what its mmap() took.  Afterwards
 * root's own perf_mlock must be back where it was (the fixture's check).
 *
 * Without "perf/core: Uncharge an AUX area from the user who mapped it",
 * 6.12 charges the AUX pages to nobody (the mapping user) and uncharges
 * them from root (rb->mmap_user): nobody's second mmap() fails ("nobody's
 * AUX mmap() of 8 pages: Operation not permitted"), and root's
 * perf_mlock no longer reads as before ("leaked: perf_mlock 0 -> 512";
 * seen 2026-11-25 on the upstream kernel with this fix reverted, and
 * those of aux_map_dofork, aux_member_open_injected and ptsim_test's
 * full_buffer_disables).
 */
TEST_F_TIMEOUT(cve, aux_map_by_another_user, 60)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN), per_cpu, old_paranoid;
	struct perf_event_mmap_page *pg;
	__u64 aux_pages = 8, aux_off, aux_size;
	int fd, p[2], status, mapped = -1;
	pid_t pid;

	/* One AUX area fits in a user's allowance, two do not. */
	while (aux_pages < (__u64)ncpus)
		aux_pages *= 2;
	per_cpu = (aux_pages + ncpus - 1) / ncpus;
	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, per_cpu * self->c.psz / 1024));
	old_paranoid = read_long(PARANOID_SYSCTL);
	ASSERT_NE(LONG_MIN, old_paranoid);
	if (old_paranoid > 2 || old_paranoid < 0)
		ASSERT_EQ(0, write_long(PARANOID_SYSCTL, 2));

	fd = open_on(0, -1);
	ASSERT_LE(0, fd) TH_LOG("ptsim: %s", strerror(errno));
	aux_off = 2 * self->c.psz;
	aux_size = aux_pages * self->c.psz;
	pg = map_data(fd, self->c.psz, 1, aux_off, aux_size);
	ASSERT_NE(NULL, pg) TH_LOG("data area: %s", strerror(errno));

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	if (!pid) {
		struct rlimit none = { 0, 0 };
		void *aux;

		/* The data area is not copied (VM_DONTCOPY): pg is not here. */
		close(p[0]);
		mapped = -2;
		if (!setrlimit(RLIMIT_MEMLOCK, &none) && !setgid(65534) &&
		    !setuid(65534)) {
			for (mapped = 0; mapped < 4; mapped++) {
				aux = map_aux(fd, aux_off, aux_size);
				if (aux == MAP_FAILED)
					break;
				munmap(aux, aux_size);
			}
			if (mapped < 4)
				mapped = -100 - errno;
		}
		if (write(p[1], &mapped, sizeof(mapped)) != sizeof(mapped))
			_exit(1);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	close(p[1]);
	EXPECT_EQ(sizeof(mapped), read(p[0], &mapped, sizeof(mapped)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, write_long(PARANOID_SYSCTL, old_paranoid));
	ASSERT_NE(-2, mapped) TH_LOG("cannot become nobody");
	EXPECT_EQ(4, mapped)
		TH_LOG("nobody's AUX mmap() of %llu pages: %s", aux_pages,
		       mapped <= -100 ? strerror(-100 - mapped) : "no result");
	munmap(pg, 2 * self->c.psz);
	close(fd);
	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, 0));
	expect_baseline(&self->c);
}

/*
 * A perf mapping that fork() copies after MADV_DOFORK: uncharged from
 * the mm that was charged, whoever unmaps it last.
 *
 * perf_mmap() sets VM_DONTCOPY because pinned memory is accounted per
 * mm, but MADV_DOFORK clears it.  Here this process maps a ptsim
 * buffer's data and AUX areas (all to VmPin: the fixture's
 * perf_event_mlock_kb is 0), marks one of them MADV_DOFORK, forks a
 * child that holds the copy, unmaps both areas, and only then lets the
 * child exit: the child's exit is the last munmap() of that area.  This
 * process's VmPin must then be back at its baseline.
 *
 * Since b709eb872e19 (6.14) a perf mapping is VM_PFNMAP, which
 * MADV_DOFORK refuses (VM_SPECIAL): there the madvise() must fail with
 * EINVAL exactly and change nothing (VmPin and the perf mappings as they
 * were), and the rest runs as well: the child then holds no copy, and
 * this process's munmap() must give everything back.  Any other errno,
 * or a leak, fails.  The uncharge this case was written for is reached
 * on 7.x through a shared descriptor instead: passed_fd.*.pinned_mm_uncharge.
 *
 * Without "perf/core: Uncharge pinned pages from the mm they were charged
 * to", 6.12 uncharges the mm of whoever unmaps last (the child's): this
 * process keeps the pages in VmPin for as long as it lives, and under an
 * RLIMIT_MEMLOCK that fits one buffer it can never map one again.  Seen
 * 2026-11-25 on the upstream kernel with this fix reverted, and those of
 * aux_map_by_another_user, aux_member_open_injected and ptsim_test's
 * full_buffer_disables: "leaked: vm_pin 0 -> 10" after the AUX round (its
 * 8 pages, and the data area's 2: the child's copy held the buffer's
 * last mapping too), "0 -> 12" after the data round.
 */
TEST_F_TIMEOUT(cve, aux_map_dofork, 60)
{
	static const char * const area_name[] = { "AUX", "data" };
	struct perf_event_mmap_page *pg;
	__u64 aux_pages = 8;
	void *aux, *copied;
	int fd, area, status, refused = 0;
	pid_t pid;

	for (area = 0; area < 2; area++) {
		fd = open_on(0, -1);
		ASSERT_LE(0, fd) TH_LOG("ptsim: %s", strerror(errno));
		pg = map_data(fd, self->c.psz, 1, 2 * self->c.psz, aux_pages * self->c.psz);
		ASSERT_NE(NULL, pg) TH_LOG("data area: %s", strerror(errno));
		aux = map_aux(fd, pg->aux_offset, pg->aux_size);
		ASSERT_NE(MAP_FAILED, aux) TH_LOG("AUX area: %s", strerror(errno));
		copied = area ? (void *)pg : aux;
		errno = 0;
		if (madvise(copied, area ? 2 * self->c.psz : pg->aux_size,
			    MADV_DOFORK)) {
			/* 7.x: refused, and nothing else may have changed. */
			ASSERT_EQ(EINVAL, errno)
				TH_LOG("MADV_DOFORK on the %s area: %s, want success or EINVAL",
				       area_name[area], strerror(errno));
			EXPECT_EQ((long)(2 + aux_pages), vm_pin_pages());
			EXPECT_EQ(2, count_perf_maps());
			refused++;
		}
		pid = spawn_idle();
		ASSERT_LT(0, pid);
		self->c.kids[0] = pid;
		munmap(aux, pg->aux_size);
		munmap(pg, 2 * self->c.psz);
		close(fd);
		/* The child's exit unmaps the area last. */
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		self->c.kids[0] = 0;
		expect_baseline(&self->c);
	}
	if (refused)
		TH_LOG("MADV_DOFORK refused (EINVAL) on %d of 2 areas: no copy to unmap last",
		       refused);
}

/*
 * Pinned pages uncharged from the mm they were charged to, when another
 * process maps the same buffer through a descriptor it shares and unmaps
 * it last: the trigger of aux_map_dofork's bug that 7.x still has
 * (MADV_DOFORK is refused there).
 *
 * With perf_event_mlock_kb at 0 (the fixture's; put back at its end) the
 * first mmap() of an area charges all its pages to the mapping mm's
 * pinned_vm (rb->mmap_locked, rb->aux_mmap_locked).  This process (A)
 * opens the event, forks the peer (B), which so holds the descriptor,
 * then maps the area and checks that its own VmPin took every page.  B
 * maps the same area through its copy of the descriptor; A unmaps it
 * first, B last.  The uncharge at B's munmap() must come off the mm that
 * was charged, A's: A's VmPin must then be what it was before A mapped
 * the area, and B's after its munmap() between what it was before its
 * mmap() and after it (an uncharge from B's mm takes it below zero:
 * vm_pin_pages() reads VmPin signed).
 * Variant data_area: the data area of a software (dummy) event, the
 * buffer alone (ptsim only for the fixture's leak check); variant
 * aux_area: a ptsim event's AUX area, with A's data area mapped
 * throughout (unmapped, and checked, at the end).
 *
 * Only VmPin is asserted, A's before against A's after: what B's
 * repeated mmap() charges is left out (on 7.x it charges the user's
 * perf_mlock again, a separate bug), and so the leak check at the end
 * leaves perf_mlock out too; everything else it checks.
 *
 * Without "perf/core: Uncharge pinned pages from the mm they were charged
 * to" (on 6.12 and on 7.x), B's munmap() uncharges B's mm (vma->vm_mm):
 * A's VmPin keeps every page of the area for as long as A lives, and
 * B's goes below zero.  Seen 2026-11-29 on upstream-7.3 with that fix
 * dropped from its series: "B's VmPin -5 after its munmap(), 0 before
 * its mmap()", "A's VmPin kept the data area's pages after B's
 * munmap()" (A's 5, want 0) and "leaked: vm_pin 0 -> 5" (data_area);
 * B's -8, A's 13 (want 5) and "leaked: vm_pin 0 -> 8" (aux_area); the
 * same figures on upstream (6.12) with the fix reverted.
 */
FIXTURE(passed_fd) { struct cve c; };
FIXTURE_VARIANT(passed_fd) {
	bool aux;		/* a ptsim event's AUX area, else a dummy's data area */
};

FIXTURE_VARIANT_ADD(passed_fd, data_area) { .aux = false };
FIXTURE_VARIANT_ADD(passed_fd, aux_area) { .aux = true };
FIXTURE_SETUP(passed_fd)
{
	cve_begin(_metadata, &self->c, 0);
}

FIXTURE_TEARDOWN(passed_fd)
{
	cve_end(&self->c);
}

TEST_F_TIMEOUT(passed_fd, pinned_mm_uncharge, 60)
{
	const int data_pages = 4, aux_pages = 8;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz, alen = aux_pages * psz;
	long pin0, pin_data, b0, b_mapped, len = variant->aux ? alen : dlen;
	__u64 off = variant->aux ? dlen : 0;
	const char *what = variant->aux ? "AUX" : "data";
	struct perf_event_mmap_page *pg;
	void *mine, *b;
	struct peer *pr;
	int fd;

	fd = variant->aux ? open_on(0, -1) : dummy_open();
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
	/* B: forked now, it holds the descriptor. */
	pr = peer_start();
	ASSERT_NE(NULL, pr);
	self->c.peer = pr;
	ASSERT_TRUE(peer_run(pr, PEER_NOP, -1, 0, 0, NULL));
	b0 = pr->vm_pin;

	pin0 = vm_pin_pages();
	pg = map_data(fd, psz, data_pages, variant->aux ? dlen : 0,
		      variant->aux ? alen : 0);
	ASSERT_NE(NULL, pg) TH_LOG("data mmap: %s", strerror(errno));
	pin_data = vm_pin_pages();
	ASSERT_EQ(pin0 + 1 + data_pages, pin_data)
		TH_LOG("the data area is not all charged to this mm");
	mine = pg;
	if (variant->aux) {
		mine = map_aux(fd, off, alen);
		ASSERT_NE(MAP_FAILED, mine) TH_LOG("AUX mmap: %s", strerror(errno));
		ASSERT_EQ(pin_data + aux_pages, vm_pin_pages())
			TH_LOG("the AUX area is not all charged to this mm");
	}

	/* B maps the same area through its descriptor. */
	ASSERT_TRUE(peer_run(pr, PEER_MMAP, fd, off, len, NULL));
	ASSERT_EQ(0, pr->err) TH_LOG("%s mmap in B: %s", what, strerror(pr->err));
	b = pr->addr;
	b_mapped = pr->vm_pin;

	/* A unmaps first, B last: B's munmap() uncharges the area. */
	ASSERT_EQ(0, munmap(mine, len));
	ASSERT_TRUE(peer_run(pr, PEER_MUNMAP, -1, 0, len, b));
	EXPECT_EQ(0, pr->err) TH_LOG("%s munmap in B: %s", what, strerror(pr->err));
	EXPECT_LE(b0, pr->vm_pin)
		TH_LOG("B's VmPin %ld after its munmap(), %ld before its mmap(): %s",
		       pr->vm_pin, b0, "uncharged from B's mm");
	EXPECT_LE(pr->vm_pin, b_mapped)
		TH_LOG("B's VmPin %ld after its munmap(), %ld after its mmap()",
		       pr->vm_pin, b_mapped);
	EXPECT_EQ(variant->aux ? pin_data : pin0, vm_pin_pages())
		TH_LOG("A's VmPin kept the %s area's pages after B's munmap()", what);

	if (variant->aux) {
		ASSERT_EQ(0, munmap(pg, dlen));
		EXPECT_EQ(pin0, vm_pin_pages());
	}
	close(fd);
	peer_stop(pr);
	self->c.peer = NULL;
	/* See above: perf_mlock is not this case's to judge. */
	self->c.base.perf_mlock = -1;
	expect_baseline(&self->c);
}

/*
 * The same for the inherited form: fork() of a task whose ptsim leader
 * and AUX sampler are inherited, with its 1st, 2nd, ... allocation
 * failed.  Each child copy of the sampler takes a reference on the
 * child copy of the leader (perf_get_aux_event() in inherit_group());
 * a fork() that fails after that must free both copies.  Every fork()
 * must fail with ENOMEM or succeed, and no ptsim event may be left
 * alive once the child is reaped and the group closed.
 */
TEST_F_TIMEOUT(fault_injection, aux_member_fork_injected, 300)
{
	struct perf_event_attr leader, sampler = {
		.size = sizeof(sampler),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = 1000000,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_AUX,
		.aux_sample_size = 4096,
		.inherit = 1,
		.disabled = 1,
	};
	int fd, sfd, nth, bad = 0, failed = 0, err, status;
	cpu_set_t cpus;
	bool fired;
	pid_t pid;

	ptsim_attr(&leader, 0);
	leader.inherit = 1;
	fd = perf_open(&leader, 0, -1, -1);
	ASSERT_LE(0, fd) TH_LOG("ptsim: %s", strerror(errno));
	sfd = perf_open(&sampler, 0, -1, fd);
	ASSERT_LE(0, sfd) TH_LOG("sampler: %s", strerror(errno));

	/*
	 * fork() takes the child's stack from a per-CPU cache of freed
	 * stacks, else it vmalloc()s one, and a vmalloc() that an injected
	 * failure fails prints a stack dump (warn_alloc(): no __GFP_NOWARN
	 * there), which the harness counts as a splat (seen on the upstream
	 * coverage kernel).  On one CPU, each child's stack goes back to that
	 * CPU's cache when the child has exited, before it is reaped, so the
	 * next fork() finds it there; a first child fills the cache.
	 */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, pin_to(online_cpu(0)));
	pid = fork();
	if (!pid)
		_exit(0);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	for (nth = 1; nth < 5000; nth++) {
		ASSERT_EQ(0, fi_nth_arm(self->c.nfd, nth));
		pid = fork();
		err = errno;
		if (!pid)
			_exit(0);
		fired = fi_nth_fired(self->c.nfd);
		if (pid < 0) {
			failed++;
			if (err != ENOMEM) {
				bad++;
				TH_LOG("fork, failure %d: %s", nth, strerror(err));
			}
		} else {
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
		}
		if (!fired) {
			EXPECT_LT(0, pid) TH_LOG("fork: %s", strerror(err));
			break;
		}
	}
	sched_setaffinity(0, sizeof(cpus), &cpus);
	TH_LOG("fork: %d failure points, %d failed the fork()", nth - 1, failed);
	EXPECT_EQ(0, bad);
	EXPECT_LT(0, failed) TH_LOG("fault injection never failed the fork()");
	close(sfd);
	close(fd);
	expect_baseline(&self->c);
}

/*
 * CVE-2026-23248: a dependent mmap() picking up a dying buffer.
 *
 * F's output goes to E's buffer.  Each round, this process unmaps E's
 * data area, the buffer's only mapping, while a child maps through F:
 * its AUX area, or its data area.  The last munmap() of a buffer detaches every
 * event from it; a mapping that races with it must either get the buffer
 * before it dies (and keep it alive), or fail (EINVAL for the AUX area,
 * which needs a buffer), or, for the data area, get a new buffer.  Never
 * a mapping of a buffer that is being torn down.  Since d06bf78e55d5 a
 * data mmap() through F that finds E's buffer still alive is refused
 * with EBUSY (F's output goes to a buffer it did not map), and where the
 * kernel refuses an AUX mmap() through an event without a mapping of its
 * own too ("perf/core: Refuse an AUX mmap() through an event without a
 * mapping"; aux_shared_refused()), so is the AUX one.  Such an EBUSY is
 * counted as a round in which the peer's mmap() ran: whatever F's mmap()
 * got, the round is judged as before (VmPin back to 0, F's output
 * cleared).
 *
 * With the fix reverted (the AUX branch of perf_mmap() taking its
 * reference on the buffer unconditionally instead of only while it is
 * still mapped), the AUX mmap() through F can succeed on a buffer whose
 * last munmap() has already decided to tear it down: the buffer is then
 * detached from F under the new mapping, its data pages are uncharged
 * although the AUX mapping still counts on it, and the AUX munmap() finds
 * no buffer on F (a NULL dereference in perf_mmap_close()): the child
 * dies in an oops, or VmPin does not come back to 0.
 *
 * Seen 2026-11-23 on the upstream kernel with atomic_inc_not_zero()
 * replaced by atomic_inc() there: "BUG: kernel NULL pointer dereference"
 * in perf_mmap_close() on the console, and the test failed ("Test
 * terminated by timeout").
 */
TEST_F_TIMEOUT(cve, dying_buffer_dependent_mmap, 60)
{
	const int data_pages = 4, aux_pages = 16;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	int fe, ff, rounds = 0, bad = 0, busy = 0, won[2] = { 0, 0 };
	struct peer *pr;
	long elsewhere;
	bool refused;
	double end;

	refused = aux_shared_refused();
	open_e_f(_metadata, &self->c, &fe, &ff);
	pr = peer_start();
	ASSERT_NE(NULL, pr);
	self->c.peer = pr;

	end = now_s() + RACE_SECONDS;
	while (rounds < 400 && (rounds < RACE_MIN_ROUNDS || now_s() < end) && !bad) {
		bool aux = rounds & 1;
		struct perf_event_mmap_page *pe = map_data(fe, psz, data_pages, dlen,
							   aux_pages * psz);
		__u64 off = aux ? dlen : 0, len = aux ? aux_pages * psz : dlen;
		int r, err;
		long pin;

		ASSERT_NE(NULL, pe);
		ASSERT_EQ(0, ioctl(ff, PERF_EVENT_IOC_SET_OUTPUT, fe))
			TH_LOG("round %d: SET_OUTPUT: %s", rounds, strerror(errno));
		/* The peer maps through F while this process unmaps E. */
		peer_post(pr, PEER_MMAP, ff, off, len, NULL);
		peer_go(pr);
		r = munmap(pe, dlen);
		err = errno;
		ASSERT_TRUE(peer_wait(pr)) TH_LOG("round %d: the peer died", rounds);
		rounds++;
		if (r) {
			bad++;
			TH_LOG("round %d: munmap: %s", rounds, strerror(err));
		}
		if (pr->addr == MAP_FAILED) {
			if (pr->err == EBUSY && (!aux || refused)) {
				busy++;
			} else if (!aux || pr->err != EINVAL) {
				bad++;
				TH_LOG("round %d: %s mmap through F: %s", rounds,
				       aux ? "AUX" : "data", strerror(pr->err));
			}
		} else {
			won[aux]++;
			ASSERT_TRUE(peer_run(pr, PEER_MUNMAP, -1, 0, len, pr->addr))
				TH_LOG("round %d: the peer died unmapping", rounds);
			if (pr->err) {
				bad++;
				TH_LOG("round %d: the peer's munmap: %s", rounds,
				       strerror(pr->err));
			}
		}
		ASSERT_TRUE(peer_run(pr, PEER_NOP, -1, 0, 0, NULL));
		pin = vm_pin_pages() + pr->vm_pin;
		if (pin) {
			bad++;
			TH_LOG("round %d: VmPin %ld pages in all at the end of the round, want 0",
			       rounds, pin);
		}
		/* F is detached from whatever buffer it had. */
		if (ioctl(ff, PERF_EVENT_IOC_SET_OUTPUT, -1L)) {
			bad++;
			TH_LOG("round %d: clearing F's output: %s", rounds,
			       strerror(errno));
		}
	}
	TH_LOG("%d rounds; F's mmap won the race %d times (data) and %d times (AUX)",
	       rounds, won[0], won[1]);
	TH_LOG("F's mmap was refused an alias (EBUSY) %d times", busy);
	EXPECT_EQ(0, bad);
	EXPECT_LE(RACE_MIN_ROUNDS, rounds);
	/*
	 * Which side wins depends on scheduling alone, so no share of
	 * wins is asserted; but the peer's mmap() ran in every round, and
	 * a data one can only succeed (or, since d06bf78e55d5, be refused
	 * the alias of a live buffer, EBUSY), so a round without it is
	 * "bad".
	 */
	EXPECT_LE(RACE_MIN_ROUNDS / 2, won[0] + won[1] + busy);
	close(ff);
	close(fe);
	ASSERT_TRUE(peer_run(pr, PEER_NOP, -1, 0, 0, NULL));
	elsewhere = pr->vm_pin;
	peer_stop(pr);
	self->c.peer = NULL;
	expect_baseline_with(_metadata, &self->c, elsewhere);
}

/* ---- page faults against the AUX area's allocation and teardown ---- */

struct toucher {
	pthread_t th;
	int stop;
	struct perf_event_mmap_page *pg;
	long psz, dlen;
	__u64 aux_offset;
	long touches, bad;
	__u64 seen[3];		/* the first bad user page: data_offset, data_size, aux_offset */
};

/*
 * Zap the data mapping's pages and fault them back in, over and over.
 * Every fault must map the buffer's own user page and data pages: the
 * user page describes the data area and holds aux_offset as the test set
 * it; the data area holds nothing (the event is never enabled).
 */
static void touch_data(struct toucher *t)
{
	char *d = (char *)t->pg + t->psz;
	__u64 v[3];
	long i;

	madvise(t->pg, t->dlen, MADV_DONTNEED);
	v[0] = peek64(&t->pg->data_offset);
	v[1] = peek64(&t->pg->data_size);
	v[2] = peek64(&t->pg->aux_offset);
	if (v[0] != (__u64)t->psz || v[1] != (__u64)(t->dlen - t->psz) ||
	    v[2] != t->aux_offset) {
		if (!t->bad++)
			memcpy(t->seen, v, sizeof(v));
	}
	for (i = 0; i < t->dlen - t->psz; i += t->psz)
		if (peek(d + i))
			t->bad++;
	t->touches++;
}

static void *toucher_main(void *p)
{
	struct toucher *t = p;

	while (!LOAD(t->stop))
		touch_data(t);
	return NULL;
}

/*
 * CVE-2026-64300: mapping a page freed by a racing AUX allocation.
 *
 * The page-fault handler of a perf mapping finds the page by its offset
 * in the event's buffer.  While the buffer's first AUX area is being
 * allocated, some of its pages already exist but the area's offset is
 * not set yet, and the last munmap() or a failed allocation frees them.
 * A fault on any mapping of the buffer must never map an AUX page that
 * way: not into the data mapping, and never one that is freed.
 *
 * Each round makes a new buffer (data area 1 + 4 pages) and allocates
 * its first AUX area (512 pages, which takes a while) in the parent,
 * while a thread of the parent and a child process that maps the same
 * buffer through the inherited descriptor zap their data mappings and
 * fault them in again.  Each fault is checked: the user page must still
 * describe the data area (an AUX page reads as zeros), the data pages
 * must read as zeros (the event is never enabled).
 *
 * On a kernel where the fault handler looks AUX pages up while the
 * allocation is under way (perf_mmap_to_page() trusting aux_nr_pages
 * before aux_pgoff is set), a data fault maps an AUX page: the user page
 * reads zeros and the test fails; if that allocation then fails or the
 * area is unmapped, the page is freed while mapped, which the debug
 * kernel reports as a bad page state or a use-after-free.
 *
 * Seen 2026-11-23 on the upstream kernel with "perf/aux: Set the AUX
 * area's offset before its pages can be found" reversed (which is
 * upstream 6.12 as released): "round 1: 0 bad faults in the parent,
 * 207 in the child", and the test failed in its first round.
 */
TEST_F_TIMEOUT(cve, aux_alloc_vs_fault, 120)
{
	const int data_pages = 4, aux_pages = 512;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	struct {
		int round, ready, done, ack;
		long touches, bad;
		__u64 seen[3];
	} *sh;
	struct toucher t;
	int fd, rounds = 0, bad = 0;
	long touched = 0;
	double end;
	pid_t kid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset((void *)sh, 0, sizeof(*sh));
	fd = open_on(0, -1);
	ASSERT_LE(0, fd);

	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		struct toucher k = { .psz = psz, .dlen = dlen, .aux_offset = dlen };
		int r;

		for (r = 1; ; r++) {
			while (LOAD(sh->round) != r)
				if (LOAD(sh->round) < 0)
					_exit(0);
			k.pg = map_data(fd, psz, data_pages, 0, 0);
			if (!k.pg)
				_exit(1);
			STORE(sh->ready, r);
			while (LOAD(sh->done) != r)
				touch_data(&k);
			munmap(k.pg, dlen);
			sh->touches = k.touches;
			sh->bad = k.bad;
			memcpy(sh->seen, k.seen, sizeof(k.seen));
			STORE(sh->ack, r);
		}
	}
	self->c.kids[0] = kid;

	end = now_s() + RACE_SECONDS;
	while (rounds < 100 && (rounds < RACE_MIN_ROUNDS || now_s() < end)) {
		struct perf_event_mmap_page *pg = map_data(fd, psz, data_pages, dlen,
							   aux_pages * psz);
		void *aux;
		int r = ++rounds;

		ASSERT_NE(NULL, pg);
		STORE(sh->round, r);
		while (LOAD(sh->ready) != r)
			;
		memset(&t, 0, sizeof(t));
		t.pg = pg;
		t.psz = psz;
		t.dlen = dlen;
		t.aux_offset = dlen;
		ASSERT_EQ(0, pthread_create(&t.th, NULL, toucher_main, &t));
		aux = map_aux(fd, pg->aux_offset, pg->aux_size);
		if (aux == MAP_FAILED) {
			bad++;
			TH_LOG("round %d: AUX mmap: %s", r, strerror(errno));
		} else {
			munmap(aux, pg->aux_size);
		}
		STORE(t.stop, 1);
		pthread_join(t.th, NULL);
		STORE(sh->done, r);
		while (LOAD(sh->ack) != r)
			;
		touched += t.touches + sh->touches;
		if (t.bad || sh->bad) {
			__u64 *v = t.bad ? t.seen : sh->seen;

			bad++;
			TH_LOG("round %d: %ld bad faults in the parent, %ld in the child",
			       r, t.bad, sh->bad);
			TH_LOG("first: data_offset %llu size %llu aux %llu, not %ld %ld %ld",
			       (unsigned long long)v[0], (unsigned long long)v[1],
			       (unsigned long long)v[2], psz, dlen - psz, dlen);
		}
		munmap(pg, dlen);
		if (vm_pin_pages()) {
			bad++;
			TH_LOG("round %d: VmPin %ld, want 0", r, vm_pin_pages());
		}
		if (bad)
			break;
	}
	STORE(sh->round, -1);
	waitpid(kid, NULL, 0);
	self->c.kids[0] = 0;
	TH_LOG("%d rounds, %ld + %ld faults checked in the last one, %ld in all",
	       rounds, t.touches, sh->touches, touched);
	EXPECT_EQ(0, bad);
	EXPECT_LE(RACE_MIN_ROUNDS, rounds);
	EXPECT_LT(0, touched) TH_LOG("no fault raced the allocation");
	close(fd);
	munmap((void *)sh, sizeof(*sh));
	expect_baseline(&self->c);
}

static __thread sigjmp_buf probe_jmp;
static __thread int probing;

static void probe_fault(int sig)
{
	if (LOAD(probing))
		siglongjmp(probe_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

struct reader {
	pthread_t th;
	int *stop;
	char *aux;
	long len, psz;
	long reads, holes, bad;
};

/* Read the AUX mapping page by page; a hole (being remapped) is fine. */
static void *reader_main(void *p)
{
	struct reader *r = p;
	long i;

	while (!LOAD(*r->stop)) {
		for (i = 0; i < r->len; i += r->psz) {
			if (sigsetjmp(probe_jmp, 1)) {
				STORE(probing, 0);
				r->holes++;
				continue;
			}
			STORE(probing, 1);
			if (peek(r->aux + i) || peek(r->aux + i + r->psz - 1))
				r->bad++;
			STORE(probing, 0);
			r->reads++;
		}
	}
	return NULL;
}

/* Fill freed memory with a pattern, so that a stale mapping shows it. */
static void *churn_main(void *p)
{
	int *stop = p;

	while (!LOAD(*stop)) {
		size_t len = 256 * 1024;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			continue;
		memset(m, 0xa5, len);
		munmap(m, len);
	}
	return NULL;
}

/*
 * CVE-2026-64300, the AUX mapping's side: page faults on the AUX mapping
 * racing its replacement from another thread (mmap() with MAP_FIXED over
 * it, which closes the old AUX area and allocates a new one at the same
 * address) and the zapping of its pages, while a third thread recycles
 * freed memory filled with 0xa5.  The event is never enabled, so every
 * byte read through the mapping must be zero: a fault that maps a page
 * of the area being freed, or already freed and reused, reads 0xa5 or
 * other garbage (and the debug kernel reports the use after free).
 */
TEST_F_TIMEOUT(cve, aux_fault_vs_remap, 120)
{
	const int data_pages = 4, aux_pages = 32;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	long alen = aux_pages * psz;
	struct perf_event_mmap_page *pg;
	struct reader rd[2];
	int stop = 0;
	pthread_t churn;
	int fd, i, remaps = 0, failed = 0;
	char *aux;
	double end;

	signal(SIGSEGV, probe_fault);
	signal(SIGBUS, probe_fault);
	fd = open_on(0, -1);
	ASSERT_LE(0, fd);
	pg = map_data(fd, psz, data_pages, dlen, alen);
	ASSERT_NE(NULL, pg);
	aux = map_aux(fd, dlen, alen);
	ASSERT_NE(MAP_FAILED, aux);

	for (i = 0; i < 2; i++) {
		rd[i] = (struct reader){ .stop = &stop, .aux = aux, .len = alen,
					 .psz = psz };
		ASSERT_EQ(0, pthread_create(&rd[i].th, NULL, reader_main, &rd[i]));
	}
	ASSERT_EQ(0, pthread_create(&churn, NULL, churn_main, &stop));

	end = now_s() + RACE_SECONDS;
	while (remaps < 2000 && (remaps < 5 * RACE_MIN_ROUNDS || now_s() < end)) {
		void *r = mmap(aux, alen, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED, fd, dlen);

		if (r == MAP_FAILED) {
			/* The old area is gone; map it again. */
			failed++;
			TH_LOG("MAP_FIXED remap: %s", strerror(errno));
			r = mmap(aux, alen, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED, fd, dlen);
			ASSERT_EQ((void *)aux, r);
		}
		remaps++;
		if (remaps % 4 == 0)
			madvise(aux, alen, MADV_DONTNEED);
	}
	STORE(stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(rd[i].th, NULL);
	pthread_join(churn, NULL);
	TH_LOG("%d remaps; reads %ld + %ld, holes %ld + %ld", remaps,
	       rd[0].reads, rd[1].reads, rd[0].holes, rd[1].holes);
	EXPECT_EQ(0, failed);
	EXPECT_LE(5 * RACE_MIN_ROUNDS, remaps);
	EXPECT_EQ(0, rd[0].bad + rd[1].bad) TH_LOG("stale bytes read through the AUX mapping");
	EXPECT_LT(0, rd[0].reads + rd[1].reads);
	EXPECT_EQ(1 + data_pages + aux_pages, vm_pin_pages());
	munmap(aux, alen);
	munmap(pg, dlen);
	close(fd);
	EXPECT_EQ(0, vm_pin_pages());
	expect_baseline(&self->c);
}

/*
 * AUX size and offset arithmetic beyond 32 bits.  No AUX area of 4 GiB
 * or more can be allocated on any machine, whatever its memory: 6.12
 * keeps the addresses of the area's pages in one kmalloc()ed array and
 * refuses, with ENOMEM, an area whose array would be larger than the
 * largest kmalloc() (PAGE_SIZE << MAX_PAGE_ORDER), that is above 2^19
 * pages, 2 GiB with 4 KiB pages; ours keeps that limit.  A 2 GiB area
 * does not fit in the 2 GiB guest either.  What can be checked here:
 *
 *  - aux_offset at 4 GiB and at 16 TiB, far above the data area, with a
 *    small area: accepted, and the area works;
 *  - a user page whose aux_size or aux_offset differs from the mapping's
 *    only above bit 31 (a 32-bit truncation would accept it): EINVAL;
 *  - aux_size of 4 GiB (2^20 pages, a page array above the largest
 *    kmalloc()), 8 TiB (2^31 pages, above INT_MAX) and 16 TiB (2^32
 *    pages, zero in 32 bits): ENOMEM, with nothing charged.
 *
 * Not reachable from user space at all, for KUnit on the AUX code
 * itself: a real area of 2^32 bytes or more (head, tail and watermark
 * arithmetic with a size that does not fit 32 bits; the default
 * watermark, half the size, capped at U32_MAX for areas of 8 GiB and
 * more; the page index of a fault at an offset >= 2^32 into the area).
 * Positions (aux_head, aux_tail, PERF_RECORD_AUX offsets) beyond 2^32
 * are reachable with a 2 GiB area written past its second wrap, in a
 * guest with the memory for it.
 */
TEST_F_TIMEOUT(cve, aux_size_beyond_32bit, 60)
{
	static const __u64 big[] = { 1ULL << 32, 1ULL << 43, 1ULL << 44 };
	static const __u64 far[] = { 1ULL << 32, 1ULL << 44 };
	const int data_pages = 1;
	long psz = self->c.psz, dlen = (1 + data_pages) * psz;
	struct perf_event_mmap_page *pg;
	unsigned int i;
	int fd;
	void *aux;

	fd = open_on(0, -1);
	ASSERT_LE(0, fd);
	pg = map_data(fd, psz, data_pages, 0, 0);
	ASSERT_NE(NULL, pg);

	for (i = 0; i < ARRAY_SIZE(far); i++) {
		pg->aux_offset = far[i];
		pg->aux_size = 16 * psz;
		aux = map_aux(fd, far[i], 16 * psz);
		EXPECT_NE(MAP_FAILED, aux) TH_LOG("aux_offset 0x%llx: %s",
						  (unsigned long long)far[i],
						  strerror(errno));
		if (aux == MAP_FAILED)
			continue;
		EXPECT_EQ(0, peek((char *)aux + 16 * psz - 1));
		EXPECT_EQ(1 + data_pages + 16, vm_pin_pages());
		munmap(aux, 16 * psz);
	}

	/* Differences above bit 31 only. */
	pg->aux_offset = dlen;
	pg->aux_size = (1ULL << 32) + 16 * psz;
	EXPECT_EQ(MAP_FAILED, map_aux(fd, dlen, 16 * psz));
	EXPECT_EQ(EINVAL, errno);
	pg->aux_offset = (1ULL << 32) + dlen;
	pg->aux_size = 16 * psz;
	EXPECT_EQ(MAP_FAILED, map_aux(fd, dlen, 16 * psz));
	EXPECT_EQ(EINVAL, errno);

	for (i = 0; i < ARRAY_SIZE(big); i++) {
		pg->aux_offset = dlen;
		pg->aux_size = big[i];
		errno = 0;
		aux = map_aux(fd, dlen, big[i]);
		EXPECT_EQ(MAP_FAILED, aux) TH_LOG("an AUX area of 0x%llx bytes",
						  (unsigned long long)big[i]);
		EXPECT_EQ(ENOMEM, errno) TH_LOG("size 0x%llx: %s",
						(unsigned long long)big[i],
						strerror(errno));
		if (aux != MAP_FAILED)
			munmap(aux, big[i]);
		EXPECT_EQ(1 + data_pages, vm_pin_pages());
	}
	munmap(pg, dlen);
	close(fd);
	EXPECT_EQ(0, vm_pin_pages());
	expect_baseline(&self->c);
}

/*
 * PERF_EVENT_IOC_RESET rewrites the event's user page while the CPU the
 * event belongs to may be rewriting it too.  perf_event_update_userpage()
 * must never run twice at once for one event: the page's sequence count
 * (lock) is a plain increment on each side.  6.12's _perf_event_reset()
 * calls it holding only the context's mutex, and the scheduler side
 * calls it under the context's lock whenever the event fails to go on
 * (merge_sched_in() -> group_update_userpage()), which the multiplexing
 * timer retries every perf_event_mux_interval_ms.
 *
 * Here a per-CPU ptsim event on CPU 1 has a data area but no AUX area,
 * so ptsim refuses it at every sched-in, while this thread resets it
 * from CPU 0 in a loop.  With the two writers unserialized, the KCSAN
 * kernel reports "data-race in arch_perf_update_userpage /
 * arch_perf_update_userpage" within the run (ptsim_fuzz's hotplug phase
 * found it as perf_event_update_userpage / perf_event_update_userpage,
 * on userpg->offset); any kernel may lose an increment of the count, which
 * is then odd once both sides have stopped.  The test also counts the
 * scheduler side's updates, to prove the race was run.
 */
TEST_F_TIMEOUT(two_cpus, reset_vs_sched_in, 60)
{
	struct perf_event_mmap_page *pg;
	unsigned int lock0, lock1;
	long resets = 0, updates;
	int fd, i;
	double end;

	ASSERT_EQ(0, pin_to(online_cpu(0)));
	fd = open_on(-1, online_cpu(1));
	ASSERT_LE(0, fd) TH_LOG("ptsim on CPU 1: %s", strerror(errno));
	pg = map_data(fd, self->c.psz, 1, 0, 0);
	ASSERT_NE(NULL, pg) TH_LOG("data area: %s", strerror(errno));
	lock0 = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));

	end = now_s() + RACE_SECONDS;
	while (resets < 100000 &&
	       (resets < 1000 * RACE_MIN_ROUNDS || now_s() < end)) {
		for (i = 0; i < 100; i++, resets++)
			ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_RESET, 0))
				TH_LOG("RESET: %s", strerror(errno));
	}
	/* No writer is left once the event is off. */
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	lock1 = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
	updates = (long)((lock1 - lock0) / 2) - resets;
	TH_LOG("%ld resets, %ld updates by the scheduler side", resets, updates);
	EXPECT_EQ(0u, (lock1 - lock0) % 2)
		TH_LOG("the user page's lock is odd (%u -> %u): an increment was lost",
		       lock0, lock1);
	EXPECT_LE(RACE_MIN_ROUNDS, updates)
		TH_LOG("CPU 1 retried the event too rarely to race");
	munmap(pg, 2 * self->c.psz);
	close(fd);
	expect_baseline(&self->c);
}

TEST_HARNESS_MAIN
