// SPDX-License-Identifier: GPL-2.0
/*
 * aux-bench - benchmark the perf AUX area through ptsim.
 *
 *	aux-bench [--smoke] [--reps N] [--figures GROUP[,GROUP...]]
 *	aux-bench --load txn|mmap SECONDS
 *
 * Runs each figure of the AUX area benchmark (make bench) in the guest and
 * prints, as TAP, one result per figure: "ok" when the measurement ran and
 * gave a plausible (positive) value, "not ok" when something failed.  The
 * numbers themselves are TAP comments, one line per measured quantity:
 *
 *	# BENCH <name> <unit> <value> <value> ...
 *
 * with one value per repetition; the host (scripts/bench.py) takes the
 * median and the spread, and sets the kernels side by side.  Speed is never
 * a test result: --smoke (make check) runs every figure once, small, and
 * only checks that it works.
 *
 * Time is the guest's CLOCK_MONOTONIC (in the kernel, ktime_get_ns()),
 * which under QEMU's -icount follows the number of executed instructions.
 *
 * The figures:
 *  txn_<S>      ns per AUX transaction of S bytes (begin, write, end,
 *               PERF_RECORD_AUX), measured in the kernel by ptsim's
 *               benchmark mode (config field "bench"), the consumer
 *               keeping up (it only moves aux_tail);
 *  txn_end_64, txn_begin_64  ns in perf_aux_output_end() and in
 *               perf_aux_output_begin() of a 64-byte transaction, timed
 *               apart (config bit bench_split), one clock read included;
 *  tput_<S>     MB/s (10^6 bytes per second of guest time) through the AUX
 *               area with ptsim's benchmark mode producing as fast as it can
 *               and the consumer copying every byte out, as a recorder does;
 *  memcpy       the guest's user-space memcpy bandwidth, MB/s, in 64 KiB
 *               blocks: the limit of a path that copies the data;
 *  wake_<W>     us from the end of the transaction that crosses an
 *               aux_watermark of W bytes (the time in its PERF_RECORD_AUX)
 *               to the return of poll() in the consumer;
 *  mmap_<M>, munmap_<M>  us to mmap/munmap an AUX area of M bytes;
 *  touch_<M>    us to read the first byte of every page of an AUX area of
 *               M bytes just mapped: the first access, which faults every
 *               page in on a kernel that maps them on fault and none on
 *               one that maps them at mmap() time;
 *  cycle_1M     us for an mmap + munmap of a 1 MiB AUX area;
 *  work_*       ms for a fixed workload, untraced and traced by ptsim at a
 *               few data rates (the consumer running alongside);
 *  flush_*      us for PERF_EVENT_IOC_FLUSH with data pending in ptsim's
 *               FIFO and with none;
 *  tput_<N>cpu_<S>, tput_<N>cpu_each_<S>  tput_<S> on all N online CPUs
 *               at once, one per-CPU event, AUX area and consumer per CPU,
 *               in the steady state: MB/s of all CPUs together, and of
 *               each CPU (the values of every CPU pooled).  What these mean under -icount, where
 *               the CPUs take turns on one instruction clock, is said
 *               with the figures on the results page (scripts/bench.py).
 * The page runs ptsim's setup_aux received (physically contiguous runs by
 * log2 of their length, from /sys/kernel/debug/ptsim/setup_aux) are printed
 * as "# RUNS <M> <count-order0> <count-order1> ...".
 *
 * --figures runs only the groups of figures it names: txn, txn_split,
 * tput, wake, mmap, work, flush (the default: all of these) and cpus (the
 * tput_<N>cpu_* figures, for a guest with more than one CPU; never by
 * default).
 *
 * --load runs one of the loads behind a figure, without timing it, for
 * SECONDS of guest time, for a profiler outside the guest to sample
 * (scripts/guest-profile.py): "txn", 64-byte transactions as txn_64 runs
 * them; "mmap", mmap and munmap of a 64 MiB AUX area as mmap_64M does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "lib/aux_consumer.h"
#include "lib/aux_sysfs.h"

#define DEBUGFS_BENCH	"/sys/kernel/debug/ptsim/bench"
#define DEBUGFS_SETUP	"/sys/kernel/debug/ptsim/setup_aux"

/*
 * ptsim's config fields (Documentation/admin-guide/perf/ptsim.rst): in
 * config, Intel PT's pt, tsc and branch, as perf sets them; the
 * simulation in config1, the benchmark mode in config2.
 */
#define PT_CONFIG	((uint64_t)1 << 0 | (uint64_t)1 << 10 | (uint64_t)1 << 13)
#define RATE(x)		((uint64_t)(x) << 10)
#define PERIOD(us)	((uint64_t)(us) << 26)
#define FIFO(s)		((uint64_t)(s) << 38)
#define DRAIN(kib)	((uint64_t)(kib) << 43)
#define BENCH(s)	((uint64_t)(s) << 0)
#define BENCH_SPLIT	((uint64_t)1 << 5)

#define MAX_REPS	64
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define COPY_BLOCK	(64 << 10)

