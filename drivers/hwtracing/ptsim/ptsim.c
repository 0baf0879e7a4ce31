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
 * The one exception is pause/resume (PERF_EF_PAUSE / PERF_EF_RESUME),
 * which may come from NMI context in the middle of a tick.  The perf core
 * records the state in event->hw.aux_paused before calling us; we do
 * nothing else there, and the next tick acts on the flag.  Tracing stops
 * within one tick period, as the "stop as simply as possible" contract in
 * <linux/perf_event.h> allows.
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

#include <linux/bitfield.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/unaligned.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#endif

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
#define PTSIM_CFG1_MASK		GENMASK_ULL(59, 0)

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
/* Benchmark transactions are 64 B .. 1 MiB. */
#define PTSIM_MIN_BENCH_SHIFT	6
#define PTSIM_MAX_BENCH_SHIFT	20

/* A data record: PTW with the sequence number, then short TNTs. */
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
 * @branch: data records are filled with TNT packets (config bit branch),
 * otherwise with PADs
 * @region_shift: region size is PAGE_SIZE << @region_shift, for setup_aux
 * @noflush: pmu::flush declines, so the perf core's generic path is used
 * @aux_flags: PMU format type bits for every transaction's PERF_RECORD_AUX
 * @loss_flag: the flag for a transaction that holds an OVF packet
 * (PERF_AUX_FLAG_PARTIAL or _COLLISION), or 0
 * @bench_shift: benchmark mode if not 0: each tick runs @rate transactions
 * of 2^@bench_shift bytes instead of producing packets (see ptsim_bench())
 * @bench_split: the benchmark mode also times the end and the beginning of
 * each transaction on their own
 * @fifo: the FIFO, a byte ring of @fifo_size bytes
 * @fifo_size: FIFO size in bytes, a power of two
 * @fifo_head: producer index
 * @fifo_tail: DMA (consumer) index
 * @since_psb: bytes produced since the last PSB+
 * @lost: data bytes dropped and not yet reported by an OVF
 * @ovf_pending: an overflow is to be reported before the next record
 * @queued: bytes queued into the FIFO and not yet added to the event's count
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
	bool		branch;
	unsigned int	region_shift;
	bool		noflush;
	u64		aux_flags;
	u64		loss_flag;
	unsigned int	bench_shift;
	bool		bench_split;

	u8		*fifo;
	u32		fifo_size;
	u32		fifo_head;
	u32		fifo_tail;
	unsigned long	since_psb;
	u32		lost;
	bool		ovf_pending;
	u64		queued;
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
 * @mark: the ptsim_mark event in @event's group, NULL if none (see
 * "ptsim_mark" below)
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
};

static DEFINE_PER_CPU(struct ptsim_cpu, ptsim_cpus);

/**
 * struct ptsim_bench_stats - what the benchmark mode measured on one CPU
 * @txns: AUX transactions completed
 * @bytes: bytes they wrote
 * @ns: time they took, in ns of the kernel's monotonic clock
 * @stalls: ticks that found less than two transactions' worth of room
 * (the consumer did not keep up)
 * @end_ns: with bench_split, the time spent in perf_aux_output_end()
 * @begin_ns: with bench_split, the time spent in perf_aux_output_begin()
 *
 * Only written by the tick on its own CPU, with interrupts disabled.  Read
 * and reset through debugfs (ptsim/bench) from any CPU; a reset while a
 * benchmark event runs may race with a tick and lose one tick's figures,
 * which is harmless for a measurement that is reset before it starts.
 */
struct ptsim_bench_stats {
	u64	txns;
	u64	bytes;
	u64	ns;
	u64	stalls;
	u64	end_ns;
	u64	begin_ns;
};

static DEFINE_PER_CPU(struct ptsim_bench_stats, ptsim_bench_stats);

/*
 * What the last pmu::setup_aux call received, for debugfs (ptsim/setup_aux):
 * the number of pages and how they group into physically contiguous runs.
 * Written under ptsim_setup_lock; a debugging aid, not used by the engine.
 */
#define PTSIM_RUN_ORDERS	(MAX_PAGE_ORDER + 2)
static DEFINE_MUTEX(ptsim_setup_lock);
static unsigned int ptsim_setup_pages;
static unsigned int ptsim_setup_runs[PTSIM_RUN_ORDERS];

/* ---- Intel PT packets (Intel SDM vol. 3, "Intel Processor Trace") ---- */

#define PT_IPC_SUPPRESSED	0
#define PT_IPC_FULL		6	/* 8-byte IP, no compression */
#define PT_TIP_PGD		0x01
#define PT_TIP_PGE		0x11
#define PT_FUP			0x1d

static unsigned int pt_psb(u8 *p)
{
	unsigned int i;

	for (i = 0; i < 16; i += 2) {
		p[i] = 0x02;
		p[i + 1] = 0x82;
	}
	return 16;
}

static unsigned int pt_ext(u8 *p, u8 opcode)
{
	p[0] = 0x02;
	p[1] = opcode;
	return 2;
}

static unsigned int pt_tsc(u8 *p, u64 tsc)
{
	/* 0x19 followed by the low 7 bytes of the TSC, little endian. */
	put_unaligned_le64(tsc << 8 | 0x19, p);
	return 8;
}

static unsigned int pt_cbr(u8 *p, u8 ratio)
{
	p[0] = 0x02;
	p[1] = 0x03;
	p[2] = ratio;
	p[3] = 0;
	return 4;
}

static unsigned int pt_mode_exec(u8 *p)
{
	/* Leaf 000, CS.L=1: 64-bit code, as for a native 64-bit task. */
	p[0] = 0x99;
	p[1] = 0x01;
	return 2;
}

/* FUP and the TIP family: full 8-byte IP, or the IP suppressed. */
static unsigned int pt_ip(u8 *p, u8 opcode, u64 ip)
{
	if (!ip) {
		p[0] = (PT_IPC_SUPPRESSED << 5) | opcode;
		return 1;
	}
	p[0] = (PT_IPC_FULL << 5) | opcode;
	put_unaligned_le64(ip, p + 1);
	return 9;
}

