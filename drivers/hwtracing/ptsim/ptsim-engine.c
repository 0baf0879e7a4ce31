// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim: a simulated Intel PT trace unit, writing through the perf AUX area.
 *
 * The driver models the parts of an instruction trace unit that matter to
 * the AUX output path: an engine per CPU that produces packets into an
 * on-chip FIFO, a DMA that drains the FIFO into memory described by a
 * table of regions, interrupts at the watermark, a stop when memory is
 * full and an overflow when the FIFO is.  The packets are real Intel PT
 * packets, so the traces decode with libipt.  The user-visible behaviour
 * is described in Documentation/admin-guide/perf/ptsim.rst, the AUX output
 * API it uses in Documentation/driver-api/perf-aux.rst.
 *
 * This file is the engine: the records it produces into the FIFO, the
 * FIFO, the DMA that drains it into the AUX area through the output API,
 * and the tick that drives them.  The PMU around it is in ptsim-pmu.c.
 */

/**
 * DOC: Contexts and serialisation
 *
 * Everything that touches the engine of a CPU runs on that CPU with
 * interrupts disabled: pmu::add/del/start/stop/flush are called by the
 * perf core under the context lock (IRQs off) on the event's CPU, and the
 * engine tick is a pinned hard-irq hrtimer.  So the per-CPU state (&struct
 * ptsim_cpu), the FIFO of the active event and the open AUX transaction
 * need no locks: at most one of these runs at a time on a CPU, and an
 * event is active on one CPU at a time.
 *
 * ptsim's own NMI handler (see "The PMI") is no exception: it runs only
 * while the tick that raised the PMI waits for it, and the tick touches
 * nothing until the handler has returned.
 *
 * The exceptions are pause/resume (PERF_EF_PAUSE / PERF_EF_RESUME) and a
 * throttle's stop, which may come from NMI context in the middle of a
 * tick.  For a pause the perf core records the state in
 * event->hw.aux_paused before calling us; we do nothing else there, and
 * the engine acts on the flag: it produces no record once it is set (the
 * producer checks it before each), and writes the disable packets in the
 * tick the pause came in, or the next, as the "stop as simply as
 * possible" contract in <linux/perf_event.h> allows; a resume takes
 * effect at the next tick.  A throttle's stop is deferred the same way
 * (see ptsim_stop()).
 *
 * The AUX transaction (perf_aux_output_begin() .. perf_aux_output_end())
 * stays open while the event runs, as on hardware whose DMA owns the
 * buffer; it is ended and re-begun at every "interrupt" (watermark reached,
 * region padding) and at every flush (PERF_EVENT_IOC_FLUSH), and ended for
 * good by pmu::stop or when the buffer is full.  Whatever the FIFO holds
 * when the engine stops has either been written out by stop or is lost
 * together with a TRUNCATED record, so no FIFO content survives from one
 * activation of an event to the next.
 */
#define pr_fmt(fmt) "ptsim: " fmt

#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <asm/irq_regs.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#endif

#include "ptsim.h"
#include "ptsim-pkt.h"

DEFINE_PER_CPU(struct ptsim_cpu, ptsim_cpus);

static u64 ptsim_tsc(void)
{
#ifdef CONFIG_X86
	return rdtsc();
#else
	return local_clock();
#endif
}

/*
 * The user registers of the task on this CPU, NULL if it has none (an
 * idle CPU, a kernel thread): where its user code is, whether the tick
 * interrupted that code or the kernel working for it.
 */
struct pt_regs *ptsim_user_regs(void)
{
	/*
	 * From the engine's hrtimer, which may interrupt the task while it
	 * updates its own flags (capable() sets PF_SUPERPRIV with a plain
	 * read-modify-write): a data race by the letter, but the interrupt
	 * runs between two of the task's instructions on this CPU, and
	 * PF_KTHREAD never changes once the task exists.
	 */
	if (!current->mm || (data_race(current->flags) & PF_KTHREAD))
		return NULL;
	return task_pt_regs(current);
}

/* The user IP of the task on this CPU, 0 if it has none. */
u64 ptsim_user_ip(void)
{
	struct pt_regs *regs = ptsim_user_regs();

	/*
	 * The interrupted task may be rewriting its user registers on this
	 * CPU (emulate_vsyscall() moves ip to the return address, signal
	 * delivery to the handler): a sample of where the task is, the old
	 * IP or the new one, either right.
	 */
	return regs ? data_race(instruction_pointer(regs)) : 0;
}

/*
 * PSB+: the synchronisation point; a TSC if configured, a FUP only while
 * tracing is on.
 */
static unsigned int rec_psb_plus(const struct ptsim_event *ev, u8 *p,
				 u64 fup_ip)
{
	unsigned int n;

	n = pt_psb(p);
	if (ev->tsc)
		n += pt_tsc(p + n, ptsim_tsc());
	n += pt_cbr(p + n, PTSIM_CBR_RATIO);
	n += pt_mode_exec(p + n);
	if (fup_ip)
		n += pt_ip(p + n, PT_FUP, fup_ip);
	n += pt_ext(p + n, 0x23);	/* PSBEND */
	return n;
}

static unsigned int rec_data(const struct ptsim_event *ev, u8 *p, u64 seq)
{
	unsigned int n = pt_ptw64(p, seq);

	/*
	 * Fill the record with PADs, or in the synthetic mode (tnt) with
	 * short TNT packets, one "taken" bit each, which match no code.
	 */
	memset(p + n, ev->tnt ? 0x06 : 0x00, PTSIM_DATA_SIZE - n);
	return PTSIM_DATA_SIZE;
}

