/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for tests that drive the AUX area through the ptsim PMU
 * (Documentation/admin-guide/perf/ptsim.rst): open and map an event,
 * consume its data and AUX areas the way perf does, and check the trace.
 *
 * The trace check understands exactly the packets ptsim writes.  It is
 * deliberately independent of libipt, which is not available in the test
 * guest; every trace a test produces is also written under
 * $AUXLAB_TRACE_DIR (when set) in aux-record's format, so the host decodes
 * it with libipt as well.
 */
#ifndef PTSIM_LIB_H
#define PTSIM_LIB_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "aux_consumer.h"
#include "aux_sysfs.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define PTSIM_SYSFS	"/sys/bus/event_source/devices/ptsim"
#define MLOCK_SYSCTL	"/proc/sys/kernel/perf_event_mlock_kb"
#define PARANOID_SYSCTL	"/proc/sys/kernel/perf_event_paranoid"
#define PTSIM_REC	16	/* data record size */

/*
 * ptsim's format/ directory.  attr.config holds the bits of Intel PT's
 * layout that ptsim implements, where intel_pt has them.
 */
#define PTSIM_PT		((__u64)1 << 0)
#define PTSIM_TSC		((__u64)1 << 10)	/* TSC in PSB+ */
#define PTSIM_BRANCH		((__u64)1 << 13)	/* needed by PTSIM_TNT */
#define PTSIM_PSB(x)		((__u64)(x) << 24)
/* perf's default for an Intel PT PMU: every test traces with it. */
#define PTSIM_CONFIG		(PTSIM_PT | PTSIM_TSC | PTSIM_BRANCH)
/*
 * attr.config1: the simulation, and the PMU format type and the loss
 * flag of AUX records.  ptsim_attr() takes these.
 */
#define PTSIM1_FMT(x)		((__u64)(x) << 0)
#define PTSIM1_LOSS(x)		((__u64)(x) << 8)	/* 1 PARTIAL, 2 COLLISION */
#define PTSIM_RATE(x)		((__u64)(x) << 10)
#define PTSIM_PERIOD(x)		((__u64)(x) << 26)
#define PTSIM_FIFO(x)		((__u64)(x) << 38)
#define PTSIM_DRAIN(x)		((__u64)(x) << 43)
#define PTSIM_REGION(x)		((__u64)(x) << 55)
#define PTSIM_NOFLUSH		((__u64)1 << 59)	/* pmu::flush declines */
#define PTSIM_IRQ_PMI		((__u64)1 << 60)	/* PMI in the tick, no NMI */
#define PTSIM_TNT		((__u64)1 << 61)	/* TNTs, not PADs */
/* attr.config2: the benchmark mode */
#define PTSIM2_BENCH(x)		((__u64)(x) << 0)
#define PTSIM2_BENCH_SPLIT	((__u64)1 << 5)		/* ... timing end/begin */

/* The type of the PMU @name (sysfs), -1 if there is none. */
static inline int pmu_type(const char *name)
{
	int type = auxc_pmu_type(name);

	return type < 0 ? -1 : type;
}

static inline int ptsim_type(void)
{
	return pmu_type("ptsim");
}

/*
 * ptsim's caps/@name (sysfs), -1 if it has none.  ptsim built as a module
 * has no AUX sampling (caps/aux_sample 0) and no PMI for ptsim_mark
 * (caps/mark_pmi 0): 6.12 exports neither perf_output_copy_aux() nor
 * perf_event_overflow().
 */
static inline long ptsim_cap(const char *name)
{
	char file[64];
	long long v;

	snprintf(file, sizeof(file), "caps/%s", name);
	return auxc_pmu_read_ll("ptsim", file, &v) ? -1 : v;
}

#define PTSIM_NO_AUX_SAMPLE	"ptsim has no AUX sampling (a module: caps/aux_sample 0)"
#define PTSIM_NO_MARK_PMI	"ptsim_mark has no PMI (a module: caps/mark_pmi 0)"

