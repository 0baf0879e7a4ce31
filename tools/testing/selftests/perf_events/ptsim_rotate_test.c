// SPDX-License-Identifier: GPL-2.0
/*
 * What a rotation of a running AUX event costs, by each way a tool has
 * to make one: PERF_EVENT_IOC_DISABLE and PERF_EVENT_IOC_ENABLE,
 * PERF_EVENT_IOC_PAUSE_OUTPUT, and PERF_EVENT_IOC_FLUSH, the latter
 * with ptsim's flush callback and with the perf core's generic path that
 * every AUX PMU without one gets (ptsim's noflush bit: pmu::stop, then
 * pmu::start).
 *
 * A rotation is what perf record --switch-output does: the tool wants
 * everything the trace unit produced up to now in the buffer, takes it
 * up to aux_head, and goes on.  ptsim is configured to hold data back,
 * as a trace unit with a large on-chip buffer does: a 4 MiB FIFO filled
 * with 2 KiB a 1 ms tick and drained with 1 KiB, a per-CPU event on a
 * CPU where a task burns.  The event's count is the number of bytes the
 * engine queued into its FIFO, so at each boundary the tool knows what
 * had been produced before its call.
 *
 * Each case does ROTATIONS rotations and prints one line of figures:
 *
 *	# ROTATE <method> rotations=<n> complete=<k> stranded_mean=<bytes>
 *	  stranded_max=<bytes> gap_us=<mean> window_us=<mean> call_us=<mean>
 *	  enables=<n> seq_lost=<n> seq_dup=<n> records_lost=<n>
 *
 * (one line in the output): complete, the rotations after which the
 * buffer held every byte counted before the call (and a PERF_RECORD_AUX
 * ended at aux_head), so that the consumer could know the part before
 * the boundary complete; stranded, the counted bytes that were not in
 * the buffer then (still in the FIFO: they go to the next part);
 * gap_us, for the methods of two calls, from the return of the first to
 * the entry of the second (the tool only reads aux_head in between): for
 * DISABLE and ENABLE the least time the workload runs untraced (its CPU
 * was stopped before DISABLE returned and is started after ENABLE is
 * called), for PAUSE_OUTPUT the least time records are dropped; FLUSH
 * is one call, n/a; window_us, from the entry of the first ioctl to the
 * return of the last; call_us, the time in the ioctls (each a call to
 * the event's CPU, which also copies the FIFO with interrupts off,
 * where the workload does not run meanwhile); enables, the times the
 * trace unit was started (an enable in the trace: PSB+ then TIP.PGE),
 * the first included: each later one ends a time it was off; seq_lost
 * and seq_dup, data records whose sequence number is missing from the
 * trace or comes twice; records_lost, records dropped from the data
 * area (PERF_RECORD_LOST).  Times are the guest's CLOCK_MONOTONIC.
 *
 * It asserts only what must hold whatever the speed: the trace of every
 * method decodes and, once the event is disabled at the end, holds
 * exactly the counted bytes, each data record once; DISABLE and ENABLE
 * and FLUSH leave nothing stranded at any boundary; FLUSH by ptsim's
 * callback never stops the trace unit, the generic path does at every
 * rotation; and, so that the figures mean something, PAUSE_OUTPUT's
 * boundaries do find data held back.  FLUSH skips on a kernel without it
 * (ENOTTY).
 */
#include "ptsim_lib.h"
#include "ptsim_harness.h"

/* As ptsim_flush_test's: the FIFO fills by 1 KiB a tick. */
#define HOLD_CONFIG	(PTSIM_CFG1_RATE(128) | PTSIM_CFG1_PERIOD(1000) | \
			 PTSIM_CFG1_FIFO(22) | PTSIM_CFG1_DRAIN(1) | \
			 PTSIM_CFG1_REGION(10))
/* 16 MiB: no wrap and no TRUNCATED in a run of a few seconds. */
#define AUX_PAGES	4096
#define ROTATIONS	16
/* Between rotations: 20 KiB more held back in the FIFO. */
#define GAP_MS		20
/* The longest packet ptsim writes (PSB); a data record is 16 bytes. */
#define MAX_PKT		16

enum method { DISABLE_ENABLE, PAUSE_OUTPUT, FLUSH, FLUSH_GENERIC };

/*
 * An incremental walk of the trace taken so far: non-PAD bytes, data
 * records by sequence number, enables.
 */
