// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_EVENT_IOC_FLUSH: make a PMU write out what it holds internally.
 *
 * A trace unit with an on-chip FIFO, or hardware that forwards its buffer
 * only at region ends or on interrupt, keeps data that user space cannot
 * see until something ends the current AUX transaction.  The ioctl lets a
 * tool say "everything produced up to now must be in the buffer", and
 * returns once it is.
 *
 * The contract, for user space in Documentation/userspace-api/perf-aux.rst
 * and for drivers in Documentation/driver-api/perf-aux.rst, is kept here in
 * one place: perf_event_flush() below.
 */

#include <linux/errno.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/smp.h>

#include "flush.h"
#include "internal.h"

/**
 * DOC: Where a flush runs
 *
 * A PMU can only be told to write out its buffers on the CPU where the
 * event is active, with interrupts disabled, as for &pmu.stop.  The ioctl
 * runs in process context, possibly on another CPU, so each event is
 * flushed through the core's event_function_call(), as disable and
 * period changes are: it calls flush_event_fn() with the event's context
 * locked, on the CPU where the context is active, or on this CPU if the
 * context's task is not running; it looks again if the task moved, and
 * does nothing for a context whose task has exited.
 *
 * Whether an event is active only changes under its context's lock, so
 * under that lock an active event cannot be scheduled out from under the
 * PMU callback, and an event found inactive holds nothing: scheduling an
 * event out stops it with &pmu.stop, and a PMU's stop must write out what
 * it holds (for an AUX PMU, end its transaction), the same rule that
 * makes disable and munmap safe.  The state is read under the lock, so
 * what that sched-out wrote out is visible too.
 *
 * Nothing here touches the ring buffer: the PMU writes through the AUX
 * output API (perf_aux_output_end() and perf_aux_output_begin()) as it
 * does from its interrupt handler, so the flush is serialised against
 * munmap, close and SET_OUTPUT the same way that interrupt is.
 */

/* Can FLUSH mean anything for this event's PMU at all? */
static bool flush_supported(struct perf_event *event)
{
	return event->pmu->flush || has_aux(event);
}

/*
 * Flush an event that is active on this CPU.  Called with interrupts
 * disabled and the event's context locked, like pmu::stop; the PMU is
 * disabled around the callbacks, as the core does around stop and start.
 */
static int flush_active(struct perf_event *event)
{
	struct pmu *pmu = event->pmu;
	int ret = -EOPNOTSUPP;

	lockdep_assert_irqs_disabled();
	lockdep_assert_held(&event->ctx->lock);
	perf_pmu_disable(pmu);
	if (pmu->flush)
		ret = pmu->flush(event);
	/*
	 * The generic path, for an AUX PMU without a flush callback or one
	 * that declined: end the AUX transaction and begin the next, which
	 * every AUX PMU's stop and start do (they must, for sched-out and
	 * munmap).  stop with PERF_EF_UPDATE writes out what the hardware
	 * holds and publishes aux_head with a PERF_RECORD_AUX.
	 *
	 * A PMU that stopped on its own (a full buffer, throttling) has
	 * ended its transaction already and holds nothing; starting it here
	 * would undo that stop, so it is left alone.
	 */
	if (ret == -EOPNOTSUPP && has_aux(event)) {
		ret = 0;
		if (!(event->hw.state & PERF_HES_STOPPED)) {
			pmu->stop(event, PERF_EF_UPDATE);
			pmu->start(event, PERF_EF_RELOAD);
		}
	}
	perf_pmu_enable(pmu);
	return ret;
}

/* event_function_call()'s callback: @event's context is locked. */
static void flush_event_fn(struct perf_event *event,
			   struct perf_cpu_context *cpuctx,
			   struct perf_event_context *ctx, void *info)
{
	int *ret = info;

	if (event->state == PERF_EVENT_STATE_ACTIVE &&
	    event->oncpu == smp_processor_id())
		*ret = flush_active(event);
}