/*
 * ptsim's PMIs handled in NMI so far, summed over the CPUs, from debugfs
 * ptsim/nmi (root only): "pmi" (transactions ended and begun, or
 * truncated, by the NMI handler), "mark" (ptsim_mark overflows) or
 * "late" (PMIs whose NMI did not come in time).  -1 if it cannot be
 * read; on x86 ptsim always has the file, so a test that claims the NMI
 * path requires it there (PTSIM_NMI_EXPECTED).
 */
#if defined(__x86_64__) || defined(__i386__)
#define PTSIM_NMI_EXPECTED	1
#else
#define PTSIM_NMI_EXPECTED	0
#endif

/* The same on one CPU (cpu >= 0), or summed over all of them (cpu < 0). */
static inline long ptsim_nmi_on(int cpu, const char *field)
{
	FILE *f = fopen("/sys/kernel/debug/ptsim/nmi", "r");
	char name[16];
	long sum = 0;
	int n, at = -1;
	__u64 v;

	if (!f)
		return -1;
	/* "cpu<N> sent <n> handled <n> pmi <n> mark <n> late <n>" per CPU */
	while ((n = fscanf(f, " %15s", name)) == 1) {
		if (sscanf(name, "cpu%d", &at) == 1)
			continue;
		if (fscanf(f, " %llu", (unsigned long long *)&v) != 1)
			break;
		if (!strcmp(name, field) && (cpu < 0 || cpu == at))
			sum += v;
	}
	fclose(f);
	return sum;
}

static inline long ptsim_nmi(const char *field)
{
	return ptsim_nmi_on(-1, field);
}

struct nmi_counts {
	long pmi, mark, late;
};

static inline struct nmi_counts ptsim_nmi_counts(void)
{
	struct nmi_counts n = {
		ptsim_nmi("pmi"), ptsim_nmi("mark"), ptsim_nmi("late"),
	};

	return n;
}

/*
 * In a test: since @before (ptsim_nmi_counts()), at least @min more of
 * @field went through ptsim's NMI handler, and no PMI was late.  On x86
 * only, where ptsim delivers its PMIs as NMIs (its default); the guest's
 * tests run one at a time, so the counts are the test's.
 */
#define EXPECT_NMI(before, field, min) do {					\
	struct nmi_counts _now = ptsim_nmi_counts();				\
										\
	if (PTSIM_NMI_EXPECTED) {						\
		ASSERT_GE(_now.field, 0) TH_LOG("no debugfs ptsim/nmi");	\
		EXPECT_GE(_now.field - (before).field, (long)(min))		\
			TH_LOG("NMI " #field ": %ld -> %ld, wanted %ld more",	\
			       (before).field, _now.field, (long)(min));	\
		EXPECT_EQ((before).late, _now.late)				\
			TH_LOG("late PMIs: %ld -> %ld", (before).late,		\
			       _now.late);					\
	}									\
} while (0)

/* A ptsim event with perf's default config and @sim in config1. */
static inline void ptsim_attr(struct perf_event_attr *attr, __u64 sim)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = ptsim_type();
	attr->config = PTSIM_CONFIG;
	attr->config1 = sim;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_TID;
}

static inline int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, 0);
}

struct aux_rec {
	__u32 type;
	__u64 a, b, c;	/* AUX: offset size flags; ITRACE_START: pid tid */
	__u32 pid;	/* AUX: the task that wrote it (sample_id) */
};

struct aux_copy {
	__u64 file_off, aux_off, size;
};

/*
 * One event with its data and AUX areas mapped (the consumer of
 * tools/aux/lib/aux_consumer.h), and what came out.  pg, aux, aux_size,
 * data_size and psz are the consumer's, for the tests to read.
 */
struct sess {
	struct auxc c;
	int fd;
	__u64 config;
	long psz;
	bool snapshot;
	struct perf_event_mmap_page *pg;
	size_t data_size;
	void *aux;
	size_t aux_size;

	unsigned char *trace;	/* AUX data copied out, in order */
	size_t len, cap;
	struct aux_rec *recs;
	size_t nrecs, rcap;
	struct aux_copy *copies;
	size_t ncopies, ccap;
	bool joined;		/* the next piece extends the last copy */