/* PTW: PayloadBytes 01 is 8 bytes of payload, 00 is 4; IP bit clear. */
static unsigned int pt_ptw64(u8 *p, u64 v)
{
	p[0] = 0x02;
	p[1] = 0x32;
	put_unaligned_le64(v, p + 2);
	return 10;
}

static unsigned int pt_ptw32(u8 *p, u32 v)
{
	p[0] = 0x02;
	p[1] = 0x12;
	put_unaligned_le32(v, p + 2);
	return 6;
}

/* PTW, 4 bytes of payload, IP bit set: a FUP with the IP follows. */
static unsigned int pt_ptw32_ip(u8 *p, u32 v)
{
	p[0] = 0x02;
	p[1] = 0x92;
	put_unaligned_le32(v, p + 2);
	return 6;
}

static u64 ptsim_tsc(void)
{
#ifdef CONFIG_X86
	return rdtsc();
#else
	return local_clock();
#endif
}

/* The user IP of the task on this CPU, 0 if it has none. */
static u64 ptsim_user_ip(void)
{
	if (!current->mm || (current->flags & PF_KTHREAD))
		return 0;
	return instruction_pointer(task_pt_regs(current));
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
	 * Fill the record with short TNT packets, one "taken" bit each,
	 * when branches are traced, and with PADs when they are not.
	 */
	memset(p + n, ev->branch ? 0x06 : 0x00, PTSIM_DATA_SIZE - n);
	return PTSIM_DATA_SIZE;
}

static unsigned int rec_disable(u8 *p, u64 ip)
{
	unsigned int n = 0;

	if (ip)
		n = pt_ip(p, PT_FUP, ip);
	return n + pt_ip(p + n, PT_TIP_PGD, 0);
}

/* A ptsim_mark sample: PTW(IP=1) with its number, and the FUP. */
static unsigned int rec_mark(u8 *p, u32 nr, u64 ip)
{
	unsigned int n = pt_ptw32_ip(p, nr);

	return n + pt_ip(p + n, PT_FUP, ip);
}

static unsigned int rec_overflow(u8 *p, u32 lost, u64 ip)
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
static void ptsim_account(struct perf_event *event)
{
	struct ptsim_event *ev = event->pmu_private;

	local64_add(ev->queued, &event->count);
	ev->queued = 0;
}

/* Take the oldest record out of the FIFO; returns its length, 0 if none. */
static unsigned int fifo_get(struct ptsim_event *ev, u8 *rec)
{
	u8 len;

	if (!fifo_used(ev))
		return 0;
	fifo_copy_out(ev, ev->fifo_tail, &len, 1);
	fifo_copy_out(ev, ev->fifo_tail + 1, rec, len);
	ev->fifo_tail += len + 1;
	return len;
}

static void fifo_reset(struct ptsim_event *ev)
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
static void put_control(struct ptsim_event *ev, const u8 *rec, unsigned int len)
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

static void aux_copy(struct ptsim_buf *buf, unsigned long pos, const void *src,
		     unsigned int len)
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
static bool ptsim_begin(struct ptsim_cpu *c, struct perf_event *event)
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
 * hands it the absolute position in handle.head, here the head the
 * transaction began at plus everything it wrote, and the size of the
 * record is what the transaction left in the buffer, at most its size.
 *
 * Context: the CPU of @c, interrupts disabled.
 */
static void ptsim_commit(struct ptsim_cpu *c)
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
		 * Overwrite mode: the driver owns the head and hands the
		 * absolute position to perf (perf_aux_output_begin() gave us
		 * the previous one); the record's size is what this
		 * transaction left in the buffer.
		 */
		h->head += size;
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
static bool ptsim_interrupt(struct ptsim_cpu *c)
{
	struct perf_event *event = c->handle.event;

	ptsim_commit(c);
	return ptsim_begin(c, event);
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
 * Once the write position reaches handle.wakeup (the watermark), the
 * transaction is ended and the next one begun, so that perf wakes the
 * consumer; not when the transaction's space is exactly used up, since
 * the next record then ends it with TRUNCATED.  A record that does not
 * fit in handle.size ends the transaction with TRUNCATED.
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: true if the record was written and a transaction is open; false
 * if the engine had to stop: the buffer is full (the transaction was ended
 * with TRUNCATED) or has gone away (perf_aux_output_begin() failed).
 */
static bool ptsim_emit(struct ptsim_cpu *c, const u8 *rec, unsigned int len)
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
			aux_copy(buf, pos, NULL, room);
			barrier();	/* for ptsim_snapshot_aux() */
			c->written += room;
		} else {
			if (c->written) {
				if (!ptsim_interrupt(c))
					return false;
				buf = c->buf;
				pos = c->handle.head;
				room = region_room(buf, pos);
			}
			if (room > c->handle.size) {
				ptsim_truncate(c);
				return false;
			}
			aux_copy(buf, pos, NULL, room);
			smp_wmb();	/* PAD visible before aux_head moves */
			/* Cannot fail: room <= handle.size was checked. */
			perf_aux_output_skip(&c->handle, room);
		}
		pos += room;
	}

	if (!buf->snapshot && c->written + len > c->handle.size) {
		ptsim_truncate(c);
		return false;
	}
	aux_copy(buf, pos, rec, len);
	barrier();	/* for ptsim_snapshot_aux() */
	c->written += len;
	/* An overflow record (OVF first) leaves a gap in this transaction. */
	if (rec[0] == 0x02 && rec[1] == 0xf3)
		c->lossy = true;

	/*
	 * Interrupt at the watermark so that perf wakes the consumer.  Not
	 * when the buffer is exactly full: the next record will then end the
	 * transaction with TRUNCATED, which a plain end followed by a failed
	 * begin would not report.
	 */
	if (!buf->snapshot && c->handle.head + c->written >= c->handle.wakeup &&
	    c->written < c->handle.size)
		return ptsim_interrupt(c);
	return true;
}