struct walk {
	size_t pos;		/* where the next packet starts */
	size_t pad, errors;
	__u64 next_seq, lost, dup, records;
	bool after_psbend;
	unsigned long enables;
};

static void walk_on(struct walk *k, const unsigned char *p, size_t len)
{
	while (k->pos < len) {
		const unsigned char *q = p + k->pos;
		size_t left = len - k->pos;
		size_t n = pt_len(q, left);

		if (!n) {
			/* A packet cut by the end of what was taken. */
			if (left < MAX_PKT)
				return;
			k->errors++;
			k->pos++;
			continue;
		}
		if (q[0] == 0x02 && q[1] == 0x32) {
			__u64 seq;

			if (left < PTSIM_REC)
				return;
			seq = get_le(q + 2, 8);
			if (seq < k->next_seq)
				k->dup++;
			else
				k->lost += seq - k->next_seq;
			if (seq >= k->next_seq)
				k->next_seq = seq + 1;
			k->records++;
			n = PTSIM_REC;	/* the record's PAD fill included */
		} else if (q[0] == 0x00) {
			k->pad++;
		}
		if ((q[0] & 0x1f) == 0x11 && k->after_psbend)
			k->enables++;
		k->after_psbend = q[0] == 0x02 && q[1] == 0x23;
		k->pos += n;
	}
}

static size_t walk_nonpad(const struct walk *k)
{
	return k->pos - k->pad;
}

/* Take the records, and the AUX data up to @head, as a tool would. */
static void take_to(struct capture *s, __u64 head)
{
	__u64 tail = s->pg->aux_tail;

	capture_read_records(s);
	if (head > tail)
		capture_append(s, tail, head - tail);
	__atomic_store_n(&s->pg->aux_tail, head, __ATOMIC_RELEASE);
}

/* Does a PERF_RECORD_AUX describe data up to @head? */
static bool record_ends_at(struct capture *s, __u64 head)
{
	size_t i;

	for (i = 0; i < s->nrecs; i++)
		if (s->recs[i].type == PERF_RECORD_AUX &&
		    s->recs[i].a + s->recs[i].b == head)
			return true;
	return false;
}

static int open_retry(struct perf_event_attr *attr, int cpu)
{
	int fd, i;

	for (i = 0; i < 100; i++) {
		fd = perf_open(attr, -1, cpu, -1);
		if (fd >= 0 || errno != EBUSY)
			break;
		usleep(10 * 1000);
	}
	return fd;
}

static double now_us(void)
{
	return now_ms() * 1e3;
}

FIXTURE(rotate) {};
FIXTURE_VARIANT(rotate) {
	enum method method;
	const char *name;
};

FIXTURE_VARIANT_ADD(rotate, disable_enable) {
	.method = DISABLE_ENABLE, .name = "disable_enable" };
FIXTURE_VARIANT_ADD(rotate, pause_output) {
	.method = PAUSE_OUTPUT, .name = "pause_output" };
FIXTURE_VARIANT_ADD(rotate, flush) { .method = FLUSH, .name = "flush" };
FIXTURE_VARIANT_ADD(rotate, flush_generic) {
	.method = FLUSH_GENERIC, .name = "flush_generic" };

FIXTURE_SETUP(rotate)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(rotate) {}

/*
 * One rotation by @m: returns the aux_head the tool read at the
 * boundary (after the call, before tracing resumes), or ~0 on ENOTTY;
 * the time in the ioctls in @call.
 */
static __u64 rotate_once(struct __test_metadata *_metadata,
			 struct capture *s, int fd, enum method m,
			 double *call, double *gap)
{
	double t0, t1, t2, t3;
	__u64 head;

	t0 = now_us();
	switch (m) {
	case DISABLE_ENABLE:
		EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
		t1 = now_us();
		head = capture_aux_head(s);
		t2 = now_us();
		EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
		break;
	case PAUSE_OUTPUT:
		EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1));
		t1 = now_us();
		head = capture_aux_head(s);
		t2 = now_us();
		EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0));
		break;
	default:
		if (ioctl(fd, PERF_EVENT_IOC_FLUSH, 0)) {
			if (errno == ENOTTY)
				return ~0ULL;
			EXPECT_EQ(0, errno) TH_LOG("FLUSH: %s", strerror(errno));
		}
		t1 = now_us();
		t2 = t1;
		head = capture_aux_head(s);
		break;
	}
	t3 = now_us();
	*call = (t1 - t0) + (t3 - t2);
	*gap = t2 - t1;
	return head;
}

