// SPDX-License-Identifier: GPL-2.0
/*
 * What a user without privileges may cost the machine with ptsim.
 *
 * ptsim can be loaded on a machine with other users, and lets a user
 * without CAP_PERFMON trace their own tasks within limits that bound
 * what that costs the machine (ptsim.rst, "Privileges"), which its
 * caps/user_* files give: ticks at least caps/user_min_period_us apart,
 * so at most 1e6 / user_min_period_us a second on a CPU; at most
 * caps/user_pmis_per_tick PMIs (NMIs by default) in one tick, whatever
 * the event's attributes, each of which ends at most one AUX transaction;
 * and at most the FIFO, 2^caps/user_max_fifo_shift bytes, written into
 * the AUX area in one tick.  So such a user's ptsim costs a CPU at most
 * user_pmis_per_tick * 1e6 / user_min_period_us PMIs, and as many
 * PERF_RECORD_AUX records, a second.
 *
 * Each case plays the hostile user: as nobody at perf_event_paranoid 2
 * (set for the case and put back), a task pinned to one online CPU
 * traces itself with what costs most (the largest rate and FIFO, the
 * shortest period), for BUSY_MS of a busy loop that frees the AUX area
 * as fast as it fills, with the attributes that interrupt most:
 * aux_watermark 1, which would be a PMI per record if nothing bounded
 * it, with NMI and with hard-irq delivery; aux_watermark 16; a
 * ptsim_mark member whose every tick is an overflow, a PMI; an inherited
 * event in eight children busy on the same CPU; and as many events as
 * the user can open.  The test's own process, root, counts what that CPU
 * took meanwhile: ptsim's NMIs from debugfs ptsim/nmi, or without
 * debugfs the NMI line of /proc/interrupts, and with debugfs the engine's
 * ticks and the most PMIs and bytes of one tick (ptsim/tick).  Each
 * bound is an upper bound with slack for the machine's own NMIs: a
 * loaded machine only gives fewer ticks: a case runs on (MAX_BUSY_MS at
 * most) until MIN_TICKS have happened, and one in which too little
 * happened even then skips.
 *
 * Each case prints its figures on one line, for a table, with
 * ptsim/irqoff's longest tick with interrupts disabled, which is not
 * checked: times depend on the machine.
 */
#include <poll.h>

#include "ptsim_lib.h"
#include "ptsim_leak.h"
#include "../kselftest_harness.h"
#include "ptsim_harness.h"

#define BUSY_MS		1500
/*
 * Past BUSY_MS a case runs on until MIN_TICKS ticks have happened (a host
 * that starves the guest's vCPU slows them), at most this long.
 */
#define MAX_BUSY_MS	15000
#define DATA_PAGES	4
#define AUX_BYTES	(64 << 10)
#define CHILDREN	8
/* Opens that many_events tries at most, whatever RLIMIT_NOFILE allows. */
#define MAX_OPENS	4096
/* What must have happened for a case to tell anything. */
#define MIN_TICKS	100
#define MIN_AUX_BYTES	(64 << 10)
/* The NMIs that are not ptsim's: the boot's own, and /proc/interrupts'. */
#define NMI_SLACK	50
#define TICK_SLACK	10
#define BOUND_MARGIN	1.05
/* What a tick may write beyond the FIFO: a record in flight. */
#define BYTES_SLACK	64
#define MAX_ERRNOS	8

enum hostile_kind {
	ONE_EVENT,	/* one event on the task */
	MARK_MEMBER,	/* and a ptsim_mark member sampling every tick */
	INHERITED,	/* inherited by children busy on the same CPU */
	MANY_EVENTS,	/* as many events as the user can open */
};

struct hostile_case {
	const char *name;
	enum hostile_kind kind;
	__u32 watermark;	/* attr.aux_watermark */
	__u64 config1;		/* more of attr.config1 */
};

/* What ptsim allows a user without CAP_PERFMON (caps/user_*). */
struct user_caps {
	long max_rate, min_period_us, max_fifo_shift, pmis_per_tick;
};