static bool smoke;
static int reps = 5;
static int ntests;
static int ptsim_type;
static long page_size;
static int bench_cpu;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void result(bool ok, const char *name, const char *why)
{
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", ++ntests, name,
	       why ? " # " : "", why ? why : "");
	fflush(stdout);
}

/* One measured quantity: every repetition's value. */
static void report(const char *name, const char *unit, const double *v, int n)
{
	int i;

	printf("# BENCH %s %s", name, unit);
	for (i = 0; i < n; i++)
		printf(" %.6g", v[i]);
	printf("\n");
	fflush(stdout);
}

static bool all_positive(const double *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!(v[i] > 0))
			return false;
	return n > 0;
}

/* ---- one ptsim event with its data and AUX areas ---- */

struct sess {
	struct auxc c;
	int fd;
	uint64_t aux_bytes;		/* consumed from the AUX area */
	uint64_t nrec_aux, nrec_lost;
	uint64_t last_aux_time;		/* time of the last PERF_RECORD_AUX */
	char *copy;			/* where the consumer copies to */
	uint64_t *copied;		/* if set: aux_bytes, block by block */
};

static int sess_open(struct sess *s, uint64_t config1, uint64_t config2,
		     pid_t pid, int cpu, size_t data_pages, size_t aux_size,
		     uint32_t watermark)
{
	struct perf_event_attr attr;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ptsim_type;
	attr.config = PT_CONFIG;
	attr.config1 = config1;
	attr.config2 = config2;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.aux_watermark = watermark;
	s->fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, 0);
	if (s->fd < 0)
		return -1;
	if (auxc_map_data(&s->c, s->fd, data_pages))
		return -1;
	if (aux_size && auxc_map_aux(&s->c, s->fd, aux_size / page_size, false))
		return -1;
	return 0;
}

static void sess_close(struct sess *s)
{
	auxc_unmap(&s->c);
	if (s->fd >= 0)
		close(s->fd);
	free(s->copy);
	s->fd = -1;
	s->copy = NULL;
}

/* A record of the data area: count it, keep the last AUX time. */
static void sess_record(const struct auxc_record *r, void *arg)
{
	struct sess *s = arg;
	uint64_t t;

	if (r->hdr->type == PERF_RECORD_AUX) {
		/* sample_id: the time */
		if (r->sample_id_size >= sizeof(t)) {
			memcpy(&t, r->sample_id, sizeof(t));
			s->last_aux_time = t;
		}
		s->nrec_aux++;
	} else if (r->hdr->type == PERF_RECORD_LOST) {
		s->nrec_lost++;
	}
}

/*
 * A piece of AUX data: copy it out in blocks of COPY_BLOCK bytes as a
 * recorder writing to a file does (and as memcpy_mbs() measures).
 */
static void sess_copy(__u64 aux_off, const void *p, size_t len, void *arg)
{
	struct sess *s = arg;
	size_t off = aux_off % s->c.aux_size, done, n;

	for (done = 0; done < len; done += n) {
		n = len - done;
		if (n > COPY_BLOCK)
			n = COPY_BLOCK;
		memcpy(s->copy + off + done, (const char *)p + done, n);
		s->aux_bytes += n;
		if (s->copied)
			__atomic_store_n(s->copied, s->aux_bytes,
					 __ATOMIC_RELAXED);
	}
}

/* Consume the AUX area: copy out if @copy, then move aux_tail. */
static void sess_aux(struct sess *s, bool copy)
{
	long long n;

	n = auxc_consume(&s->c, copy ? sess_copy : NULL, s);
	if (n > 0 && !copy)
		s->aux_bytes += n;
}

/* Take the data area's records: count them, keep the last AUX time. */
static void sess_records(struct sess *s)
{
	auxc_read_records(&s->c, sess_record, s);
}

static void sess_consume(struct sess *s, bool copy, int timeout_ms)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	poll(&p, 1, timeout_ms);
	sess_records(s);
	sess_aux(s, copy);
}

/* ---- ptsim's benchmark figures in debugfs ---- */

struct kstats {
	unsigned long long txns, bytes, ns, stalls, end_ns, begin_ns;
};

static int kstats_reset(void)
{
	int fd = open(DEBUGFS_BENCH, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, "0\n", 2) == 2 ? 0 : -1;
	close(fd);
	return ret;
}

static int kstats_read(struct kstats *k)
{
	FILE *f = fopen(DEBUGFS_BENCH, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "txns %llu bytes %llu ns %llu stalls %llu end_ns %llu begin_ns %llu",
		   &k->txns, &k->bytes, &k->ns, &k->stalls, &k->end_ns,
		   &k->begin_ns);
	fclose(f);
	return n == 6 ? 0 : -1;
}

/*
 * Run ptsim's benchmark mode: @rate transactions of 2^@shift bytes every
 * @period_us, for @ms of guest time, the consumer keeping up (copying the
 * data out if @copy).  Returns the kernel's figures and, in *tput, the
 * bytes the consumer took per us of guest time (= MB/s).
 */
