// SPDX-License-Identifier: GPL-2.0
/*
 * perf-spin - the workload of the perf suite: THREADS threads (default
 * 1), each spinning on the CPU for MS milliseconds of CLOCK_MONOTONIC
 * time, so that a trace covers a known stretch of guest time however fast
 * the guest runs.  With -s, the first thread sends its parent (perf
 * record) SIGUSR2 once it has spun SIG_MS milliseconds, and spins on:
 * a boundary in the recording (a --switch-output rotation) while the
 * workload runs, without its leaving the CPU.  With -r, it sends one
 * every SIG_MS milliseconds (snapshots in snapshot mode).
 *
 *	perf-spin [-t THREADS] [-s SIG_MS [-r]] MS
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A thread per CPU, on as many as x86 builds for (NR_CPUS 8192 at most). */
#define MAX_THREADS	8192

static long spin_ms;
static long signal_ms = -1;
static int signal_repeat;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *spin(void *arg)
{
	long long start = now_ns(), end = start + spin_ms * 1000000LL;
	long long sig = arg && signal_ms >= 0 ? start + signal_ms * 1000000LL : -1;
	unsigned long n = 0;
	long long now;

	while ((now = now_ns()) < end) {
		if (sig >= 0 && now >= sig) {
			kill(getppid(), SIGUSR2);
			sig = signal_repeat ? sig + signal_ms * 1000000LL : -1;
		}
		/* Work of its own between the clock reads, kept by the compiler. */
		n++;
		__asm__ __volatile__("" : "+r" (n));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, c, i, err;
	pthread_t *th;
	char *end;

	while ((c = getopt(argc, argv, "t:s:r")) != -1) {
		if (c == 'r') {
			signal_repeat = 1;
			continue;
		}
		if (c == 's') {
			signal_ms = strtol(optarg, &end, 10);
			if (*end || signal_ms < 0)
				goto usage;
			continue;
		}
		if (c != 't')
			goto usage;
		threads = strtol(optarg, &end, 10);
		if (*end || threads < 1 || threads > MAX_THREADS)
			goto usage;
	}
	if (optind != argc - 1 || (signal_repeat && signal_ms <= 0))
		goto usage;
	spin_ms = strtol(argv[optind], &end, 10);
	if (*end || spin_ms < 0)
		goto usage;
	th = calloc(threads, sizeof(*th));
	if (!th) {
		perror("perf-spin: calloc");
		return 1;
	}
	for (i = 1; i < threads; i++) {
		err = pthread_create(&th[i], NULL, spin, NULL);
		if (err) {
			fprintf(stderr, "perf-spin: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	spin(&signal_ms);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
usage:
	fprintf(stderr, "usage: perf-spin [-t THREADS(1..%d)] [-s SIG_MS [-r]] MS\n", MAX_THREADS);
	return 2;
}
