// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim_mark: a sampling PMU whose samples go into the trace.
 *
 * What PERF_PMU_CAP_AUX_OUTPUT and pmu::aux_output_match exist for: on
 * Intel, PEBS records can be written into the Intel PT trace instead of
 * the perf buffer, when the PEBS event is in a group led by an intel_pt
 * event and has attr.aux_output set.  ptsim_mark models that pairing.  A
 * ptsim_mark event counts the ticks of the ptsim engine that traces its
 * group leader (while the engine runs, paused or not).  If it samples
 * (attr.sample_period, no freq), every sample_period-th tick is an
 * overflow.  With aux_output the sample goes into the trace, if the
 * engine is tracing (not paused): a PTW packet with the IP bit set and
 * the sample's number as payload (the count divided by the period: 1, 2,
 * 3...), then a FUP with the user IP, as a PTWRITE with IP=1 is traced.
 * Without it the overflow is a PMI, as a hardware counter's is: raised
 * through the engine (so in NMI unless the leader has irq_pmi), where the
 * handler calls perf_event_overflow(), which writes the sample and takes
 * the AUX sample (attr.aux_sample_size) or pauses or resumes the trace
 * (attr.aux_pause, attr.aux_resume) from there.  Outside such a group it
 * counts nothing.
 *
 * It is a separate PMU in the hardware context, like the core PMU whose
 * PEBS events intel_pt pairs with; ptsim is in the software context, as
 * intel_pt is, which is what lets the perf core group the two.
 *
 * State: the engine finds the event through ptsim_cpu::mark and calls it
 * through its slot of the engine's hooks, both of which pmu::add sets
 * when the event joins its leader's engine on this CPU, and pmu::del, or
 * the leader's leaving the engine (ptsim_del()), clears: a member whose
 * leader is closed stays on the CPU as a group of its own, and counts
 * nothing from then on.  The perf core adds a group's leader before its
 * siblings and removes them together under the context lock, and the
 * tick (and the PMI it raises and waits for) runs on the same CPU with
 * interrupts off, so the pointers need no lock (see "Contexts and
 * serialisation").  The count is event->count itself, only written by
 * the tick on the event's CPU.
 */
#define pr_fmt(fmt) "ptsim: " fmt

#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>

#include "ptsim.h"

static struct pmu ptsim_mark_pmu;

/*
 * Count one engine tick for the mark event; every period-th is an
 * overflow: a sample in the trace, or a PMI.
 */
static void ptsim_mark_ticked(struct ptsim_cpu *c, struct ptsim_event *ev,
			      u64 ip)
{
	struct perf_event *mark = c->mark;
	u64 period = mark->hw.sample_period;
	u8 rec[PTSIM_MAX_RECORD];
	u64 n, nr;

	if (mark->hw.state & PERF_HES_STOPPED)
		return;
	n = local64_add_return(1, &mark->count);
	if (!period)
		return;
	nr = div64_u64(n, period);
	if (nr * period != n)
		return;
	if (!mark->attr.aux_output)
		ptsim_pmi_raise(c, PTSIM_PMI_MARK);
	else if (c->tracing)
		ptsim_put_control(ev, rec, ptsim_rec_mark(rec, (u32)nr, ip));
}

/*
 * The registers a sample reports: where the workload was when the tick
 * came (the registers the tick interrupted, @regs), as a hardware counter
 * reports where it overflowed; never the PMI handler's own.  If the tick
 * came in the kernel and the event excludes it, where the task's user
 * code is (as a counter of user mode only would have overflowed there);
 * without user code on the CPU, no sample.  So an unprivileged event,
 * which must exclude the kernel, never receives a kernel address.
 */
static struct pt_regs *ptsim_mark_regs(struct perf_event *mark,
				       struct pt_regs *regs)
{
	if (!regs || user_mode(regs) || !mark->attr.exclude_kernel)
		return regs;
	return ptsim_user_regs();
}

/*
 * The PMI handler's part: the counter overflowed.  If the core throttles
 * the event, it is stopped until the core starts it again.
 */
static void ptsim_mark_overflow(struct ptsim_cpu *c, struct pt_regs *regs)
{
	struct perf_event *mark = c->mark;
	struct perf_sample_data data;

	if (!mark || (mark->hw.state & PERF_HES_STOPPED))
		return;
	regs = ptsim_mark_regs(mark, regs);
	if (!regs)
		return;
	perf_sample_data_init(&data, 0, mark->hw.last_period);
	if (perf_event_overflow(mark, &data, regs))
		mark->hw.state = PERF_HES_STOPPED;
}

static const struct ptsim_hooks ptsim_mark_hooks = {
	.ticked		= ptsim_mark_ticked,
	.overflow	= PTR_IF(PTSIM_BUILTIN, ptsim_mark_overflow),
};

static int ptsim_mark_event_init(struct perf_event *event)
{
	if (event->attr.type != ptsim_mark_pmu.type)
		return -ENOENT;
	if (event->attr.config || event->attr.config1 || event->attr.config2)
		return -EINVAL;
	/* A fixed period: the engine's ticks are not a clock to adjust to. */
	if (is_sampling_event(event) && event->attr.freq)
		return -EINVAL;
	/* No PMI in a module (PTSIM_BUILTIN). */
	if (!PTSIM_BUILTIN && is_sampling_event(event) &&
	    !event->attr.aux_output)
		return -EOPNOTSUPP;
	return 0;
}

static int ptsim_mark_add(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct perf_event *leader = NULL;

	/*
	 * Only with its own leader on the engine, and one per engine.  An
	 * aux_output event goes by the perf core's pairing (aux_event),
	 * which the core tears down when the leader goes away.
	 */
	if (event->attr.aux_output)
		leader = event->aux_event;
	else if (event->group_leader != event)
		leader = event->group_leader;
	if (leader && leader == c->event && !c->mark) {
		c->mark = event;
		c->hooks[PTSIM_HOOK_MARK] = &ptsim_mark_hooks;
	}
	event->hw.state = flags & PERF_EF_START ? 0 : PERF_HES_STOPPED;
	return 0;
}

static void ptsim_mark_del(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	if (c->mark == event) {
		c->hooks[PTSIM_HOOK_MARK] = NULL;
		c->mark = NULL;
	}
	event->hw.state = PERF_HES_STOPPED;
}

static void ptsim_mark_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
}

static void ptsim_mark_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
}

static void ptsim_mark_read(struct perf_event *event)
{
	/* The tick keeps event->count up to date. */
}

/* aux_output pairs a ptsim_mark event with a ptsim leader, nothing else. */
static int ptsim_mark_aux_output_match(struct perf_event *event)
{
	return ptsim_is_engine(event->pmu);
}

static struct pmu ptsim_mark_pmu = {
	.module			= THIS_MODULE,
	.task_ctx_nr		= perf_hw_context,
	.capabilities		= PERF_PMU_CAP_AUX_OUTPUT,
	.event_init		= ptsim_mark_event_init,
	.add			= ptsim_mark_add,
	.del			= ptsim_mark_del,
	.start			= ptsim_mark_start,
	.stop			= ptsim_mark_stop,
	.read			= ptsim_mark_read,
	.aux_output_match	= ptsim_mark_aux_output_match,
};

int __init ptsim_mark_register(void)
{
	return perf_pmu_register(&ptsim_mark_pmu, "ptsim_mark", -1);
}

void ptsim_mark_unregister(void)
{
	perf_pmu_unregister(&ptsim_mark_pmu);
}