/*
 * Flush one event, wherever it is: 0 if it is not active.  The caller
 * keeps @event alive: the ioctl holds the file of a parent event (and its
 * ctx->mutex, which event_function_call() wants for a parent), and the
 * parent's child_mutex keeps its children (perf_event_exit_event()
 * unlinks a child under it before freeing it).
 */
static int flush_event(struct perf_event *event)
{
	int ret = 0;

	event_function_call(event, flush_event_fn, &ret);
	return ret;
}

/*
 * Fold one member's result into a group's: the first real error wins;
 * otherwise 0 once any member was flushed, -EOPNOTSUPP while none could be.
 */
static int flush_merge(int acc, int ret)
{
	if (acc && acc != -EOPNOTSUPP)
		return acc;
	if (ret == -EOPNOTSUPP)
		return acc;
	return ret;
}

/* Flush @event and every child inherited from it. */
static int flush_family(struct perf_event *event)
{
	struct perf_event *child;
	int ret;

	/* Children have the parent's PMU. */
	if (!flush_supported(event))
		return -EOPNOTSUPP;

	mutex_lock(&event->child_mutex);
	ret = flush_event(event);
	list_for_each_entry(child, &event->child_list, child_list)
		ret = flush_merge(ret, flush_event(child));
	mutex_unlock(&event->child_mutex);
	return ret;
}

/**
 * perf_event_flush() - PERF_EVENT_IOC_FLUSH: write out what the PMU holds
 * @event: the event of the file the ioctl was called on
 * @flags: the ioctl's argument: 0, or PERF_IOC_FLAG_GROUP for @event's
 *	whole group
 *
 * On return 0, everything the PMU produced for @event (and for the events
 * inherited from it, and with PERF_IOC_FLAG_GROUP for every member of its
 * group) before the call is in the output buffer: for an AUX PMU, the
 * transaction that held it has ended, so aux_head is published and a
 * PERF_RECORD_AUX describing the data is in the data area, and the
 * consumer has been woken if a watermark was crossed; in overwrite mode
 * the published head makes a snapshot readable.  Data the PMU could not
 * store (the buffer filled up) is reported as loss in the usual way, by
 * the TRUNCATED flag.  Tracing goes on.
 *
 * An active event is flushed on its CPU: by &pmu.flush if the PMU has one,
 * otherwise, for an AUX PMU, by ending its AUX transaction and beginning
 * the next (&pmu.stop with PERF_EF_UPDATE, then &pmu.start), which works
 * for every AUX PMU without driver changes.  An event that is not active
 * has nothing to flush.  For a PMU with neither an AUX area nor a flush
 * callback the core cannot tell whether it holds records back (most write
 * them straight into the data area, x86's large PEBS buffers them), so the
 * call fails with -EOPNOTSUPP rather than claim a flush it did not do.  In
 * a group, such members are skipped.
 *
 * Context: process context, with @event's ctx->mutex held (the ioctl
 * path); sleeps.
 * Return: 0 on success (including "nothing to flush"); -EINVAL if @flags
 * has a bit other than PERF_IOC_FLAG_GROUP; -EOPNOTSUPP if the PMU of
 * @event (or of every member of the group) can flush nothing; or the
 * error of a &pmu.flush callback.
 */
int perf_event_flush(struct perf_event *event, unsigned long flags)
{
	struct perf_event *leader, *sibling;
	int ret;

	if (flags & ~(unsigned long)PERF_IOC_FLAG_GROUP)
		return -EINVAL;

	lockdep_assert_held(&event->ctx->mutex);

	if (!(flags & PERF_IOC_FLAG_GROUP))
		return flush_family(event);

	leader = event->group_leader;
	ret = flush_merge(-EOPNOTSUPP, flush_family(leader));
	for_each_sibling_event(sibling, leader)
		ret = flush_merge(ret, flush_family(sibling));
	return ret;
}
