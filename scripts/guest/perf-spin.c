// SPDX-License-Identifier: GPL-2.0
/*
 * perf-spin - the workload of the perf suite: THREADS threads (default
 * 1), each spinning on the CPU for MS milliseconds of CLOCK_MONOTONIC
 * time, so that a trace covers a known stretch of guest time however fast
 * the guest runs.
 *
 *	perf-spin [-t THREADS] MS
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	64

static long spin_ms;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *spin(void *arg)
{
	long long end = now_ns() + spin_ms * 1000000LL;
	volatile unsigned long n = 0;

	(void)arg;
	while (now_ns() < end)
		n++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	int threads = 1, c, i, err;
	char *end;

	while ((c = getopt(argc, argv, "t:")) != -1) {
		if (c != 't')
			goto usage;
		threads = strtol(optarg, &end, 10);
		if (*end || threads < 1 || threads > MAX_THREADS)
			goto usage;
	}
	if (optind != argc - 1)
		goto usage;
	spin_ms = strtol(argv[optind], &end, 10);
	if (*end || spin_ms < 0)
		goto usage;
	for (i = 1; i < threads; i++) {
		err = pthread_create(&th[i], NULL, spin, NULL);
		if (err) {
			fprintf(stderr, "perf-spin: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	spin(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
usage:
	fprintf(stderr, "usage: perf-spin [-t THREADS(1..%d)] MS\n", MAX_THREADS);
	return 2;
}
