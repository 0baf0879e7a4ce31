// SPDX-License-Identifier: GPL-2.0
/*
 * The parts of the AUX area ABI that ptsim_test does not cover, each as
 * the 6.12 core defines it: AUX sampling (aux_sample_size) and its caps,
 * the errnos of aux_sample_size and aux_output requests, aux_output
 * samples in the trace (with ptsim_mark), the default and
 * an explicit aux_watermark, the locked-memory accounting of an AUX
 * mapping, PERF_RECORD_ITRACE_START, the probe by which a tool tells a
 * PMU with an AUX area from one without, and what ptsim lets a user
 * without privileges do (its limits, and the registers in its
 * ptsim_mark samples).
 *
 * A case's fixture says what it needs (ptsim, ptsim_mark, a cap of
 * ptsim's, root): its setup skips the case without it.  A family of
 * cases that differ only in a parameter is one test of a fixture with
 * a variant per form.
 */
#include "ptsim_lib.h"
#include <assert.h>
#include <dirent.h>
#include <sys/resource.h>
#include "../kselftest_harness.h"
#include "ptsim_harness.h"

static struct perf_event_attr sw_attr(__u64 config, __u64 period)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = config,
		.sample_period = period,
		.exclude_kernel = 1,
	};

	return attr;
}

/*
 * A ptsim_mark event: every period-th engine tick a sample (into the
 * trace with aux_output, through ptsim's PMI, an NMI, without), or a
 * count.
 */
static struct perf_event_attr mark_attr(__u64 period, bool aux_output)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = pmu_type("ptsim_mark"),
		.sample_period = period,
		.aux_output = aux_output,
	};

	return attr;
}

/* The cases that need nothing but ptsim (and ptsim_mark, its cap). */
FIXTURE(ptsim) {};
FIXTURE_SETUP(ptsim)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(ptsim) {}

FIXTURE(ptsim_mark) {};
FIXTURE_SETUP(ptsim_mark)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_MARK);
}

FIXTURE_TEARDOWN(ptsim_mark) {}

FIXTURE(mark_pmi) {};
FIXTURE_SETUP(mark_pmi)
{
	ptsim_need(_metadata, PTSIM_NEED_MARK_PMI);
}

FIXTURE_TEARDOWN(mark_pmi) {}

/* ---- AUX sampling ---- */

struct samples {
	unsigned long n, with_trace, errors, unexplained, lost;
	unsigned long bad_size, backwards;
	__u64 size, last_seq;
	bool have_seq;
};

struct sample_want {
	__u64 want;
	struct samples *out;
};

/* A sample (sample_type PERF_SAMPLE_AUX alone): u64 size, size bytes. */
static void take_sample(const struct auxc_record *r, void *arg)
{
	const unsigned char *body = (const unsigned char *)(r->hdr + 1);
	struct sample_want *sw = arg;
	struct samples *out = sw->out;
	struct capture snap = { .snapshot = true };
	struct pt_check w;
	__u64 size = 0;

	if (r->hdr->type == PERF_RECORD_LOST)
		out->lost++;
	if (r->hdr->type != PERF_RECORD_SAMPLE)
		return;
	if (r->hdr->size >= sizeof(*r->hdr) + sizeof(size))
		memcpy(&size, body, sizeof(size));
	out->n++;
	if (size != sw->want ||
	    sizeof(*r->hdr) + sizeof(size) + size != r->hdr->size) {
		out->bad_size++;
		out->size = size;
		return;
	}
	memset(&w, 0, sizeof(w));
	pt_check_piece(&snap, &w, body + sizeof(size), size, 0, 0);
	out->errors += w.errors;
	out->unexplained += w.unexplained;
	if (w.ptw64) {
		out->with_trace++;
		if (out->have_seq && w.last_seq < out->last_seq)
			out->backwards++;
		out->last_seq = w.last_seq;
		out->have_seq = true;
	}
}

/*
 * Take every PERF_SAMPLE_AUX sample out of a data area, and check its
 * trace with the ptsim checker.  A sample may start in the middle of a
 * packet, so it is walked like a snapshot, from its first PSB.  The
 * newest trace is taken each time, so the last sequence number never
 * goes back.  A malformed record is an error.
 */
static void read_samples(struct perf_event_mmap_page *pg, size_t data_size,
			 long psz, __u64 want, struct samples *out)
{
	static __u64 rec[AUXC_MAX_RECORD / sizeof(__u64)];
	struct sample_want sw = { want, out };

	if (auxc_ring_read_records(pg, (unsigned char *)pg + psz, data_size,
				   rec, take_sample, &sw) < 0)
		out->errors++;
}

#define AUX_SAMPLES	8

/* How aux_sampling() samples: from NMI; into a shared buffer. */
#define SAMPLE_NMI	1
#define SAMPLE_SHARED	2

/*
 * A ptsim leader with a read-only (overwrite) AUX area of aux_pages on a
 * burner, and a task-clock member sampling every 5 ms of its CPU time
 * with aux_sample_size = sample_size; with SAMPLE_NMI, a ptsim_mark
 * member sampling every 50 engine ticks (5 ms at the default period),
 * whose overflows, and so the AUX samples (pmu::snapshot_aux), come from
 * NMI, as with a hardware counter sampling Intel PT.  With SAMPLE_SHARED
 * the leader's output goes to a dummy owner's buffer
 * (PERF_EVENT_IOC_SET_OUTPUT, as perf record shares one buffer per CPU),
 * so the samples are copied from an AUX area the leader does not own;
 * all on CPU 0, as SET_OUTPUT wants.  The burner runs until AUX_SAMPLES
 * samples came (a guest CPU's share of the host varies too much for a
 * fixed time), at most 20 s, well within the harness's 30 s per test.
 * They must all come, each with want bytes of AUX data that decode.
 */
static void aux_sampling(struct __test_metadata *_metadata, int aux_pages,
			 __u32 sample_size, __u64 want, unsigned int how,
			 struct samples *out)
{
	bool nmi = how & SAMPLE_NMI, shared = how & SAMPLE_SHARED;
	struct perf_event_attr attr, sw = nmi ? mark_attr(50, false) :
		sw_attr(PERF_COUNT_SW_TASK_CLOCK, 5 * 1000 * 1000);
	const int data_pages = 64, cpu = shared ? online_cpu(0) : -1;
	struct perf_event_mmap_page *pg;
	int fd, sfd, owner, go;
	struct capture s;
	long psz = sysconf(_SC_PAGESIZE);
	double end;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	ptsim_attr(&attr, 0);
	pid = spawn_burner(-1, cpu, &go);
	ASSERT_GT(pid, 0);
	fd = perf_open(&attr, pid, cpu, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	sw.sample_type = PERF_SAMPLE_AUX;
	sw.aux_sample_size = sample_size;
	sfd = perf_open(&sw, pid, cpu, fd);
	ASSERT_GE(sfd, 0) TH_LOG("sampler: %s", strerror(errno));
	owner = shared ? dummy_open_on(0, cpu) : fd;
	ASSERT_GE(owner, 0) TH_LOG("owner: %s", strerror(errno));
	ASSERT_EQ(0, capture_map_shared(&s, fd, owner, 0, 16, aux_pages, true));
	pg = mmap(NULL, (1 + data_pages) * psz, PROT_READ | PROT_WRITE,
		  MAP_SHARED, sfd, 0);
	ASSERT_NE(MAP_FAILED, pg);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	release(go);
	end = now_ms() + 20000;
	while (out->n < AUX_SAMPLES && now_ms() < end) {
		usleep(10 * 1000);
		read_samples(pg, data_pages * psz, psz, want, out);
	}
	EXPECT_TRUE(stop_burner(pid));
	read_samples(pg, data_pages * psz, psz, want, out);
	TH_LOG("aux_pages=%d sample_size=%u%s%s: samples=%lu with_trace=%lu",
	       aux_pages, sample_size, nmi ? " (NMI)" : "",
	       shared ? " (shared)" : "", out->n, out->with_trace);
	TH_LOG("lost=%lu bad_size=%lu (got %llu, want %llu)", out->lost,
	       out->bad_size, (unsigned long long)out->size,
	       (unsigned long long)want);
	EXPECT_GE(out->n, AUX_SAMPLES);
	EXPECT_EQ(0, out->bad_size);
	EXPECT_EQ(0, out->errors);
	munmap(pg, (1 + data_pages) * psz);
	close(sfd);
	if (owner != fd)
		close(owner);
	close(fd);
	capture_free(&s);
}

/* A variant per sampler, as aux_sampling() takes them (@how). */
FIXTURE(aux_sample) {};
FIXTURE_VARIANT(aux_sample) {
	unsigned int how;
};

FIXTURE_VARIANT_ADD(aux_sample, task_clock) { .how = 0 };
FIXTURE_VARIANT_ADD(aux_sample, nmi) { .how = SAMPLE_NMI };
FIXTURE_VARIANT_ADD(aux_sample, shared_nmi) { .how = SAMPLE_NMI | SAMPLE_SHARED };

FIXTURE_SETUP(aux_sample)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_AUX_SAMPLE |
		   (variant->how & SAMPLE_NMI ? PTSIM_NEED_MARK : 0));
	if (!_metadata->exit_code && (variant->how & SAMPLE_SHARED) &&
	    aux_shared_refused())
		SKIP(return, AUX_SHARED_REFUSED);
}