static int run_bench_mode(uint64_t config1, uint64_t config2, int ms,
			  size_t aux_size, bool copy, struct kstats *k,
			  double *tput)
{
	struct sess s;
	double t0, t1;
	int ret = -1;

	if (sess_open(&s, config1, config2, -1, bench_cpu, 512, aux_size, 0))
		goto out;
	if (copy) {
		s.copy = malloc(aux_size);
		if (!s.copy)
			goto out;
		memset(s.copy, 1, aux_size);	/* fault it in beforehand */
	}
	if (kstats_reset())
		goto out;
	t0 = now_ns();
	ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0);
	do {
		sess_consume(&s, copy, 1);
	} while (now_ns() - t0 < ms * 1e6);
	ioctl(s.fd, PERF_EVENT_IOC_DISABLE, 0);
	sess_consume(&s, copy, 0);
	t1 = now_ns();
	if (kstats_read(k))
		goto out;
	*tput = s.aux_bytes / ((t1 - t0) / 1e3);
	/*
	 * A lost PERF_RECORD_AUX makes a transaction cheaper than it is:
	 * that invalidates a cost figure, not the bytes a throughput run
	 * moved.
	 */
	ret = s.nrec_lost && !copy ? -1 : 0;
	if (s.nrec_lost)
		printf("# %s: %llu PERF_RECORD_LOST\n", copy ? "tput" : "txn",
		       (unsigned long long)s.nrec_lost);
out:
	sess_close(&s);
	return ret;
}

static const int sizes[] = { 6, 8, 10, 12, 14, 16, 18, 20 };
#define NSIZES	((int)ARRAY_SIZE(sizes))

static void size_name(char *buf, size_t len, const char *prefix, int shift)
{
	if (shift >= 20)
		snprintf(buf, len, "%s_%dM", prefix, 1 << (shift - 20));
	else if (shift >= 10)
		snprintf(buf, len, "%s_%dK", prefix, 1 << (shift - 10));
	else
		snprintf(buf, len, "%s_%d", prefix, 1 << shift);
}

/*
 * ptsim's benchmark mode for txn_<2^shift>: at most 1 MiB per 2 ms tick
 * and at most 1024 transactions, into TXN_AUX_SIZE of AUX area.
 */
#define TXN_AUX_SIZE	(16 << 20)

static uint64_t txn_config(int shift)
{
	int rate = (1 << 20) >> shift;

	return RATE(rate > 1024 ? 1024 : rate) | PERIOD(2000);
}

/* Figure 1: ns per transaction, measured in the kernel. */
static void fig_txn(void)
{
	int i, r, nsz = smoke ? 2 : NSIZES;
	char name[32];

	for (i = 0; i < nsz; i++) {
		int shift = smoke ? (i ? 16 : 6) : sizes[i];
		double v[MAX_REPS];
		bool ok = true;

		for (r = 0; r < reps; r++) {
			struct kstats k;
			double tput;

			if (run_bench_mode(txn_config(shift), BENCH(shift),
					   smoke ? 20 : 100,
					   TXN_AUX_SIZE, false,
					   &k, &tput) ||
			    !k.txns) {
				ok = false;
				break;
			}
			v[r] = (double)k.ns / k.txns;
		}
		size_name(name, sizeof(name), "txn", shift);
		if (ok)
			report(name, "ns", v, reps);
		result(ok && all_positive(v, reps), name, NULL);
	}
}

/*
 * Figure 1, split: where a 64-byte transaction's time goes, the end
 * (perf_aux_output_end()) and the beginning (perf_aux_output_begin()) of
 * a transaction timed on their own, one clock read each included.
 */
static void fig_txn_split(void)
{
	double ve[MAX_REPS], vb[MAX_REPS];
	bool ok = true;
	int r;

	for (r = 0; r < reps; r++) {
		struct kstats k;
		double tput;

		if (run_bench_mode(RATE(1024) | PERIOD(2000),
				   BENCH(6) | BENCH_SPLIT, smoke ? 20 : 100, 16 << 20,
				   false, &k, &tput) || !k.txns) {
			ok = false;
			break;
		}
		ve[r] = (double)k.end_ns / k.txns;
		vb[r] = (double)k.begin_ns / k.txns;
	}
	if (ok) {
		report("txn_end_64", "ns", ve, reps);
		report("txn_begin_64", "ns", vb, reps);
	}
	result(ok && all_positive(ve, reps) && all_positive(vb, reps),
	       "txn_split_64", NULL);
}

/* The guest's memcpy bandwidth, 64 KiB blocks through a 16 MiB area. */
static double memcpy_mbs(int ms)
{
	size_t area = 16 << 20, blk = COPY_BLOCK, off = 0;
	char *src = malloc(area), *dst = malloc(area);
	double t0, t, bytes = 0;

	if (!src || !dst) {
		free(src);
		free(dst);
		return -1;
	}
	memset(src, 0, area);
	memset(dst, 1, area);
	t0 = now_ns();
	do {
		memcpy(dst + off, src + off, blk);
		/* Keep the compiler from dropping the copy. */
		__asm__ volatile("" : : "r"(dst) : "memory");
		off = (off + blk) % area;
		bytes += blk;
		t = now_ns();
	} while (t - t0 < ms * 1e6);
	free(src);
	free(dst);
	return bytes / ((t - t0) / 1e3);
}

