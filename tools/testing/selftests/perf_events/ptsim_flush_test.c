// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_EVENT_IOC_FLUSH through the ptsim PMU.
 *
 * ptsim is configured to hold data back: a 4 MiB FIFO filled with 2 KiB a
 * tick and drained with 1 KiB a tick, and no region padding, so that the
 * AUX area lags far behind what the engine produced.  The event's count is
 * the number of bytes the engine queued into its FIFO (every record, not
 * PAD).  The property under test: once FLUSH returns, the trace holds at
 * least as many non-PAD bytes as the count said before the call, with
 * every sequence number from 0 and no gap, and a PERF_RECORD_AUX ends at
 * the published aux_head.  Without FLUSH it does not.  At the end, after
 * DISABLE, the trace holds exactly the count: nothing lost, nothing twice.
 *
 * Every case runs twice: with ptsim's flush callback ("callback"), and with
 * the ptsim config bit that makes the callback decline ("generic"), so that
 * the perf core's generic path for AUX PMUs (pmu::stop, then pmu::start)
 * does the work.  The two are told apart by the trace: the generic path
 * stops and restarts the trace unit, which writes a TIP.PGD each time.
 */
#include <pthread.h>
#include "ptsim_lib.h"
#include "ptsim_harness.h"

/* 128 records (2 KiB) a 1 ms tick into a 4 MiB FIFO, 1 KiB drained. */
#define HOLD_CONFIG	(PTSIM_CFG1_RATE(128) | PTSIM_CFG1_PERIOD(1000) | \
			 PTSIM_CFG1_FIFO(22) | PTSIM_CFG1_DRAIN(1) | PTSIM_CFG1_REGION(10))
/*
 * No wrap and no TRUNCATED in a test, however slowly the guest runs: the
 * engine produces at most 2 KiB per millisecond of guest time (it never
 * catches up late ticks), and a test's rounds are timed by usleep(),
 * which a loaded host stretches.  A debug kernel on a loaded host ran a
 * 300 ms test for 1.3 s and filled 1 MiB; 16 MiB holds eight seconds
 * (per_cpu_flushes() checks the whole trace after each flush, which on
 * that kernel took 3.7 s at 2.7 MB: 8 MiB once filled in its fifth round,
 * and a FIFO held back that long overflows: so three rounds).
 */
#define AUX_PAGES	4096

/*
 * The CPUs the cases use are the online ones, by rank (online_cpu()):
 * "CPU 0" below is the first, "CPU 1" the second, whatever their ids.
 */
static int ncpus(void)
{
	return cpus_online();
}

/* The second online CPU, or the first on a machine of one. */
static int other_cpu(void)
{
	return online_cpu(ncpus() > 1 ? 1 : 0);
}

/* Trace bytes that are not PAD: what the engine queued and the DMA wrote. */
static size_t nonpad(const struct capture *s, const struct pt_check *w)
{
	return s->len - w->pad;
}

/*
 * Take what is published: the records, then the AUX data up to the head
 * read before them (a record is logged before aux_head moves past its
 * data, so every record for that data is already there); in overwrite
 * mode all of it again.  Returns the head.
 */
static __u64 take(struct capture *s)
{
	__u64 head = capture_aux_head(s), tail = s->pg->aux_tail;

	capture_read_records(s);
	if (s->snapshot) {
		/* No wrap in these tests: [0, head) is the whole trace. */
		s->len = 0;
		s->ncopies = 0;
		capture_append(s, 0, head);
		return head;
	}
	if (head != tail)
		capture_append(s, tail, head - tail);
	__atomic_store_n(&s->pg->aux_tail, head, __ATOMIC_RELEASE);
	return head;
}

/* Does a PERF_RECORD_AUX describe data up to @head? */
static bool record_ends_at(struct capture *s, __u64 head)
{
	size_t i;

	for (i = 0; i < s->nrecs; i++) {
		struct aux_rec *r = &s->recs[i];

		if (r->type != PERF_RECORD_AUX)
			continue;
		/* overwrite mode: the record's offset is the new head */
		if (s->snapshot ? r->a == head : r->a + r->b == head)
			return true;
	}
	return false;
}

