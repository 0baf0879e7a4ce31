// SPDX-License-Identifier: GPL-2.0
/*
 * The AUX area contract in its inherited form: what a group opened on a
 * task with attr.inherit gives the threads and processes the task creates
 * afterwards, as 6.12 defines it.  An inherited child has no buffer of
 * its own: its trace, its samples and its pause/resume all go through its
 * parent's.  Each test traces only children: the events are per-CPU on
 * the first online CPU (an inherited per-task event cannot be mmap()ed)
 * and the test itself stays on the second, so every byte of trace and
 * every sample comes from a child.
 *
 *  - AUX sampling (aux_sample_size) in a forked child and in a thread:
 *    every sample carries the size asked of trace that decodes.
 *  - aux_action: a child's member with aux_pause stops the child's
 *    trace, one with aux_resume starts a child opened paused; a child
 *    opened paused without one produces nothing.
 *  - aux_output: a child's ptsim_mark samples go into the trace.
 * The sampling and aux_action cases are the fixture member's, run with a
 * task-clock member (variant task_clock) and again with ptsim_mark (nmi),
 * whose overflows in the child come in NMI, as a hardware counter's do,
 * which those check in ptsim's NMI counts.  aux_output (fixture mark)
 * raises no PMI: the engine writes the mark into the trace itself, as
 * PEBS via PT writes its records without an interrupt.  Every case needs
 * a second online CPU to stay on.
 */
#include "ptsim_lib.h"
#include <pthread.h>
#include <sys/syscall.h>
#include "ptsim_harness.h"

#define SAMPLE_SIZE	4096
#define DATA_PAGES	64
#define BURN_MS		300

/*
 * The test's own CPU, the second online one ("CPU 1"); the children are
 * traced on the first ("CPU 0"), whatever their ids (online_cpu()).
 */
#define HOME_CPU	online_cpu(1)
#define KIDS_CPU	online_cpu(0)

FIXTURE(member) {};
FIXTURE_VARIANT(member) {
	bool nmi;
};

FIXTURE_VARIANT_ADD(member, task_clock) {};
FIXTURE_VARIANT_ADD(member, nmi) { .nmi = true };
FIXTURE_SETUP(member)
{
	ptsim_need(_metadata, PTSIM_NEED_2CPUS |
		   (variant->nmi ? PTSIM_NEED_MARK : 0));
}

FIXTURE_TEARDOWN(member) {}

FIXTURE(mark) {};
FIXTURE_SETUP(mark)
{
	ptsim_need(_metadata, PTSIM_NEED_2CPUS | PTSIM_NEED_MARK);
}

FIXTURE_TEARDOWN(mark) {}

/* A task-clock member of the group, inherited, sampling every ms. */
static struct perf_event_attr clock_attr(int period_ms)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = (__u64)period_ms * 1000 * 1000,
		.inherit = 1,
		/* See ptsim_test's pause_resume: kernel time counts too. */
		.exclude_kernel = 0,
	};

	return attr;
}

/* ptsim's tick when config1 does not set one (PTSIM_DEF_PERIOD_US). */
#define PTSIM_TICK_US	100

/*
 * The same member in NMI (@nmi): ptsim_mark, inherited, overflowing every
 * @period_ms of its leader's engine ticks.  Its overflow is ptsim's PMI,
 * so perf_event_overflow() and what it does for the member (an AUX
 * sample, a pause, a resume) run in NMI in the child, as with a hardware
 * counter.
 */
static struct perf_event_attr member_attr(int period_ms, bool nmi)
{
	struct perf_event_attr attr = clock_attr(period_ms);

	if (nmi) {
		attr.type = pmu_type("ptsim_mark");
		attr.config = 0;
		attr.sample_period = (__u64)period_ms * 1000 / PTSIM_TICK_US;
	}
	return attr;
}

/* ---- AUX sampling ---- */

struct samples {
	unsigned long n, others, bad_size, with_trace, errors, unexplained;
	unsigned long lost;
	__u64 size;
};

struct sample_filter {
	pid_t pid, tid;
	struct samples *out;
};

