// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim's PMI as an NMI, as a trace unit's is on x86.
 *
 * The engine raises its PMI from the tick (see "The PMI" in
 * ptsim-engine.c); this delivery sends the CPU an NMI to itself through
 * its local APIC and waits, a few microseconds at most, until the handler
 * below has run.  The handler does what intel_pt_interrupt() does:
 * perf_get_aux(), the end of the transaction (with TRUNCATED if the
 * buffer is full), the begin of the next; and for ptsim_mark,
 * perf_event_overflow() as for a hardware counter, so that AUX sampling
 * and aux_pause/aux_resume run in NMI too.
 *
 * Which NMIs are ours.  An NMI sent by IPI leaves no trace in the
 * hardware, so the handler cannot tell it from another: an NMI of ours
 * may be claimed by another handler (the AMD PMU driver claims unknown
 * NMIs for a while after its own; a sender that raises a flag before its
 * IPI claims whatever NMI comes while the flag is up), and that sender's
 * own NMI then comes with no owner.  So ptsim does not claim in the first
 * round: its handler is an NMI_UNKNOWN one, which default_do_nmi() calls
 * only for an NMI that no NMI_LOCAL handler (perf, the watchdog, the
 * backtrace IPI, ...) claimed and whose NMI reason port showed nothing.
 * So ptsim never takes an NMI that has an owner, nor skips the platform's
 * own NMI handling.  In that round it claims by count: each NMI it sends
 * is one claim owed (ptsim_nmi_owed), and the handler claims an NMI in
 * which it finds the reasons the tick posted, or, without them, while a
 * claim is owed, one fewer each time.  So ptsim claims as many NMIs as it
 * sent, whichever of them are its own: one that another handler took
 * leaves its claim to the NMI it took the place of, and an NMI of
 * nobody's beyond those is reported as unknown, as it should be.  A
 * claim without reasons must come within PTSIM_NMI_GRACE_NS of the last
 * send, and claims owed are at most PTSIM_NMI_MAX_OWED, so that NMIs lost
 * by merging into another cannot pile up into a cover for a real unknown
 * NMI.  One that finds the reasons is claimed whenever it comes: a guest
 * whose virtual CPU the host did not run for a while gets its NMI late
 * by the guest's clock.
 *
 * The reasons are handled by whichever unowned NMI comes first while
 * they are posted (ours, or the one whose place ours took).  If none has
 * come by PTSIM_NMI_WAIT_NS, the tick takes its reasons back and handles
 * them in place, and the event's PMIs are handled in place from then on
 * (ptsim_event.nmi_late), so that a platform that loses or delays
 * self-NMIs costs one such wait per event; the claim stays owed for the
 * NMI that may still come.
 *
 * debugfs ptsim/nmi has a line per CPU:
 *   "cpu<N> sent <n> handled <n> pmi <n> mark <n> late <n> stray <n>"
 * sent: NMIs raised; handled: NMIs the handler found reasons in; pmi and
 * mark: those reasons handled in NMI; late: PMIs the engine took back
 * and handled in place because their NMI had not come within
 * PTSIM_NMI_WAIT_NS; stray: NMIs claimed that found no reasons (the NMI
 * of a late PMI, or one whose place an NMI of ours took).
 */
#define pr_fmt(fmt) "ptsim: " fmt

#include <linux/debugfs.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>
#include <asm/local.h>

#include "ptsim.h"

/*
 * How long the tick waits for its NMI before it takes the PMI back: a
 * self-NMI comes within a microsecond or two on hardware and in a guest
 * (it is delivered before the next instruction); this is against one
 * that never comes.
 */
#define PTSIM_NMI_WAIT_NS	(20 * NSEC_PER_USEC)
/* How long after the last NMI sent a claim without reasons may be made. */
#define PTSIM_NMI_GRACE_NS	(10 * NSEC_PER_MSEC)
/*
 * The most claims owed at once: one for the NMI in flight, more for those
 * of PMIs taken back that may still come.
 */
#define PTSIM_NMI_MAX_OWED	4

struct ptsim_nmi_stats {
	u64	sent;
	u64	handled;
	u64	pmi;
	u64	mark;
	u64	late;
	u64	stray;
};

static DEFINE_PER_CPU(struct ptsim_nmi_stats, ptsim_nmi_stats);
/*
 * NMIs this CPU sent itself and not yet claimed (see the top), and the
 * local_clock() of the last send.  Raised by the tick, with interrupts
 * off but not NMIs, so with local_inc(); lowered only in NMI, which
 * nothing on this CPU interrupts.
 */
static DEFINE_PER_CPU(local_t, ptsim_nmi_owed);
static DEFINE_PER_CPU(u64, ptsim_nmi_last_sent);
static bool ptsim_nmi_registered;

/*
 * An NMI nobody else claimed (see the top).  The reasons are taken with
 * xchg(): if the tick has taken them back first, there is nothing to
 * handle.  A handler that finds them runs while the tick that posted them
 * waits (NMIs nest into the code they interrupt), so the transaction is
 * in the state the tick left it in, and the tick goes on only once we
 * return.  The sample registers are those the tick interrupted, the
 * workload's, not this NMI's, which are the tick's own.  Whether the NMI
 * is claimed depends only on the claims owed.
 */
