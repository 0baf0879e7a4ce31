// SPDX-License-Identifier: GPL-2.0
/*
 * aux-record - record the AUX area of a perf event into a directory.
 *
 *	aux-record [-e PMU] [-c CONFIG] [-m DATA_PAGES] [-a AUX_PAGES]
 *		   [-w WATERMARK_BYTES] [-S] [-P MS] [-C CPU] [-i] [-d MS]
 *		   [-o DIR] [--flush-at-exit] [-- CMD ARGS...]
 *
 * One event of PMU (default "ptsim") is opened, either for a command that
 * is started here (per task, enabled at exec) or for one CPU (-C) during
 * -d milliseconds.  Its data area and its AUX area are mapped; the AUX
 * data is copied out to DIR/aux.bin and the record stream is written to
 * DIR/records.txt, in the format described in
 * Documentation/admin-guide/perf/ptsim.rst.
 *
 * Normal mode: the AUX area is mapped writable and consumed through
 * aux_tail.  A PERF_RECORD_AUX with the TRUNCATED flag means the buffer
 * was full and the perf core disabled the event; once the data is copied
 * out, the event is enabled again.
 *
 * Snapshot mode (-S): the AUX area is mapped read-only, so the PMU
 * overwrites it freely and publishes aux_head only when the event stops.
 * Every -P milliseconds (and at the end) the event is stopped, the newest
 * data below aux_head is copied out and the event is started again.
 *
 * --flush-at-exit: before the event is stopped at the end, the PMU is told
 * to write out what it still holds (PERF_EVENT_IOC_FLUSH) and that data is
 * taken.  A FLUSH line in records.txt gives the PMU's counter read just
 * before the ioctl and aux_head before and after it, so that a checker can
 * tell whether anything the PMU had produced was missing from the buffer
 * (for ptsim, whose counter is the bytes queued into its FIFO,
 * tools/aux/aux-decode does).  Stopping the event writes everything out
 * as well, for most PMUs; the flush shows that it was there before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#define POLL_MS		100
#define DEF_DATA_PAGES	16
#define DEF_AUX_PAGES	256
#define DEF_DURATION_MS	1000
#define DEF_PERIOD_MS	200
#define DEF_DIR		"aux-record.d"

/* __printf() from tools/include: build with -I tools/include */
#include <linux/compiler.h>

#include "lib/aux_consumer.h"
#include "lib/aux_sysfs.h"

struct options {
	const char *pmu;
	unsigned long long config, config1, config2;
	unsigned long data_pages;
	unsigned long aux_pages;
	unsigned int watermark;
	bool snapshot;
	bool inherit;
	int cpu;			/* -1: per task */
	unsigned int duration_ms;
	unsigned int period_ms;
	const char *dir;
	bool flush_at_exit;
	char **cmd;
};

struct recorder {
	struct auxc c;
	bool snapshot;
	int bin_fd;
	FILE *txt;
	__u64 file_off;
	bool rearm;			/* TRUNCATED seen, event to enable */
	/* what the summary reports */
	unsigned long long bytes;
	unsigned long long aux_records;
	unsigned long long truncated;
	unsigned long long lost;
	unsigned long long itrace_start;
	unsigned long long other;
	int flush_err;			/* -1: not asked for, else errno */
};

static pid_t child_pid = -1;
static int stop_requested;		/* set by SIGINT, SIGTERM */

static void kill_child(void)
{
	if (child_pid > 0) {
		kill(child_pid, SIGKILL);
		waitpid(child_pid, NULL, 0);
		child_pid = -1;
	}
}