/* A sample of the filter's task: u32 pid, tid, u64 size, size bytes. */
static void take_sample(const struct auxc_record *r, void *arg)
{
	const unsigned char *body = (const unsigned char *)(r->hdr + 1);
	struct sample_filter *sf = arg;
	struct samples *out = sf->out;
	struct capture snap = { .snapshot = true };
	struct pt_check w = { };
	__u32 ids[2];
	__u64 size;

	if (r->hdr->type == PERF_RECORD_LOST)
		out->lost++;
	if (r->hdr->type != PERF_RECORD_SAMPLE)
		return;
	if (r->hdr->size < sizeof(*r->hdr) + 16) {
		out->errors++;
		return;
	}
	memcpy(ids, body, sizeof(ids));
	memcpy(&size, body + 8, sizeof(size));
	if (ids[0] != (__u32)sf->pid || ids[1] != (__u32)sf->tid) {
		out->others++;
		return;
	}
	out->n++;
	if (size != SAMPLE_SIZE ||
	    sizeof(*r->hdr) + 16 + size != r->hdr->size) {
		out->bad_size++;
		out->size = size;
		return;
	}
	pt_check_piece(&snap, &w, body + 16, size, 0, 0);
	out->errors += w.errors;
	out->unexplained += w.unexplained;
	if (w.ptw64)
		out->with_trace++;
}

/*
 * Read every sample of @pid/@tid (sample_type TID | AUX) out of the
 * sampler's data area and check its trace as a snapshot: it may start in
 * the middle of a packet.
 */
static void read_samples(struct perf_event_mmap_page *pg, long psz,
			 pid_t pid, pid_t tid, struct samples *out)
{
	static __u64 rec[AUXC_MAX_RECORD / sizeof(__u64)];
	struct sample_filter sf = { pid, tid, out };

	if (auxc_ring_read_records(pg, (unsigned char *)pg + psz,
				   DATA_PAGES * psz, rec, take_sample, &sf) < 0)
		out->errors++;
}

/* The inherited group: a ptsim leader in snapshot mode, a sampler. */
struct group {
	int anchor, fd, sfd;
	struct capture s;
	struct perf_event_mmap_page *pg;
	long psz;
};