FIXTURE_TEARDOWN(aux_sample) {}

/*
 * Samples carry the newest trace, aux_sample_size bytes of it; the trace
 * decodes and moves forward from one sample to the next.
 */
TEST_F(aux_sample, samples)
{
	struct nmi_counts nmi = ptsim_nmi_counts();
	struct samples r;

	aux_sampling(_metadata, 16, 4096, 4096, variant->how, &r);
	EXPECT_EQ(0, r.unexplained);
	EXPECT_EQ(0, r.backwards);
	/* All but a sample taken before any trace was written. */
	EXPECT_GE(r.with_trace + 1, r.n);
	if (variant->how & SAMPLE_NMI)
		EXPECT_NMI(nmi, mark, r.n);
}

/* aux_sample_size itself: what it needs and what it is capped at. */
FIXTURE(aux_sample_size) {};
FIXTURE_SETUP(aux_sample_size)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_AUX_SAMPLE);
}

FIXTURE_TEARDOWN(aux_sample_size) {}

/*
 * aux_sample_size is capped at the AUX area size and rounded down to a
 * multiple of 8 bytes.
 */
TEST_F(aux_sample_size, caps)
{
	struct samples r;

	aux_sampling(_metadata, 2, 60000, 8192, 0, &r);
	EXPECT_GE(r.with_trace, 1);
	aux_sampling(_metadata, 16, 1001, 1000, 0, &r);
}

static int open_errno(struct perf_event_attr *attr, int group)
{
	int fd = perf_open(attr, 0, -1, group);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

/*
 * aux_sample_size needs a group leader whose PMU can snapshot its AUX
 * area: without a group, or with a software leader, it is EINVAL.
 */
TEST_F(aux_sample_size, errnos)
{
	struct perf_event_attr attr,
		sw = sw_attr(PERF_COUNT_SW_TASK_CLOCK, 1000000),
		lead = sw_attr(PERF_COUNT_SW_TASK_CLOCK, 0);
	int fd, lfd;

	sw.sample_type = PERF_SAMPLE_AUX;
	sw.aux_sample_size = 4096;
	EXPECT_EQ(EINVAL, open_errno(&sw, -1));

	lfd = perf_open(&lead, 0, -1, -1);
	ASSERT_GE(lfd, 0);
	EXPECT_EQ(EINVAL, open_errno(&sw, lfd));
	close(lfd);

	/* With a ptsim leader the same member is accepted. */
	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, 0, -1, -1);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(0, open_errno(&sw, fd));
	close(fd);
}

/*
 * aux_output needs PERF_PMU_CAP_AUX_OUTPUT on the member's PMU and an
 * aux_output_match() that accepts the leader.  A software event has
 * neither, and ptsim itself does not claim the capability: EOPNOTSUPP,
 * checked before the leader or aux_sample_size are looked at.  (The
 * member that has it, ptsim_mark, is tested below.)
 */
TEST_F(ptsim, aux_output_errnos)
{
	struct perf_event_attr attr,
		sw = sw_attr(PERF_COUNT_SW_TASK_CLOCK, 1000000);
	int fd;

	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, 0, -1, -1);
	ASSERT_GE(fd, 0);

	sw.aux_output = 1;
	EXPECT_EQ(EOPNOTSUPP, open_errno(&sw, fd));
	EXPECT_EQ(EOPNOTSUPP, open_errno(&sw, -1));
	sw.aux_sample_size = 4096;
	sw.sample_type = PERF_SAMPLE_AUX;
	EXPECT_EQ(EOPNOTSUPP, open_errno(&sw, fd));
	close(fd);

	/* ptsim itself cannot be an aux_output event either. */
	attr.aux_output = 1;
	EXPECT_EQ(EOPNOTSUPP, open_errno(&attr, -1));
}

/* ---- aux_output: ptsim_mark samples written into the ptsim trace ---- */

/*
 * What the 6.12 core refuses of an aux_output event whose PMU has the
 * capability: no group (EINVAL: the leader must be the AUX event), a
 * leader without AUX (EINVAL, aux_output_match is not even asked), and
 * aux_sample_size with it (EINVAL); with aux_pause or aux_resume it is
 * EOPNOTSUPP.  A plain counting member needs no aux_output, and one
 * with it in a ptsim group is accepted.
 */
TEST_F(mark_pmi, aux_output_errnos_mark)
{
	struct perf_event_attr attr, mark,
		sw = sw_attr(PERF_COUNT_SW_TASK_CLOCK, 0);
	int fd, swfd;

	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, 0, -1, -1);
	ASSERT_GE(fd, 0);
	swfd = perf_open(&sw, 0, -1, -1);
	ASSERT_GE(swfd, 0);

	mark = mark_attr(8, true);
	EXPECT_EQ(0, open_errno(&mark, fd));
	EXPECT_EQ(EINVAL, open_errno(&mark, -1));
	EXPECT_EQ(EINVAL, open_errno(&mark, swfd));
	mark.aux_sample_size = 4096;
	mark.sample_type = PERF_SAMPLE_AUX;
	EXPECT_EQ(EINVAL, open_errno(&mark, fd));
	mark = mark_attr(8, true);
	mark.aux_pause = 1;
	EXPECT_EQ(EOPNOTSUPP, open_errno(&mark, fd));
	mark.aux_pause = 0;
	mark.aux_resume = 1;
	EXPECT_EQ(EOPNOTSUPP, open_errno(&mark, fd));

	/*
	 * ptsim_mark's own rules: a fixed period, no freq.  A sampling
	 * member without aux_output is a PMI, as a hardware counter's.
	 */
	mark = mark_attr(8, false);
	EXPECT_EQ(0, open_errno(&mark, fd));
	mark = mark_attr(8, true);
	mark.freq = 1;
	EXPECT_EQ(EINVAL, open_errno(&mark, fd));
	mark = mark_attr(0, false);
	EXPECT_EQ(0, open_errno(&mark, fd));
	mark.config = 1;
	EXPECT_EQ(EINVAL, open_errno(&mark, fd));
	close(swfd);
	close(fd);
}

/*
 * aux_action (aux_start_paused, aux_pause, aux_resume), what the 6.12
 * core refuses: aux_start_paused on a PMU without PERF_PMU_CAP_AUX_PAUSE
 * (software, ptsim_mark) is EOPNOTSUPP; a pause or resume member without
 * a group, or whose leader lacks the capability, is EINVAL, and so is a
 * member with both set, whatever its leader.  Each alone is accepted in
 * a ptsim group, and aux_start_paused on the ptsim leader itself.
 */
TEST_F(ptsim, aux_action_errnos)
{
	struct perf_event_attr attr,
		sw = sw_attr(PERF_COUNT_SW_TASK_CLOCK, 1000 * 1000);
	int fd, swfd, both;

	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, 0, -1, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	swfd = perf_open(&sw, 0, -1, -1);
	ASSERT_GE(swfd, 0) TH_LOG("perf_event_open: %s", strerror(errno));

	sw.aux_start_paused = 1;
	EXPECT_EQ(EOPNOTSUPP, open_errno(&sw, -1));
	EXPECT_EQ(EOPNOTSUPP, open_errno(&sw, fd));
	if (pmu_type("ptsim_mark") >= 0) {
		struct perf_event_attr mark = mark_attr(0, false);

		mark.aux_start_paused = 1;
		EXPECT_EQ(EOPNOTSUPP, open_errno(&mark, fd));
	}
	sw.aux_start_paused = 0;
	for (both = 0; both < 2; both++) {
		sw.aux_pause = !both;
		sw.aux_resume = both;
		EXPECT_EQ(EINVAL, open_errno(&sw, -1))
			TH_LOG("aux_%s without a group", both ? "resume" : "pause");
		EXPECT_EQ(EINVAL, open_errno(&sw, swfd))
			TH_LOG("aux_%s, software leader", both ? "resume" : "pause");
		EXPECT_EQ(0, open_errno(&sw, fd))
			TH_LOG("aux_%s, ptsim leader", both ? "resume" : "pause");
	}
	sw.aux_pause = 1;
	sw.aux_resume = 1;
	EXPECT_EQ(EINVAL, open_errno(&sw, fd));
	EXPECT_EQ(EINVAL, open_errno(&sw, swfd));
	EXPECT_EQ(EINVAL, open_errno(&sw, -1));
	close(swfd);
	close(fd);

	/* ptsim is exclusive: the leader above had to go first. */
	attr.aux_start_paused = 1;
	EXPECT_EQ(0, open_errno(&attr, -1));
}

