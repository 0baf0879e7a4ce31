// SPDX-License-Identifier: GPL-2.0
/*
 * ptsim claims only the NMIs it sent, and claims them as a PMU does.
 *
 * First, with no other NMIs: ptsim's NMIs are claimed in the first round
 * (NMI_LOCAL), so an NMI_UNKNOWN handler (nmi_foreign.ko's witness, in
 * the place of ipmi_watchdog's pre-NMI handler, which panics on any NMI
 * it is shown) is shown none of them, neither a privileged event's
 * (the benchmark mode on CPU 1, until 2000 PMIs) nor an unprivileged
 * one's (uid 65534 at perf_event_paranoid 2, a per-task event at the
 * most records a tick such a user may ask for, on CPU 1, until 200 of
 * its PMIs went through ptsim's NMI handler; it enables the event again
 * when a buffer found full has disabled it), except
 * the NMI of a PMI the engine took back as late, which has no reasons
 * left to find.
 *
 * Then the foreign NMIs.
 * ptsim's PMI is an NMI it sends its own CPU (ptsim-nmi.c).  Another NMI
 * that arrives on that CPU while ptsim sends one, at any point of the
 * sending, must neither take ptsim's work nor leave ptsim's NMI unclaimed
 * ("Uhhuh. NMI received for unknown reason", a panic with
 * unknown_nmi_panic), and an NMI ptsim did not send must not be claimed
 * by ptsim instead of its owner.  With nmi_foreign.ko, which sends CPU 1
 * NMIs from CPU 0 as the kernel's own senders do (a flag and an
 * NMI_LOCAL handler, tests/modules/nmi_foreign/nmi_foreign.c), the test
 * runs ptsim's benchmark mode on CPU 1, one PMI per 64-byte transaction,
 * in rounds of 100 ms with a new event each (an event whose NMI was taken
 * by another handler has its PMIs handled in place from then on), until
 * both kinds of NMI number 4000 at least (at most 60 s), while the module
 * sends NMIs to CPU 1 one after the other.  Then: thousands of
 * PMIs went through ptsim's NMI handler, thousands of foreign NMIs were
 * sent and claimed by their handler, and the kernel log has no unknown
 * NMI (make check boots with unknown_nmi_panic=1, so that one would also
 * end the boot).  The figures of ptsim's debugfs ptsim/nmi and
 * ptsim/irqoff for CPU 1 are printed as diagnostics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aux_sysfs.h"
#include "../modtest.h"

#define MOD	"nmi_foreign"
#define DBG	"/sys/kernel/debug/" MOD
#define PTSIM_DBG	"/sys/kernel/debug/ptsim"
#define UNKNOWN	"NMI received for unknown reason"
#define CPU	1
/* Rounds: at least MIN_ROUNDS, until MIN_EACH of both kinds, at most MAX_MS. */
#define MIN_ROUNDS	10
#define ROUND_MS	100
#define MAX_MS		60000
#define MIN_EACH	4000
#define AUX_PAGES	64
/* ptsim's config1 and config2: 64 transactions of 2^6 bytes per 100 us. */
#define CONFIG1	((64ULL << 10) | (100ULL << 26))
#define CONFIG2	6ULL
/* The unprivileged event: 256 records a tick, ptsim's caps/user_max_rate. */
#define USER_CONFIG1	(256ULL << 10)
/* The unprivileged run: until USER_PMIS PMIs in NMI, at most USER_MAX_MS. */
#define USER_PMIS	200
#define USER_MAX_MS	30000
#define PRIV_PMIS	2000
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

static int failures, checks;

static void check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", ++checks, what);
	failures += !ok;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The value after @key on CPU @cpu's line of debugfs file @path, -1 if none. */
static long cpu_field(const char *path, int cpu, const char *key)
{
	char line[512], want[16], *p;
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		p = strstr(line, key);
		if (p && p[strlen(key)] == ' ')
			v = strtol(p + strlen(key) + 1, NULL, 10);
	}
	fclose(f);
	return v;
}