/**
 * ptsim_drain() - move records from the FIFO into the AUX buffer
 * @c: the trace engine of this CPU, with a transaction open
 * @ev: the event whose FIFO is drained
 * @budget: bytes to move; the last record may overshoot it, as records are
 * never split.  ULONG_MAX empties the FIFO.
 *
 * Context: the CPU of @c, interrupts disabled.
 * Return: true if the budget is used up or the FIFO is empty, with a
 * transaction open; false if ptsim_emit() had to stop the engine.
 */
static bool ptsim_drain(struct ptsim_cpu *c, struct ptsim_event *ev,
			unsigned long budget)
{
	u8 rec[PTSIM_MAX_RECORD];
	unsigned int len;

	while (budget && (len = fifo_get(ev, rec))) {
		if (!ptsim_emit(c, rec, len))
			return false;
		budget -= min_t(unsigned long, budget, len);
	}
	return true;
}

/* ---- the benchmark mode ---- */

/**
 * ptsim_bench() - one tick of the benchmark mode
 * @c: the trace engine of this CPU, with a transaction open
 * @ev: the event, with @ev->bench_shift set
 *
 * Runs @ev->rate AUX transactions back to back, each the way a trace
 * unit's interrupt handler does it: the DMA writes 2^@ev->bench_shift
 * bytes (PAD packets, copied from the zero page) at handle.head, the
 * transaction is ended, which publishes aux_head, logs a PERF_RECORD_AUX
 * and wakes the consumer at the watermark, and the next one is begun.
 * Only the exported AUX output API is used, so the same code measures
 * whichever implementation of it the kernel has.  The time the whole
 * loop took, from the kernel's monotonic clock (instruction-driven under
 * QEMU's -icount), goes into &struct ptsim_bench_stats; with bench_split,
 * so does the time of each end and each begin, clock reads included.
 *
 * A transaction is only written if at least two transactions' worth of
 * room is left, so that the buffer never fills up (which would end the
 * benchmark with a disabled event): with less, the tick stops there,
 * counts a stall, and renews the transaction outside the timed loop, so
 * that the next tick sees the room the consumer has made since.
 *
 * Context: the CPU of @c, interrupts disabled (the tick).
 * Return: true if a transaction is open for the next tick; false if the
 * AUX area went away, and the engine must stop.
 */
static bool ptsim_bench(struct ptsim_cpu *c, struct ptsim_event *ev)
{
	struct ptsim_bench_stats *st = this_cpu_ptr(&ptsim_bench_stats);
	const void *zero = page_address(ZERO_PAGE(0));
	unsigned long size = 1UL << ev->bench_shift;
	unsigned int i, done = 0;
	bool open = true;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < ev->rate; i++) {
		struct ptsim_buf *buf = c->buf;
		unsigned long off;

		if (!buf->snapshot && c->handle.size < 2 * size)
			break;
		for (off = 0; off < size; off += PAGE_SIZE)
			aux_copy(buf, c->handle.head + off, zero,
				 min(size - off, PAGE_SIZE));
		c->written = size;
		ev->queued += size;
		done++;
		if (ev->bench_split) {
			struct perf_event *event = c->handle.event;
			u64 t1 = ktime_get_ns(), t2;

			ptsim_commit(c);
			t2 = ktime_get_ns();
			open = ptsim_begin(c, event);
			WRITE_ONCE(st->end_ns, st->end_ns + t2 - t1);
			WRITE_ONCE(st->begin_ns,
				   st->begin_ns + ktime_get_ns() - t2);
		} else {
			open = ptsim_interrupt(c);
		}
		if (!open)
			break;
	}
	WRITE_ONCE(st->ns, st->ns + ktime_get_ns() - t0);
	WRITE_ONCE(st->txns, st->txns + done);
	WRITE_ONCE(st->bytes, st->bytes + done * size);
	if (open && i < ev->rate) {
		WRITE_ONCE(st->stalls, st->stalls + 1);
		/* An empty transaction: nothing is logged, the room renewed. */
		open = ptsim_interrupt(c);
	}
	return open;
}

/* ---- the producer ---- */

static void ptsim_trace_on(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];

	put_control(ev, rec, rec_psb_plus(ev, rec, 0));
	put_control(ev, rec, pt_ip(rec, PT_TIP_PGE, ip));
	ev->since_psb = 0;
	c->tracing = true;
}

static void ptsim_trace_off(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];

	put_control(ev, rec, rec_disable(rec, ip));
	c->tracing = false;
}

