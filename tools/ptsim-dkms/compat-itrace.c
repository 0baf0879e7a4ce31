// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf_event_itrace_started() for kernels that do not export it (every
 * distribution kernel before this series' "perf/core: Export
 * perf_event_itrace_started()"): where $(KDIR)/Module.symvers lacks the
 * symbol, the Makefile here compiles every source file with
 * -Dperf_event_itrace_started=ptsim_compat_itrace_started and links this
 * file in, so that the driver's sources, which call the core's function
 * as intel_pt does, stay the mainline ones.
 *
 * The body is the core's: one flag in the event's attach_state, set from
 * pmu::start with interrupts disabled (6.12's and 7.3's kernel/events/
 * core.c), which is all the record that perf_log_itrace_start() logs at
 * sched-in depends on.
 */
#include <linux/compiler.h>
#include <linux/perf_event.h>

void perf_event_itrace_started(struct perf_event *event)
{
	WRITE_ONCE(event->attach_state, event->attach_state | PERF_ATTACH_ITRACE);
}
