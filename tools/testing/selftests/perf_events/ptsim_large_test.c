// SPDX-License-Identifier: GPL-2.0
/*
 * A 2 GiB AUX area, the largest the perf core allows (its page array is
 * one kmalloc of at most MAX_PAGE_ORDER pages), written through ptsim
 * past 2^32 bytes in total: aux_head, aux_tail and the aux_offset of
 * PERF_RECORD_AUX must go on as exact 64-bit values across 2^31 (the
 * area's first wrap) and 2^32, and the trace written across both must be
 * there, complete and in sequence.  In normal mode only: in overwrite
 * mode ptsim hands perf its offset into the area, as intel_pt does, so
 * aux_head never passes the area's size there (the core's handling of a
 * running count past 2^32, as CoreSight hands it, is KUnit's
 * aux_test_overwrite_head).
 *
 * Two events share one buffer.  A benchmark-mode event (1 MiB
 * transactions of PAD packets) owns the buffer and does the bulk, up to
 * a little before each of the two positions; then a packet-mode event,
 * its output redirected into the same buffer with
 * PERF_EVENT_IOC_SET_OUTPUT, writes a window across the position, whose
 * packets carry sequence numbers: the window is copied out and its
 * sequence checked without a gap, the position inside it.  Every
 * PERF_RECORD_AUX must start where the one before ended.
 *
 * ptsim is exclusive, as intel_pt is: two of its events can share a
 * buffer only as per-task events of two tasks, bound to one CPU.  So
 * each event traces a child of its own on that CPU.  The bulk must stop
 * within a few MiB of where it is told to, at up to 800 MB/s, in a guest
 * whose consumer may not run for a good part of a second: so the bulk's
 * child, which runs only when its event traces, watches aux_head itself
 * and stops itself there.  The packet event's child spins, stopped by
 * the test outside its windows.
 *
 * The guest needs the area twice over in memory; with less than 3.5 GiB
 * the tests skip.
 */
#include "ptsim_leak.h"
#include "ptsim_harness.h"

#define AREA		(2UL << 30)
#define DATA_PAGES	256
#define MIN_MEM_KB	(3584UL << 10)
/*
 * 1 MiB transactions, four per 4 ms tick: the tick is forwarded past
 * the time it took, so its child runs between two, and can stop
 */
#define BULK_CONFIG	(PTSIM_CFG1_RATE(4) | PTSIM_CFG1_PERIOD(4000))
#define BULK_CONFIG2	PTSIM_CFG2_BENCH(20)
/* 64 KiB of 16-byte records per tick into a 4 MiB FIFO */
#define PKT_CONFIG	(PTSIM_CFG1_RATE(4096) | PTSIM_CFG1_PERIOD(10) | PTSIM_CFG1_FIFO(22))
/* the bulk stops LEAD before the position, a tick (4 MiB) later at most */
#define LEAD		(16ULL << 20)
/* the window ends PAST after the position */
#define PAST		(1024ULL << 10)
/* the window must hold at least this much trace before the position */
#define MIN_BEFORE	(64ULL << 10)
#define PHASE_SECS	60

FIXTURE(large) {
	int bulk, pkt, cpu;
	pid_t bulk_kid, pkt_kid;
	__u64 *until;		/* shared with bulk_kid: where to stop, */
	int *bulk_fd;		/* and the event's fd, to map the buffer */
	struct capture s;
	__u64 prev_end;		/* where the last PERF_RECORD_AUX ended */
	size_t checked;		/* records checked so far */
	__u64 max_offset;	/* the largest aux_offset seen */
	unsigned long skips;	/* padding skipped, between two records */
};