/*
 * The samples of an aux_output member land in the leader's trace, in
 * order, each with the traced task's IP, and all of them: the engine
 * writes sample n at the tick that brings the member's count to n times
 * the period, so after the run the last sample number is the final
 * count divided by the period.  The AUX area is larger than the run can
 * produce (see ptsim_test's stream), so nothing is lost to a slow
 * consumer.
 */
TEST_F(ptsim_mark, aux_output_samples_in_trace)
{
	struct perf_event_attr attr, mark = mark_attr(16, true);
	int fd, mfd, go;
	__u64 count = 0;
	struct capture s;
	struct pt_check w;
	pid_t pid;

	ptsim_attr(&attr, 0);
	pid = spawn_burner(200, -1, &go);
	ASSERT_GT(pid, 0);
	fd = perf_open(&attr, pid, -1, -1);
	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	mfd = perf_open(&mark, pid, -1, fd);
	ASSERT_GE(mfd, 0) TH_LOG("ptsim_mark: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, 0, 16, 2048, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	release(go);
	ptsim_until_exit(_metadata, &s, pid);
	EXPECT_EQ(sizeof(count), read(mfd, &count, sizeof(count)));
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "aux_output");
	TH_LOG("ticks=%llu samples=%lu last=%u skips=%lu ovf=%lu truncated=%lu",
	       (unsigned long long)count, w.marks, w.last_mark, w.mark_skips,
	       w.ovf, s.truncated);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	EXPECT_EQ(0, s.truncated);
	EXPECT_GT(count, 16);
	EXPECT_GE(w.marks, 1);
	/*
	 * Nothing dropped in the FIFO either: the default config drains
	 * all of it at every tick (drain 0: unlimited), so no overflow can
	 * happen and every sample is there.
	 */
	EXPECT_EQ(0, w.ovf);
	EXPECT_EQ(0, w.mark_skips);
	EXPECT_EQ(count / 16, w.last_mark);
	EXPECT_EQ(count / 16, w.marks);
	/* Each sample's FUP carries a user IP, as the PSB+ FUPs do. */
	EXPECT_GE(w.user_ips, w.marks);
	EXPECT_EQ(0, w.bad_ips);
	close(mfd);
	close(fd);
	capture_free(&s);
}

/*
 * Closing the AUX event tears down the pairing: the member is put into
 * the ERROR state, where read() returns nothing, rather than going on
 * without a trace to write into.
 */
TEST_F(ptsim_mark, aux_output_leader_closed)
{
	struct perf_event_attr attr, mark = mark_attr(8, true);
	__u64 v;
	int fd, mfd;

	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, 0, -1, -1);
	ASSERT_GE(fd, 0);
	mfd = perf_open(&mark, 0, -1, fd);
	ASSERT_GE(mfd, 0) TH_LOG("ptsim_mark: %s", strerror(errno));
	EXPECT_EQ(sizeof(v), read(mfd, &v, sizeof(v)));
	close(fd);
	EXPECT_EQ(0, read(mfd, &v, sizeof(v)));
	close(mfd);
}

/* ---- the flags of PERF_RECORD_AUX ---- */

#define AUX_LOSSY	(PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION)
#define FMT		0x2a	/* a PMU format type, as CoreSight reports one */

/* Offsets of the OVF packets in a normal-mode trace (file == AUX offset). */
static size_t find_ovfs(struct capture *s, __u64 **at)
{
	size_t i = 0, n, cnt = 0, cap = 0;

	*at = NULL;
	while (i < s->len) {
		n = pt_len(s->trace + i, s->len - i);
		if (!n)
			break;
		if (s->trace[i] == 0x02 && s->trace[i + 1] == 0xf3) {
			*at = grow(*at, &cap, cnt + 1, sizeof(**at));
			(*at)[cnt++] = i;
		}
		i += n;
	}
	return cnt;
}

FIXTURE(aux_record) {};
FIXTURE_VARIANT(aux_record) {
	int loss;		/* config1's aux_loss: 1 PARTIAL, 2 COLLISION */
	bool overflow;		/* a FIFO that overflows at every tick */
	const char *trace;	/* capture_save()'s name */
};

FIXTURE_VARIANT_ADD(aux_record, format) { .overflow = true, .trace = "flags_format" };
FIXTURE_VARIANT_ADD(aux_record, partial) { .loss = 1, .overflow = true, .trace = "flags_partial" };
/* The same without an overflow: no record says PARTIAL. */
FIXTURE_VARIANT_ADD(aux_record, partial_no_loss) { .loss = 1, .trace = "flags_no_loss" };
FIXTURE_VARIANT_ADD(aux_record, collision) {
	.loss = 2, .overflow = true, .trace = "flags_collision",
};

FIXTURE_SETUP(aux_record)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(aux_record) {}

/*
 * A record's flags are what the PMU set with perf_aux_output_flag() for
 * its transaction: here a format type on every record, and PARTIAL or
 * COLLISION (config1's aux_loss) on exactly the records whose data holds
 * an OVF, a FIFO overflow's gap; never OVERWRITE in normal mode.  No
 * record is empty unless it carries one of the flags that are news (a
 * format type alone is not).
 */
TEST_F(aux_record, flags)
{
	int loss = variant->loss;
	bool overflow = variant->overflow;
	__u64 lossy = loss == 1 ? PERF_AUX_FLAG_PARTIAL :
		      loss == 2 ? PERF_AUX_FLAG_COLLISION : 0;
	unsigned long nrec = 0, bad_fmt = 0, empty = 0, flagged = 0;
	unsigned long wrong_flag = 0, flag_no_ovf = 0, ovf_no_flag = 0;
	struct perf_event_attr attr;
	size_t i, j, novf;
	struct capture s;
	__u64 *ovf;
	pid_t pid;
	int fd;

	/*
	 * A FIFO of 512 bytes drained at 1 KiB a tick overflows at every
	 * tick; the default one never does (1 KiB a tick into 8 KiB, all
	 * of it drained at the same tick).
	 */
	ptsim_attr(&attr, overflow ? PTSIM_CFG1_RATE(1024) | PTSIM_CFG1_FIFO(9) |
				     PTSIM_CFG1_DRAIN(1) : 0);
	attr.config1 |= PTSIM_CFG1_FMT(FMT) | PTSIM_CFG1_LOSS(loss);
	fd = ptsim_trace_burner(_metadata, &s, &attr, 200, 64, false, &pid);
	capture_save(&s, variant->trace);

	novf = find_ovfs(&s, &ovf);
	for (i = 0; i < s.nrecs; i++) {
		struct aux_rec *r = &s.recs[i];
		bool has_ovf = false;

		if (r->type != PERF_RECORD_AUX)
			continue;
		nrec++;
		if ((r->c & PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK) != FMT << 8 ||
		    (r->c & PERF_AUX_FLAG_OVERWRITE))
			bad_fmt++;
		if (!r->b && !(r->c & (PERF_AUX_FLAG_TRUNCATED | AUX_LOSSY)))
			empty++;
		for (j = 0; j < novf; j++)
			if (ovf[j] >= r->a && ovf[j] < r->a + r->b)
				has_ovf = true;
		if (r->c & AUX_LOSSY) {
			flagged++;
			if ((r->c & AUX_LOSSY) != lossy)
				wrong_flag++;
			if (!has_ovf)
				flag_no_ovf++;
		} else if (has_ovf && lossy) {
			ovf_no_flag++;
		}
	}
	TH_LOG("%s: records=%lu ovf=%zu flagged=%lu", variant->trace, nrec,
	       novf, flagged);
	EXPECT_GT(nrec, 1);
	EXPECT_EQ(overflow, novf > 0);
	EXPECT_EQ(0, bad_fmt);
	EXPECT_EQ(0, empty);
	EXPECT_EQ(0, wrong_flag);
	EXPECT_EQ(0, flag_no_ovf);
	EXPECT_EQ(0, ovf_no_flag);
	EXPECT_EQ(lossy && overflow, flagged > 0);
	free(ovf);
	close(fd);
	capture_free(&s);
}

/*
 * A transaction that wrote nothing and has only the format type to say
 * is not reported: a paused event whose FIFO is empty, flushed over and
 * over (each flush ends and re-begins its transaction), leaves no
 * PERF_RECORD_AUX at all.
 */
