// SPDX-License-Identifier: GPL-2.0
/*
 * The AUX area through the ptsim PMU: streaming, a stalled consumer,
 * snapshot mode, watermark wake-ups, region alignment with skip and PAD,
 * FIFO overflow, inherited and per-CPU events, pause and resume.
 *
 * Every test checks its trace (ptsim_trace.h) and leaves it for the
 * host's libipt decoder (ptsim_lib.h).
 */
#include <sys/utsname.h>

#include "ptsim_lib.h"
#include "ptsim_leak.h"
#include "../kselftest_harness.h"
#include "ptsim_harness.h"

/*
 * The trace decodes, and its sequence numbers have no gap, or, if the
 * consumer fell behind and the buffer filled, only gaps that a TRUNCATED
 * record explains.  Under TCG a consumer can be starved for a while, so a
 * test cannot insist that the buffer never fills.
 */
static void expect_clean(struct __test_metadata *_metadata, struct capture *s,
			 struct pt_check *w)
{
	EXPECT_EQ(0, w->errors);
	EXPECT_EQ(0, w->unexplained);
	if (!s->truncated)
		EXPECT_EQ(0, w->gaps);
}

/*
 * The fixtures say what their cases need, and skip them, with the reason,
 * where it is missing: ptsim the ptsim PMU; two_cpus a second CPU too;
 * hotplug a second CPU that can go offline; mark ptsim_mark with its PMI
 * (not in a module).  The first and second CPU ("CPU 0" and "CPU 1"
 * below) are the first two online ones (online_cpu(0) and
 * online_cpu(1)), whatever their ids.  form and mark_form run a contract
 * item in each of its forms, a variant each: the event itself (alone); a
 * ptsim event whose output goes to another event's buffer through
 * PERF_EVENT_IOC_SET_OUTPUT (shared: the buffer's owner is a disabled
 * dummy event, the AUX area is mapped through the ptsim event, as a tool
 * shares a buffer); and the copy an inherited event gets in a child,
 * which writes to its parent's buffer (inherited: the test stays on the
 * second CPU, the child runs on the first, see anchor_open()).
 * mark_form, whose pause and resume come from ptsim_mark's PMI, has the
 * forms written so far.  A variant's needs add to its fixture's.
 */
FIXTURE(ptsim) {};
FIXTURE_SETUP(ptsim)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(ptsim) {}

FIXTURE(two_cpus) {};
FIXTURE_SETUP(two_cpus)
{
	ptsim_need(_metadata, PTSIM_NEED_2CPUS);
}

FIXTURE_TEARDOWN(two_cpus) {}

FIXTURE(hotplug) {};
FIXTURE_SETUP(hotplug)
{
	ptsim_need(_metadata, PTSIM_NEED_HOTPLUG);
}

FIXTURE_TEARDOWN(hotplug) {}

FIXTURE(mark) {};
FIXTURE_SETUP(mark)
{
	ptsim_need(_metadata, PTSIM_NEED_MARK_PMI);
}

FIXTURE_TEARDOWN(mark) {}

enum form { ALONE, SHARED, INHERITED };

FIXTURE(form) {};
FIXTURE_VARIANT(form) {
	enum form form;
	unsigned int needs;
};

FIXTURE_VARIANT_ADD(form, alone) { .form = ALONE };
FIXTURE_VARIANT_ADD(form, shared) { .form = SHARED };
FIXTURE_VARIANT_ADD(form, inherited) { .form = INHERITED, .needs = PTSIM_NEED_2CPUS };

FIXTURE_SETUP(form)
{
	ptsim_need(_metadata, variant->needs);
	if (!_metadata->exit_code && variant->form == SHARED && aux_shared_refused())
		SKIP(return, AUX_SHARED_REFUSED);
}

FIXTURE_TEARDOWN(form) {}

FIXTURE(mark_form) {};
FIXTURE_VARIANT(mark_form) {
	enum form form;
};

FIXTURE_VARIANT_ADD(mark_form, alone) { .form = ALONE };
FIXTURE_VARIANT_ADD(mark_form, shared) { .form = SHARED };
FIXTURE_SETUP(mark_form)
{
	ptsim_need(_metadata, PTSIM_NEED_MARK_PMI);
	if (!_metadata->exit_code && variant->form == SHARED && aux_shared_refused())
		SKIP(return, AUX_SHARED_REFUSED);
}

FIXTURE_TEARDOWN(mark_form) {}

/* Trace a child burning ms of CPU with a per-task event. */
static int trace_child(struct __test_metadata *_metadata, struct capture *s,
		       __u64 config, int aux_pages, int ms, int watermark)
{
	struct perf_event_attr attr;
	pid_t pid;

	ptsim_attr(&attr, config);
	attr.aux_watermark = watermark;
	return ptsim_trace_burner(_metadata, s, &attr, ms, aux_pages, false,
				  &pid);
}

TEST_F(ptsim, sysfs_format_and_caps)
{
	static const char * const fmt[][2] = {
		{ "pt", "config:0" }, { "tsc", "config:10" },
		{ "branch", "config:13" }, { "psb_period", "config:24-27" },
		{ "aux_fmt", "config1:0-7" }, { "aux_loss", "config1:8-9" },
		{ "rate", "config1:10-25" }, { "period", "config1:26-37" },
		{ "fifo", "config1:38-42" }, { "drain", "config1:43-54" },
		{ "region", "config1:55-58" }, { "noflush", "config1:59" },
		{ "irq_pmi", "config1:60" }, { "tnt", "config1:61" },
		{ "bench", "config2:0-4" }, { "bench_split", "config2:5" },
	};
	char path[256], buf[64];
	unsigned int i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(fmt); i++) {
		snprintf(path, sizeof(path), PTSIM_SYSFS "/format/%s", fmt[i][0]);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f) TH_LOG("%s missing", path);
		ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
		fclose(f);
		buf[strcspn(buf, "\n")] = 0;
		EXPECT_STREQ(fmt[i][1], buf);
	}
	f = fopen(PTSIM_SYSFS "/caps/record_size", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_EQ(PTSIM_REC, atoi(buf));
}

