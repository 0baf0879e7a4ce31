// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim_flush_init() for kernels whose struct pmu has no flush callback
 * (every kernel without this series' "perf: Add pmu::flush and
 * PERF_EVENT_IOC_FLUSH"): where $(srctree)/include/linux/perf_event.h
 * declares no pmu::flush, the Makefile here builds this file instead of
 * the driver's ptsim-flush.c.  ptsim then has no flush callback
 * (caps/flush 0), as such a kernel has no PERF_EVENT_IOC_FLUSH, and
 * works without it.
 */
#include <linux/init.h>
#include <linux/perf_event.h>

#include "ptsim.h"

bool __init ptsim_flush_init(struct pmu *pmu)
{
	return false;
}
