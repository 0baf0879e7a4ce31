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
 * is described in Documentation/admin-guide/perf/ptsim.rst.
 *
 * Contexts and serialisation
 * --------------------------
 * Everything that touches the engine of a CPU runs on that CPU with
 * interrupts disabled: pmu::add/del/start/stop are called by the perf core
 * under the context lock (IRQs off) on the event's CPU, and the engine
 * tick is a pinned hard-irq hrtimer.  So the per-CPU state (struct
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
 * region padding) and ended for good by pmu::stop or when the buffer is
 * full.  Whatever the FIFO holds when the engine stops has either been
 * written out by stop or is lost together with a TRUNCATED record, so no
 * FIFO content survives from one activation of an event to the next.
 */
#define pr_fmt(fmt) "ptsim: " fmt

#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/unaligned.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#endif

/* attr.config layout; see the format/ attributes below. */
#define PTSIM_CFG_RATE		GENMASK_ULL(15, 0)
#define PTSIM_CFG_PERIOD	GENMASK_ULL(27, 16)
#define PTSIM_CFG_FIFO		GENMASK_ULL(32, 28)
#define PTSIM_CFG_DRAIN		GENMASK_ULL(44, 33)
#define PTSIM_CFG_PSB		GENMASK_ULL(48, 45)
#define PTSIM_CFG_REGION	GENMASK_ULL(52, 49)
#define PTSIM_CFG_MASK		GENMASK_ULL(52, 0)

#define PTSIM_DEF_RATE		64
#define PTSIM_MAX_RATE		4096
#define PTSIM_DEF_PERIOD_US	100
#define PTSIM_MIN_PERIOD_US	10
#define PTSIM_DEF_FIFO_SHIFT	13
#define PTSIM_MIN_FIFO_SHIFT	9
#define PTSIM_MAX_FIFO_SHIFT	22
#define PTSIM_MAX_REGION_SHIFT	10

/* A data record: PTW with the sequence number, then short TNTs. */
#define PTSIM_DATA_SIZE		16
/* Largest record we build (PSB+ with a FUP is 41 bytes). */
#define PTSIM_MAX_RECORD	64
/* Core:bus ratio reported by CBR packets. */
#define PTSIM_CBR_RATIO		0x20

/*
 * The AUX buffer as the engine sees it, built by setup_aux.  It is shared
 * by every event that writes into the same AUX area (inherited children,
 * events redirected with SET_OUTPUT) and only used inside an AUX
 * transaction, which the perf core allows one of at a time per buffer.
 *
 * Like a ToPA table, the buffer is a list of output regions.  Here they
 * are of equal size, a power of two no larger than the buffer, so the
 * region of an offset is found by a shift; each entry points at the
 * region's pages in the page array perf allocated.
 */
struct ptsim_region {
	void		**pages;
};

struct ptsim_buf {
	unsigned long		size;		/* bytes, a power of two */
	unsigned long		region_size;	/* bytes, a power of two */
	unsigned int		region_shift;	/* log2(region_size) */
	bool			snapshot;	/* overwrite mode */
	u64			seq;		/* next data record number */
	unsigned int		nr_regions;
	struct ptsim_region	regions[] __counted_by(nr_regions);
};

/*
 * Per-event state: the configuration, decoded once, and the FIFO.  The
 * FIFO is a byte ring; each record in it is preceded by a one-byte length
 * tag, the packet boundary a real FIFO also keeps, so the DMA can honour
 * the region alignment rule.  Indices run free and are masked on access.
 */
struct ptsim_event {
	unsigned int	rate;		/* data records per tick */
	ktime_t		period;
	unsigned long	drain;		/* bytes per tick, ULONG_MAX: all */
	unsigned long	psb_period;	/* bytes */
	unsigned int	region_shift;	/* region = PAGE_SIZE << this */

	u8		*fifo;
	u32		fifo_size;
	u32		fifo_head;	/* producer */
	u32		fifo_tail;	/* DMA */
	unsigned long	since_psb;	/* bytes produced since the last PSB+ */
	u32		lost;		/* data bytes dropped, not yet reported */
	bool		ovf_pending;
};

/* The trace engine of one CPU. */
struct ptsim_cpu {
	struct hrtimer			timer;
	struct perf_event		*event;		/* added on this CPU */
	struct perf_output_handle	handle;
	struct ptsim_buf		*buf;	/* non-NULL: transaction open */
	unsigned long			written; /* bytes in this transaction */
	bool				tracing; /* producing (not paused) */
};

static DEFINE_PER_CPU(struct ptsim_cpu, ptsim_cpus);

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

/* PSB+: the synchronisation point; a FUP only while tracing is on. */
static unsigned int rec_psb_plus(u8 *p, u64 fup_ip)
{
	unsigned int n;

	n = pt_psb(p);
	n += pt_tsc(p + n, ptsim_tsc());
	n += pt_cbr(p + n, PTSIM_CBR_RATIO);
	n += pt_mode_exec(p + n);
	if (fup_ip)
		n += pt_ip(p + n, PT_FUP, fup_ip);
	n += pt_ext(p + n, 0x23);	/* PSBEND */
	return n;
}