TEST_F(ptsim, bad_config_is_einval)
{
	/* .config is added to ptsim_attr()'s, .config1 and .config2 are set */
	static const struct {
		__u64 config, config1, config2;
	} bad[] = {
		{ .config1 = 1ULL << 62 }, { .config1 = 1ULL << 63 },	/* reserved bits */
		{ .config1 = PTSIM_CFG1_RATE(4097) },	/* above caps/max_rate */
		{ .config1 = PTSIM_CFG1_PERIOD(9) },	/* below caps/min_period_us */
		/* FIFO size out of range */
		{ .config1 = PTSIM_CFG1_FIFO(8) }, { .config1 = PTSIM_CFG1_FIFO(23) },
		{ .config1 = PTSIM_CFG1_REGION(11) },	/* above caps/max_region_shift */
		{ .config1 = PTSIM_CFG1_LOSS(3) },	/* no such loss flag */
		{ .config2 = 1ULL << 6 }, { .config2 = 1ULL << 63 },	/* reserved bits */
		/* 64 B .. 1 MiB only */
		{ .config2 = PTSIM_CFG2_BENCH(5) }, { .config2 = PTSIM_CFG2_BENCH(21) },
		{ .config2 = PTSIM_CFG2_BENCH_SPLIT },	/* only in benchmark mode */
		/* all but intel_pt's pt, tsc, branch, psb_period */
		{ .config = 1ULL << 1 }, { .config = 1ULL << 12 }, { .config = 1ULL << 31 },
		{ .config = 1ULL << 55 }, { .config = 1ULL << 63 },
	};
	struct perf_event_attr attr;
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ptsim_attr(&attr, bad[i].config1);
		attr.config |= bad[i].config;
		attr.config2 = bad[i].config2;
		fd = perf_open(&attr, 0, -1, -1);
		EXPECT_EQ(-1, fd) TH_LOG("config 0x%llx:0x%llx:0x%llx accepted",
					 (unsigned long long)attr.config,
					 (unsigned long long)attr.config1,
					 (unsigned long long)attr.config2);
		EXPECT_EQ(EINVAL, errno);
		if (fd >= 0)
			close(fd);
	}
	ptsim_attr(&attr, PTSIM_CFG1_TNT);		/* TNTs, but no branch */
	attr.config &= ~PTSIM_CFG_BRANCH;
	EXPECT_EQ(-1, perf_open(&attr, 0, -1, -1));
	EXPECT_EQ(EINVAL, errno);

	/* The largest valid values are accepted. */
	ptsim_attr(&attr, PTSIM_CFG1_RATE(4096) | PTSIM_CFG1_PERIOD(4095) |
		   PTSIM_CFG1_FIFO(22) | PTSIM_CFG1_DRAIN(4095) | PTSIM_CFG1_REGION(10) |
		   PTSIM_CFG1_NOFLUSH | PTSIM_CFG1_IRQ_PMI | PTSIM_CFG1_TNT |
		   PTSIM_CFG1_FMT(255) | PTSIM_CFG1_LOSS(2));
	attr.config |= PTSIM_CFG_PSB(15);
	fd = perf_open(&attr, 0, -1, -1);
	EXPECT_GE(fd, 0) TH_LOG("valid config refused: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	ptsim_attr(&attr, 0);
	attr.config2 = PTSIM_CFG2_BENCH(20) | PTSIM_CFG2_BENCH_SPLIT;
	fd = perf_open(&attr, 0, -1, -1);
	EXPECT_GE(fd, 0) TH_LOG("valid config refused: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * Normal streaming: everything arrives, numbered from 0, no gaps.
 *
 * "No loss" must not depend on the consumer being scheduled in time (a
 * loaded TCG host can starve it for a long while), so the AUX area is
 * larger than anything the run can produce: at the default rate ptsim
 * writes 64 records of 16 bytes per 100 us tick, ~10 MB/s, and never
 * catches up on late ticks, so a child burning 300 ms yields at most
 * ~3.2 MB with the PSB+ and PGE/PGD packets, well within 8 MiB.  The
 * 64 KiB watermark still has the consumer woken and reading all along.
 * Wrapping under pressure is what stalled_consumer and watermark test.
 * A variant per PMI and packet mode.
 */
FIXTURE(stream) {};
FIXTURE_VARIANT(stream) {
	__u64 config;
};

FIXTURE_VARIANT_ADD(stream, default) { .config = 0 };
/* The PMI handled in the engine's hard interrupt. */
FIXTURE_VARIANT_ADD(stream, irq_pmi) { .config = PTSIM_CFG1_IRQ_PMI };
/* The synthetic mode: data records full of TNTs. */
FIXTURE_VARIANT_ADD(stream, tnt) { .config = PTSIM_CFG1_TNT };

FIXTURE_SETUP(stream)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(stream) {}

TEST_F(stream, complete)
{
	struct nmi_counts nmi = ptsim_nmi_counts();
	__u64 config = variant->config;
	struct capture s;
	struct pt_check w;
	__u64 count = 0;
	int fd;

	fd = trace_child(_metadata, &s, config, 2048, 300, 64 * 1024);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "stream");
	TH_LOG("bytes=%zu aux_records=%lu packets=%lu ptw=%lu psb=%lu",
	       s.len, s.aux_records, w.packets, w.ptw64, w.psb);
	EXPECT_GT(s.len, 64 * 1024);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.gaps);
	EXPECT_EQ(0, w.first_seq);
	EXPECT_EQ(0, s.truncated);
	EXPECT_GE(s.itrace_start, 1);
	EXPECT_GT(w.psb, 1);
	EXPECT_GE(w.pge, 1);
	EXPECT_GE(w.pgd, 1);
	/* Sched-in, sched-out and PSB+ carry the child's user IPs. */
	EXPECT_GT(w.user_ips, w.psb / 2);
	EXPECT_EQ(0, w.bad_ips);
	/*
	 * Nothing a decoder that follows the code must walk: no TNT but
	 * in the synthetic mode, no FUP away from the trace's IP (see
	 * "Control flow" in ptsim.rst).
	 */
	EXPECT_EQ(0, w.fup_moved);
	EXPECT_EQ(!!(config & PTSIM_CFG1_TNT), w.tnt > 0);
	EXPECT_GT(s.aux_records, 1);
	/* The counter is the bytes the engine produced, all of it here. */
	EXPECT_EQ(sizeof(count), read(fd, &count, sizeof(count)));
	EXPECT_GT(count, 0);
	EXPECT_LE(count, s.len);
	/* Every PTW in the trace is a record of 16 bytes of the count. */
	EXPECT_LE(w.ptw64 * PTSIM_REC, count);
	/*
	 * Each watermark ended the transaction in ptsim's PMI: an NMI by
	 * default, as intel_pt's; with irq_pmi the tick's interrupt.
	 */
	if (!(config & PTSIM_CFG1_IRQ_PMI))
		EXPECT_NMI(nmi, pmi, 1);
	else if (PTSIM_NMI_EXPECTED && ptsim_debugfs_missing())
		TH_LOG("no PMI in NMI not checked: %s", ptsim_debugfs_missing());
	else if (PTSIM_NMI_EXPECTED)
		EXPECT_EQ(nmi.pmi, ptsim_nmi("pmi"));
	close(fd);
	capture_free(&s);
}

/*
 * A consumer that stops reading: the buffer fills, the transaction ends
 * TRUNCATED, perf disables the event and aux_head stands still.  After
 * the consumer catches up and re-enables, tracing resumes, and the lost
 * records are explained by the TRUNCATED record.
 *
 * Nothing here depends on how fast the guest runs: the child burns until
 * it is killed, and each phase waits for what it needs to see (bounded
 * only against a test that hangs), rather than for a fixed time.
 */
#define STALL_DEADLINE_MS	20000

TEST_F(ptsim, stalled_consumer)
{
	struct perf_event_attr attr;
	struct capture s;
	struct pt_check w;
	__u64 head1, head2;
	size_t before;
	double end;
	pid_t pid;
	int fd;

	ptsim_attr(&attr, 0);
	fd = ptsim_trace_burner(_metadata, &s, &attr, -1, 4, false, &pid);

	/*
	 * One deadline for both waits, well inside the kselftest harness's
	 * 30 s per test (two waits of 20 s each could outlast it, and a
	 * harness timeout reports less than our own message does).
	 */
	end = now_ms() + STALL_DEADLINE_MS;
	/* Read the records, never aux_tail, until the buffer has filled. */
	while (!s.truncated && now_ms() < end) {
		usleep(10 * 1000);
		capture_read_records(&s);
	}
	ASSERT_GE(s.truncated, 1) TH_LOG("16 KiB of AUX area never filled");
	head1 = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
	usleep(50 * 1000);
	head2 = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
	EXPECT_EQ(head1, head2) TH_LOG("aux_head moved while the buffer was full");
	/* Full: less room left than the record that did not fit. */
	EXPECT_GT(head2 - s.pg->aux_tail, s.aux_size - 64);

	/*
	 * Catch up and restart.  The consumer need not keep up from now
	 * on (under TCG it often cannot, with 16 KiB at ~10 MB/s): every
	 * further TRUNCATED is restarted the same way, by capture_poll().
	 * Twice the buffer after the re-enable proves tracing went on.
	 */
	capture_restart(&s);
	before = s.len;
	EXPECT_TRUE(capture_until_len(&s, before + 2 * s.aux_size,
				      end > now_ms() ? end - now_ms() : 0))
		TH_LOG("%zu bytes after re-enable", s.len - before);
	EXPECT_TRUE(stop_burner(pid));
	capture_poll(&s, 0);

	pt_check_trace(&s, &w, 0);
	capture_save(&s, "stalled_consumer");
	TH_LOG("bytes=%zu truncated=%lu gaps=%lu", s.len, s.truncated, w.gaps);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	EXPECT_GE(w.gaps, 1);
	close(fd);
	capture_free(&s);
}

static __u64 read_count(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/*
 * A full buffer turns the event off at once (perf_event_disable_inatomic())
 * on every CPU: the event's enabled time stops while its task still runs,
 * and once the consumer has made room nothing more is written, however
 * often the task is scheduled in, until the tool enables the event again.
 *
 * 6.12 as released only set pending_disable to the CPU number, acted on
 * at the next sched-out, so on CPU 0 (pending_disable == 0) never: there,
 * once the consumer had made room, the next sched-in simply started
 * tracing again ("CPU 0: a full buffer did not disable"), and on another
 * CPU the enabled time went on until the sched-out ("CPU 1: still
 * enabled after TRUNCATED").  Patch 0028 fixes it, as mainline's
 * 1476b218327b did.
 *
 * The child is pinned to the CPU under test and the consumer to another;
 * the waits are for states (TRUNCATED, the enabled time standing still, a
 * number of the child's context switches), never for a time.
 */
static int napping;

static void start_napping(int sig)
{
	__atomic_store_n(&napping, 1, __ATOMIC_RELAXED);
}

/* Burn on @cpu; after SIGUSR1, sleep a little between bursts. */
static pid_t spawn_napper(int cpu, int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[1]);
		signal(SIGUSR1, start_napping);
		if (pin_to(cpu) || read(p[0], &c, 1) != 1)
			_exit(3);
		for (;;) {
			burn(1);
			if (__atomic_load_n(&napping, __ATOMIC_RELAXED))
				usleep(1000);
		}
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

struct times {
	__u64 count, enabled, running;
};

static __u64 time_enabled(int fd)
{
	struct times t = { 0 };

	if (read(fd, &t, sizeof(t)) != sizeof(t))
		return 0;
	return t.enabled;
}

/* On the @nth online CPU, the consumer on another one. */
static void full_buffer_on(struct __test_metadata *_metadata, int nth)
{
	struct perf_event_attr attr, cs = {
		.size = sizeof(cs),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	}, clk = {
		.size = sizeof(clk),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	__u64 te, tc, head, cs0 = 0, n = 0;
	bool frozen = false, resumed;
	int fd, csfd, clkfd, go;
	int cpu = online_cpu(nth);
	struct capture s;
	double end;
	pid_t pid;

	ASSERT_EQ(0, pin_to(online_cpu(!nth)));
	ptsim_attr(&attr, 0);
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	napping = 0;
	pid = spawn_napper(cpu, &go);
	ASSERT_GT(pid, 0);
	csfd = perf_open(&cs, pid, -1, -1);
	ASSERT_GE(csfd, 0) TH_LOG("context switches: %s", strerror(errno));
	clkfd = perf_open(&clk, pid, -1, -1);
	ASSERT_GE(clkfd, 0) TH_LOG("task-clock: %s", strerror(errno));
	fd = ptsim_trace_task(_metadata, &s, &attr, pid, go, 4, false);

	/* Read the records, never aux_tail: the 16 KiB fill up. */
	for (end = now_ms() + 20000; !s.truncated && now_ms() < end;) {
		usleep(1000);
		capture_read_records(&s);
	}
	ASSERT_GE(s.truncated, 1) TH_LOG("CPU %d: the buffer never filled", cpu);

	/*
	 * The enabled time stops while the child still burns, i.e. it
	 * stands still over 2 ms of the child's task-clock.
	 */
	for (end = now_ms() + 20000; !frozen && now_ms() < end;) {
		te = time_enabled(fd);
		tc = read_count(clkfd);
		while (read_count(clkfd) < tc + 2000000 && now_ms() < end)
			usleep(500);
		frozen = te && te == time_enabled(fd);
	}
	EXPECT_TRUE(frozen) TH_LOG("CPU %d: still enabled after TRUNCATED", cpu);

	/* Make room, have the child scheduled out and in many times. */
	head = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&s.pg->aux_tail, head, __ATOMIC_RELEASE);
	if (read(csfd, &cs0, sizeof(cs0)) != sizeof(cs0))
		cs0 = 0;
	kill(pid, SIGUSR1);
	for (end = now_ms() + 20000; now_ms() < end;) {
		if (read(csfd, &n, sizeof(n)) != sizeof(n) || n >= cs0 + 50 ||
		    __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE) != head)
			break;
		usleep(1000);
	}
	resumed = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE) != head;
	TH_LOG("CPU %d: truncated=%lu switches %llu -> %llu, tracing %s without ENABLE",
	       cpu, s.truncated,
	       (unsigned long long)cs0, (unsigned long long)n,
	       resumed ? "resumed" : "stayed off");
	EXPECT_TRUE(resumed || n >= cs0 + 50) TH_LOG("the child was not scheduled");
	EXPECT_FALSE(resumed) TH_LOG("CPU %d: a full buffer did not disable", cpu);

	/* ENABLE, as a tool does after TRUNCATED: tracing goes on. */
	capture_read_records(&s);
	head = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&s.pg->aux_tail, head, __ATOMIC_RELEASE);
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	for (end = now_ms() + 20000; now_ms() < end &&
	     __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE) == head;)
		usleep(1000);
	EXPECT_NE(head, __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE))
		TH_LOG("CPU %d: no trace after ENABLE", cpu);
	EXPECT_TRUE(stop_burner(pid));
	close(clkfd);
	close(csfd);
	close(fd);
	capture_free(&s);
}