/* Lines of the kernel log that report an unknown NMI. */
static int unknown_nmis(void)
{
	int size = klogctl(10, NULL, 0), n = 0, len;	/* SIZE_BUFFER */
	char *buf, *p;

	if (size <= 0)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	len = klogctl(3, buf, size);			/* READ_ALL */
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = 0;
	for (p = buf; (p = strstr(p, UNKNOWN)); p++)
		n++;
	free(buf);
	return n;
}

/* Foreign NMIs sent so far (nmi_foreign/counts), -1 if unknown. */
static long long foreign_sent(void)
{
	FILE *f = fopen(DBG "/counts", "r");
	long long sent = -1;

	if (!f)
		return -1;
	if (fscanf(f, "sent %lld", &sent) != 1)
		sent = -1;
	fclose(f);
	return sent;
}

/* NMIs the module's NMI_UNKNOWN handler was shown so far, -1 if unknown. */
static long long unknown_seen(void)
{
	FILE *f = fopen(DBG "/counts", "r");
	long long v[4];

	if (!f)
		return -1;
	if (fscanf(f, "sent %lld claimed %lld unanswered %lld %*s %lld",
		   &v[0], &v[1], &v[2], &v[3]) != 4)
		v[3] = -1;
	fclose(f);
	return v[3];
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * An unprivileged user's event: a child on CPU, as uid 65534 at
 * perf_event_paranoid 2, traces itself with a per-task event at
 * USER_CONFIG1, its AUX area consumed, until ptsim has handled USER_PMIS
 * PMIs in NMI on CPU since @pmi0 (at most USER_MAX_MS: a run bounded by
 * work, not by time, on a busy host).  0, or why it could not.
 */
static int unprivileged_run(int type, long psz, long pmi0)
{
	long ticks0 = cpu_field(PTSIM_DBG "/tick", CPU, "ticks");
	char paranoid[16] = "";
	double end, t0 = now_ms();
	int status, fd;
	__u64 *seen;
	pid_t pid;
	FILE *f;

	f = fopen(PARANOID, "r");
	if (!f || !fgets(paranoid, sizeof(paranoid), f)) {
		if (f)
			fclose(f);
		return -ENOENT;
	}
	fclose(f);
	/* What the child saw last, for the diagnostics: aux_head, data_head. */
	seen = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (seen == MAP_FAILED)
		return -ENOMEM;
	if (write_file(PARANOID, "2")) {
		munmap(seen, psz);
		return -EACCES;
	}
	pid = fork();
	if (!pid) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = type,
			.config1 = USER_CONFIG1,
			.disabled = 1,
			.exclude_kernel = 1,
		};
		struct perf_event_mmap_page *pg;
		cpu_set_t set;
		void *aux;

		CPU_ZERO(&set);
		CPU_SET(CPU, &set);
		if (sched_setaffinity(0, sizeof(set), &set) ||
		    setgid(65534) || setuid(65534))
			_exit(2);
		fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0)
			_exit(3);
		pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (pg == MAP_FAILED)
			_exit(4);
		pg->aux_offset = 2 * psz;
		pg->aux_size = 16 * psz;
		aux = mmap(NULL, 16 * psz, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, 2 * psz);
		if (aux == MAP_FAILED)
			_exit(5);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (unsigned long n = 1;; n++) {
			__u64 head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);

			__atomic_store_n(&pg->aux_tail, head, __ATOMIC_RELEASE);
			__atomic_store_n(&seen[0], head, __ATOMIC_RELAXED);
			__atomic_store_n(&seen[1], __atomic_load_n(&pg->data_head,
								   __ATOMIC_ACQUIRE),
					 __ATOMIC_RELAXED);
			/*
			 * A buffer found full disables the event (as in
			 * every kernel): on a loaded host the tick may run
			 * while this loop hardly does.  Enable it again.
			 */
			if (!(n % 65536))
				ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		}
	}
	if (pid < 0) {
		write_file(PARANOID, paranoid);
		munmap(seen, psz);
		return -ECHILD;
	}
	/* Until enough PMIs, or the child gave up setting up. */
	for (end = now_ms() + USER_MAX_MS; now_ms() < end;) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			write_file(PARANOID, paranoid);
			printf("# unprivileged child: status %#x\n", status);
			munmap(seen, psz);
			return -ECHILD;
		}
		if (cpu_field(PTSIM_DBG "/nmi", CPU, "pmi") - pmi0 >= USER_PMIS)
			break;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	write_file(PARANOID, paranoid);
	printf("# unprivileged: %.0f ms, %ld ticks on cpu%d, aux_head %llu, data_head %llu\n",
	       now_ms() - t0, cpu_field(PTSIM_DBG "/tick", CPU, "ticks") - ticks0,
	       CPU, (unsigned long long)__atomic_load_n(&seen[0], __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&seen[1], __ATOMIC_RELAXED));
	munmap(seen, psz);
	return 0;
}