/* Report a failed system call (errno) and give up. */
static noreturn void __printf(1, 2) fail(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fputs("aux-record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	kill_child();
	exit(1);
}

/* Report a problem that has no errno and give up. */
static noreturn void __printf(1, 2) die(const char *fmt, ...)
{
	va_list ap;

	fputs("aux-record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	kill_child();
	exit(1);
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: aux-record [-e PMU] [-c CONFIG] [-1 CONFIG1] [-2 CONFIG2]\n"
		"                  [-m DATA_PAGES] [-a AUX_PAGES] [-w WATERMARK_BYTES] [-S]\n"
		"                  [-P MS] [-C CPU] [-i] [-d MS] [-o DIR] [--flush-at-exit]\n"
		"                  [-- CMD ARGS...]\n"
		"  -e PMU     PMU name (default ptsim)\n"
		"  -c CONFIG  attr.config, decimal or 0x hex (default 0)\n"
		"  -1 CONFIG1 attr.config1 (default 0)\n"
		"  -2 CONFIG2 attr.config2 (default 0)\n"
		"  -m N       data area pages, a power of 2 (default %d)\n"
		"  -a N       AUX area pages, a power of 2 (default %d)\n"
		"  -w BYTES   attr.aux_watermark (default 0: the kernel's)\n"
		"  -S         snapshot mode: AUX area mapped read-only\n"
		"  -P MS      snapshot period (default %d, 0: only at the end)\n"
		"  -C CPU     per-CPU event instead of per task\n"
		"  -i         set attr.inherit\n"
		"  -d MS      with -C and no CMD: record for MS ms (default %d)\n"
		"  -o DIR     output directory (default %s)\n"
		"  --flush-at-exit  PERF_EVENT_IOC_FLUSH before the final drain\n"
		"Either -C CPU or a command (or both) must be given.\n",
		DEF_DATA_PAGES, DEF_AUX_PAGES, DEF_PERIOD_MS, DEF_DURATION_MS,
		DEF_DIR);
}

static unsigned long long parse_num(const char *opt, const char *s,
				    unsigned long long max)
{
	unsigned long long v;
	char *end;

	if (*s == '-' || *s == '\0')
		die("%s: invalid number '%s'", opt, s);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end != '\0')
		die("%s: invalid number '%s'", opt, s);
	if (v > max)
		die("%s: %s is out of range (at most %llu)", opt, s, max);
	return v;
}