static unsigned int rec_data(u8 *p, u64 seq)
{
	unsigned int n = pt_ptw64(p, seq);

	/* Short TNT packets, one "taken" bit each, to fill the record. */
	memset(p + n, 0x06, PTSIM_DATA_SIZE - n);
	return PTSIM_DATA_SIZE;
}

static unsigned int rec_disable(u8 *p, u64 ip)
{
	unsigned int n = 0;

	if (ip)
		n = pt_ip(p, PT_FUP, ip);
	return n + pt_ip(p + n, PT_TIP_PGD, 0);
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
	return true;
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

/* ---- the DMA: from the FIFO into the AUX area ---- */

static void aux_copy(struct ptsim_buf *buf, unsigned long pos, const void *src,
		     unsigned int len)
{
	while (len) {
		unsigned long off = pos & (buf->size - 1);
		struct ptsim_region *r = &buf->regions[off >> buf->region_shift];
		unsigned long in = off & (buf->region_size - 1);
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

static bool ptsim_begin(struct ptsim_cpu *c, struct perf_event *event)
{
	c->buf = perf_aux_output_begin(&c->handle, event);
	c->written = 0;
	return c->buf;
}

/* End the AUX transaction, publishing what was written in it. */
static void ptsim_commit(struct ptsim_cpu *c)
{
	struct perf_output_handle *h = &c->handle;
	unsigned long size = c->written;

	/*
	 * The data stores must be visible before perf_aux_output_end()
	 * publishes aux_head; the consumer reads aux_head with acquire
	 * semantics before reading the data.
	 */
	smp_wmb();
	if (c->buf->snapshot) {
		/*
		 * Overwrite mode: the driver owns the head and hands the
		 * absolute position to perf (perf_aux_output_begin() gave us
		 * the previous one); the record's size is what this
		 * transaction left in the buffer.
		 */
		h->head += size;
		size = min(size, c->buf->size);
	}
	perf_aux_output_end(h, size);
	c->buf = NULL;
	c->written = 0;
}

/* The buffer is full: stop, like hardware reaching a STOP region. */
static void ptsim_truncate(struct ptsim_cpu *c)
{
	perf_aux_output_flag(&c->handle, PERF_AUX_FLAG_TRUNCATED);
	ptsim_commit(c);
}

/* The "interrupt": end the transaction and begin the next one. */
static bool ptsim_interrupt(struct ptsim_cpu *c)
{
	struct perf_event *event = c->handle.event;

	ptsim_commit(c);
	return ptsim_begin(c, event);
}

/*
 * Write one record at the current position.  Returns false when the
 * engine had to stop: the buffer is full (the transaction was ended with
 * TRUNCATED) or has gone away (perf_aux_output_begin() failed).
 */
static bool ptsim_emit(struct ptsim_cpu *c, const u8 *rec, unsigned int len)
{
	struct ptsim_buf *buf = c->buf;
	unsigned long pos = c->handle.head + c->written;
	unsigned long room = buf->region_size - (pos & (buf->region_size - 1));

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
			c->written += room;
		} else {
			if (c->written) {
				if (!ptsim_interrupt(c))
					return false;
				buf = c->buf;
				pos = c->handle.head;
				room = buf->region_size -
				       (pos & (buf->region_size - 1));
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
	c->written += len;

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

/* ---- the producer ---- */

static void ptsim_trace_on(struct ptsim_cpu *c, struct ptsim_event *ev, u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];

	put_control(ev, rec, rec_psb_plus(rec, 0));
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

/* One tick of packet production; returns the bytes queued. */
static unsigned long ptsim_produce(struct ptsim_cpu *c, struct ptsim_event *ev,
				   u64 ip)
{
	u8 rec[PTSIM_MAX_RECORD];
	unsigned long bytes = 0;
	unsigned int i, len;

	for (i = 0; i < ev->rate; i++) {
		if (ev->ovf_pending) {
			len = rec_overflow(rec, ev->lost, ip);
			if (!fifo_put(ev, rec, len))
				goto drop;
			ev->ovf_pending = false;
			ev->lost = 0;
			bytes += len;
			ev->since_psb += len;
		}
		if (ev->since_psb >= ev->psb_period) {
			len = rec_psb_plus(rec, ip);
			if (!fifo_put(ev, rec, len))
				goto drop;
			bytes += len;
			ev->since_psb = 0;
		}
		len = rec_data(rec, c->buf->seq);
		if (!fifo_put(ev, rec, len))
			goto drop;
		c->buf->seq++;
		bytes += len;
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
	return bytes;
}

/* The engine stopped on its own (buffer full or gone). */
static void ptsim_halt(struct ptsim_cpu *c, struct perf_event *event)
{
	fifo_reset(event->pmu_private);
	c->tracing = false;
	event->hw.state = PERF_HES_STOPPED;
}

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
	ip = ptsim_user_ip();

	paused = READ_ONCE(event->hw.aux_paused);
	if (paused && c->tracing)
		ptsim_trace_off(c, ev, ip);
	else if (!paused && !c->tracing)
		ptsim_trace_on(c, ev, ip);
	if (c->tracing)
		local64_add(ptsim_produce(c, ev, ip), &event->count);

	if (!ptsim_drain(c, ev, ev->drain)) {
		ptsim_halt(c, event);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, ev->period);
	return HRTIMER_RESTART;
}

/* ---- struct pmu callbacks ---- */

static struct pmu ptsim_pmu;

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
	if (!READ_ONCE(event->hw.aux_paused))
		ptsim_trace_on(c, ev, ptsim_user_ip());
	hrtimer_start(&c->timer, ev->period, HRTIMER_MODE_REL_PINNED_HARD);
}

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
	fifo_reset(ev);
	c->tracing = false;
}

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

static void ptsim_del(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	ptsim_stop(event, PERF_EF_UPDATE);
	c->event = NULL;
}

static void ptsim_read(struct perf_event *event)
{
	/* event->count is kept up to date by the tick. */
}

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
	buf->region_size = (unsigned long)region_pages << PAGE_SHIFT;
	buf->region_shift = ilog2(buf->region_size);
	buf->snapshot = overwrite;
	for (i = 0; i < nr_regions; i++)
		buf->regions[i].pages = pages + i * region_pages;
	return buf;
}

static void ptsim_free_aux(void *buf)
{
	kfree(buf);
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
	unsigned int rate, period, fifo_shift, region;
	struct ptsim_event *ev;

	if (event->attr.type != ptsim_pmu.type)
		return -ENOENT;
	if ((config & ~PTSIM_CFG_MASK) || event->attr.config1 ||
	    event->attr.config2)
		return -EINVAL;

	rate = FIELD_GET(PTSIM_CFG_RATE, config) ?: PTSIM_DEF_RATE;
	period = FIELD_GET(PTSIM_CFG_PERIOD, config) ?: PTSIM_DEF_PERIOD_US;
	fifo_shift = FIELD_GET(PTSIM_CFG_FIFO, config) ?: PTSIM_DEF_FIFO_SHIFT;
	region = FIELD_GET(PTSIM_CFG_REGION, config);
	if (rate > PTSIM_MAX_RATE || period < PTSIM_MIN_PERIOD_US ||
	    fifo_shift < PTSIM_MIN_FIFO_SHIFT ||
	    fifo_shift > PTSIM_MAX_FIFO_SHIFT ||
	    region > PTSIM_MAX_REGION_SHIFT)
		return -EINVAL;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return -ENOMEM;
	ev->fifo_size = 1U << fifo_shift;
	ev->fifo = kvmalloc(ev->fifo_size, GFP_KERNEL);
	if (!ev->fifo) {
		kfree(ev);
		return -ENOMEM;
	}
	ev->rate = rate;
	ev->period = ns_to_ktime((u64)period * NSEC_PER_USEC);
	ev->drain = FIELD_GET(PTSIM_CFG_DRAIN, config) * SZ_1K ?: ULONG_MAX;
	ev->psb_period = 2048UL << FIELD_GET(PTSIM_CFG_PSB, config);
	ev->region_shift = region;

	event->pmu_private = ev;
	event->destroy = ptsim_event_destroy;
	return 0;
}

/* ---- sysfs: format/ and caps/ ---- */

PMU_FORMAT_ATTR(rate,		"config:0-15");
PMU_FORMAT_ATTR(period,		"config:16-27");
PMU_FORMAT_ATTR(fifo,		"config:28-32");
PMU_FORMAT_ATTR(drain,		"config:33-44");
PMU_FORMAT_ATTR(psb_period,	"config:45-48");
PMU_FORMAT_ATTR(region,		"config:49-52");

static struct attribute *ptsim_format_attrs[] = {
	&format_attr_rate.attr,
	&format_attr_period.attr,
	&format_attr_fifo.attr,
	&format_attr_drain.attr,
	&format_attr_psb_period.attr,
	&format_attr_region.attr,
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

static struct attribute *ptsim_caps_attrs[] = {
	&dev_attr_record_size.attr,
	&dev_attr_max_rate.attr,
	&dev_attr_min_period_us.attr,
	&dev_attr_max_fifo_shift.attr,
	&dev_attr_max_region_shift.attr,
	&dev_attr_psb_periods.attr,
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
};

static int __init ptsim_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_cpu *c = per_cpu_ptr(&ptsim_cpus, cpu);

		hrtimer_init(&c->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		c->timer.function = ptsim_tick;
	}
	return perf_pmu_register(&ptsim_pmu, "ptsim", -1);
}

device_initcall(ptsim_init);

