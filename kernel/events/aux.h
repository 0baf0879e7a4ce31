/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf AUX area: internal interface between the perf core and
 * kernel/events/aux.c.  The design (the object, its lifetime, its locking
 * and the ordering protocol with userspace) is described at the top of
 * aux.c.
 */
#ifndef _KERNEL_EVENTS_AUX_H
#define _KERNEL_EVENTS_AUX_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <asm/page.h>

struct mm_struct;
struct module;
struct perf_buffer;
struct perf_event;
struct perf_output_handle;
struct perf_sample_data;
struct user_struct;
struct vm_area_struct;

/* struct perf_aux::mode */
#define PERF_AUX_OVERWRITE	0x01
#define PERF_AUX_UNMAPPED	0x02

/**
 * struct perf_aux - one mapped AUX area and everything it owns
 * @refcount: the references listed under "References" at the top of
 *	aux.c; whoever drops the last one frees everything below
 * @size: size of the area in bytes, a power of two
 * @watermark: wake the consumer every @watermark bytes (0 in overwrite mode)
 * @mode: PERF_AUX_OVERWRITE if the area was mapped read-only (snapshot
 *	mode), set at creation; PERF_AUX_UNMAPPED once the last mapping is
 *	gone and the stop that ends the transactions has gone round: a
 *	transaction still open on the area is stale and must leave the
 *	buffer alone.  One byte, so that the output path tests both at once.
 * @nr_pages: number of pages in @pages
 * @pgoff: offset of the area in the perf file, in pages
 * @pages: kernel addresses of the @nr_pages pages, as given to setup_aux
 * @priv: what the PMU's setup_aux returned
 * @pmu: that PMU: only its events may write into the area (compared,
 *	never dereferenced)
 * @free_aux: the PMU's free_aux, called with @priv before @pages go
 * @module: the module @free_aux is in, referenced while @priv exists: the
 *	area can outlive its event, whose reference on the module is the
 *	one the perf core takes
 * @rb: the perf buffer whose user page describes this area (referenced)
 * @mmap_count: number of VMAs mapping the area
 * @user: the user charged for the area (referenced)
 * @mm: the mm whose pinned_vm was charged (grabbed)
 * @user_pages: pages charged to @user's perf_mlock
 * @pinned_pages: pages charged to @mm's pinned_vm
 * @free_irq_work: defers a free from NMI/IRQ context ...
 * @free_work: ... to process context
 * @rcu: frees the object after a grace period (RCU readers may still see it)
 */
struct perf_aux {
	refcount_t		refcount;

	unsigned long		size;
	unsigned long		watermark;
	u8			mode;
	int			nr_pages;
	unsigned long		pgoff;
	void			**pages;
	void			*priv;
	struct pmu		*pmu;
	void			(*free_aux)(void *priv);
	struct module		*module;
	struct perf_buffer	*rb;

	atomic_t		mmap_count;
	struct user_struct	*user;
	struct mm_struct	*mm;
	unsigned long		user_pages;
	unsigned long		pinned_pages;
	struct irq_work		free_irq_work;
	struct work_struct	free_work;
	struct rcu_head		rcu;
};

/**
 * struct perf_rb_aux - the AUX state of a perf buffer
 * @mutex: serializes creating and destroying the buffer's AUX area (the
 *	buffer may be shared by several events, each with its own
 *	mmap_mutex: this is the one lock they all take)
 * @area: the mapped area, or NULL; written under @mutex, read under RCU
 * @txn: the handle of the open transaction, or NULL: claimed in one
 *	atomic step by perf_aux_output_begin() and given back by its end,
 *	so that two writers cannot both hold it; see "Serialization of
 *	writers" in aux.c
 * @txn_area: the area the open transaction pinned; written and read by
 *	the holder of @txn only
 * @head: producer position (bytes, free running); written only by the
 *	open transaction, see "Serialization of writers" in aux.c.  It is
 *	the buffer's, not the area's: like aux_head and aux_tail in the user
 *	page, it carries on when the area is unmapped and mapped again.
 * @wakeup: the last multiple of the area's watermark that @head crossed
 * @in_sampling: an AUX sample is being taken (NMI recursion guard)
 * @in_pause_resume: a pause or resume is under way (NMI recursion guard)
 *
 * Embedded in struct perf_buffer, so it lives as long as the buffer.
 */
struct perf_rb_aux {
	struct mutex		mutex;	/* creation and destruction of @area */
	struct perf_aux __rcu	*area;
	struct perf_output_handle *txn;
	struct perf_aux		*txn_area;
	unsigned long		head;
	unsigned long		wakeup;
	unsigned int		in_sampling;
	unsigned int		in_pause_resume;
};