/* One tick of packet production into the FIFO. */
static void ptsim_produce(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];
	unsigned int i, len;

	for (i = 0; i < ev->rate; i++) {
		if (ev->ovf_pending) {
			len = rec_overflow(rec, ev->lost, ip);
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
static void ptsim_halt(struct ptsim_cpu *c, struct perf_event *event)
{
	fifo_reset(event->pmu_private);
	c->tracing = false;
	event->hw.state = PERF_HES_STOPPED;
}

static void ptsim_mark_tick(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip);

/**
 * ptsim_tick() - one tick of the trace engine
 * @timer: the engine's hrtimer
 *
 * Acts on the pause state the perf core keeps in hw.aux_paused (writing
 * the disable or the enable packets), produces this tick's records into
 * the FIFO while tracing, and drains up to the per-tick budget into the
 * AUX buffer.  Stops for good when the buffer is full or gone.
 *
 * Context: hard interrupt, on the CPU the timer is pinned to.
 * Return: HRTIMER_RESTART while the engine runs, HRTIMER_NORESTART once it
 * has stopped.
 */
static enum hrtimer_restart ptsim_tick(struct hrtimer *timer)
{
	struct ptsim_cpu *c = container_of(timer, struct ptsim_cpu, timer);
	struct perf_event *event = c->event;
	struct ptsim_event *ev;
	bool paused;
	u64 ip;

	if (!event || (event->hw.state & PERF_HES_STOPPED) || !c->buf)
		return HRTIMER_NORESTART;
	ev = event->pmu_private;
	if (ev->bench_shift) {
		if (!ptsim_bench(c, ev)) {
			ptsim_account(event);
			ptsim_halt(c, event);
			return HRTIMER_NORESTART;
		}
		ptsim_account(event);
		hrtimer_forward_now(timer, ev->period);
		return HRTIMER_RESTART;
	}
	ip = ptsim_user_ip();

	paused = READ_ONCE(event->hw.aux_paused);
	if (paused && c->tracing)
		ptsim_trace_off(c, ev, ip);
	else if (!paused && !c->tracing)
		ptsim_trace_on(c, ev, ip);
	if (c->tracing) {
		ptsim_produce(c, ev, ip);
		if (c->mark)
			ptsim_mark_tick(c, ev, ip);
	}
	ptsim_account(event);

	if (!ptsim_drain(c, ev, ev->drain)) {
		ptsim_halt(c, event);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, ev->period);
	return HRTIMER_RESTART;
}

/* ---- struct pmu callbacks ---- */

static struct pmu ptsim_pmu;

/**
 * ptsim_start() - pmu::start: begin the AUX transaction, start the engine
 * @event: the event
 * @flags: PERF_EF_RESUME for a resume, which only the next tick acts on
 *
 * Opens the transaction that stays open while the event runs, reports the
 * trace as started with perf_event_itrace_started(), writes the enable
 * packets unless the event is paused, and arms the tick.  With no AUX
 * buffer to write to (none mapped, or full) the event stays stopped.
 *
 * Context: the event's CPU, interrupts disabled; a resume may also come
 * from NMI context.
 */
static void ptsim_start(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_event *ev = event->pmu_private;

	/* Resume: the next tick sees hw.aux_paused clear (see the top). */
	if (flags & PERF_EF_RESUME)
		return;

	if (!ptsim_begin(c, event)) {
		event->hw.state = PERF_HES_STOPPED;
		return;
	}
	/*
	 * perf logs PERF_RECORD_ITRACE_START at sched-in until the (parent)
	 * event says its trace has started, as intel_pt and bts do here.
	 */
	perf_event_itrace_started(event);
	event->hw.state = 0;
	c->tracing = false;
	/* The benchmark mode writes no packets of its own. */
	if (!ev->bench_shift && !READ_ONCE(event->hw.aux_paused))
		ptsim_trace_on(c, ev, ptsim_user_ip());
	ptsim_account(event);
	hrtimer_start(&c->timer, ev->period, HRTIMER_MODE_REL_PINNED_HARD);
}

/**
 * ptsim_stop() - pmu::stop: stop the engine and end the AUX transaction
 * @event: the event
 * @flags: PERF_EF_PAUSE for a pause, which only the next tick acts on
 *
 * Trace hardware writes out its internal buffers when it is disabled, so
 * the FIFO is flushed into the AUX buffer, followed by an overflow report
 * for records dropped since the last one and by the disable packets, and
 * the transaction is ended.  No transaction may stay open once pmu::stop
 * has returned: the perf core stops the events of a buffer before it
 * frees it.  If the buffer fills during the flush, the transaction ends
 * with TRUNCATED and the rest of the FIFO is lost.
 *
 * The flush goes through the normal output path, so it may end and begin
 * transactions on its way (at the watermark, or to skip a region's
 * padding: see ptsim_emit()).  That is legal in pmu::stop only because
 * the last step, ptsim_commit() or a failed begin, leaves none open; a
 * driver that copies this must keep it so.
 *
 * Context: the event's CPU, interrupts disabled; a pause may also come
 * from NMI context.
 */
static void ptsim_stop(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_event *ev = event->pmu_private;

	if (flags & PERF_EF_PAUSE)
		return;
	if (event->hw.state & PERF_HES_STOPPED)
		return;

	/*
	 * IRQs are off and the timer is pinned to this CPU, so it is not
	 * running; cancelling cannot fail.
	 */
	hrtimer_try_to_cancel(&c->timer);
	event->hw.state = PERF_HES_STOPPED;

	/*
	 * Disable flushes the FIFO, as trace hardware writes out its
	 * internal buffers when tracing is turned off.  The first drain
	 * makes room for the disable packets.
	 */
	if (c->buf && ptsim_drain(c, ev, ULONG_MAX)) {
		u64 ip = ptsim_user_ip();
		u8 rec[PTSIM_MAX_RECORD];

		/* Records dropped since the last OVF: report them now. */
		if (ev->ovf_pending)
			put_control(ev, rec, rec_overflow(rec, ev->lost, ip));
		if (c->tracing)
			ptsim_trace_off(c, ev, ip);
		if (ptsim_drain(c, ev, ULONG_MAX))
			ptsim_commit(c);
	}
	ptsim_account(event);
	fifo_reset(ev);
	c->tracing = false;
}

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

	if (ev->noflush)
		return -EOPNOTSUPP;
	/* Stopped on its own (full buffer): the FIFO was discarded. */
	if (c->event != event || (event->hw.state & PERF_HES_STOPPED) ||
	    !c->buf)
		return 0;

	if (!ptsim_drain(c, ev, ULONG_MAX) || !ptsim_interrupt(c))
		ptsim_halt(c, event);
	return 0;
}

/**
 * ptsim_add() - pmu::add: claim the trace engine of this CPU for @event
 * @event: the event
 * @flags: PERF_EF_START to start tracing as well
 *
 * Each CPU has one engine.  An event that cannot begin an AUX transaction
 * (no AUX area mapped, or the buffer full) is refused, and the perf core
 * leaves it inactive.
 *
 * Context: the event's CPU, interrupts disabled.
 * Return: 0, or -EBUSY if the engine is taken or no transaction could
 * begin.
 */
static int ptsim_add(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	/* One trace unit per CPU. */
	if (c->event)
		return -EBUSY;
	c->event = event;
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START) {
		ptsim_start(event, 0);
		/* No AUX buffer to write to (yet): try again next time. */
		if (event->hw.state & PERF_HES_STOPPED) {
			c->event = NULL;
			return -EBUSY;
		}
	}
	return 0;
}

/**
 * ptsim_del() - pmu::del: stop @event and release the engine of this CPU
 * @event: the event
 * @flags: unused: the event is always stopped with PERF_EF_UPDATE
 *
 * Context: the event's CPU, interrupts disabled.
 */
static void ptsim_del(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	ptsim_stop(event, PERF_EF_UPDATE);
	c->event = NULL;
}