/* Figure 2: throughput with the consumer copying out, and memcpy. */
static void fig_tput(void)
{
	static const int tsizes[] = { 10, 12, 14, 16, 18, 20 };
	int i, r, nsz = smoke ? 1 : (int)ARRAY_SIZE(tsizes);
	double v[MAX_REPS];
	char name[32];
	bool ok = true;

	for (r = 0; r < reps; r++) {
		v[r] = memcpy_mbs(smoke ? 10 : 100);
		ok = ok && v[r] > 0;
	}
	if (ok)
		report("memcpy", "MB/s", v, reps);
	result(ok && all_positive(v, reps), "memcpy", NULL);

	for (i = 0; i < nsz; i++) {
		int shift = smoke ? 16 : tsizes[i];
		/* Up to 16 MiB a tick: as fast as the room allows. */
		int rate = (16 << 20) >> shift;

		if (rate > 4096)
			rate = 4096;
		ok = true;
		for (r = 0; r < reps; r++) {
			struct kstats k;

			if (run_bench_mode(RATE(rate) | PERIOD(10), BENCH(shift),
					   smoke ? 20 : 200, 16 << 20, true,
					   &k, &v[r])) {
				ok = false;
				break;
			}
		}
		size_name(name, sizeof(name), "tput", shift);
		if (ok)
			report(name, "MB/s", v, reps);
		result(ok && all_positive(v, reps), name, NULL);
	}
}

/*
 * Figure 2 on every CPU at once: what tput_<S> does, on each of the
 * online CPUs together, each CPU with its own per-CPU event, AUX area and
 * consumer, as perf record -a has them.  Each consumer is a child pinned
 * to its CPU, where that CPU's engine ticks too, as on one CPU.  The
 * figure is the steady state: the bytes the consumers copy out in a
 * window that opens once the first fill of their areas is behind them.
 */
#define MAX_CPUS	64
#define CPUS_AUX_SIZE	(4 << 20)	/* perf's default for root, per CPU */
#define CPUS_WARMUP_MS	200
#define CPUS_WINDOW_MS	500

/* What the consumers share with the parent. */
struct cpu_runs {
	int stop;			/* set by the parent: the run ends */
	struct {
		uint64_t copied;	/* bytes copied out so far */
		uint64_t lost;		/* PERF_RECORD_LOST seen */
	} cpu[MAX_CPUS];
};

/*
 * The consumer of @cpu: opens and maps its event, says on @ready whether
 * it could ('r' or '!'), waits until the parent closes @go's other end,
 * then consumes until the parent sets @sh->stop.  Never returns.
 */
static void cpu_consumer(int cpu, uint64_t config1, uint64_t config2,
			 int ready, int go, struct cpu_runs *sh)
{
	struct sess s;
	cpu_set_t set;
	char c = '!';

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sess_open(&s, config1, config2, -1, cpu, 512, CPUS_AUX_SIZE, 0))
		goto tell;
	s.copy = malloc(CPUS_AUX_SIZE);
	if (!s.copy)
		goto tell;
	memset(s.copy, 1, CPUS_AUX_SIZE);	/* fault it in beforehand */
	s.copied = &sh->cpu[cpu].copied;
	c = 'r';
tell:
	if (write(ready, &c, 1) != 1 || c != 'r')
		_exit(1);
	if (read(go, &c, 1) != 0)
		_exit(1);
	ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
		sess_consume(&s, true, 1);
	ioctl(s.fd, PERF_EVENT_IOC_DISABLE, 0);
	sh->cpu[cpu].lost = s.nrec_lost;
	sess_close(&s);
	_exit(0);
}

/*
 * One repetition on all @ncpus CPUs: the consumers start together, when
 * all are ready; after CPUS_WARMUP_MS, the bytes each copies out in
 * CPUS_WINDOW_MS, per us: *@all for all of them, @each[i] for CPU i's.
 */