static bool sending;

/* Foreign NMIs to CPU, in batches, until told to stop. */
static void *send_nmis(void *arg)
{
	int fd = open(DBG "/run", O_WRONLY);
	char cmd[32];

	(void)arg;
	if (fd < 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%d 200", CPU);
	while (__atomic_load_n(&sending, __ATOMIC_RELAXED))
		if (write(fd, cmd, strlen(cmd)) < 0)
			break;
	close(fd);
	return NULL;
}

/* One round: a per-CPU benchmark event on CPU, its AUX area consumed. */
static int one_round(int type, long psz)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.config1 = CONFIG1,
		.config2 = CONFIG2,
		.disabled = 1,
		.exclude_kernel = 1,
	};
	struct perf_event_mmap_page *pg;
	double end;
	void *aux;
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, -1, CPU, -1, 0);
	if (fd < 0)
		return -errno;
	pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	pg->aux_offset = 2 * psz;
	pg->aux_size = AUX_PAGES * psz;
	aux = mmap(NULL, AUX_PAGES * psz, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 2 * psz);
	if (aux == MAP_FAILED) {
		munmap(pg, 2 * psz);
		close(fd);
		return -ENOMEM;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	end = now_ms() + ROUND_MS;
	while (now_ms() < end) {
		__u64 head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);

		__atomic_store_n(&pg->aux_tail, head, __ATOMIC_RELEASE);
		usleep(200);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(aux, AUX_PAGES * psz);
	munmap(pg, 2 * psz);
	close(fd);
	return 0;
}