/*
 * ptsim is exclusive: per-task and per-CPU events cannot coexist.  The
 * events of an earlier test or round may take a moment to go (children
 * of an inherited event exit on their own), so retry EBUSY for a second.
 */
static int open_retry(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd, i;

	for (i = 0; i < 100; i++) {
		fd = perf_open(attr, pid, cpu, -1);
		if (fd >= 0 || errno != EBUSY)
			break;
		usleep(10 * 1000);
	}
	return fd;
}

static int open_hold(struct __test_metadata *_metadata, bool noflush,
		     pid_t pid, int cpu, bool inherit)
{
	struct perf_event_attr attr;
	int fd;

	ptsim_attr(&attr, HOLD_CONFIG | (noflush ? PTSIM_CFG1_NOFLUSH : 0));
	attr.config |= PTSIM_CFG_PSB(15);
	attr.inherit = inherit;
	fd = open_retry(&attr, pid, cpu);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	return fd;
}

/*
 * The engine holds data back: what is published lags the count by more
 * than 16 KiB.  This is the control for flush_and_check(), so it waits
 * for that state (the lag grows by 1 KiB a tick while the event runs)
 * rather than for a fixed time; the bound only ends a test whose engine
 * never holds anything back, which then fails: a FLUSH that does nothing
 * would pass flush_and_check() with nothing held.  A per-task event's
 * lag drops at every sched-out (which writes the FIFO out), so it is
 * waited for the same way, as long as its task keeps running.
 */
#define HELD_BACK	(16 * 1024)

static void expect_held_back(struct __test_metadata *_metadata,
			     struct capture *s, int count_fd)
{
	double end = now_ms() + 20000;
	__u64 before;
	struct pt_check w;

	do {
		before = perf_count(count_fd);
		take(s);
		pt_check_trace(s, &w, 0);
		if (nonpad(s, &w) + HELD_BACK < before)
			break;
		usleep(2000);
	} while (now_ms() < end);
	TH_LOG("without FLUSH: count=%llu in the AUX area=%zu",
	       (unsigned long long)before, nonpad(s, &w));
	EXPECT_LT(nonpad(s, &w) + HELD_BACK, before)
		TH_LOG("the FIFO held nothing back: the test proves nothing");
}

/*
 * FLUSH (on @fd with @arg), then everything the engine had queued when
 * @count_fd's count was read must be in the AUX area, described by a
 * PERF_RECORD_AUX, every sequence number from 0 without a gap.
 */
static void flush_and_check(struct __test_metadata *_metadata,
			    struct capture *s, int fd, unsigned long arg,
			    int count_fd)
{
	__u64 before, head;
	struct pt_check w;

	before = perf_count(count_fd);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_FLUSH, arg))
		TH_LOG("FLUSH: %s", strerror(errno));
	head = take(s);
	pt_check_trace(s, &w, 0);
	TH_LOG("after FLUSH: count before=%llu in the AUX area=%zu head=%llu",
	       (unsigned long long)before, nonpad(s, &w),
	       (unsigned long long)head);
	EXPECT_GE(nonpad(s, &w), before);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.gaps);
	EXPECT_EQ(0, w.first_seq);
	EXPECT_EQ(0, s->truncated);
	EXPECT_TRUE(record_ends_at(s, head))
		TH_LOG("no PERF_RECORD_AUX ends at aux_head %llu",
		       (unsigned long long)head);
}

/*
 * Stop the event and take the rest: now the trace holds exactly what the
 * engine queued, so FLUSH neither lost nor duplicated anything.
 */
static void stop_and_account(struct __test_metadata *_metadata,
			     struct capture *s, int fd, struct pt_check *w)
{
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	take(s);
	pt_check_trace(s, w, 0);
	TH_LOG("stopped: count=%llu trace=%zu pad=%lu ptw=%lu pge=%lu pgd=%lu",
	       (unsigned long long)perf_count(fd), s->len, w->pad, w->ptw64,
	       w->pge, w->pgd);
	EXPECT_EQ(perf_count(fd), nonpad(s, w));
	EXPECT_EQ(0, w->errors);
	EXPECT_EQ(0, w->gaps);
	EXPECT_EQ(0, s->truncated);
}