	unsigned long aux_records, truncated, itrace_start, lost, wakeups;
	unsigned long bad_records;	/* malformed data records: errors */
	bool reenable;		/* re-enable after TRUNCATED, as tools do */
};

static inline void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * elem);
	if (!p) {
		perror("realloc");
		exit(1);
	}
	*cap = n;
	return p;
}

/*
 * Map 1 + data_pages pages of data area on @data_fd, then aux_pages of
 * AUX area right above it (read-only: overwrite mode) on @fd.  When the
 * two differ, @fd's output goes to @data_fd's buffer first, with
 * PERF_EVENT_IOC_SET_OUTPUT: the way a tool shares one buffer among
 * events.  The session polls (and re-enables) @fd.  Returns 0 or -errno,
 * with the session cleaned up.
 */
static inline int sess_map_shared(struct sess *s, int fd, int data_fd,
				  __u64 config, int data_pages, int aux_pages,
				  bool snapshot)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->config = config;
	s->snapshot = snapshot;
	err = auxc_map(&s->c, fd, data_fd, data_pages, aux_pages, snapshot);
	if (err)
		return err;
	s->psz = s->c.psz;
	s->pg = s->c.pg;
	s->data_size = s->c.data_size;
	s->aux = s->c.aux;
	s->aux_size = s->c.aux_size;
	s->reenable = true;
	return 0;
}

/* Both areas on @fd's own buffer. */
static inline int sess_map(struct sess *s, int fd, __u64 config,
			   int data_pages, int aux_pages, bool snapshot)
{
	return sess_map_shared(s, fd, fd, config, data_pages, aux_pages,
			       snapshot);
}

static inline void sess_add_rec(struct sess *s, __u32 type, __u64 a, __u64 b,
				__u64 c)
{
	s->recs = grow(s->recs, &s->rcap, s->nrecs + 1, sizeof(*s->recs));
	s->recs[s->nrecs++] = (struct aux_rec){ type, a, b, c, 0 };
}

static inline void sess_record(const struct auxc_record *r, void *arg)
{
	struct sess *s = arg;
	__u64 v;

	switch (r->hdr->type) {
	case PERF_RECORD_AUX:
		s->aux_records++;
		if (r->flags & PERF_AUX_FLAG_TRUNCATED)
			s->truncated++;
		sess_add_rec(s, PERF_RECORD_AUX, r->offset, r->size, r->flags);
		/* sample_id_all with PERF_SAMPLE_TID: pid, tid */
		if (r->sample_id_size >= sizeof(v)) {
			memcpy(&v, r->sample_id, sizeof(v));
			s->recs[s->nrecs - 1].pid = (__u32)v;
		}
		break;
	case PERF_RECORD_ITRACE_START:
		s->itrace_start++;
		sess_add_rec(s, PERF_RECORD_ITRACE_START, r->pid, r->tid, 0);
		break;
	case PERF_RECORD_LOST:
		s->lost += r->lost;
		sess_add_rec(s, PERF_RECORD_LOST, r->id, r->lost, 0);
		break;
	}
}

/*
 * Consume the data area: PERF_RECORD_AUX, ITRACE_START, LOST.  A
 * malformed record is an error (walk_trace() counts it).
 */
static inline void sess_read_records(struct sess *s)
{
	if (auxc_read_records(&s->c, sess_record, s) < 0)
		s->bad_records++;
}

/* Append a piece of AUX data; the pieces of one take make one copy. */
static inline void sess_piece(__u64 aux_off, const void *p, size_t size,
			      void *arg)
{
	struct sess *s = arg;
	struct aux_copy *last = s->ncopies ? &s->copies[s->ncopies - 1] : NULL;

	s->trace = grow(s->trace, &s->cap, s->len + size, 1);
	if (s->joined && last && last->aux_off + last->size == aux_off) {
		last->size += size;
	} else {
		s->copies = grow(s->copies, &s->ccap, s->ncopies + 1,
				 sizeof(*s->copies));
		s->copies[s->ncopies++] =
			(struct aux_copy){ s->len, aux_off, size };
	}
	s->joined = true;
	memcpy(s->trace + s->len, p, size);
	s->len += size;
}