TEST_F(two_cpus, full_buffer_disables)
{
	struct nmi_counts nmi = ptsim_nmi_counts();

	full_buffer_on(_metadata, 0);
	full_buffer_on(_metadata, 1);
	/* TRUNCATED, and the disable it asks for, came from the NMI. */
	EXPECT_NMI(nmi, pmi, 2);
}

/*
 * Snapshot (overwrite) mode: the AUX area is mapped read-only and ptsim
 * wraps freely; stopping the event publishes the head as intel_pt does,
 * its offset into the area, and the PERF_RECORD_AUX of the transaction
 * says how much it wrote (at most the area's size): the newest aux_size
 * bytes below the head are a valid, gap-free trace.  A second snapshot
 * continues the numbering.
 *
 * aux_head moves only when the event stops, so each round waits for the
 * event's count, the bytes the engine has produced (brought up to date
 * at every tick), rather than for a fixed time: the child burns until it
 * is killed, however slowly the guest runs.
 */
static bool wait_produced(int fd, __u64 bytes, int timeout_ms)
{
	double end = now_ms() + timeout_ms;
	__u64 count = 0;

	while (now_ms() < end) {
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			return false;
		if (count >= bytes)
			return true;
		usleep(1000);
	}
	return false;
}

TEST_F(ptsim, snapshot)
{
	struct perf_event_attr attr;
	struct capture s;
	struct pt_check w;
	__u64 head, produced, first_last;
	pid_t pid;
	int fd, i;

	ptsim_attr(&attr, 0);
	fd = ptsim_trace_burner(_metadata, &s, &attr, -1, 8, true, &pid);

	/* Twice the buffer: it has wrapped at least once. */
	EXPECT_TRUE(wait_produced(fd, 2 * s.aux_size, 20000))
		TH_LOG("the engine never produced twice the buffer");
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(produced), read(fd, &produced, sizeof(produced)));
	head = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
	EXPECT_LT(head, s.aux_size) TH_LOG("aux_head %llu is not an offset",
					   (unsigned long long)head);
	EXPECT_EQ(s.aux_size, capture_snapshot(&s))
		TH_LOG("the records do not say the buffer wrapped");
	pt_check_trace(&s, &w, 0);
	EXPECT_GT(w.ptw64, 100);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.gaps);
	first_last = w.last_seq;

	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	/* A full buffer more: the second snapshot holds only new data. */
	EXPECT_TRUE(wait_produced(fd, produced + s.aux_size, 20000))
		TH_LOG("the engine stopped after the first snapshot");
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_EQ(s.aux_size, capture_snapshot(&s));
	EXPECT_TRUE(stop_burner(pid));
	capture_read_records(&s);

	pt_check_trace(&s, &w, 0);
	capture_save(&s, "snapshot");
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	EXPECT_GT(w.last_seq, first_last);
	/* No TRUNCATED in overwrite mode; records say OVERWRITE. */
	EXPECT_EQ(0, s.truncated);
	EXPECT_GE(s.aux_records, 1);
	for (i = 0; i < (int)s.nrecs; i++) {
		if (s.recs[i].type != PERF_RECORD_AUX)
			continue;
		EXPECT_TRUE(s.recs[i].c & PERF_AUX_FLAG_OVERWRITE);
		/* The offset is the head handed over: in the area. */
		EXPECT_LT(s.recs[i].a, s.aux_size);
		EXPECT_LE(s.recs[i].b, s.aux_size);
	}
	close(fd);
	capture_free(&s);
}

/*
 * aux_watermark: ptsim "interrupts" when a transaction reaches it, so
 * every PERF_RECORD_AUX is at most a watermark (plus one record and the
 * region padding) long and poll() wakes the consumer repeatedly.
 */
TEST_F(ptsim, watermark)
{
	const int wm = 16 * 1024;
	struct capture s;
	struct pt_check w;
	__u64 max = 0;
	size_t i;
	int fd;

	fd = trace_child(_metadata, &s, 0, 64, 300, wm);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "watermark");
	for (i = 0; i < s.nrecs; i++)
		if (s.recs[i].type == PERF_RECORD_AUX && s.recs[i].b > max)
			max = s.recs[i].b;
	TH_LOG("bytes=%zu aux_records=%lu wakeups=%lu largest=%llu",
	       s.len, s.aux_records, s.wakeups, (unsigned long long)max);
	EXPECT_LE(max, wm + 64);
	EXPECT_GE(s.aux_records, s.len / wm);
	EXPECT_GE(s.wakeups, 2);
	expect_clean(_metadata, &s, &w);
	close(fd);
	capture_free(&s);
}

/*
 * Region alignment: no packet crosses a region end.  ptsim pads the rest
 * of a region and skips it with perf_aux_output_skip(), so PAD packets
 * appear and AUX records are not contiguous.
 */
TEST_F(ptsim, region_pad_skip)
{
	const size_t region = 4 * 4096;
	struct capture s;
	struct pt_check w;
	unsigned long holes = 0;
	__u64 end = 0;
	size_t i;
	int fd;

	fd = trace_child(_metadata, &s, PTSIM_CFG1_REGION(2), 16, 200, 0);
	pt_check_trace(&s, &w, region);
	capture_save(&s, "region_pad_skip");
	for (i = 0; i < s.nrecs; i++) {
		struct aux_rec *r = &s.recs[i];

		if (r->type != PERF_RECORD_AUX || !r->b)
			continue;
		if (r->a > end)
			holes++;
		end = r->a + r->b;
	}
	TH_LOG("bytes=%zu pad=%lu skipped_holes=%lu straddles=%lu",
	       s.len, w.pad, holes, w.straddles);
	EXPECT_GT(s.len, 2 * region);
	EXPECT_EQ(0, w.straddles);
	EXPECT_GT(w.pad, 0);
	EXPECT_GT(holes, 0);
	expect_clean(_metadata, &s, &w);
	close(fd);
	capture_free(&s);
}

/*
 * FIFO overflow: a 512-byte FIFO filled at 16 KiB a tick and drained at
 * 1 KiB a tick drops records; each gap is covered exactly by an OVF and
 * the byte count in the PTW that follows it.
 */
TEST_F(ptsim, fifo_overflow)
{
	struct capture s;
	struct pt_check w;
	int fd;

	fd = trace_child(_metadata, &s, PTSIM_CFG1_RATE(1024) | PTSIM_CFG1_FIFO(9) |
			 PTSIM_CFG1_DRAIN(1), 64, 200, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "fifo_overflow");
	TH_LOG("bytes=%zu ovf=%lu gaps=%lu", s.len, w.ovf, w.gaps);
	EXPECT_GT(w.ovf, 0);
	EXPECT_GT(w.gaps, 0);
	EXPECT_EQ(0, w.unexplained);
	EXPECT_EQ(0, w.errors);
	close(fd);
	capture_free(&s);
}

