/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for tests that drive the AUX area through the ptsim PMU
 * (Documentation/admin-guide/perf/ptsim.rst): open and map an event,
 * consume its data and AUX areas the way perf does, and check the trace.
 * Every test includes this header; it declares the helpers, by concern:
 * ptsim_cfg.h (the PMU and its configuration), ptsim_capture.h (an
 * event's output, read with tools/aux/lib's consumer), ptsim_trace.h (the
 * trace check) and ptsim_proc.h (processes and CPUs), each compiled from
 * its .c file and included only here, after the headers they need.
 *
 * The trace check understands exactly the packets ptsim writes.  It is
 * deliberately independent of libipt, which a minimal test system may
 * lack.  With PTSIM_TRACE_DIR set in the environment, every trace a test
 * produces is also written in aux-record's format to a directory of its
 * own under that directory, so that tools/aux/aux-decode can check it with
 * libipt on another machine; unset or empty, nothing is written.
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

#define MLOCK_SYSCTL	"/proc/sys/kernel/perf_event_mlock_kb"
#define PARANOID_SYSCTL	"/proc/sys/kernel/perf_event_paranoid"

#include "ptsim_cfg.h"
#include "ptsim_capture.h"
#include "ptsim_trace.h"
#include "ptsim_proc.h"

#endif /* PTSIM_LIB_H */
