/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ptsim's insides, shared by its parts: the configuration fields, the
 * state of an event and of a CPU's engine, and the calls between
 *
 *   ptsim-engine.c  the engine: packets into the FIFO, the FIFO into the
 *                   AUX area through the output API, the tick
 *   ptsim-pmu.c     the PMU: struct pmu callbacks, sysfs, registration
 *   ptsim-bench.c   the benchmark mode and its debugfs figures
 *   ptsim-mark.c    ptsim_mark, the PMU whose samples go into the trace
 *
 * ptsim-pkt.h encodes the Intel PT packets themselves.
 */
#ifndef _PTSIM_H
#define _PTSIM_H

#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/types.h>

/*
 * attr.config: the bits of Intel PT's layout (intel_pt's format/) that
 * ptsim implements, at intel_pt's positions, so that tools which know
 * intel_pt's bits (perf) configure ptsim alike; see the format/
 * attributes below.  Every other bit of config is reserved.
 */
#define PTSIM_CFG_PT		BIT_ULL(0)	/* accepted, always on */
#define PTSIM_CFG_TSC		BIT_ULL(10)
#define PTSIM_CFG_BRANCH	BIT_ULL(13)
#define PTSIM_CFG_PSB		GENMASK_ULL(27, 24)
#define PTSIM_CFG_MASK		(PTSIM_CFG_PT | PTSIM_CFG_TSC | \
				 PTSIM_CFG_BRANCH | PTSIM_CFG_PSB)

/*
 * attr.config1: the simulation, which intel_pt has no bits for, and what
 * the PERF_RECORD_AUX flags say.
 */
#define PTSIM_CFG1_FMT		GENMASK_ULL(7, 0)
#define PTSIM_CFG1_LOSS		GENMASK_ULL(9, 8)
#define PTSIM_CFG1_RATE		GENMASK_ULL(25, 10)
#define PTSIM_CFG1_PERIOD	GENMASK_ULL(37, 26)
#define PTSIM_CFG1_FIFO		GENMASK_ULL(42, 38)
#define PTSIM_CFG1_DRAIN	GENMASK_ULL(54, 43)
#define PTSIM_CFG1_REGION	GENMASK_ULL(58, 55)
#define PTSIM_CFG1_NOFLUSH	BIT_ULL(59)
#define PTSIM_CFG1_IRQ_PMI	BIT_ULL(60)
#define PTSIM_CFG1_TNT		BIT_ULL(61)
#define PTSIM_CFG1_MASK		GENMASK_ULL(61, 0)

/* attr.config2: the benchmark mode. */
#define PTSIM_CFG2_BENCH	GENMASK_ULL(4, 0)
#define PTSIM_CFG2_BENCH_SPLIT	BIT_ULL(5)
#define PTSIM_CFG2_MASK		GENMASK_ULL(5, 0)

#define PTSIM_LOSS_NONE		0
#define PTSIM_LOSS_PARTIAL	1
#define PTSIM_LOSS_COLLISION	2

#define PTSIM_DEF_RATE		64
#define PTSIM_MAX_RATE		4096
#define PTSIM_DEF_PERIOD_US	100
#define PTSIM_MIN_PERIOD_US	10
#define PTSIM_DEF_FIFO_SHIFT	13
#define PTSIM_MIN_FIFO_SHIFT	9
#define PTSIM_MAX_FIFO_SHIFT	22
#define PTSIM_MAX_REGION_SHIFT	10
/*
 * What a user without CAP_PERFMON may cost the machine (see "Privileges"
 * in ptsim.rst, where the bound is stated; these are its one home, shown
 * in caps/): at most PTSIM_USER_MAX_RATE records a tick, at most one tick
 * every PTSIM_USER_MIN_PERIOD_US, at most PTSIM_USER_PMIS_PER_TICK PMIs
 * in a tick whatever the attributes (ptsim_pmi_room()), a FIFO, which a
 * stop or a flush drains with interrupts off, of at most 64 KiB, and no
 * benchmark mode.
 */