/*
 * An inherited per-CPU event: children traced on the first online CPU
 * write into the parent event's buffer, one numbering, no gaps.
 */
TEST_F(two_cpus, inherit_to_parent_buffer)
{
	struct perf_event_attr attr;
	struct capture s;
	struct pt_check w;
	pid_t pid[2];
	int fd, go[2], i, kids = 0, mine = 0;
	size_t r;

	/*
	 * The consumer stays off the first CPU, so only the children are
	 * traced there; each PERF_RECORD_AUX names the task whose event
	 * wrote it.
	 */
	ASSERT_EQ(0, pin_to(online_cpu(1)));
	ptsim_attr(&attr, 0);
	attr.inherit = 1;
	fd = perf_open(&attr, 0, online_cpu(0), -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, 0, 16, 256, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	/* Children created now inherit the enabled event. */
	for (i = 0; i < 2; i++) {
		pid[i] = spawn_burner(150, online_cpu(0), &go[i]);
		ASSERT_GT(pid[i], 0);
	}
	for (i = 0; i < 2; i++)
		release(go[i]);
	for (i = 0; i < 2; i++)
		ptsim_until_exit(_metadata, &s, pid[i]);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "inherit_to_parent_buffer");
	for (r = 0; r < s.nrecs; r++) {
		if (s.recs[r].type == PERF_RECORD_AUX &&
		    s.recs[r].pid == (__u32)getpid())
			mine++;
		for (i = 0; i < 2; i++)
			if (s.recs[r].type == PERF_RECORD_AUX &&
			    s.recs[r].pid == (__u32)pid[i])
				kids |= 1 << i;
	}
	TH_LOG("bytes=%zu itrace_start=%lu kids=%x", s.len, s.itrace_start,
	       kids);
	EXPECT_GT(s.len, 16 * 1024);
	EXPECT_EQ(3, kids) TH_LOG("no AUX record from a child");
	EXPECT_EQ(0, mine) TH_LOG("the parent, off CPU %d, was traced",
				  online_cpu(0));
	EXPECT_GE(s.itrace_start, 1);
	expect_clean(_metadata, &s, &w);
	close(fd);
	capture_free(&s);
}

/* A per-CPU event traces whatever runs on its CPU. */
TEST_F(ptsim, per_cpu)
{
	struct perf_event_attr attr;
	struct capture s;
	struct pt_check w;
	int fd, go, cpu;
	pid_t pid;

	cpu = online_cpu(cpus_online() > 1 ? 1 : 0);
	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, -1, cpu, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, 0, 16, 256, false));
	pid = spawn_burner(200, cpu, &go);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	release(go);
	ptsim_until_exit(_metadata, &s, pid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "per_cpu");
	TH_LOG("cpu=%d bytes=%zu", cpu, s.len);
	EXPECT_GT(s.len, 64 * 1024);
	expect_clean(_metadata, &s, &w);
	EXPECT_EQ(0, w.first_seq);
	close(fd);
	capture_free(&s);
}

#define EVERY_CPU_MAX	64
#define EVERY_CPU_BYTES	(256 * 1024)
/*
 * A quarter of ptsim's default rate: 16 records a tick, 2.5 MB/s.  The
 * consumer sees a CPU's trace late (on the debug kernel up to 1.4 MB
 * after the 256 KiB it waits for, at the default rate), and a CPU whose
 * area fills before it is stopped is TRUNCATED: at this rate the 4 MiB
 * hold four times the lag.
 */
#define EVERY_CPU_RATE	16

/*
 * Every online CPU traced at once, as by perf record -a: a per-CPU event
 * on each, its own AUX area of 4 MiB with a 64 KiB watermark, a child
 * burning on each, and one consumer polling them all; a CPU's event is
 * disabled and its child stopped once it has written EVERY_CPU_BYTES
 * (the CPUs of a TCG guest get very different shares of the host: a time
 * would not do, nor would letting the fast ones fill their areas while
 * the slow ones catch up).  Each CPU's trace is complete and in order,
 * the PMIs that ended and began its transactions came in NMI on that
 * CPU, and the host decodes each (every_cpu<N>).  make check runs it
 * with 2 CPUs and with 8, make fuzz with 72 (tracing 64): there, on a
 * TCG host of 2 cores, it needs two minutes and more, hence its timeout.
 *
 * The consumer, also pause_resume_every_cpu's: poll every CPU's area; a
 * CPU for which @work has reached @goal has its event group disabled and
 * its child stopped, the others go on.  A CPU whose work has not moved
 * for EVERY_CPU_STALL_MS is stopped too, short of its goal, which its
 * case then reports: the time the whole takes is the host's (64 vCPUs of
 * a TCG guest on a host of 2 cores need minutes where 8 need seconds),
 * that each CPU's trace goes on is the kernel's.  @pid[i] is 0
 * afterwards.  The arrays, and the first argument of @work, are indexed
 * by the CPU's rank among the online ones (online_cpu()), not by its id.
 */
#define EVERY_CPU_STALL_MS	30000

