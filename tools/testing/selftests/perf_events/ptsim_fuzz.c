// SPDX-License-Identifier: GPL-2.0
/*
 * ptsim_fuzz: a bounded, seeded fuzzer of the perf AUX area, with ptsim as
 * the AUX PMU.
 *
 * Random sequences of: perf_event_open of ptsim (per task, per CPU, on a
 * child, inherited, grouped, good and bad configurations) and of the
 * dummy software event; mmap() of data and AUX areas with good and bad
 * offsets, sizes, protections and flags (a read-only AUX mapping is
 * overwrite mode); munmap() whole and partial, mprotect(), mremap()
 * (shrink, grow, move, duplicate, DONTUNMAP), mmap() with MAP_FIXED over
 * a buffer; PERF_EVENT_IOC_SET_OUTPUT, ENABLE, DISABLE, RESET,
 * PAUSE_OUTPUT, ID, PERIOD (and FLUSH where the uapi header has it);
 * read(); consuming the data and AUX areas as a tool does; burning CPU so
 * that ptsim writes; fork() of children that wait, then exec or exit,
 * with events on them or inherited by them; close() in any order.
 *
 * Phases (-p, all but hotplug by default), each on a fresh state, each followed by a
 * leak check: everything is closed, unmapped and reaped, and then VmPin,
 * the user's perf_mlock, the open file descriptors, the mappings (all of
 * them, and the perf ones), and MemFree must be back where they were
 * (ptsim_leak.h).  One TAP result per phase.
 *
 *   replay   one thread, as root, default limits;
 *   again    the same seed once more: the same operations must get the
 *            same results, i.e. a run can be replayed from its seed;
 *   limits   one thread without CAP_IPC_LOCK, RLIMIT_MEMLOCK and
 *            perf_event_mlock_kb low;
 *   unpriv   one thread as nobody;
 *   threads  -t threads at once on one shared set of events and mappings;
 *   hotplug  the same, while one more thread takes CPUs other than CPU 0
 *            offline and brings them back (skipped without CPU hotplug;
 *            only when -p names it: CPU hotplug under fork and exit alone
 *            makes 6.12's scheduler warn now and then);
 *   faults   one thread with failslab, fail_page_alloc and fail_usercopy
 *            firing at random inside its perf system calls;
 *   nth      one thread, each perf system call with its nth allocation or
 *            user copy failed (/proc/thread-self/fail-nth, n at random).
 * The last two need fault injection (the debug kernel) and are skipped
 * without it.  limits and unpriv need perf_event_paranoid between 0 (perf
 * enforces RLIMIT_MEMLOCK) and 2 (nobody may trace itself): outside it
 * they set 2 for their run and put the old value back.
 *
 * -d SECONDS bounds the phases that are not replayed (threads, hotplug,
 * faults, nth) by time instead of -n: their workers stop when the phase
 * has run that long (make fuzz DURATION=, e.g. a 30-minute hotplug run).
 * replay, again, limits and unpriv stay bounded by -n: their traces are
 * compared.
 *
 * Same seed, single thread: the same sequence of operations.  With -T
 * FILE, the phases replay, limits and unpriv write one line per
 * operation, its arguments and its result (no addresses, descriptors,
 * pids or times) to FILE, so that two kernels can be compared; without
 * it (or with -T none) nothing is written.
 *
 * Output: TAP, an errno histogram per operation, and the summary line
 *   # ptsim_fuzz: seed=S ops=N injections=N leaks=N
 */
#include "ptsim_leak.h"
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <grp.h>
#include <sys/prctl.h>
#include "../kselftest.h"

#define MAXEV		12
#define MAXMAP		24
#define MAXKID		4
#define NERR		160
#define NOBODY		65534

enum op {
	OP_OPEN, OP_CLOSE, OP_MMAP_DATA, OP_SETAUX, OP_MMAP_AUX, OP_MUNMAP,
	OP_MUNMAP_PART, OP_MPROTECT, OP_MREMAP, OP_FIXED, OP_SET_OUTPUT,
	OP_IOCTL, OP_READ, OP_CONSUME, OP_BURN, OP_FORK, OP_RELEASE, OP_REAP,
	NOPS
};

static const struct {
	const char *name;
	int weight;
} ops[NOPS] = {
	[OP_OPEN]	= { "open", 14 },
	[OP_CLOSE]	= { "close", 6 },
	[OP_MMAP_DATA]	= { "mmap_data", 12 },
	[OP_SETAUX]	= { "setaux", 5 },
	[OP_MMAP_AUX]	= { "mmap_aux", 16 },
	[OP_MUNMAP]	= { "munmap", 7 },
	[OP_MUNMAP_PART] = { "munmap_part", 3 },
	[OP_MPROTECT]	= { "mprotect", 3 },
	[OP_MREMAP]	= { "mremap", 4 },
	[OP_FIXED]	= { "map_fixed", 4 },
	[OP_SET_OUTPUT]	= { "set_output", 7 },
	[OP_IOCTL]	= { "ioctl", 10 },
	[OP_READ]	= { "read", 3 },
	[OP_CONSUME]	= { "consume", 5 },
	[OP_BURN]	= { "burn", 3 },
	[OP_FORK]	= { "fork", 3 },
	[OP_RELEASE]	= { "release", 3 },
	[OP_REAP]	= { "reap", 2 },
};

enum { M_DATA, M_AUX, M_ANON };
static const char * const kind_name[] = { "data", "aux", "anon" };

struct ev {
	int fd;			/* -1: free */
	bool aux_pmu;		/* ptsim, not the dummy event */
	struct perf_event_mmap_page *pg;	/* a writable data mapping */
	int data_pages;		/* of that mapping */
	__u64 aux_off, aux_size;	/* what setaux wrote last */
};

struct map {
	char *addr;		/* NULL: free */
	size_t len;
	int kind;
	int prot;
};

struct kid {
	pid_t pid;		/* 0: free */
	int go;			/* pipe to release it, -1 once released */
};

/* Counters shared with the children that run a phase (MAP_SHARED). */
struct stats {
	long ops;
	long hist[NOPS][NERR];
	/* The rest counts one phase's (run_phase() zeroes it). */
	long injected;
	long leaks;
	long faults;		/* unexpected SIGSEGV/SIGBUS on a live mapping,
				 * or a mapping table found wrong (add_map())
				 */
	long child_ok;
	long offlines;		/* CPUs the hotplug phase took offline */
	long offline_refused;	/* offline attempts the kernel refused */
	long stuck_offline;	/* CPUs it could not bring back: a failure */
};

struct fz {
	pthread_mutex_t lock;
	struct ev ev[MAXEV];
	struct map map[MAXMAP];
	struct kid kid[MAXKID];
	long psz;
	int ncpu;		/* the CPUs it uses: online_cpu(0 .. ncpu - 1) */
	int nocpu;		/* an id above every online one */
	int mode;		/* FI_NONE, FI_PROB, FI_NTH */
	bool sync_kids;		/* one thread: a released child is waited for */
	FILE *trace;		/* one line per operation, or NULL */
	char *mem;		/* the same, kept in memory for "again" */
	size_t mlen, mcap;
	bool keep;
	int anchor;		/* see fz_anchor(), or -1 */
	int running;		/* worker threads not done yet */
	double deadline;	/* now_ms() at which workers stop, or 0 */
	struct stats *st;
};

enum { FI_NONE, FI_PROB, FI_NTH };

struct th {
	struct fz *fz;
	__u64 rng;
	long nops;
	long done;
	int fi_fd;		/* make-it-fail or fail-nth of this thread */
	pthread_t th;
	void *stack;
	size_t stack_len;
};

static const char *self_exe;
static bool verbose;

/* ---- random numbers: splitmix64, so a seed is all a run needs ---- */