#define PTSIM_USER_MAX_RATE	256
#define PTSIM_USER_MIN_PERIOD_US	PTSIM_DEF_PERIOD_US
#define PTSIM_USER_MAX_FIFO_SHIFT	16
#define PTSIM_USER_PMIS_PER_TICK	2
/* Benchmark transactions are 64 B .. 1 MiB. */
#define PTSIM_MIN_BENCH_SHIFT	6
#define PTSIM_MAX_BENCH_SHIFT	20

/* A data record: PTW with the sequence number, then PADs or short TNTs. */
#define PTSIM_DATA_SIZE		16
/* Largest record we build (PSB+ with a FUP is 41 bytes). */
#define PTSIM_MAX_RECORD	64
/* Core:bus ratio reported by CBR packets. */
#define PTSIM_CBR_RATIO		0x20

/**
 * struct ptsim_region - one entry of the region table, like a ToPA entry
 * @pages: the region's pages: a slice of the page array perf allocated
 */
struct ptsim_region {
	void		**pages;
};

/**
 * struct ptsim_buf - the AUX buffer as the engine sees it
 * @size: buffer size in bytes, a power of two
 * @region_shift: log2 of the region size, which is no larger than @size
 * @snapshot: overwrite mode (the AUX area is mapped read-only)
 * @seq: number of the next data record; numbers start at 0 per buffer
 * @nr_regions: number of entries in @regions
 * @regions: the region table
 *
 * The region entries point into perf's array of AUX pages.  That array
 * outlives this structure: perf calls pmu::free_aux before it frees the
 * pages, and no transaction can be open by then.
 *
 * Built by ptsim_setup_aux() when the AUX area is mapped, and handed back
 * by perf_aux_output_begin() for every transaction.  It is shared by every
 * event that writes into the same AUX area (inherited children, events
 * redirected with PERF_EVENT_IOC_SET_OUTPUT) and only used inside an AUX
 * transaction, of which the perf core allows one at a time per buffer, so
 * it needs no lock.
 *
 * Like a ToPA table, the buffer is a list of output regions.  Here they
 * are of equal size, so the region of an offset is found by a shift.
 */
struct ptsim_buf {
	unsigned long		size;
	unsigned int		region_shift;
	bool			snapshot;
	u64			seq;
	unsigned int		nr_regions;
	struct ptsim_region	regions[] __counted_by(nr_regions);
};

/**
 * struct ptsim_event - per-event state: the configuration and the FIFO
 * @rate: data records produced per tick
 * @period: tick period
 * @drain: bytes drained into the AUX buffer per tick, ULONG_MAX for all
 * @psb_period: bytes of produced trace between two PSB+ records
 * @tsc: PSB+ carries a TSC packet (config bit tsc)
 * @tnt: data records are filled with TNT packets that match no code
 * (config1 bit tnt, which needs config bit branch), otherwise with PADs
 * @region_shift: region size is PAGE_SIZE << @region_shift, for setup_aux
 * @noflush: pmu::flush declines, so the perf core's generic path is used
 * @irq_pmi: the PMI is handled in the engine's hard interrupt, not in NMI
 * @unprivileged: opened by a user without CAP_PERFMON (for an inherited
 * event: its parent was), so bound by the PTSIM_USER_* limits
 * @nmi_late: an NMI of this event's did not come in time (see "The PMI"
 * in ptsim-engine.c): its PMIs are handled in place from then on
 * @aux_flags: PMU format type bits for every transaction's PERF_RECORD_AUX
 * @loss_flag: the flag for a transaction that holds an OVF packet
 * (PERF_AUX_FLAG_PARTIAL or _COLLISION), or 0
 * @bench_shift: benchmark mode if not 0: each tick runs @rate transactions
 * of 2^@bench_shift bytes instead of producing packets (see ptsim_bench())
 * @bench_split: the benchmark mode also times the end and the beginning of
 * each transaction on their own
 * @fifo: the FIFO, a byte ring of @fifo_size bytes: @own_fifo, or while
 * the event is active the engine's (&struct ptsim_cpu.fifo), which holds
 * PTSIM_USER_MAX_FIFO_SHIFT bytes
 * @own_fifo: a FIFO larger than the engine's, the event's own (only with
 * CAP_PERFMON), or NULL
 * @fifo_size: FIFO size in bytes, a power of two
 * @fifo_head: producer index
 * @fifo_tail: DMA (consumer) index
 * @since_psb: bytes produced since the last PSB+
 * @lost: data bytes dropped and not yet reported by an OVF
 * @ovf_pending: an overflow is to be reported before the next record
 * @queued: bytes queued into the FIFO and not yet added to the event's count
 * @at: the user IP the trace is at: the last one found, 0 until one is
 * (see "Control flow" in ptsim-engine.c); like the FIFO, only touched on
 * the CPU the event is active on, with interrupts disabled (pmu::start,
 * pmu::stop and the tick), never from the NMI handler
 *
 * The configuration is decoded once, by ptsim_event_init().  Each record
 * in the FIFO is preceded by a one-byte length tag, the packet boundary a
 * real FIFO also keeps, so the DMA can honour the region alignment rule.
 * The indices run free and are masked on access.
 */