static void every_cpu_until(struct __test_metadata *_metadata, long ncpu,
			    int *fd, struct capture *s, pid_t *pid,
			    long (*work)(int i, struct capture *s, void *arg),
			    long goal, void *arg)
{
	long done[EVERY_CPU_MAX] = { 0 };
	double moved[EVERY_CPU_MAX];
	int i, left;

	for (i = 0; i < ncpu; i++)
		moved[i] = now_ms();
	do {
		usleep(1000);
		for (i = 0, left = 0; i < ncpu; i++) {
			long w;

			if (!pid[i])
				continue;
			capture_poll(&s[i], 0);
			w = work(i, &s[i], arg);
			if (w != done[i]) {
				done[i] = w;
				moved[i] = now_ms();
			}
			if (w < goal && now_ms() < moved[i] + EVERY_CPU_STALL_MS) {
				left++;
				continue;
			}
			if (w < goal)
				TH_LOG("CPU %d: no progress in %d s, at %ld of %ld",
				       online_cpu(i), EVERY_CPU_STALL_MS / 1000,
				       w, goal);
			ioctl(fd[i], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
			EXPECT_TRUE(stop_burner(pid[i]));
			pid[i] = 0;
		}
	} while (left);
}

static long every_cpu_bytes(int i, struct capture *s, void *arg)
{
	return s->len;
}

/*
 * How many CPUs every_cpu and pause_resume_every_cpu trace: every one
 * the tests may use (online_cpu()), or on a machine with more than
 * EVERY_CPU_MAX the first EVERY_CPU_MAX of them, which the case says.
 */
static int every_cpu_count(struct __test_metadata *_metadata)
{
	int n = cpus_online();

	if (n > EVERY_CPU_MAX) {
		TH_LOG("%d CPUs online: tracing the first %d of them", n,
		       EVERY_CPU_MAX);
		n = EVERY_CPU_MAX;
	}
	return n;
}

TEST_F_TIMEOUT(ptsim, every_cpu, 300)
{
	const char *nonmi = ptsim_debugfs_missing();
	int fd[EVERY_CPU_MAX], go[EVERY_CPU_MAX], i, cpu;
	long ncpu = every_cpu_count(_metadata), pmi0[EVERY_CPU_MAX];
	struct capture s[EVERY_CPU_MAX];
	struct perf_event_attr attr;
	pid_t pid[EVERY_CPU_MAX];
	char name[32];
	struct pt_check w;

	ASSERT_LE(1, ncpu);
	if (PTSIM_NMI_EXPECTED && nonmi)
		TH_LOG("PMIs in NMI on each CPU not checked: %s", nonmi);
	ptsim_attr(&attr, PTSIM_CFG1_RATE(EVERY_CPU_RATE));
	attr.aux_watermark = 64 * 1024;
	for (i = 0; i < ncpu; i++) {
		cpu = online_cpu(i);
		pmi0[i] = ptsim_nmi_on(cpu, "pmi");
		fd[i] = perf_open(&attr, -1, cpu, -1);
		ASSERT_GE(fd[i], 0) TH_LOG("CPU %d: perf_event_open: %s",
					   cpu, strerror(errno));
		ASSERT_EQ(0, capture_map(&s[i], fd[i], attr.config1, 16, 1024,
					 false));
		pid[i] = spawn_burner(-1, cpu, &go[i]);
		ASSERT_GT(pid[i], 0);
	}
	for (i = 0; i < ncpu; i++)
		ASSERT_EQ(0, ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < ncpu; i++)
		release(go[i]);
	/* A CPU that has written enough stops, the others go on. */
	every_cpu_until(_metadata, ncpu, fd, s, pid, every_cpu_bytes,
			EVERY_CPU_BYTES, NULL);
	for (i = 0; i < ncpu; i++) {
		cpu = online_cpu(i);
		capture_poll(&s[i], 0);
		pt_check_trace(&s[i], &w, 0);
		snprintf(name, sizeof(name), "every_cpu%d", cpu);
		capture_save(&s[i], name);
		TH_LOG("CPU %d: bytes=%zu aux_records=%lu ptw=%lu pmi=%ld",
		       cpu, s[i].len, s[i].aux_records, w.ptw64,
		       ptsim_nmi_on(cpu, "pmi") - pmi0[i]);
		EXPECT_GE(s[i].len, EVERY_CPU_BYTES) TH_LOG("CPU %d", cpu);
		expect_clean(_metadata, &s[i], &w);
		EXPECT_EQ(0, w.first_seq);
		EXPECT_EQ(0, s[i].truncated);
		if (PTSIM_NMI_EXPECTED && !nonmi)
			EXPECT_GT(ptsim_nmi_on(cpu, "pmi"), pmi0[i])
				TH_LOG("CPU %d: no PMI in NMI", cpu);
		close(fd[i]);
		capture_free(&s[i]);
	}
}

/*
 * The engine's rate in the pause tests, written out so that the bound in
 * pause_resume can be computed from it: 64 data records per 100 us tick
 * (ptsim's defaults).
 */
#define PAUSE_RATE	64
#define PAUSE_TICK_US	100
/* The member's task-clock period: its first overflow pauses (or resumes). */
#define MEMBER_PERIOD_MS 10

/*
 * The _NMI runs take ptsim_mark as the member: its overflow is ptsim's
 * PMI, so the core pauses or resumes the trace (pmu::stop/start with
 * PERF_EF_PAUSE/RESUME) in NMI, as for a hardware counter.  Its period
 * is in engine ticks, the same 10 ms, which run only while the child
 * does, as its task-clock: the bounds of pause_resume hold.
 */
enum pause_run { PLAIN, START_PAUSED, RESUMED, PAUSED, RESUMED_NMI, PAUSED_NMI };
#define MARK_PERIOD_TICKS (MEMBER_PERIOD_MS * 1000 / PAUSE_TICK_US)

struct pause_result {
	size_t records;		/* data records (PTW) in the trace */
	__u64 task_ns;		/* the child's task-clock when it was stopped */
	bool reached;		/* what the run waited for came */
};

/*
 * Pause and resume (aux_action): a ptsim leader opened with
 * aux_start_paused produces nothing until a group member whose overflow
 * has aux_resume set fires; one with aux_pause stops it again.
 *
 * The child burns until it is killed.  The run stops it once it has seen
 * what it waits for, never after a fixed time: the plain run once the
 * trace holds @want records, the others once the child's task-clock (a
 * counting event of its own, outside the group) reaches @want_ns.
 * @shared: the leader's output goes to a dummy owner's buffer
 * (PERF_EVENT_IOC_SET_OUTPUT, as perf record shares one buffer per CPU),
 * so the pause and resume act on a buffer the leader does not own; the
 * events and the child are then on the first online CPU, as SET_OUTPUT
 * wants.
 */
static struct pause_result trace_paused(struct __test_metadata *_metadata,
					enum pause_run run, bool shared,
					size_t want, __u64 want_ns,
					const char *name)
{
	struct perf_event_attr attr, clk = {
		.size = sizeof(clk),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
	}, sw = {
		.size = sizeof(sw),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = MEMBER_PERIOD_MS * 1000 * 1000,
		/*
		 * Kernel time counts too: a task-clock overflow that lands
		 * in kernel mode is dropped when kernel time is excluded,
		 * and on a starved guest, busy with interrupts, most of
		 * them did, so the pause came arbitrarily late.
		 */
		.exclude_kernel = 0,
	};
	struct pause_result r = { 0 };
	struct capture s;
	struct pt_check w;
	int fd, mfd = -1, cfd, owner, go, cpu = shared ? online_cpu(0) : -1;
	double end;
	pid_t pid;

	ptsim_attr(&attr, PTSIM_CFG1_RATE(PAUSE_RATE) | PTSIM_CFG1_PERIOD(PAUSE_TICK_US));
	attr.aux_start_paused = run == START_PAUSED || run == RESUMED ||
				run == RESUMED_NMI;
	pid = spawn_burner(-1, cpu, &go);
	if (pid <= 0)
		return r;
	fd = perf_open(&attr, pid, cpu, -1);
	EXPECT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	if (run == RESUMED_NMI || run == PAUSED_NMI) {
		sw = (struct perf_event_attr){
			.size = sizeof(sw),
			.type = pmu_type("ptsim_mark"),
			.sample_period = MARK_PERIOD_TICKS,
		};
		run = run == RESUMED_NMI ? RESUMED : PAUSED;
	}
	if (run == RESUMED || run == PAUSED) {
		sw.aux_pause = run == PAUSED;
		sw.aux_resume = run == RESUMED;
		mfd = perf_open(&sw, pid, cpu, fd);
		EXPECT_GE(mfd, 0) TH_LOG("member: %s", strerror(errno));
	}
	cfd = perf_open(&clk, pid, -1, -1);
	EXPECT_GE(cfd, 0) TH_LOG("task-clock: %s", strerror(errno));
	owner = shared ? dummy_open_on(0, cpu) : fd;
	EXPECT_GE(owner, 0) TH_LOG("owner: %s", strerror(errno));
	EXPECT_EQ(0, capture_map_shared(&s, fd, owner, 0, 16, 256, false));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	EXPECT_EQ(0, ioctl(cfd, PERF_EVENT_IOC_ENABLE, 0));
	release(go);
	for (end = now_ms() + 20000; now_ms() < end && !r.reached;) {
		capture_poll(&s, 10);
		if (want)
			r.reached = s.len >= want * PTSIM_REC;
		else
			r.reached = read_count(cfd) >= want_ns;
	}
	r.task_ns = read_count(cfd);
	EXPECT_TRUE(stop_burner(pid));
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, name);
	r.records = w.ptw64;
	TH_LOG("%s: bytes=%zu ptw=%lu pge=%lu pgd=%lu task-clock=%llu us%s",
	       name, s.len, w.ptw64, w.pge, w.pgd,
	       (unsigned long long)r.task_ns / 1000,
	       r.reached ? "" : " (never reached what it waited for)");
	expect_clean(_metadata, &s, &w);
	if (mfd >= 0)
		close(mfd);
	close(cfd);
	if (owner != fd)
		close(owner);
	close(fd);
	capture_free(&s);
	return r;
}

/*
 * The bounds checked here do not depend on how fast the guest runs.
 * The engine's hrtimer and the member's task clock both run only while
 * the child does, and a late tick is never caught up, so before the
 * first member overflow at most MEMBER_PERIOD_MS / PAUSE_TICK_US ticks
 * produce, PAUSE_RATE records each; the tick after the pause still
 * may (tracing stops "within one tick", see ptsim.c), and one more for
 * the timer that is restarted at each sched-in rounds the bound up.
 *
 * The unpaused control runs until it has produced four times the bound,
 * so the bound means something however slow the guest; the paused runs
 * go on for the member's period plus twice the control's task-clock, in
 * which an engine that ignored the pause would produce about eight
 * times the bound.
 *
 * That nothing is written before the resume is not asserted: the
 * member's first task-clock overflow, which resumes, can come at the
 * child's first sched-in rather than after its period (seen on every
 * kernel: a resumed trace whose TIP.PGE is at the child's return from
 * read(), and paused runs stopped after one or two ticks), so the
 * resume's time is not known.  start_paused, which no member resumes,
 * must write nothing at all.
 */
#define PAUSE_BOUND	((size_t)(MARK_PERIOD_TICKS + 2) * PAUSE_RATE)

/*
 * The control, then (not @nmi) start_paused, then a member that resumes
 * and one that pauses; @nmi: the member is ptsim_mark (the _NMI runs).
 */
static void pause_runs(struct __test_metadata *_metadata, bool nmi,
		       bool shared)
{
	const char *pre = !nmi ? "pause" : shared ? "pause_shared_nmi" : "pause_nmi";
	struct pause_result plain, paused, resumed, pause_member;
	char name[40];
	__u64 long_ns;

	snprintf(name, sizeof(name), "%s_plain", pre);
	plain = trace_paused(_metadata, PLAIN, shared, 4 * PAUSE_BOUND, 0, name);
	ASSERT_TRUE(plain.reached) TH_LOG("the control never produced %zu records",
					  4 * PAUSE_BOUND);
	long_ns = MEMBER_PERIOD_MS * 1000000ULL + 2 * plain.task_ns;
	if (!nmi) {
		paused = trace_paused(_metadata, START_PAUSED, false, 0, long_ns,
				      "pause_start_paused");
		TH_LOG("data records: start_paused=%zu", paused.records);
		EXPECT_TRUE(paused.reached);
		EXPECT_EQ(0, paused.records);
	}
	snprintf(name, sizeof(name), "%s_resumed", pre);
	resumed = trace_paused(_metadata, nmi ? RESUMED_NMI : RESUMED, shared,
			       4 * PAUSE_RATE, 0, name);
	snprintf(name, sizeof(name), "%s_paused", pre);
	pause_member = trace_paused(_metadata, nmi ? PAUSED_NMI : PAUSED, shared,
				    0, long_ns, name);
	TH_LOG("data records: plain=%zu resumed=%zu paused=%zu (bound %zu)",
	       plain.records, resumed.records, pause_member.records, PAUSE_BOUND);
	EXPECT_GT(plain.records, PAUSE_BOUND);
	EXPECT_TRUE(resumed.reached);
	EXPECT_GT(resumed.records, 2 * PAUSE_RATE);
	EXPECT_TRUE(pause_member.reached);
	EXPECT_LE(pause_member.records, PAUSE_BOUND);
}

TEST_F(ptsim, pause_resume)
{
	pause_runs(_metadata, false, false);
}

/* The same from NMI (the _NMI runs), in each form of trace_paused(). */
TEST_F(mark_form, pause_resume_nmi)
{
	struct nmi_counts nmi = ptsim_nmi_counts();

	pause_runs(_metadata, true, variant->form == SHARED);
	/* One overflow at least in each run, each an NMI. */
	EXPECT_NMI(nmi, mark, 2);
}