/* Append [aux_off, aux_off + size) of the AUX stream as one copy. */
static inline void sess_append(struct sess *s, __u64 aux_off, size_t size)
{
	s->joined = false;
	auxc_copy_range(&s->c, aux_off, size, sess_piece, s);
}

/*
 * Normal mode: copy [aux_tail, aux_head) out and free it.  An aux_head
 * more than the area's size ahead of aux_tail is an error.
 */
static inline size_t sess_copy_aux(struct sess *s)
{
	long long n;

	s->joined = false;
	n = auxc_consume(&s->c, sess_piece, s);
	if (n < 0) {
		s->bad_records++;
		return 0;
	}
	return n;
}

/*
 * Overwrite mode: the event must be stopped (aux_head is published at
 * the end of a transaction); copy the newest data, at most aux_size bytes.
 */
static inline size_t sess_snapshot(struct sess *s)
{
	s->joined = false;
	return auxc_snapshot(&s->c, sess_piece, s);
}

/*
 * Restart after TRUNCATED.  The PMU stopped when the buffer filled, and
 * the kernel turns the event off, but not at once: the 6.12 core only at
 * its next sched-out (the AUX overrun path sets pending_disable without
 * queueing the work that acts on it), and ENABLE of an event still on is
 * a no-op.  So turn it off, take what is left, and turn it on again, as
 * a tool does; this works whenever the kernel's disable lands.
 */
static inline void sess_restart(struct sess *s)
{
	ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
	sess_read_records(s);
	sess_copy_aux(s);
	ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* One round of consumption; true if poll() reported a wake-up. */
static inline bool sess_poll(struct sess *s, int timeout_ms)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	bool woke = poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN);
	/* Before the records are read: they are what may count a TRUNCATED. */
	unsigned long truncated = s->truncated;

	if (woke)
		s->wakeups++;
	sess_read_records(s);
	if (!s->snapshot) {
		sess_copy_aux(s);
		if (s->reenable && s->truncated != truncated)
			sess_restart(s);
	}
	return woke;
}