static unsigned int rec_disable(u8 *p, u64 ip)
{
	unsigned int n = pt_ip(p, PT_FUP, ip);

	return n + pt_ip(p + n, PT_TIP_PGD, 0);
}

/* A ptsim_mark sample: PTW(IP=1) with its number, and the FUP. */
unsigned int ptsim_rec_mark(u8 *p, u32 nr, u64 ip)
{
	unsigned int n = pt_ptw32_ip(p, nr);

	return n + pt_ip(p + n, PT_FUP, ip);
}

unsigned int ptsim_rec_overflow(u8 *p, u32 lost, u64 ip)
{
	unsigned int n = pt_ext(p, 0xf3);	/* OVF */

	n += pt_ptw32(p + n, lost);
	if (ip)
		n += pt_ip(p + n, PT_FUP, ip);
	return n;
}

/* ---- the FIFO ---- */

static u32 fifo_used(const struct ptsim_event *ev)
{
	return ev->fifo_head - ev->fifo_tail;
}

static void fifo_copy_in(struct ptsim_event *ev, u32 at, const u8 *src, u32 len)
{
	u32 off = at & (ev->fifo_size - 1);
	u32 first = min(len, ev->fifo_size - off);

	memcpy(ev->fifo + off, src, first);
	memcpy(ev->fifo, src + first, len - first);
}

static void fifo_copy_out(struct ptsim_event *ev, u32 at, u8 *dst, u32 len)
{
	u32 off = at & (ev->fifo_size - 1);
	u32 first = min(len, ev->fifo_size - off);

	memcpy(dst, ev->fifo + off, first);
	memcpy(dst + first, ev->fifo, len - first);
}

/* Queue one record; false if the FIFO has no room for it. */
static bool fifo_put(struct ptsim_event *ev, const u8 *rec, unsigned int len)
{
	u8 tag = len;

	if (ev->fifo_size - fifo_used(ev) < len + 1)
		return false;
	fifo_copy_in(ev, ev->fifo_head, &tag, 1);
	fifo_copy_in(ev, ev->fifo_head + 1, rec, len);
	ev->fifo_head += len + 1;
	ev->queued += len;
	return true;
}

/*
 * The event's count is the number of bytes queued into its FIFO, every
 * record included (the length tags are the FIFO's own and not counted).
 * Folded in at the end of a tick, by start, stop and flush, all on the
 * event's CPU with interrupts disabled.
 */
void ptsim_account(struct perf_event *event)
{
	struct ptsim_event *ev = event->pmu_private;

	local64_add(ev->queued, &event->count);
	ev->queued = 0;
}

/*
 * Copy the oldest record out of the FIFO, leaving it there; returns its
 * length, 0 if none.  fifo_pop() takes it out once it is written.
 */
static unsigned int fifo_peek(struct ptsim_event *ev, u8 *rec)
{
	u8 len;

	if (!fifo_used(ev))
		return 0;
	fifo_copy_out(ev, ev->fifo_tail, &len, 1);
	fifo_copy_out(ev, ev->fifo_tail + 1, rec, len);
	return len;
}

static void fifo_pop(struct ptsim_event *ev, unsigned int len)
{
	ev->fifo_tail += len + 1;
}

void ptsim_fifo_reset(struct ptsim_event *ev)
{
	ev->fifo_tail = ev->fifo_head;
	ev->ovf_pending = false;
	ev->lost = 0;
}

/*
 * Queue a control record (PSB+, enable, disable).  If the FIFO is full it
 * is dropped like any packet the hardware cannot store, and the overflow
 * is reported; it carries no sequence number, so the lost byte count,
 * which describes data records, is not changed.
 */
void ptsim_put_control(struct ptsim_event *ev, const u8 *rec, unsigned int len)
{
	if (!fifo_put(ev, rec, len))
		ev->ovf_pending = true;
}

/* Bytes from @pos (an AUX offset) to the end of its region. */
static unsigned long region_room(const struct ptsim_buf *buf, unsigned long pos)
{
	unsigned long size = 1UL << buf->region_shift;

	return size - (pos & (size - 1));
}

/* ---- the DMA: from the FIFO into the AUX area ---- */

void ptsim_aux_copy(struct ptsim_buf *buf, unsigned long pos,
		    const void *src, unsigned int len)
{
	while (len) {
		unsigned long off = pos & (buf->size - 1);
		struct ptsim_region *r = &buf->regions[off >> buf->region_shift];
		unsigned long in = off & ((1UL << buf->region_shift) - 1);
		unsigned int n = min_t(unsigned long, len,
				       PAGE_SIZE - offset_in_page(in));
		u8 *page = r->pages[in >> PAGE_SHIFT];

		if (src) {
			memcpy(page + offset_in_page(in), src, n);
			src += n;
		} else {
			memset(page + offset_in_page(in), 0, n);	/* PAD */
		}
		pos += n;
		len -= n;
	}
}

