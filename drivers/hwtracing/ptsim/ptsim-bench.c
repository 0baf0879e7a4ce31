// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptsim's benchmark mode: instead of packets, each tick runs AUX
 * transactions of a fixed size back to back through the exported output
 * API and times them, so that the same code measures whichever
 * implementation of the AUX area the kernel has.  The figures are in
 * debugfs, ptsim/bench (Documentation/admin-guide/perf/ptsim.rst).
 */
#define pr_fmt(fmt) "ptsim: " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/seq_file.h>

#include "ptsim.h"

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

/**
 * ptsim_bench() - one tick of the benchmark mode: its ``run`` hook
 * @c: the trace engine of this CPU, with a transaction open
 * @ev: the event, with @ev->bench_shift set
 *
 * Runs @ev->rate AUX transactions back to back, each the way a trace
 * unit's interrupt handler does it: the DMA writes 2^@ev->bench_shift
 * bytes (PAD packets, copied from the zero page) at handle.head, the
 * transaction is ended, which publishes aux_head, logs a PERF_RECORD_AUX
 * and wakes the consumer at the watermark, and the next one is begun:
 * the PMI, in NMI unless the event has irq_pmi (see "The PMI").
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
			ptsim_aux_copy(buf, c->handle.head + off, zero,
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
			open = ptsim_pmi(c, PTSIM_PMI_INT);
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
		open = ptsim_pmi(c, PTSIM_PMI_INT);
	}
	return open;
}

const struct ptsim_hooks ptsim_bench_hooks = {
	.run	= ptsim_bench,
};

/* debugfs: the benchmark's figures */

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

DEFINE_SHOW_STORE_ATTRIBUTE(ptsim_bench);

void __init ptsim_bench_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("bench", 0600, dir, NULL, &ptsim_bench_fops);
}