static int run_all_cpus(int ncpus, uint64_t config1, uint64_t config2,
			double *all, double *each)
{
	int ready[2], go[2], i, n, status, ret = -1;
	uint64_t start[MAX_CPUS], lost = 0;
	double t0, t1, bytes = 0;
	pid_t pids[MAX_CPUS];
	struct cpu_runs *sh;
	struct kstats k;
	char c;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	if (pipe(ready))
		goto unmap;
	if (pipe(go))
		goto close_ready;
	if (kstats_reset())
		goto close;
	for (n = 0; n < ncpus; n++) {
		pids[n] = fork();
		if (pids[n] < 0)
			break;
		if (!pids[n]) {
			close(ready[0]);
			close(go[1]);
			cpu_consumer(n, config1, config2, ready[1], go[0], sh);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1 || c != 'r')
			break;
	if (n == ncpus && i == n) {
		/* All ready: closing the last write end of @go starts them. */
		close(go[1]);
		usleep(CPUS_WARMUP_MS * 1000);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			start[i] = __atomic_load_n(&sh->cpu[i].copied,
						   __ATOMIC_RELAXED);
		usleep(CPUS_WINDOW_MS * 1000);
		t1 = now_ns();
		for (i = 0; i < n; i++) {
			uint64_t b = __atomic_load_n(&sh->cpu[i].copied,
						     __ATOMIC_RELAXED) - start[i];

			each[i] = b / ((t1 - t0) / 1e3);
			bytes += b;
		}
		*all = bytes / ((t1 - t0) / 1e3);
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
		ret = 0;
	} else {
		for (i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		close(go[1]);
	}
	/* A CPU whose consumer got nothing at all: the run did not work. */
	for (i = 0; i < n; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status) ||
		    !sh->cpu[i].copied)
			ret = -1;
		else
			lost += sh->cpu[i].lost;
	}
	close(ready[0]);
	if (lost)
		printf("# tput on %d CPUs: %llu PERF_RECORD_LOST\n", ncpus,
		       (unsigned long long)lost);
	if (!ret && !kstats_read(&k))
		printf("# tput on %d CPUs: %llu transactions, %llu stalled ticks\n",
		       ncpus, k.txns, k.stalls);
	goto unmap;
close:
	close(go[0]);
	close(go[1]);
close_ready:
	close(ready[0]);
	close(ready[1]);
unmap:
	munmap(sh, sizeof(*sh));
	return ret;
}

static const int cpu_tsizes[] = { 10, 16, 20 };

static void fig_tput_cpus(void)
{
	int i, r, ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nsz = smoke ? 1 : (int)ARRAY_SIZE(cpu_tsizes);
	char name[32], each_name[32], prefix[32];
	double all[MAX_REPS], *each;

	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	each = calloc((size_t)MAX_REPS * ncpus, sizeof(*each));
	for (i = 0; i < nsz; i++) {
		int shift = smoke ? 16 : cpu_tsizes[i];
		/*
		 * As tput_<S>: up to 16 MiB a tick on each CPU.  A tick
		 * every 10 * ncpus us: under -icount each CPU has about
		 * 1/ncpus of the instruction clock, so it runs as many
		 * instructions of its own between two ticks as tput_<S>'s
		 * one CPU does.
		 */
		int rate = (16 << 20) >> shift;
		bool ok = !!each;

		if (rate > 4096)
			rate = 4096;
		snprintf(prefix, sizeof(prefix), "tput_%dcpu", ncpus);
		size_name(name, sizeof(name), prefix, shift);
		snprintf(prefix, sizeof(prefix), "tput_%dcpu_each", ncpus);
		size_name(each_name, sizeof(each_name), prefix, shift);
		if (ncpus < 2) {
			result(true, name, "SKIP one CPU online");
			continue;
		}
		for (r = 0; r < reps && ok; r++)
			ok = !run_all_cpus(ncpus,
					   RATE(rate) | PERIOD(10 * ncpus),
					   BENCH(shift), &all[r],
					   &each[r * ncpus]);
		if (ok) {
			report(name, "MB/s", all, reps);
			report(each_name, "MB/s", each, reps * ncpus);
		}
		/*
		 * A CPU may copy nothing within one window (seen on both
		 * kernels, at 1K): that is a figure, not a failure.
		 */
		result(ok && all_positive(all, reps), name, NULL);
	}
	free(each);
}

/* Figure 3: end of the watermark transaction to poll() returning. */
static void fig_wake(void)
{
	static const int wshift[] = { 12, 16, 20 };
	int i, nw = smoke ? 1 : 3;
	char name[32];

	for (i = 0; i < nw; i++) {
		int shift = wshift[i], n = 0, want = smoke ? 3 : 5 * reps;
		double v[MAX_REPS * 5];
		struct sess s;
		bool ok = false;
		double t0;

		/* One transaction of W bytes every 4 ms, watermark W. */
		if (sess_open(&s, RATE(1) | PERIOD(4000), BENCH(shift), -1,
			      bench_cpu, 64, 16 << 20, 1U << shift))
			goto done;
		ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0);
		t0 = now_ns();
		while (n < want && now_ns() - t0 < 10e9) {
			struct pollfd p = { .fd = s.fd, .events = POLLIN };
			uint64_t before = s.nrec_aux;
			double t;

			if (poll(&p, 1, 100) <= 0)
				continue;
			t = now_ns();
			sess_records(&s);
			sess_aux(&s, false);
			/* A wake-up for exactly one new transaction. */
			if (s.nrec_aux == before + 1 && s.last_aux_time &&
			    t > s.last_aux_time)
				v[n++] = (t - s.last_aux_time) / 1e3;
		}
		ioctl(s.fd, PERF_EVENT_IOC_DISABLE, 0);
		ok = n == want;
done:
		sess_close(&s);
		size_name(name, sizeof(name), "wake", shift);
		if (ok)
			report(name, "us", v, n);
		result(ok && all_positive(v, n), name, NULL);
	}
}