static void ptsim_read(struct perf_event *event)
{
	/*
	 * event->count is brought up to date at the end of every tick and by
	 * start, stop and flush.  Not here: a group read may come from NMI,
	 * in the middle of a tick, and ptsim_account() is not NMI-safe.
	 */
}

/*
 * Record, for debugfs, how the pages perf allocated for an AUX area group
 * into physically contiguous runs: the chunks its allocator obtained, or
 * larger runs where neighbouring chunks happen to be adjacent.
 */
static void ptsim_note_pages(void **pages, int nr_pages)
{
	unsigned int runs[PTSIM_RUN_ORDERS] = { };
	int i, start = 0;

	for (i = 1; i <= nr_pages; i++) {
		if (i < nr_pages &&
		    page_to_pfn(virt_to_page(pages[i])) ==
		    page_to_pfn(virt_to_page(pages[i - 1])) + 1)
			continue;
		runs[min_t(unsigned int, ilog2(i - start),
			   PTSIM_RUN_ORDERS - 1)]++;
		start = i;
	}
	mutex_lock(&ptsim_setup_lock);
	ptsim_setup_pages = nr_pages;
	memcpy(ptsim_setup_runs, runs, sizeof(runs));
	mutex_unlock(&ptsim_setup_lock);
}

/* Are @nr pages from @pages on physically consecutive page frames? */
static bool ptsim_pages_contiguous(void **pages, unsigned int nr)
{
	unsigned long pfn = page_to_pfn(virt_to_page(pages[0]));
	unsigned int i;

	for (i = 1; i < nr; i++)
		if (page_to_pfn(virt_to_page(pages[i])) != pfn + i)
			return false;
	return true;
}

/*
 * Calls of pmu::setup_aux that built a buffer, and of pmu::free_aux: the
 * tests' leak check (debugfs ptsim/setup_aux_calls, free_aux_calls)
 * requires them to balance once every AUX area is unmapped, so that a
 * reference leak that keeps a buffer alive shows however few its pages.
 */
static atomic_t ptsim_setup_aux_calls, ptsim_free_aux_calls;

/**
 * ptsim_setup_aux() - pmu::setup_aux: describe a new AUX buffer to the engine
 * @event: the event whose AUX area is being mapped
 * @pages: the kernel addresses of the buffer's pages, in order
 * @nr_pages: the number of pages, a power of two
 * @overwrite: true if the AUX area is mapped read-only (overwrite mode)
 *
 * Builds the region table: regions of PAGE_SIZE << region bytes (the
 * region field of @event's config), capped at the buffer size, allocated
 * on the node of @event's CPU.  The buffer belongs to the ring buffer, not
 * to @event: every event that writes into it uses these regions.
 *
 * Registered as ptsim_nosg (PERF_PMU_CAP_AUX_NO_SG), the engine models
 * output hardware without scatter-gather: its DMA needs each region in
 * one physically contiguous piece, so a buffer whose regions are not is
 * refused, as a driver for such hardware must.
 *
 * Context: process context, in mmap() under the buffer's aux_mutex; may
 * sleep.
 * Return: the &struct ptsim_buf, which perf_aux_output_begin() returns for
 * every transaction on this buffer, or NULL, which fails the mmap() with
 * -ENOMEM.
 */
static void *ptsim_setup_aux(struct perf_event *event, void **pages,
			     int nr_pages, bool overwrite)
{
	struct ptsim_event *ev = event->pmu_private;
	unsigned int region_pages, nr_regions, i;
	struct ptsim_buf *buf;
	int node;

	if (!nr_pages || !is_power_of_2(nr_pages))
		return NULL;
	region_pages = min_t(unsigned int, 1U << ev->region_shift, nr_pages);
	nr_regions = nr_pages / region_pages;

	node = event->cpu == -1 ? NUMA_NO_NODE : cpu_to_node(event->cpu);
	buf = kzalloc_node(struct_size(buf, regions, nr_regions), GFP_KERNEL,
			   node);
	if (!buf)
		return NULL;
	buf->nr_regions = nr_regions;
	buf->size = (unsigned long)nr_pages << PAGE_SHIFT;
	buf->region_shift = ilog2(region_pages) + PAGE_SHIFT;
	buf->snapshot = overwrite;
	for (i = 0; i < nr_regions; i++) {
		buf->regions[i].pages = pages + i * region_pages;
		if ((event->pmu->capabilities & PERF_PMU_CAP_AUX_NO_SG) &&
		    !ptsim_pages_contiguous(buf->regions[i].pages, region_pages)) {
			kfree(buf);
			return NULL;
		}
	}
	ptsim_note_pages(pages, nr_pages);
	atomic_inc(&ptsim_setup_aux_calls);
	return buf;
}

/**
 * ptsim_free_aux() - pmu::free_aux: free what ptsim_setup_aux() built
 * @buf: the &struct ptsim_buf
 *
 * Called once the AUX area is unmapped and no transaction holds the
 * buffer any more, or when its setup failed; the pages belong to perf.
 *
 * Context: process context.
 */
static void ptsim_free_aux(void *buf)
{
	if (buf)
		atomic_inc(&ptsim_free_aux_calls);
	kfree(buf);
}

/**
 * ptsim_sample_pad() - fill an AUX sample with PAD packets
 * @output: the handle of the sample record being written
 * @size: the number of bytes the sample was given
 *
 * The perf core has reserved @size bytes of AUX data in the sample and
 * expects them all to be written (it pads only up to the next 8 bytes),
 * so when there is no trace to copy the sample gets PAD packets, zero
 * bytes that every Intel PT decoder skips.
 *
 * Context: any, interrupts disabled.
 * Return: @size.
 */
static long ptsim_sample_pad(struct perf_output_handle *output,
			     unsigned long size)
{
	const void *zero = page_address(ZERO_PAGE(0));
	unsigned long left = size;

	while (left) {
		unsigned int n = min(left, PAGE_SIZE);

		perf_output_copy(output, zero, n);
		left -= n;
	}
	return size;
}

