// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim's pmu::flush, for PERF_EVENT_IOC_FLUSH.
 *
 * In a file of its own, and given to the PMU by ptsim_flush_init() rather
 * than in ptsim_pmu's initializer, so that a build of ptsim for a kernel
 * whose struct pmu has no flush callback can leave this one file out.
 */
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>

#include "ptsim.h"

/**
 * ptsim_flush() - pmu::flush: drain the FIFO into the AUX area now
 * @event: the event, active on this CPU
 *
 * What a trace unit's "flush" command does: the DMA empties the FIFO into
 * memory through the normal output path (ptsim_drain(), with its region
 * padding and watermark interrupts), then the transaction is ended, which
 * publishes aux_head and logs a PERF_RECORD_AUX for the data, and the next
 * one begins.  Tracing goes on undisturbed: unlike the core's generic path
 * (pmu::stop and pmu::start), no disable and enable packets are written
 * into the trace.
 *
 * If the buffer fills during the drain, the transaction ends with
 * TRUNCATED and the engine stops, as it does in a tick; if no new
 * transaction can begin, it stops too.  Either way there is nothing left
 * to flush, so that is success.  A pending overflow report stays pending:
 * it always precedes the next data record, so a consumer never sees a gap
 * before its explanation.
 *
 * With the ``noflush`` config bit set the callback declines, so that the
 * perf core's generic path for AUX PMUs without a flush callback can be
 * tested on ptsim.
 *
 * Context: the event's CPU, interrupts disabled, called by the perf core
 * for PERF_EVENT_IOC_FLUSH.
 * Return: 0, or -EOPNOTSUPP with ``noflush``.
 */
static int ptsim_flush(struct perf_event *event)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_event *ev = event->pmu_private;
	u64 t0;

	if (ev->noflush)
		return -EOPNOTSUPP;
	/* Stopped by a throttle in NMI: its work flushes the FIFO. */
	if (c->event == event && READ_ONCE(c->stop_req)) {
		hrtimer_try_to_cancel(&c->timer);
		ptsim_engine_stop(c, event);
		return 0;
	}
	/* Stopped on its own (full buffer): the FIFO was discarded. */
	if (c->event != event || (event->hw.state & PERF_HES_STOPPED) ||
	    !c->buf)
		return 0;

	t0 = local_clock();
	if (!ptsim_drain(c, ev, ULONG_MAX) || !ptsim_interrupt(c))
		ptsim_halt(c, event);
	ptsim_irqoff_note(PTSIM_IRQOFF_FLUSH, t0);
	return 0;
}

/**
 * ptsim_flush_init() - give @pmu ptsim's flush callback
 * @pmu: ptsim's struct pmu, not registered yet
 *
 * Context: module init, before @pmu is registered or copied.
 * Return: true: ptsim has a flush callback (sysfs caps/flush).
 */
bool __init ptsim_flush_init(struct pmu *pmu)
{
	pmu->flush = ptsim_flush;
	return true;
}