TEST_F(ptsim, aux_record_format_only_is_silent)
{
	struct perf_event_attr attr;
	int fd, i, flushed = 0;
	struct capture s;
	pid_t pid;

	ptsim_attr(&attr, PTSIM_CFG1_FMT(FMT));
	attr.aux_start_paused = 1;
	fd = ptsim_trace_burner(_metadata, &s, &attr, -1, 16, false, &pid);
	for (i = 0; i < 20; i++) {
		usleep(5000);
		if (!ioctl(fd, PERF_EVENT_IOC_FLUSH, 0))
			flushed++;
		else if (errno == ENOTTY)
			break;
	}
	EXPECT_TRUE(stop_burner(pid));
	if (i < 20) {
		close(fd);
		capture_free(&s);
		SKIP(return, "no PERF_EVENT_IOC_FLUSH in this kernel (ENOTTY)");
	}
	capture_poll(&s, 0);
	TH_LOG("flushes=%d aux_records=%lu bytes=%zu", flushed, s.aux_records,
	       s.len);
	EXPECT_EQ(20, flushed);
	EXPECT_EQ(0, s.aux_records);
	EXPECT_EQ(0, s.len);
	close(fd);
	capture_free(&s);
}

/* ---- aux_watermark ---- */

/*
 * The effective watermark is wm: perf hands ptsim the next multiple of
 * it as the wake-up position, and ptsim ends its transaction with the
 * record that reaches it.  So every multiple of wm in the trace has an
 * AUX record ending in [m, m + 64) (64: ptsim's largest record), no
 * record runs on past one, and each crossing wakes the consumer at most
 * once.  If the watermark were smaller, records would end at its
 * multiples too: check that some record runs across the middle between
 * two multiples of wm.
 */
static void check_watermark(struct __test_metadata *_metadata, struct capture *s,
			    __u64 wm)
{
	__u64 end = 0, m, half_crossed = 0, missing = 0, overrun = 0;
	size_t i;

	for (i = 0; i < s->nrecs; i++) {
		struct aux_rec *r = &s->recs[i];

		if (r->type != PERF_RECORD_AUX || !r->b)
			continue;
		m = (r->a / wm + 1) * wm;
		if (r->a + r->b >= m + 64)
			overrun++;
		m = r->a / wm * wm + wm / 2;
		if (r->a < m && r->a + r->b >= m + 64)
			half_crossed++;
		if (r->a + r->b > end)
			end = r->a + r->b;
	}
	for (m = wm; m + 64 <= end; m += wm) {
		/*
		 * At the end of the buffer a record that does not fit is
		 * padded and skipped instead: the record before ends short.
		 */
		__u64 lo = m % s->aux_size ? m : m - 64;
		bool found = false;

		for (i = 0; i < s->nrecs && !found; i++) {
			struct aux_rec *r = &s->recs[i];

			found = r->type == PERF_RECORD_AUX &&
				r->a + r->b >= lo && r->a + r->b < m + 64;
		}
		if (!found)
			missing++;
	}
	TH_LOG("wm=%llu bytes=%llu aux_records=%lu wakeups=%lu truncated=%lu",
	       (unsigned long long)wm, (unsigned long long)end,
	       s->aux_records, s->wakeups, s->truncated);
	TH_LOG("missing=%llu overrun=%llu half_crossed=%llu",
	       (unsigned long long)missing, (unsigned long long)overrun,
	       (unsigned long long)half_crossed);
	/*
	 * Two watermarks of trace, or a full buffer: a consumer that falls
	 * behind may find its event off for good after TRUNCATED (the
	 * disable can land after its restart), but by then the trace ends
	 * within a record of the area's size.
	 */
	ASSERT_GE(end, 2 * wm < s->aux_size ? 2 * wm : s->aux_size - 64)
		TH_LOG("too little trace to test");
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, overrun);
	EXPECT_GE(half_crossed, 1);
	EXPECT_GE(s->aux_records, end / wm);
	EXPECT_GE(s->wakeups, 1);
	EXPECT_LE(s->wakeups, end / wm + s->truncated + 1);
}

FIXTURE(aux_watermark) {};
FIXTURE_VARIANT(aux_watermark) {
	__u32 aux_watermark;	/* 0: none, so half the AUX area */
	const char *trace;	/* capture_save()'s name */
};

/* No aux_watermark: half the AUX area. */
FIXTURE_VARIANT_ADD(aux_watermark, default) { .trace = "aux_watermark_default" };

/* An explicit aux_watermark, here an eighth of the area. */
FIXTURE_VARIANT_ADD(aux_watermark, explicit) {
	.aux_watermark = 16 * 1024, .trace = "aux_watermark_explicit",
};

FIXTURE_SETUP(aux_watermark)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU);
}

FIXTURE_TEARDOWN(aux_watermark) {}

/*
 * Trace a burner with the whole AUX area as one ptsim region (no
 * padding), so that the only things that end a transaction are the
 * watermark, a sched-out and a full buffer.  The data area wakes nobody
 * (its watermark is its size), so every POLLIN is an AUX wake-up.
 */
TEST_F(aux_watermark, records)
{
	struct perf_event_attr attr;
	struct capture s;
	pid_t pid;
	int fd;

	ptsim_attr(&attr, PTSIM_CFG1_REGION(10));
	attr.aux_watermark = variant->aux_watermark;
	attr.watermark = 1;
	attr.wakeup_watermark = 16 * sysconf(_SC_PAGESIZE);
	fd = ptsim_trace_burner(_metadata, &s, &attr, 400, 32, false, &pid);
	capture_save(&s, variant->trace);
	close(fd);
	check_watermark(_metadata, &s, variant->aux_watermark ?: s.aux_size / 2);
	capture_free(&s);
}

/* ---- locked memory ---- */

static long read_long(const char *path)
{
	long v = LONG_MIN;
	FILE *f = fopen(path, "r");

	if (!f)
		return LONG_MIN;
	if (fscanf(f, "%ld", &v) != 1)
		v = LONG_MIN;
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) > 0 ? 0 : -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* The sysctls a case as root changes: its fixture's teardown puts them back. */
struct sysctls {
	long mlock_kb, paranoid;
};

static void sysctls_save(struct __test_metadata *_metadata, struct sysctls *s)
{
	s->mlock_kb = read_long(MLOCK_SYSCTL);
	s->paranoid = read_long(PARANOID_SYSCTL);
	ASSERT_NE(LONG_MIN, s->mlock_kb);
	ASSERT_NE(LONG_MIN, s->paranoid);
}

static void sysctls_restore(struct __test_metadata *_metadata,
			    const struct sysctls *s)
{
	EXPECT_EQ(0, write_long(MLOCK_SYSCTL, s->mlock_kb));
	EXPECT_EQ(0, write_long(PARANOID_SYSCTL, s->paranoid));
}

/* VmPin of this process in KiB, -1 if not found. */
static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int aux_map(int fd, struct perf_event_mmap_page *pg, long psz,
		   long pages, void **out)
{
	pg->aux_offset = 2 * psz;
	pg->aux_size = pages * psz;
	*out = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    2 * psz);
	return *out == MAP_FAILED ? errno : 0;
}

/*
 * 6.12 charges a mapping to the user's perf_mlock up to
 * perf_event_mlock_kb (times the online CPUs), and the rest to the
 * process's pinned_vm (VmPin), which may not exceed RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK (when perf_event_paranoid > -1): EPERM, with
 * nothing charged.  Unmapping gives back all of it, so the same mapping
 * succeeds again; a leak of even one page of either charge would make it
 * fail, as the limit is set to exactly what it needs.
 *
 * As nobody (uid 65534, no capabilities), with perf_event_mlock_kb giving
 * the user a limit, and RLIMIT_MEMLOCK at what the mapping within the
 * limit needs beyond the user's allowance, plus rlim_delta pages: map a
 * data area of one page (two with the user page), then AUX areas over
 * the limit and just within it, twice each, unmapping in between.  With
 * 0 (fits) the one within the limit maps; with -1 (one_short) it is
 * EPERM, as the one over the limit is, with nothing charged: the
 * boundary is exactly where the allowance, perf_event_mlock_kb times the
 * online CPUs, ends.  make check runs both with 2 CPUs and with 8.
 */
FIXTURE(aux_mlock) {
	struct sysctls saved;
};

FIXTURE_VARIANT(aux_mlock) {
	long rlim_delta;
};

FIXTURE_VARIANT_ADD(aux_mlock, fits) { .rlim_delta = 0 };
FIXTURE_VARIANT_ADD(aux_mlock, one_short) { .rlim_delta = -1 };

FIXTURE_SETUP(aux_mlock)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_ROOT);
	sysctls_save(_metadata, &self->saved);
}

/* In the parent, as root: the test drops to nobody. */
FIXTURE_TEARDOWN_PARENT(aux_mlock)
{
	sysctls_restore(_metadata, &self->saved);
}