/* Write the trace in aux-record's directory format for the host decoder. */
static inline void sess_save(struct sess *s, const char *name)
{
	const char *root = getenv("AUXLAB_TRACE_DIR");
	char path[PATH_MAX];
	FILE *f;
	size_t i;

	if (!root || !*root)
		return;
	snprintf(path, sizeof(path), "%s/%s", root, name);
	mkdir(root, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/aux.bin", root, name);
	f = fopen(path, "w");
	if (!f || fwrite(s->trace, 1, s->len, f) != s->len) {
		perror(path);
		exit(1);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/records.txt", root, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	auxc_fprint_header(f, "ptsim", ptsim_type(), s->config, s->snapshot,
			   s->aux_size);
	for (i = 0; i < s->nrecs; i++) {
		struct perf_event_header h = { .type = s->recs[i].type };
		struct auxc_record r = { .hdr = &h };

		/* a, b, c: offset size flags, pid tid or id lost */
		r.offset = s->recs[i].a;
		r.size = s->recs[i].b;
		r.flags = s->recs[i].c;
		r.pid = s->recs[i].a;
		r.tid = s->recs[i].b;
		r.id = s->recs[i].a;
		r.lost = s->recs[i].b;
		auxc_fprint_record(f, &r);
	}
	for (i = 0; i < s->ncopies; i++)
		auxc_fprint_copy(f, s->copies[i].file_off, s->copies[i].aux_off,
				 s->copies[i].size);
	fclose(f);
}

static inline void sess_free(struct sess *s)
{
	auxc_unmap(&s->c);
	free(s->trace);
	free(s->recs);
	free(s->copies);
	s->aux = NULL;
	s->pg = NULL;
	s->trace = NULL;
	s->recs = NULL;
	s->copies = NULL;
}

/* ---- the trace check ---- */

struct walk {
	unsigned long packets, pad, psb, psbend, ptw64, ptw32, ovf, pge, pgd;
	unsigned long fup, tsc, errors, gaps, unexplained;
	unsigned long straddles;	/* packets crossing a region end */
	/* TIP.PGE right after a PSB+: an enable or a resume, not a tick */
	unsigned long enables;
	/* TNT bits; FUPs away from the trace's IP (its last TIP.PGE's) */
	unsigned long tnt, fup_moved;
	unsigned long user_ips, bad_ips;	/* IPs in FUP and TIP.PGE */
	__u64 first_seq, last_seq;
	bool have_seq;
	/* ptsim_mark samples (aux_output): how many, numbers out of order */
	unsigned long marks, mark_skips;
	__u32 last_mark;
};

/* Length of the ptsim packet at p, 0 if it is not one ptsim writes. */
static inline size_t pt_len(const unsigned char *p, size_t left)
{
	size_t n = 0;

	if (p[0] == 0x00)
		n = 1;				/* PAD */
	else if (p[0] == 0x02 && left >= 2) {
		static const unsigned char ext[][2] = {
			{ 0x82, 16 },	/* PSB */
			{ 0x23, 2 },	/* PSBEND */
			{ 0x03, 4 },	/* CBR */
			{ 0xf3, 2 },	/* OVF */
			{ 0x12, 6 },	/* PTW, 4-byte payload */
			{ 0x92, 6 },	/* the same, IP bit: ptsim_mark */
			{ 0x32, 10 },	/* PTW, 8-byte payload */
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(ext); i++)
			if (p[1] == ext[i][0])
				n = ext[i][1];
	} else if (p[0] == 0x19)
		n = 8;				/* TSC */
	else if (p[0] == 0x99)
		n = 2;				/* MODE.Exec */
	else if ((p[0] & 0x1f) == 0x01 || (p[0] & 0x1f) == 0x11 ||
		 (p[0] & 0x1f) == 0x1d) {	/* TIP.PGD, TIP.PGE, FUP */
		if ((p[0] >> 5) == 0)
			n = 1;
		else if ((p[0] >> 5) == 6)
			n = 9;
	} else if (!(p[0] & 1))
		n = 1;				/* short TNT */
	if (n == 16 && left >= 16) {
		size_t i;

		for (i = 0; i < 16; i += 2)
			if (p[i] != 0x02 || p[i + 1] != 0x82)
				return 0;
	}
	return n <= left ? n : 0;
}

static inline __u64 get_le(const unsigned char *p, int bytes)
{
	__u64 v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

/* Is there a lossy AUX record whose data ends in (lo, hi]? */
static inline bool lossy_end_in(struct sess *s, __u64 lo, __u64 hi)
{
	size_t i;

	for (i = 0; i < s->nrecs; i++) {
		struct aux_rec *r = &s->recs[i];

		if (r->type == PERF_RECORD_AUX &&
		    (r->c & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL |
			     PERF_AUX_FLAG_COLLISION)) &&
		    r->a + r->b > lo && r->a + r->b <= hi)
			return true;
	}
	return false;
}

/*
 * Walk one contiguous piece of trace (starting at AUX offset aux_off),
 * count packets and check the PTW sequence numbers.  A gap must be
 * explained by OVF + PTW32 with the exact number of bytes dropped, or by
 * a lossy AUX record ending between the two numbers.  region, if not 0,
 * is the region size: no packet may cross a multiple of it.
 */
static inline void walk_piece(struct sess *s, struct walk *w,
			      const unsigned char *p, size_t len,
			      __u64 aux_off, size_t region)
{
	__u64 last_pos = 0, ovf_lost = 0, at = 0;
	bool synced = false, ovf = false, after_psb = false;
	size_t i = 0, n;

	w->have_seq = false;
	while (i < len) {
		n = pt_len(p + i, len - i);
		if (!synced) {
			/* Snapshots start anywhere: sync on the first PSB. */
			if (n == 16) {
				synced = true;
				continue;
			}
			/* ... but a normal trace starts with one. */
			if (!s->snapshot && p[i])
				w->errors++;
			i++;
			continue;
		}
		if (!n) {
			w->errors++;
			synced = false;
			i++;
			continue;
		}
		/*
		 * A data record's fill (six PADs, or TNTs with PTSIM_TNT) is
		 * part of the record: w->pad counts the alignment only.
		 */
		if (n == 10 && p[i + 1] == 0x32 && i + PTSIM_REC <= len) {
			size_t f;

			for (f = i + n; f < i + PTSIM_REC; f++)
				if (p[f] != 0x00 && p[f] != 0x06)
					break;
			if (f == i + PTSIM_REC) {
				for (f = i + n; f < i + PTSIM_REC; f++)
					w->tnt += p[f] == 0x06;
				n = PTSIM_REC;
			}
		}
		if (region && (aux_off + i) / region !=
			      (aux_off + i + n - 1) / region)
			w->straddles++;
		w->packets++;
		if ((p[i] & 0x1f) == 0x11 && after_psb)
			w->enables++;
		after_psb = p[i] == 0x02 && p[i + 1] == 0x23;
		if (p[i] == 0x00) {
			w->pad++;
		} else if (p[i] == 0x02 && p[i + 1] == 0x82) {
			w->psb++;
		} else if (p[i] == 0x02 && p[i + 1] == 0x23) {
			w->psbend++;
		} else if (p[i] == 0x02 && p[i + 1] == 0xf3) {
			w->ovf++;
			ovf = true;
		} else if (p[i] == 0x02 && p[i + 1] == 0x12) {
			w->ptw32++;
			if (ovf)
				ovf_lost += get_le(p + i + 2, 4);
		} else if (p[i] == 0x02 && p[i + 1] == 0x92) {
			__u32 nr = get_le(p + i + 2, 4);

			if (nr != w->last_mark + 1)
				w->mark_skips++;
			w->marks++;
			w->last_mark = nr;
		} else if (p[i] == 0x02 && p[i + 1] == 0x32) {
			__u64 seq = get_le(p + i + 2, 8);

			w->ptw64++;
			if (w->have_seq && seq != w->last_seq + 1) {
				__u64 missing = seq - w->last_seq - 1;
				bool by_ovf = ovf && ovf_lost == missing * PTSIM_REC;

				w->gaps++;
				if (seq <= w->last_seq ||
				    (!by_ovf && !lossy_end_in(s, aux_off + last_pos,
							      aux_off + i)))
					w->unexplained++;
			}
			if (w->ptw64 == 1)
				w->first_seq = seq;
			w->have_seq = true;
			w->last_seq = seq;
			last_pos = i;
			ovf = false;
			ovf_lost = 0;
		} else if (p[i] == 0x19) {
			w->tsc++;
		} else if ((p[i] & 0x1f) == 0x11) {
			w->pge++;
		} else if ((p[i] & 0x1f) == 0x01) {
			w->pgd++;
		} else if ((p[i] & 0x1f) == 0x1d) {
			w->fup++;
		}
		/* FUP and TIP.PGE carry the traced task's user IP. */
		if (n == 9 && ((p[i] & 0x1f) == 0x11 || (p[i] & 0x1f) == 0x1d)) {
			__u64 ip = get_le(p + i + 1, 8);

			if (ip && ip < (1ULL << 47))
				w->user_ips++;
			else
				w->bad_ips++;
			/*
			 * perf's decoder walks the code from the trace's IP
			 * to a FUP's: ptsim's FUPs are all at the trace's IP.
			 */
			if ((p[i] & 0x1f) == 0x11 || !at)
				at = ip;
			else if (ip != at)
				w->fup_moved++;
		}
		i += n;
	}
}

/* Walk the whole trace, piece by piece (pieces are snapshots). */
static inline void walk_trace(struct sess *s, struct walk *w, size_t region)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	/* A malformed data record is an error of the trace it belongs to. */
	w->errors = s->bad_records;
	if (!s->snapshot) {
		/* Normal mode: one piece, file offset == AUX offset. */
		walk_piece(s, w, s->trace, s->len, 0, region);
		return;
	}
	for (i = 0; i < s->ncopies; i++) {
		struct aux_copy *c = &s->copies[i];
		size_t len = c->size;

		/* A snapshot that wrapped is two copies: join them. */
		if (i + 1 < s->ncopies &&
		    s->copies[i + 1].aux_off == c->aux_off + c->size) {
			len += s->copies[i + 1].size;
			i++;
		}
		walk_piece(s, w, s->trace + c->file_off, len, c->aux_off,
			   region);
	}
}