/* What the worker, nobody, did; shared with the test's process. */
struct hostile_run {
	char skip[128];		/* the case cannot run here: why */
	char fail[192];		/* the worker failed: where, and errno */
	unsigned long aux_records, truncated, lost, bad;
	unsigned long long aux_bytes;
	double busy_ms;
	long opens, opened, mapped;		/* many_events */
	struct {
		int err;
		long n;
	} refused[MAX_ERRNOS];			/* opens refused, by errno */
	long mem_kb[2];		/* kernel memory before, while open */
};

/* What the test's process counts on the CPU, before and after. */
struct cpu_counts {
	double ms;
	long sent, pmi, mark, late, stray;	/* ptsim/nmi */
	long irq_nmi;				/* /proc/interrupts */
	long ticks;				/* ptsim/tick */
};

static void cpu_counts_take(struct cpu_counts *c, int cpu)
{
	c->ms = now_ms();
	c->sent = ptsim_nmi_on(cpu, "sent");
	c->pmi = ptsim_nmi_on(cpu, "pmi");
	c->mark = ptsim_nmi_on(cpu, "mark");
	c->late = ptsim_nmi_on(cpu, "late");
	c->stray = ptsim_nmi_on(cpu, "stray");
	c->irq_nmi = irq_count_on("NMI", cpu);
	c->ticks = ptsim_debugfs_cpu("tick", cpu, "ticks");
}

/* @b - @a, or -1 if either is unknown. */
static long delta(long a, long b)
{
	return a < 0 || b < 0 ? -1 : b - a;
}

/* Slab + VmallocUsed + Percpu of /proc/meminfo in kB, -1 if unknown. */
static long kernel_mem_kb(void)
{
	long slab = meminfo_kb("Slab"), vm = meminfo_kb("VmallocUsed");
	long pcpu = meminfo_kb("Percpu");

	return slab < 0 || vm < 0 || pcpu < 0 ? -1 : slab + vm + pcpu;
}

/* ---- the worker: nobody, on the CPU ---- */

struct worker {
	const struct hostile_case *hc;
	const struct user_caps *uc;
	struct hostile_run *r;
	int cpu;
	int *fds, nfds;		/* every event opened */
	struct capture *s;	/* those with their areas mapped */
	int ns;
	pid_t kids[CHILDREN];
	int go[CHILDREN], nkids;
};

static int run_fail(struct hostile_run *r, const char *what, int err)
{
	snprintf(r->fail, sizeof(r->fail), "%s: %s", what, strerror(err));
	return -1;
}

static void note_refusal(struct hostile_run *r, int err)
{
	int i;

	for (i = 0; i < MAX_ERRNOS; i++) {
		if (!r->refused[i].n)
			r->refused[i].err = err;
		if (r->refused[i].err == err) {
			r->refused[i].n++;
			return;
		}
	}
}

/* The costliest configuration nobody may have, with the case's attributes. */
static void hostile_attr(struct perf_event_attr *attr, const struct worker *w)
{
	ptsim_attr(attr, PTSIM_CFG1_RATE(w->uc->max_rate) |
		   PTSIM_CFG1_PERIOD(w->uc->min_period_us) |
		   PTSIM_CFG1_FIFO(w->uc->max_fifo_shift) | w->hc->config1);
	attr->aux_watermark = w->hc->watermark;
	attr->inherit = w->hc->kind == INHERITED;
}

/* Map the data and AUX areas of @fd into the next capture. */
static int map_event(struct worker *w, int fd, __u64 config1)
{
	long psz = sysconf(_SC_PAGESIZE);
	int aux_pages = AUX_BYTES / psz ? AUX_BYTES / psz : 1;
	int err;

	err = capture_map(&w->s[w->ns], fd, config1, DATA_PAGES, aux_pages,
			  false);
	if (!err)
		w->ns++;
	return err;
}

static int open_one(struct worker *w, int cpu)
{
	struct perf_event_attr attr;
	int fd, err;

	hostile_attr(&attr, w);
	fd = perf_open(&attr, 0, cpu, -1);
	if (fd < 0)
		return run_fail(w->r, "ptsim as nobody", errno);
	w->fds[w->nfds++] = fd;
	err = map_event(w, fd, attr.config1);
	if (err)
		return run_fail(w->r, "the areas' mmap()", -err);
	return fd;
}