FIXTURE_SETUP(large)
{
	long kb = meminfo_kb("MemTotal");

	self->bulk = -1;
	self->pkt = -1;
	self->bulk_kid = 0;
	self->pkt_kid = 0;
	self->until = MAP_FAILED;
	if (kb < (long)MIN_MEM_KB)
		SKIP(return, "MemTotal %ld kB: a 2 GiB AUX area needs %lu kB",
		     kb, MIN_MEM_KB);
	self->cpu = online_cpu(cpus_online() > 1 ? 1 : 0);
	/* The consumer stays off the traced CPU, if there is another. */
	if (cpus_online() > 1)
		pin_to(online_cpu(0));
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(large)
{
	capture_free(&self->s);
	if (self->pkt >= 0)
		close(self->pkt);
	if (self->bulk >= 0)
		close(self->bulk);
	if (self->pkt_kid > 0)
		stop_burner(self->pkt_kid);
	if (self->bulk_kid > 0)
		stop_burner(self->bulk_kid);
	if (self->until != MAP_FAILED)
		munmap(self->until, 2 * sizeof(*self->until));
}

/* A child spinning on the test's CPU, stopped. */
static pid_t spawn_kid(struct __test_metadata *_metadata, int cpu)
{
	int go;
	pid_t pid = spawn_burner(-1, cpu, &go);

	ASSERT_LT(0, pid);
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	release(go);
	return pid;
}

/* Wait until @kid has stopped; false if it is gone. */
static bool kid_stopped(pid_t kid, int flags)
{
	int status;

	return waitpid(kid, &status, WUNTRACED | flags) == kid &&
	       WIFSTOPPED(status);
}

/*
 * The bulk event's child: on the test's CPU, it stops itself.  Let go,
 * it takes the event's fd from the test (pidfd_getfd(): the event is
 * opened on the child, after fork()), maps the buffer, already mapped
 * by the test, and stops again.  Each time it is let go it then spins
 * until aux_head reaches *until, and stops.  It is traced only while it
 * runs, on the CPU its event writes from, so the writing stops within
 * the tick that crossed *until, however late the test gets to run.
 */
static pid_t spawn_bulk_kid(struct __test_metadata *_metadata,
			    FIXTURE_DATA(large) *self)
{
	size_t len = (1 + DATA_PAGES) * sysconf(_SC_PAGESIZE);
	__u64 *until = self->until;
	struct perf_event_mmap_page *pg;
	pid_t pid, parent = getpid();
	int pidfd, fd;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid) {
		ASSERT_TRUE(kid_stopped(pid, 0));
		return pid;
	}
	if (die_with(parent) || pin_to(self->cpu) || raise(SIGSTOP))
		_exit(2);
	pidfd = syscall(SYS_pidfd_open, parent, 0);
	fd = syscall(SYS_pidfd_getfd, pidfd, *self->bulk_fd, 0);
	if (pidfd < 0 || fd < 0)
		_exit(3);
	pg = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		_exit(4);
	for (;;) {
		raise(SIGSTOP);
		while (__atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE) <
		       __atomic_load_n(until, __ATOMIC_RELAXED))
			;
	}
}

/*
 * Check the PERF_RECORD_AUX records read since the last call: each one
 * starts where the one before ended.  The driver skips a region's
 * padding without a record, so a record may start after the last one
 * ended, but only inside the
 * window copied out at @win (@len bytes from AUX offset @start), over
 * PAD bytes.
 */
static void check_records(struct __test_metadata *_metadata,
			  FIXTURE_DATA(large) *self, __u64 start,
			  const unsigned char *win, size_t len)
{
	struct capture *s = &self->s;

	for (; self->checked < s->nrecs; self->checked++) {
		struct aux_rec *r = &s->recs[self->checked];
		__u64 from = r->a;
		__u64 i;

		if (r->type != PERF_RECORD_AUX)
			continue;
		if (r->a > self->max_offset)
			self->max_offset = r->a;
		if (from != self->prev_end &&
		    from > self->prev_end && self->prev_end >= start &&
		    from <= start + len) {
			for (i = self->prev_end; i < from; i++)
				ASSERT_EQ(0, win[i - start])
					TH_LOG("byte %llu of a skip is not PAD",
					       (unsigned long long)i);
			self->skips++;
			self->prev_end = from;
		}
		ASSERT_EQ(self->prev_end, from)
			TH_LOG("AUX record %zu: %llu+%llu flags %#llx, last end %llu",
			       self->checked, (unsigned long long)r->a,
			       (unsigned long long)r->b,
			       (unsigned long long)r->c,
			       (unsigned long long)self->prev_end);
		self->prev_end = from + r->b;
	}
}