/**
 * ptsim_begin() - open an AUX transaction for the engine of this CPU
 * @c: the trace engine of this CPU
 * @event: the event the engine writes for
 *
 * Asks perf_aux_output_begin() for the AUX buffer of @event (of its parent,
 * for an inherited event) and keeps what it returns, the &struct ptsim_buf
 * built by ptsim_setup_aux(), in @c->buf.  Outside overwrite mode the
 * transaction may then write handle.size bytes from handle.head on; it
 * stays open until ptsim_commit() ends it.
 *
 * Context: the CPU of @c, interrupts disabled (pmu::start or the tick).
 * Return: true if the transaction is open.  False if @event has no AUX
 * area, its AUX area is being unmapped, or the buffer is full; in the last
 * case perf has woken the consumer and marked the event to be disabled.
 */
bool ptsim_begin(struct ptsim_cpu *c, struct perf_event *event)
{
	struct ptsim_buf *buf;

	c->written = 0;
	c->lossy = false;
	buf = perf_aux_output_begin(&c->handle, event);
	/*
	 * Publish the transaction last: ptsim_snapshot_aux(), which may
	 * interrupt us on this CPU, trusts the handle and @c->written only
	 * while @c->buf is set.
	 */
	barrier();
	WRITE_ONCE(c->buf, buf);
	return buf;
}

/**
 * ptsim_commit() - end the AUX transaction, publishing what it wrote
 * @c: the trace engine of this CPU, with a transaction open
 *
 * Orders the data stores before the aux_head update and calls
 * perf_aux_output_end(), which moves aux_head, logs a PERF_RECORD_AUX for
 * the transaction and wakes the consumer if the watermark was crossed or
 * the transaction was truncated.
 *
 * In overwrite (snapshot) mode perf keeps no head of its own: the driver
 * hands it the write position in handle.head, as intel_pt and arm_spe_pmu
 * do an offset into the buffer (the hardware's output pointer), here the
 * offset the transaction began at plus everything it wrote, modulo the
 * buffer's size; perf_aux_output_begin() hands it back as the next
 * transaction's handle.head.  The size of the record is what the
 * transaction left in the buffer, at most its size, so that a consumer
 * can tell from the records how much of the buffer is new.
 *
 * Context: the CPU of @c, interrupts disabled.
 */
void ptsim_commit(struct ptsim_cpu *c)
{
	struct perf_output_handle *h = &c->handle;
	struct ptsim_event *ev = h->event->pmu_private;
	struct ptsim_buf *buf = c->buf;
	unsigned long size = c->written;
	u64 flags = ev->aux_flags | (c->lossy ? ev->loss_flag : 0);

	/*
	 * The record's flags, as configured: the format type, which the
	 * perf core reports on every record but does not emit a record
	 * for, and the loss flag of a transaction that holds a gap (an
	 * OVF), which gets a record even with nothing else to say.
	 */
	if (flags)
		perf_aux_output_flag(h, flags);
	c->lossy = false;

	/* Withdraw the transaction from ptsim_snapshot_aux() first. */
	WRITE_ONCE(c->buf, NULL);
	barrier();

	/*
	 * The data stores must be visible before perf_aux_output_end()
	 * publishes aux_head; the consumer reads aux_head with acquire
	 * semantics before reading the data.
	 */
	smp_wmb();
	if (buf->snapshot) {
		/*
		 * Overwrite mode: the driver owns the head and hands perf
		 * the offset it writes at next (buf->size is a power of
		 * two); the record's size is what this transaction left in
		 * the buffer.
		 */
		h->head = (h->head + size) & (buf->size - 1);
		size = min(size, buf->size);
	}
	perf_aux_output_end(h, size);
	c->written = 0;
}

/**
 * ptsim_truncate() - end the transaction because the AUX buffer is full
 * @c: the trace engine of this CPU, with a transaction open
 *
 * Like trace hardware reaching a STOP region: the transaction is ended
 * with PERF_AUX_FLAG_TRUNCATED, for which perf wakes the consumer and
 * disables the event.  The disable comes later, from irq_work (or, in the
 * 6.12 core, at the next sched-out: Documentation/driver-api/perf-aux.rst
 * has the details), so the caller stops the engine itself; what the FIFO
 * still holds is lost.
 *
 * Context: the CPU of @c, interrupts disabled.
 */
static void ptsim_truncate(struct ptsim_cpu *c)
{
	perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_TRUNCATED);
	ptsim_commit(c);
}

/**
 * ptsim_interrupt() - end the AUX transaction and begin the next one
 * @c: the trace engine of this CPU, with a transaction open
 *
 * What the PMI handler of a trace unit does at the watermark or a region
 * end: publish what was written so far and open a new transaction at the
 * new head, with the space and the wakeup position that perf computes
 * from the current aux_tail.
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: true if the new transaction is open; false if it could not
 * begin (see ptsim_begin()), and the engine must stop.
 */
bool ptsim_interrupt(struct ptsim_cpu *c)
{
	struct perf_event *event = c->handle.event;

	ptsim_commit(c);
	return ptsim_begin(c, event);
}