/*
 * Every case with ptsim's callback and on the generic path: the fixture
 * flush, and two_cpus for the cases that need a second CPU.
 */
FIXTURE(flush) {};
FIXTURE_VARIANT(flush) {
	bool noflush;		/* ptsim's callback declines: generic path */
	const char *tag;
};

FIXTURE_VARIANT_ADD(flush, callback) { .tag = "callback" };
FIXTURE_VARIANT_ADD(flush, generic) { .noflush = true, .tag = "generic" };
FIXTURE_SETUP(flush)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(flush) {}

FIXTURE(two_cpus) {};
FIXTURE_VARIANT(two_cpus) {
	bool noflush;
	const char *tag;
};

FIXTURE_VARIANT_ADD(two_cpus, callback) { .tag = "callback" };
FIXTURE_VARIANT_ADD(two_cpus, generic) { .noflush = true, .tag = "generic" };
FIXTURE_SETUP(two_cpus)
{
	ptsim_need(_metadata, PTSIM_NEED_2CPUS);
}

FIXTURE_TEARDOWN(two_cpus) {}

/*
 * A per-CPU event on @cpu, flushed from CPU 0 five times while it runs.
 * The generic path stops and restarts the trace unit at every flush (one
 * enable each); the callback drains the FIFO without either.
 */
static void per_cpu_flushes(struct __test_metadata *_metadata, bool noflush,
			    const char *tag, int cpu, const char *name)
{
	const int rounds = 3;
	char trace[64];
	struct capture s;
	struct pt_check w;
	int fd, i, go;
	pid_t pid;

	ASSERT_EQ(0, pin_to(online_cpu(0)));
	/* A task on the CPU gives the trace a user IP to enable at. */
	pid = spawn_burner(-1, cpu, &go);
	ASSERT_GT(pid, 0);
	release(go);
	fd = open_hold(_metadata, noflush, -1, cpu, false);
	ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, AUX_PAGES, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));

	for (i = 0; i < rounds; i++) {
		if (i == 0)
			expect_held_back(_metadata, &s, fd);
		else
			usleep(20 * 1000);
		flush_and_check(_metadata, &s, fd, 0, fd);
	}
	/*
	 * Stopped at once: the FIFO grows by 1 KiB a tick and is full after
	 * four seconds, which a check of the whole trace and the burner's
	 * end took on a debug kernel under a loaded host (gaps at the stop).
	 */
	stop_and_account(_metadata, &s, fd, &w);
	TH_LOG("%d flushes: enables=%lu pge=%lu pgd=%lu", rounds, w.enables,
	       w.pge, w.pgd);
	/*
	 * One enable (PSB+, TIP.PGE) per start: the first, if the trace
	 * had a user IP by then, and one per flush on the generic path.
	 */
	EXPECT_GE(w.enables, noflush ? rounds : 0);
	EXPECT_LE(w.enables, noflush ? rounds + 1 : 1);
	EXPECT_TRUE(stop_burner(pid));
	snprintf(trace, sizeof(trace), "flush_%s_%s", name, tag);
	capture_save(&s, trace);
	close(fd);
	capture_free(&s);
}

/* The event is active on the CPU that calls FLUSH. */
TEST_F(flush, this_cpu)
{
	per_cpu_flushes(_metadata, variant->noflush, variant->tag, online_cpu(0),
			"this_cpu");
}

/* The event is active on another CPU: the flush is a cross-call. */
TEST_F(two_cpus, other_cpu)
{
	per_cpu_flushes(_metadata, variant->noflush, variant->tag, online_cpu(1),
			"other_cpu");
}

/*
 * An event that is not active holds nothing: FLUSH returns 0 and
 * publishes nothing, whether the event was never enabled, was disabled
 * (which wrote its FIFO out), or cannot run for want of an AUX area.
 */