static bool is_pow2(unsigned long v)
{
	return v && !(v & (v - 1));
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "flush-at-exit", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->pmu = "ptsim";
	o->data_pages = DEF_DATA_PAGES;
	o->aux_pages = DEF_AUX_PAGES;
	o->cpu = -1;
	o->duration_ms = DEF_DURATION_MS;
	o->period_ms = DEF_PERIOD_MS;
	o->dir = DEF_DIR;

	/* '+': stop at the first non-option, the command */
	while ((c = getopt_long(argc, argv, "+e:c:1:2:m:a:w:SP:C:id:o:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'F':
			o->flush_at_exit = true;
			break;
		case 'e':
			if (!*optarg || strchr(optarg, '/'))
				die("-e: invalid PMU name '%s'", optarg);
			o->pmu = optarg;
			break;
		case 'c':
			o->config = parse_num("-c", optarg, ~0ULL);
			break;
		case '1':
			o->config1 = parse_num("-1", optarg, ~0ULL);
			break;
		case '2':
			o->config2 = parse_num("-2", optarg, ~0ULL);
			break;
		case 'm':
			o->data_pages = parse_num("-m", optarg, 1UL << 20);
			if (!is_pow2(o->data_pages))
				die("-m: %lu data pages: must be a power of 2",
				    o->data_pages);
			break;
		case 'a':
			o->aux_pages = parse_num("-a", optarg, 1UL << 20);
			if (!is_pow2(o->aux_pages))
				die("-a: %lu AUX pages: must be a power of 2",
				    o->aux_pages);
			break;
		case 'w':
			o->watermark = parse_num("-w", optarg, UINT32_MAX);
			break;
		case 'S':
			o->snapshot = true;
			break;
		case 'P':
			o->period_ms = parse_num("-P", optarg, 3600000);
			break;
		case 'C':
			o->cpu = parse_num("-C", optarg, 65535);
			break;
		case 'i':
			o->inherit = true;
			break;
		case 'd':
			o->duration_ms = parse_num("-d", optarg, 86400000);
			break;
		case 'o':
			if (!*optarg)
				die("-o: empty directory name");
			o->dir = optarg;
			break;
		case 'h':
			print_help(stdout);
			exit(0);
		default:
			print_help(stderr);
			exit(1);
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (!o->cmd && o->cpu < 0) {
		print_help(stderr);
		die("nothing to record: give -C CPU, or a command after --");
	}
}

static int read_pmu_type(const char *pmu)
{
	int type = auxc_pmu_type(pmu);

	if (type == -EINVAL)
		die("PMU '%s': cannot parse " AUXC_PMU_DIR "/%s/type", pmu, pmu);
	if (type < 0) {
		errno = -type;
		fail("PMU '%s' not found (" AUXC_PMU_DIR "/%s/type)", pmu, pmu);
	}
	return type;
}

static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void write_all(int fd, const void *buf, size_t len, const char *what)
{
	const unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("write %s", what);
		p += n;
		len -= n;
	}
}

/* Append a piece of AUX data to aux.bin, with its COPY line. */
static void copy_out(__u64 aux_off, const void *p, size_t len, void *arg)
{
	struct recorder *r = arg;

	write_all(r->bin_fd, p, len, "aux.bin");
	auxc_fprint_copy(r->txt, r->file_off, aux_off, len);
	r->file_off += len;
	r->bytes += len;
}

static void handle_record(const struct auxc_record *rec, void *arg)
{
	struct recorder *r = arg;

	auxc_fprint_record(r->txt, rec);
	switch (rec->hdr->type) {
	case PERF_RECORD_AUX:
		r->aux_records++;
		if (rec->flags & PERF_AUX_FLAG_TRUNCATED)
			r->truncated++;
		if (!r->snapshot && (rec->flags & PERF_AUX_FLAG_TRUNCATED))
			r->rearm = true;
		break;
	case PERF_RECORD_ITRACE_START:
		r->itrace_start++;
		break;
	case PERF_RECORD_LOST:
		r->lost += rec->lost;
		break;
	default:
		r->other++;
		break;
	}
}

/* Consume every record the kernel has published in the data ring. */
static void drain_records(struct recorder *r)
{
	if (auxc_read_records(&r->c, handle_record, r) < 0)
		die("data ring: a malformed record");
}

/* Normal mode: copy out [aux_tail, aux_head) and free the space. */
static void drain_aux(struct recorder *r)
{
	if (auxc_consume(&r->c, copy_out, r) < 0)
		die("AUX area: head %llu is more than a buffer ahead of tail %llu",
		    (unsigned long long)r->c.pg->aux_head,
		    (unsigned long long)r->c.pg->aux_tail);
}

static void event_ioctl(struct recorder *r, unsigned long req, const char *name)
{
	if (ioctl(r->c.fd, req, 0) < 0)
		fail("ioctl(%s)", name);
}

/*
 * Snapshot mode: with the event stopped, aux_head says where the newest
 * data ends and the records since the last snapshot how much is new;
 * auxc_snapshot() copies that out.
 */
static void take_snapshot(struct recorder *r, bool restart)
{
	event_ioctl(r, PERF_EVENT_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE");
	drain_records(r);
	auxc_snapshot(&r->c, copy_out, r);
	if (restart)
		event_ioctl(r, PERF_EVENT_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE");
}

/*
 * --flush-at-exit: take everything published, read the PMU's counter,
 * ask the PMU to write out what it still holds, and take that too.  The
 * FLUSH line records the counter and aux_head before and after the
 * ioctl; a flush that fails (an older kernel: ENOTTY) is recorded with
 * its errno and the recording goes on.
 */
static void flush_at_exit(struct recorder *r)
{
	__u64 count = 0, before, after;

	drain_records(r);
	if (!r->snapshot)
		drain_aux(r);
	before = __atomic_load_n(&r->c.pg->aux_head, __ATOMIC_ACQUIRE);
	if (read(r->c.fd, &count, sizeof(count)) != sizeof(count))
		fail("read the event's counter");
	r->flush_err = 0;
	if (ioctl(r->c.fd, PERF_EVENT_IOC_FLUSH, 0) < 0) {
		r->flush_err = errno;
		fprintf(stderr, "aux-record: PERF_EVENT_IOC_FLUSH: %s\n",
			strerror(errno));
	}
	/* aux_head first: the records of the data below it are out already */
	after = __atomic_load_n(&r->c.pg->aux_head, __ATOMIC_ACQUIRE);
	drain_records(r);
	if (!r->snapshot)
		drain_aux(r);
	fprintf(r->txt, "FLUSH errno=%d count=%llu head_before=%llu head=%llu\n",
		r->flush_err, (unsigned long long)count,
		(unsigned long long)before, (unsigned long long)after);
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_requested, 1, __ATOMIC_RELAXED);
}

/*
 * Fork the command; it waits for a byte on @go before it execs.  An exec
 * failure comes back through the close-on-exec pipe @err_r (EOF: success).
 */
static pid_t start_child(char **cmd, int *go_w, int *err_r)
{
	int go[2], ep[2];
	pid_t pid;
	char c;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		fail("pipe2");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		int err;

		close(go[1]);
		close(ep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);	/* the recorder gave up */
		execvp(cmd[0], cmd);
		err = errno;
		if (write(ep[1], &err, sizeof(err)) < 0)
			_exit(1);
		_exit(1);
	}
	close(go[0]);
	close(ep[1]);
	*go_w = go[1];
	*err_r = ep[0];
	return pid;
}

/* Let the child exec; returns 0, or the errno of its failed exec. */
static int release_child(int go_w, int err_r)
{
	ssize_t n;
	int err = 0;

	if (write(go_w, "g", 1) != 1)
		fail("write to the command's start pipe");
	close(go_w);
	do {
		n = read(err_r, &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(err_r);
	return n == sizeof(err) ? err : 0;
}

static int open_event(const struct options *o, int type, pid_t pid)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = o->config;
	attr.config1 = o->config1;
	attr.config2 = o->config2;
	attr.disabled = 1;
	attr.inherit = o->inherit;
	attr.aux_watermark = o->watermark;
	if (o->cpu < 0) {
		/* per task: trace the command from its exec, user only */
		attr.enable_on_exec = 1;
		attr.exclude_kernel = 1;
	}
	fd = syscall(SYS_perf_event_open, &attr, o->cpu < 0 ? pid : -1,
		     o->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (o->cpu < 0)
			fail("perf_event_open(%s type=%d config=0x%llx pid=%d)",
			     o->pmu, type, o->config, (int)pid);
		fail("perf_event_open(%s type=%d config=0x%llx cpu=%d)",
		     o->pmu, type, o->config, o->cpu);
	}
	return fd;
}

static void map_buffers(struct recorder *r, const struct options *o)
{
	int err;

	err = auxc_map_data(&r->c, r->c.fd, o->data_pages);
	if (err) {
		errno = -err;
		if (errno == EINVAL && o->inherit && o->cpu < 0)
			die("mmap data area: %s (no mmap for inherited per-task events; use -C)",
			    strerror(EINVAL));
		fail("mmap data area (%lu+1 pages)", o->data_pages);
	}
	err = auxc_map_aux(&r->c, r->c.fd, o->aux_pages, o->snapshot);
	if (err) {
		errno = -err;
		fail("mmap AUX area (%lu pages at offset %llu, %s)",
		     o->aux_pages, (unsigned long long)r->c.pg->aux_offset,
		     o->snapshot ? "read-only" : "read-write");
	}
}

static void open_output(struct recorder *r, const struct options *o,
			int type)
{
	char path[4096];

	if (mkdir(o->dir, 0755) < 0 && errno != EEXIST)
		fail("mkdir %s", o->dir);
	snprintf(path, sizeof(path), "%s/aux.bin", o->dir);
	r->bin_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r->bin_fd < 0)
		fail("open %s", path);
	snprintf(path, sizeof(path), "%s/records.txt", o->dir);
	r->txt = fopen(path, "we");
	if (!r->txt)
		fail("open %s", path);
	auxc_fprint_header(r->txt, o->pmu, type, o->config, o->snapshot,
			   o->aux_pages * sysconf(_SC_PAGESIZE));
}

/* Returns true once the command has exited (and reports how). */
static bool child_done(bool block)
{
	int status;
	pid_t p;

	if (child_pid <= 0)
		return true;
	do {
		p = waitpid(child_pid, &status, block ? 0 : WNOHANG);
	} while (p < 0 && errno == EINTR);
	if (p < 0)
		fail("waitpid");
	if (p == 0)
		return false;
	child_pid = -1;
	if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "aux-record: command exited with status %d\n",
			WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "aux-record: command killed by signal %d\n",
			WTERMSIG(status));
	return true;
}

/* Milliseconds from @now until @when, at most POLL_MS. */
static int wait_ms(unsigned long long now, unsigned long long when)
{
	if (when <= now)
		return 0;
	return when - now < POLL_MS ? when - now : POLL_MS;
}

/* Stopped by a signal while the command still runs: SIGTERM, then KILL. */
static void stop_child(void)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int i;

	kill(child_pid, SIGTERM);
	for (i = 0; i < 100; i++) {
		if (child_done(false))
			return;
		nanosleep(&tick, NULL);
	}
	kill(child_pid, SIGKILL);
	child_done(true);
}