/**
 * DOC: The PMI
 *
 * Trace hardware interrupts the CPU when its output reaches an entry of
 * its table marked for it (Intel PT's ToPA INT bit), the watermark here,
 * and when it stops because the buffer is full; on x86 that interrupt,
 * the PMI, is an NMI.  Its handler (intel_pt_interrupt()) finds the open
 * transaction with perf_get_aux(), ends it, with TRUNCATED if the buffer
 * is full, and begins the next.  A counter overflow of the core PMU is
 * the same NMI, and its perf_event_overflow() runs AUX sampling and
 * aux_pause/aux_resume from there.
 *
 * ptsim raises its PMI in the same places, from the engine's tick, and
 * delivers it through the hook in the DELIVERY slot of the engine's
 * table: by default a self-NMI (ptsim-nmi.c), whose handler does what
 * intel_pt's does, in NMI context; with the ``irq_pmi`` config bit, and
 * where the architecture has no self-NMI, the tick handles it in place,
 * in its hard interrupt.  The reasons are collected in &struct
 * ptsim_cpu.pmi, and ptsim_pmi_handle() is the handler's body either way.
 *
 * The engine waits for its PMI to be handled before it writes on, as a
 * DMA engine that stops at a STOP entry waits: so the NMI handler, not
 * the tick, owns the transaction from the raise until it returns, and
 * the tick carries on with the transaction the handler left open (or
 * stops if there is none).  The wait is what an NMI costs on hardware,
 * a few microseconds at most: a PMI whose NMI has not come by then is
 * taken back and handled in place, and so are the event's later ones
 * (see ptsim-nmi.c).  Either way the handler reports the registers the
 * tick interrupted, the workload's, as hardware reports where the
 * workload was, never ptsim's own.  Everything else that ends or begins a
 * transaction (pmu::start, stop, flush) is the driver acting, not the
 * hardware, and handles the same reasons in place, with no PMI.
 */

/**
 * ptsim_pmi_handle() - what the PMI handler does
 * @c: the trace engine of this CPU, with a transaction open unless the
 * reason is only %PTSIM_PMI_MARK
 * @why: PTSIM_PMI_* reasons
 * @regs: the registers the tick interrupted, for a sample
 *
 * For the mark counter's overflow, its hook delivers the sample.  For a
 * watermark or a region end, publishes what the transaction wrote and
 * begins the next one; for a full buffer, ends the transaction with
 * TRUNCATED.  As intel_pt's handler does, the transaction is found with
 * perf_get_aux(), which must give the buffer the engine writes to.
 *
 * Context: the CPU of @c, interrupts disabled, NMI included.
 * Return: true if a transaction is open afterwards.
 */
bool ptsim_pmi_handle(struct ptsim_cpu *c, unsigned int why,
		      struct pt_regs *regs)
{
	const struct ptsim_hooks *mark = c->hooks[PTSIM_HOOK_MARK];

	if ((why & PTSIM_PMI_MARK) && mark)
		mark->overflow(c, regs);
	if (!(why & (PTSIM_PMI_INT | PTSIM_PMI_FULL)))
		return READ_ONCE(c->buf);
	if (WARN_ON_ONCE(!c->buf || perf_get_aux(&c->handle) != c->buf))
		return false;
	if (why & PTSIM_PMI_FULL) {
		ptsim_truncate(c);
		return false;
	}
	return ptsim_interrupt(c);
}

/**
 * ptsim_pmi() - raise a PMI
 * @c: the trace engine of this CPU
 * @why: PTSIM_PMI_* reasons
 *
 * From the tick, the PMI is delivered by the engine's delivery hook;
 * elsewhere (pmu::stop or flush draining the FIFO) the driver handles
 * the reasons in place.  See "The PMI".
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: true if a transaction is open once the PMI has been handled.
 */
bool ptsim_pmi(struct ptsim_cpu *c, unsigned int why)
{
	if (!c->in_tick)
		return ptsim_pmi_handle(c, why, get_irq_regs());
	WARN_ON_ONCE(!ptsim_pmi_room(c));
	why |= c->pmi_carry;
	c->pmi_carry = 0;
	c->tick_pmis++;
	return c->hooks[PTSIM_HOOK_DELIVERY]->pmi(c, why);
}

/**
 * DOC: The interrupt rate
 *
 * A tick raises at most &struct ptsim_cpu.pmi_cap PMIs, which for an
 * event of a user without CAP_PERFMON is PTSIM_USER_PMIS_PER_TICK: what
 * the engine costs the machine in interrupts is then bounded by the
 * tick period (at least PTSIM_USER_MIN_PERIOD_US for such a user),
 * whatever else the attributes ask for.  The watermark itself is
 * page-granular (see ptsim_emit()), and regions are pages at least, so
 * the data a tick can produce reaches at most two page ends; the
 * cap is what makes the bound hold by construction, not by arithmetic
 * over today's limits.  Where a tick has no PMI left, the engine does
 * what a DMA engine whose interrupt is pending does: it does not write
 * past the point that needs the interrupt (a region end to pad, a full
 * buffer) until the next tick, and the FIFO holds the records meanwhile
 * (overflowing, with an OVF, if the user produces faster than that); a
 * watermark crossed without a PMI is signalled by the next one; a
 * ptsim_mark overflow is carried to the next PMI.  Outside the tick
 * (pmu::stop, flush) no PMI is raised at all.
 */

/**
 * ptsim_pmi_room() - may a PMI be raised now?
 * @c: the trace engine of this CPU
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: true outside the tick (the reasons are handled in place) or if
 * the tick has not raised &struct ptsim_cpu.pmi_cap PMIs yet.
 */
bool ptsim_pmi_room(const struct ptsim_cpu *c)
{
	return !c->in_tick || c->tick_pmis < c->pmi_cap;
}

/**
 * ptsim_pmi_raise() - raise a PMI, or carry its reasons to the next one
 * @c: the trace engine of this CPU
 * @why: PTSIM_PMI_MARK: reasons that need no transaction of their own
 *
 * Context: the CPU of @c, interrupts disabled.
 */