/**
 * ptsim_snapshot_aux() - pmu::snapshot_aux: copy the newest trace into a sample
 * @event: the ptsim event, the group leader of the sampling event
 * @output: the handle of the sample record being written
 * @size: the number of bytes to copy; the core caps it at the AUX area size
 *
 * AUX sampling (attr.aux_sample_size on a group member of @event) puts
 * the @size bytes the engine wrote last into each sample of that member.
 * As with intel_pt, only an AUX area in overwrite (snapshot) mode can be
 * sampled: in normal mode the consumer owns the data behind aux_head and
 * may be reading it, and the hardware may be about to overwrite what is
 * past it, so a sample there gets PAD packets instead of trace.  The
 * bytes end at the write position of the open transaction, handle.head +
 * written, and are copied with perf_output_copy_aux(), which wraps around
 * the buffer.  What the FIFO holds is not in memory yet and is not
 * included, like the content of the internal buffers of trace hardware.
 * The copy may start in the middle of a packet: a decoder synchronises on
 * the first PSB, as it does on a snapshot.
 *
 * Real trace hardware keeps writing while the CPU copies, so its driver
 * must stop (and so flush) the unit first and restart it after the copy,
 * as intel_pt does.  ptsim need not: its "hardware" is the tick on this
 * CPU, which cannot run while interrupts are off here.  That is the one
 * simulation-only shortcut of this callback.
 *
 * The core calls this from the overflow of the sampling event with
 * interrupts disabled, possibly from NMI context in the middle of the
 * engine's own code on this CPU.  The transaction fields are trusted only
 * while @c->buf is set, which ptsim_begin() does last and ptsim_commit()
 * undoes first, and @c->written only counts bytes already stored, so the
 * copy never reads outside the buffer of the open transaction, whose
 * pages perf keeps while it is open.  Without an open transaction (the
 * engine stopped, say because the buffer is full, or is between two
 * transactions) the sample is filled with PAD packets.  Nothing here
 * changes the engine's state.
 *
 * Context: the CPU @event is active on, interrupts disabled, any context
 * up to NMI.
 * Return: the number of bytes written into @output, @size unless
 * perf_output_copy_aux() fails.
 */
static long ptsim_snapshot_aux(struct perf_event *event,
			       struct perf_output_handle *output,
			       unsigned long size)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);
	struct ptsim_buf *buf = READ_ONCE(c->buf);
	unsigned long to;

	barrier();	/* the handle only once @buf is seen; see above */
	if (!buf || !buf->snapshot || READ_ONCE(c->event) != event ||
	    size > buf->size)
		return ptsim_sample_pad(output, size);

	to = c->handle.head + READ_ONCE(c->written);
	/* from == to (mod size) copies the whole buffer, oldest byte first. */
	return perf_output_copy_aux(&c->handle, output, to - size, to);
}

static void ptsim_event_destroy(struct perf_event *event)
{
	struct ptsim_event *ev = event->pmu_private;

	kvfree(ev->fifo);
	kfree(ev);
	event->pmu_private = NULL;
}

static int ptsim_event_init(struct perf_event *event)
{
	u64 config = event->attr.config;
	u64 config1 = event->attr.config1;
	u64 config2 = event->attr.config2;
	unsigned int rate, period, fifo_shift, region, loss, bench;
	struct ptsim_event *ev;

	/* Any of the engine's registrations (see ptsim_init()). */
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if ((config & ~PTSIM_CFG_MASK) || (config1 & ~PTSIM_CFG1_MASK) ||
	    (config2 & ~PTSIM_CFG2_MASK))
		return -EINVAL;
	loss = FIELD_GET(PTSIM_CFG1_LOSS, config1);
	if (loss > PTSIM_LOSS_COLLISION)
		return -EINVAL;

	rate = FIELD_GET(PTSIM_CFG1_RATE, config1) ?: PTSIM_DEF_RATE;
	period = FIELD_GET(PTSIM_CFG1_PERIOD, config1) ?: PTSIM_DEF_PERIOD_US;
	fifo_shift = FIELD_GET(PTSIM_CFG1_FIFO, config1) ?: PTSIM_DEF_FIFO_SHIFT;
	region = FIELD_GET(PTSIM_CFG1_REGION, config1);
	bench = FIELD_GET(PTSIM_CFG2_BENCH, config2);
	if (rate > PTSIM_MAX_RATE || period < PTSIM_MIN_PERIOD_US ||
	    fifo_shift < PTSIM_MIN_FIFO_SHIFT ||
	    fifo_shift > PTSIM_MAX_FIFO_SHIFT ||
	    region > PTSIM_MAX_REGION_SHIFT ||
	    (bench && (bench < PTSIM_MIN_BENCH_SHIFT ||
		       bench > PTSIM_MAX_BENCH_SHIFT)) ||
	    (!bench && (config2 & PTSIM_CFG2_BENCH_SPLIT)))
		return -EINVAL;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return -ENOMEM;
	ev->fifo_size = 1U << fifo_shift;
	/*
	 * The size is the user's (up to 4 MiB): a failure is the user's
	 * -ENOMEM, not a reason for a warning with a stack dump.
	 */
	ev->fifo = kvmalloc(ev->fifo_size, GFP_KERNEL | __GFP_NOWARN);
	if (!ev->fifo) {
		kfree(ev);
		return -ENOMEM;
	}
	ev->rate = rate;
	ev->period = ns_to_ktime((u64)period * NSEC_PER_USEC);
	ev->drain = FIELD_GET(PTSIM_CFG1_DRAIN, config1) * SZ_1K ?: ULONG_MAX;
	ev->psb_period = 2048UL << FIELD_GET(PTSIM_CFG_PSB, config);
	ev->tsc = config & PTSIM_CFG_TSC;
	ev->branch = config & PTSIM_CFG_BRANCH;
	ev->region_shift = region;
	ev->noflush = FIELD_GET(PTSIM_CFG1_NOFLUSH, config1);
	ev->aux_flags = FIELD_PREP(PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK,
				   FIELD_GET(PTSIM_CFG1_FMT, config1));
	ev->loss_flag = loss == PTSIM_LOSS_PARTIAL ? PERF_AUX_FLAG_PARTIAL :
			loss == PTSIM_LOSS_COLLISION ? PERF_AUX_FLAG_COLLISION : 0;
	ev->bench_shift = bench;
	ev->bench_split = FIELD_GET(PTSIM_CFG2_BENCH_SPLIT, config2);

	event->pmu_private = ev;
	event->destroy = ptsim_event_destroy;
	return 0;
}