static __u64 rnd(struct th *t)
{
	__u64 z = (t->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rn(struct th *t, unsigned int n)
{
	return n ? rnd(t) % n : 0;
}

static bool chance(struct th *t, unsigned int percent)
{
	return rn(t, 100) < percent;
}

/* ---- the trace ---- */

static const char *errname(int err)
{
	const char *s;

	if (!err)
		return "ok";
	s = strerrorname_np(err);
	return s ? s : "E?";
}

static void record(struct th *t, enum op which, int err, const char *fmt, ...)
{
	struct fz *fz = t->fz;
	char line[256];
	va_list ap;
	int n;

	__atomic_add_fetch(&fz->st->hist[which][err >= 0 && err < NERR ? err : NERR - 1],
			   1, __ATOMIC_RELAXED);
	if (!fz->trace && !fz->keep && !verbose)
		return;
	n = snprintf(line, sizeof(line), "%ld %s ", t->done, ops[which].name);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 20)
		n = sizeof(line) - 20;
	n += snprintf(line + n, sizeof(line) - n, " = %s\n", errname(err));
	if (fz->trace)
		fputs(line, fz->trace);
	if (verbose)
		fputs(line, stdout);
	if (fz->keep) {
		if (fz->mlen + n + 1 > fz->mcap) {
			fz->mcap = (fz->mlen + n + 1) * 2;
			fz->mem = realloc(fz->mem, fz->mcap);
			if (!fz->mem)
				ksft_exit_fail_msg("out of memory\n");
		}
		memcpy(fz->mem + fz->mlen, line, n + 1);
		fz->mlen += n;
	}
}

/* ---- system calls under fault injection ---- */

static void fi_enter(struct th *t)
{
	if (t->fz->mode == FI_PROB)
		fi_task(t->fi_fd, true);
	else if (t->fz->mode == FI_NTH)
		fi_nth_arm(t->fi_fd, 1 + rn(t, 10));
}

static void fi_leave(struct th *t)
{
	if (t->fz->mode == FI_PROB)
		fi_task(t->fi_fd, false);
	else if (t->fz->mode == FI_NTH)
		t->fz->st->injected += fi_nth_fired(t->fi_fd);
}

/* Run one kernel call with errno captured and injection around it. */
#define KCALL(t, expr, err)						\
	({								\
		struct th *__t = (t);					\
		typeof(expr) __r;					\
		fi_enter(__t);						\
		errno = 0;						\
		__r = (expr);						\
		(err) = errno;						\
		fi_leave(__t);						\
		__r;							\
	})

/* ---- memory probes: a fault on a mapping the fuzzer holds is a bug ---- */

static __thread sigjmp_buf touch_jmp;
static __thread int touching;
static __thread void *fault_addr;	/* of the last such signal */

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	if (LOAD(touching)) {
		fault_addr = si->si_addr;
		siglongjmp(touch_jmp, sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the table of events and mappings (fz->lock held) ---- */

static int pick_ev(struct th *t, bool need_pg)
{
	int i, n = 0, idx[MAXEV];

	for (i = 0; i < MAXEV; i++)
		if (t->fz->ev[i].fd >= 0 && (!need_pg || t->fz->ev[i].pg))
			idx[n++] = i;
	return n ? idx[rn(t, n)] : -1;
}

/* Mostly an event whose user page got aux_offset/aux_size from us. */
static int pick_aux_ev(struct th *t)
{
	int i, n = 0, idx[MAXEV];

	if (chance(t, 15))
		return pick_ev(t, false);
	for (i = 0; i < MAXEV; i++)
		if (t->fz->ev[i].fd >= 0 && t->fz->ev[i].aux_size)
			idx[n++] = i;
	return n ? idx[rn(t, n)] : pick_ev(t, false);
}

static int free_ev(struct fz *fz)
{
	int i;

	for (i = 0; i < MAXEV; i++)
		if (fz->ev[i].fd < 0)
			return i;
	return -1;
}

/*
 * An event's descriptor for a call made after fz->lock is dropped: a
 * duplicate, so that another thread closing the event meanwhile, and
 * the number being reused for a pipe or another event, cannot send the
 * call to a different file.  (It did: read() took the byte a forked
 * child had written to say it was ready, and an ioctl() went to a
 * pipe.)  The caller closes it, which may now be the last close of the
 * event - one more ordering of closes from several threads.  -1 stays
 * -1; a failed duplication gives -2, and the caller skips its call.
 */
static int hold_fd(int fd)
{
	int d;

	if (fd < 0)
		return -1;
	d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return d < 0 ? -2 : d;
}

static void drop_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int pick_map(struct th *t, int kind)
{
	int i, n = 0, idx[MAXMAP];

	for (i = 0; i < MAXMAP; i++)
		if (t->fz->map[i].addr &&
		    (kind < 0 || t->fz->map[i].kind == kind))
			idx[n++] = i;
	return n ? idx[rn(t, n)] : -1;
}

/*
 * Take fz->lock and pick a mapping (@map) or an event (with a user page
 * if @need_pg); -1, with the lock dropped again, if there is none.
 */
static int lock_pick(struct th *t, bool map, bool need_pg)
{
	int i;

	pthread_mutex_lock(&t->fz->lock);
	i = map ? pick_map(t, -1) : pick_ev(t, need_pg);
	if (i < 0)
		pthread_mutex_unlock(&t->fz->lock);
	return i;
}

static int add_map(struct fz *fz, void *addr, size_t len, int kind, int prot)
{
	char *a = addr;
	int i;

	/*
	 * The kernel placed a new mapping where the table says another one
	 * is: the table is wrong, and what the fuzzer touches or unmaps
	 * through it is no longer what it thinks.  That is a fault of ours
	 * and fails the run as one.
	 */
	for (i = 0; i < MAXMAP; i++) {
		char *b = fz->map[i].addr;

		if (b && a < b + fz->map[i].len && b < a + len) {
			fz->st->faults++;
			ksft_print_msg("new mapping %p+%zu inside tracked %p+%zu\n",
				       a, len, b, fz->map[i].len);
		}
	}
	for (i = 0; i < MAXMAP; i++)
		if (!fz->map[i].addr) {
			fz->map[i] = (struct map){ addr, len, kind, prot };
			return i;
		}
	return -1;
}

/* A mapping went away or moved: forget pointers into it. */
static void forget_range(struct fz *fz, char *addr, size_t len)
{
	int i;

	for (i = 0; i < MAXEV; i++) {
		char *p = (char *)fz->ev[i].pg;

		if (p && p >= addr && p < addr + len)
			fz->ev[i].pg = NULL;
	}
}

static void drop_map(struct fz *fz, int m)
{
	forget_range(fz, fz->map[m].addr, fz->map[m].len);
	fz->map[m].addr = NULL;
}

/*
 * Is any page of [addr, addr + len) still mapped?  (after a failed call
 * that may have unmapped some of it.)  Mappings change only under
 * fz->lock, so nobody else can have filled a hole meanwhile.
 */
static bool mapped(char *addr, size_t len)
{
	size_t psz = sysconf(_SC_PAGESIZE), i;
	unsigned char vec;

	for (i = 0; i < len; i += psz)
		if (!mincore(addr + i, psz, &vec))
			return true;
	return false;
}

static const char *protname(int prot)
{
	static const char * const names[] = {
		"none", "r", "w", "rw", "x", "rx", "wx", "rwx",
	};

	return names[prot & 7];
}

static int rnd_prot(struct th *t)
{
	unsigned int r = rn(t, 20);

	if (r < 14)
		return PROT_READ | PROT_WRITE;
	if (r < 18)
		return PROT_READ;
	return r == 18 ? PROT_WRITE : PROT_NONE;
}

/* ---- the operations ---- */

static __u64 rnd_config(struct th *t)
{
	static const unsigned int rate[] = { 0, 8, 64, 256 };
	static const unsigned int period[] = { 0, 50, 200 };
	static const unsigned int fifo[] = { 0, 9, 12 };
	static const unsigned int region[] = { 0, 1, 3 };
	unsigned int r = rn(t, 40);

	if (r == 0)
		return PTSIM_CFG1_RATE(5000);		/* above max_rate */
	if (r == 1)
		return PTSIM_CFG1_REGION(11);		/* above max_region_shift */
	if (r == 2)
		return 1ULL << 60;			/* reserved bit */
	if (r == 3)
		return PTSIM_CFG1_FIFO(3);			/* FIFO too small */
	return PTSIM_CFG1_RATE(rate[rn(t, 4)]) | PTSIM_CFG1_PERIOD(period[rn(t, 3)]) |
	       PTSIM_CFG1_FIFO(fifo[rn(t, 3)]) | PTSIM_CFG1_REGION(region[rn(t, 3)]);
}

static int waiting_kid(struct th *t)
{
	int i, n = 0, idx[MAXKID];

	for (i = 0; i < MAXKID; i++)
		if (t->fz->kid[i].pid > 0 && t->fz->kid[i].go >= 0)
			idx[n++] = i;
	return n ? idx[rn(t, n)] : -1;
}

static void op_open(struct th *t)
{
	struct fz *fz = t->fz;
	struct perf_event_attr attr;
	int slot, group = -1, gslot = -1, fd, err, k = -1, cpu = -1;
	const char *target = "self";
	bool dummy = chance(t, 15);
	pid_t pid = 0;

	pthread_mutex_lock(&fz->lock);
	slot = free_ev(fz);
	if (slot < 0) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	if (chance(t, 20)) {
		gslot = pick_ev(t, false);
		if (gslot >= 0)
			group = hold_fd(fz->ev[gslot].fd);
	}
	pthread_mutex_unlock(&fz->lock);
	if (group == -2)
		return;

	if (dummy) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_DUMMY;
		attr.exclude_kernel = 1;
		attr.disabled = 1;
		if (chance(t, 30))
			attr.aux_output = 1;
		if (chance(t, 20)) {
			attr.sample_type = PERF_SAMPLE_AUX;
			attr.aux_sample_size = 4096;
		}
	} else {
		ptsim_attr(&attr, rnd_config(t));
		attr.disabled = !chance(t, 10);
		if (chance(t, 10))
			attr.exclude_kernel = 0;
		if (chance(t, 25))
			attr.aux_watermark = (1 + rn(t, 8)) * fz->psz;
		if (chance(t, 5))
			attr.aux_start_paused = 1;
		if (chance(t, 5))
			attr.write_backward = 1;
	}
	switch (rn(t, 20)) {
	case 0 ... 7:
		break;				/* this task, any CPU */
	case 8 ... 11:
		/* An online CPU, or none */
		cpu = rn(t, 10) ? online_cpu(rn(t, fz->ncpu)) : fz->nocpu;
		target = "self/cpu";
		break;
	case 12 ... 14:
		pid = -1;			/* one CPU */
		cpu = rn(t, 10) ? online_cpu(rn(t, fz->ncpu)) : fz->nocpu;
		target = "cpu";
		break;
	default:
		pthread_mutex_lock(&fz->lock);
		k = waiting_kid(t);
		if (k >= 0) {
			pid = fz->kid[k].pid;
			target = "kid";
			if (chance(t, 30))
				cpu = online_cpu(rn(t, fz->ncpu));
		}
		pthread_mutex_unlock(&fz->lock);
		break;
	}
	/* Inherited per-task events cannot be mapped: not too many. */
	attr.inherit = chance(t, 10);
	if (k >= 0 && chance(t, 30)) {
		attr.enable_on_exec = 1;
		attr.disabled = 1;
	}
	fd = KCALL(t, syscall(SYS_perf_event_open, &attr, pid, cpu, group,
			      PERF_FLAG_FD_CLOEXEC), err);
	drop_fd(group);
	record(t, OP_OPEN, fd < 0 ? err : 0,
	       "e%d %s config=0x%llx target=%s cpu=%d%s%s%s group=%d", slot,
	       dummy ? "dummy" : "ptsim",
	       (unsigned long long)(dummy ? attr.config : attr.config1),
	       target, cpu < 0 ? -1 : cpu, attr.inherit ? " inherit" : "",
	       attr.exclude_kernel ? "" : " kernel",
	       attr.aux_output ? " aux_output" : "", gslot);
	if (fd < 0)
		return;
	pthread_mutex_lock(&fz->lock);
	if (fz->ev[slot].fd >= 0)
		slot = free_ev(fz);
	if (slot < 0) {
		close(fd);
	} else {
		memset(&fz->ev[slot], 0, sizeof(fz->ev[slot]));
		fz->ev[slot].fd = fd;
		fz->ev[slot].aux_pmu = !dummy;
	}
	pthread_mutex_unlock(&fz->lock);
}

static void op_close(struct th *t)
{
	struct fz *fz = t->fz;
	int e;

	pthread_mutex_lock(&fz->lock);
	e = pick_ev(t, false);
	if (e >= 0) {
		/* Mappings stay: they hold the file.  Keep using them. */
		close(fz->ev[e].fd);
		fz->ev[e].fd = -1;
		fz->ev[e].pg = NULL;
		record(t, OP_CLOSE, 0, "e%d", e);
	}
	pthread_mutex_unlock(&fz->lock);
}

static void op_mmap_data(struct th *t)
{
	struct fz *fz = t->fz;
	int e, fd, pages, prot, flags = MAP_SHARED, err;
	long off = 0;
	const char *what = "ok";
	size_t len;
	char *p;

	e = lock_pick(t, false, false);
	if (e < 0)
		return;
	fd = fz->ev[e].fd;
	pages = 1 << rn(t, 4);
	switch (rn(t, 24)) {
	case 0:
		pages = 3;			/* not a power of two */
		what = "npot";
		break;
	case 1:
		pages = 0;			/* the user page alone */
		break;
	case 2:
		flags = MAP_PRIVATE;
		what = "private";
		break;
	case 3:
		off = fz->psz;			/* not the data area */
		what = "offset";
		break;
	}
	prot = rnd_prot(t);
	len = (1 + pages) * fz->psz;
	p = KCALL(t, mmap(NULL, len, prot, flags, fd, off), err);
	record(t, OP_MMAP_DATA, p == MAP_FAILED ? err : 0,
	       "e%d pages=1+%d prot=%s %s", e, pages, protname(prot), what);
	if (p == MAP_FAILED) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	if (add_map(fz, p, len, off ? M_AUX : M_DATA, prot) < 0) {
		munmap(p, len);
	} else if (!off && (prot & PROT_WRITE) && fz->ev[e].fd == fd &&
		   !fz->ev[e].pg) {
		fz->ev[e].pg = (void *)p;
		fz->ev[e].data_pages = pages;
	}
	pthread_mutex_unlock(&fz->lock);
}

static bool write_aux(struct th *t, struct ev *ev, __u64 off, __u64 size);

/* Write aux_offset and aux_size into a user page: good and bad values. */
static void op_setaux(struct th *t)
{
	struct fz *fz = t->fz;
	__u64 data_end, off, size;
	const char *what = "ok";
	struct ev *ev;
	int e;

	e = lock_pick(t, false, true);
	if (e < 0)
		return;
	ev = &fz->ev[e];
	data_end = (1 + ev->data_pages) * fz->psz;
	off = data_end + rn(t, 3) * fz->psz;
	size = (__u64)fz->psz << rn(t, 6);
	switch (rn(t, 24)) {
	case 0:
		off = data_end - fz->psz;	/* inside the data area */
		what = "inside";
		break;
	case 1:
		off += 1;			/* not page aligned */
		what = "unaligned";
		break;
	case 2:
		off += 1ULL << 32;		/* beyond 4 GiB */
		what = "far";
		break;
	case 3:
		size = 3 * fz->psz;		/* not a power of two */
		what = "npot";
		break;
	case 4:
		size = 1ULL << 32;		/* 4 GiB */
		what = "4g";
		break;
	case 5:
		size = 0;
		what = "zero";
		break;
	}
	if (!write_aux(t, ev, off, size)) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	record(t, OP_SETAUX, 0, "e%d off=data%+lld size=%llu %s", e,
	       (long long)(off - data_end), (unsigned long long)size, what);
	pthread_mutex_unlock(&fz->lock);
}

/* Write aux_offset and aux_size into a user page (fz->lock held). */
static bool write_aux(struct th *t, struct ev *ev, __u64 off, __u64 size)
{
	struct fz *fz = t->fz;

	if (sigsetjmp(touch_jmp, 1)) {
		STORE(touching, 0);
		fz->st->faults++;
		ksft_print_msg("unexpected signal at %p writing user page %p\n",
			       fault_addr, ev->pg);
		return false;
	}
	STORE(touching, 1);
	ev->pg->aux_offset = off;
	ev->pg->aux_size = size;
	STORE(touching, 0);
	ev->aux_off = off;
	ev->aux_size = size;
	return true;
}

static void op_mmap_aux(struct th *t)
{
	struct fz *fz = t->fz;
	__u64 off, size;
	int e, fd, prot, flags, err;
	const char *what = "ok";
	struct ev *ev;
	char *p;

	pthread_mutex_lock(&fz->lock);
	e = pick_aux_ev(t);
	if (e < 0) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	ev = &fz->ev[e];
	fd = ev->fd;
	if (ev->pg && (!ev->aux_size || chance(t, 30))) {
		/* A good request, described in the user page first. */
		off = (1 + ev->data_pages + rn(t, 3)) * fz->psz;
		size = (__u64)fz->psz << rn(t, 6);
		if (!write_aux(t, ev, off, size)) {
			pthread_mutex_unlock(&fz->lock);
			return;
		}
		what = "set";
	}
	off = ev->aux_off;
	size = ev->aux_size;
	if (!size || !off || chance(t, 5)) {
		/* Never described through this event: a guess. */
		off = (2 + rn(t, 8)) * fz->psz;
		size = fz->psz << rn(t, 4);
		what = "guess";
	}
	switch (rn(t, 20)) {
	case 0:
		size *= 2;			/* not aux_size */
		what = "size";
		break;
	case 1:
		off += fz->psz;			/* not aux_offset */
		what = "offset";
		break;
	}
	/* Read-only: overwrite (snapshot) mode. */
	prot = chance(t, 25) ? PROT_READ : rnd_prot(t);
	if (size > (1ULL << 34))
		size = 1ULL << 34;
	flags = chance(t, 5) ? MAP_PRIVATE : MAP_SHARED;
	p = KCALL(t, mmap(NULL, size, prot, flags, fd, off), err);
	record(t, OP_MMAP_AUX, p == MAP_FAILED ? err : 0,
	       "e%d off=%llu pages=%llu prot=%s%s %s", e,
	       (unsigned long long)(off / fz->psz),
	       (unsigned long long)(size / fz->psz), protname(prot),
	       flags == MAP_PRIVATE ? " private" : "", what);
	if (p != MAP_FAILED && add_map(fz, p, size, M_AUX, prot) < 0)
		munmap(p, size);
	pthread_mutex_unlock(&fz->lock);
}

static void op_munmap(struct th *t, bool part)
{
	struct fz *fz = t->fz;
	const char *what = "whole";
	char *addr;
	size_t len;
	int m, r, err;

	pthread_mutex_lock(&fz->lock);
	m = pick_map(t, -1);
	if (m < 0 || (part && fz->map[m].len < 2 * (size_t)fz->psz)) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	addr = fz->map[m].addr;
	len = fz->map[m].len;
	if (part) {
		switch (rn(t, 3)) {
		case 0:
			what = "first";
			len = fz->psz;
			break;
		case 1:
			what = "last";
			addr += len - fz->psz;
			len = fz->psz;
			break;
		default:
			what = "tail";
			addr += fz->psz;
			len -= fz->psz;
			break;
		}
	}
	r = KCALL(t, munmap(addr, len), err);
	record(t, part ? OP_MUNMAP_PART : OP_MUNMAP, r ? err : 0, "%s %s",
	       kind_name[fz->map[m].kind], what);
	if (!r && !part) {
		drop_map(fz, m);
	} else if (!r) {
		/*
		 * A piece went (an anonymous placeholder can be split; a
		 * perf mapping must not be).  The entry shrinks to the piece
		 * that is left, always one range: were it to keep the hole,
		 * a later mmap() placed there would be unmapped, remapped or
		 * made inaccessible through this entry behind its own back.
		 */
		forget_range(fz, fz->map[m].addr, fz->map[m].len);
		if (addr == fz->map[m].addr)
			fz->map[m].addr += len;
		fz->map[m].len -= len;
		if (fz->map[m].kind != M_ANON)
			fz->map[m].prot = PROT_NONE;
	} else if (!mapped(fz->map[m].addr, fz->map[m].len)) {
		drop_map(fz, m);
	}
	pthread_mutex_unlock(&fz->lock);
}

static void op_mprotect(struct th *t)
{
	struct fz *fz = t->fz;
	bool part = chance(t, 50);
	int m, r, err, prot = rnd_prot(t);
	size_t len;

	m = lock_pick(t, true, false);
	if (m < 0)
		return;
	len = part && fz->map[m].len > (size_t)fz->psz ? fz->psz : fz->map[m].len;
	r = KCALL(t, mprotect(fz->map[m].addr, len, prot), err);
	record(t, OP_MPROTECT, r ? err : 0, "%s prot=%s",
	       len == fz->map[m].len ? "whole" : "part", protname(prot));
	if (!r && len == fz->map[m].len)
		fz->map[m].prot = prot;
	else if (!r)
		fz->map[m].prot = PROT_NONE;	/* mixed: touch nothing */
	if (!(fz->map[m].prot & PROT_WRITE))
		forget_range(fz, fz->map[m].addr, fz->map[m].len);
	pthread_mutex_unlock(&fz->lock);
}

static void op_mremap(struct th *t)
{
	struct fz *fz = t->fz;
	char *addr, *dst = NULL, *r;
	size_t len, nlen;
	const char *what;
	int m, err, flags = 0;

	m = lock_pick(t, true, false);
	if (m < 0)
		return;
	addr = fz->map[m].addr;
	len = fz->map[m].len;
	nlen = len;
	switch (rn(t, 5)) {
	case 0:
		what = "shrink";
		if (len < 2 * (size_t)fz->psz) {
			pthread_mutex_unlock(&fz->lock);
			return;
		}
		nlen = len - fz->psz;
		break;
	case 1:
		what = "grow";
		nlen = len + fz->psz;
		flags = MREMAP_MAYMOVE;
		break;
	case 2:
		/* old_len 0: a second mapping; of a private one, the kernel warns */
		if (fz->map[m].kind == M_ANON) {
			pthread_mutex_unlock(&fz->lock);
			return;
		}
		what = "dup";
		flags = MREMAP_MAYMOVE;
		break;
	case 3:
		what = "dontunmap";
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		break;
	default:
		what = "move";
		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (dst == MAP_FAILED) {
			pthread_mutex_unlock(&fz->lock);
			return;
		}
		break;
	}
	if (!strcmp(what, "dup"))
		r = KCALL(t, mremap(addr, 0, len, flags), err);
	else
		r = KCALL(t, mremap(addr, len, nlen, flags, dst), err);
	record(t, OP_MREMAP, r == MAP_FAILED ? err : 0, "%s %s", what,
	       kind_name[fz->map[m].kind]);
	if (r == MAP_FAILED) {
		if (dst)
			munmap(dst, len);
		if (!mapped(addr, len))
			drop_map(fz, m);
	} else if (flags & MREMAP_DONTUNMAP || !strcmp(what, "dup")) {
		/* Both mappings exist now. */
		if (add_map(fz, r, nlen, fz->map[m].kind, fz->map[m].prot) < 0)
			munmap(r, nlen);
	} else {
		int kind = fz->map[m].kind;

		forget_range(fz, addr, len);
		fz->map[m].addr = r;
		fz->map[m].len = nlen;
		/*
		 * A move whose unmapping of the old range failed (an injected
		 * allocation failure) still succeeds and leaves the old VMA
		 * in place, empty (mremap.c: "OOM: unable to split vma, just
		 * get accounts right").  It is still ours to unmap.
		 */
		if (r != addr && mapped(addr, len) &&
		    add_map(fz, addr, len, kind, PROT_NONE) < 0)
			munmap(addr, len);
	}
	pthread_mutex_unlock(&fz->lock);
}

/* mmap() with MAP_FIXED over (part of) a mapping. */
static void op_fixed(struct th *t)
{
	struct fz *fz = t->fz;
	int m, e, err, kind = M_ANON, fd = -1;
	const char *what;
	char *addr, *r;
	__u64 off = 0;
	size_t len;

	m = lock_pick(t, true, false);
	if (m < 0)
		return;
	addr = fz->map[m].addr;
	len = fz->map[m].len;
	e = pick_ev(t, false);
	switch (e < 0 ? 0 : rn(t, 4)) {
	case 0:
		what = "anon-whole";
		break;
	case 1:
		what = "anon-part";
		len = fz->psz;
		break;
	case 2:
		what = "perf-data";
		kind = M_DATA;
		fd = fz->ev[e].fd;
		break;
	default:
		what = "perf-aux";
		kind = M_AUX;
		fd = fz->ev[e].fd;
		off = fz->ev[e].aux_off;
		break;
	}
	r = KCALL(t, mmap(addr, len, PROT_READ | PROT_WRITE, MAP_FIXED |
			  (fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED), fd, off), err);
	record(t, OP_FIXED, r == MAP_FAILED ? err : 0, "%s over %s pages=%zu",
	       what, kind_name[fz->map[m].kind], len / fz->psz);
	if (r != MAP_FAILED && len == fz->map[m].len) {
		forget_range(fz, addr, len);
		fz->map[m].kind = kind;
		fz->map[m].prot = PROT_READ | PROT_WRITE;
		if (kind != M_ANON)
			fz->map[m].prot = PROT_NONE;	/* not ours to read */
	} else if (r != MAP_FAILED) {
		forget_range(fz, fz->map[m].addr, fz->map[m].len);
		fz->map[m].prot = PROT_NONE;		/* split */
	} else if (!mapped(fz->map[m].addr, fz->map[m].len)) {
		/* Replaced, then the new mapping failed: a hole. */
		drop_map(fz, m);
	}
	pthread_mutex_unlock(&fz->lock);
}

static void op_set_output(struct th *t)
{
	struct fz *fz = t->fz;
	int a, b, fa, fb, r, err;

	pthread_mutex_lock(&fz->lock);
	a = pick_ev(t, false);
	b = chance(t, 20) ? -1 : pick_ev(t, false);
	fa = a >= 0 ? hold_fd(fz->ev[a].fd) : -1;
	fb = b >= 0 ? hold_fd(fz->ev[b].fd) : -1;
	pthread_mutex_unlock(&fz->lock);
	if (a < 0 || fa == -2 || fb == -2) {
		drop_fd(fa);
		drop_fd(fb);
		return;
	}
	/* The argument is an unsigned long: -1 (no output) must be a long. */
	r = KCALL(t, ioctl(fa, PERF_EVENT_IOC_SET_OUTPUT, (long)fb), err);
	drop_fd(fa);
	drop_fd(fb);
	record(t, OP_SET_OUTPUT, r ? err : 0, "e%d -> e%d", a, b);
}

static void op_ioctl(struct th *t)
{
	static const struct {
		const char *name;
		unsigned long cmd;
		long arg;
	} cmds[] = {
		{ "enable", PERF_EVENT_IOC_ENABLE, 0 },
		{ "enable", PERF_EVENT_IOC_ENABLE, 0 },
		{ "disable", PERF_EVENT_IOC_DISABLE, 0 },
		{ "reset", PERF_EVENT_IOC_RESET, 0 },
		{ "pause_output", PERF_EVENT_IOC_PAUSE_OUTPUT, 1 },
		{ "resume_output", PERF_EVENT_IOC_PAUSE_OUTPUT, 0 },
		{ "refresh", PERF_EVENT_IOC_REFRESH, 1 },
		{ "id", PERF_EVENT_IOC_ID, 0 },
		{ "period", PERF_EVENT_IOC_PERIOD, 0 },
#ifdef PERF_EVENT_IOC_FLUSH
		{ "flush", PERF_EVENT_IOC_FLUSH, 0 },
		{ "flush", PERF_EVENT_IOC_FLUSH, 0 },
#endif
	};
	struct fz *fz = t->fz;
	unsigned int c = rn(t, ARRAY_SIZE(cmds));
	__u64 val = 1000;
	int e, fd, r, err;

	pthread_mutex_lock(&fz->lock);
	e = pick_ev(t, false);
	fd = e >= 0 ? hold_fd(fz->ev[e].fd) : -1;
	pthread_mutex_unlock(&fz->lock);
	if (fd < 0)
		return;
	if (cmds[c].cmd == PERF_EVENT_IOC_ID || cmds[c].cmd == PERF_EVENT_IOC_PERIOD)
		r = KCALL(t, ioctl(fd, cmds[c].cmd, &val), err);
	else
		r = KCALL(t, ioctl(fd, cmds[c].cmd, cmds[c].arg), err);
	drop_fd(fd);
	record(t, OP_IOCTL, r ? err : 0, "e%d %s", e, cmds[c].name);
}

static void op_read(struct th *t)
{
	struct fz *fz = t->fz;
	size_t len = chance(t, 20) ? 4 : 8;
	char buf[64];
	int e, fd, err;
	ssize_t r;

	pthread_mutex_lock(&fz->lock);
	e = pick_ev(t, false);
	fd = e >= 0 ? hold_fd(fz->ev[e].fd) : -1;
	pthread_mutex_unlock(&fz->lock);
	if (fd < 0)
		return;
	r = KCALL(t, read(fd, buf, len), err);
	drop_fd(fd);
	record(t, OP_READ, r < 0 ? err : 0, "e%d len=%zu got=%zd", e, len,
	       r < 0 ? -1 : r);
}

/*
 * Consume what the kernel wrote, as a tool does: the records of the data
 * area, and the AUX data between aux_tail and aux_head of an AUX mapping.
 * Results depend on timing, so nothing of it goes into the trace, and it
 * draws no random numbers after it has looked at the data.
 */
static void op_consume(struct th *t)
{
	struct fz *fz = t->fz;
	struct perf_event_mmap_page *pg;
	int e, m, sig;
	__u64 head, tail, n;

	pthread_mutex_lock(&fz->lock);
	e = pick_ev(t, true);
	m = pick_map(t, M_AUX);
	if (e < 0) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	pg = fz->ev[e].pg;
	__atomic_add_fetch(&fz->st->hist[OP_CONSUME][0], 1, __ATOMIC_RELAXED);
	sig = sigsetjmp(touch_jmp, 1);
	if (sig) {
		STORE(touching, 0);
		fz->st->faults++;
		ksft_print_msg("unexpected signal %d at %p touching user page %p, aux %p+%zu\n",
			       sig, fault_addr, pg, m >= 0 ? fz->map[m].addr : NULL,
			       m >= 0 ? fz->map[m].len : 0);
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	STORE(touching, 1);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	if (m >= 0 && (fz->map[m].prot & (PROT_READ | PROT_WRITE))) {
		char *aux = fz->map[m].addr;
		size_t len = fz->map[m].len, i;

		head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);
		tail = peek64(&pg->aux_tail);
		n = head - tail < len ? head - tail : len;
		for (i = 0; i < n; i += 512)
			(void)peek(aux + (tail + i) % len);
		__atomic_store_n(&pg->aux_tail, head, __ATOMIC_RELEASE);
	}
	STORE(touching, 0);
	pthread_mutex_unlock(&fz->lock);
}

static void op_burn(struct th *t)
{
	burn(1);
	__atomic_add_fetch(&t->fz->st->hist[OP_BURN][0], 1, __ATOMIC_RELAXED);
}

/*
 * A child that waits on a pipe.  It keeps no descriptor of ours (it
 * closes them before the parent goes on, so that a close() here is the
 * last one, as in a single process), dies with us, and when released
 * execs this program, burns CPU or exits.
 */
static void op_fork(struct th *t)
{
	struct fz *fz = t->fz;
	int k, p[2], q[2], err;
	char c = 0;
	pid_t pid;

	pthread_mutex_lock(&fz->lock);
	for (k = 0; k < MAXKID && fz->kid[k].pid; k++)
		;
	if (k < MAXKID)
		fz->kid[k].pid = -1;		/* reserved */
	pthread_mutex_unlock(&fz->lock);
	if (k == MAXKID)
		return;
	if (pipe2(p, O_CLOEXEC)) {
		fz->kid[k].pid = 0;
		return;
	}
	if (pipe2(q, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		fz->kid[k].pid = 0;
		return;
	}
	fflush(NULL);
	/* Not KCALL(): the child must not touch the parent's injection. */
	fi_enter(t);
	errno = 0;
	pid = fork();
	err = errno;
	if (!pid) {
		int fd = -1, i;

		/* make-it-fail came along (fail-nth does not): switch it off. */
		for (i = 0; fz->mode == FI_PROB && i < 1000 && fd < 0; i++)
			fd = fi_task_open();
		if (fd >= 0)
			fi_task(fd, false);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/*
		 * Out of the way first: another thread's close() may have
		 * let pipe2() hand out 3 or 4, and dup2(p[0], 3) would then
		 * close q[1] before it is moved.
		 */
		p[0] = fcntl(p[0], F_DUPFD, 10);
		q[1] = fcntl(q[1], F_DUPFD, 10);
		if (p[0] < 0 || q[1] < 0 ||
		    dup2(p[0], 3) != 3 || dup2(q[1], 4) != 4)
			_exit(3);
		close_range(5, ~0U, 0);
		if (write(4, "r", 1) != 1)
			_exit(3);
		close(4);
		if (read(3, &c, 1) != 1)
			_exit(0);
		if (c == 'x')
			execl(self_exe, "ptsim_fuzz", "--kid", NULL);
		if (c == 'b')
			burn(2);
		_exit(0);
	}
	fi_leave(t);
	close(p[0]);
	close(q[1]);
	if (pid > 0 && read(q[0], &c, 1) != 1)
		ksft_print_msg("a child died before it was ready\n");
	close(q[0]);
	record(t, OP_FORK, pid < 0 ? err : 0, "k%d", k);
	if (pid < 0) {
		close(p[1]);
		fz->kid[k].pid = 0;
		return;
	}
	pthread_mutex_lock(&fz->lock);
	fz->kid[k].pid = pid;
	fz->kid[k].go = p[1];
	pthread_mutex_unlock(&fz->lock);
}

static int reap_kid(struct fz *fz, int k)
{
	int status = -1;

	if (fz->kid[k].go >= 0) {
		/* Never released: let it exit. */
		close(fz->kid[k].go);
		fz->kid[k].go = -1;
	}
	while (waitpid(fz->kid[k].pid, &status, 0) < 0 && errno == EINTR)
		;
	fz->kid[k].pid = 0;
	return status;
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Let a waiting child go: it execs this program, burns, or exits.  With
 * one thread, wait for it too: a child whose inherited events are still
 * there or already gone changes what the next perf_event_open() of an
 * exclusive PMU gets, and the results must not depend on timing.
 */
static void op_release(struct th *t)
{
	static const char what[] = "xbe";
	struct fz *fz = t->fz;
	int k, go, status = 0;
	char c;

	pthread_mutex_lock(&fz->lock);
	k = waiting_kid(t);
	if (k < 0) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	go = fz->kid[k].go;
	fz->kid[k].go = -1;
	pthread_mutex_unlock(&fz->lock);
	c = what[rn(t, 3)];
	if (write(go, &c, 1) != 1)
		c = '?';
	close(go);
	if (fz->sync_kids) {
		pthread_mutex_lock(&fz->lock);
		status = reap_kid(fz, k);
		pthread_mutex_unlock(&fz->lock);
	}
	record(t, OP_RELEASE, 0, "k%d %s status=%d", k,
	       c == 'x' ? "exec" : c == 'b' ? "burn" : "exit", exit_code(status));
}

static void op_reap(struct th *t)
{
	struct fz *fz = t->fz;
	int k, n = 0, idx[MAXKID], status;

	pthread_mutex_lock(&fz->lock);
	for (k = 0; k < MAXKID; k++)
		if (fz->kid[k].pid > 0)
			idx[n++] = k;
	if (!n) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	k = idx[rn(t, n)];
	status = reap_kid(fz, k);
	pthread_mutex_unlock(&fz->lock);
	record(t, OP_REAP, 0, "k%d status=%d", k, exit_code(status));
}

static void op_munmap_whole(struct th *t)
{
	op_munmap(t, false);
}

static void op_munmap_part(struct th *t)
{
	op_munmap(t, true);
}

static void (* const handlers[NOPS])(struct th *t) = {
	[OP_OPEN]	= op_open,
	[OP_CLOSE]	= op_close,
	[OP_MMAP_DATA]	= op_mmap_data,
	[OP_SETAUX]	= op_setaux,
	[OP_MMAP_AUX]	= op_mmap_aux,
	[OP_MUNMAP]	= op_munmap_whole,
	[OP_MUNMAP_PART] = op_munmap_part,
	[OP_MPROTECT]	= op_mprotect,
	[OP_MREMAP]	= op_mremap,
	[OP_FIXED]	= op_fixed,
	[OP_SET_OUTPUT]	= op_set_output,
	[OP_IOCTL]	= op_ioctl,
	[OP_READ]	= op_read,
	[OP_CONSUME]	= op_consume,
	[OP_BURN]	= op_burn,
	[OP_FORK]	= op_fork,
	[OP_RELEASE]	= op_release,
	[OP_REAP]	= op_reap,
};

static int total_weight;

static void run_op(struct th *t)
{
	unsigned int r, i;

	r = rn(t, total_weight);
	for (i = 0; r >= (unsigned int)ops[i].weight; i++)
		r -= ops[i].weight;
	handlers[i](t);
	t->done++;
	__atomic_add_fetch(&t->fz->st->ops, 1, __ATOMIC_RELAXED);
}

static void *thread_main(void *p)
{
	struct th *t = p;

	if (t->fz->mode == FI_PROB)
		t->fi_fd = fi_task_open();
	else if (t->fz->mode == FI_NTH)
		t->fi_fd = fi_nth_open();
	if (t->fz->mode != FI_NONE && t->fi_fd < 0)
		ksft_exit_fail_msg("fault injection control: %s\n", strerror(errno));
	while (t->fz->deadline ? now_ms() < t->fz->deadline :
				 t->done < t->nops)
		run_op(t);
	if (t->fi_fd >= 0)
		close(t->fi_fd);
	__atomic_sub_fetch(&t->fz->running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Bring a CPU back; the kernel may refuse for a moment (EBUSY). */
static void hotplug_online(struct fz *fz, int cpu)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!cpu_set_online(cpu, 1))
			return;
		usleep(10000);
	}
	ksft_print_msg("hotplug: CPU %d did not come back: %s\n", cpu,
		       strerror(cpu_set_online(cpu, 1)));
	__atomic_add_fetch(&fz->st->stuck_offline, 1, __ATOMIC_RELAXED);
}

/*
 * The hotplug phase's extra thread.  While the workers run, it takes an
 * online CPU other than the first offline for up to 20 ms and brings it back, with
 * four CPUs or more sometimes two at once.  The per-CPU events of a CPU
 * that goes away leave their context (perf_event_exit_cpu_context() in
 * 6.12), those on a task follow it to another CPU; meanwhile the workers
 * open, map, unmap, enable and close as in the threads phase, and burn
 * so that ptsim writes, its transactions begun and ended by its PMI.
 * Every CPU is online again when it returns.
 */
static void *hotplug_main(void *p)
{
	struct th *t = p;
	struct fz *fz = t->fz;
	int off[2], n, i;

	while (__atomic_load_n(&fz->running, __ATOMIC_ACQUIRE)) {
		n = fz->ncpu >= 4 && chance(t, 25) ? 2 : 1;
		for (i = 0; i < n; i++) {
			off[i] = online_cpu(1 + rn(t, fz->ncpu - 1));
			if (i && off[i] == off[0])
				break;
			if (cpu_set_online(off[i], 0)) {
				__atomic_add_fetch(&fz->st->offline_refused, 1,
						   __ATOMIC_RELAXED);
				break;
			}
			__atomic_add_fetch(&fz->st->offlines, 1, __ATOMIC_RELAXED);
		}
		n = i;
		usleep(rn(t, 20000));
		for (i = 0; i < n; i++)
			hotplug_online(fz, off[i]);
		usleep(rn(t, 5000));
	}
	return NULL;
}

/* Close, unmap and reap everything the phase left. */
static void teardown(struct fz *fz)
{
	int i;

	for (i = 0; i < MAXKID; i++)
		if (fz->kid[i].pid > 0)
			reap_kid(fz, i);
	for (i = 0; i < MAXMAP; i++)
		if (fz->map[i].addr) {
			munmap(fz->map[i].addr, fz->map[i].len);
			fz->map[i].addr = NULL;
		}
	for (i = 0; i < MAXEV; i++)
		if (fz->ev[i].fd >= 0) {
			close(fz->ev[i].fd);
			fz->ev[i].fd = -1;
		}
	if (fz->anchor >= 0)
		close(fz->anchor);
	fz->anchor = -1;
}

static void fz_init(struct fz *fz, struct stats *st, int mode)
{
	int i;

	memset(fz, 0, sizeof(*fz));
	pthread_mutex_init(&fz->lock, NULL);
	for (i = 0; i < MAXEV; i++)
		fz->ev[i].fd = -1;
	for (i = 0; i < MAXKID; i++)
		fz->kid[i].go = -1;
	fz->psz = sysconf(_SC_PAGESIZE);
	fz->ncpu = cpus_online();
	fz->nocpu = online_cpu(fz->ncpu - 1) + 1;
	fz->mode = mode;
	fz->st = st;
	fz->anchor = -1;
}

/*
 * Keep the results of a phase independent of the scheduler.  When every
 * event of a task's perf context is inherited, a forked child's context
 * is a clone of it, and the core may swap the two contexts between the
 * tasks at a context switch (context_equiv(), perf_event_context_sched_out()):
 * the parent's events then hang off the child.  An event opened on the
 * parent afterwards lands in the other context, and joining a group led
 * by one of those events fails with EINVAL (group_leader->ctx != ctx) -
 * or succeeds, if no switch happened in between.  A 260000-operation
 * replay phase hit that once in its 33430th operation.  A disabled
 * software event on the task that is not inherited makes the child's
 * context never a clone, so never swapped; the phases whose results are
 * compared (with each other, or between kernels) open one, the others
 * leave the swap to be exercised.
 */
static void fz_anchor(struct fz *fz)
{
	fz->anchor = dummy_open();
	if (fz->anchor < 0)
		ksft_exit_fail_msg("the anchor event: %s\n", strerror(errno));
}

/*
 * Run nthreads x nops operations; threads get their own stacks, which
 * are unmapped afterwards, so that the mappings count comes back exactly.
 */
static void run_threads(struct fz *fz, __u64 seed, int nthreads, long nops,
			bool hotplug)
{
	struct th th[17];
	pthread_attr_t attr;
	int i, all;

	if (nthreads > 16)
		nthreads = 16;
	all = nthreads + hotplug;
	for (i = 0; i < all; i++) {
		th[i] = (struct th){ .fz = fz, .nops = nops, .fi_fd = -1 };
		th[i].rng = seed * 0x100000001b3ULL + i;
	}
	fz->running = nthreads;
	if (all == 1) {
		fz->sync_kids = true;
		thread_main(&th[0]);
		return;
	}
	for (i = 0; i < all; i++) {
		th[i].stack_len = 256 * 1024;
		th[i].stack = mmap(NULL, th[i].stack_len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (th[i].stack == MAP_FAILED)
			ksft_exit_fail_msg("thread stack: %s\n", strerror(errno));
		pthread_attr_init(&attr);
		pthread_attr_setstack(&attr, th[i].stack, th[i].stack_len);
		if (pthread_create(&th[i].th, &attr,
				   i < nthreads ? thread_main : hotplug_main, &th[i]))
			ksft_exit_fail_msg("pthread_create failed\n");
		pthread_attr_destroy(&attr);
	}
	for (i = 0; i < all; i++) {
		pthread_join(th[i].th, NULL);
		munmap(th[i].stack, th[i].stack_len);
	}
}

/* ---- reporting what differs ---- */

static char *slurp(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");
	size_t n;

	if (!buf || !f) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = 0;
	return buf;
}

/* Print the lines of b that a does not have, and the other way round. */
static void print_line_diff(const char *what, const char *a, const char *b)
{
	const char *sides[2][2] = { { a, b }, { b, a } };
	int k, shown = 0;

	for (k = 0; k < 2 && a && b; k++) {
		const char *p = sides[k][1], *e;

		for (; *p && shown < 16; p = *e ? e + 1 : e) {
			char line[512];
			size_t n;

			e = strchrnul(p, '\n');
			n = e - p < (long)sizeof(line) - 1 ? (size_t)(e - p) : sizeof(line) - 1;
			memcpy(line, p, n);
			line[n] = 0;
			if (!strstr(sides[k][0], line)) {
				ksft_print_msg("%s %s %s\n", what, k ? "-" : "+", line);
				shown++;
			}
		}
	}
}

/*
 * The /proc/meminfo fields that moved by a MiB or more between @a and @b:
 * where memory that is neither free nor ours went (a leaked buffer's
 * pages, or a debug kernel's caches such as KASAN's quarantine).
 */
static long meminfo_field(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *q;
	long v;

	for (q = text; *q; q = strchrnul(q, '\n'), q += !!*q)
		if (!strncmp(q, name, len) && q[len] == ':' &&
		    sscanf(q + len + 1, "%ld", &v) == 1)
			return v;
	return LONG_MIN;
}

static void print_meminfo_diff(const char *a, const char *b)
{
	const char *p;

	for (p = b; a && b && *p; p = strchrnul(p, '\n'), p += !!*p) {
		char name[64];
		long was, is;

		if (sscanf(p, "%63[^:]: %ld", name, &is) != 2)
			continue;
		was = meminfo_field(a, name);
		if (was != LONG_MIN && labs(is - was) >= 1024)
			ksft_print_msg("meminfo %s %ld -> %ld kB\n", name, was, is);
	}
}

/* The first line where two traces differ. */
static void print_first_diff(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, line = 0, start = 0;

	while (i < alen && i < blen && a[i] == b[i]) {
		if (a[i] == '\n') {
			line++;
			start = i + 1;
		}
		i++;
	}
	a += start;
	b += start;
	ksft_print_msg("traces differ at line %zu:\n", line + 1);
	ksft_print_msg("  first: %.*s\n", (int)(strchrnul(a, '\n') - a), a);
	ksft_print_msg("  again: %.*s\n", (int)(strchrnul(b, '\n') - b), b);
}

/* ---- phases ---- */

struct phase {
	const char *name;
	int threads;		/* 0: the -t value */
	int mode;
	bool traced;
	bool child;		/* run in a child process ... */
	bool drop_ipc_lock;	/* ... without CAP_IPC_LOCK */
	long memlock;		/* ... with this RLIMIT_MEMLOCK (bytes), or 0 */
	long mlock_kb;		/* perf_event_mlock_kb for it, or -1 */
	uid_t uid;		/* ... as this user (0: root) */
	bool hotplug;		/* CPUs go offline and back meanwhile */
	bool named_only;	/* run only when -p names it */
};

static const struct phase phases[] = {
	{ "replay", 1, FI_NONE, true },
	{ "again", 1, FI_NONE, false },
	{ "limits", 1, FI_NONE, true, true, true, 64 * 1024, 8, 0 },
	{ "unpriv", 1, FI_NONE, true, true, false, 0, -1, NOBODY },
	{ "threads", 0, FI_NONE, false },
	{ "hotplug", 0, FI_NONE, false, .hotplug = true, .named_only = true },
	{ "faults", 1, FI_PROB, false },
	{ "nth", 1, FI_NTH, false },
};

/* The user's perf_mlock, measured as that user (ptsim_leak.h). */
static long probe_as(uid_t uid)
{
	long psz = sysconf(_SC_PAGESIZE), old, v = -1;
	struct stats *sh;
	pid_t pid;

	if (!uid)
		return perf_mlock_probe();
	/* perf_mlock_probe() sets the sysctl, which needs root: do it here. */
	sh = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	/* Before the fork: the child's mmap() must see this limit. */
	old = read_long(MLOCK_SYSCTL);
	write_long(MLOCK_SYSCTL, 1024);
	pid = fork();
	if (!pid) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		long limit = (1024 / (psz / 1024)) * ncpu, n = 1, before, after;
		void *p;
		int fd;

		while (n < limit)
			n *= 2;
		if (set_memlock(RLIM_INFINITY) || setgroups(0, NULL) ||
		    setgid(uid) || setuid(uid))
			_exit(1);
		fd = dummy_open();
		if (fd < 0)
			_exit(1);
		before = vm_pin_pages();
		p = mmap(NULL, (1 + n) * psz, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		after = vm_pin_pages();
		if (p == MAP_FAILED)
			_exit(1);
		sh->leaks = after - before - (1 + n - limit);
		_exit(0);
	}
	if (pid > 0) {
		int status;

		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			v = sh->leaks;
	}
	write_long(MLOCK_SYSCTL, old);
	munmap(sh, psz);
	return v;
}

struct opts {
	__u64 seed;
	long nops;
	int threads;
	const char *phases;
	const char *trace;
	long secs;		/* -d: the unreplayed phases' length, or 0 */
};

/*
 * Whether a process of @uid other than a zombie runs: one of an earlier
 * program's (a child killed with its parent, say) still exiting holds
 * its perf buffers, charged to the same user, until its mappings go.
 */
static bool uid_has_tasks(uid_t uid)
{
	char path[300], line[128];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		bool zombie = false, mine = false;
		unsigned int ruid;
		FILE *f;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "State:", 6))
				zombie = !!strchr(line, 'Z');
			else if (sscanf(line, "Uid: %u", &ruid) == 1)
				mine = ruid == uid;
		}
		fclose(f);
		found = mine && !zombie;
	}
	closedir(dir);
	return found;
}