void ptsim_pmi_raise(struct ptsim_cpu *c, unsigned int why)
{
	if (ptsim_pmi_room(c))
		ptsim_pmi(c, why);
	else
		c->pmi_carry |= why;
}

/* The delivery in place: the tick's hard interrupt is the PMI. */
static bool ptsim_irq_pmi(struct ptsim_cpu *c, unsigned int why)
{
	return ptsim_pmi_handle(c, why, get_irq_regs());
}

const struct ptsim_hooks ptsim_irq_hooks = {
	.pmi	= ptsim_irq_pmi,
};

/* What ptsim_emit() did with a record. */
enum ptsim_emit_result {
	PTSIM_EMIT_OK,		/* written, a transaction is open */
	PTSIM_EMIT_STALL,	/* not written: it needs a PMI the tick has not */
	PTSIM_EMIT_STOP,	/* not written: the engine had to stop */
};

/*
 * The write position at which the watermark's PMI comes: the end of the
 * page that holds handle.wakeup.  Trace hardware interrupts at a page
 * boundary at the finest (intel_pt sets the INT bit of the ToPA entry
 * before the wakeup's page, arm_spe_pmu rounds its limit up to the
 * wakeup's page), never at an arbitrary byte, and neither does ptsim: so
 * the smallest aux_watermark costs at most one PMI a page.
 */
static unsigned long ptsim_wakeup_at(const struct ptsim_cpu *c)
{
	return round_up(c->handle.wakeup, PAGE_SIZE);
}

/**
 * ptsim_emit() - write one record into the AUX buffer, as the DMA does
 * @c: the trace engine of this CPU, with a transaction open
 * @rec: the record, whole packets
 * @len: its length in bytes, at most PTSIM_MAX_RECORD
 *
 * Writes @rec at handle.head + written.  A record never straddles a region
 * end: if it does not fit in the rest of the current region, that rest is
 * filled with PAD packets first.  Outside overwrite mode the padding is
 * skipped with perf_aux_output_skip(), which moves aux_head itself and so
 * must come at the start of a transaction: what the transaction wrote so
 * far is committed first.  In overwrite mode the padding simply counts as
 * written.
 *
 * Once the write position reaches the end of the page that holds
 * handle.wakeup (the watermark, see ptsim_wakeup_at()), the transaction is
 * ended and the next one begun, so that perf wakes the consumer; not when
 * the transaction's space is exactly used up, since the next record then
 * ends it with TRUNCATED.  A record that does not fit in handle.size ends
 * the transaction with TRUNCATED.  Each of these is a PMI, and a tick
 * raises at most &struct ptsim_cpu.pmi_cap of them (see "The interrupt
 * rate"): without one left, the record is not written, and the watermark's
 * PMI waits for the next.
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: %PTSIM_EMIT_OK if the record was written and a transaction is
 * open; %PTSIM_EMIT_STALL if it was not, for want of a PMI, and it must
 * be written again; %PTSIM_EMIT_STOP if the engine had to stop: the
 * buffer is full (the transaction was ended with TRUNCATED) or has gone
 * away (perf_aux_output_begin() failed).
 */
static enum ptsim_emit_result ptsim_emit(struct ptsim_cpu *c, const u8 *rec,
					 unsigned int len)
{
	struct ptsim_buf *buf = c->buf;
	unsigned long pos = c->handle.head + c->written;
	unsigned long room = region_room(buf, pos);

	/*
	 * Alignment rule: a record never straddles a region end.  Pad the
	 * rest of the region.  Outside overwrite mode the padding is
	 * skipped with perf_aux_output_skip(), which must happen at the
	 * start of a transaction (it moves aux_head itself), so the data
	 * written so far is committed first.
	 */
	if (len > room) {
		if (buf->snapshot) {
			ptsim_aux_copy(buf, pos, NULL, room);
			barrier();	/* for ptsim_snapshot_aux() */
			c->written += room;
		} else {
			if (c->written) {
				if (!ptsim_pmi_room(c))
					return PTSIM_EMIT_STALL;
				if (!ptsim_pmi(c, PTSIM_PMI_INT))
					return PTSIM_EMIT_STOP;
				buf = c->buf;
				pos = c->handle.head;
				room = region_room(buf, pos);
			}
			if (room > c->handle.size)
				goto full;
			ptsim_aux_copy(buf, pos, NULL, room);
			smp_wmb();	/* PAD visible before aux_head moves */
			/* Cannot fail: room <= handle.size was checked. */
			perf_aux_output_skip(&c->handle, room);
		}
		c->tick_bytes += room;
		pos += room;
	}

	if (!buf->snapshot && c->written + len > c->handle.size)
		goto full;
	ptsim_aux_copy(buf, pos, rec, len);
	barrier();	/* for ptsim_snapshot_aux() */
	c->written += len;
	c->tick_bytes += len;
	/* An overflow record (OVF first) leaves a gap in this transaction. */
	if (rec[0] == 0x02 && rec[1] == 0xf3)
		c->lossy = true;

	/*
	 * Interrupt at the watermark so that perf wakes the consumer.  Not
	 * when the buffer is exactly full: the next record will then end the
	 * transaction with TRUNCATED, which a plain end followed by a failed
	 * begin would not report.
	 */
	if (!buf->snapshot && c->handle.head + c->written >= ptsim_wakeup_at(c) &&
	    c->written < c->handle.size && ptsim_pmi_room(c) &&
	    !ptsim_pmi(c, PTSIM_PMI_INT))
		return PTSIM_EMIT_STOP;
	return PTSIM_EMIT_OK;

full:
	if (!ptsim_pmi_room(c))
		return PTSIM_EMIT_STALL;
	ptsim_pmi(c, PTSIM_PMI_FULL);
	return PTSIM_EMIT_STOP;
}