/* ---- sysfs: format/ and caps/ ---- */

/* Intel PT's bits, where intel_pt has them. */
PMU_FORMAT_ATTR(pt,		"config:0");
PMU_FORMAT_ATTR(tsc,		"config:10");
PMU_FORMAT_ATTR(branch,		"config:13");
PMU_FORMAT_ATTR(psb_period,	"config:24-27");
/* The simulation. */
PMU_FORMAT_ATTR(aux_fmt,	"config1:0-7");
PMU_FORMAT_ATTR(aux_loss,	"config1:8-9");
PMU_FORMAT_ATTR(rate,		"config1:10-25");
PMU_FORMAT_ATTR(period,		"config1:26-37");
PMU_FORMAT_ATTR(fifo,		"config1:38-42");
PMU_FORMAT_ATTR(drain,		"config1:43-54");
PMU_FORMAT_ATTR(region,		"config1:55-58");
PMU_FORMAT_ATTR(noflush,	"config1:59");
PMU_FORMAT_ATTR(bench,		"config2:0-4");
PMU_FORMAT_ATTR(bench_split,	"config2:5");

static struct attribute *ptsim_format_attrs[] = {
	&format_attr_pt.attr,
	&format_attr_tsc.attr,
	&format_attr_branch.attr,
	&format_attr_psb_period.attr,
	&format_attr_aux_fmt.attr,
	&format_attr_aux_loss.attr,
	&format_attr_rate.attr,
	&format_attr_period.attr,
	&format_attr_fifo.attr,
	&format_attr_drain.attr,
	&format_attr_region.attr,
	&format_attr_noflush.attr,
	&format_attr_bench.attr,
	&format_attr_bench_split.attr,
	NULL,
};

static const struct attribute_group ptsim_format_group = {
	.name	= "format",
	.attrs	= ptsim_format_attrs,
};

#define PTSIM_CAP(_name, _fmt, _value)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *page)	\
{									\
	return sysfs_emit(page, _fmt "\n", _value);			\
}									\
static DEVICE_ATTR_RO(_name)

PTSIM_CAP(record_size, "%u", PTSIM_DATA_SIZE);
PTSIM_CAP(max_rate, "%u", PTSIM_MAX_RATE);
PTSIM_CAP(min_period_us, "%u", PTSIM_MIN_PERIOD_US);
PTSIM_CAP(max_fifo_shift, "%u", PTSIM_MAX_FIFO_SHIFT);
PTSIM_CAP(max_region_shift, "%u", PTSIM_MAX_REGION_SHIFT);
PTSIM_CAP(psb_periods, "0x%lx", (2UL << FIELD_MAX(PTSIM_CFG_PSB)) - 1);
/* As intel_pt's: a table of output regions; no MTC packets. */
PTSIM_CAP(topa_multiple_entries, "%u", 1);
PTSIM_CAP(mtc, "%u", 0);

static struct attribute *ptsim_caps_attrs[] = {
	&dev_attr_record_size.attr,
	&dev_attr_max_rate.attr,
	&dev_attr_min_period_us.attr,
	&dev_attr_max_fifo_shift.attr,
	&dev_attr_max_region_shift.attr,
	&dev_attr_psb_periods.attr,
	&dev_attr_topa_multiple_entries.attr,
	&dev_attr_mtc.attr,
	NULL,
};

static const struct attribute_group ptsim_caps_group = {
	.name	= "caps",
	.attrs	= ptsim_caps_attrs,
};

static const struct attribute_group *ptsim_attr_groups[] = {
	&ptsim_format_group,
	&ptsim_caps_group,
	NULL,
};

/* Copies of ptsim_pmu with other AUX capabilities; see ptsim_init(). */
static struct pmu ptsim_nosg_pmu, ptsim_large_pmu;

static struct pmu ptsim_pmu = {
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_ITRACE | PERF_PMU_CAP_AUX_PAUSE |
			  PERF_PMU_CAP_EXCLUSIVE,
	.attr_groups	= ptsim_attr_groups,
	.event_init	= ptsim_event_init,
	.add		= ptsim_add,
	.del		= ptsim_del,
	.start		= ptsim_start,
	.stop		= ptsim_stop,
	.read		= ptsim_read,
	.setup_aux	= ptsim_setup_aux,
	.free_aux	= ptsim_free_aux,
	.snapshot_aux	= ptsim_snapshot_aux,
	.flush		= ptsim_flush,
};

/*
 * ---- ptsim_mark: a sampling PMU whose samples go into the trace ----
 *
 * What PERF_PMU_CAP_AUX_OUTPUT and pmu::aux_output_match exist for: on
 * Intel, PEBS records can be written into the Intel PT trace instead of
 * the perf buffer, when the PEBS event is in a group led by an intel_pt
 * event and has attr.aux_output set.  ptsim_mark models that pairing.  A
 * ptsim_mark event counts the ticks of the ptsim engine that traces its
 * group leader (while tracing: not paused, not stopped).  If it samples
 * (attr.sample_period, no freq), which it may only do with aux_output,
 * every sample_period-th tick writes a sample into the trace: a PTW
 * packet with the IP bit set and the sample's number as payload (the
 * count divided by the period: 1, 2, 3...), then a FUP with the user IP,
 * as a PTWRITE with IP=1 is traced.  Outside such a group it counts
 * nothing.
 *
 * It is a separate PMU in the hardware context, like the core PMU whose
 * PEBS events intel_pt pairs with; ptsim is in the software context, as
 * intel_pt is, which is what lets the perf core group the two.
 *
 * State: the engine finds the event through ptsim_cpu::mark, which
 * pmu::add sets when the event joins its leader's engine on this CPU and
 * pmu::del clears.  The perf core adds a group's leader before its
 * siblings and removes them together under the context lock, and the
 * tick runs on the same CPU with interrupts off, so the pointer needs no
 * lock (see "Contexts and serialisation").  The count is event->count
 * itself, only written by the tick on the event's CPU.
 */