/*
 * The user's perf_mlock before a phase is only its own baseline when no
 * other process of the user is left: wait up to 10 s for them to go.
 */
static void wait_uid_idle(const char *phase, uid_t uid)
{
	double end = now_ms() + 10000;

	while (uid_has_tasks(uid) && now_ms() < end)
		usleep(20000);
	if (uid_has_tasks(uid))
		ksft_print_msg("%s: uid %u still has processes: its perf_mlock may change\n",
			       phase, uid);
}

/*
 * One phase: set up, run, tear down, check.  Returns the number of
 * leaks found (or -1 if the phase could not run).  In a child process
 * when it needs other credentials or limits; the child checks what is
 * its own (VmPin, descriptors, mappings), the parent the user's
 * perf_mlock and MemFree.
 */
static long run_phase(const struct phase *ph, const struct opts *o,
		      __u64 seed, struct stats *st, FILE *trace, char **mem,
		      size_t *mlen, long *injected)
{
	long old_mlock = read_long(MLOCK_SYSCTL), fi_budget = 1000000000L;
	struct acct base, now;
	char why[512];
	long leaks = 0, mlock0 = -1, mlock1;
	uid_t uid = ph->uid;
	struct fz fz;
	pid_t pid = 0;

	*injected = 0;
	if (ph->mode == FI_PROB && fi_setup(10, 1, fi_budget))
		return -1;
	if (ph->mode == FI_NTH && fi_setup(0, 1, -1))
		return -1;
	if (uid)
		wait_uid_idle(ph->name, uid);
	mlock0 = probe_as(uid);
	acct_take(&base, false);
	/* As root, ptsim's setup_aux/free_aux balance must be readable. */
	if (base.aux_bufs < 0) {
		ksft_print_msg("%s: cannot read %s/{setup,free}_aux_calls\n",
			       ph->name, PTSIM_DEBUGFS);
		return -1;
	}
	if (ph->mlock_kb >= 0)
		write_long(MLOCK_SYSCTL, ph->mlock_kb);
	memset(&st->injected, 0, sizeof(*st) - offsetof(struct stats, injected));
	if (trace)
		fflush(trace);
	fflush(NULL);
	if (ph->child)
		pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct acct cbase, cnow;

		if (ph->child) {
			if (ph->memlock && set_memlock(ph->memlock))
				_exit(2);
			if (ph->drop_ipc_lock && cap_drop(CAP_IPC_LOCK))
				_exit(2);
			if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
				_exit(2);
			/* setuid() made us undumpable: /proc/self/fd would be root's. */
			if (uid && prctl(PR_SET_DUMPABLE, 1))
				_exit(2);
		}
		char *maps0 = slurp("/proc/self/maps"), *maps1;
		char *meminfo0 = slurp("/proc/meminfo"), *meminfo1;

		acct_take(&cbase, false);
		fz_init(&fz, st, ph->mode);
		fz.trace = ph->traced ? trace : NULL;
		fz.keep = !strcmp(ph->name, "replay") || !strcmp(ph->name, "again");
		if (ph->traced || fz.keep)
			fz_anchor(&fz);
		else if (o->secs)
			fz.deadline = now_ms() + o->secs * 1000.0;
		if (fz.trace)
			fprintf(fz.trace, "# phase %s\n", ph->name);
		run_threads(&fz, seed, ph->threads ? ph->threads : o->threads,
			    o->nops, ph->hotplug);
		teardown(&fz);
		if (fz.trace)
			fflush(fz.trace);
		if (acct_settle(&cbase, &cnow, why, sizeof(why))) {
			st->leaks++;
			ksft_print_msg("%s: leaked: %s\n", ph->name, why);
			maps1 = slurp("/proc/self/maps");
			print_line_diff("maps", maps0, maps1);
			free(maps1);
			meminfo1 = slurp("/proc/meminfo");
			print_meminfo_diff(meminfo0, meminfo1);
			free(meminfo1);
		}
		free(maps0);
		free(meminfo0);
		if (fz.keep) {
			*mem = fz.mem;
			*mlen = fz.mlen;
		}
		if (ph->child) {
			st->child_ok = 1;
			fflush(NULL);
			_exit(0);
		}
	} else {
		int status;

		waitpid(pid, &status, 0);
		if (!st->child_ok) {
			ksft_print_msg("%s: the child phase died (status 0x%x)\n",
				       ph->name, status);
			st->leaks++;
		}
	}
	if (ph->mlock_kb >= 0)
		write_long(MLOCK_SYSCTL, old_mlock);
	if (ph->mode == FI_PROB)
		st->injected += fi_fired(fi_budget);
	if (ph->mode != FI_NONE)
		fi_off();
	*injected = st->injected;
	leaks = st->leaks + st->faults + st->stuck_offline;
	if (ph->hotplug)
		ksft_print_msg("%s: %ld CPUs taken offline and back, %ld offlines refused\n",
			       ph->name, st->offlines, st->offline_refused);
	/* The user's charge, and memory, after the phase. */
	mlock1 = probe_as(uid);
	if (mlock0 < 0 || mlock1 != mlock0) {
		int i;

		/* Frees after a grace period may lag: give them time. */
		for (i = 0; i < 20 && mlock0 >= 0 && mlock1 != mlock0; i++) {
			usleep(50000);
			mlock1 = probe_as(uid);
		}
		if (mlock1 != mlock0) {
			ksft_print_msg("%s: perf_mlock of uid %u: %ld -> %ld pages\n",
				       ph->name, uid, mlock0, mlock1);
			leaks++;
		}
	}
	if (!ph->child)
		return leaks;	/* the in-process check above covered the rest */
	base.perf_mlock = -1;
	if (acct_settle(&base, &now, why, sizeof(why))) {
		ksft_print_msg("%s: leaked: %s\n", ph->name, why);
		leaks++;
	}
	return leaks;
}