struct ptsim_event {
	unsigned int	rate;
	ktime_t		period;
	unsigned long	drain;
	unsigned long	psb_period;
	bool		tsc;
	bool		tnt;
	unsigned int	region_shift;
	bool		noflush;
	bool		irq_pmi;
	bool		unprivileged;
	bool		nmi_late;
	u64		aux_flags;
	u64		loss_flag;
	unsigned int	bench_shift;
	bool		bench_split;

	u8		*fifo;
	u8		*own_fifo;
	u32		fifo_size;
	u32		fifo_head;
	u32		fifo_tail;
	unsigned long	since_psb;
	u32		lost;
	bool		ovf_pending;
	u64		queued;
	u64		at;
};

/*
 * Why a PMI was raised (&struct ptsim_cpu.pmi): the write position reached
 * the watermark or a region end must be padded (INT), the buffer is full
 * (FULL), the ptsim_mark counter overflowed (MARK).
 */
#define PTSIM_PMI_INT		BIT(0)
#define PTSIM_PMI_FULL		BIT(1)
#define PTSIM_PMI_MARK		BIT(2)

struct ptsim_cpu;

/**
 * struct ptsim_hooks - a part that plugs into the engine
 * @run: a tick's work in place of packet production (the benchmark mode).
 * Return: false if the engine must stop.
 * @ticked: called at every tick while tracing, after the packets of the
 * tick are in the FIFO (ptsim_mark).  It may raise a PMI with
 * %PTSIM_PMI_MARK through ptsim_pmi().
 * @overflow: the PMI handler's part for %PTSIM_PMI_MARK, with the
 * registers the tick interrupted (the workload's), or NULL.
 * @pmi: the delivery of a PMI the engine raised while running (in its
 * tick): handled in place (the tick's hard interrupt) or by an NMI.
 * Returns when the handler has run, with ptsim_pmi_handle()'s result.
 *
 * The engine keeps one table per CPU (&struct ptsim_cpu.hooks), a slot per
 * kind of part, and knows none of them by name: ptsim_start() fills the
 * delivery and mode slots from the event's configuration, ptsim_mark its
 * own slot while its event is on the CPU.  Every callback runs on the
 * engine's CPU with interrupts disabled (@overflow possibly in NMI).
 */
struct ptsim_hooks {
	bool (*run)(struct ptsim_cpu *c, struct ptsim_event *ev);
	void (*ticked)(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip);
	void (*overflow)(struct ptsim_cpu *c, struct pt_regs *regs);
	bool (*pmi)(struct ptsim_cpu *c, unsigned int why);
};