/*
 * A ptsim_mark member sampling every tick, without aux_output: each
 * overflow is a PMI.  Its samples have no buffer to go to, which costs
 * the PMI nothing less.
 */
static int open_mark(struct worker *w)
{
	struct perf_event_attr mark = {
		.size = sizeof(mark),
		.type = pmu_type("ptsim_mark"),
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
		.exclude_kernel = 1,
	};
	int leader = open_one(w, -1), fd;

	if (leader < 0)
		return -1;
	fd = perf_open(&mark, 0, -1, leader);
	if (fd < 0 && errno == EOPNOTSUPP) {
		snprintf(w->r->skip, sizeof(w->r->skip),
			 "ptsim_mark refuses a sampling member without aux_output (EOPNOTSUPP: a module)");
		return -1;
	}
	if (fd < 0)
		return run_fail(w->r, "ptsim_mark as nobody", errno);
	w->fds[w->nfds++] = fd;
	return 0;
}

/*
 * An event on this task and CPU inherited by CHILDREN children, each held
 * back until the events are enabled, then busy there.  (Per task on a
 * CPU: an inherited event on every CPU cannot be mapped.)
 */
static int open_inherited(struct worker *w)
{
	int i;

	if (open_one(w, w->cpu) < 0)
		return -1;
	for (i = 0; i < CHILDREN; i++) {
		w->kids[i] = spawn_burner(-1, w->cpu, &w->go[i]);
		if (w->kids[i] <= 0)
			return run_fail(w->r, "fork", errno);
		w->nkids++;
	}
	return 0;
}

/*
 * As many events on this task as RLIMIT_NOFILE allows (its hard limit),
 * up to MAX_OPENS tries: on each CPU, and on every CPU, in turn.  ptsim
 * is exclusive, so once this task has an event on each CPU every other
 * is refused (EBUSY), which is allowed, as is any refusal other than
 * running out of descriptors, which ends the opens.  Then as many of
 * them mapped as the user's locked memory allows, the one on the test's
 * CPU first, which must succeed; the others never run, as the task
 * stays on its CPU.
 */
static int open_many(struct worker *w)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF), opens;
	struct perf_event_attr attr;
	struct hostile_run *r = w->r;
	int i, fd, cpu, here = -1, err;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return run_fail(r, "getrlimit", errno);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	opens = rl.rlim_cur < MAX_OPENS ? (long)rl.rlim_cur : MAX_OPENS;
	w->fds = calloc(opens, sizeof(*w->fds));
	w->s = calloc(opens, sizeof(*w->s));
	if (!w->fds || !w->s)
		return run_fail(r, "calloc", ENOMEM);
	r->mem_kb[0] = kernel_mem_kb();
	hostile_attr(&attr, w);
	for (i = 0; i < opens; i++) {
		cpu = i % (ncpus + 1) == ncpus ? -1 : i % (ncpus + 1);
		r->opens++;
		fd = perf_open(&attr, 0, cpu, -1);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			note_refusal(r, errno);
			break;
		}
		if (fd < 0) {
			note_refusal(r, errno);
			continue;
		}
		if (here < 0 && (cpu == w->cpu || cpu < 0))
			here = w->nfds;
		w->fds[w->nfds++] = fd;
	}
	r->opened = w->nfds;
	if (here < 0)
		return run_fail(r, "no event on the test's CPU opened", EBUSY);
	err = map_event(w, w->fds[here], attr.config1);
	if (err)
		return run_fail(r, "the areas' mmap() on the test's CPU", -err);
	for (i = 0; i < w->nfds; i++)
		if (i != here)
			map_event(w, w->fds[i], attr.config1);
	r->mapped = w->ns;
	r->mem_kb[1] = kernel_mem_kb();
	return 0;
}