TEST_F(aux_mlock, limit)
{
	long psz = sysconf(_SC_PAGESIZE), ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	long lim, ok_pages, bad_pages, extra, pin;
	bool fits = variant->rlim_delta >= 0;
	struct perf_event_mmap_page *pg;
	struct perf_event_attr attr;
	struct rlimit rl;
	int fd, i, err;
	void *aux;

	/* 8 pages per CPU for the user; the data area takes 2 of them. */
	lim = 8 * ncpus;
	for (ok_pages = 1; ok_pages < lim; ok_pages *= 2)
		;
	bad_pages = 2 * ok_pages;
	extra = ok_pages - (lim - 2);	/* what goes to VmPin */
	TH_LOG("cpus=%ld user limit=%ld, aux ok=%ld bad=%ld, rlimit=%ld pages",
	       ncpus, lim, ok_pages, bad_pages, extra + variant->rlim_delta);

	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, 8 * psz / 1024));
	/* nobody may trace itself with exclude_kernel at paranoid 2. */
	if (self->saved.paranoid > 2 || self->saved.paranoid < 0)
		EXPECT_EQ(0, write_long(PARANOID_SYSCTL, 2));
	rl.rlim_cur = (extra + variant->rlim_delta) * psz;
	rl.rlim_max = rl.rlim_cur;
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, setgid(65534));
	ASSERT_EQ(0, setuid(65534));
	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, 0, -1, -1);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
	pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	/* VmPin (KiB): before; after the refusal, mapped, unmapped; again */
	pin = vm_pin_kb();
	EXPECT_EQ(0, pin);
	for (i = 0; i < 2; i++) {
		err = aux_map(fd, pg, psz, bad_pages, &aux);
		EXPECT_EQ(EPERM, err);
		if (!err)
			munmap(aux, bad_pages * psz);
		EXPECT_EQ(pin, vm_pin_kb());
		err = aux_map(fd, pg, psz, ok_pages, &aux);
		EXPECT_EQ(fits ? 0 : EPERM, err);
		EXPECT_EQ(pin + (fits ? extra * psz / 1024 : 0), vm_pin_kb());
		if (!err)
			munmap(aux, ok_pages * psz);
		EXPECT_EQ(pin, vm_pin_kb());
	}
	munmap(pg, 2 * psz);
	close(fd);
}

/* ---- ITRACE_START ---- */

/*
 * 6.12 logs PERF_RECORD_ITRACE_START when an ITRACE event is scheduled in
 * until the PMU reports its trace started (perf_event_itrace_started()),
 * which ptsim does on its first start: so exactly one, naming the traced
 * task, before any AUX record, however often the task is scheduled in
 * (each sched-out ends a transaction: many AUX records).
 */
TEST_F(ptsim, itrace_start_once)
{
	struct perf_event_attr attr;
	int fd, p[2], i;
	struct capture s;
	struct pt_check w;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(3);
		for (i = 0; i < 40; i++) {
			burn(2);
			usleep(1000);
		}
		_exit(0);
	}
	close(p[0]);
	ptsim_attr(&attr, 0);
	/* Larger than the trace: the buffer never fills (no restarts). */
	fd = ptsim_trace_task(_metadata, &s, &attr, pid, p[1], 256, false);
	ptsim_until_exit(_metadata, &s, pid);
	pt_check_trace(&s, &w, 0);
	capture_save(&s, "itrace_start_once");
	TH_LOG("itrace_start=%lu aux_records=%lu pge=%lu bytes=%zu",
	       s.itrace_start, s.aux_records, w.pge, s.len);
	EXPECT_EQ(1, s.itrace_start);
	ASSERT_GE(s.nrecs, 1);
	EXPECT_EQ(PERF_RECORD_ITRACE_START, s.recs[0].type);
	EXPECT_EQ(pid, (pid_t)s.recs[0].a);
	EXPECT_EQ(pid, (pid_t)s.recs[0].b);
	/* Scheduled in many times: each sched-in writes a TIP.PGE. */
	EXPECT_GE(w.pge, 10);
	EXPECT_GE(s.aux_records, 10);
	EXPECT_EQ(0, w.errors);
	EXPECT_EQ(0, w.unexplained);
	close(fd);
	capture_free(&s);
}

/* ---- Which PMUs have an AUX area: the probe ---- */

/*
 * 6.12 says in no file whether a PMU can fill an AUX area.  A tool finds
 * out as perf and tools/aux/aux-pmus do: open an event of the PMU (config
 * 0, disabled, user space only; per task, or on CPU 0 where a per-task
 * event is EINVAL, as for a PMU without a task context), map the user
 * page alone as its data area, and a one-page AUX area above it.  Only
 * that last mmap() answers: 0, an AUX area; EOPNOTSUPP, none (the core's
 * has_aux() check, made after the mapping's own checks and the
 * locked-memory charge); ENOMEM, an AUX area whose PMU refused one page
 * (arm_spe wants two).  Any other outcome, of any step, says nothing
 * about the PMU: the open fails with EACCES under perf_event_paranoid,
 * EBUSY while an exclusive PMU is in use, and a mapping with EPERM over
 * the locked-memory limit, whether or not the PMU has an AUX area.
 * These cases pin each of those answers.
 */
enum { PROBE_OPEN, PROBE_DATA, PROBE_AUX };

struct probe {
	int step;	/* where it ended: PROBE_OPEN, _DATA or _AUX */
	int err;	/* that step's errno; 0: the AUX area was mapped */
};

static struct probe aux_probe(int type, __u64 config, bool exclude_kernel)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.config = config,
		.disabled = 1,
		.exclude_kernel = exclude_kernel,
		.exclude_hv = 1,
	};
	long psz = sysconf(_SC_PAGESIZE);
	struct probe r = { PROBE_OPEN, 0 };
	struct perf_event_mmap_page *pg;
	void *aux;
	int fd;

	fd = perf_open(&attr, 0, -1, -1);
	if (fd < 0 && errno == EINVAL)
		fd = perf_open(&attr, -1, online_cpu(0), -1);
	if (fd < 0) {
		r.err = errno;
		return r;
	}
	r.step = PROBE_DATA;
	pg = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		r.err = errno;
		close(fd);
		return r;
	}
	r.step = PROBE_AUX;
	pg->aux_offset = psz;
	pg->aux_size = psz;
	aux = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, psz);
	if (aux == MAP_FAILED)
		r.err = errno;
	else
		munmap(aux, psz);
	munmap(pg, psz);
	close(fd);
	return r;
}

/* How a probe is made. */
enum {
	AS_SELF,		/* by this task */
	AS_BUSY,		/* while it has a ptsim event of its own */
	AS_NOBODY,		/* by nobody, at perf_event_paranoid 2 */
	AS_NOBODY_LOCKED,	/* the same, with one page of locked memory */
};

/* A probe of @pmu, how it is made, and the answer it must get. */
struct probe_case {
	const char *pmu;	/* the PMU's name in sysfs */
	__u64 config;
	bool kernel;		/* of the kernel too, not only user space */
	int as;			/* AS_* */
	int step, err;		/* where the probe ends, with what */
};

/*
 * @p made by nobody, at perf_event_paranoid 2; AS_NOBODY_LOCKED with
 * perf_event_mlock_kb 0 and RLIMIT_MEMLOCK one page, so that the user
 * page fits and the AUX page does not.
 */
static struct probe probe_as_nobody(struct __test_metadata *_metadata,
				    int type, const struct probe_case *p)
{
	bool locked = p->as == AS_NOBODY_LOCKED;
	long psz = sysconf(_SC_PAGESIZE);
	struct rlimit rl = { psz, psz };
	struct probe *shared, r;
	int status;
	pid_t pid;

	ASSERT_EQ(0, write_long(PARANOID_SYSCTL, 2));
	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, locked ? 0 : 516));
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if ((locked && setrlimit(RLIMIT_MEMLOCK, &rl)) ||
		    setgid(65534) || setuid(65534))
			_exit(errno);
		*shared = aux_probe(type, p->config, !p->kernel);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status) TH_LOG("becoming nobody: %s",
				    strerror(WEXITSTATUS(status)));
	r = *shared;
	munmap(shared, sizeof(*shared));
	return r;
}

FIXTURE(aux_probe) {
	struct sysctls saved;
};

FIXTURE_VARIANT(aux_probe) {
	unsigned int needs;
	struct probe_case probes[6];	/* up to the first without a PMU */
};

/* ptsim's three registrations map the one-page AUX area. */
FIXTURE_VARIANT_ADD(aux_probe, ptsim) {
	.needs = PTSIM_NEED_PMU,
	.probes = {
		{ .pmu = "ptsim", .step = PROBE_AUX },
		{ .pmu = "ptsim_nosg", .step = PROBE_AUX },
		{ .pmu = "ptsim_large", .step = PROBE_AUX },
	},
};

/*
 * No AUX area: the software dummy event, and ptsim_mark, which only
 * writes samples into another event's AUX area (aux_output).  Each gets
 * as far as the AUX mmap(), which is EOPNOTSUPP.
 */