enum ptsim_hook_slot {
	PTSIM_HOOK_DELIVERY,	/* how a PMI is delivered: IRQ or NMI */
	PTSIM_HOOK_MODE,	/* what a tick does: the benchmark mode */
	PTSIM_HOOK_MARK,	/* ptsim_mark, while its event is here */
	PTSIM_NR_HOOKS
};

/**
 * struct ptsim_cpu - the trace engine of one CPU
 * @timer: the engine tick, a pinned hard-irq hrtimer
 * @event: the event added on this CPU by pmu::add, NULL if none
 * @handle: the output handle of the open AUX transaction
 * @buf: the buffer of the open transaction; NULL when none is open
 * @written: bytes written in the open transaction (in overwrite mode,
 * region padding included)
 * @tracing: producing packets, that is, enabled and not paused
 * @lossy: an OVF packet went into the open transaction
 * @mark: the ptsim_mark event in @event's group, NULL if none; cleared
 * when @event leaves the engine (see ptsim-mark.c)
 * @hooks: the parts plugged into the engine, by &enum ptsim_hook_slot
 * @in_tick: the tick is running: a PMI goes through the delivery hook
 * @pmi_cap: the most PMIs a tick may raise for @event (PTSIM_USER_PMIS_PER_TICK
 * for an unprivileged event, UINT_MAX otherwise), set by pmu::start
 * @tick_pmis: PMIs raised by the running tick
 * @tick_bytes: bytes written into the AUX area by the running tick
 * @pmi_carry: PTSIM_PMI_MARK reasons the running or the last tick could
 * not raise within @pmi_cap, carried to the next PMI
 * @stop_req: pmu::stop came in NMI or inside the tick (a throttle), where
 * the stop's work cannot be done: the tick, or whichever of pmu::start,
 * stop, flush comes first, does it (see ptsim_stop()); set in NMI, so
 * read and cleared with READ_ONCE() and WRITE_ONCE()
 * @pmi_regs: the registers the tick interrupted, the workload's, for the
 * handler of a PMI the tick raised (what hardware reports in a sample);
 * only valid while that tick runs
 * @pmi_sent: local_clock() when the tick sent the NMI of its PMI
 * @fifo: the engine's FIFO, 1 << PTSIM_USER_MAX_FIFO_SHIFT bytes: what an
 * event that asks for no larger one writes into while it is active here;
 * allocated when ptsim loads, so that an event costs no FIFO of its own
 * (see "Privileges" in ptsim.rst)
 * @pmi: the PTSIM_PMI_* reasons of a PMI raised and not yet handled; the
 * only field an NMI handler and the code it interrupts both write, with
 * xchg() by the handler (see "The PMI" in ptsim-engine.c)
 *
 * Only used on its own CPU with interrupts disabled (see "Contexts and
 * serialisation"), so it needs no lock.
 */
struct ptsim_cpu {
	struct hrtimer			timer;
	struct perf_event		*event;
	struct perf_output_handle	handle;
	struct ptsim_buf		*buf;
	unsigned long			written;
	bool				tracing;
	bool				lossy;
	struct perf_event		*mark;
	const struct ptsim_hooks	*hooks[PTSIM_NR_HOOKS];
	bool				in_tick;
	unsigned int			pmi_cap;
	unsigned int			tick_pmis;
	unsigned long			tick_bytes;
	unsigned int			pmi_carry;
	bool				stop_req;
	struct pt_regs			*pmi_regs;
	u64				pmi_sent;
	u8				*fifo;
	unsigned int			pmi;
};

DECLARE_PER_CPU(struct ptsim_cpu, ptsim_cpus);

/* ptsim-engine.c */
struct pt_regs *ptsim_user_regs(void);
u64 ptsim_user_ip(void);
unsigned int ptsim_rec_overflow(u8 *p, u32 lost, u64 ip);
unsigned int ptsim_rec_mark(u8 *p, u32 nr, u64 ip);
void ptsim_put_control(struct ptsim_event *ev, const u8 *rec,
		       unsigned int len);
