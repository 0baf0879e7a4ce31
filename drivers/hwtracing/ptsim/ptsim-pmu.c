// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim's PMU: the struct pmu callbacks that drive the engine
 * (ptsim-engine.c), the AUX buffer it writes into, AUX sampling, the
 * configuration, sysfs, and the registrations.
 */
#define pr_fmt(fmt) "ptsim: " fmt

#include <linux/bitfield.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "ptsim.h"

/*
 * What the last pmu::setup_aux call received, for debugfs (ptsim/setup_aux):
 * the number of pages and how they group into physically contiguous runs.
 * Written under ptsim_setup_lock; a debugging aid, not used by the engine.
 */
#define PTSIM_RUN_ORDERS	(MAX_PAGE_ORDER + 2)
static DEFINE_MUTEX(ptsim_setup_lock);
static unsigned int ptsim_setup_pages;
static unsigned int ptsim_setup_runs[PTSIM_RUN_ORDERS];

static struct pmu ptsim_pmu;

/**
 * ptsim_start() - pmu::start: begin the AUX transaction, start the engine
 * @event: the event
 * @flags: PERF_EF_RESUME for a resume, which only the next tick acts on
 *
 * Opens the transaction that stays open while the event runs, reports the
 * trace as started (perf_event_itrace_started()), writes the enable
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
	/* A stop in NMI the tick has not acted on yet: do its work first. */
	if (READ_ONCE(c->stop_req)) {
		hrtimer_try_to_cancel(&c->timer);
		ptsim_engine_stop(c, event);
	}

	/* The engine's parts for this event (see struct ptsim_hooks). */
	c->hooks[PTSIM_HOOK_DELIVERY] = ev->irq_pmi || ev->nmi_late ?
					&ptsim_irq_hooks :
					ptsim_nmi_delivery() ?: &ptsim_irq_hooks;
	c->hooks[PTSIM_HOOK_MODE] = ev->bench_shift ? &ptsim_bench_hooks : NULL;
	c->pmi_cap = ev->unprivileged ? PTSIM_USER_PMIS_PER_TICK : UINT_MAX;
	c->pmi_carry = 0;
	/* The engine's FIFO, unless the event has a larger one; empty. */
	ev->fifo = ev->own_fifo ?: c->fifo;
	ptsim_fifo_reset(ev);
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
 * @flags: PERF_EF_PAUSE for a pause, which the engine acts on (see the top)
 *
 * Stops the tick and does what disabling trace hardware does
 * (ptsim_engine_stop()): the FIFO is written out and the transaction
 * ended.  No transaction may stay open once pmu::stop has returned from
 * a sched-out, a disable or a del: the perf core stops the events of a
 * buffer before it frees it.
 *
 * The perf core also stops the event in NMI: when it throttles the
 * event's group (perf_event_throttle_group(), from the overflow of a
 * member: ptsim_mark's PMI, or a core PMU counter's NMI), with @flags 0.
 * Neither the tick's timer, whose base lock is not NMI-safe, nor the
 * FIFO's flush, which may take PMIs of its own, can be touched there, nor
 * inside the tick, whose drain the throttle may interrupt (with
 * irq_pmi).  So there the event is only marked stopped, and the work is
 * requested (&struct ptsim_cpu.stop_req): the tick does it, at its end if
 * the throttle came inside it, at its next run otherwise (within one
 * period, during which it may still raise PMIs within its cap), unless
 * pmu::start, stop or flush comes first and does it.  intel_pt's stop is
 * NMI-safe as it stands (it turns the hardware off and, outside overwrite
 * mode, ends the transaction, taking no lock); ptsim's work is not.
 *
 * Context: the event's CPU, interrupts disabled; a pause, and a throttle,
 * may also come from NMI context.
 */