static int ptsim_nmi_handler(unsigned int cmd, struct pt_regs *regs)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_nmi_stats *st = this_cpu_ptr(&ptsim_nmi_stats);
	local_t *owed = this_cpu_ptr(&ptsim_nmi_owed);
	unsigned int why = xchg(&c->pmi, 0);
	bool claim = why;

	if (local_read(owed) > 0) {
		if (claim || local_clock() - __this_cpu_read(ptsim_nmi_last_sent) <=
		    PTSIM_NMI_GRACE_NS) {
			local_dec(owed);
			claim = true;
		} else {
			local_set(owed, 0);
		}
	}

	if (why) {
		ptsim_irqoff_note(PTSIM_IRQOFF_NMI_WAIT, c->pmi_sent);
		WRITE_ONCE(st->handled, st->handled + 1);
		if (why & PTSIM_PMI_MARK)
			WRITE_ONCE(st->mark, st->mark + 1);
		if (why & (PTSIM_PMI_INT | PTSIM_PMI_FULL))
			WRITE_ONCE(st->pmi, st->pmi + 1);
		ptsim_pmi_handle(c, why, c->pmi_regs);
	} else if (claim) {
		WRITE_ONCE(st->stray, st->stray + 1);
	}
	return claim ? NMI_HANDLED : NMI_DONE;
}

/*
 * The delivery hook: post the reasons, send the NMI, wait for the handler
 * to take them, at most PTSIM_NMI_WAIT_NS.  If it has not by then, the
 * reasons are taken back and handled here, and this event's PMIs are
 * handled in place from now on (see the top).
 *
 * Context: the engine's tick, hard interrupt, on the CPU of @c.
 */
static bool ptsim_nmi_pmi(struct ptsim_cpu *c, unsigned int why)
{
	struct ptsim_nmi_stats *st = this_cpu_ptr(&ptsim_nmi_stats);
	struct ptsim_event *ev = c->event->pmu_private;

	c->pmi_regs = get_irq_regs();
	c->pmi_sent = local_clock();
	__this_cpu_write(ptsim_nmi_last_sent, c->pmi_sent);
	if (local_read(this_cpu_ptr(&ptsim_nmi_owed)) < PTSIM_NMI_MAX_OWED)
		local_inc(this_cpu_ptr(&ptsim_nmi_owed));
	/* What the handler reads before the reasons it finds them by. */
	barrier();
	WRITE_ONCE(c->pmi, why);
	WRITE_ONCE(st->sent, st->sent + 1);
	/* The reasons are posted before the NMI can look for them. */
	barrier();
	__apic_send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);

	while (READ_ONCE(c->pmi)) {
		if (local_clock() - c->pmi_sent <= PTSIM_NMI_WAIT_NS) {
			cpu_relax();
			continue;
		}
		why = xchg(&c->pmi, 0);
		if (!why)
			break;
		WRITE_ONCE(st->late, st->late + 1);
		ev->nmi_late = true;
		c->hooks[PTSIM_HOOK_DELIVERY] = &ptsim_irq_hooks;
		ptsim_irqoff_note(PTSIM_IRQOFF_NMI_WAIT, c->pmi_sent);
		return ptsim_pmi_handle(c, why, c->pmi_regs);
	}
	/* What the handler left: a transaction open, or none. */
	barrier();
	return READ_ONCE(c->buf);
}

static const struct ptsim_hooks ptsim_nmi_hooks = {
	.pmi	= ptsim_nmi_pmi,
};

/**
 * ptsim_nmi_delivery() - the NMI delivery, if this machine has it
 *
 * Return: the hooks, or NULL without a local APIC or if the NMI handler
 * could not be registered; the engine then handles its PMIs in place.
 */
const struct ptsim_hooks *ptsim_nmi_delivery(void)
{
	return ptsim_nmi_registered ? &ptsim_nmi_hooks : NULL;
}

static int ptsim_nmi_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_nmi_stats *st = per_cpu_ptr(&ptsim_nmi_stats, cpu);

		seq_printf(m, "cpu%u sent %llu handled %llu pmi %llu mark %llu late %llu stray %llu\n",
			   cpu, READ_ONCE(st->sent), READ_ONCE(st->handled),
			   READ_ONCE(st->pmi), READ_ONCE(st->mark),
			   READ_ONCE(st->late), READ_ONCE(st->stray));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ptsim_nmi);

void __init ptsim_nmi_init(struct dentry *dir)
{
	int ret;

	if (!boot_cpu_has(X86_FEATURE_APIC)) {
		pr_info("no local APIC: PMIs are handled in the tick's interrupt\n");
		return;
	}
	ret = register_nmi_handler(NMI_UNKNOWN, ptsim_nmi_handler, 0, "ptsim");
	if (ret) {
		pr_warn("NMI handler not registered (%d): PMIs are handled in the tick's interrupt\n",
			ret);
		return;
	}
	ptsim_nmi_registered = true;
	debugfs_create_file("nmi", 0400, dir, NULL, &ptsim_nmi_fops);
}

/* At unload, with no ptsim event left: no NMI of ours is in flight. */
void ptsim_nmi_exit(void)
{
	if (!ptsim_nmi_registered)
		return;
	unregister_nmi_handler(NMI_UNKNOWN, "ptsim");
	ptsim_nmi_registered = false;
}