/* ---- workloads ---- */

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Spin in user space for ms milliseconds, or until killed if ms < 0 (for
 * a test that stops the child once it has seen what it waits for, so
 * that a starved guest makes it slower, never wrong).
 */
static inline void burn(int ms)
{
	double end = now_ms() + ms;

	/* clock_gettime() is a vDSO call: this stays in user space. */
	while (ms < 0 || now_ms() < end)
		;
}

/* Pin task pid (0: the caller) to one CPU. */
static inline int pin_task(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

static inline int pin_to(int cpu)
{
	return pin_task(0, cpu);
}

/* Whether CPU 1 can be taken offline here: 2 CPUs, root, CPU hotplug. */
static inline bool cpu_hotplug_possible(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= 2 &&
	       !access("/sys/devices/system/cpu/cpu1/online", W_OK);
}

/* Take a CPU offline (on == 0) or bring it back: 0 or an errno. */
static inline int cpu_set_online(int cpu, int on)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

/*
 * A disabled dummy event of @pid on @cpu, which never counts or samples:
 * an anchor (below), the owner of a buffer that other events share with
 * PERF_EVENT_IOC_SET_OUTPUT, as a tool has one (its data area mapped, the
 * AUX area through a ptsim event redirected to it: sess_map_shared()),
 * or an event just to map (ptsim_leak.h's dummy_open()).
 */
static inline int dummy_open_on(pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
	};

	return perf_open(&attr, pid, cpu, -1);
}

