// SPDX-License-Identifier: GPL-2.0
/*
 * auxlab's hooks into perf_fuzzer (Vince Weaver's perf_event_tests, built
 * at test time by scripts/build-perf-fuzzer.sh; none of its code is here).
 * Linked into perf_fuzzer with -Wl,--wrap for perf_event_open(), mmap()
 * and signal(), so the fuzzer's own files need no change for them:
 *
 *  - counters: ptsim and ptsim_mark events opened, data and AUX areas
 *    mapped (an mmap() of a perf event at a non-zero offset is an AUX
 *    mapping: the fuzzer maps data areas at offset 0 only), printed at
 *    exit with the operations run as
 *      "auxlab-pf: ops=N ptsim_opens=N aux_maps=N data_maps=N
 *       fixed_refused=N storm_stops=N" (storm_stops: events closed by
 *       0005-storm-silence.patch's rule)
 *  - a guard: mmap() with MAP_FIXED over the fuzzer's own text, data,
 *    heap, stack or vDSO is refused (EINVAL, counted as fixed_refused),
 *    see __wrap_mmap();
 *  - the PMU bias (AUXLAB_PTSIM_PCT=<0..100> in the environment): the
 *    share of event types drawn that are forced to a sysfs PMU named
 *    ptsim*, through auxlab_pf_want_ptsim(), called by the lines our
 *    patch (0001-ptsim-bias.patch) adds to the fuzzer's event generator;
 *    and, through auxlab_pf_want_aux(), an AUX mapping attempt after
 *    every data mapping of a ptsim event;
 *  - a diagnosis of a fatal SIGBUS or SIGSEGV: what was accessed, whether
 *    it was a store, the instruction pointer (resolved on the host with
 *    addr2line), the operation count, and the /proc/self/maps line of the
 *    mapping it hit, one "auxlab-pf: fatal ..." line each; then the signal
 *    kills the process as it would have.  perf_fuzzer resets SIGSEGV to
 *    SIG_DFL after its own guarded memset(); the signal() wrapper puts the
 *    diagnosis back instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <ucontext.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "fuzzer_stats.h"
#include "aux_sysfs.h"

/* The functions -Wl,--wrap renames the originals to (no header has them). */
int __real_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
sighandler_t __real_signal(int sig, sighandler_t handler);

int auxlab_pf_want_ptsim(void);
int auxlab_pf_want_aux(unsigned int type);

#define MAX_PTSIM_TYPES 4
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int ptsim_types[MAX_PTSIM_TYPES];
static int nr_ptsim_types;
static int ptsim_pct;
static long ptsim_opens, aux_maps, data_maps, fixed_refused;

static int is_ptsim_type(__u32 type)
{
	int i;

	for (i = 0; i < nr_ptsim_types; i++)
		if ((__u32)ptsim_types[i] == type)
			return 1;
	return 0;
}

/* fuzz_overflow.c, with 0005-storm-silence.patch: fds whose signals the
 * overflow handler ignores since their event stormed. */
extern unsigned char auxlab_storm_fd[];
extern const int auxlab_storm_fds;

int __wrap_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags)
{
	int fd = __real_perf_event_open(attr, pid, cpu, group_fd, flags);

	if (fd >= 0 && attr && is_ptsim_type(attr->type))
		ptsim_opens++;
	/* A new event: its signals count again. */
	if (fd >= 0 && fd < auxlab_storm_fds)
		auxlab_storm_fd[fd] = 0;
	return fd;
}

/* /proc/self/maps into @buf, NUL-terminated; false if it cannot be read. */
static int read_maps(char *buf, size_t size)
{
	ssize_t len = 0, r;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return 0;
	while (len < (ssize_t)size - 1 &&
	       (r = read(fd, buf + len, size - 1 - len)) > 0)
		len += r;
	close(fd);
	buf[len] = '\0';
	return 1;
}

/*
 * The first line of @buf (from read_maps()) whose mapping overlaps
 * [lo, hi), perf mappings left out if @skip_perf; NULL if none.  Cuts
 * @buf into lines.
 */
static char *find_mapping(char *buf, unsigned long lo, unsigned long hi,
			  int skip_perf)
{
	char *p, *nl;

	for (p = buf; *p; p = nl + 1) {
		unsigned long start, end;

		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (sscanf(p, "%lx-%lx", &start, &end) == 2 &&
		    lo < end && start < hi &&
		    !(skip_perf && strstr(p, "[perf_event]")))
			return p;
	}
	return NULL;
}

/*
 * Whether [addr, addr + len) overlaps a mapping of the fuzzer's own that
 * is not a perf mapping: its text, data, heap, stack, vDSO.
 */