/**
 * ptsim_drain() - move records from the FIFO into the AUX buffer
 * @c: the trace engine of this CPU, with a transaction open
 * @ev: the event whose FIFO is drained
 * @budget: bytes to move; the last record may overshoot it, as records are
 * never split.  ULONG_MAX empties the FIFO.
 *
 * In the tick the drain also ends where the next record needs a PMI the
 * tick has no more of (see "The interrupt rate"); that record stays
 * first in the FIFO.  Elsewhere it does not: pmu::stop and flush empty
 * the FIFO with @budget ULONG_MAX.
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: true if the budget is used up, the FIFO is empty or the tick's
 * PMIs are, with a transaction open; false if ptsim_emit() had to stop the
 * engine.
 */
bool ptsim_drain(struct ptsim_cpu *c, struct ptsim_event *ev,
		 unsigned long budget)
{
	u8 rec[PTSIM_MAX_RECORD];
	unsigned int len;

	while (budget && (len = fifo_peek(ev, rec))) {
		enum ptsim_emit_result r = ptsim_emit(c, rec, len);

		if (r == PTSIM_EMIT_STALL)
			break;
		fifo_pop(ev, len);
		if (r == PTSIM_EMIT_STOP)
			return false;
		budget -= min_t(unsigned long, budget, len);
	}
	return true;
}

/* ---- interrupts off ---- */

/*
 * The longest stretch with interrupts disabled that each kind of ptsim's
 * own entries (&enum ptsim_irqoff_kind) took on each CPU, in ns of
 * local_clock(): what ptsim costs the rest of the machine in latency.
 * Only written on its own CPU with interrupts disabled; read and reset
 * from any CPU through debugfs ptsim/irqoff, where a reset racing with
 * an entry may lose that one figure.
 */
struct ptsim_irqoff {
	u64	max_ns[PTSIM_NR_IRQOFF];
};

static DEFINE_PER_CPU(struct ptsim_irqoff, ptsim_irqoff);

static const char * const ptsim_irqoff_names[PTSIM_NR_IRQOFF] = {
	[PTSIM_IRQOFF_TICK]	= "tick",
	[PTSIM_IRQOFF_STOP]	= "stop",
	[PTSIM_IRQOFF_FLUSH]	= "flush",
	[PTSIM_IRQOFF_NMI_WAIT]	= "nmi_wait",
};

/**
 * ptsim_irqoff_note() - account a stretch with interrupts disabled
 * @kind: what ran
 * @t0: local_clock() when it began
 *
 * Context: the CPU it ran on, interrupts still disabled.
 */
void ptsim_irqoff_note(enum ptsim_irqoff_kind kind, u64 t0)
{
	u64 *max = &this_cpu_ptr(&ptsim_irqoff)->max_ns[kind];
	u64 d = local_clock() - t0;

	if (d > READ_ONCE(*max))
		WRITE_ONCE(*max, d);
}

static int ptsim_irqoff_show(struct seq_file *m, void *unused)
{
	unsigned int cpu, k;

	for_each_possible_cpu(cpu) {
		u64 *max = per_cpu_ptr(&ptsim_irqoff, cpu)->max_ns;

		seq_printf(m, "cpu%u", cpu);
		for (k = 0; k < PTSIM_NR_IRQOFF; k++)
			seq_printf(m, " %s %llu", ptsim_irqoff_names[k],
				   READ_ONCE(max[k]));
		seq_putc(m, '\n');
	}
	return 0;
}

/* Any write resets the figures of every CPU. */
static ssize_t ptsim_irqoff_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	unsigned int cpu, k;

	for_each_possible_cpu(cpu)
		for (k = 0; k < PTSIM_NR_IRQOFF; k++)
			WRITE_ONCE(per_cpu_ptr(&ptsim_irqoff, cpu)->max_ns[k], 0);
	return count;
}

DEFINE_SHOW_STORE_ATTRIBUTE(ptsim_irqoff);

void __init ptsim_irqoff_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("irqoff", 0600, dir, NULL, &ptsim_irqoff_fops);
}

/*
 * What the ticks of each CPU did, for debugfs ptsim/tick: how many ran,
 * and the most PMIs and AUX bytes one of them took, the figures the
 * interrupt rate's bound is about (see "The interrupt rate").  Written
 * by the tick on its own CPU; the maxima reset as ptsim/irqoff's are.
 */
struct ptsim_tick_stats {
	u64		ticks;
	unsigned int	max_pmis;
	unsigned long	max_bytes;
};

static DEFINE_PER_CPU(struct ptsim_tick_stats, ptsim_tick_stats);

static void ptsim_tick_note(const struct ptsim_cpu *c)
{
	struct ptsim_tick_stats *st = this_cpu_ptr(&ptsim_tick_stats);

	WRITE_ONCE(st->ticks, st->ticks + 1);
	if (c->tick_pmis > READ_ONCE(st->max_pmis))
		WRITE_ONCE(st->max_pmis, c->tick_pmis);
	if (c->tick_bytes > READ_ONCE(st->max_bytes))
		WRITE_ONCE(st->max_bytes, c->tick_bytes);
}