static int worker_open(struct worker *w)
{
	if (w->hc->kind == MANY_EVENTS)
		return open_many(w);
	/* a leader and its member at most, with one buffer */
	w->fds = calloc(2, sizeof(*w->fds));
	w->s = calloc(1, sizeof(*w->s));
	if (!w->fds || !w->s)
		return run_fail(w->r, "calloc", ENOMEM);
	switch (w->hc->kind) {
	case MARK_MEMBER:
		return open_mark(w);
	case INHERITED:
		return open_inherited(w);
	default:
		return open_one(w, -1) < 0 ? -1 : 0;
	}
}

/* Free what the AUX areas hold, counting it. */
static void drain(struct worker *w)
{
	long long n;
	int i;

	for (i = 0; i < w->ns; i++) {
		n = capture_discard(&w->s[i]);
		if (n > 0)
			w->r->aux_bytes += n;
	}
}

/* Has @fd (@down) something to read: the parent's stop? */
static bool stop_said(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/*
 * Set up the case (before @up says so), wait for @down's go, then run it:
 * enable, busy freeing the AUX areas until @down says stop (the test:
 * BUSY_MS, or longer until enough happened), disable, free what is left,
 * and report (@up again).  Never returns.
 */
static void worker_run(struct worker *w, pid_t root, int up, int down)
{
	struct hostile_run *r = w->r;
	double t0;
	char c;
	int i, err;

	err = become_user(NOBODY_UID);
	if (err) {
		run_fail(r, "becoming nobody", -err);
		_exit(1);
	}
	if (die_with(root) || pin_to(w->cpu)) {
		run_fail(r, "die_with() or pinning", errno);
		_exit(1);
	}
	if (worker_open(w))
		_exit(1);
	if (write(up, "r", 1) != 1 || read(down, &c, 1) != 1)
		_exit(1);

	for (i = 0; i < w->nfds; i++)
		ioctl(w->fds[i], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	for (i = 0; i < w->nkids; i++)
		release(w->go[i]);
	t0 = now_ms();
	while (!stop_said(down))
		drain(w);
	for (i = 0; i < w->nfds; i++)
		ioctl(w->fds[i], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	r->busy_ms = now_ms() - t0;
	for (i = 0; i < w->ns; i++)
		w->s[i].reenable = false;
	drain(w);
	for (i = 0; i < w->ns; i++) {
		r->aux_records += w->s[i].aux_records;
		r->truncated += w->s[i].truncated;
		r->lost += w->s[i].lost;
		r->bad += w->s[i].bad_records;
	}
	err = write(up, "d", 1) == 1 ? 0 : 1;
	for (i = 0; i < w->nkids; i++)
		stop_burner(w->kids[i]);
	_exit(err);
}

/* ---- the cases ---- */

/*
 * The sysctls the cases set, saved by the setup and put back by the
 * parent, as root: the case itself drops to nobody.
 */
FIXTURE(hostile) {
	long paranoid, mlock_kb;
	bool saved;
};

FIXTURE_VARIANT(hostile) {
	struct hostile_case c;
};

/* A PMI at each record, but for the bound; NMI delivery (the default). */
FIXTURE_VARIANT_ADD(hostile, watermark_1_nmi) {
	.c = { .name = "watermark_1_nmi", .kind = ONE_EVENT, .watermark = 1 },
};

/* The same, with the PMI in the engine's hard interrupt. */
FIXTURE_VARIANT_ADD(hostile, watermark_1_irq) {
	.c = { .name = "watermark_1_irq", .kind = ONE_EVENT, .watermark = 1,
	       .config1 = PTSIM_CFG1_IRQ_PMI },
};

/* A watermark of one data record. */
FIXTURE_VARIANT_ADD(hostile, watermark_16) {
	.c = { .name = "watermark_16", .kind = ONE_EVENT, .watermark = 16 },
};

/* The watermark's PMIs, and a ptsim_mark overflow at every tick. */
FIXTURE_VARIANT_ADD(hostile, mark_period_1) {
	.c = { .name = "mark_period_1", .kind = MARK_MEMBER, .watermark = 1 },
};

/* An inherited event, in CHILDREN children busy on the CPU. */
FIXTURE_VARIANT_ADD(hostile, inherit_children) {
	.c = { .name = "inherit_children", .kind = INHERITED, .watermark = 1 },
};

/* As many events as the user can open; one engine per CPU runs. */
FIXTURE_VARIANT_ADD(hostile, many_events) {
	.c = { .name = "many_events", .kind = MANY_EVENTS, .watermark = 1 },
};

FIXTURE_SETUP(hostile)
{
	long long v;

	ptsim_need(_metadata, PTSIM_NEED_PMU | PTSIM_NEED_ROOT);
	if (_metadata->exit_code)
		return;
	ASSERT_EQ(0, auxc_read_ll(PARANOID_SYSCTL, &v));
	self->paranoid = v;
	ASSERT_EQ(0, auxc_read_ll(MLOCK_SYSCTL, &v));
	self->mlock_kb = v;
	self->saved = true;
}

FIXTURE_TEARDOWN_PARENT(hostile)
{
	if (!self->saved)
		return;
	EXPECT_EQ(0, write_long(PARANOID_SYSCTL, self->paranoid));
	EXPECT_EQ(0, write_long(MLOCK_SYSCTL, self->mlock_kb));
}

/* Read caps/user_*: 0, or the name of the first that ptsim lacks. */
static const char *user_caps_read(struct user_caps *uc)
{
	const struct {
		const char *name;
		long *v;
	} caps[] = {
		{ "user_max_rate", &uc->max_rate },
		{ "user_min_period_us", &uc->min_period_us },
		{ "user_max_fifo_shift", &uc->max_fifo_shift },
		{ "user_pmis_per_tick", &uc->pmis_per_tick },
	};
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(caps); i++) {
		*caps[i].v = ptsim_cap(caps[i].name);
		if (*caps[i].v < 0)
			return caps[i].name;
	}
	return NULL;
}

/* A figure for the table: "n/a" if unknown (< 0). */
static const char *fig(char *buf, size_t len, double v)
{
	if (v < 0)
		return "n/a";
	snprintf(buf, len, "%.0f", v);
	return buf;
}

static void log_refused(struct __test_metadata *_metadata,
			const struct hostile_run *r)
{
	char line[256] = "";
	size_t at = 0;
	int i;

	for (i = 0; i < MAX_ERRNOS && r->refused[i].n; i++)
		at += snprintf(line + at, sizeof(line) - at, " %s x%ld",
			       strerror(r->refused[i].err),
			       r->refused[i].n);
	TH_LOG("%ld opens: %ld events, %ld of them mapped; refused:%s",
	       r->opens, r->opened, r->mapped, at ? line : " none");
	if (r->mem_kb[0] < 0 || r->mem_kb[1] < 0)
		TH_LOG("kernel memory while open: no Slab, VmallocUsed or Percpu");
	else
		TH_LOG("kernel memory (Slab + VmallocUsed + Percpu) while open: %+ld kB",
		       r->mem_kb[1] - r->mem_kb[0]);
}

TEST_F_TIMEOUT(hostile, bounded, 60)
{
	const struct hostile_case *hc = &variant->c;
	long nmis, ticks, max_pmis = -1, max_bytes = -1, irqoff[4];
	long pmi_bound, tick_bound, bytes_bound;
	struct cpu_counts before, after;
	const char *why, *nmi_from;
	double elapsed_us, secs, ticks_max, waited_ms;
	struct hostile_run *r;
	struct user_caps uc;
	struct worker w = { .hc = hc, .uc = &uc };
	int up[2], down[2], status, cpu, i;
	char b[5][32], c = 0;
	pid_t pid, root = getpid();
	bool debugfs, enough;
	static const char * const irqoff_names[] = {
		"tick", "stop", "flush", "nmi_wait",
	};

	why = user_caps_read(&uc);
	if (why)
		SKIP(return, "ptsim has no caps/%s: no bound to check", why);
	ASSERT_TRUE(uc.max_rate >= 1 && uc.max_rate <= 4096 &&
		    uc.min_period_us >= 10 && uc.min_period_us <= 4095 &&
		    uc.max_fifo_shift >= 9 && uc.max_fifo_shift <= 22 &&
		    uc.pmis_per_tick >= 1)
		TH_LOG("caps/user_*: rate %ld period %ld fifo %ld pmis %ld: out of range",
		       uc.max_rate, uc.min_period_us, uc.max_fifo_shift,
		       uc.pmis_per_tick);
	if (hc->kind == MARK_MEMBER && ptsim_missing(PTSIM_NEED_MARK_PMI))
		SKIP(return, "%s", ptsim_missing(PTSIM_NEED_MARK_PMI));
	cpu = last_allowed_cpu();
	ASSERT_LE(0, cpu) TH_LOG("no online CPU to run on");
	debugfs = !ptsim_debugfs_missing();
	if (debugfs) {
		ASSERT_LE(0, ptsim_debugfs_cpu("tick", cpu, "ticks"))
			TH_LOG("no CPU %d in %s/tick", cpu, PTSIM_DEBUGFS);
	} else {
		TH_LOG("%s: NMIs from /proc/interrupts, no per-tick checks",
		       ptsim_debugfs_missing());
	}

	/* What nobody may do at paranoid 2, within the default mlock. */
	ASSERT_EQ(0, write_long(PARANOID_SYSCTL, 2));
	ASSERT_EQ(0, write_long(MLOCK_SYSCTL, 516));
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	w.r = r;
	w.cpu = cpu;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(up[0]);
		close(down[1]);
		worker_run(&w, root, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &c, 1) != 1 || c != 'r') {
		waitpid(pid, &status, 0);
		if (r->skip[0])
			SKIP(return, "%s", r->skip);
		ASSERT_EQ('r', c) TH_LOG("the case's setup as nobody: %s",
					 r->fail[0] ? r->fail : "died");
	}
	if (debugfs) {
		EXPECT_EQ(0, write_str(PTSIM_DEBUGFS "/tick", "0\n"));
		EXPECT_EQ(0, write_str(PTSIM_DEBUGFS "/irqoff", "0\n"));
	}
	cpu_counts_take(&before, cpu);
	ASSERT_EQ(1, write(down[1], "g", 1));
	/*
	 * BUSY_MS; then, where ptsim's counters can be read, until MIN_TICKS
	 * ticks have happened, which a busy host can take longer to give,
	 * up to MAX_BUSY_MS.  The bounds are per elapsed time: any length
	 * will do.
	 */
	do {
		usleep(50 * 1000);
		waited_ms = now_ms() - before.ms;
		ticks = debugfs ? delta(before.ticks, ptsim_debugfs_cpu("tick", cpu, "ticks")) : 0;
	} while (waited_ms < MAX_BUSY_MS &&
		 (waited_ms < BUSY_MS || (debugfs && ticks < MIN_TICKS)));
	ASSERT_EQ(1, write(down[1], "s", 1));
	EXPECT_EQ(1, read(up[0], &c, 1));
	cpu_counts_take(&after, cpu);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the case as nobody: %s", r->fail[0] ? r->fail : "died");
	close(up[0]);
	close(down[1]);

	if (debugfs) {
		max_pmis = ptsim_debugfs_cpu("tick", cpu, "max_pmis");
		max_bytes = ptsim_debugfs_cpu("tick", cpu, "max_bytes");
		ASSERT_LE(0, max_pmis) TH_LOG("no max_pmis in ptsim/tick");
		ASSERT_LE(0, max_bytes) TH_LOG("no max_bytes in ptsim/tick");
	}
	for (i = 0; i < (int)ARRAY_SIZE(irqoff_names); i++)
		irqoff[i] = ptsim_debugfs_cpu("irqoff", cpu, irqoff_names[i]);

	/* The bounds, for the time between the two counts. */
	elapsed_us = (after.ms - before.ms) * 1000;
	secs = elapsed_us / 1e6;
	ticks_max = elapsed_us / uc.min_period_us + 1;
	pmi_bound = (long)(uc.pmis_per_tick * ticks_max * BOUND_MARGIN) +
		    NMI_SLACK;
	tick_bound = (long)(ticks_max * BOUND_MARGIN) + TICK_SLACK;
	bytes_bound = (1L << uc.max_fifo_shift) + BYTES_SLACK;
	ticks = delta(before.ticks, after.ticks);
	nmis = delta(before.sent, after.sent);
	nmi_from = "ptsim/nmi sent";
	if (nmis < 0) {
		nmis = delta(before.irq_nmi, after.irq_nmi);
		nmi_from = "/proc/interrupts NMI";
	}

	/* One line (stdout is line-buffered), for a table. */
	ksft_print_msg("%s: nmis/s=%s aux_records/s=%.0f max_pmis=%s max_bytes=%s",
		       hc->name, fig(b[0], sizeof(b[0]), nmis < 0 ? -1 : nmis / secs),
		       r->aux_records / secs, fig(b[1], sizeof(b[1]), max_pmis),
		       fig(b[2], sizeof(b[2]), max_bytes));
	printf(" irqoff_tick_max_ns=%s ticks/s=%s aux_MB/s=%.1f\n",
	       fig(b[3], sizeof(b[3]), irqoff[0]),
	       fig(b[4], sizeof(b[4]), ticks < 0 ? -1 : ticks / secs),
	       r->aux_bytes / secs / 1e6);
	TH_LOG("CPU %d for %.0f ms (busy %.0f ms): at most %.0f ticks, %ld PMIs and AUX records",
	       cpu, elapsed_us / 1000, r->busy_ms, ticks_max, pmi_bound);
	TH_LOG("NMIs (%s): %ld; /proc/interrupts NMI %ld", nmi_from, nmis,
	       delta(before.irq_nmi, after.irq_nmi));
	TH_LOG("ptsim/nmi: pmi %ld mark %ld late %ld stray %ld",
	       delta(before.pmi, after.pmi), delta(before.mark, after.mark),
	       delta(before.late, after.late), delta(before.stray, after.stray));
	TH_LOG("AUX: %llu bytes, %lu records, %lu truncated, %lu lost",
	       r->aux_bytes, r->aux_records, r->truncated, r->lost);
	TH_LOG("irqoff ns: tick %ld stop %ld flush %ld nmi_wait %ld",
	       irqoff[0], irqoff[1], irqoff[2], irqoff[3]);
	if (hc->kind == MANY_EVENTS)
		log_refused(_metadata, r);

	if (nmis >= 0) {
		EXPECT_LE(nmis, pmi_bound)
			TH_LOG("%ld NMIs (%s) in %.0f ms, more than %ld PMIs per tick allow",
			       nmis, nmi_from, elapsed_us / 1000,
			       uc.pmis_per_tick);
	} else {
		TH_LOG("no NMI count on CPU %d: no ptsim/nmi, no NMI line in /proc/interrupts",
		       cpu);
	}
	EXPECT_LE((long)r->aux_records, pmi_bound)
		TH_LOG("more AUX records than PMIs may end transactions");
	EXPECT_EQ(0UL, r->bad) TH_LOG("aux_head ran past the AUX area");
	if (debugfs) {
		EXPECT_LE(max_pmis, uc.pmis_per_tick)
			TH_LOG("a tick raised %ld PMIs", max_pmis);
		EXPECT_LE(max_bytes, bytes_bound)
			TH_LOG("a tick wrote %ld bytes", max_bytes);
		EXPECT_LE(ticks, tick_bound)
			TH_LOG("%ld ticks in %.0f ms, more than every %ld us",
			       ticks, elapsed_us / 1000, uc.min_period_us);
	}

	enough = r->aux_bytes >= MIN_AUX_BYTES && r->aux_records &&
		 (!debugfs || ticks >= MIN_TICKS);
	if (!enough && !_metadata->exit_code)
		SKIP(return, "not enough happened: %ld ticks, %llu AUX bytes, %lu records",
		     ticks, r->aux_bytes, r->aux_records);
	munmap(r, sizeof(*r));
}

TEST_HARNESS_MAIN