TEST_F(rotate, rotations)
{
	enum method m = variant->method;
	double call, call_sum = 0, window_sum = 0, gap, gap_sum = 0, t0;
	char gap_us[32] = "n/a";
	unsigned long complete = 0, held_back = 0;
	__u64 before, head, stranded, stranded_sum = 0, stranded_max = 0;
	struct perf_event_attr attr;
	struct capture s;
	struct pt_check w;
	struct walk k = { 0 };
	int fd, go, i, cpu;
	char trace[64];
	pid_t pid;

	/* The event and a burner on the second CPU, the tool on the first. */
	cpu = online_cpu(cpus_online() > 1 ? 1 : 0);
	ASSERT_EQ(0, pin_to(online_cpu(0)));
	pid = spawn_burner(-1, cpu, &go);
	ASSERT_GT(pid, 0);
	release(go);
	ptsim_attr(&attr, HOLD_CONFIG |
		   (m == FLUSH_GENERIC ? PTSIM_CFG1_NOFLUSH : 0));
	attr.config |= PTSIM_CFG_PSB(15);
	fd = open_retry(&attr, cpu);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, HOLD_CONFIG, 16, AUX_PAGES, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));

	for (i = 0; i < ROTATIONS; i++) {
		usleep(GAP_MS * 1000);
		before = perf_count(fd);
		t0 = now_us();
		head = rotate_once(_metadata, &s, fd, m, &call, &gap);
		window_sum += now_us() - t0;
		if (head == ~0ULL) {
			EXPECT_TRUE(stop_burner(pid));
			close(fd);
			capture_free(&s);
			SKIP(return, "no PERF_EVENT_IOC_FLUSH (ENOTTY)");
		}
		call_sum += call;
		gap_sum += gap;
		take_to(&s, head);
		walk_on(&k, s.trace, s.len);
		stranded = before > walk_nonpad(&k) ?
			   before - walk_nonpad(&k) : 0;
		stranded_sum += stranded;
		if (stranded > stranded_max)
			stranded_max = stranded;
		held_back += stranded > 0;
		if (!stranded && record_ends_at(&s, head))
			complete++;
	}

	EXPECT_TRUE(stop_burner(pid));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	take_to(&s, capture_aux_head(&s));
	walk_on(&k, s.trace, s.len);
	pt_check_trace(&s, &w, 0);

	if (m == DISABLE_ENABLE || m == PAUSE_OUTPUT)
		snprintf(gap_us, sizeof(gap_us), "%.0f", gap_sum / ROTATIONS);
	/* One line, in two calls: each format within the line length. */
	printf("# ROTATE %s rotations=%d complete=%lu stranded_mean=%llu ",
	       variant->name, ROTATIONS, complete,
	       (unsigned long long)(stranded_sum / ROTATIONS));
	printf("stranded_max=%llu gap_us=%s window_us=%.0f call_us=%.0f ",
	       (unsigned long long)stranded_max, gap_us,
	       window_sum / ROTATIONS, call_sum / ROTATIONS);
	printf("enables=%lu seq_lost=%llu seq_dup=%llu records_lost=%lu\n",
	       k.enables, (unsigned long long)k.lost,
	       (unsigned long long)k.dup, s.lost);
	fflush(stdout);

	/* Whatever the method: all of it, once, in a trace that decodes. */
	EXPECT_EQ(perf_count(fd), walk_nonpad(&k));
	EXPECT_EQ(0, k.errors);
	EXPECT_EQ(0, k.dup);
	EXPECT_EQ(0, k.lost);
	EXPECT_EQ(s.len, k.pos);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	EXPECT_EQ(0, s.truncated);

	switch (m) {
	case PAUSE_OUTPUT:
		/* The control: else no figure here says anything. */
		EXPECT_GT(held_back, 0)
			TH_LOG("the FIFO held nothing back at any boundary");
		break;
	case FLUSH:
		EXPECT_EQ(ROTATIONS, complete);
		/* The first enable only: the trace unit never stopped. */
		EXPECT_LE(k.enables, 1);
		break;
	case DISABLE_ENABLE:
	case FLUSH_GENERIC:
		EXPECT_EQ(ROTATIONS, complete);
		EXPECT_GE(k.enables, ROTATIONS);
		break;
	}
	snprintf(trace, sizeof(trace), "rotate_%s", variant->name);
	capture_save(&s, trace);
	close(fd);
	capture_free(&s);
}

TEST_HARNESS_MAIN