void ptsim_fifo_reset(struct ptsim_event *ev);
void ptsim_account(struct perf_event *event);
void ptsim_aux_copy(struct ptsim_buf *buf, unsigned long pos,
		    const void *src, unsigned int len);
bool ptsim_begin(struct ptsim_cpu *c, struct perf_event *event);
void ptsim_commit(struct ptsim_cpu *c);
bool ptsim_interrupt(struct ptsim_cpu *c);
bool ptsim_pmi(struct ptsim_cpu *c, unsigned int why);
bool ptsim_pmi_room(const struct ptsim_cpu *c);
void ptsim_pmi_raise(struct ptsim_cpu *c, unsigned int why);
bool ptsim_pmi_handle(struct ptsim_cpu *c, unsigned int why,
		      struct pt_regs *regs);
extern const struct ptsim_hooks ptsim_irq_hooks;
bool ptsim_drain(struct ptsim_cpu *c, struct ptsim_event *ev,
		 unsigned long budget);
void ptsim_trace_on(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip);
void ptsim_trace_off(struct ptsim_cpu *c, struct ptsim_event *ev);
void ptsim_halt(struct ptsim_cpu *c, struct perf_event *event);
void ptsim_engine_stop(struct ptsim_cpu *c, struct perf_event *event);
enum hrtimer_restart ptsim_tick(struct hrtimer *timer);

/*
 * The stretches with interrupts disabled that ptsim's own entries take,
 * for debugfs ptsim/irqoff: the longest of each kind per CPU.
 */
enum ptsim_irqoff_kind {
	PTSIM_IRQOFF_TICK,
	PTSIM_IRQOFF_STOP,
	PTSIM_IRQOFF_FLUSH,
	PTSIM_IRQOFF_NMI_WAIT,
	PTSIM_NR_IRQOFF
};

void ptsim_irqoff_note(enum ptsim_irqoff_kind kind, u64 t0);
void __init ptsim_irqoff_debugfs_init(struct dentry *dir);
void __init ptsim_tick_debugfs_init(struct dentry *dir);

/* ptsim-pmu.c */
bool ptsim_is_engine(const struct pmu *pmu);

/*
 * What ptsim does only when built in: AUX sampling (pmu::snapshot_aux)
 * and ptsim_mark's PMI, which call perf_output_copy(),
 * perf_output_copy_aux() and perf_event_overflow(), none of which the
 * perf core exports.  As a module, ptsim has neither (caps/aux_sample and
 * caps/mark_pmi say 0): a group member with attr.aux_sample_size under a
 * ptsim leader is refused with EINVAL, as for any PMU without
 * pmu::snapshot_aux, and a sampling ptsim_mark event without aux_output
 * with EOPNOTSUPP (ptsim_mark_event_init()).
 */
#define PTSIM_BUILTIN	IS_BUILTIN(CONFIG_PTSIM)

/* ptsim-flush.c */
bool __init ptsim_flush_init(struct pmu *pmu);

/* ptsim-bench.c */
extern const struct ptsim_hooks ptsim_bench_hooks;
void __init ptsim_bench_debugfs_init(struct dentry *dir);

/* ptsim-mark.c */
int __init ptsim_mark_register(void);
void ptsim_mark_unregister(void);

/* ptsim-nmi.c (x86-64): the delivery in NMI, NULL where there is none */
#ifdef CONFIG_X86_64
const struct ptsim_hooks *ptsim_nmi_delivery(void);
void __init ptsim_nmi_init(struct dentry *dir);
void ptsim_nmi_exit(void);
#else
static inline const struct ptsim_hooks *ptsim_nmi_delivery(void)
{
	return NULL;
}

static inline void ptsim_nmi_init(struct dentry *dir) { }
static inline void ptsim_nmi_exit(void) { }
#endif

#endif /* _PTSIM_H */