static void group_open(struct __test_metadata *_metadata, struct group *g,
		       bool nmi)
{
	struct perf_event_attr attr, sw = member_attr(2, nmi);

	/*
	 * The mark counts engine ticks, which a starved TCG guest delivers
	 * late and never catches up (8 CPUs on 2 host cores: 160 in the
	 * child's 300 ms, 8 samples): sample every 5 of them.
	 */
	if (nmi)
		sw.sample_period = 5;
	g->psz = sysconf(_SC_PAGESIZE);
	g->anchor = anchor_open();
	ASSERT_GE(g->anchor, 0) TH_LOG("anchor: %s", strerror(errno));
	ptsim_attr(&attr, 0);
	attr.inherit = 1;
	g->fd = perf_open(&attr, 0, KIDS_CPU, -1);
	ASSERT_GE(g->fd, 0) TH_LOG("ptsim: %s", strerror(errno));
	sw.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_AUX;
	sw.aux_sample_size = SAMPLE_SIZE;
	g->sfd = perf_open(&sw, 0, KIDS_CPU, g->fd);
	ASSERT_GE(g->sfd, 0) TH_LOG("sampler: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&g->s, g->fd, 0, 16, 16, true));
	g->pg = mmap(NULL, (1 + DATA_PAGES) * g->psz, PROT_READ | PROT_WRITE,
		     MAP_SHARED, g->sfd, 0);
	ASSERT_NE(MAP_FAILED, g->pg);
	/* Children created from now on inherit the enabled group. */
	ASSERT_EQ(0, ioctl(g->fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
}

static void group_close(struct group *g)
{
	munmap(g->pg, (1 + DATA_PAGES) * g->psz);
	close(g->sfd);
	close(g->fd);
	close(g->anchor);
	capture_free(&g->s);
}

static void expect_samples(struct __test_metadata *_metadata,
			   const char *who, struct samples *r)
{
	TH_LOG("%s: samples=%lu with_trace=%lu bad_size=%lu (size %llu) others=%lu lost=%lu",
	       who, r->n, r->with_trace, r->bad_size,
	       (unsigned long long)r->size, r->others, r->lost);
	/* The child burned BURN_MS; one sample per 2 ms of it. */
	EXPECT_GE(r->n, 5);
	EXPECT_EQ(0, r->bad_size) TH_LOG("samples without the AUX data asked");
	EXPECT_EQ(0, r->errors);
	EXPECT_EQ(0, r->unexplained);
	/* All but a sample taken before any trace was written. */
	EXPECT_GE(r->with_trace + 1, r->n);
	EXPECT_EQ(0, r->others) TH_LOG("samples from a task not traced");
}

/*
 * The sampler is a task clock, or ptsim_mark (nmi), whose overflows, and
 * so the AUX samples, come in NMI.
 */
TEST_F(member, aux_sample_forked_child)
{
	struct nmi_counts nmi0 = ptsim_nmi_counts();
	struct samples r = { };
	struct group g;
	int go, status;
	pid_t pid;

	ASSERT_EQ(0, pin_to(HOME_CPU));
	group_open(_metadata, &g, variant->nmi);
	pid = spawn_burner(BURN_MS, KIDS_CPU, &go);
	ASSERT_GT(pid, 0);
	release(go);
	for (;;) {
		usleep(10 * 1000);
		read_samples(g.pg, g.psz, pid, pid, &r);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	read_samples(g.pg, g.psz, pid, pid, &r);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	expect_samples(_metadata, "forked child", &r);
	if (variant->nmi)
		EXPECT_NMI(nmi0, mark, r.n);
	group_close(&g);
}

static void *burn_thread(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (pin_to(KIDS_CPU))
		return (void *)1;
	burn(BURN_MS);
	return NULL;
}

TEST_F(member, aux_sample_thread)
{
	struct nmi_counts nmi0 = ptsim_nmi_counts();
	struct samples r = { };
	pthread_t thread;
	pid_t tid = 0;
	void *ret = (void *)1;
	struct group g;

	ASSERT_EQ(0, pin_to(HOME_CPU));
	group_open(_metadata, &g, variant->nmi);
	ASSERT_EQ(0, pthread_create(&thread, NULL, burn_thread, &tid));
	ASSERT_EQ(0, pthread_join(thread, &ret));
	EXPECT_EQ(NULL, ret);
	read_samples(g.pg, g.psz, getpid(), tid, &r);
	expect_samples(_metadata, "thread", &r);
	if (variant->nmi)
		EXPECT_NMI(nmi0, mark, r.n);
	group_close(&g);
}

/* ---- pause and resume ---- */

#define PAUSE_RATE	4
#define PAUSE_TICK_US	PTSIM_TICK_US
#define MEMBER_PERIOD_MS 10

/*
 * Trace a forked child that burns @burn_ms with an inherited ptsim event
 * (opened paused or not) and, if @action, an inherited member with
 * aux_pause (1) or aux_resume (2): task-clock, or ptsim_mark (@nmi),
 * which pauses or resumes from NMI.  Return the data records the child's
 * trace holds, saved as inherit_pause[_nmi]_@what.
 */
static size_t trace_child(struct __test_metadata *_metadata, bool start_paused,
			  int action, bool nmi, const char *what, int burn_ms)
{
	struct perf_event_attr attr, sw = member_attr(MEMBER_PERIOD_MS, nmi);
	int anchor, fd, mfd = -1, go, status;
	struct capture s;
	struct pt_check w;
	char name[64];
	pid_t pid;

	snprintf(name, sizeof(name), "inherit_pause%s_%s", nmi ? "_nmi" : "",
		 what);
	anchor = anchor_open();
	EXPECT_GE(anchor, 0) TH_LOG("anchor: %s", strerror(errno));
	ptsim_attr(&attr, PTSIM_CFG1_RATE(PAUSE_RATE) | PTSIM_CFG1_PERIOD(PAUSE_TICK_US));
	attr.inherit = 1;
	attr.aux_start_paused = start_paused;
	fd = perf_open(&attr, 0, KIDS_CPU, -1);
	EXPECT_GE(fd, 0) TH_LOG("ptsim: %s", strerror(errno));
	if (fd < 0)
		return 0;
	if (action) {
		sw.aux_pause = action == 1;
		sw.aux_resume = action == 2;
		mfd = perf_open(&sw, 0, KIDS_CPU, fd);
		EXPECT_GE(mfd, 0) TH_LOG("member: %s", strerror(errno));
	}
	EXPECT_EQ(0, capture_map(&s, fd, 0, 16, 256, false));
	EXPECT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	pid = spawn_burner(burn_ms, KIDS_CPU, &go);
	EXPECT_GT(pid, 0);
	if (pid > 0) {
		release(go);
		status = capture_until_exit(&s, pid);
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, name);
	TH_LOG("%s: bytes=%zu ptw=%lu pge=%lu pgd=%lu", name, s.len, w.ptw64,
	       w.pge, w.pgd);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	if (mfd >= 0)
		close(mfd);
	close(fd);
	close(anchor);
	capture_free(&s);
	return w.ptw64;
}

/*
 * The bound is ptsim_test's pause_resume's: before the member's first
 * overflow at most MEMBER_PERIOD_MS / PAUSE_TICK_US ticks of PAUSE_RATE
 * records, plus two ticks (the mark's period is MEMBER_PERIOD_MS of
 * engine ticks).  The unpaused control must exceed it, or the paused case
 * proves nothing on this guest.  With ptsim_mark (nmi) the child's copy
 * of the member pauses or resumes the child's trace from NMI; the run
 * opened paused has no member, so only task_clock has it.
 *
 * The child burns 200 ms: 580 records for the control on the debug
 * kernel, not much above the bound.  Where its vCPU gets a smaller share
 * of the host (the same kernel with a CPU offline, on a loaded host: 36
 * records, and one mark NMI in the two runs with a member, where two are
 * needed), the control is run again with the burn doubled until it holds
 * twice the bound, 3.2 s at most, and the runs with a member burn as
 * long.  What is checked stays the same: the bound does not grow with
 * the burn.  Hence 90 s, not the default 30: up to 6.2 s of control and
 * three runs of 3.2 s, on the slowest kernel.
 */
#define PAUSE_BURN_MS		200
#define PAUSE_BURN_MAX_MS	3200

TEST_F_TIMEOUT(member, pause_resume_inherited, 90)
{
	const size_t bound = (MEMBER_PERIOD_MS * 1000 / PAUSE_TICK_US + 2) *
			     PAUSE_RATE;
	struct nmi_counts nmi0 = ptsim_nmi_counts();
	size_t plain, paused = 0, resumed, pause_member;
	int burn_ms = PAUSE_BURN_MS;
	bool nmi = variant->nmi;

	ASSERT_EQ(0, pin_to(HOME_CPU));
	plain = trace_child(_metadata, false, 0, nmi, "plain", burn_ms);
	while (plain <= 2 * bound && burn_ms < PAUSE_BURN_MAX_MS) {
		TH_LOG("control: %zu records in %d ms, not twice the bound: burning %d ms",
		       plain, burn_ms, 2 * burn_ms);
		burn_ms *= 2;
		plain = trace_child(_metadata, false, 0, nmi, "plain", burn_ms);
	}
	if (!nmi)
		paused = trace_child(_metadata, true, 0, false, "start_paused",
				     burn_ms);
	resumed = trace_child(_metadata, true, 2, nmi, "resumed", burn_ms);
	pause_member = trace_child(_metadata, false, 1, nmi, "paused", burn_ms);
	TH_LOG("data records: plain=%zu start_paused=%zu resumed=%zu paused=%zu",
	       plain, paused, resumed, pause_member);
	TH_LOG("bound %zu, burn %d ms", bound, burn_ms);
	EXPECT_GT(plain, bound) TH_LOG("the control is too short to tell");
	if (!nmi)
		EXPECT_EQ(0, paused);
	EXPECT_GT(resumed, 2 * PAUSE_RATE) TH_LOG("the child was not resumed");
	EXPECT_LE(pause_member, bound) TH_LOG("the child was not paused");
	/* One overflow at least in each run with a member, each an NMI. */
	if (nmi)
		EXPECT_NMI(nmi0, mark, 2);
}

/* ---- aux_output ---- */

/* A child's ptsim_mark samples are written into the parent's trace. */
TEST_F(mark, aux_output_inherited)
{
	struct perf_event_attr attr, mark = {
		.size = sizeof(mark),
		.type = pmu_type("ptsim_mark"),
		.sample_period = 16,
		.aux_output = 1,
		.inherit = 1,
	};
	int anchor, fd, mfd, go, status;
	struct capture s;
	struct pt_check w;
	pid_t pid;

	ASSERT_EQ(0, pin_to(HOME_CPU));
	anchor = anchor_open();
	ASSERT_GE(anchor, 0) TH_LOG("anchor: %s", strerror(errno));
	ptsim_attr(&attr, 0);
	attr.inherit = 1;
	fd = perf_open(&attr, 0, KIDS_CPU, -1);
	ASSERT_GE(fd, 0) TH_LOG("ptsim: %s", strerror(errno));
	mfd = perf_open(&mark, 0, KIDS_CPU, fd);
	ASSERT_GE(mfd, 0) TH_LOG("ptsim_mark: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, 0, 16, 2048, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	pid = spawn_burner(200, KIDS_CPU, &go);
	ASSERT_GT(pid, 0);
	release(go);
	status = capture_until_exit(&s, pid);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	capture_poll(&s, 0);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "inherit_aux_output");
	TH_LOG("bytes=%zu marks=%lu last=%u skips=%lu ovf=%lu", s.len, w.marks,
	       w.last_mark, w.mark_skips, w.ovf);
	EXPECT_GT(s.len, 0);
	EXPECT_GE(w.marks, 1) TH_LOG("no mark from the child in the trace");
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	EXPECT_EQ(0, w.bad_ips);
	close(mfd);
	close(fd);
	close(anchor);
	capture_free(&s);
}

TEST_HARNESS_MAIN