TEST_F(flush, not_active)
{
	struct capture s;
	struct pt_check w;
	size_t nrecs;
	__u64 head;
	int fd;

	fd = open_hold(_metadata, variant->noflush, -1, 0, false);
	ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, AUX_PAGES, false));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_FLUSH, 0));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_FLUSH, PERF_IOC_FLAG_GROUP));
	EXPECT_EQ(0, capture_aux_head(&s));

	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	usleep(50 * 1000);
	stop_and_account(_metadata, &s, fd, &w);
	head = capture_aux_head(&s);
	nrecs = s.nrecs;
	EXPECT_GT(head, 0);

	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_FLUSH, 0));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_FLUSH, PERF_IOC_FLAG_GROUP));
	capture_read_records(&s);
	EXPECT_EQ(head, capture_aux_head(&s));
	EXPECT_EQ(nrecs, s.nrecs) TH_LOG("FLUSH of a disabled event logged a record");
	close(fd);
	capture_free(&s);

	/* Enabled, but without an AUX area ptsim refuses to run. */
	fd = open_hold(_metadata, variant->noflush, -1, 0, false);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_FLUSH, 0));
	close(fd);
}

/*
 * An inherited event: the child's event writes into the parent's buffer
 * and FLUSH on the parent's file flushes it, on the child's CPU.  The
 * parent's count includes its children's.
 */
TEST_F(two_cpus, inherited)
{
	char trace[64];
	struct capture s;
	struct pt_check w;
	int fd, go, kid = 0, other = 0;
	size_t i;
	pid_t pid;

	/* The parent stays off CPU 0, where only the child is traced. */
	ASSERT_EQ(0, pin_to(online_cpu(1)));
	fd = open_hold(_metadata, variant->noflush, 0, online_cpu(0), true);
	ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, AUX_PAGES, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	/* The child burns until it is killed, after the flushes. */
	pid = spawn_burner(-1, online_cpu(0), &go);
	ASSERT_GT(pid, 0);
	release(go);

	expect_held_back(_metadata, &s, fd);
	flush_and_check(_metadata, &s, fd, 0, fd);
	usleep(50 * 1000);
	flush_and_check(_metadata, &s, fd, 0, fd);

	EXPECT_TRUE(stop_burner(pid));
	stop_and_account(_metadata, &s, fd, &w);
	for (i = 0; i < s.nrecs; i++) {
		if (s.recs[i].type != PERF_RECORD_AUX)
			continue;
		if (s.recs[i].pid == (__u32)pid)
			kid++;
		else
			other++;
	}
	TH_LOG("AUX records: child=%d other=%d", kid, other);
	EXPECT_GE(kid, 2);
	EXPECT_EQ(0, other);
	snprintf(trace, sizeof(trace), "flush_inherited_%s", variant->tag);
	capture_save(&s, trace);
	close(fd);
	capture_free(&s);
}

/*
 * PERF_IOC_FLAG_GROUP from a software member flushes the ptsim leader;
 * without the flag the member alone has nothing to flush.  A group with
 * no member that can flush gives -EOPNOTSUPP.
 */