FIXTURE_VARIANT_ADD(aux_probe, no_aux) {
	.needs = PTSIM_NEED_MARK,
	.probes = {
		{ .pmu = "software", .config = PERF_COUNT_SW_DUMMY,
		  .step = PROBE_AUX, .err = EOPNOTSUPP },
		{ .pmu = "ptsim_mark", .step = PROBE_AUX, .err = EOPNOTSUPP },
	},
};

/*
 * ptsim is exclusive (PERF_PMU_CAP_EXCLUSIVE, as CoreSight's ETM is):
 * while this task has a ptsim event, the probe's per-task event on it is
 * EBUSY, which says nothing of an AUX area.  Once it is closed the probe
 * answers again.
 */
FIXTURE_VARIANT_ADD(aux_probe, busy) {
	.needs = PTSIM_NEED_PMU,
	.probes = {
		{ .pmu = "ptsim", .as = AS_BUSY,
		  .step = PROBE_OPEN, .err = EBUSY },
		{ .pmu = "ptsim", .step = PROBE_AUX },
	},
};

/*
 * As nobody at perf_event_paranoid 2, the probe a tool run by a user
 * makes: of user space, it tells ptsim from the dummy event as root's
 * does; of the kernel too, the open is EACCES (as would be the per-CPU
 * event of a PMU without a task context).  With perf_event_mlock_kb 0
 * and RLIMIT_MEMLOCK one page, the user page fits and the AUX page does
 * not: EPERM for ptsim and for the dummy event alike, as the charge comes
 * before the has_aux() check.
 */
FIXTURE_VARIANT_ADD(aux_probe, nobody) {
	.needs = PTSIM_NEED_PMU | PTSIM_NEED_ROOT,
	.probes = {
		{ .pmu = "ptsim", .as = AS_NOBODY, .step = PROBE_AUX },
		{ .pmu = "ptsim", .kernel = true, .as = AS_NOBODY,
		  .step = PROBE_OPEN, .err = EACCES },
		{ .pmu = "software", .config = PERF_COUNT_SW_DUMMY,
		  .as = AS_NOBODY, .step = PROBE_AUX, .err = EOPNOTSUPP },
		{ .pmu = "ptsim", .as = AS_NOBODY_LOCKED,
		  .step = PROBE_AUX, .err = EPERM },
		{ .pmu = "software", .config = PERF_COUNT_SW_DUMMY,
		  .as = AS_NOBODY_LOCKED, .step = PROBE_AUX, .err = EPERM },
	},
};

FIXTURE_SETUP(aux_probe)
{
	ptsim_need(_metadata, variant->needs);
	if (variant->needs & PTSIM_NEED_ROOT)
		sysctls_save(_metadata, &self->saved);
}

FIXTURE_TEARDOWN(aux_probe)
{
	if (variant->needs & PTSIM_NEED_ROOT)
		sysctls_restore(_metadata, &self->saved);
}

/* Each of the variant's probes, made as it says, gets its answer. */
TEST_F(aux_probe, answers)
{
	const struct probe_case *p;
	struct perf_event_attr attr;
	struct probe r;
	int type, fd;

	for (p = variant->probes; p->pmu; p++) {
		type = pmu_type(p->pmu);
		ASSERT_LE(0, type) TH_LOG("%s: no type", p->pmu);
		if (p->as == AS_BUSY) {
			ptsim_attr(&attr, 0);
			fd = perf_open(&attr, 0, -1, -1);
			ASSERT_LE(0, fd)
				TH_LOG("perf_event_open: %s", strerror(errno));
			r = aux_probe(type, p->config, !p->kernel);
			close(fd);
		} else if (p->as == AS_SELF) {
			r = aux_probe(type, p->config, !p->kernel);
		} else {
			r = probe_as_nobody(_metadata, type, p);
		}
		EXPECT_TRUE(r.step == p->step && r.err == p->err)
			TH_LOG("probe %td (%s): step %d: %s", p - variant->probes,
			       p->pmu, r.step, strerror(r.err));
	}
}

/*
 * Every PMU of the system, probed as root: whatever its open or data
 * mapping gives, a probe that reaches the AUX mmap() must get one of the
 * answers above (0, EOPNOTSUPP, ENOMEM), or a tool could not read it.
 * ptsim's three registrations answer 0.
 */
TEST(aux_probe_every_pmu)
{
	int pmus = 0, aux = 0, none = 0, type, ptsim = 0;
	struct dirent *d;
	struct probe r;
	DIR *dir;

	dir = opendir("/sys/bus/event_source/devices");
	ASSERT_NE(NULL, dir);
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		type = pmu_type(d->d_name);
		EXPECT_LE(0, type) TH_LOG("%s: no type", d->d_name);
		if (type < 0)
			continue;
		pmus++;
		r = aux_probe(type, 0, true);
		TH_LOG("%-12s step %d: %s", d->d_name, r.step,
		       r.err ? strerror(r.err) : "AUX area mapped");
		if (r.step != PROBE_AUX)
			continue;
		EXPECT_TRUE(!r.err || r.err == EOPNOTSUPP || r.err == ENOMEM)
			TH_LOG("%s: the AUX mmap() is %s", d->d_name,
			       strerror(r.err));
		if (r.err == EOPNOTSUPP) {
			none++;
		} else if (!r.err || r.err == ENOMEM) {
			aux++;
			if (!strncmp(d->d_name, "ptsim", 5))
				ptsim++;
		}
	}
	closedir(dir);
	TH_LOG("%d PMUs: %d with an AUX area, %d without", pmus, aux, none);
	EXPECT_LE(1, none);	/* software, at least */
	if (ptsim_type() >= 0)
		EXPECT_EQ(3, ptsim);
}

/* ---- What a user may do with ptsim ---- */

/*
 * ptsim is a driver that users load on shared machines: an unprivileged
 * user (no CAP_PERFMON) may trace their own tasks with it, but nothing
 * that loads the machine (ptsim.rst, "Privileges"): a tick's work and the
 * FIFO a stop drains with interrupts off are bounded, and the benchmark
 * mode, which runs thousands of transactions per tick in hard interrupt,
 * is refused, whatever the PMI's delivery.  Each configuration, opened
 * per task by nobody at perf_event_paranoid 2 and by root: the errnos of
 * the table (0: open).
 */
struct priv_case {
	const char *what;
	__u64 config1, config2;
	int nobody, root;	/* errno of the open, 0 if it opens */
};

static const struct priv_case priv_cases[] = {
	{ "the defaults", 0, 0, 0, 0 },
	{ "rate 256", PTSIM_CFG1_RATE(256), 0, 0, 0 },
	{ "rate 257", PTSIM_CFG1_RATE(257), 0, EACCES, 0 },
	{ "rate 4096", PTSIM_CFG1_RATE(4096), 0, EACCES, 0 },
	{ "period 100 us", PTSIM_CFG1_PERIOD(100), 0, 0, 0 },
	{ "period 99 us", PTSIM_CFG1_PERIOD(99), 0, EACCES, 0 },
	{ "period 10 us", PTSIM_CFG1_PERIOD(10), 0, EACCES, 0 },
	{ "fifo 2^16", PTSIM_CFG1_FIFO(16), 0, 0, 0 },
	{ "fifo 2^17", PTSIM_CFG1_FIFO(17), 0, EACCES, 0 },
	{ "fifo 2^22", PTSIM_CFG1_FIFO(22), 0, EACCES, 0 },
	{ "bench 2^6", 0, PTSIM_CFG2_BENCH(6), EACCES, 0 },
	/* Invalid for anyone: the range check comes first. */
	{ "rate 4097", PTSIM_CFG1_RATE(4097), 0, EINVAL, EINVAL },
	{ "period 9 us", PTSIM_CFG1_PERIOD(9), 0, EINVAL, EINVAL },
};

/*
 * errno of a per-task open of ptsim with @c's configuration and @config1's
 * bits, 0 if it opens.
 */
static int priv_open(const struct priv_case *c, __u64 config1)
{
	struct perf_event_attr attr;
	int fd;

	ptsim_attr(&attr, c->config1 | config1);
	attr.config2 = c->config2;
	fd = perf_open(&attr, 0, -1, -1);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Drop to nobody, with perf_event_paranoid 2 (set by the caller, as root). */
static int become_nobody(void)
{
	if (setgid(65534) || setuid(65534))
		return errno;
	return 0;
}

FIXTURE(unpriv) {
	struct sysctls saved;
};

FIXTURE_VARIANT(unpriv) {
	__u64 config1;		/* the delivery of ptsim's PMI */
};

FIXTURE_VARIANT_ADD(unpriv, nmi) { .config1 = 0 };
FIXTURE_VARIANT_ADD(unpriv, irq_pmi) { .config1 = PTSIM_CFG1_IRQ_PMI };

FIXTURE_SETUP(unpriv)
{
	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_ROOT);
	sysctls_save(_metadata, &self->saved);
	/* What nobody may do at paranoid 2, within the default mlock. */
	ASSERT_EQ(0, write_long(PARANOID_SYSCTL, 2));
	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, 516));
}