/* Give back what was written, unread; the records are kept. */
static void skip_aux(struct capture *s)
{
	capture_read_records(s);
	__atomic_store_n(&s->pg->aux_tail, capture_aux_head(s), __ATOMIC_RELEASE);
}

/*
 * The bulk: the benchmark event runs until aux_head reaches @until,
 * where its child stops itself, while the test consumes.
 */
static void bulk_to(struct __test_metadata *_metadata,
		    FIXTURE_DATA(large) *self, __u64 until)
{
	struct capture *s = &self->s;
	double end = now_ms() + PHASE_SECS * 1e3;

	__atomic_store_n(self->until, until, __ATOMIC_RELAXED);
	ASSERT_EQ(0, ioctl(self->bulk, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, kill(self->bulk_kid, SIGCONT));
	while (!kid_stopped(self->bulk_kid, WNOHANG)) {
		skip_aux(s);
		ASSERT_LT(now_ms(), end)
			TH_LOG("aux_head %llu after %d s, wanted %llu",
			       (unsigned long long)capture_aux_head(s), PHASE_SECS,
			       (unsigned long long)until);
		ASSERT_EQ(0, s->truncated);
	}
	ASSERT_EQ(0, ioctl(self->bulk, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_LE(until, capture_aux_head(s));
	skip_aux(s);
	check_records(_metadata, self, 0, NULL, 0);
}

/*
 * The last PTW sequence number before AUX offset @pos and the first at
 * or after it, in the window @p of @len bytes from AUX offset @start
 * (which pt_check_piece() has found sound).
 */
static void seq_around(const unsigned char *p, size_t len, __u64 start,
		       __u64 pos, __u64 *before, __u64 *after)
{
	size_t i = 0, n;

	while (i < len && p[i] == 0)
		i++;
	for (; i < len; i += n) {
		n = pt_len(p + i, len - i);
		if (!n)
			return;
		if (p[i] == 0x02 && p[i + 1] == 0x32) {
			if (start + i < pos) {
				*before = get_le(p + i + 2, 8);
			} else {
				*after = get_le(p + i + 2, 8);
				return;
			}
		}
	}
}

/*
 * The window: the packet event writes from where the bulk stopped, a
 * little before @pos, until aux_head is PAST beyond it, flushed as it
 * goes and copied out; then its trace is checked.
 */
static void window_at(struct __test_metadata *_metadata,
		      FIXTURE_DATA(large) *self, __u64 pos)
{
	struct capture *s = &self->s;
	__u64 start = capture_aux_head(s), head, before = 0, after = 0;
	double end = now_ms() + PHASE_SECS * 1e3;
	struct pt_check w;

	ASSERT_LE(start + MIN_BEFORE, pos)
		TH_LOG("the bulk overshot: aux_head %llu, the window at %llu",
		       (unsigned long long)start, (unsigned long long)pos);
	s->len = 0;
	s->ncopies = 0;
	ASSERT_EQ(0, ioctl(self->pkt, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, kill(self->pkt_kid, SIGCONT));
	do {
		ASSERT_EQ(0, ioctl(self->pkt, PERF_EVENT_IOC_FLUSH, 0));
		capture_read_records(s);
		capture_copy_aux(s);
		ASSERT_LT(now_ms(), end)
			TH_LOG("aux_head %llu after %d s, wanted %llu",
			       (unsigned long long)capture_aux_head(s), PHASE_SECS,
			       (unsigned long long)(pos + PAST));
	} while (capture_aux_head(s) < pos + PAST);
	ASSERT_EQ(0, kill(self->pkt_kid, SIGSTOP));
	ASSERT_EQ(0, ioctl(self->pkt, PERF_EVENT_IOC_DISABLE, 0));
	capture_read_records(s);
	head = capture_aux_head(s);
	capture_copy_aux(s);
	ASSERT_EQ(head - start, s->len);
	check_records(_metadata, self, start, s->trace, s->len);

	/* It must start with a PSB. */
	memset(&w, 0, sizeof(w));
	pt_check_piece(s, &w, s->trace, s->len, start, 0);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.gaps);
	EXPECT_EQ(0, w.ovf);
	EXPECT_GE(w.psb, 1);
	EXPECT_EQ(w.last_seq - w.first_seq + 1, w.ptw64)
		TH_LOG("sequence %llu..%llu in %lu records",
		       (unsigned long long)w.first_seq,
		       (unsigned long long)w.last_seq, w.ptw64);
	seq_around(s->trace, s->len, start, pos, &before, &after);
	EXPECT_NE(0, after);
	EXPECT_EQ(before + 1, after)
		TH_LOG("across %llu: sequence %llu, then %llu",
		       (unsigned long long)pos, (unsigned long long)before,
		       (unsigned long long)after);
	ksft_print_msg("window [%llu, %llu): %lu records, %llu..%llu\n",
		       (unsigned long long)start, (unsigned long long)head,
		       w.ptw64, (unsigned long long)w.first_seq,
		       (unsigned long long)w.last_seq);
	ksft_print_msg("across %llu: sequence %llu, then %llu\n",
		       (unsigned long long)pos, (unsigned long long)before,
		       (unsigned long long)after);
}

TEST_F_TIMEOUT(large, past_4gib, 240)
{
	static const __u64 at[] = { 1ULL << 31, 1ULL << 32 };
	struct perf_event_attr attr;
	struct capture *s = &self->s;
	double t0;
	__u64 head;
	size_t i;

	self->until = mmap(NULL, 2 * sizeof(*self->until),
			   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			   -1, 0);
	ASSERT_NE(MAP_FAILED, self->until);
	*self->until = 0;
	self->bulk_fd = (int *)(self->until + 1);
	self->bulk_kid = spawn_bulk_kid(_metadata, self);
	self->pkt_kid = spawn_kid(_metadata, self->cpu);
	ptsim_attr(&attr, BULK_CONFIG);
	attr.config2 = BULK_CONFIG2;
	self->bulk = perf_open(&attr, self->bulk_kid, self->cpu, -1);
	ASSERT_LE(0, self->bulk) TH_LOG("bench event: %s", strerror(errno));
	*self->bulk_fd = self->bulk;
	ptsim_attr(&attr, PKT_CONFIG);
	self->pkt = perf_open(&attr, self->pkt_kid, self->cpu, -1);
	ASSERT_LE(0, self->pkt) TH_LOG("packet event: %s", strerror(errno));

	t0 = now_ms();
	ASSERT_EQ(0, capture_map(s, self->bulk, BULK_CONFIG, DATA_PAGES,
				 AREA / sysconf(_SC_PAGESIZE), false))
		TH_LOG("mmap of 2 GiB of AUX area: %s", strerror(errno));
	ksft_print_msg("2 GiB AUX area mapped in %.1f s\n",
		       (now_ms() - t0) / 1e3);
	s->reenable = false;
	ASSERT_EQ(0, ioctl(self->pkt, PERF_EVENT_IOC_SET_OUTPUT, self->bulk));
	/* Let the bulk's child map the buffer. */
	ASSERT_EQ(0, kill(self->bulk_kid, SIGCONT));
	ASSERT_TRUE(kid_stopped(self->bulk_kid, 0));

	t0 = now_ms();
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		bulk_to(_metadata, self, at[i] - LEAD);
		window_at(_metadata, self, at[i]);
	}
	head = capture_aux_head(s);
	ksft_print_msg("aux_head %llu after %.1f s, %lu PERF_RECORD_AUX\n",
		       (unsigned long long)head, (now_ms() - t0) / 1e3,
		       s->aux_records);
	ksft_print_msg("largest aux_offset %llu, %lu padding skips\n",
		       (unsigned long long)self->max_offset, self->skips);

	EXPECT_GT(head, (1ULL << 32) + PAST - 1);
	EXPECT_EQ(self->prev_end, head);
	/* The last record ends at aux_head; aux_tail follows it. */
	EXPECT_EQ(head, s->pg->aux_tail);
	EXPECT_GT(self->max_offset, 1ULL << 32);
	EXPECT_EQ(0, s->truncated);
	EXPECT_EQ(0, s->lost);
	EXPECT_EQ(0, s->bad_records);
}

TEST_HARNESS_MAIN