/*
 * Pause and resume from NMI on every online CPU at once, as perf record
 * -a with a pausing counter does: on each CPU a per-CPU ptsim leader and
 * a ptsim_mark member with aux_resume (the leader starts paused) or
 * aux_pause, and a child burning there.
 *
 * Bounded by work, not time (eight vCPUs on a TCG host of two get very
 * different shares): a resumed CPU stops once its trace holds
 * 4 * PAUSE_RATE records; a paused one once its mark has counted eight
 * member periods of engine ticks (the mark counts its leader's ticks,
 * paused or not), in which an engine that ignored the pause would write
 * about eight times the bound of pause_resume.  Each CPU's mark must
 * have overflowed there, in NMI.
 */
static long pause_cpu_goal(bool resume)
{
	return resume ? 4 * PAUSE_RATE * PTSIM_REC : 8 * MARK_PERIOD_TICKS;
}

struct pause_cpus {
	bool resume;
	int *mfd;			/* each CPU's ptsim_mark member */
	bool reached[EVERY_CPU_MAX];
};

static long pause_cpu_work(int i, struct capture *s, void *arg)
{
	struct pause_cpus *pc = arg;
	long w = pc->resume ? (long)s->len : (long)read_count(pc->mfd[i]);

	pc->reached[i] = w >= pause_cpu_goal(pc->resume);
	return w;
}

static void pause_every_cpu(struct __test_metadata *_metadata, bool resume)
{
	long ncpu = every_cpu_count(_metadata), mark0[EVERY_CPU_MAX];
	int fd[EVERY_CPU_MAX], mfd[EVERY_CPU_MAX], go[EVERY_CPU_MAX];
	struct perf_event_attr attr, mark = {
		.size = sizeof(mark),
		.type = pmu_type("ptsim_mark"),
		.sample_period = MARK_PERIOD_TICKS,
		.aux_pause = !resume,
		.aux_resume = resume,
	};
	struct pause_cpus pc = { .resume = resume, .mfd = mfd };
	const char *nonmi = ptsim_debugfs_missing();
	struct capture s[EVERY_CPU_MAX];
	pid_t pid[EVERY_CPU_MAX];
	struct pt_check w;
	int i, cpu;

	ASSERT_LE(1, ncpu);
	if (PTSIM_NMI_EXPECTED && nonmi)
		TH_LOG("mark overflows in NMI on each CPU not checked: %s", nonmi);
	ptsim_attr(&attr, PTSIM_CFG1_RATE(PAUSE_RATE) | PTSIM_CFG1_PERIOD(PAUSE_TICK_US));
	attr.aux_start_paused = resume;
	for (i = 0; i < ncpu; i++) {
		cpu = online_cpu(i);
		mark0[i] = ptsim_nmi_on(cpu, "mark");
		fd[i] = perf_open(&attr, -1, cpu, -1);
		ASSERT_GE(fd[i], 0) TH_LOG("CPU %d: perf_event_open: %s",
					   cpu, strerror(errno));
		mfd[i] = perf_open(&mark, -1, cpu, fd[i]);
		ASSERT_GE(mfd[i], 0) TH_LOG("CPU %d: member: %s", cpu,
					    strerror(errno));
		ASSERT_EQ(0, capture_map(&s[i], fd[i], 0, 16, 256, false));
		pid[i] = spawn_burner(-1, cpu, &go[i]);
		ASSERT_GT(pid[i], 0);
	}
	for (i = 0; i < ncpu; i++)
		ASSERT_EQ(0, ioctl(fd[i], PERF_EVENT_IOC_ENABLE,
				   PERF_IOC_FLAG_GROUP));
	for (i = 0; i < ncpu; i++)
		release(go[i]);
	every_cpu_until(_metadata, ncpu, fd, s, pid, pause_cpu_work,
			pause_cpu_goal(resume), &pc);
	for (i = 0; i < ncpu; i++) {
		cpu = online_cpu(i);
		capture_poll(&s[i], 0);
		pt_check_trace(&s[i], &w, 0);
		TH_LOG("CPU %d %s: ptw=%lu mark ticks=%llu mark NMIs=%ld (bound %zu)",
		       cpu, resume ? "resumed" : "paused", w.ptw64,
		       (unsigned long long)read_count(mfd[i]),
		       ptsim_nmi_on(cpu, "mark") - mark0[i], PAUSE_BOUND);
		EXPECT_TRUE(pc.reached[i]) TH_LOG("CPU %d never got there", cpu);
		if (resume)
			EXPECT_GT(w.ptw64, 2 * PAUSE_RATE) TH_LOG("CPU %d", cpu);
		if (!resume)
			EXPECT_LE(w.ptw64, PAUSE_BOUND) TH_LOG("CPU %d", cpu);
		expect_clean(_metadata, &s[i], &w);
		if (PTSIM_NMI_EXPECTED && !nonmi)
			EXPECT_GT(ptsim_nmi_on(cpu, "mark"), mark0[i])
				TH_LOG("CPU %d: no mark overflow in NMI", cpu);
		close(mfd[i]);
		close(fd[i]);
		capture_free(&s[i]);
	}
}

TEST_F_TIMEOUT(mark, pause_resume_every_cpu, 450)
{
	pause_every_cpu(_metadata, true);
	pause_every_cpu(_metadata, false);
}

/*
 * A throttled group: the perf core stops the whole group of a member
 * whose overflows come too fast (perf_event_throttle_group()), the
 * ptsim leader included, from the member's overflow, which for
 * ptsim_mark is in ptsim's own NMI; the tick that raised that PMI is
 * waiting for it, and a core PMU counter's NMI would come anywhere.
 * pmu::stop there must neither take the tick timer's lock nor flush the
 * FIFO (ptsim_stop()).  With perf_event_max_sample_rate lowered to
 * THROTTLE_RATE (saved and restored) and a member of sample_period 1,
 * each jiffy's second overflow throttles; the core starts the group
 * again at its next tick.  Until THROTTLE_WANT throttles and as many
 * unthrottles are logged (in the leader's data area), at most 20 s: the
 * trace must still be clean, and on a kernel with lockdep a lock taken
 * in NMI is a splat, which fails the boot.  Before 6.16 the core
 * throttled the member alone, and logged nothing into the leader's
 * buffer: a skip there.
 */
#define THROTTLE_RATE	100
#define THROTTLE_WANT	8

/* Does this kernel throttle a whole group (6.16 and later)? */
static bool throttles_group(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 16);
}

TEST_F_TIMEOUT(mark, throttle_in_nmi, 90)
{
	long old = read_long("/proc/sys/kernel/perf_event_max_sample_rate");
	struct perf_event_attr attr, mark = {
		.size = sizeof(mark),
		.type = pmu_type("ptsim_mark"),
		.sample_period = 1,
		.exclude_kernel = 1,
	};
	struct nmi_counts nmi = ptsim_nmi_counts();
	int fd, mfd, go;
	struct capture s;
	struct pt_check w;
	double end;
	pid_t pid;

	if (!throttles_group())
		SKIP(return, "this kernel throttles a member alone, not its group (6.16)");
	ASSERT_GT(old, 0);
	if (write_long("/proc/sys/kernel/perf_event_max_sample_rate", THROTTLE_RATE))
		SKIP(return, "cannot set perf_event_max_sample_rate");
	ptsim_attr(&attr, 0);
	pid = spawn_burner(-1, -1, &go);
	ASSERT_GT(pid, 0);
	fd = perf_open(&attr, pid, -1, -1);
	EXPECT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	mfd = perf_open(&mark, pid, -1, fd);
	EXPECT_GE(mfd, 0) TH_LOG("member: %s", strerror(errno));
	EXPECT_EQ(0, capture_map(&s, fd, 0, 16, 64, false));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	release(go);
	for (end = now_ms() + 20000; now_ms() < end &&
	     (s.throttles < THROTTLE_WANT || s.unthrottles < THROTTLE_WANT);)
		capture_poll(&s, 10);
	EXPECT_TRUE(stop_burner(pid));
	write_long("/proc/sys/kernel/perf_event_max_sample_rate", old);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "throttle_in_nmi");
	TH_LOG("bytes=%zu ptw=%lu throttles=%lu unthrottles=%lu mark count=%llu",
	       s.len, w.ptw64, s.throttles, s.unthrottles,
	       (unsigned long long)read_count(mfd));
	EXPECT_GE(s.throttles, THROTTLE_WANT);
	EXPECT_GE(s.unthrottles, THROTTLE_WANT);
	EXPECT_GT(w.ptw64, 0);
	expect_clean(_metadata, &s, &w);
	EXPECT_NMI(nmi, mark, THROTTLE_WANT);
	close(mfd);
	close(fd);
	capture_free(&s);
}

/* ---- CPU hotplug under tracing ---- */

#define HOTPLUG_ROUNDS	3

/*
 * The start of a hotplug case: a child burning on the CPU that goes
 * offline (hotplug_cpu(), "CPU 1" below, the second online CPU), traced
 * by a ptsim event on it (per_cpu false) or on CPU 1 (per_cpu true), its
 * AUX area mapped into @s and the event enabled before the child starts;
 * the test itself on the first online CPU ("CPU 0").  Returns the
 * event's descriptor, or -1 with nothing left behind.
 */