/* In the parent, as root: the cases drop to nobody. */
FIXTURE_TEARDOWN_PARENT(unpriv)
{
	sysctls_restore(_metadata, &self->saved);
}

TEST_F(unpriv, config_limits)
{
	const struct priv_case *c;
	int *shared, status, i;
	pid_t pid;

	shared = mmap(NULL, sizeof(priv_cases), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (become_nobody())
			_exit(errno);
		for (i = 0; i < (int)ARRAY_SIZE(priv_cases); i++)
			shared[i] = priv_open(&priv_cases[i],
					      variant->config1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status) TH_LOG("becoming nobody: %s",
				    strerror(WEXITSTATUS(status)));
	for (i = 0; i < (int)ARRAY_SIZE(priv_cases); i++) {
		c = &priv_cases[i];
		EXPECT_EQ(c->nobody, shared[i])
			TH_LOG("%s as nobody: %s, want %s", c->what,
			       strerror(shared[i]), strerror(c->nobody));
		status = priv_open(c, variant->config1);
		EXPECT_EQ(c->root, status)
			TH_LOG("%s as root: %s, want %s", c->what,
			       strerror(status), strerror(c->root));
	}
	munmap(shared, sizeof(priv_cases));
}

/*
 * A loop that stays in its own section, so that a sample's IP can be
 * told to be in it: __start_/__stop_ptsim_loop_text bound it.
 * ptsim_user_loop(fd, n) enables the group of @fd (if >= 0), spins @n
 * times and disables the group, with syscall instructions of its own,
 * so that a sample taken while the task is in one of those calls has
 * its user IP in the section as well.  Returns the first call's error
 * (a negative errno), or 0.  In assembly, so that the compiler moves
 * nothing out of the section.
 */
extern const char __start_ptsim_loop_text[], __stop_ptsim_loop_text[];

#ifdef __x86_64__
/* The uapi header (KHDR_INCLUDES); <linux/perf_regs.h> is the kernel's. */
#include "asm/perf_regs.h"

#define HAVE_USER_LOOP	1
long ptsim_user_loop(int fd, unsigned long n);

static_assert(SYS_ioctl == 16, "ptsim_user_loop's ioctl number");
static_assert(PERF_EVENT_IOC_ENABLE == 0x2400 &&
	      PERF_EVENT_IOC_DISABLE == 0x2401 && PERF_IOC_FLAG_GROUP == 1,
	      "ptsim_user_loop's ioctl requests");

asm(".pushsection ptsim_loop_text, \"ax\", @progbits\n"
	".globl ptsim_user_loop\n"
	".type ptsim_user_loop, @function\n"
	"ptsim_user_loop:\n"
	"	mov %rsi, %r8\n"		/* n */
	"	mov %edi, %r9d\n"		/* fd */
	"	xor %eax, %eax\n"
	"	test %r9d, %r9d\n"
	"	js 2f\n"
	"	mov $16, %eax\n"		/* ioctl(fd, ENABLE, GROUP) */
	"	mov $0x2400, %esi\n"
	"	mov $1, %edx\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 4f\n"
	"2:	test %r8, %r8\n"
	"	jz 3f\n"
	"1:	dec %r8\n"
	"	jnz 1b\n"
	"3:	xor %eax, %eax\n"
	"	test %r9d, %r9d\n"
	"	js 4f\n"
	"	mov $16, %eax\n"		/* ioctl(fd, DISABLE, GROUP) */
	"	mov %r9d, %edi\n"
	"	mov $0x2401, %esi\n"
	"	mov $1, %edx\n"
	"	syscall\n"
	"4:	ret\n"
	".size ptsim_user_loop, . - ptsim_user_loop\n"
	".popsection\n");
#else
#define HAVE_USER_LOOP	0
static long ptsim_user_loop(int fd, unsigned long n)
{
	return -EOPNOTSUPP;
}
#endif

/* Iterations of ptsim_user_loop() that take about @ms. */
static unsigned long loop_for_ms(int ms)
{
	unsigned long n = 1000000;
	double t0 = now_ms(), t;

	ptsim_user_loop(-1, n);
	t = now_ms() - t0;
	return t > 0 ? (unsigned long)(n * (ms / t)) + 1 : n;
}

/*
 * The rest of a sample that comes from the registers the sample was
 * taken with: PERF_SAMPLE_REGS_INTR (those registers), REGS_USER (the
 * task's user registers) and CALLCHAIN (walked from them), each asked
 * for the IP only.  At paranoid 2 nobody must also exclude the kernel's
 * part of the callchain.  A short stack: the loop has no frames.
 */
static void mark_regs_attr(struct perf_event_attr *attr)
{
	attr->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			     PERF_SAMPLE_REGS_INTR;
	attr->exclude_callchain_kernel = 1;
	attr->sample_max_stack = 16;
#ifdef __x86_64__
	attr->sample_regs_user = 1ULL << PERF_REG_X86_IP;
	attr->sample_regs_intr = 1ULL << PERF_REG_X86_IP;
#endif
}

struct mark_regs_count {
	unsigned long parsed;		/* samples laid out as asked */
	unsigned long intr_none, intr_outside;
	unsigned long user_none, user_outside;
	unsigned long chain_kernel, chain_outside;
	__u64 first_bad;
};

static bool in_loop(__u64 ip)
{
	return ip >= (__u64)(unsigned long)__start_ptsim_loop_text &&
	       ip < (__u64)(unsigned long)__stop_ptsim_loop_text;
}

/*
 * A sample of mark_regs_attr()'s type: IP, TID, CALLCHAIN (nr, then nr
 * entries), REGS_USER (abi, then the IP if abi is not NONE), REGS_INTR
 * (the same).  The same rule as the sample's IP: the registers it was
 * taken with are the loop's, user mode (REGS_INTR present, as it is for
 * user registers; the core reports ABI NONE for kernel ones of an event
 * that excludes the kernel), REGS_USER the loop's too, and a callchain
 * of user entries only, the first of them in the loop.  (The core walks
 * a user callchain from the task's user registers whatever the sample's
 * registers, so that part holds of a PMU that passes kernel ones; the
 * REGS_INTR and IP checks are the ones that catch it.)
 */
static void mark_check_regs(struct mark_regs_count *rc,
			    const struct perf_event_header *h)
{
	const char *p = (const char *)(h + 1), *end = (const char *)h + h->size;
	__u64 nr, i, v, abi, user_first = 0;
	bool in_user = false, seen_user = false;
	int part;

	p += 2 * sizeof(__u64);			/* IP, PID and TID */
	if (p + sizeof(nr) > end)
		return;
	memcpy(&nr, p, sizeof(nr));
	p += sizeof(nr);
	if (nr > (__u64)(end - p) / sizeof(__u64))
		return;
	for (i = 0; i < nr; i++) {
		memcpy(&v, p + i * sizeof(v), sizeof(v));
		if (v >= (__u64)PERF_CONTEXT_MAX) {
			if (v == (__u64)PERF_CONTEXT_KERNEL)
				rc->chain_kernel++;
			in_user = v == (__u64)PERF_CONTEXT_USER;
			continue;
		}
		if (v >> 63) {			/* a kernel address */
			rc->chain_kernel++;
			continue;
		}
		if (in_user && !seen_user) {
			seen_user = true;
			user_first = v;
		}
	}
	p += nr * sizeof(__u64);
	if (!seen_user || !in_loop(user_first)) {
		rc->chain_outside++;
		if (!rc->first_bad)
			rc->first_bad = user_first ? user_first : 1;
	}
	for (part = 0; part < 2; part++) {	/* REGS_USER, then REGS_INTR */
		if (p + sizeof(abi) > end)
			return;
		memcpy(&abi, p, sizeof(abi));
		p += sizeof(abi);
		if (abi == PERF_SAMPLE_REGS_ABI_NONE) {
			if (part)
				rc->intr_none++;
			else
				rc->user_none++;
			continue;
		}
		if (p + sizeof(v) > end)
			return;
		memcpy(&v, p, sizeof(v));
		p += sizeof(v);
		if (!in_loop(v)) {
			if (part)
				rc->intr_outside++;
			else
				rc->user_outside++;
			if (!rc->first_bad)
				rc->first_bad = v;
		}
	}
	if (p == end)
		rc->parsed++;
}

/*
 * Samples of a ptsim_mark member carry where the workload was when the
 * engine's tick came, as a hardware counter's carry where it overflowed:
 * here a user loop, so every sample's IP is in it, flagged user.  Never
 * ptsim's own code, in which the PMI's NMI (the default delivery) comes:
 * an unprivileged event that excludes the kernel must not receive a
 * kernel address.  By nobody at paranoid 2, a task's own group of ptsim
 * (one record a 1 ms tick, no consumer needed) and a ptsim_mark member
 * sampling PERF_SAMPLE_IP every tick, over 300 ms of the loop, which
 * enables and disables the group itself.  With @inherit, the group is
 * inherited and the loop runs in a child process: the child's events,
 * which the perf core creates and which write into the parent's
 * buffers, follow the same rule.  (An inherited per-task event cannot be
 * mapped, so that group is per task on CPU 0, as perf record opens
 * one, and the child runs there.)  With @regs, the same rule for what
 * else of those registers a sample may carry (mark_check_regs()).
 */
static void mark_samples_user_ips(struct __test_metadata *_metadata,
				  __u64 config1, bool inherit, bool regs)
{
	long psz = sysconf(_SC_PAGESIZE), data_pages = 8;
	unsigned long samples = 0, outside = 0, kernel = 0, n;
	struct mark_regs_count rc = { 0 };
	struct perf_event_attr attr, mark;
	struct perf_event_mmap_page *pg, *lpg;
	__u64 head, pos, ip, first_bad = 0;
	__u32 spid;
	int fd, mfd, status, cpu = inherit ? online_cpu(0) : -1;
	pid_t pid;
	void *aux;
	char *data;

	if (ptsim_missing(PTSIM_NEED_MARK_PMI))
		SKIP(return, "%s", ptsim_missing(PTSIM_NEED_MARK_PMI));
	if (!HAVE_USER_LOOP)
		SKIP(return, "the loop's own syscalls are x86_64 only");
	n = loop_for_ms(300);
	ASSERT_EQ(0, become_nobody());

	ptsim_attr(&attr, config1 | PTSIM_CFG1_RATE(1) | PTSIM_CFG1_PERIOD(1000));
	attr.inherit = inherit;
	fd = perf_open(&attr, 0, cpu, -1);
	ASSERT_LE(0, fd) TH_LOG("ptsim as nobody: %s", strerror(errno));
	mark = mark_attr(1, false);
	mark.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	mark.exclude_kernel = 1;
	mark.inherit = inherit;
	if (regs)
		mark_regs_attr(&mark);
	mfd = perf_open(&mark, 0, cpu, fd);
	ASSERT_LE(0, mfd) TH_LOG("ptsim_mark as nobody: %s", strerror(errno));
	lpg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, lpg);
	ASSERT_EQ(0, aux_map(fd, lpg, psz, 16, &aux));
	pg = mmap(NULL, (1 + data_pages) * psz, PROT_READ | PROT_WRITE,
		  MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	pid = getpid();
	if (inherit) {
		/*
		 * The child's enable reaches its own inherited events; the
		 * parent's, on CPU 0 too, may sample it on its way to wait.
		 */
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(pin_to(cpu) || ptsim_user_loop(fd, n) ? 1 : 0);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	} else {
		ASSERT_EQ(0, ptsim_user_loop(fd, n));
	}

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	data = (char *)pg + pg->data_offset;
	for (pos = 0; pos + sizeof(struct perf_event_header) <= head;) {
		struct perf_event_header *h =
			(void *)(data + pos % pg->data_size);

		if (!h->size)
			break;
		if (h->type != PERF_RECORD_SAMPLE) {
			pos += h->size;
			continue;
		}
		memcpy(&ip, h + 1, sizeof(ip));
		memcpy(&spid, (char *)(h + 1) + sizeof(ip), sizeof(spid));
		if (spid == (__u32)pid) {
			samples++;
			if (regs)
				mark_check_regs(&rc, h);
			if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) !=
			    PERF_RECORD_MISC_USER)
				kernel++;
			if (!in_loop(ip)) {
				if (!outside++)
					first_bad = ip;
			}
		}
		pos += h->size;
	}
	TH_LOG("samples=%lu not user=%lu outside the loop=%lu (first 0x%llx; loop 0x%lx..0x%lx)",
	       samples, kernel, outside, (unsigned long long)first_bad,
	       (unsigned long)__start_ptsim_loop_text,
	       (unsigned long)__stop_ptsim_loop_text);
	EXPECT_GE(samples, 10) TH_LOG("too few samples to tell");
	EXPECT_EQ(0, kernel);
	EXPECT_EQ(0, outside);
	if (regs) {
		TH_LOG("parsed=%lu REGS_INTR none=%lu out=%lu REGS_USER none=%lu out=%lu",
		       rc.parsed, rc.intr_none, rc.intr_outside,
		       rc.user_none, rc.user_outside);
		TH_LOG("callchain kernel=%lu first user out=%lu (first bad 0x%llx)",
		       rc.chain_kernel, rc.chain_outside,
		       (unsigned long long)rc.first_bad);
		EXPECT_EQ(samples, rc.parsed);
		EXPECT_EQ(0, rc.intr_none);
		EXPECT_EQ(0, rc.intr_outside);
		EXPECT_EQ(0, rc.user_none);
		EXPECT_EQ(0, rc.user_outside);
		EXPECT_EQ(0, rc.chain_kernel);
		EXPECT_EQ(0, rc.chain_outside);
	}
	munmap(pg, (1 + data_pages) * psz);
	munmap(aux, 16 * psz);
	munmap(lpg, 2 * psz);
	close(mfd);
	close(fd);
}