static void record(struct recorder *r, const struct options *o)
{
	unsigned long long t = now_ms(), next_snap, end;
	struct pollfd pfd = { .fd = r->c.fd, .events = POLLIN };
	int timeout;
	bool hup;

	next_snap = t + o->period_ms;
	end = t + o->duration_ms;
	for (;;) {
		/* wake up for data, the next snapshot or the end */
		timeout = POLL_MS;
		if (r->snapshot && o->period_ms)
			timeout = wait_ms(t, next_snap);
		if (!o->cmd && wait_ms(t, end) < timeout)
			timeout = wait_ms(t, end);
		pfd.revents = 0;
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
			fail("poll");
		hup = pfd.revents & (POLLHUP | POLLERR);

		drain_records(r);
		if (!r->snapshot) {
			drain_aux(r);
			/*
			 * The AUX area has room again: restart the trace.
			 * The PMU stopped at TRUNCATED but 6.12 only turns
			 * the event off at its next sched-out, and ENABLE
			 * of an event still on is a no-op, so turn it off
			 * here first.
			 */
			if (r->rearm && !hup) {
				event_ioctl(r, PERF_EVENT_IOC_DISABLE,
					    "PERF_EVENT_IOC_DISABLE");
				drain_records(r);
				drain_aux(r);
				event_ioctl(r, PERF_EVENT_IOC_ENABLE,
					    "PERF_EVENT_IOC_ENABLE");
				r->rearm = false;
			}
		}

		t = now_ms();
		if (__atomic_load_n(&stop_requested, __ATOMIC_RELAXED))
			break;
		if (o->cmd) {
			/* a per-task event hangs up when its task exits */
			if (child_done(hup && o->cpu < 0))
				break;
		} else if (t >= end || hup) {
			break;
		}
		if (r->snapshot && o->period_ms && t >= next_snap) {
			take_snapshot(r, true);
			next_snap = t + o->period_ms;
		}
	}

	if (o->flush_at_exit)
		flush_at_exit(r);
	/* stop the trace; what it flushes is the last of the data */
	if (r->snapshot) {
		take_snapshot(r, false);
	} else {
		event_ioctl(r, PERF_EVENT_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE");
		drain_records(r);
		drain_aux(r);
	}
	drain_records(r);
}

int main(int argc, char **argv)
{
	static struct recorder r;
	struct sigaction sa;
	struct options o;
	int type, go_w = -1, err_r = -1, err;

	parse_options(argc, argv, &o);
	type = read_pmu_type(o.pmu);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r.snapshot = o.snapshot;
	r.flush_err = -1;
	open_output(&r, &o, type);
	if (o.cmd)
		child_pid = start_child(o.cmd, &go_w, &err_r);
	r.c.fd = open_event(&o, type, child_pid);
	map_buffers(&r, &o);
	/* a per-CPU event starts now; a per-task one at the exec */
	if (o.cpu >= 0)
		event_ioctl(&r, PERF_EVENT_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE");
	if (o.cmd) {
		err = release_child(go_w, err_r);
		if (err) {
			errno = err;
			fail("cannot run '%s'", o.cmd[0]);
		}
	}

	record(&r, &o);

	if (child_pid > 0)
		stop_child();
	if (fflush(r.txt) || ferror(r.txt) || fclose(r.txt))
		fail("write records.txt");
	if (close(r.bin_fd) < 0)
		fail("close aux.bin");
	printf("aux-record: bytes=%llu aux_records=%llu truncated=%llu lost=%llu",
	       r.bytes, r.aux_records, r.truncated, r.lost);
	printf(" itrace_start=%llu mode=%s other=%llu", r.itrace_start,
	       r.snapshot ? "snapshot" : "normal", r.other);
	if (r.flush_err >= 0)
		printf(" flush=%s", r.flush_err ? strerror(r.flush_err) : "ok");
	putchar('\n');
	return 0;
}
