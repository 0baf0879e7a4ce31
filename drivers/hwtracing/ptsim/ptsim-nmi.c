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
 * Which NMIs are ours.  A PMU's NMI handler reads its status register
 * and claims the NMI if the register says an interrupt is pending; the
 * reasons the tick posts (&struct ptsim_cpu.pmi) are ptsim's status
 * register.  So ptsim claims at NMI_LOCAL, beside perf and the watchdog,
 * an NMI in which it finds its reasons, as a PMU does: in the normal
 * path an NMI of ptsim's is claimed in the first round, the NMI reason
 * port is not read and no NMI_UNKNOWN handler (ipmi_watchdog's pre-NMI
 * panic, Hyper-V's latch) is ever shown it.
 *
 * An NMI sent by IPI leaves no trace in the hardware, though, so the
 * reasons may be found by another NMI than the one sent for them: one
 * that comes while they are posted (an NMI the hardware merged with
 * ours, or another sender's, whose owner claims it too); ours then comes
 * with nothing to find.  For that case, and for the NMI of a PMI the
 * tick took back (below), ptsim keeps a count: each NMI it sends is one
 * claim owed (ptsim_nmi_owed), an NMI claimed by its reasons pays one,
 * and a second handler, at NMI_UNKNOWN (called only for an NMI nobody
 * claimed and the reason port did not explain, so never in place of an
 * owner), claims an NMI without reasons while a claim is owed, one fewer
 * each time.  So ptsim claims as many NMIs as it sent, and an NMI of
 * nobody's beyond those is reported as unknown, as it should be.  A claim
 * without reasons must come within PTSIM_NMI_GRACE_NS of ptsim's last
 * activity on the CPU (a send, reasons found by an NMI, a PMI taken back:
 * ptsim_nmi_last), and claims owed are at most PTSIM_NMI_MAX_OWED, so
 * that NMIs lost by merging into another cannot pile up into a cover for
 * a real unknown NMI.  One that finds the reasons is claimed whenever it
 * comes.  The last activity, not the last send: a guest whose virtual
 * CPU the host did not run for a while gets its NMIs late by the guest's
 * clock, and the NMI that took the reasons and ours after it may both
 * come long after the send (seen: an unknown NMI panic under TCG on a
 * loaded host, with the grace measured from the send), but ours comes
 * right after the one that took the reasons.
 *
 * Two cases the count cannot see, each leaving one NMI without an owner
 * after a send: an NMI that comes after the reasons are posted but
 * before ptsim's own is sent takes them, and pays the claim as ours
 * would, and ours then finds neither reasons nor a claim owed; and
 * ptsim's NMI that comes while another sender's flag is up (the kernel's
 * backtrace IPI, tests/modules/nmi_foreign) is claimed by that sender
 * too, so the sender's own NMI, when it comes, has no owner (a real PMU
 * has the same problem, which the kernel's back-to-back logic covers
 * only when the two NMIs come back to back).  The handler cannot tell
 * those NMIs apart from ours (nothing can be set atomically with the
 * APIC write that sends ours, nor seen of the other handlers' verdicts),
 * so each send also leaves one spare claim: the NMI_UNKNOWN handler
 * claims an NMI without reasons and without a claim owed if it comes
 * within PTSIM_NMI_GRACE_NS of ptsim's last activity, once per send.
 * Seen without it: "NMI received for unknown reason" (a panic with
 * unknown_nmi_panic) under nmi_foreign's NMIs, in both ways.  The price:
 * a real unknown NMI (the NMI button, a BMC) that comes within 100 ms of
 * ptsim's last activity may be taken for ptsim's, one per ptsim NMI at
 * most (AMD's perf takes every one within 100 ms of its last NMI).
 *
 * The sender posts the reasons before it owes the claim: an NMI that
 * comes between finds the reasons and is claimed by them (it stands in
 * for ours, and pays nothing, as none is owed yet), and ours then comes
 * with nothing to find and pays the claim.  Either way an NMI that comes
 * while the reasons are posted is taken for ptsim's, as an NMI that comes
 * while a PMU's status bit is set is taken for the PMU's: there is
 * nothing else to tell them apart by.
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
 * sent: NMIs raised; handled: NMIs claimed at NMI_LOCAL for the reasons
 * found in them; pmi and mark: those reasons handled in NMI; late: PMIs
 * the engine took back and handled in place because their NMI had not
 * come within PTSIM_NMI_WAIT_NS; stray: NMIs claimed at NMI_UNKNOWN, by
 * the count (the NMI of a late PMI, or one whose reasons another NMI
 * took).
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
/*
 * How long after ptsim's last activity on the CPU a claim without reasons
 * may be made: the window of AMD's perf, which claims every unknown NMI
 * within 100 ms of one it handled (perf_nmi_window, for the same reason:
 * its counters' NMIs carry no status).  Unlike AMD's, ptsim's claims in
 * the window are limited by count: those owed and one spare per send.
 */
#define PTSIM_NMI_GRACE_NS	(100 * NSEC_PER_MSEC)
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
 * NMIs this CPU sent itself and not yet claimed (see the top).  Raised by
 * the tick, with interrupts off but not NMIs, so with local_inc();
 * lowered only in NMI, which nothing on this CPU interrupts, with
 * local_dec() or local_set().
 */
static DEFINE_PER_CPU(local_t, ptsim_nmi_owed);
/*
 * The local_clock() of ptsim's last activity on this CPU (see the top):
 * written by the tick and by the NMI that interrupts it, read in NMI.  A
 * u64 store is single-copy atomic on x86-64, the only architecture this
 * file is built for (the Makefile).
 */
static DEFINE_PER_CPU(u64, ptsim_nmi_last);
/*
 * The last send's spare claim (see the top) is still there: set by the
 * tick at each send, taken by the first unowned NMI without reasons
 * that finds no claim owed, within PTSIM_NMI_GRACE_NS of the send.
 */
static DEFINE_PER_CPU(bool, ptsim_nmi_spare);
static bool ptsim_nmi_registered;

/* Pay one claim owed, if one is. */
static void ptsim_nmi_pay(local_t *owed)
{
	if (local_read(owed) > 0)
		local_dec(owed);
}

/*
 * Every NMI, at NMI_LOCAL: ours if it finds the reasons (see the top).
 * They are taken with xchg(): if the tick has taken them back first,
 * there is nothing to handle.  A plain read first spares the NMIs of
 * every other user (perf's counters, the watchdog) the locked operation:
 * the reasons are only ever posted and taken on this CPU, so a zero read
 * here is the zero the xchg() would have returned.
 *
 * A handler that finds them runs while the tick that posted them waits
 * (NMIs nest into the code they interrupt), so the transaction is in the
 * state the tick left it in, and the tick goes on only once we return.
 * The sample registers are those the tick interrupted, the workload's,
 * not this NMI's, which are the tick's own.
 */
static int ptsim_nmi_local(unsigned int cmd, struct pt_regs *regs)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_nmi_stats *st = this_cpu_ptr(&ptsim_nmi_stats);
	unsigned int why;

	if (!READ_ONCE(c->pmi))
		return NMI_DONE;
	why = xchg(&c->pmi, 0);
	if (!why)
		return NMI_DONE;
	__this_cpu_write(ptsim_nmi_last, local_clock());
	ptsim_nmi_pay(this_cpu_ptr(&ptsim_nmi_owed));
	ptsim_irqoff_note(PTSIM_IRQOFF_NMI_WAIT, c->pmi_sent);
	WRITE_ONCE(st->handled, st->handled + 1);
	if (why & PTSIM_PMI_MARK)
		WRITE_ONCE(st->mark, st->mark + 1);
	if (why & (PTSIM_PMI_INT | PTSIM_PMI_FULL))
		WRITE_ONCE(st->pmi, st->pmi + 1);
	ptsim_pmi_handle(c, why, c->pmi_regs);
	return NMI_HANDLED;
}

/*
 * An NMI nobody claimed, with no reasons of ours in it (the first round
 * would have found them): one of ours whose reasons another NMI took, or
 * whose PMI the tick took back, while a claim is owed (see the top).
 */
static int ptsim_nmi_unknown(unsigned int cmd, struct pt_regs *regs)
{
	struct ptsim_nmi_stats *st = this_cpu_ptr(&ptsim_nmi_stats);
	local_t *owed = this_cpu_ptr(&ptsim_nmi_owed);
	u64 since = local_clock() - __this_cpu_read(ptsim_nmi_last);

	if (local_read(owed) > 0 && since > PTSIM_NMI_GRACE_NS)
		local_set(owed, 0);
	if (local_read(owed) > 0) {
		local_dec(owed);
	} else if (since <= PTSIM_NMI_GRACE_NS && __this_cpu_read(ptsim_nmi_spare)) {
		/* Left without an owner by one of ours (see the top). */
		__this_cpu_write(ptsim_nmi_spare, false);
	} else {
		return NMI_DONE;
	}
	WRITE_ONCE(st->stray, st->stray + 1);
	return NMI_HANDLED;
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
	__this_cpu_write(ptsim_nmi_last, c->pmi_sent);
	/* What the handler reads before the reasons it finds them by. */
	barrier();
	WRITE_ONCE(c->pmi, why);
	WRITE_ONCE(st->sent, st->sent + 1);
	/*
	 * The reasons are posted before the claim is owed (see the top),
	 * and both before the NMI can look for them.
	 */
	barrier();
	if (local_read(this_cpu_ptr(&ptsim_nmi_owed)) < PTSIM_NMI_MAX_OWED)
		local_inc(this_cpu_ptr(&ptsim_nmi_owed));
	__this_cpu_write(ptsim_nmi_spare, true);
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
		__this_cpu_write(ptsim_nmi_last, local_clock());
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
	ret = register_nmi_handler(NMI_LOCAL, ptsim_nmi_local, 0, "ptsim");
	if (!ret) {
		ret = register_nmi_handler(NMI_UNKNOWN, ptsim_nmi_unknown, 0,
					   "ptsim");
		if (ret)
			unregister_nmi_handler(NMI_LOCAL, "ptsim");
	}
	if (ret) {
		pr_warn("NMI handlers not registered (%d): PMIs are handled in the tick's interrupt\n",
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
	unregister_nmi_handler(NMI_LOCAL, "ptsim");
	ptsim_nmi_registered = false;
}