static int ptsim_tick_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_tick_stats *st = per_cpu_ptr(&ptsim_tick_stats, cpu);

		seq_printf(m, "cpu%u ticks %llu max_pmis %u max_bytes %lu\n",
			   cpu, READ_ONCE(st->ticks), READ_ONCE(st->max_pmis),
			   READ_ONCE(st->max_bytes));
	}
	return 0;
}

/* Any write resets the maxima of every CPU. */
static ssize_t ptsim_tick_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_tick_stats *st = per_cpu_ptr(&ptsim_tick_stats, cpu);

		WRITE_ONCE(st->max_pmis, 0);
		WRITE_ONCE(st->max_bytes, 0);
	}
	return count;
}

DEFINE_SHOW_STORE_ATTRIBUTE(ptsim_tick);

void __init ptsim_tick_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("tick", 0600, dir, NULL, &ptsim_tick_fops);
}

/* ---- the producer ---- */

/**
 * DOC: Control flow
 *
 * The one thing ptsim knows of the traced program's control flow is the
 * user IP at which each tick finds the task.  So its trace is on for an
 * instant at each tick, at that IP: TIP.PGE there, the tick's packets,
 * then FUP + TIP.PGD at the same IP when the next tick or the disable
 * comes, as for an interrupt.  Every FUP (in a PSB+, an overflow or a
 * mark record) carries the IP the trace is at.  This is what Intel PT
 * writes for a task that runs no instruction while it is traced, so a
 * decoder that walks the program's code along the trace (perf's) never
 * has code to walk between two IPs, and finds nothing the code
 * contradicts.  A tick that finds no user IP (an idle CPU, a kernel
 * thread) leaves the trace at the last one; until there is one, the
 * trace stays off.
 *
 * Branch packets that match no code (TNTs) are written only in the
 * synthetic mode (the tnt bit), for decoders' packet layers.
 */

/* Enable the trace at @ip, or where it last was if @ip is 0. */
static void trace_enable(struct ptsim_event *ev, u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];

	if (ip)
		ev->at = ip;
	if (ev->at)
		ptsim_put_control(ev, rec, pt_ip(rec, PT_TIP_PGE, ev->at));
}

/* Disable the trace where it is. */
static void trace_disable(struct ptsim_event *ev)
{
	u8 rec[PTSIM_MAX_RECORD];

	if (ev->at)
		ptsim_put_control(ev, rec, rec_disable(rec, ev->at));
}

/* A tick is an interrupt: the trace goes off where it was, on at @ip. */
static void trace_move(struct ptsim_event *ev, u64 ip)
{
	trace_disable(ev);
	trace_enable(ev, ip);
}

void ptsim_trace_on(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];

	ptsim_put_control(ev, rec, rec_psb_plus(ev, rec, 0));
	ev->since_psb = 0;
	trace_enable(ev, ip);
	c->tracing = true;
}

void ptsim_trace_off(struct ptsim_cpu *c, struct ptsim_event *ev)
{
	trace_disable(ev);
	c->tracing = false;
}

/*
 * One tick of packet production into the FIFO, at the trace's IP; none
 * once the event is paused, which may happen in NMI meanwhile.
 */
static void ptsim_produce(struct ptsim_cpu *c, struct ptsim_event *ev)
{
	u64 ip = ev->at;
	u8 rec[PTSIM_MAX_RECORD];
	unsigned int i, len;

	for (i = 0; i < ev->rate; i++) {
		if (READ_ONCE(c->event->hw.aux_paused))
			break;
		if (ev->ovf_pending) {
			len = ptsim_rec_overflow(rec, ev->lost, ip);
			if (!fifo_put(ev, rec, len))
				goto drop;
			ev->ovf_pending = false;
			ev->lost = 0;
			ev->since_psb += len;
		}
		if (ev->since_psb >= ev->psb_period) {
			len = rec_psb_plus(ev, rec, ip);
			if (!fifo_put(ev, rec, len))
				goto drop;
			ev->since_psb = 0;
		}
		len = rec_data(ev, rec, c->buf->seq);
		if (!fifo_put(ev, rec, len))
			goto drop;
		c->buf->seq++;
		ev->since_psb += len;
		continue;
drop:
		/*
		 * The data record of this slot is lost; its number is used
		 * up so the consumer sees the gap, and the OVF that follows
		 * says how many bytes it covers.
		 */
		c->buf->seq++;
		ev->lost = min_t(u64, (u64)ev->lost + PTSIM_DATA_SIZE, U32_MAX);
		ev->ovf_pending = true;
	}
}

/**
 * ptsim_halt() - the engine stopped on its own
 * @c: the trace engine of this CPU, its transaction already ended
 * @event: the event it was tracing
 *
 * The buffer is full or has gone away.  The FIFO content is discarded, as
 * hardware loses it, and the event is marked stopped, so that pmu::stop
 * has nothing left to do.  The perf core still counts the event as active
 * until the disable it has pending takes effect or the consumer disables
 * it.
 *
 * Context: the CPU of @c, interrupts disabled.
 */
void ptsim_halt(struct ptsim_cpu *c, struct perf_event *event)
{
	ptsim_fifo_reset(event->pmu_private);
	c->tracing = false;
	event->hw.state = PERF_HES_STOPPED;
}