/*
 * Keep the children on their inherited copies of the events.  When every
 * event of a task's perf context is inherited, a child's context is a
 * clone of its parent's, and at a context switch between the two on one
 * CPU the core may swap the contexts (context_equiv()): the parent's own
 * events, with their buffer, then run in the child, and a child that
 * does what only the parent's events could do proves nothing.  A child
 * forked or created here starts on the test's CPU, so that swap happens
 * often.  A disabled software event that is not inherited makes the
 * child's context never a clone (see ptsim_fuzz's fz_anchor()).
 */
static inline int anchor_open(void)
{
	return dummy_open_on(0, -1);
}

/*
 * In a child: die with the test, which may end on an assertion before it
 * stops the child.  A child left spinning would hold copies of the
 * test's perf fds (and with them its events) and a CPU, and fail the
 * tests after it.  @parent: the test's pid, taken before fork().
 */
static inline int die_with(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		return -1;
	return getppid() == parent ? 0 : -1;
}

/*
 * Fork a child that waits for a byte on a pipe, then burns ms of CPU
 * (pinned to cpu if >= 0) and exits; with ms < 0 it burns until killed
 * (see stop_burner()).  *go is the write end.
 */
static inline pid_t spawn_burner(int ms, int cpu, int *go)
{
	pid_t pid, parent;
	int p[2];
	char c;

	if (pipe(p))
		return -1;
	parent = getpid();
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[1]);
		if (die_with(parent) || (cpu >= 0 && pin_to(cpu)))
			_exit(2);
		if (read(p[0], &c, 1) != 1)
			_exit(3);
		burn(ms);
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static inline void release(int go)
{
	if (write(go, "g", 1) != 1)
		perror("write");
	close(go);
}

/*
 * Consume until at least len bytes of trace have been copied out, or
 * timeout_ms have passed.  Returns whether len was reached.  The limit
 * is generous: it only bounds a test whose data stopped for good.
 */
static inline bool consume_until_len(struct sess *s, size_t len,
				     int timeout_ms)
{
	double end = now_ms() + timeout_ms;

	while (s->len < len && now_ms() < end)
		sess_poll(s, 10);
	return s->len >= len;
}

/* Kill a burner started with ms < 0; true if it died of that signal. */
static inline bool stop_burner(pid_t pid)
{
	int status;

	if (kill(pid, SIGKILL) || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/* Consume until the child exits, then drain once more. */
static inline int consume_until_exit(struct sess *s, pid_t pid)
{
	int status = -1;

	for (;;) {
		sess_poll(s, 10);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	sess_poll(s, 0);
	return status;
}

#endif /* PTSIM_LIB_H */