static int fixed_hits_self(void *addr, size_t len)
{
	static char buf[65536];
	unsigned long lo = (unsigned long)addr, hi;
	long psz = sysconf(_SC_PAGESIZE);

	hi = lo + ((len + psz - 1) & ~(psz - 1));
	if (hi <= lo || !read_maps(buf, sizeof(buf)))
		return hi > lo;
	return !!find_mapping(buf, lo, hi, 1);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	void *p;

	/*
	 * The fuzzer draws MAP_FIXED with a random address now and then.
	 * Over its own text or data that kills it: a perf mmap() that
	 * fails after the old mappings were torn down leaves a hole (6.12
	 * mm/vma.h, vms_abort_munmap_vmas(): "leaving a gap where the
	 * MAP_FIXED mapping failed"), one that succeeds puts a perf buffer
	 * there; either way
	 * the next instruction fetch or load faults (seen: SIGSEGV at the
	 * fuzzer's own text, 2026-11-24).  Refuse those, counted; MAP_FIXED
	 * over the fuzzer's perf mappings, or anywhere else, goes through.
	 */
	if ((flags & MAP_FIXED) && fixed_hits_self(addr, len)) {
		fixed_refused++;
		printf("auxlab-pf: refused MAP_FIXED at %p, %zu bytes, over itself (op %lld)\n",
		       addr, len, stats.total_iterations);
		errno = EINVAL;
		return MAP_FAILED;
	}
	p = __real_mmap(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && fd >= 0) {
		if (off)
			aux_maps++;
		else
			data_maps++;
	}
	return p;
}

/*
 * Called by the event generator each time it draws an event type: true
 * for AUXLAB_PTSIM_PCT percent of the draws, which then take a sysfs
 * PMU named ptsim*.  rand() is the fuzzer's own stream, so a seed still
 * replays the same run.
 */
int auxlab_pf_want_ptsim(void)
{
	return ptsim_pct > 0 && rand() % 100 < ptsim_pct;
}

/* With the bias on, every data mapping of a ptsim event tries an AUX one. */
int auxlab_pf_want_aux(unsigned int type)
{
	return ptsim_pct > 0 && is_ptsim_type(type);
}

/* Async-signal-safe output, for the handler. */
static void say(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= w;
	}
}

/* The /proc/self/maps line of the mapping that holds @addr, if any. */
static void say_mapping(unsigned long addr)
{
	static char buf[65536];
	char *p;

	if (!read_maps(buf, sizeof(buf)))
		return;
	p = find_mapping(buf, addr, addr + 1, 0);
	if (!p) {
		say("auxlab-pf: fatal: in no mapping\n");
		return;
	}
	say("auxlab-pf: fatal: in mapping ");
	say(p);
	say("\n");
}

static void fatal_handler(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	unsigned long ip = uc->uc_mcontext.gregs[REG_RIP];
	unsigned long err = uc->uc_mcontext.gregs[REG_ERR];
	char line[256];

	/* x86 page-fault error code: bit 1 is a write. */
	snprintf(line, sizeof(line),
		 "auxlab-pf: fatal %s code=%d addr=%p %s ip=%#lx op=%lld\n",
		 sig == SIGBUS ? "SIGBUS" : "SIGSEGV", si->si_code,
		 si->si_addr, err & 2 ? "store" : "load", ip,
		 stats.total_iterations);
	say(line);
	say_mapping((unsigned long)si->si_addr);
	/*
	 * SA_RESETHAND made the action SIG_DFL: returning re-runs the access,
	 * which now kills the process with the signal (raise() for one that
	 * was sent rather than caused).
	 */
	if (si->si_code <= 0)
		raise(sig);
}

static void install_fatal_handler(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(sig, &sa, NULL);
}

sighandler_t __wrap_signal(int sig, sighandler_t handler)
{
	sighandler_t old = __real_signal(sig, handler);

	if ((sig == SIGSEGV || sig == SIGBUS) && handler == SIG_DFL)
		install_fatal_handler(sig);
	return old;
}

/* fuzz_overflow.c, with 0005-storm-silence.patch */
extern long auxlab_storm_stops;

static void summary(void)
{
	printf("auxlab-pf: ops=%lld ptsim_opens=%ld aux_maps=%ld data_maps=%ld fixed_refused=%ld storm_stops=%ld\n",
	       stats.total_iterations, ptsim_opens, aux_maps, data_maps,
	       fixed_refused, auxlab_storm_stops);
	fflush(stdout);
}

__attribute__((constructor)) static void auxlab_pf_init(void)
{
	static const char * const names[] = { "ptsim", "ptsim_mark" };
	const char *pct = getenv("AUXLAB_PTSIM_PCT");
	unsigned int i;
	int t;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		t = auxc_pmu_type(names[i]);
		if (t >= 0 && nr_ptsim_types < MAX_PTSIM_TYPES)
			ptsim_types[nr_ptsim_types++] = t;
	}
	ptsim_pct = pct ? atoi(pct) : 0;
	/*
	 * Line-buffered: the fuzzer forks children that inherit an unflushed
	 * buffer, and its messages then reach the file out of order.
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);
	install_fatal_handler(SIGBUS);
	install_fatal_handler(SIGSEGV);
	atexit(summary);
}