/**
 * ptsim_engine_stop() - what pmu::stop does: flush the FIFO, end the transaction
 * @c: the trace engine of this CPU
 * @event: the event it traces, not stopped yet or stopped with
 * &struct ptsim_cpu.stop_req set
 *
 * Trace hardware writes out its internal buffers when it is disabled, so
 * the FIFO is flushed into the AUX buffer, followed by an overflow report
 * for records dropped since the last one and by the disable packets, and
 * the transaction is ended.  If the buffer fills during the flush, the
 * transaction ends with TRUNCATED and the rest of the FIFO is lost.  The
 * flush goes through the normal output path, so it may end and begin
 * transactions on its way (at the watermark, or to skip a region's
 * padding: see ptsim_emit()), all handled in place, with no PMI; the last
 * step, ptsim_commit() or a failed begin, leaves none open.  The caller
 * has made sure that the tick does not run again for this activation.
 *
 * Context: the CPU of @c, interrupts disabled, not in NMI nor inside the
 * tick's own work (pmu::stop, start or flush, or the tick before it
 * returns HRTIMER_NORESTART).
 */
void ptsim_engine_stop(struct ptsim_cpu *c, struct perf_event *event)
{
	struct ptsim_event *ev = event->pmu_private;
	u64 t0 = local_clock();

	WARN_ON_ONCE(in_nmi() || c->in_tick);
	WRITE_ONCE(c->stop_req, false);
	c->pmi_carry = 0;
	event->hw.state = PERF_HES_STOPPED;
	/* The first drain makes room for the disable packets. */
	if (c->buf && ptsim_drain(c, ev, ULONG_MAX)) {
		u8 rec[PTSIM_MAX_RECORD];

		/* Records dropped since the last OVF: report them now. */
		if (ev->ovf_pending)
			ptsim_put_control(ev, rec,
					  ptsim_rec_overflow(rec, ev->lost,
							     c->tracing ? ev->at : 0));
		if (c->tracing)
			ptsim_trace_off(c, ev);
		if (ptsim_drain(c, ev, ULONG_MAX))
			ptsim_commit(c);
	}
	ptsim_account(event);
	ptsim_fifo_reset(ev);
	c->tracing = false;
	ptsim_irqoff_note(PTSIM_IRQOFF_STOP, t0);
}

/**
 * ptsim_tick() - one tick of the trace engine
 * @timer: the engine's hrtimer
 *
 * Acts on the pause state the perf core keeps in hw.aux_paused (writing
 * the disable or the enable packets), produces this tick's records into
 * the FIFO while tracing, and drains up to the per-tick budget into the
 * AUX buffer.  Stops for good when the buffer is full or gone, and does
 * the work of a pmu::stop that came in NMI or inside the tick (a throttle
 * of the event's group: see ptsim_stop()), at its start or its end.
 *
 * Context: hard interrupt, on the CPU the timer is pinned to.
 * Return: HRTIMER_RESTART while the engine runs, HRTIMER_NORESTART once it
 * has stopped.
 */
enum hrtimer_restart ptsim_tick(struct hrtimer *timer)
{
	struct ptsim_cpu *c = container_of(timer, struct ptsim_cpu, timer);
	struct perf_event *event = c->event;
	u64 t0 = local_clock();
	struct ptsim_event *ev;
	bool paused;
	u64 ip;

	const struct ptsim_hooks *mode = c->hooks[PTSIM_HOOK_MODE];
	const struct ptsim_hooks *mark = c->hooks[PTSIM_HOOK_MARK];
	bool running;

	if (!event)
		return HRTIMER_NORESTART;
	/* Written in NMI (ptsim_stop()), which may interrupt us: marked. */
	if (READ_ONCE(c->stop_req)) {
		ptsim_engine_stop(c, event);
		return HRTIMER_NORESTART;
	}
	if ((event->hw.state & PERF_HES_STOPPED) || !c->buf)
		return HRTIMER_NORESTART;
	ev = event->pmu_private;
	c->in_tick = true;
	c->tick_pmis = 0;
	c->tick_bytes = 0;
	/* A mark overflow the last tick had no PMI left for. */
	if (c->pmi_carry)
		ptsim_pmi(c, 0);
	if (mode && mode->run) {
		running = mode->run(c, ev);
		goto out;
	}
	ip = ptsim_user_ip();

	paused = READ_ONCE(event->hw.aux_paused);
	if (paused && c->tracing)
		ptsim_trace_off(c, ev);
	else if (!paused && !c->tracing)
		ptsim_trace_on(c, ev, ip);
	else if (c->tracing)
		trace_move(ev, ip);
	if (c->tracing)
		ptsim_produce(c, ev);
	if (mark && mark->ticked)
		mark->ticked(c, ev, ev->at);
	/* A pause during this tick (in NMI): its packets now, not next tick. */
	if (c->tracing && READ_ONCE(event->hw.aux_paused))
		ptsim_trace_off(c, ev);
	running = ptsim_drain(c, ev, ev->drain);
out:
	c->in_tick = false;
	ptsim_tick_note(c);
	ptsim_account(event);
	if (!running) {
		WRITE_ONCE(c->stop_req, false);
		ptsim_halt(c, event);
		ptsim_irqoff_note(PTSIM_IRQOFF_TICK, t0);
		return HRTIMER_NORESTART;
	}
	ptsim_irqoff_note(PTSIM_IRQOFF_TICK, t0);
	if (READ_ONCE(c->stop_req)) {
		ptsim_engine_stop(c, event);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, ev->period);
	return HRTIMER_RESTART;
}