static void print_runs(const char *name)
{
	char line[512];
	FILE *f = fopen(DEBUGFS_SETUP, "r");

	if (!f)
		return;
	if (fgets(line, sizeof(line), f))
		printf("# RUNS %s %s", name, line);
	fclose(f);
}

/* Read the first byte of each page of @area (@size bytes). */
static void touch_pages(const char *area, size_t size)
{
	unsigned long sum = 0;
	size_t off;

	for (off = 0; off < size; off += page_size)
		sum += area[off];
	/* The loads happen: their sum is used. */
	__asm__ __volatile__("" : : "r" (sum));
}

/*
 * Figure 4: mmap, first touch and munmap of AUX areas of 1, 64 and
 * 256 MiB.
 */
static void fig_mmap(void)
{
	static const int mshift[] = { 20, 26, 28 };
	int i, r, nm = smoke ? 1 : 3;
	char name[32];

	for (i = 0; i < nm; i++) {
		double vm[MAX_REPS], vt[MAX_REPS], vu[MAX_REPS];
		size_t size = (size_t)1 << mshift[i];
		bool ok = true;

		for (r = 0; r < reps && ok; r++) {
			struct sess s;
			double t0, t1;
			void *aux;

			ok = false;
			if (sess_open(&s, 0, 0, -1, bench_cpu, 8, 0, 0))
				goto next;
			s.c.pg->aux_offset = s.c.data_size + page_size;
			s.c.pg->aux_size = size;
			t0 = now_ns();
			aux = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, s.fd, s.c.pg->aux_offset);
			t1 = now_ns();
			if (aux == MAP_FAILED)
				goto next;
			vm[r] = (t1 - t0) / 1e3;
			if (r == 0) {
				size_name(name, sizeof(name), "aux", mshift[i]);
				print_runs(name);
			}
			t0 = now_ns();
			touch_pages(aux, size);
			vt[r] = (now_ns() - t0) / 1e3;
			t0 = now_ns();
			munmap(aux, size);
			vu[r] = (now_ns() - t0) / 1e3;
			ok = true;
next:
			sess_close(&s);
		}
		size_name(name, sizeof(name), "mmap", mshift[i]);
		if (ok)
			report(name, "us", vm, reps);
		result(ok && all_positive(vm, reps), name, NULL);
		size_name(name, sizeof(name), "touch", mshift[i]);
		if (ok)
			report(name, "us", vt, reps);
		result(ok && all_positive(vt, reps), name, NULL);
		size_name(name, sizeof(name), "munmap", mshift[i]);
		if (ok)
			report(name, "us", vu, reps);
		result(ok && all_positive(vu, reps), name, NULL);
	}

	/* mmap + munmap cycles of 1 MiB on one event. */
	{
		double v[MAX_REPS];
		struct sess s;
		bool ok = false;

		if (sess_open(&s, 0, 0, -1, bench_cpu, 8, 0, 0))
			goto cdone;
		for (r = 0; r < reps; r++) {
			int c, cycles = smoke ? 2 : 20;
			double t0 = now_ns();

			for (c = 0; c < cycles; c++) {
				void *aux;

				s.c.pg->aux_offset = s.c.data_size + page_size;
				s.c.pg->aux_size = 1 << 20;
				aux = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
					   MAP_SHARED, s.fd, s.c.pg->aux_offset);
				if (aux == MAP_FAILED)
					goto cdone;
				munmap(aux, 1 << 20);
			}
			v[r] = (now_ns() - t0) / 1e3 / cycles;
		}
		ok = true;
cdone:
		sess_close(&s);
		if (ok)
			report("cycle_1M", "us", v, reps);
		result(ok && all_positive(v, reps), "cycle_1M", NULL);
	}
}

/*
 * The fixed workload: a loop of integer work, the same on every kernel.
 * The empty asm keeps x in memory, so every iteration loads and stores it.
 */
static void workload(long iters)
{
	uint64_t x = 1;
	long i;

	for (i = 0; i < iters; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+m"(x));
	}
}

/*
 * Figure 5: the workload's runtime in a child, as the child measures it,
 * untraced (@config 0 means no event) or traced per task by ptsim with
 * @config while this process consumes.
 */
static double run_workload(uint64_t config, long iters)
{
	int go[2], res[2], status;
	double ms = -1;
	struct sess s = { .fd = -1 };
	pid_t pid;
	char c;

	if (pipe(go) || pipe(res))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		double t0;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		t0 = now_ns();
		workload(iters);
		t0 = (now_ns() - t0) / 1e6;
		if (write(res[1], &t0, sizeof(t0)) != sizeof(t0))
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	if (config) {
		if (sess_open(&s, config, 0, pid, -1, 64, 4 << 20, 0))
			goto out;
		ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	if (write(go[1], "g", 1) != 1)
		goto out;
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = res[0], .events = POLLIN },
			{ .fd = s.fd, .events = POLLIN },
		};

		poll(p, config ? 2 : 1, 10);
		if (config) {
			sess_records(&s);
			sess_aux(&s, false);
		}
		if (p[0].revents) {
			if (read(res[0], &ms, sizeof(ms)) != sizeof(ms))
				ms = -1;
			break;
		}
	}
	/*
	 * A short run's trace may all still be in the open transaction when
	 * the result arrives: it is published when the child's event is
	 * scheduled out for the last time, on its exit, and the result is
	 * written before that.  Take the AUX area once more after the child
	 * is reaped; reading it only as the result came found nothing once.
	 */
	waitpid(pid, &status, 0);
	pid = 0;
	if (config) {
		sess_records(&s);
		sess_aux(&s, false);
		if (!s.aux_bytes)
			ms = -1;	/* traced, but nothing came */
	}