TEST_F(flush, group)
{
	struct perf_event_attr sw = {
		.size = sizeof(sw),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	int fd, member, sw1, sw2, cpu = other_cpu();
	struct capture s;
	struct pt_check w;

	ASSERT_EQ(0, pin_to(online_cpu(0)));
	fd = open_hold(_metadata, variant->noflush, -1, cpu, false);
	member = perf_open(&sw, -1, cpu, fd);
	ASSERT_GE(member, 0) TH_LOG("member: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, AUX_PAGES, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));

	EXPECT_EQ(-1, ioctl(member, PERF_EVENT_IOC_FLUSH, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	expect_held_back(_metadata, &s, fd);
	flush_and_check(_metadata, &s, member, PERF_IOC_FLAG_GROUP, fd);
	usleep(30 * 1000);
	flush_and_check(_metadata, &s, fd, PERF_IOC_FLAG_GROUP, fd);
	stop_and_account(_metadata, &s, fd, &w);
	close(member);
	close(fd);
	capture_free(&s);

	sw1 = perf_open(&sw, -1, cpu, -1);
	ASSERT_GE(sw1, 0);
	sw2 = perf_open(&sw, -1, cpu, sw1);
	ASSERT_GE(sw2, 0);
	EXPECT_EQ(-1, ioctl(sw2, PERF_EVENT_IOC_FLUSH, PERF_IOC_FLAG_GROUP));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(sw2);
	close(sw1);
}

/*
 * Overwrite mode: ptsim publishes aux_head only when its transaction
 * ends, so nothing is readable while it runs; FLUSH publishes the head,
 * and the data below it is a complete snapshot.  Tracing goes on.
 */
TEST_F(flush, overwrite)
{
	char trace[64];
	__u64 head1, before;
	struct capture s;
	struct pt_check w;
	double end;
	size_t i;
	int fd;

	ASSERT_EQ(0, pin_to(online_cpu(0)));
	fd = open_hold(_metadata, variant->noflush, -1, other_cpu(), false);
	/* 2 MiB: no wrap in the time of the test */
	ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, 2 * AUX_PAGES, true));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	/* Wait for the engine to have queued 16 KiB, not for a time. */
	for (end = now_ms() + 20000; perf_count(fd) <= HELD_BACK && now_ms() < end;)
		usleep(2000);

	before = perf_count(fd);
	EXPECT_GT(before, HELD_BACK);
	EXPECT_EQ(0, capture_aux_head(&s)) TH_LOG("head published without FLUSH");
	flush_and_check(_metadata, &s, fd, 0, fd);
	head1 = capture_aux_head(&s);
	EXPECT_GT(head1, 0);

	usleep(40 * 1000);
	flush_and_check(_metadata, &s, fd, 0, fd);
	EXPECT_GT(capture_aux_head(&s), head1) TH_LOG("tracing stopped after FLUSH");
	for (i = 0; i < s.nrecs; i++) {
		if (s.recs[i].type != PERF_RECORD_AUX)
			continue;
		EXPECT_TRUE(s.recs[i].c & PERF_AUX_FLAG_OVERWRITE);
	}
	stop_and_account(_metadata, &s, fd, &w);
	snprintf(trace, sizeof(trace), "flush_overwrite_%s", variant->tag);
	capture_save(&s, trace);
	close(fd);
	capture_free(&s);
}

/* ---- FLUSH racing munmap, close, disable and SET_OUTPUT ---- */

struct race {
	int fd;			/* the ptsim event */
	int sw;			/* a software event: SET_OUTPUT to fd and back */
	struct perf_event_mmap_page *pg;
	size_t aux_off, aux_size;
	bool stop;		/* read and written with __atomic builtins */
	/* results */
	unsigned long flushes, flush_ebadf, flush_bad, toggles, remaps,
		      remap_fail, redirects;
	int bad_errno;
};

static bool stopped(struct race *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

static void *race_flusher(void *arg)
{
	struct race *r = arg;
	unsigned long i;

	for (i = 0; !stopped(r); i++) {
		if (!ioctl(r->fd, PERF_EVENT_IOC_FLUSH,
			   i & 1 ? PERF_IOC_FLAG_GROUP : 0)) {
			r->flushes++;
		} else if (errno == EBADF) {
			r->flush_ebadf++;
		} else {
			r->flush_bad++;
			r->bad_errno = errno;
		}
	}
	return NULL;
}

static void *race_toggler(void *arg)
{
	struct race *r = arg;

	while (!stopped(r)) {
		ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0);
		r->toggles++;
		usleep(500);
	}
	return NULL;
}

/* Unmap the AUX area and map it again, freeing and allocating its buffer. */
static void *race_mapper(void *arg)
{
	struct race *r = arg;
	void *aux = NULL;

	while (!stopped(r)) {
		aux = mmap(NULL, r->aux_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED, r->fd, r->aux_off);
		if (aux == MAP_FAILED) {
			r->remap_fail++;
			aux = NULL;
			usleep(200);
			continue;
		}
		usleep(1000);
		munmap(aux, r->aux_size);
		aux = NULL;
		r->remaps++;
	}
	return NULL;
}

static void *race_redirector(void *arg)
{
	struct race *r = arg;

	while (!stopped(r)) {
		if (!ioctl(r->sw, PERF_EVENT_IOC_SET_OUTPUT, r->fd))
			r->redirects++;
		ioctl(r->sw, PERF_EVENT_IOC_SET_OUTPUT, -1);
	}
	return NULL;
}

/* Keep consuming: move aux_tail and data_tail up to the heads. */
static void *race_consumer(void *arg)
{
	struct race *r = arg;

	while (!stopped(r)) {
		__atomic_store_n(&r->pg->data_tail,
				 __atomic_load_n(&r->pg->data_head,
						 __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&r->pg->aux_tail,
				 __atomic_load_n(&r->pg->aux_head,
						 __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		usleep(200);
	}
	return NULL;
}

/* A task that keeps forking short-lived children, for inherited events. */
static pid_t spawn_forker(int cpu)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (pin_to(cpu))
		_exit(2);
	for (;;) {
		pid_t kid = fork();

		if (!kid) {
			burn(2);
			_exit(0);
		}
		if (kid > 0)
			waitpid(kid, NULL, 0);
	}
}

/*
 * One round: a ptsim event (per CPU, or inherited by a forking task's
 * children) with a small AUX area that fills up, and threads that flush,
 * disable and enable, unmap and remap the AUX area, redirect another
 * event's output into its buffer, and consume; the event's file is closed
 * while they run.  FLUSH may only fail with EBADF, once the file is gone.
 */
/* Has every thread of the round done its part at least once? */
static bool race_ran(struct race *r)
{
	return __atomic_load_n(&r->flushes, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&r->toggles, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&r->remaps, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&r->redirects, __ATOMIC_RELAXED);
}

static void race_round(struct __test_metadata *_metadata, bool noflush,
		       int round, int ms, unsigned int *kinds)
{
	void *(*fn[])(void *) = {
		race_flusher, race_flusher, race_toggler, race_mapper,
		race_redirector, race_consumer,
	};
	struct perf_event_attr sw = {
		.size = sizeof(sw),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000 * 1000,
		.sample_type = PERF_SAMPLE_TID,
	};
	int cpu = online_cpu(round % ncpus()), data_pages = 4, aux_pages = 8;
	long psz = sysconf(_SC_PAGESIZE);
	pthread_t th[ARRAY_SIZE(fn)];
	struct perf_event_attr attr;
	struct race r = { 0 };
	bool inherit = round & 1;
	pid_t forker = -1;
	double end;
	size_t i;
	void *p;

	ptsim_attr(&attr, PTSIM_CFG1_RATE(256) | PTSIM_CFG1_FIFO(16) | PTSIM_CFG1_DRAIN(2) |
		   (noflush ? PTSIM_CFG1_NOFLUSH : 0));
	if (inherit) {
		forker = spawn_forker(cpu);
		ASSERT_GT(forker, 0);
		attr.inherit = 1;
		attr.disabled = 0;
	}
	r.fd = open_retry(&attr, inherit ? forker : -1, cpu);
	ASSERT_GE(r.fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	r.sw = perf_open(&sw, inherit ? forker : -1, cpu, -1);
	ASSERT_GE(r.sw, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	p = mmap(NULL, (1 + data_pages) * psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED, r.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	r.pg = p;
	r.aux_off = (1 + data_pages) * psz;
	r.aux_size = aux_pages * psz;
	r.pg->aux_offset = r.aux_off;
	r.pg->aux_size = r.aux_size;
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);

	for (i = 0; i < ARRAY_SIZE(fn); i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fn[i], &r));
	/*
	 * At least @ms, and until every racing thread has done its part
	 * at least once (a race must be run to prove anything), however
	 * slowly the guest runs; the bound only ends a round that hangs.
	 */
	usleep(ms * 1000);
	for (end = now_ms() + 20000; now_ms() < end && !race_ran(&r);)
		usleep(1000);
	/* Close the file under the threads: they now get EBADF. */
	close(r.fd);
	usleep(ms * 100);
	for (end = now_ms() + 20000; now_ms() < end &&
	     !__atomic_load_n(&r.flush_ebadf, __ATOMIC_RELAXED);)
		usleep(1000);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < ARRAY_SIZE(fn); i++)
		pthread_join(th[i], NULL);
	close(r.sw);
	munmap(p, (1 + data_pages) * psz);
	if (forker > 0) {
		kill(forker, SIGKILL);
		waitpid(forker, NULL, 0);
	}
	TH_LOG("round %d (%s, cpu %d): flushes=%lu ebadf=%lu toggles=%lu",
	       round, inherit ? "inherited" : "per-CPU", cpu, r.flushes,
	       r.flush_ebadf, r.toggles);
	TH_LOG("round %d: remaps=%lu (%lu failed) redirects=%lu", round,
	       r.remaps, r.remap_fail, r.redirects);
	EXPECT_EQ(0, r.flush_bad) TH_LOG("FLUSH failed: %s",
					 strerror(r.bad_errno));
	EXPECT_GT(r.flushes, 0);
	EXPECT_GT(r.remaps, 0);
	EXPECT_GT(r.toggles, 0);
	EXPECT_GT(r.redirects, 0);
	EXPECT_GT(r.flush_ebadf, 0) TH_LOG("no FLUSH raced the close()");
	*kinds |= 1 << inherit;
}

/*
 * Rounds for 1.5 s, but at least two, so that both kinds (per-CPU, and
 * inherited by a forking task's children) always run, however slowly.
 */
TEST_F(flush, stress)
{
	double end = now_ms() + 1500;
	unsigned int kinds = 0;
	struct capture s;
	int round, fd;

	for (round = 0; round < 2 || now_ms() < end; round++)
		race_round(_metadata, variant->noflush, round, 150, &kinds);
	TH_LOG("%d rounds", round);
	EXPECT_EQ(3, kinds) TH_LOG("a kind of round never ran to its end");

	/* Nothing leaked: each CPU's engine traces and flushes again. */
	for (round = 0; round < ncpus(); round++) {
		fd = open_hold(_metadata, variant->noflush, -1, online_cpu(round),
			       false);
		ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, AUX_PAGES, false));
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
		usleep(30 * 1000);
		flush_and_check(_metadata, &s, fd, 0, fd);
		EXPECT_GT(s.len, 0);
		close(fd);
		capture_free(&s);
	}
}

/* An event of a PMU with neither an AUX area nor a flush callback. */
static struct perf_event_attr task_clock = {
	.size = sizeof(task_clock),
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_TASK_CLOCK,
	.disabled = 1,
};

/*
 * The core cannot know what such a PMU holds back, so FLUSH says it
 * cannot, whatever the event's state, alone or as a group.
 */
TEST(non_aux)
{
	int fd;

	fd = perf_open(&task_clock, 0, -1, -1);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_FLUSH, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_FLUSH, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_FLUSH, PERF_IOC_FLAG_GROUP));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(fd);
}