static void print_histogram(struct stats *st)
{
	char line[1024];
	int op, e, n;

	for (op = 0; op < NOPS; op++) {
		n = snprintf(line, sizeof(line), "%-12s", ops[op].name);
		for (e = 0; e < NERR; e++)
			if (st->hist[op][e] && n < (int)sizeof(line) - 32)
				n += snprintf(line + n, sizeof(line) - n, " %s=%ld",
					      errname(e), st->hist[op][e]);
		ksft_print_msg("%s\n", line);
	}
}

static FILE *open_trace(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "none"))
		return NULL;
	f = fopen(path, "w");
	if (!f)
		ksft_exit_fail_msg("-T %s: %s\n", path, strerror(errno));
	return f;
}

static bool phase_selected(const struct phase *ph, const char *names)
{
	return names ? !!strstr(names, ph->name) : !ph->named_only;
}

/*
 * A phase in a child with limits or as another user (limits, unpriv)
 * needs perf_event_paranoid in 0..2: perf enforces RLIMIT_MEMLOCK only
 * from 0, and lets nobody trace itself only up to 2.  Sets 2 if it is
 * outside; returns the value to put back, or LONG_MIN.
 */
static long phase_paranoid(const struct phase *ph)
{
	long old;

	if (!ph->child)
		return LONG_MIN;
	old = read_long(PARANOID_SYSCTL);
	if (old == LONG_MIN || (old >= 0 && old <= 2))
		return LONG_MIN;
	ksft_print_msg("%s: perf_event_paranoid %ld -> 2 for the phase\n",
		       ph->name, old);
	if (write_long(PARANOID_SYSCTL, 2))
		ksft_exit_fail_msg("cannot set perf_event_paranoid: %s\n",
				   strerror(errno));
	return old;
}