static void ptsim_stop(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	if (flags & PERF_EF_PAUSE)
		return;
	if (in_nmi() || c->in_tick) {
		if (!(event->hw.state & PERF_HES_STOPPED)) {
			WRITE_ONCE(c->stop_req, true);
			event->hw.state = PERF_HES_STOPPED;
		}
		return;
	}
	if ((event->hw.state & PERF_HES_STOPPED) && !READ_ONCE(c->stop_req))
		return;

	/*
	 * IRQs are off and the timer is pinned to this CPU, so it is not
	 * running; cancelling cannot fail.
	 */
	hrtimer_try_to_cancel(&c->timer);
	ptsim_engine_stop(c, event);
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
 * The engine's ptsim_mark event, if it has one, belongs to @event's
 * group, and goes with it: the perf core removes a group's members with
 * their leader, but a member whose leader is closed stays on the CPU as
 * a group of its own, and must count nothing for the next event that
 * takes the engine (ptsim_mark_add() hooks a mark up again when its
 * group comes back).
 *
 * Context: the event's CPU, interrupts disabled.
 */
static void ptsim_del(struct perf_event *event, int flags)
{
	struct ptsim_cpu *c = this_cpu_ptr(&ptsim_cpus);

	ptsim_stop(event, PERF_EF_UPDATE);
	c->pmi_carry = 0;
	c->hooks[PTSIM_HOOK_MARK] = NULL;
	c->mark = NULL;
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
	/*
	 * One entry per region: with one-page regions a 2 GiB area needs
	 * 4 MiB of table, more than kmalloc gives, so fall back to vmalloc.
	 */
	buf = kvzalloc_node(struct_size(buf, regions, nr_regions),
			    GFP_KERNEL_ACCOUNT, node);
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
			kvfree(buf);
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
	kvfree(buf);
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

/*
 * ptsim events alive: initialised and not yet destroyed (debugfs
 * ptsim/events).  The tests' leak check requires it back at its baseline
 * once every event is closed: a leaked reference on an event keeps it
 * from being freed, and nothing else a test can see shows that.
 */
static atomic_t ptsim_events_alive;

static void ptsim_event_destroy(struct perf_event *event)
{
	struct ptsim_event *ev = event->pmu_private;

	kvfree(ev->own_fifo);
	kfree(ev);
	event->pmu_private = NULL;
	atomic_dec(&ptsim_events_alive);
}

static int ptsim_event_init(struct perf_event *event)
{
	u64 config = event->attr.config;
	u64 config1 = event->attr.config1;
	u64 config2 = event->attr.config2;
	unsigned int rate, period, fifo_shift, region, loss, bench;
	struct ptsim_event *ev;
	bool unprivileged;

	/* Any of the engine's registrations (see ptsim_init()). */
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if ((config & ~PTSIM_CFG_MASK) || (config1 & ~PTSIM_CFG1_MASK) ||
	    (config2 & ~PTSIM_CFG2_MASK))
		return -EINVAL;
	loss = FIELD_GET(PTSIM_CFG1_LOSS, config1);
	if (loss > PTSIM_LOSS_COLLISION)
		return -EINVAL;
	/* TNT packets are branch packets: no tnt without branch. */
	if ((config1 & PTSIM_CFG1_TNT) && !(config & PTSIM_CFG_BRANCH))
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
	/*
	 * What can load the machine takes CAP_PERFMON (see "Privileges" in
	 * ptsim.rst).  An inherited event was checked when its parent was
	 * opened: the task that forks need not be the one that opened it.
	 */
	if (event->parent)
		unprivileged = ((struct ptsim_event *)event->parent->pmu_private)->unprivileged;
	else
		unprivileged = !perfmon_capable();
	if ((rate > PTSIM_USER_MAX_RATE || period < PTSIM_USER_MIN_PERIOD_US ||
	     fifo_shift > PTSIM_USER_MAX_FIFO_SHIFT || bench) &&
	    !event->parent && unprivileged)
		return -EACCES;

	/* Charged to the opener's memory cgroup, as its buffers are. */
	ev = kzalloc_obj(*ev, GFP_KERNEL_ACCOUNT);
	if (!ev)
		return -ENOMEM;
	ev->fifo_size = 1U << fifo_shift;
	/*
	 * A FIFO larger than the engine's is the event's own, which only
	 * CAP_PERFMON may ask for (see above).  The size is the user's (up
	 * to 4 MiB): a failure is the user's -ENOMEM, not a reason for a
	 * warning with a stack dump.
	 */
	if (fifo_shift > PTSIM_USER_MAX_FIFO_SHIFT) {
		ev->own_fifo = kvmalloc(ev->fifo_size,
					GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!ev->own_fifo) {
			kfree(ev);
			return -ENOMEM;
		}
	}
	ev->rate = rate;
	ev->period = ns_to_ktime((u64)period * NSEC_PER_USEC);
	ev->drain = FIELD_GET(PTSIM_CFG1_DRAIN, config1) * SZ_1K ?: ULONG_MAX;
	ev->psb_period = 2048UL << FIELD_GET(PTSIM_CFG_PSB, config);
	ev->tsc = config & PTSIM_CFG_TSC;
	ev->tnt = FIELD_GET(PTSIM_CFG1_TNT, config1);
	ev->region_shift = region;
	ev->noflush = FIELD_GET(PTSIM_CFG1_NOFLUSH, config1);
	ev->irq_pmi = FIELD_GET(PTSIM_CFG1_IRQ_PMI, config1);
	ev->unprivileged = unprivileged;
	ev->aux_flags = FIELD_PREP(PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK,
				   FIELD_GET(PTSIM_CFG1_FMT, config1));
	ev->loss_flag = loss == PTSIM_LOSS_PARTIAL ? PERF_AUX_FLAG_PARTIAL :
			loss == PTSIM_LOSS_COLLISION ? PERF_AUX_FLAG_COLLISION : 0;
	ev->bench_shift = bench;
	ev->bench_split = FIELD_GET(PTSIM_CFG2_BENCH_SPLIT, config2);

	event->pmu_private = ev;
	event->destroy = ptsim_event_destroy;
	atomic_inc(&ptsim_events_alive);
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
PMU_FORMAT_ATTR(irq_pmi,	"config1:60");
PMU_FORMAT_ATTR(tnt,		"config1:61");
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
	&format_attr_irq_pmi.attr,
	&format_attr_tnt.attr,
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
/* What a user without CAP_PERFMON may ask for and cost ("Privileges"). */
PTSIM_CAP(user_max_rate, "%u", PTSIM_USER_MAX_RATE);
PTSIM_CAP(user_min_period_us, "%u", PTSIM_USER_MIN_PERIOD_US);
PTSIM_CAP(user_max_fifo_shift, "%u", PTSIM_USER_MAX_FIFO_SHIFT);
PTSIM_CAP(user_pmis_per_tick, "%u", PTSIM_USER_PMIS_PER_TICK);
PTSIM_CAP(psb_periods, "0x%lx", (2UL << FIELD_MAX(PTSIM_CFG_PSB)) - 1);
/* As intel_pt's: a table of output regions; no MTC packets. */
PTSIM_CAP(topa_multiple_entries, "%u", 1);
PTSIM_CAP(mtc, "%u", 0);
/* What a module has not (PTSIM_BUILTIN). */
PTSIM_CAP(aux_sample, "%d", PTSIM_BUILTIN);
PTSIM_CAP(mark_pmi, "%d", PTSIM_BUILTIN);
/* Whether ptsim has a flush callback (ptsim_flush_init()). */
static bool ptsim_can_flush;
PTSIM_CAP(flush, "%d", ptsim_can_flush);

static struct attribute *ptsim_caps_attrs[] = {
	&dev_attr_record_size.attr,
	&dev_attr_max_rate.attr,
	&dev_attr_min_period_us.attr,
	&dev_attr_max_fifo_shift.attr,
	&dev_attr_max_region_shift.attr,
	&dev_attr_user_max_rate.attr,
	&dev_attr_user_min_period_us.attr,
	&dev_attr_user_max_fifo_shift.attr,
	&dev_attr_user_pmis_per_tick.attr,
	&dev_attr_psb_periods.attr,
	&dev_attr_topa_multiple_entries.attr,
	&dev_attr_mtc.attr,
	&dev_attr_aux_sample.attr,
	&dev_attr_mark_pmi.attr,
	&dev_attr_flush.attr,
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
	.module		= THIS_MODULE,
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
	.snapshot_aux	= PTR_IF(PTSIM_BUILTIN, ptsim_snapshot_aux),
};

/* Is @pmu one of the engine's registrations (ptsim, ptsim_nosg, ...)? */
bool ptsim_is_engine(const struct pmu *pmu)
{
	return pmu->event_init == ptsim_event_init;
}

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

static struct dentry *ptsim_debugfs_dir;
static bool ptsim_nosg_registered, ptsim_large_registered;
static bool ptsim_mark_registered;

static void __init ptsim_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("ptsim", NULL);

	ptsim_debugfs_dir = dir;
	ptsim_bench_debugfs_init(dir);
	ptsim_irqoff_debugfs_init(dir);
	ptsim_tick_debugfs_init(dir);
	debugfs_create_file("setup_aux", 0400, dir, NULL,
			    &ptsim_setup_aux_fops);
	debugfs_create_atomic_t("setup_aux_calls", 0400, dir,
				&ptsim_setup_aux_calls);
	debugfs_create_atomic_t("free_aux_calls", 0400, dir,
				&ptsim_free_aux_calls);
	debugfs_create_atomic_t("events", 0400, dir, &ptsim_events_alive);
	ptsim_nmi_init(dir);
}

static void ptsim_free_fifos(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptsim_cpu *c = per_cpu_ptr(&ptsim_cpus, cpu);

		kvfree(c->fifo);
		c->fifo = NULL;
	}
}

static int __init ptsim_init(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		struct ptsim_cpu *c = per_cpu_ptr(&ptsim_cpus, cpu);

		hrtimer_setup(&c->timer, ptsim_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		/* The engine's FIFO: its trace unit's on-chip buffer. */
		c->fifo = kvmalloc_node(1U << PTSIM_USER_MAX_FIFO_SHIFT,
					GFP_KERNEL, cpu_to_node(cpu));
		if (!c->fifo) {
			ptsim_free_fifos();
			return -ENOMEM;
		}
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
	ptsim_can_flush = ptsim_flush_init(&ptsim_pmu);
	ptsim_nosg_pmu = ptsim_pmu;
	ptsim_nosg_pmu.capabilities |= PERF_PMU_CAP_AUX_NO_SG;
	ptsim_large_pmu = ptsim_pmu;
	ptsim_large_pmu.capabilities |= PERF_PMU_CAP_AUX_PREFER_LARGE;

	ret = perf_pmu_register(&ptsim_pmu, "ptsim", -1);
	if (ret) {
		ptsim_nmi_exit();
		debugfs_remove_recursive(ptsim_debugfs_dir);
		ptsim_free_fifos();
		return ret;
	}
	ret = perf_pmu_register(&ptsim_nosg_pmu, "ptsim_nosg", -1);
	if (ret)
		pr_warn("ptsim_nosg not registered (%d)\n", ret);
	ptsim_nosg_registered = !ret;
	ret = perf_pmu_register(&ptsim_large_pmu, "ptsim_large", -1);
	if (ret)
		pr_warn("ptsim_large not registered (%d)\n", ret);
	ptsim_large_registered = !ret;
	ret = ptsim_mark_register();
	if (ret)
		pr_warn("ptsim_mark not registered (%d)\n", ret);
	ptsim_mark_registered = !ret;
	return 0;
}

/*
 * Unloading: every PMU has ->module set, so each event holds a reference
 * to the module from perf_event_open() until it is freed, and a mapped
 * AUX area keeps its event alive.  So the module cannot go while an event
 * is open or an area mapped (rmmod: EBUSY), and once it goes no event,
 * engine tick or PMI of ours is left.
 */
static void __exit ptsim_exit(void)
{
	unsigned int cpu;

	if (ptsim_mark_registered)
		ptsim_mark_unregister();
	if (ptsim_large_registered)
		perf_pmu_unregister(&ptsim_large_pmu);
	if (ptsim_nosg_registered)
		perf_pmu_unregister(&ptsim_nosg_pmu);
	perf_pmu_unregister(&ptsim_pmu);
	ptsim_nmi_exit();
	debugfs_remove_recursive(ptsim_debugfs_dir);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&per_cpu_ptr(&ptsim_cpus, cpu)->timer);
	ptsim_free_fifos();
}

module_init(ptsim_init);
module_exit(ptsim_exit);

MODULE_DESCRIPTION("ptsim: a simulated Intel PT PMU writing through the perf AUX area");
MODULE_LICENSE("GPL");