/* The perf core's, for aux.c: the VMA bookkeeping every perf mapping does. */
void perf_mmap_open(struct vm_area_struct *vma);
void perf_mmap_close(struct vm_area_struct *vma);
/* Stop (and so end the transactions of) every event writing to its buffer. */
void perf_pmu_output_stop(struct perf_event *event);
/* Wake the consumers of the handle's buffer. */
void perf_output_wakeup(struct perf_output_handle *handle);
/* The locked-memory limits and charge of a new mapping (perf_mmap()'s). */
bool perf_mmap_calc_limits(struct vm_area_struct *vma, long *user_extra, long *extra);
void perf_mmap_account(struct vm_area_struct *vma, long user_extra, long extra);

/* Entry points for the perf core (kernel/events/core.c, ring_buffer.c). */
void perf_aux_rb_init(struct perf_buffer *rb);
int perf_aux_mmap(struct vm_area_struct *vma, struct perf_event *event,
		  unsigned long nr_pages);
int perf_aux_map_range(struct vm_area_struct *vma);
unsigned long perf_prepare_sample_aux(struct perf_event *event,
				      struct perf_sample_data *data,
				      size_t size);
void perf_aux_sample_output(struct perf_event *event,
			    struct perf_output_handle *handle,
			    struct perf_sample_data *data);
void perf_event_aux_pause(struct perf_event *event, bool pause);

/*
 * Pure arithmetic of the AUX area, kept here so that KUnit can check it
 * (kernel/events/aux_test.c).  All positions are byte counts that run
 * free modulo 2^BITS_PER_LONG; @size is a power of two.
 */

/**
 * perf_aux_space - bytes the producer may write before reaching the tail
 * @head: producer position
 * @tail: consumer position, as read from the user page
 * @size: area size in bytes, a power of two
 *
 * One byte is always kept free, as it has been since the AUX area was
 * introduced: drivers size their transactions from this value, so it is
 * part of the contract.  A @tail that is ahead of @head, or more than
 * @size behind it, is not a position the consumer can legitimately have
 * written: there is no space, and nothing is overwritten.
 *
 * Return: the number of bytes, 0 if none.
 */
static inline unsigned long perf_aux_space(unsigned long head,
					   unsigned long tail,
					   unsigned long size)
{
	unsigned long used = head - tail;

	if (used >= size)
		return 0;
	return size - 1 - used;
}

/**
 * perf_aux_crossed - did the producer cross a watermark boundary?
 * @head: producer position after the advance
 * @wakeup: the boundary crossed last
 * @watermark: distance between boundaries, non-zero
 *
 * Return: the new last boundary (a multiple of @watermark) if @head is at
 * least @watermark past @wakeup, else @wakeup unchanged.
 */
static inline unsigned long perf_aux_crossed(unsigned long head,
					     unsigned long wakeup,
					     unsigned long watermark)
{
	if (head - wakeup < watermark)
		return wakeup;
	return head - head % watermark;
}

/**
 * perf_aux_default_watermark - the watermark when the user gave none
 * @nr_pages: area size in pages
 *
 * Half the area, so that a driver can double-buffer, capped at what the
 * 32-bit attr::aux_watermark could have asked for.
 *
 * Return: the watermark in bytes.
 */
static inline unsigned long perf_aux_default_watermark(unsigned long nr_pages)
{
	return min_t(unsigned long, U32_MAX, nr_pages << (PAGE_SHIFT - 1));
}

/**
 * perf_aux_max_order - largest chunk order to allocate an AUX area in
 * @nr_pages: area size in pages, a power of two
 * @watermark: the area's watermark in bytes (0 in overwrite mode)
 * @overwrite: snapshot mode
 * @contiguous: the PMU needs (AUX_NO_SG) or prefers (AUX_PREFER_LARGE)
 *	physically contiguous chunks
 *
 * As in 6.12: a PMU that can scatter-gather gets single pages.  One that
 * wants contiguity gets chunks of one watermark (rounded up), so that it
 * can switch buffers at the interrupt, or the whole area in overwrite
 * mode, where there is no interrupt to switch at.
 *
 * Return: the order, not larger than log2(@nr_pages).
 */
static inline unsigned int perf_aux_max_order(unsigned long nr_pages,
					      unsigned long watermark,
					      bool overwrite, bool contiguous)
{
	unsigned int all = ilog2(nr_pages);

	if (!contiguous)
		return 0;
	if (overwrite)
		return all;
	return min_t(unsigned int, all, get_order(watermark));
}

#endif /* _KERNEL_EVENTS_AUX_H */