static int hotplug_start(bool per_cpu, struct capture *s, pid_t *child)
{
	struct perf_event_attr attr;
	int fd, go, cpu = hotplug_cpu();

	if (cpu < 0 || pin_to(online_cpu(0)))
		return -1;
	ptsim_attr(&attr, 0);
	*child = spawn_burner(-1, cpu, &go);
	if (*child <= 0)
		return -1;
	fd = perf_open(&attr, per_cpu ? -1 : *child, per_cpu ? cpu : -1, -1);
	if (fd >= 0 && capture_map(s, fd, 0, 16, 2048, false)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		close(fd);
		capture_free(s);
		fd = -1;
	}
	release(go);
	if (fd < 0)
		stop_burner(*child);
	return fd;
}

/*
 * A per-task event traces a child that burns on CPU 1 while CPU 1 goes
 * offline and comes back, HOTPLUG_ROUNDS times; the AUX transaction is
 * open whenever the engine runs, so each offline finds one open.  The
 * child moves to CPU 0 and back with its event, whose engine ends the
 * transaction at sched-out (in NMI mode, begun and ended by the PMI in
 * between): the trace goes on, decodes, and has no gap.
 */
TEST_F(hotplug, cpu_hotplug_task)
{
	struct nmi_counts nmi = ptsim_nmi_counts();
	int fd, i, cpu = hotplug_cpu();
	size_t before;
	struct capture s;
	struct pt_check w;
	pid_t pid;

	fd = hotplug_start(false, &s, &pid);
	ASSERT_GE(fd, 0) TH_LOG("setting up: %s", strerror(errno));
	for (i = 0; i < HOTPLUG_ROUNDS; i++) {
		before = s.len;
		EXPECT_TRUE(capture_until_len(&s, before + 64 * 1024, 20000))
			TH_LOG("round %d: no trace on CPU 1", i);
		ASSERT_EQ(0, cpu_set_online(cpu, 0)) TH_LOG("offline: %s", strerror(errno));
		before = s.len;
		EXPECT_TRUE(capture_until_len(&s, before + 64 * 1024, 20000))
			TH_LOG("round %d: no trace on CPU 0", i);
		ASSERT_EQ(0, cpu_set_online(cpu, 1)) TH_LOG("online: %s", strerror(errno));
		/* The kernel widened the child's affinity: back to CPU 1. */
		EXPECT_EQ(0, pin_task(pid, cpu));
	}
	EXPECT_TRUE(stop_burner(pid));
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "hotplug_task");
	TH_LOG("bytes=%zu aux_records=%lu ptw=%lu truncated=%lu", s.len,
	       s.aux_records, w.ptw64, s.truncated);
	expect_clean(_metadata, &s, &w);
	EXPECT_EQ(0, s.truncated);
	EXPECT_NMI(nmi, pmi, 1);
	close(fd);
	capture_free(&s);
}

/*
 * A per-CPU event on CPU 1, streaming, while CPU 1 goes offline: the
 * 6.12 core removes the events of a CPU that goes away from its context
 * (perf_event_exit_cpu_context(), DETACH_GROUP), so pmu::del ends the
 * open transaction on that CPU, and the event stays off: no trace comes
 * after CPU 1 is back, even after PERF_EVENT_IOC_ENABLE.  What was
 * written before decodes, and closing and unmapping frees everything
 * (ptsim's events and AUX buffers back to where they were).
 */
TEST_F(hotplug, cpu_hotplug_cpu)
{
	long events0 = ptsim_events(), bufs0 = ptsim_aux_bufs();
	int fd, rounds, cpu = hotplug_cpu();
	__u64 head;
	struct capture s;
	struct pt_check w;
	pid_t pid;

	fd = hotplug_start(true, &s, &pid);
	ASSERT_GE(fd, 0) TH_LOG("setting up: %s", strerror(errno));
	EXPECT_TRUE(capture_until_len(&s, 64 * 1024, 20000));
	ASSERT_EQ(0, cpu_set_online(cpu, 0)) TH_LOG("offline: %s", strerror(errno));
	capture_poll(&s, 0);
	head = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
	ASSERT_EQ(0, cpu_set_online(cpu, 1)) TH_LOG("online: %s", strerror(errno));
	EXPECT_EQ(0, pin_task(pid, cpu));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	/* 100 ms of the child on CPU 1: 1000 ticks, if it still traced. */
	for (rounds = 0; rounds < 10; rounds++)
		capture_poll(&s, 10);
	TH_LOG("aux_head %llu at offline, %llu after online and ENABLE",
	       (unsigned long long)head,
	       (unsigned long long)__atomic_load_n(&s.pg->aux_head,
						   __ATOMIC_ACQUIRE));
	EXPECT_EQ(head, __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE))
		TH_LOG("the event traced again after its CPU came back");
	EXPECT_TRUE(stop_burner(pid));
	pt_check_trace(&s, &w, 0);
	expect_clean(_metadata, &s, &w);
	EXPECT_GT(w.ptw64, 0);
	close(fd);
	capture_free(&s);
	if (events0 >= 0) {
		EXPECT_EQ(events0, ptsim_events());
		EXPECT_EQ(bufs0, ptsim_aux_bufs());
	} else {
		TH_LOG("ptsim's events and AUX buffers not checked: %s",
		       ptsim_debugfs_missing() ?: "no " PTSIM_DEBUGFS "/events");
	}
}

/*
 * A PERF_RECORD_AUX that does not fit in the data area is lost, not the
 * trace: it is counted, and reported with PERF_RECORD_LOST once there is
 * room again, while the AUX area goes on filling.  The data area here is
 * one page, which nobody reads until the AUX head has moved three times
 * after the page filled up (each move is a transaction that ended with
 * data, whose record found no room); the AUX area is read all along.
 * SHARED, the records go to the dummy owner's data area; INHERITED, they
 * are the child's, written to its parent's.
 */
#define AUX_REC_SIZE	40	/* header, offset, size, flags, sample_id TID */