int main(void)
{
	long psz = sysconf(_SC_PAGESIZE), pmi0, late0, stray0, pmi, late, stray;
	long long sent = -1, claimed = -1, unanswered = -1, seen0, seen;
	int type, r, err = 0, unknown0, unknown;
	pthread_t sender;
	double t0;
	FILE *f;

	printf("TAP version 13\n1..6\n");
	type = auxc_pmu_type("ptsim");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || type < 0 ||
	    access(PTSIM_DBG "/nmi", R_OK)) {
		printf("1..0 # SKIP needs 2 CPUs and ptsim's NMI delivery (x86, debugfs)\n");
		return 0;
	}
	if (modtest_load(MOD))
		return 1;

	/* No foreign NMIs: a privileged event's, then an unprivileged one's. */
	seen0 = unknown_seen();
	pmi0 = cpu_field(PTSIM_DBG "/nmi", CPU, "pmi");
	late0 = cpu_field(PTSIM_DBG "/nmi", CPU, "late");
	t0 = now_ms();
	for (r = 0; !err && now_ms() - t0 < MAX_MS / 2 &&
	     cpu_field(PTSIM_DBG "/nmi", CPU, "pmi") - pmi0 < PRIV_PMIS; r++)
		err = one_round(type, psz);
	pmi = cpu_field(PTSIM_DBG "/nmi", CPU, "pmi") - pmi0;
	late = cpu_field(PTSIM_DBG "/nmi", CPU, "late") - late0;
	seen = unknown_seen() - seen0;
	printf("# privileged: %d rounds, PMIs in NMI %ld, late %ld, unknown_seen %lld\n",
	       r, pmi, late, seen);
	check(!err && seen0 >= 0 && pmi >= PRIV_PMIS / 2 && seen <= late,
	      "a privileged event's NMIs: none shown to an NMI_UNKNOWN handler");
	seen0 = unknown_seen();
	pmi0 = cpu_field(PTSIM_DBG "/nmi", CPU, "pmi");
	late0 = cpu_field(PTSIM_DBG "/nmi", CPU, "late");
	err = unprivileged_run(type, psz, pmi0);
	pmi = cpu_field(PTSIM_DBG "/nmi", CPU, "pmi") - pmi0;
	late = cpu_field(PTSIM_DBG "/nmi", CPU, "late") - late0;
	seen = unknown_seen() - seen0;
	printf("# unprivileged: %s, PMIs in NMI %ld, late %ld, unknown_seen %lld\n",
	       err ? strerror(-err) : "ran", pmi, late, seen);
	check(!err && seen0 >= 0 && pmi >= USER_PMIS && seen <= late,
	      "an unprivileged event's NMIs: none shown to an NMI_UNKNOWN handler");
	err = 0;

	unknown0 = unknown_nmis();
	pmi0 = cpu_field(PTSIM_DBG "/nmi", CPU, "pmi");
	late0 = cpu_field(PTSIM_DBG "/nmi", CPU, "late");
	stray0 = cpu_field(PTSIM_DBG "/nmi", CPU, "stray");
	f = fopen(PTSIM_DBG "/irqoff", "w");
	if (f) {
		fputs("0\n", f);
		fclose(f);
	}
	__atomic_store_n(&sending, true, __ATOMIC_RELAXED);
	if (pthread_create(&sender, NULL, send_nmis, NULL)) {
		printf("Bail out! pthread_create\n");
		return 1;
	}
	t0 = now_ms();
	for (r = 0; !err && now_ms() - t0 < MAX_MS; r++) {
		if (r >= MIN_ROUNDS && foreign_sent() >= MIN_EACH &&
		    cpu_field(PTSIM_DBG "/nmi", CPU, "pmi") - pmi0 >= MIN_EACH)
			break;
		err = one_round(type, psz);
	}
	__atomic_store_n(&sending, false, __ATOMIC_RELAXED);
	pthread_join(sender, NULL);
	if (err)
		printf("# round %d: %s\n", r, strerror(-err));

	pmi = cpu_field(PTSIM_DBG "/nmi", CPU, "pmi") - pmi0;
	late = cpu_field(PTSIM_DBG "/nmi", CPU, "late") - late0;
	stray = cpu_field(PTSIM_DBG "/nmi", CPU, "stray") - stray0;
	f = fopen(DBG "/counts", "r");
	if (f) {
		if (fscanf(f, "sent %lld claimed %lld unanswered %lld", &sent,
			   &claimed, &unanswered) != 3)
			sent = -1;
		fclose(f);
	}
	unknown = unknown_nmis();
	printf("# %d rounds in %.0f ms\n", r, now_ms() - t0);
	printf("# cpu%d: ptsim PMIs in NMI %ld, late %ld, stray %ld\n",
	       CPU, pmi, late, stray);
	printf("# foreign NMIs sent %lld claimed %lld unanswered %lld\n",
	       sent, claimed, unanswered);
	printf("# unknown NMIs in the log: %d before, %d after\n", unknown0,
	       unknown);
	printf("# cpu%d interrupts off, longest (ns): tick %ld stop %ld flush %ld nmi_wait %ld\n",
	       CPU, cpu_field(PTSIM_DBG "/irqoff", CPU, "tick"),
	       cpu_field(PTSIM_DBG "/irqoff", CPU, "stop"),
	       cpu_field(PTSIM_DBG "/irqoff", CPU, "flush"),
	       cpu_field(PTSIM_DBG "/irqoff", CPU, "nmi_wait"));

	check(!err && pmi >= 1000, "ptsim's PMIs went through its NMI handler, thousands of them");
	check(sent >= 1000 && claimed >= sent - unanswered - 1,
	      "thousands of foreign NMIs were sent, and claimed by their own handler");
	check(unknown0 >= 0 && unknown == unknown0, "no NMI was reported for an unknown reason");
	check(!syscall(SYS_delete_module, MOD, O_NONBLOCK), "the module unloads");
	return failures ? 1 : 0;
}
