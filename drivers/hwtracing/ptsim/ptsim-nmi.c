// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim's PMI as an NMI, as a trace unit's is on x86.
 *
 * The engine raises its PMI from the tick (see "The PMI" in
 * ptsim-engine.c); this delivery sends the CPU an NMI to itself through
 * its local APIC and waits until the handler below has run.  The handler
 * recognises its own NMIs by the reasons the engine left in &struct
 * ptsim_cpu.pmi, as intel_pt recognises its PMI by a status bit, and does
 * what intel_pt_interrupt() does: perf_get_aux(), the end of the
 * transaction (with TRUNCATED if the buffer is full), the begin of the
 * next; and for ptsim_mark, perf_event_overflow() as for a hardware
 * counter, so that AUX sampling and aux_pause/aux_resume run in NMI too.
 *
 * debugfs ptsim/nmi has a line per CPU:
 *   "cpu<N> sent <n> handled <n> pmi <n> mark <n> late <n>"
 * sent: NMIs raised; handled: NMIs the handler found reasons in; pmi and
 * mark: those reasons handled in NMI; late: PMIs the engine handled in
 * place because their NMI had not come within PTSIM_NMI_WAIT_NS.
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

#include "ptsim.h"

/* How long the engine waits for its NMI before it handles the PMI itself. */
#define PTSIM_NMI_WAIT_NS	(10 * NSEC_PER_MSEC)

struct ptsim_nmi_stats {
	u64	sent;
	u64	handled;
	u64	pmi;
	u64	mark;
	u64	late;
};

static DEFINE_PER_CPU(struct ptsim_nmi_stats, ptsim_nmi_stats);
/* NMIs sent and not yet received: the handler claims these. */
static DEFINE_PER_CPU(unsigned int, ptsim_nmi_inflight);
static bool ptsim_nmi_registered;

/*
 * The handler runs for every NMI of this CPU, ours or not.  An NMI we
 * sent is claimed (NMI_HANDLED) even if the engine has taken its reasons
 * back in the meantime (a late PMI), so that it is not reported as an
 * unknown NMI; one we did not send is claimed only if it found reasons,
 * which means that two NMIs were merged into one.
 */
static int ptsim_nmi_handler(unsigned int cmd, struct pt_regs *regs)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_nmi_stats *st = this_cpu_ptr(&ptsim_nmi_stats);
	int ret = NMI_DONE;
	unsigned int why;

	if (this_cpu_read(ptsim_nmi_inflight)) {
		this_cpu_dec(ptsim_nmi_inflight);
		ret = NMI_HANDLED;
	}
	why = xchg(&c->pmi, 0);
	if (!why)
		return ret;

	WRITE_ONCE(st->handled, st->handled + 1);
	if (why & PTSIM_PMI_MARK)
		WRITE_ONCE(st->mark, st->mark + 1);
	if (why & (PTSIM_PMI_INT | PTSIM_PMI_FULL))
		WRITE_ONCE(st->pmi, st->pmi + 1);
	ptsim_pmi_handle(c, why, regs);
	return NMI_HANDLED;
}

/*
 * The delivery hook: post the reasons, send the NMI, wait for the handler
 * to take them.  The wait is bounded: an NMI that does not come in
 * PTSIM_NMI_WAIT_NS (it always does here; the bound is against a
 * platform that drops it) is counted as late and handled in place.
 *
 * Context: the engine's tick, hard interrupt, on the CPU of @c.
 */
static bool ptsim_nmi_pmi(struct ptsim_cpu *c, unsigned int why)
{
	struct ptsim_nmi_stats *st = this_cpu_ptr(&ptsim_nmi_stats);
	u64 t0;

	WRITE_ONCE(c->pmi, why);
	this_cpu_inc(ptsim_nmi_inflight);
	WRITE_ONCE(st->sent, st->sent + 1);
	/* The reasons are posted before the NMI can look for them. */
	barrier();
	__apic_send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);

	t0 = local_clock();
	while (READ_ONCE(c->pmi)) {
		if (local_clock() - t0 > PTSIM_NMI_WAIT_NS) {
			why = xchg(&c->pmi, 0);
			if (!why)
				break;
			WRITE_ONCE(st->late, st->late + 1);
			return ptsim_pmi_handle(c, why, get_irq_regs());
		}
		cpu_relax();
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

		seq_printf(m, "cpu%u sent %llu handled %llu pmi %llu mark %llu late %llu\n",
			   cpu, READ_ONCE(st->sent), READ_ONCE(st->handled),
			   READ_ONCE(st->pmi), READ_ONCE(st->mark),
			   READ_ONCE(st->late));
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
	ret = register_nmi_handler(NMI_LOCAL, ptsim_nmi_handler, 0, "ptsim");
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
	unregister_nmi_handler(NMI_LOCAL, "ptsim");
	ptsim_nmi_registered = false;
}