static struct pmu ptsim_mark_pmu;

/* Count one engine tick for the mark event; sample every period-th. */
static void ptsim_mark_tick(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip)
{
	struct perf_event *mark = c->mark;
	u64 period = mark->hw.sample_period;
	u8 rec[PTSIM_MAX_RECORD];
	u64 n, nr;

	if (mark->hw.state & PERF_HES_STOPPED)
		return;
	n = local64_add_return(1, &mark->count);
	if (!period || !mark->attr.aux_output)
		return;
	nr = div64_u64(n, period);
	if (nr * period == n)
		put_control(ev, rec, rec_mark(rec, (u32)nr, ip));
}

static int ptsim_mark_event_init(struct perf_event *event)
{
	if (event->attr.type != ptsim_mark_pmu.type)
		return -ENOENT;
	if (event->attr.config || event->attr.config1 || event->attr.config2)
		return -EINVAL;
	/* Its samples exist only in a trace: aux_output, a fixed period. */
	if (is_sampling_event(event) &&
	    (event->attr.freq || !event->attr.aux_output))
		return -EINVAL;
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
	if (leader && leader == c->event && !c->mark)
		c->mark = event;
	event->hw.state = flags & PERF_EF_START ? 0 : PERF_HES_STOPPED;
	return 0;
}

static void ptsim_mark_del(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	if (c->mark == event)
		c->mark = NULL;
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
	return event->pmu->event_init == ptsim_event_init;
}

static struct pmu ptsim_mark_pmu = {
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

/* ---- debugfs: the benchmark's figures ---- */

static int ptsim_bench_show(struct seq_file *m, void *unused)
{
	struct ptsim_bench_stats sum = { };
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_bench_stats *st = per_cpu_ptr(&ptsim_bench_stats,
							    cpu);

		sum.txns += READ_ONCE(st->txns);
		sum.bytes += READ_ONCE(st->bytes);
		sum.ns += READ_ONCE(st->ns);
		sum.stalls += READ_ONCE(st->stalls);
		sum.end_ns += READ_ONCE(st->end_ns);
		sum.begin_ns += READ_ONCE(st->begin_ns);
	}
	seq_printf(m, "txns %llu bytes %llu ns %llu stalls %llu end_ns %llu begin_ns %llu\n",
		   sum.txns, sum.bytes, sum.ns, sum.stalls, sum.end_ns,
		   sum.begin_ns);
	return 0;
}

static int ptsim_bench_open(struct inode *inode, struct file *file)
{
	return single_open(file, ptsim_bench_show, NULL);
}

/* Any write resets the figures of every CPU. */
static ssize_t ptsim_bench_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_bench_stats *st = per_cpu_ptr(&ptsim_bench_stats,
							    cpu);

		WRITE_ONCE(st->txns, 0);
		WRITE_ONCE(st->bytes, 0);
		WRITE_ONCE(st->ns, 0);
		WRITE_ONCE(st->stalls, 0);
		WRITE_ONCE(st->end_ns, 0);
		WRITE_ONCE(st->begin_ns, 0);
	}
	return count;
}

static const struct file_operations ptsim_bench_fops = {
	.owner		= THIS_MODULE,
	.open		= ptsim_bench_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= ptsim_bench_write,
};

static int ptsim_setup_aux_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	mutex_lock(&ptsim_setup_lock);
	seq_printf(m, "pages %u runs", ptsim_setup_pages);
	for (i = 0; i < PTSIM_RUN_ORDERS; i++)
		seq_printf(m, " %u", ptsim_setup_runs[i]);
	seq_putc(m, '\n');
	mutex_unlock(&ptsim_setup_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ptsim_setup_aux);

static void __init ptsim_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("ptsim", NULL);

	debugfs_create_file("bench", 0600, dir, NULL, &ptsim_bench_fops);
	debugfs_create_file("setup_aux", 0400, dir, NULL,
			    &ptsim_setup_aux_fops);
	debugfs_create_atomic_t("setup_aux_calls", 0400, dir,
				&ptsim_setup_aux_calls);
	debugfs_create_atomic_t("free_aux_calls", 0400, dir,
				&ptsim_free_aux_calls);
}

static int __init ptsim_init(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		struct ptsim_cpu *c = per_cpu_ptr(&ptsim_cpus, cpu);

		hrtimer_init(&c->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		c->timer.function = ptsim_tick;
	}
	ptsim_debugfs_init();
	/*
	 * The same engine for the other two kinds of AUX output hardware,
	 * so that the perf core's allocation for them can be tested: one
	 * that cannot scatter-gather (AUX_NO_SG, like BTS or Intel PT
	 * without ToPA) and one that merely prefers large contiguous
	 * chunks (AUX_PREFER_LARGE, like Intel PT with a single-entry
	 * ToPA).  Without them, no kernel would run those paths.  Copied
	 * before ptsim_pmu is registered, which fills in its core state.
	 */
	ptsim_nosg_pmu = ptsim_pmu;
	ptsim_nosg_pmu.capabilities |= PERF_PMU_CAP_AUX_NO_SG;
	ptsim_large_pmu = ptsim_pmu;
	ptsim_large_pmu.capabilities |= PERF_PMU_CAP_AUX_PREFER_LARGE;

	ret = perf_pmu_register(&ptsim_pmu, "ptsim", -1);
	if (ret)
		return ret;
	ret = perf_pmu_register(&ptsim_nosg_pmu, "ptsim_nosg", -1);
	if (ret)
		pr_warn("ptsim_nosg not registered (%d)\n", ret);
	ret = perf_pmu_register(&ptsim_large_pmu, "ptsim_large", -1);
	if (ret)
		pr_warn("ptsim_large not registered (%d)\n", ret);
	ret = perf_pmu_register(&ptsim_mark_pmu, "ptsim_mark", -1);
	if (ret)
		pr_warn("ptsim_mark not registered (%d)\n", ret);
	return 0;
}

device_initcall(ptsim_init);