TEST_F(form, aux_record_lost)
{
	struct nmi_counts nmi = ptsim_nmi_counts();
	enum form form = variant->form;
	struct perf_event_attr attr;
	int fd, owner, anchor = -1, go, moves = 0, cpu0 = online_cpu(0);
	__u64 head, seen = 0;
	struct capture s;
	struct pt_check w;
	pid_t pid = 0;
	double end;

	ptsim_attr(&attr, 0);
	if (form == INHERITED) {
		ASSERT_EQ(0, pin_to(online_cpu(1)));
		anchor = anchor_open();
		ASSERT_GE(anchor, 0) TH_LOG("anchor: %s", strerror(errno));
		attr.inherit = 1;
	} else {
		pid = spawn_burner(-1, form == SHARED ? cpu0 : -1, &go);
		ASSERT_GT(pid, 0);
	}
	fd = perf_open(&attr, pid, form == ALONE ? -1 : cpu0, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	owner = form == SHARED ? dummy_open_on(0, cpu0) : fd;
	ASSERT_GE(owner, 0) TH_LOG("owner: %s", strerror(errno));
	ASSERT_EQ(0, capture_map_shared(&s, fd, owner, 0, 1, 64, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	if (form == INHERITED) {
		/* Forked now, the burner inherits the enabled event. */
		pid = spawn_burner(-1, cpu0, &go);
		ASSERT_GT(pid, 0);
	}
	release(go);
	for (end = now_ms() + 20000; now_ms() < end && moves < 3; usleep(1000)) {
		__u64 used = __atomic_load_n(&s.pg->data_head, __ATOMIC_ACQUIRE) -
			     s.pg->data_tail;

		head = __atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE);
		/* A record needs one byte more than its size (CIRC_SPACE()). */
		if (s.data_size - used <= AUX_REC_SIZE) {
			if (seen && head != seen)
				moves++;
			seen = head;
		}
		capture_copy_aux(&s);
	}
	ASSERT_EQ(3, moves)
		TH_LOG("data never full, or AUX head stopped: %llu/%zu, head %llu, copied %zu",
		       (unsigned long long)(s.pg->data_head - s.pg->data_tail),
		       s.data_size, (unsigned long long)s.pg->aux_head, s.len);
	/* Room again: the next record brings the loss with it. */
	capture_read_records(&s);
	for (end = now_ms() + 20000; now_ms() < end && !s.lost;)
		capture_poll(&s, 10);
	EXPECT_TRUE(stop_burner(pid));
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	TH_LOG("bytes=%zu aux_records=%lu lost=%lu", s.len, s.aux_records, s.lost);
	EXPECT_LE(1, s.lost) TH_LOG("no PERF_RECORD_LOST for the records that found no room");
	EXPECT_EQ(__atomic_load_n(&s.pg->aux_head, __ATOMIC_ACQUIRE), s.len);
	expect_clean(_metadata, &s, &w);
	/* In every form, the PMI that ended the transactions was an NMI. */
	EXPECT_NMI(nmi, pmi, 1);
	if (owner != fd)
		close(owner);
	close(fd);
	if (anchor >= 0)
		close(anchor);
	capture_free(&s);
}

/*
 * A pause that finds no buffer pauses nothing.  An aux_pause member can
 * overflow while its AUX leader has no buffer: a per-CPU group stays
 * scheduled in when the leader's buffer is unmapped (that stops the
 * leader, not the group), and the member's cpu-clock goes on
 * overflowing.  The core has no trace to pause then, and must not record
 * a pause in hw.aux_paused either: with a new buffer, once the group is
 * scheduled in again, the leader traces.  Upstream 6.12 returns from
 * perf_event_aux_pause() the same way when ring_buffer_get() finds no
 * buffer.
 *
 * The member's period is 1 ms only while the buffer is gone, and
 * "never" before and after, so every overflow it has is one without a
 * buffer; its count shows that it ran meanwhile.  SHARED, the leader's
 * output goes to the dummy owner's buffer: unmapping it detaches every
 * event, and the new buffer is shared again.
 */
static void pause_nobuf(struct __test_metadata *_metadata, enum form form)
{
	const __u64 never = 1ULL << 62, period = 1000000;
	struct perf_event_attr attr, clk = {
		.size = sizeof(clk),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = never,
		.aux_pause = 1,
	};
	int fd, mfd, go, cpu, owner;
	__u64 before, now = 0;
	struct capture s;
	struct pt_check w;
	double end;
	pid_t pid;

	cpu = online_cpu(cpus_online() > 1 ? 1 : 0);
	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, -1, cpu, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	mfd = perf_open(&clk, -1, cpu, fd);
	ASSERT_GE(mfd, 0) TH_LOG("member: %s", strerror(errno));
	owner = form == SHARED ? dummy_open_on(-1, cpu) : fd;
	ASSERT_GE(owner, 0) TH_LOG("owner: %s", strerror(errno));
	pid = spawn_burner(-1, cpu, &go);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(0, capture_map_shared(&s, fd, owner, 0, 16, 256, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	release(go);
	ASSERT_TRUE(capture_until_len(&s, 64 * 1024, 20000))
		TH_LOG("no trace to begin with: %zu bytes", s.len);

	/* The buffer goes; the member overflows five times or more. */
	capture_free(&s);
	before = read_count(mfd);
	ASSERT_EQ(0, ioctl(mfd, PERF_EVENT_IOC_PERIOD, &period));
	for (end = now_ms() + 20000; now_ms() < end && now < before + 5 * period;
	     usleep(1000))
		now = read_count(mfd);
	ASSERT_EQ(0, ioctl(mfd, PERF_EVENT_IOC_PERIOD, &never));
	ASSERT_LE(before + 5 * period, now)
		TH_LOG("the member ran %llu ns without the buffer, want %llu",
		       (unsigned long long)(now - before),
		       (unsigned long long)(5 * period));

	/* A new buffer, the group scheduled in again: the leader traces. */
	ASSERT_EQ(0, capture_map_shared(&s, fd, owner, 0, 16, 256, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	EXPECT_TRUE(capture_until_len(&s, 64 * 1024, 20000))
		TH_LOG("%zu bytes of trace with the new buffer: the pause without a buffer counted",
		       s.len);
	EXPECT_TRUE(stop_burner(pid));
	ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	expect_clean(_metadata, &s, &w);
	close(mfd);
	if (owner != fd)
		close(owner);
	close(fd);
	capture_free(&s);
}

/*
 * pause_without_buffer in the inherited form: the group's copy in a
 * child, whose buffer is its parent's.  An inherited group is per task:
 * at its next sched-in after the unmap the leader cannot start (ptsim,
 * as intel_pt, fails pmu::add without a buffer) and the group stays out,
 * so the member must overflow at once, before the child is switched
 * out.  Its event is a page fault (period 1): the child spins on a
 * shared flag, touching nothing new, and on the flag, set just after the
 * unmap, faults FAULT_PAGES fresh pages.  The member is enabled only
 * while the child spins, with the buffer still there (a pause then would
 * be a real one); the enable reaches the child's copy, but on 6.12 (both
 * kernels) a copy enabled while its task runs joins the running group
 * only at the task's next sched-in, so the child is stopped and
 * continued first.  The member's count says whether the group was in
 * when the faults came; if a context switch came first (fewer faults
 * counted) the round is tried again, with a new child, up to ten
 * times (under run_kselftest.sh on the debug kernel, with the host
 * loaded, all of five rounds once counted none).  At the end a
 * new buffer is mapped, the child rescheduled the same way, and its
 * leader must trace.
 */
#define FAULT_PAGES	8

struct fault_ctl {
	int ready;	/* the child: set up, spinning */
	int go;		/* the test: fault now */
	int done;	/* the child: faulted */
};

static pid_t spawn_faulter(struct fault_ctl *ctl, int cpu)
{
	long psz = sysconf(_SC_PAGESIZE);
	pid_t parent = getpid();
	char *mem;
	pid_t pid;
	int i;

	memset(ctl, 0, sizeof(*ctl));
	pid = fork();
	if (pid)
		return pid;
	if (die_with(parent) || pin_to(cpu))
		_exit(2);
	mem = mmap(NULL, FAULT_PAGES * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(3);
	__atomic_store_n(&ctl->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < FAULT_PAGES; i++)
		mem[i * psz] = 1;
	__atomic_store_n(&ctl->done, 1, __ATOMIC_RELEASE);
	burn(-1);
	_exit(0);
}

static bool wait_flag(int *flag, int ms)
{
	double end = now_ms() + ms;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && now_ms() < end)
		usleep(100);
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* Switch @pid out and in again: its events are scheduled in anew. */
static bool reschedule(pid_t pid)
{
	int status;

	return !kill(pid, SIGSTOP) &&
	       waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status) &&
	       !kill(pid, SIGCONT);
}

/* The member's count and running time (read_format TOTAL_TIME_RUNNING). */
static __u64 read_running(int fd, __u64 *running)
{
	__u64 v[2] = { 0, 0 };

	if (read(fd, v, sizeof(v)) != sizeof(v))
		return 0;
	*running = v[1];
	return v[0];
}

static void pause_nobuf_inherited(struct __test_metadata *_metadata)
{
	struct perf_event_attr attr, flt = {
		.size = sizeof(flt),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_RUNNING,
		.disabled = 1,
		.inherit = 1,
		.aux_pause = 1,
	};
	int fd, mfd, anchor, round, faults = 0, cpu0 = online_cpu(0);
	__u64 before = 0, running = 0, ran = 0;
	struct fault_ctl *ctl;
	struct capture s;
	struct pt_check w;
	pid_t pid = 0;
	double end;

	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	ASSERT_EQ(0, pin_to(online_cpu(1)));
	anchor = anchor_open();
	ASSERT_GE(anchor, 0) TH_LOG("anchor: %s", strerror(errno));
	ptsim_attr(&attr, 0);
	attr.inherit = 1;
	fd = perf_open(&attr, 0, cpu0, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	mfd = perf_open(&flt, 0, cpu0, fd);
	ASSERT_GE(mfd, 0) TH_LOG("member: %s", strerror(errno));
	/* The leader alone: the member is enabled once the child spins. */
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	for (round = 0; round < 10 && faults < FAULT_PAGES; round++) {
		ASSERT_EQ(0, capture_map(&s, fd, 0, 16, 256, false));
		pid = spawn_faulter(ctl, cpu0);
		ASSERT_GT(pid, 0);
		ASSERT_TRUE(wait_flag(&ctl->ready, 20000));
		ASSERT_TRUE(capture_until_len(&s, 64 * 1024, 20000))
			TH_LOG("no trace to begin with: %zu bytes", s.len);
		ASSERT_EQ(0, ioctl(mfd, PERF_EVENT_IOC_ENABLE, 0));
		read_running(mfd, &ran);
		ASSERT_TRUE(reschedule(pid));
		/* Consumed meanwhile: a full area would disable the leader. */
		for (end = now_ms() + 20000; now_ms() < end; capture_poll(&s, 1)) {
			before = read_running(mfd, &running);
			if (running > ran)
				break;
		}
		ASSERT_LT(ran, running) TH_LOG("the child's member never ran");
		capture_free(&s);
		__atomic_store_n(&ctl->go, 1, __ATOMIC_RELEASE);
		ASSERT_TRUE(wait_flag(&ctl->done, 20000));
		ASSERT_EQ(0, ioctl(mfd, PERF_EVENT_IOC_DISABLE, 0));
		faults = read_running(mfd, &running) - before;
		TH_LOG("round %d: %d faults counted without the buffer, want %d",
		       round, faults, FAULT_PAGES);
		if (faults < FAULT_PAGES)
			EXPECT_TRUE(stop_burner(pid));
	}
	/* More faults may come: the child's first clock_gettime(), say. */
	ASSERT_LE(FAULT_PAGES, faults)
		TH_LOG("the child was switched out before it faulted, every round");

	/* A new buffer, the child's group scheduled in again: it traces. */
	ASSERT_EQ(0, capture_map(&s, fd, 0, 16, 256, false));
	ASSERT_TRUE(reschedule(pid));
	EXPECT_TRUE(capture_until_len(&s, 64 * 1024, 20000))
		TH_LOG("%zu bytes of trace with the new buffer: the pause without a buffer counted",
		       s.len);
	EXPECT_TRUE(stop_burner(pid));
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	expect_clean(_metadata, &s, &w);
	close(mfd);
	close(fd);
	close(anchor);
	capture_free(&s);
	munmap(ctl, sizeof(*ctl));
}

TEST_F(form, pause_without_buffer)
{
	if (variant->form == INHERITED)
		pause_nobuf_inherited(_metadata);
	else
		pause_nobuf(_metadata, variant->form);
}

TEST_HARNESS_MAIN