static void print_help(void)
{
	fprintf(stderr,
		"usage: ptsim_fuzz [-s seed] [-n ops-per-phase] [-t threads]\n"
		"                  [-p phase,...] [-d seconds] [-T trace|none] [-v]\n"
		"phases: replay again limits unpriv threads hotplug faults nth\n"
		"        (all but hotplug by default)\n");
	exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	struct opts o = { .seed = 1, .nops = 500, .threads = 4 };
	long total_inj = 0, total_leaks = 0, total_ops = 0;
	char *mem[2] = { NULL, NULL };
	size_t mlen[2] = { 0, 0 };
	unsigned int i, nph = 0;
	struct sigaction sa = { 0 };
	struct stats *st;
	const char *why;
	FILE *trace;
	bool fi;
	int c;

	self_exe = "/proc/self/exe";
	if (argc == 2 && !strcmp(argv[1], "--kid")) {
		/* A traced child after exec: run a little, then exit. */
		burn(1);
		return 0;
	}
	while ((c = getopt(argc, argv, "s:n:t:p:d:T:v")) != -1) {
		switch (c) {
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			o.nops = strtol(optarg, NULL, 0);
			break;
		case 't':
			o.threads = atoi(optarg);
			break;
		case 'p':
			o.phases = optarg;
			break;
		case 'd':
			o.secs = strtol(optarg, NULL, 0);
			break;
		case 'T':
			o.trace = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			print_help();
		}
	}
	for (i = 0; i < NOPS; i++)
		total_weight += ops[i].weight;
	/*
	 * One malloc arena, and no mmap() for large blocks: the fuzzer's
	 * own memory must not show up as mappings in the leak check.
	 */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	setvbuf(stdout, NULL, _IOLBF, 0);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (i = 0; i < ARRAY_SIZE(phases); i++)
		if (phase_selected(&phases[i], o.phases))
			nph++;
	ksft_print_header();
	ksft_set_plan(nph);
	why = ptsim_missing(PTSIM_NEED_PMU | PTSIM_NEED_ROOT);
	if (why) {
		for (i = 0; i < nph; i++)
			ksft_test_result_skip("%s\n", why);
		ksft_finished();
	}
	/* Each phase checks ptsim's AUX buffers (debugfs) for leaks. */
	why = ptsim_missing(PTSIM_NEED_DEBUGFS);
	if (why) {
		for (i = 0; i < nph; i++)
			ksft_test_result_skip("%s\n", why);
		ksft_finished();
	}
	fi = fi_available();
	ksft_print_msg("seed=%llu ops/phase=%ld threads=%d cpus=%d fault-injection=%s\n",
		       (unsigned long long)o.seed, o.nops, o.threads,
		       cpus_online(), fi ? "yes" : "no");
	if (o.secs)
		ksft_print_msg("threads, hotplug, faults, nth: %ld s each\n", o.secs);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(st, 0, sizeof(*st));
	trace = open_trace(o.trace);

	for (i = 0; i < ARRAY_SIZE(phases); i++) {
		const struct phase *ph = &phases[i];
		long ops0 = st->ops, leaks, inj, paranoid;
		int k = !strcmp(ph->name, "again");

		if (!phase_selected(ph, o.phases))
			continue;
		why = ptsim_missing((ph->mode != FI_NONE ? PTSIM_NEED_FAULTS : 0) |
				    (ph->hotplug ? PTSIM_NEED_HOTPLUG : 0));
		if (why) {
			ksft_test_result_skip("%s: %s\n", ph->name, why);
			continue;
		}
		/* Each phase its own sequence; "again" repeats "replay". */
		paranoid = phase_paranoid(ph);
		leaks = run_phase(ph, &o, o.seed * 1000003 + (k ? 0 : i), st,
				  ph->traced ? trace : NULL, &mem[k], &mlen[k], &inj);
		if (paranoid != LONG_MIN)
			write_long(PARANOID_SYSCTL, paranoid);
		total_inj += inj;
		if (leaks < 0) {
			ksft_test_result_fail("%s: could not set up\n", ph->name);
			continue;
		}
		total_leaks += leaks;
		if (k && mem[0]) {
			bool same = mlen[0] == mlen[1] &&
				    !memcmp(mem[0], mem[1], mlen[0]);

			if (!same)
				print_first_diff(mem[0], mlen[0], mem[1], mlen[1]);
			ksft_test_result(same && !leaks,
					 "%s: seed %llu replayed: %ld ops, %s, %ld leaks\n",
					 ph->name, (unsigned long long)o.seed,
					 st->ops - ops0,
					 same ? "same results" : "DIFFERENT results",
					 leaks);
			continue;
		}
		ksft_test_result(!leaks, "%s: %ld ops, %ld injections, %ld leaks\n",
				 ph->name, st->ops - ops0, inj, leaks);
	}
	if (trace)
		fclose(trace);
	total_ops = st->ops;
	print_histogram(st);
	ksft_print_msg("ptsim_fuzz: seed=%llu ops=%ld injections=%ld leaks=%ld\n",
		       (unsigned long long)o.seed, total_ops, total_inj, total_leaks);
	ksft_finished();
}