TEST_F(unpriv, mark_samples_user_ips)
{
	mark_samples_user_ips(_metadata, variant->config1, false, false);
}

TEST_F(unpriv, mark_samples_user_ips_inherited)
{
	mark_samples_user_ips(_metadata, variant->config1, true, false);
}

TEST_F(unpriv, mark_samples_user_ips_regs_chain)
{
	mark_samples_user_ips(_metadata, variant->config1, false, true);
}

TEST_F(unpriv, mark_samples_user_ips_regs_chain_inherited)
{
	mark_samples_user_ips(_metadata, variant->config1, true, true);
}

/*
 * A ptsim_mark member counts the ticks of its leader's engine, and
 * nothing outside a ptsim group (ptsim.rst).  When the leader of a
 * per-CPU group is closed, the perf core keeps the member on the CPU as
 * a group of its own: it must not count the ticks of the next ptsim
 * event on that CPU.  As root, on CPU 0: a group of ptsim and a counting
 * ptsim_mark, which counts; the leader closed; a second ptsim event on
 * CPU 0, which runs, while the member's count stays where it was.
 */
TEST_F(ptsim_mark, orphan_counts_nothing)
{
	struct perf_event_attr attr, mark = mark_attr(0, false);
	__u64 c1 = 0, c2 = 0, c3 = 0, bytes = 0;
	int fd, mfd, fd2, cpu = online_cpu(0);
	struct capture s, s2;

	if (geteuid())
		SKIP(return, "needs root for per-CPU events");
	ASSERT_EQ(0, pin_to(cpu));
	ptsim_attr(&attr, PTSIM_CFG1_RATE(1) | PTSIM_CFG1_PERIOD(1000));
	fd = perf_open(&attr, -1, cpu, -1);
	ASSERT_LE(0, fd) TH_LOG("ptsim on CPU %d: %s", cpu, strerror(errno));
	mfd = perf_open(&mark, -1, cpu, fd);
	ASSERT_LE(0, mfd) TH_LOG("ptsim_mark: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(&s, fd, attr.config1, 2, 16, false));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	burn(30);
	ASSERT_EQ(sizeof(c1), read(mfd, &c1, sizeof(c1)));
	EXPECT_GT(c1, 0) TH_LOG("the member counted nothing in its group");

	/* The leader goes: the member stays on CPU 0, alone. */
	capture_free(&s);
	close(fd);
	ASSERT_EQ(sizeof(c2), read(mfd, &c2, sizeof(c2)));

	fd2 = perf_open(&attr, -1, cpu, -1);
	ASSERT_LE(0, fd2) TH_LOG("second ptsim on CPU %d: %s", cpu,
				 strerror(errno));
	ASSERT_EQ(0, capture_map(&s2, fd2, attr.config1, 2, 16, false));
	ASSERT_EQ(0, ioctl(fd2, PERF_EVENT_IOC_ENABLE, 0));
	burn(30);
	ASSERT_EQ(0, ioctl(fd2, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(bytes), read(fd2, &bytes, sizeof(bytes)));
	ASSERT_EQ(sizeof(c3), read(mfd, &c3, sizeof(c3)));
	TH_LOG("member: %llu in its group, %llu when its leader closed",
	       (unsigned long long)c1, (unsigned long long)c2);
	TH_LOG("member: %llu after another event ran (%llu bytes)",
	       (unsigned long long)c3, (unsigned long long)bytes);
	EXPECT_GT(bytes, 0) TH_LOG("the second event did not run");
	EXPECT_EQ(c2, c3) TH_LOG("the orphaned member counted another event's ticks");
	capture_free(&s2);
	close(fd2);
	close(mfd);
}

TEST_HARNESS_MAIN