/* Anything but 0 and PERF_IOC_FLAG_GROUP is -EINVAL, checked first. */
TEST(bad_args)
{
	static const unsigned long bad[] = {
		2, 3, 0x80, 0x80000000UL, (unsigned long)-1,
#if __SIZEOF_LONG__ > 4
		1UL << 32, (1UL << 32) | PERF_IOC_FLAG_GROUP,
#endif
	};
	struct perf_event_attr attr;
	int fd[2] = { -1, -1 };
	unsigned int i, k;

	fd[0] = perf_open(&task_clock, 0, -1, -1);
	ASSERT_GE(fd[0], 0);
	if (ptsim_type() >= 0) {
		ptsim_attr(&attr, 0);
		fd[1] = perf_open(&attr, 0, -1, -1);
		ASSERT_GE(fd[1], 0);
	}
	for (k = 0; k < 2 && fd[k] >= 0; k++) {
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			errno = 0;
			EXPECT_EQ(-1, ioctl(fd[k], PERF_EVENT_IOC_FLUSH, bad[i]))
				TH_LOG("argument 0x%lx accepted", bad[i]);
			EXPECT_EQ(EINVAL, errno) TH_LOG("argument 0x%lx", bad[i]);
		}
	}
	/* The valid arguments still work on the AUX event. */
	if (fd[1] >= 0) {
		EXPECT_EQ(0, ioctl(fd[1], PERF_EVENT_IOC_FLUSH, 0));
		EXPECT_EQ(0, ioctl(fd[1], PERF_EVENT_IOC_FLUSH,
				   PERF_IOC_FLAG_GROUP));
		close(fd[1]);
	}
	close(fd[0]);
}

TEST_HARNESS_MAIN