out:
	close(go[1]);
	if (pid) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(res[0]);
	sess_close(&s);
	return ms;
}

static void fig_work(void)
{
	static const struct { const char *name; uint64_t config; } runs[] = {
		{ "work_untraced", 0 },
		/* 16, 64 and 256 records of 16 bytes per 100 us tick */
		{ "work_2.5MBps", RATE(16) },
		{ "work_10MBps", RATE(64) },
		{ "work_40MBps", RATE(256) },
	};
	/*
	 * The smoke run's workload must still span many ptsim ticks (100 us
	 * each) whatever the host's load: at 100000 iterations (0.3 ms of
	 * guest time) a loaded TCG host delivered no tick at all to the
	 * traced child once, and the figure failed for want of data.
	 */
	long iters = smoke ? 2000000 : 10000000;
	int i, r, nr = smoke ? 2 : 4;

	for (i = 0; i < nr; i++) {
		double v[MAX_REPS];
		bool ok = true;

		for (r = 0; r < reps && ok; r++) {
			v[r] = run_workload(runs[i].config, iters);
			ok = v[r] > 0;
		}
		if (ok)
			report(runs[i].name, "ms", v, reps);
		result(ok, runs[i].name, NULL);
	}
}

/*
 * Wait until the engine has run @ticks more ticks for the event of @fd,
 * each producing at least @per_tick bytes: its count (the bytes queued
 * into the FIFO) is brought up to date at the end of every tick.  False
 * if that does not happen within a second of guest time.
 */
static bool wait_ticks(int fd, int ticks, uint64_t per_tick)
{
	uint64_t c0 = 0, c = 0;
	double t0 = now_ns();

	if (read(fd, &c0, sizeof(c0)) != sizeof(c0))
		return false;
	do {
		if (read(fd, &c, sizeof(c)) != sizeof(c))
			return false;
		if (c >= c0 + ticks * per_tick)
			return true;
	} while (now_ns() - t0 < 1e9);
	return false;
}

/*
 * Figure 6: PERF_EVENT_IOC_FLUSH.  "pending": ptsim holds data back in a
 * large FIFO (2 KiB produced, 1 KiB drained per 1 ms tick) and each flush
 * comes right after the fifth tick since the last, so 5 KiB are waiting
 * in the FIFO every time.  (A flush 5 ms after the last, by the clock,
 * found four or five ticks' worth, as the ticks fell, and the figure
 * followed the timer's phase: 61 or 64 us.)  "none": the FIFO is drained
 * at every tick and the flushes come back to back, so after the first
 * there is nothing to write.
 */
static void fig_flush(void)
{
	static const struct {
		const char *name;
		uint64_t config;
		int ticks;
		uint64_t per_tick;
	} runs[] = {
		{ "flush_pending", RATE(128) | PERIOD(1000) | FIFO(22) | DRAIN(1), 5, 128 * 16 },
		{ "flush_none", RATE(16) | PERIOD(4000), 0, 0 },
	};
	int i, r;

	for (i = 0; i < 2; i++) {
		int n = smoke ? 2 : 10;
		double v[MAX_REPS];
		struct sess s;
		bool ok = false;

		if (sess_open(&s, runs[i].config, 0, -1, bench_cpu, 64, 4 << 20, 0))
			goto done;
		ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0);
		usleep(10000);
		if (ioctl(s.fd, PERF_EVENT_IOC_FLUSH, 0))
			goto done;
		sess_records(&s);
		sess_aux(&s, false);
		for (r = 0; r < reps; r++) {
			double sum = 0;
			int k;

			for (k = 0; k < n; k++) {
				double t0;

				if (runs[i].ticks &&
				    !wait_ticks(s.fd, runs[i].ticks,
						runs[i].per_tick))
					goto done;
				t0 = now_ns();
				if (ioctl(s.fd, PERF_EVENT_IOC_FLUSH, 0))
					goto done;
				sum += now_ns() - t0;
				sess_records(&s);
				sess_aux(&s, false);
			}
			v[r] = sum / n / 1e3;
		}
		ioctl(s.fd, PERF_EVENT_IOC_DISABLE, 0);
		ok = true;
done:
		sess_close(&s);
		if (ok)
			report(runs[i].name, "us", v, reps);
		result(ok && all_positive(v, reps), runs[i].name, NULL);
	}
}

/*
 * --load: the load of txn_64 or of mmap_64M/munmap_64M, untimed, for
 * @secs seconds of guest time.  Returns the process exit status.
 */
