/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the ptsim tests share with the kselftest harness: it needs a
 * test's _metadata, so it is here, included after the harness, and not
 * in the compiled helpers.
 */
#ifndef PTSIM_HARNESS_H
#define PTSIM_HARNESS_H

#include "../kselftest_harness.h"
#include "ptsim_lib.h"

/* From a fixture's setup: skip the case unless @needs are met. */
static inline void ptsim_need(struct __test_metadata *_metadata,
			      unsigned int needs)
{
	const char *why = ptsim_missing(needs);

	if (why)
		SKIP(return, "%s", why);
}

/*
 * Trace @pid, a child held back on @go (spawn_burner()), with a per-task
 * ptsim event of @attr: map its AUX area of @aux_pages into @s
 * (@snapshot: read-only), enable its group, release the child.
 * Returns the event's descriptor.
 */
static inline int ptsim_trace_task(struct __test_metadata *_metadata,
				   struct capture *s,
				   struct perf_event_attr *attr, pid_t pid,
				   int go, int aux_pages, bool snapshot)
{
	int fd = perf_open(attr, pid, -1, -1);

	ASSERT_GE(fd, 0) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, capture_map(s, fd, attr->config1, 16, aux_pages,
				 snapshot));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	release(go);
	return fd;
}

/* Consume @s until @pid exits, which it must do with status 0. */
static inline void ptsim_until_exit(struct __test_metadata *_metadata,
				    struct capture *s, pid_t pid)
{
	int status = capture_until_exit(s, pid);

	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
}

/*
 * ptsim_trace_task() on a child burning @ms of CPU, consumed until it
 * exits; with @ms -1 it burns until stop_burner(*@pid).
 */
static inline int ptsim_trace_burner(struct __test_metadata *_metadata,
				     struct capture *s,
				     struct perf_event_attr *attr, int ms,
				     int aux_pages, bool snapshot, pid_t *pid)
{
	int go, fd;

	*pid = spawn_burner(ms, -1, &go);
	ASSERT_GT(*pid, 0);
	fd = ptsim_trace_task(_metadata, s, attr, *pid, go, aux_pages,
			      snapshot);
	if (ms >= 0)
		ptsim_until_exit(_metadata, s, *pid);
	return fd;
}

#endif /* PTSIM_HARNESS_H */