static int run_load(const char *what, int secs)
{
	double t0 = now_ns(), limit = secs * 1e9;
	unsigned long n = 0;
	struct sess s;
	int ret = 1;

	if (!strcmp(what, "txn")) {
		if (sess_open(&s, txn_config(6), BENCH(6), -1, bench_cpu, 512,
			      TXN_AUX_SIZE, 0))
			goto out;
		ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0);
		while (now_ns() - t0 < limit) {
			sess_consume(&s, false, 1);
			n++;
		}
		ioctl(s.fd, PERF_EVENT_IOC_DISABLE, 0);
	} else if (!strcmp(what, "mmap")) {
		size_t size = 64 << 20;

		if (sess_open(&s, 0, 0, -1, bench_cpu, 8, 0, 0))
			goto out;
		while (now_ns() - t0 < limit) {
			void *aux;

			s.c.pg->aux_offset = s.c.data_size + page_size;
			s.c.pg->aux_size = size;
			aux = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, s.fd, s.c.pg->aux_offset);
			if (aux == MAP_FAILED)
				goto out;
			munmap(aux, size);
			n++;
		}
	} else {
		fprintf(stderr, "aux-bench: --load txn or mmap\n");
		return 2;
	}
	ret = 0;
out:
	printf("# aux-bench: load %s: %lu rounds in %d s%s\n", what, n, secs,
	       ret ? ", failed" : "");
	sess_close(&s);
	return ret;
}

/*
 * The groups of figures --figures selects, with the number of results
 * each prints in a smoke run and in a full one.
 */
static const struct group {
	const char *name;
	void (*run)(void);
	int smoke_results, results;
	bool by_default;
} groups[] = {
	{ "txn", fig_txn, 2, NSIZES, true },
	{ "txn_split", fig_txn_split, 1, 1, true },
	{ "tput", fig_tput, 2, 7, true },
	{ "wake", fig_wake, 1, 3, true },
	{ "mmap", fig_mmap, 4, 10, true },
	{ "work", fig_work, 2, 4, true },
	{ "flush", fig_flush, 2, 2, true },
	{ "cpus", fig_tput_cpus, 1, ARRAY_SIZE(cpu_tsizes), false },
};

/* Select the groups a comma-separated @list names; false if one is unknown. */
static bool select_groups(const char *list, bool *sel)
{
	char *copy = strdup(list), *save = NULL, *tok;
	bool ok = !!copy;
	size_t g;

	memset(sel, 0, ARRAY_SIZE(groups) * sizeof(*sel));
	for (tok = ok ? strtok_r(copy, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (g = 0; g < ARRAY_SIZE(groups); g++)
			if (!strcmp(tok, groups[g].name))
				break;
		if (g == ARRAY_SIZE(groups)) {
			fprintf(stderr, "aux-bench: no group of figures %s\n",
				tok);
			ok = false;
			continue;
		}
		sel[g] = true;
	}
	free(copy);
	return ok;
}

int main(int argc, char **argv)
{
	bool sel[ARRAY_SIZE(groups)];
	const char *load = NULL;
	int i, load_secs = 0, plan = 0;
	size_t g;

	for (g = 0; g < ARRAY_SIZE(groups); g++)
		sel[g] = groups[g].by_default;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			smoke = true;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--figures") && i + 1 < argc) {
			if (!select_groups(argv[++i], sel))
				return 2;
		} else if (!strcmp(argv[i], "--load") && i + 2 < argc) {
			load = argv[++i];
			load_secs = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: aux-bench [--smoke] [--reps N] [--figures LIST]\n"
					"       aux-bench --load txn|mmap SECONDS\n"
					"LIST: txn,txn_split,tput,wake,mmap,work,flush (default),cpus\n");
			return 2;
		}
	}
	if (smoke)
		reps = 1;
	if (load && load_secs < 1) {
		fprintf(stderr, "aux-bench: --load needs a number of seconds\n");
		return 2;
	}
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "aux-bench: --reps must be 1..%d\n", MAX_REPS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	/* The engine on the last CPU; on one CPU it shares it with us. */
	bench_cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	ptsim_type = auxc_pmu_type("ptsim");
	if (load)
		return ptsim_type < 0 ? 1 : run_load(load, load_secs);

	for (g = 0; g < ARRAY_SIZE(groups); g++)
		if (sel[g])
			plan += smoke ? groups[g].smoke_results :
					groups[g].results;
	printf("TAP version 13\n");
	printf("1..%d\n", plan);
	printf("# aux-bench: %s, %d repetition(s), engine on CPU %d of %ld\n",
	       smoke ? "smoke" : "full", reps, bench_cpu,
	       sysconf(_SC_NPROCESSORS_ONLN));
	if (ptsim_type < 0 || access(DEBUGFS_BENCH, R_OK)) {
		printf("Bail out! no ptsim PMU or no %s\n", DEBUGFS_BENCH);
		return 1;
	}
	for (g = 0; g < ARRAY_SIZE(groups); g++)
		if (sel[g])
			groups[g].run();
	return 0;
}
