// SPDX-License-Identifier: GPL-2.0
/*
 * The perf AUX area: the second mapping of a perf buffer, into which
 * hardware tracers (Intel PT, BTS, CoreSight, SPE) write their trace, and
 * the output API their drivers use to do so.
 *
 * The object
 * ==========
 *
 * One struct perf_aux owns everything an AUX mapping brings into being:
 * the pages, the PMU's private state for them (pmu::setup_aux), the
 * producer's position, the locked-memory charge, and a reference on the
 * perf buffer whose user page describes it.  It is created by the first
 * mmap() of the AUX offset and published in rb->aux.area; it is
 * unpublished by the last munmap() and freed when its last reference is
 * dropped.  A new mmap() after that creates a new object: a dying area is
 * never handed out again.
 *
 * References (aux->refcount):
 *  - one for "mapped", from creation until the last AUX VMA is closed;
 *  - one per open transaction (perf_aux_output_begin() .. _end()).
 * AUX samples and pause/resume do not take one: they run with interrupts
 * off on the CPU where the writer's transaction is open, which pins the
 * area for them.
 *
 * Whoever drops the last reference frees the object.  In the normal case
 * that is munmap(), in process context: before dropping "mapped" it stops
 * every event that writes to the buffer (perf_pmu_output_stop()), which
 * ends their transactions.  A transaction can still begin in a narrow
 * window (a writer that looked the area up just before it was unpublished
 * and was not running when the stop went round), and the stop does not
 * reach the inherited copies of a per-task event (see "Serialization of
 * writers"); then the last reference
 * is dropped by perf_aux_output_end(), possibly in NMI context, and the
 * free is deferred through irq_work to a workqueue.  Either way the pages
 * and pmu::free_aux see process context, and nothing is freed while a
 * transaction can reach it.
 *
 * The VMA holds "mapped" alive through aux->mmap_count, and its
 * vm_private_data points at the object.  Like the data area, the AUX area
 * is mapped in full by mmap() itself (a VM_PFNMAP mapping, read-only:
 * perf_aux_map_range()), so there is no page fault to serve: the VMA can
 * only ever show pages of the area it was created for, and the area
 * outlives the page table entries (munmap() zaps them before it closes
 * the VMA).  The VMA also holds the perf core's references (event and
 * buffer mmap counts) through perf_mmap_open()/perf_mmap_close(), exactly
 * as a data VMA does.  VMAs cannot be split (may_split), so open/close
 * always see whole mappings.
 *
 * Locking
 * =======
 *
 * rb->aux.mutex serializes creating and destroying the AUX area of a
 * buffer.  A buffer may be shared by several events (inherited children,
 * PERF_EVENT_IOC_SET_OUTPUT), each with its own event->mmap_mutex, so the
 * buffer's mutex, not the event's, is the one that orders their mmap()s
 * and munmap()s.  Lock order: event->mmap_mutex, then rb->aux.mutex.
 *
 * Readers in atomic context (the output API, AUX sampling, pause/resume)
 * find the area under RCU (rcu_dereference(rb->aux.area)) and pin it
 * with refcount_inc_not_zero(); the object's memory is freed after a
 * grace period, so a reader that raced with the unpublish finds either a
 * live object or a zero refcount.
 *
 * Serialization of writers
 * ========================
 *
 * Only one transaction is open on a buffer at a time: rb->aux.txn holds
 * the handle of the open transaction, and begin claims it with one
 * cmpxchg, so that of two writers that find it free only one gets it.
 * The one that does not is refused with a warning, as upstream refuses a
 * nested writer (an NMI on the same CPU): a driver's bug, since no user
 * can make two writers.  Every writer of a buffer runs on one CPU at a
 * time: per-CPU events only on their CPU, a per-task event only where
 * its task runs, and events sharing a buffer must agree on the CPU or
 * the task (perf_event_set_output()).  The inherited copies of a
 * per-task event run wherever their tasks do, on several CPUs at once,
 * and write into their parent's buffer; so such an event can neither be
 * mapped (perf_mmap()) nor join a buffer (perf_event_set_output()), and
 * its copies never write.  The holder of rb->aux.txn alone writes the
 * producer state (rb->aux.head, rb->aux.wakeup, rb->aux.txn_area), without
 * atomics; begin's cmpxchg and end's release of the slot order one
 * holder's writes before the next one's.  End, skip and perf_get_aux()
 * act only for the handle that holds the slot: a handle whose
 * transaction is over, failed or never was changes nothing.
 *
 * A transaction that began in the unmap window above keeps rb->aux.txn
 * until its writer ends it.  Its end changes nothing of the buffer (no
 * record, head, wakeup or disable: see aux_stale()), and a new area
 * cannot be written before that end has given the slot back.  An end
 * tests the mode and publishes inside one RCU read-side critical
 * section, so an end that tested the mode before aux_unmap() marked the
 * area is over once a grace period has elapsed; aux_install() waits for
 * one before a new area of the buffer can be seen, if a transaction
 * holds the slot then.  No end of an older area can therefore move the
 * head of a newer one.
 *
 * The ordering protocol with userspace
 * ====================================
 *
 * The consumer reads data between aux_tail and aux_head in the user page
 * and then advances aux_tail; the producer writes data between aux_head
 * and aux_tail + size and then advances aux_head.
 *
 *   kernel (producer)                     user (consumer)
 *
 *   tail = READ_ONCE(->aux_tail)          head = smp_load_acquire(->aux_head)
 *   if (space(head, tail))         [A]    read data up to head
 *       write data (hardware)      [B]    smp_mb()                  [D]
 *   smp_store_release(->aux_head)  [C]    WRITE_ONCE(->aux_tail, head)
 *
 * [A] The data stores are enabled only if the space computed from the
 *     tail load says so: a control dependency orders the load of
 *     aux_tail before the stores into the area, pairing with [D], so the
 *     hardware never overwrites data the consumer has not finished
 *     reading.
 * [B] Making the hardware's stores visible before the PMU driver calls
 *     perf_aux_output_end() is the driver's job (it depends on the
 *     hardware: a DMA barrier, a trace-unit flush, ...).
 * [C] The release orders everything the CPU wrote before it (including a
 *     software writer's data, and the PERF_RECORD_AUX describing it) before
 *     the new head; pairs with the consumer's acquire.  On x86 it costs
 *     nothing.
 *
 * In overwrite (snapshot) mode the producer does not look at aux_tail at
 * all; the consumer stops the event before it reads a snapshot.
 *
 * Every barrier below names the letter it implements.
 */

#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "internal.h"

/* Allocation of the pages ------------------------------------------------- */

/*
 * The pages are allocated as the PMU asks, with 6.12's rules and flags:
 *
 *  - A PMU that can scatter-gather (neither PERF_PMU_CAP_AUX_NO_SG nor
 *    PERF_PMU_CAP_AUX_PREFER_LARGE) gets single pages.  Its hardware does
 *    not care where they are, and taking high-order blocks for it would
 *    take them from those who do (THP, other AUX PMUs, DMA).
 *  - A PMU that needs or prefers physically contiguous memory gets chunks
 *    of up to perf_aux_max_order().  Each chunk tries the largest order
 *    that still fits first, and falls back one order at a time down to a
 *    single page if that order cannot be had; the next chunk starts from
 *    the top again, so one transient failure does not make every later
 *    chunk smaller.
 *
 * Every attempt is __GFP_NORETRY: the allocator may reclaim and compact
 * once, as for any costly order, but gives up rather than retry or invoke
 * the OOM killer, and the fallback takes over.
 */
#define AUX_GFP		(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN | __GFP_NORETRY)

/* One chunk of at most @order; *@order is set to what it got. */
static struct page *aux_alloc_chunk(int node, unsigned int *order)
{
	unsigned int o = min_t(unsigned int, *order, MAX_PAGE_ORDER);
	struct page *page;

	for (;;) {
		page = alloc_pages_node(node, AUX_GFP, o);
		if (page || !o)
			break;
		o--;
	}
	*order = o;
	return page;
}

/*
 * Free the first @nr_pages pages of @pages, and the array.  page_private
 * needs no reset: the page allocator clears it when it hands the page out
 * again.
 */
static void aux_free_pages(void **pages, int nr_pages)
{
	int i;

	for (i = 0; i < nr_pages; i++) {
		struct page *page = virt_to_page(pages[i]);

		ClearPagePrivate(page);
		__free_page(page);
	}
	kfree(pages);
}

/*
 * Fill aux->pages with chunks of at most @max_order (see above); on
 * failure free what it got, and the array, and set aux->pages to NULL.
 * A chunk of order > 0 is split into independent pages, and its first
 * page carries the order in page_private (with PG_private set): that is
 * how a driver learns that a run of pages is physically contiguous.
 */
static int aux_alloc_pages(struct perf_aux *aux, int node, unsigned int max_order)
{
	int n = 0, i;

	while (n < aux->nr_pages) {
		unsigned int order = min_t(unsigned int, max_order,
					   ilog2(aux->nr_pages - n));
		struct page *page = aux_alloc_chunk(node, &order);

		if (!page) {
			aux_free_pages(aux->pages, n);
			aux->pages = NULL;
			return -ENOMEM;
		}
		if (order) {
			split_page(page, order);
			SetPagePrivate(page);
			set_page_private(page, order);
		}
		for (i = 0; i < 1 << order; i++)
			aux->pages[n++] = page_address(page + i);
		/*
		 * A large area is hundreds of thousands of pages, each one
		 * zeroed: without a break, a non-preemptible kernel stalls
		 * RCU and starves this CPU for seconds.
		 */
		cond_resched();
	}
	return 0;
}

/* Lifetime ------------------------------------------------------------------ */

static void aux_free(struct perf_aux *aux)
{
	/* The driver's view of the pages goes first: it may point into them. */
	if (aux->priv) {
		aux->free_aux(aux->priv);
		module_put(aux->module);
	}
	if (aux->pages)
		aux_free_pages(aux->pages, aux->nr_pages);
	if (aux->rb)
		ring_buffer_put(aux->rb);
	/* Never waits: munmap() frees here with mmap_lock held. */
	kfree_rcu(aux, rcu);
}

static void aux_free_workfn(struct work_struct *work)
{
	aux_free(container_of(work, struct perf_aux, free_work));
}

static void aux_free_irq_workfn(struct irq_work *work)
{
	struct perf_aux *aux = container_of(work, struct perf_aux, free_irq_work);

	schedule_work(&aux->free_work);
}

/* Drop a reference in process context: free now if it was the last. */
static void aux_put(struct perf_aux *aux)
{
	if (refcount_dec_and_test(&aux->refcount))
		aux_free(aux);
}

/* Drop a reference in any context, NMI included: defer the free. */
static __always_inline void aux_put_atomic(struct perf_aux *aux)
{
	if (refcount_dec_and_test(&aux->refcount))
		irq_work_queue(&aux->free_irq_work);
}

/* Locked-memory accounting ------------------------------------------------- */

/*
 * An AUX area is charged like the data area, by the perf core's own
 * rules (perf_mmap_calc_limits(), perf_mmap_account()): to the user's
 * perf_mlock up to perf_event_mlock_kb (times the number of online CPUs),
 * and beyond that to the mm's pinned_vm, which RLIMIT_MEMLOCK bounds
 * unless the caller has CAP_IPC_LOCK or perf_event_paranoid is -1.
 * Unlike the data area, the object remembers whom it charged, and
 * uncharges exactly that user and mm, whichever process closes the last
 * mapping.  Only the mmap() that creates the area charges it.
 */
static int aux_charge(struct perf_aux *aux, struct vm_area_struct *vma)
{
	long user_extra = aux->nr_pages, extra = 0;

	if (!perf_mmap_calc_limits(vma, &user_extra, &extra))
		return -EPERM;

	aux->user_pages = user_extra;
	aux->pinned_pages = extra;
	return 0;
}

static void aux_commit_charge(struct perf_aux *aux, struct vm_area_struct *vma)
{
	aux->user = get_current_user();
	aux->mm = vma->vm_mm;
	mmgrab(aux->mm);
	perf_mmap_account(vma, aux->user_pages, aux->pinned_pages);
}

static void aux_uncharge(struct perf_aux *aux)
{
	atomic_long_sub(aux->user_pages, &aux->user->perf_mlock);
	atomic64_sub(aux->pinned_pages, &aux->mm->pinned_vm);
	free_uid(aux->user);
	mmdrop(aux->mm);
}

/* Creation and destruction ------------------------------------------------ */

/*
 * Create the area for @vma, under rb->aux.mutex.  Errors, in the order
 * userspace has always seen them: -EPERM over the locked-memory limit,
 * -EOPNOTSUPP for an event without AUX support, -ENOMEM when the pages
 * cannot be had or the PMU refuses them.  On error nothing is left
 * allocated or charged.
 */
static struct perf_aux *aux_create(struct perf_event *event,
				   struct perf_buffer *rb,
				   struct vm_area_struct *vma, int nr_pages)
{
	bool overwrite = !(vma->vm_flags & VM_WRITE);
	u32 caps = event->pmu->capabilities;
	bool contiguous = caps & (PERF_PMU_CAP_AUX_NO_SG | PERF_PMU_CAP_AUX_PREFER_LARGE);
	int node = event->cpu == -1 ? NUMA_NO_NODE : cpu_to_node(event->cpu);
	unsigned int max_order;
	struct perf_aux *aux;
	int ret;

	lockdep_assert_held(&rb->aux.mutex);
	aux = kzalloc_node(sizeof(*aux), GFP_KERNEL, node);
	if (!aux)
		return ERR_PTR(-ENOMEM);
	refcount_set(&aux->refcount, 1);
	atomic_set(&aux->mmap_count, 1);
	init_irq_work(&aux->free_irq_work, aux_free_irq_workfn);
	INIT_WORK(&aux->free_work, aux_free_workfn);
	aux->nr_pages = nr_pages;
	aux->size = (unsigned long)nr_pages << PAGE_SHIFT;
	aux->pgoff = vma_start_pgoff(vma);
	aux->mode = overwrite ? PERF_AUX_OVERWRITE : 0;

	ret = aux_charge(aux, vma);
	if (ret)
		goto out_free;

	ret = -EOPNOTSUPP;
	if (!has_aux(event))
		goto out_free;

	if (!overwrite)
		aux->watermark = event->attr.aux_watermark ?:
				 perf_aux_default_watermark(nr_pages);

	ret = -ENOMEM;
	/* The array of page addresses is one kmalloc, as it always was. */
	if (get_order((unsigned long)nr_pages * sizeof(void *)) > MAX_PAGE_ORDER)
		goto out_free;
	aux->pages = kcalloc_node(nr_pages, sizeof(void *), GFP_KERNEL, node);
	if (!aux->pages)
		goto out_free;

	max_order = perf_aux_max_order(nr_pages, aux->watermark, overwrite,
				       contiguous);
	if (aux_alloc_pages(aux, node, max_order))
		goto out_free;

	/*
	 * A PMU without scatter-gather cannot switch between chunks without
	 * an interrupt, and overwrite mode has none: it needs the whole area
	 * in one piece.
	 */
	if ((caps & PERF_PMU_CAP_AUX_NO_SG) && overwrite &&
	    page_private(virt_to_page(aux->pages[0])) != max_order)
		goto out_free;

	aux->priv = event->pmu->setup_aux(event, aux->pages, nr_pages, overwrite);
	if (!aux->priv)
		goto out_free;
	aux->pmu = event->pmu;
	aux->free_aux = event->pmu->free_aux;
	/*
	 * The last reference may be dropped after the event is closed (by
	 * a transaction that outlived munmap(), freeing from a workqueue):
	 * keep free_aux's module loaded until then.  The event holds a
	 * reference now, so this one cannot fail.
	 */
	__module_get(event->pmu->module);
	aux->module = event->pmu->module;

	refcount_inc(&rb->refcount);
	aux->rb = rb;
	aux_commit_charge(aux, vma);
	return aux;

out_free:
	aux_free(aux);
	return ERR_PTR(ret);
}

/*
 * The last AUX VMA is going away, under rb->aux.mutex: unpublish the
 * area so that no new transaction, sample or mapping finds it, stop
 * every writer so that the open transactions end, and give back the
 * locked memory.  The caller then drops "mapped".
 */
static void aux_unmap(struct perf_event *event, struct perf_aux *aux)
{
	struct perf_buffer *rb = aux->rb;

	lockdep_assert_held(&rb->aux.mutex);
	WARN_ON_ONCE(event->rb != rb);
	rcu_assign_pointer(rb->aux.area, NULL);
	perf_pmu_output_stop(event);
	/*
	 * The stop ended every transaction it could reach, normally.  One
	 * that began in the window before the unpublish and is still open
	 * ends later: from now on it is stale (aux_stale()).  An end that
	 * tested the mode just before this store still publishes, for this
	 * area; aux_install() makes sure it is over before the buffer's
	 * next area can be seen.
	 */
	WRITE_ONCE(aux->mode, aux->mode | PERF_AUX_UNMAPPED);
	aux_uncharge(aux);
}

/*
 * Publish @aux, the new area of @rb, under rb->aux.mutex.  A transaction
 * that began on an area unmapped since may still hold rb->aux.txn, and
 * its end may have tested the mode before aux_unmap() marked that area
 * and be publishing into the buffer's producer state right now: wait for
 * it to be over (an end is an RCU reader from that test to its last
 * store) before the new area can be written or mapped.  The wait, a
 * grace period under mmap_lock, is only for a buffer with such a
 * transaction: the slot is free whenever munmap()'s stop reached every
 * writer, which is always but for the window aux_unmap() describes.
 */
static void aux_install(struct perf_buffer *rb, struct perf_aux *aux)
{
	lockdep_assert_held(&rb->aux.mutex);
	/*
	 * Orders aux_unmap()'s mode store (before us through the mutex)
	 * before the load of the slot; pairs with the full barrier of
	 * begin's cmpxchg, before its end loads the mode.  So if the slot
	 * is free, a transaction that claims it later sees the area
	 * unmapped.
	 */
	smp_mb();
	/* Pairs with txn_close(): a free slot means the last end is over. */
	if (smp_load_acquire(&rb->aux.txn))
		synchronize_rcu();
	rcu_assign_pointer(rb->aux.area, aux);
}

/* The mapping ---------------------------------------------------------------- */

static void perf_aux_vma_open(struct vm_area_struct *vma)
{
	struct perf_aux *aux = vma->vm_private_data;

	atomic_inc(&aux->mmap_count);
	perf_mmap_open(vma);
}

static void perf_aux_vma_close(struct vm_area_struct *vma)
{
	struct perf_event *event = vma->vm_file->private_data;
	struct perf_aux *aux = vma->vm_private_data;
	struct perf_buffer *rb = aux->rb;

	if (atomic_dec_and_mutex_lock(&aux->mmap_count, &rb->aux.mutex)) {
		aux_unmap(event, aux);
		mutex_unlock(&rb->aux.mutex);
		aux_put(aux);
	}
	/* The event's and the buffer's mmap counts, as for any perf VMA. */
	perf_mmap_close(vma);
}

/*
 * Every page is mapped, read-only, by perf_aux_map_range(): userspace
 * never writes the AUX area, and a write to it is SIGBUS.
 */
static vm_fault_t perf_aux_vma_pfn_mkwrite(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static int perf_aux_vma_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	/* open()/close() count whole mappings: a piece would unbalance them. */
	return -EINVAL;
}

static const struct vm_operations_struct perf_aux_vmops = {
	.open		= perf_aux_vma_open,
	.close		= perf_aux_vma_close,
	.pfn_mkwrite	= perf_aux_vma_pfn_mkwrite,
	.may_split	= perf_aux_vma_may_split,
};

/**
 * perf_aux_mmap() - set up a mapping of the AUX area of an event's buffer
 * @vma: the new mapping, at a non-zero offset
 * @event: the event whose file is mapped
 * @nr_pages: the mapping's size in pages
 *
 * Called by perf_mmap() with event->mmap_mutex held, for any offset but
 * 0, after its common checks (shared mapping, no inherited per-task
 * event, LSM, size, a revoked event).  The rules, and their errnos, are
 * the ABI: the event must have a buffer (-EINVAL); the user page's
 * aux_offset must be the mapping's offset and lie above the data area,
 * aux_size must be its size, a power of two number of pages, and a
 * second mapping of an existing area must match it (-EINVAL); the event
 * must map the buffer itself, not through PERF_EVENT_IOC_SET_OUTPUT
 * (-EBUSY: its buffer's owner maps the AUX area); the buffer must still
 * be mapped (-EINVAL).  The first mapping creates the area and charges
 * it (see aux_create() for its errnos); a read-only first mapping
 * selects overwrite mode.  perf_mmap() then maps the pages with
 * perf_aux_map_range(), or closes the VMA through its vm_ops if that
 * fails.
 *
 * Return: 0 or a negative errno; on error nothing is left behind.
 */
int perf_aux_mmap(struct vm_area_struct *vma, struct perf_event *event,
		  unsigned long nr_pages)
{
	const pgoff_t pgoff = vma_start_pgoff(vma);
	struct perf_buffer *rb = event->rb;
	struct perf_aux *aux;
	u64 aux_offset, aux_size;
	int ret = -EINVAL;

	lockdep_assert_held(&event->mmap_mutex);
	if (!rb)
		return -EINVAL;

	mutex_lock(&rb->aux.mutex);
	aux = rcu_dereference_protected(rb->aux.area, lockdep_is_held(&rb->aux.mutex));

	aux_offset = READ_ONCE(rb->user_page->aux_offset);
	aux_size = READ_ONCE(rb->user_page->aux_size);
	if (aux_offset < perf_data_size(rb) + PAGE_SIZE ||
	    aux_offset != (u64)pgoff << PAGE_SHIFT ||
	    (aux && aux->pgoff != pgoff) ||
	    aux_size != (u64)nr_pages << PAGE_SHIFT ||
	    (aux && aux->nr_pages != nr_pages) ||
	    !is_power_of_2(nr_pages))
		goto out;

	/*
	 * Without a mapping of its own the event writes into another
	 * event's buffer (PERF_EVENT_IOC_SET_OUTPUT): that event maps the
	 * buffer, and its AUX area too.
	 */
	ret = -EBUSY;
	if (!refcount_read(&event->mmap_count))
		goto out;

	/*
	 * The buffer's last mapping may be going away (its count is zero
	 * but the event still points at it): do not build on it.  The
	 * reference is taken only once nothing can fail any more, so an
	 * error never has to drop it, which could make it the last one and
	 * skip the buffer's teardown.
	 */
	ret = -EINVAL;
	if (!refcount_read(&rb->mmap_count))
		goto out;

	if (aux) {
		/* Published areas have mmap_count >= 1 under the mutex. */
		if (!refcount_inc_not_zero(&rb->mmap_count))
			goto out;
		atomic_inc(&aux->mmap_count);
	} else {
		aux = aux_create(event, rb, vma, nr_pages);
		if (IS_ERR(aux)) {
			ret = PTR_ERR(aux);
			goto out;
		}
		if (!refcount_inc_not_zero(&rb->mmap_count)) {
			aux_uncharge(aux);
			aux_put(aux);
			goto out;
		}
		aux_install(rb, aux);
	}
	refcount_inc(&event->mmap_count);
	vma->vm_private_data = aux;
	vma->vm_ops = &perf_aux_vmops;
	ret = 0;
out:
	mutex_unlock(&rb->aux.mutex);
	return ret;
}

/**
 * perf_aux_map_range() - map every page of an AUX area into its VMA
 * @vma: a mapping that perf_aux_mmap() has set up
 *
 * Maps the pages as perf_mmap() maps the data area: a VM_PFNMAP mapping
 * (the pages are the area's, never on an LRU or an rmap), read-only even
 * in a writable VMA, so that a write faults and gets SIGBUS from the
 * VMA's pfn_mkwrite.  The area cannot go away meanwhile: the VMA holds
 * it.  On error the pages mapped so far are unmapped again, and the
 * caller closes the VMA.
 *
 * Return: 0 or a negative errno.
 */
int perf_aux_map_range(struct vm_area_struct *vma)
{
	struct perf_aux *aux = vma->vm_private_data;
	pgprot_t prot = vm_get_page_prot(vma->vm_flags & ~VM_SHARED);
	unsigned long i;
	int err = 0;

	for (i = 0; i < aux->nr_pages; i++) {
		struct page *page = virt_to_page(aux->pages[i]);

		err = remap_pfn_range(vma, vma->vm_start + i * PAGE_SIZE,
				      page_to_pfn(page), PAGE_SIZE, prot);
		if (err)
			break;
		/* As in aux_alloc_pages(): an area can be huge. */
		cond_resched();
	}
#ifdef CONFIG_MMU
	/* The VMA's close frees the pages: no entry may still map them. */
	if (err)
		zap_vma_range(vma, vma->vm_start, aux->nr_pages * PAGE_SIZE);
#endif
	return err;
}

/**
 * perf_aux_rb_init() - initialise the AUX state of a new perf buffer
 * @rb: the buffer
 */
void perf_aux_rb_init(struct perf_buffer *rb)
{
	mutex_init(&rb->aux.mutex);
	RCU_INIT_POINTER(rb->aux.area, NULL);
	rb->aux.txn = NULL;
	rb->aux.txn_area = NULL;
}

/* The output API -------------------------------------------------------------- */

/*
 * rcu_dereference() for event->rb, which the perf core publishes with
 * rcu_assign_pointer() and frees after a grace period (ring_buffer_attach(),
 * ring_buffer_put()) but does not annotate __rcu.
 */
static struct perf_buffer *event_rb(struct perf_event *event)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "event->rb read outside RCU");
	return rcu_dereference_raw(event->rb);
}

/*
 * Claim the transaction slot of @rb for @handle, in one step: of two
 * writers that find it free at once, on two CPUs, one gets it.
 */
static bool txn_claim(struct perf_buffer *rb, struct perf_output_handle *handle)
{
	struct perf_output_handle *free = NULL;

	return try_cmpxchg(&rb->aux.txn, &free, handle);
}

/*
 * Does @handle hold the transaction slot of its buffer?  Not after its
 * end or a failed begin (handle->event is NULL then, and handle->rb may
 * be stale), nor if it is not the handle that claimed the slot.
 */
static bool txn_held(struct perf_output_handle *handle)
{
	if (!READ_ONCE(handle->event))
		return false;
	barrier();	/* pairs with begin's and txn_close()'s */
	return READ_ONCE(handle->rb->aux.txn) == handle;
}

/* The area of @handle's transaction, or NULL if it holds none. */
static struct perf_aux *txn_aux(struct perf_output_handle *handle)
{
	return txn_held(handle) ? handle->rb->aux.txn_area : NULL;
}

/*
 * Withdraw the handle's transaction: the handle first, so that an NMI
 * calling perf_get_aux() in between sees no transaction rather than a
 * cleared rb->aux.txn.  The release orders everything the transaction
 * wrote before the next holder's claim (and before aux_install()).
 */
static void txn_close(struct perf_output_handle *handle, struct perf_buffer *rb)
{
	WRITE_ONCE(handle->event, NULL);
	barrier();
	/* Pairs with the next claim's cmpxchg and with aux_install(). */
	smp_store_release(&rb->aux.txn, NULL);
}

/*
 * A transaction that began on an area that has been unmapped since (see
 * "Serialization of writers" above) writes into pages nobody can read
 * any more, and the buffer's producer state may already belong to a
 * newer area: such a transaction must change nothing of the buffer.
 */
static bool aux_stale(struct perf_aux *aux)
{
	return READ_ONCE(aux->mode) & PERF_AUX_UNMAPPED;
}

/*
 * Move the producer to @head and publish it (not for a stale area: the
 * callers check); return whether a watermark
 * boundary was crossed (never in overwrite mode, which has no watermark).
 */
static bool aux_advance(struct perf_buffer *rb, struct perf_aux *aux,
			unsigned long head)
{
	unsigned long crossed;

	rb->aux.head = head;
	smp_store_release(&rb->user_page->aux_head, head);	/* [C] */
	if (aux->mode & PERF_AUX_OVERWRITE)
		return false;
	crossed = perf_aux_crossed(head, rb->aux.wakeup, aux->watermark);
	if (crossed == rb->aux.wakeup)
		return false;
	rb->aux.wakeup = crossed;
	return true;
}

/*
 * Begin found no space: give the slot back first, so that an interrupt
 * (a PMI) asking perf_get_aux() from here on sees no transaction and
 * cannot end it a second time; then, unless the area is stale (a
 * stale transaction changes nothing of the buffer, see aux_stale()),
 * disable the event and wake the consumer, as a TRUNCATED end does.
 */
static void aux_full(struct perf_output_handle *handle, struct perf_buffer *rb,
		     struct perf_aux *aux, struct perf_event *event)
{
	struct perf_output_handle wake = { .rb = rb, .event = event };
	/*
	 * Tested while the slot is held, as an end tests it.  What follows
	 * the close (a disable, a wakeup) touches the event and the
	 * buffer's poll state, never an area's producer state, so unlike
	 * an end it needs no RCU section against aux_install().
	 */
	bool stale = aux_stale(aux);

	txn_close(handle, rb);
	if (stale)
		return;
	perf_event_disable_inatomic(event);
	perf_output_wakeup(&wake);
}

/**
 * perf_aux_output_begin() - open an AUX transaction
 * @handle: the driver's handle, filled in here
 * @event: the event that writes (for an inherited child, its output goes
 *	to the parent's buffer)
 *
 * Called before the hardware may write into the AUX area, typically from
 * pmu::start() or the PMU interrupt.  On success @handle->head is where
 * the data goes (modulo the area size) and @handle->size how many bytes
 * may be written (unlimited in overwrite mode, where it is 0), and the
 * area stays pinned until perf_aux_output_end().  If the area is full,
 * the consumer is woken and the event is disabled until it re-enables it.
 *
 * Context: any, NMI included; not nested on the same buffer.
 * Return: the driver's private data from pmu::setup_aux, or NULL if there
 * is no area to write to (not mapped, being unmapped, full, or set up by
 * another PMU) or another transaction is open on the buffer (with a
 * warning).
 */
void *perf_aux_output_begin(struct perf_output_handle *handle,
			    struct perf_event *event)
{
	struct perf_event *output = event->parent ?: event;
	struct perf_buffer *rb;
	struct perf_aux *aux = NULL;

	rcu_read_lock();
	rb = event_rb(output);
	if (rb)
		aux = rcu_dereference(rb->aux.area);
	if (aux && !refcount_inc_not_zero(&aux->refcount))
		aux = NULL;
	rcu_read_unlock();
	if (!aux)
		goto fail;

	/*
	 * Only the events of the PMU whose setup_aux made the area write
	 * into it: another PMU's event reaches this buffer through a
	 * software event joined to it with SET_OUTPUT (which checks only
	 * the event it names), and must not be handed @aux->priv.
	 */
	if (unlikely(aux->pmu != event->pmu)) {
		aux_put_atomic(aux);
		goto fail;
	}

	/* @rb may have changed since the lookup; the area's cannot. */
	rb = aux->rb;
	if (WARN_ON_ONCE(!txn_claim(rb, handle))) {
		aux_put_atomic(aux);
		goto fail;
	}
	rb->aux.txn_area = aux;

	handle->rb = rb;
	handle->head = rb->aux.head;
	handle->size = 0;
	handle->aux_flags = 0;
	if (!(aux->mode & PERF_AUX_OVERWRITE)) {
		handle->wakeup = rb->aux.wakeup + aux->watermark;
		handle->size = perf_aux_space(rb->aux.head,
					      READ_ONCE(rb->user_page->aux_tail),
					      aux->size);
		if (!handle->size) {	/* [A]: the data stores depend on this */
			aux_full(handle, rb, aux, event);
			goto put;
		}
	}
	/* Last: perf_get_aux() trusts the handle once it sees the event. */
	barrier();
	WRITE_ONCE(handle->event, event);
	return aux->priv;

put:
	aux_put_atomic(aux);
fail:
	/* Not if @handle is the open transaction's own (a nested writer). */
	if (!handle->rb || !txn_held(handle))
		WRITE_ONCE(handle->event, NULL);
	return NULL;
}
EXPORT_SYMBOL_GPL(perf_aux_output_begin);

/**
 * perf_aux_output_end() - close an AUX transaction
 * @handle: the handle perf_aux_output_begin() filled in
 * @size: bytes written since begin (only reported in overwrite mode, where
 *	the driver leaves its write position in @handle->head instead: an
 *	offset into the area for intel_pt and arm_spe_pmu, a running count
 *	for CoreSight; the core publishes it as it is)
 *
 * Commits the data: a PERF_RECORD_AUX describing it (and the flags set
 * with perf_aux_output_flag()) goes to the data area, aux_head is
 * published, and the consumer is woken at the watermark or when the
 * driver flagged TRUNCATED, in which case the event is also disabled.
 * The driver must have made the hardware's writes visible first.
 *
 * Must be called for every successful begin, at the latest from
 * pmu::stop() with PERF_EF_UPDATE, and so from pmu::del(): unmapping the
 * area relies on stopping the event to end the transaction.  A handle
 * that holds no transaction (ended already, or its begin failed) is left
 * alone, and so is the buffer.
 *
 * Context: any, NMI included.
 */
void perf_aux_output_end(struct perf_output_handle *handle, unsigned long size)
{
	struct perf_buffer *rb;
	struct perf_aux *aux;
	unsigned long start, head;
	bool wakeup;

	if (unlikely(!txn_held(handle)))
		return;
	rb = handle->rb;
	aux = rb->aux.txn_area;	/* set while the slot is held */
	/* From the mode test to the last store: see aux_install(). */
	rcu_read_lock();

	/*
	 * The common case, a live area in normal mode, costs one test.
	 * A plain read picks the path (aux_unmap() may set UNMAPPED at any
	 * time; a byte cannot tear), aux_stale() decides.  handle->aux_flags
	 * has no OVERWRITE here: begin clears it and perf_aux_output_flag()
	 * refuses it.
	 */
	if (likely(!data_race(aux->mode))) {
		start = rb->aux.head;
		head = start + size;
	} else if (aux_stale(aux)) {
		/*
		 * Its area was unmapped while it was open (aux_stale()):
		 * the data is lost with the area, and no record, head,
		 * wakeup or disable may reach the buffer, whose next area
		 * (if any) starts from where the last published head was.
		 * A record would name offsets of an area the consumer no
		 * longer has, so none is written, not even one flagged as
		 * lost.
		 */
		goto out;
	} else {
		handle->aux_flags |= PERF_AUX_FLAG_OVERWRITE;
		start = handle->head;
		head = handle->head;
	}

	/*
	 * A record says something if it has data or a flag that is news:
	 * the PMU format bits only name the format, and OVERWRITE alone
	 * only repeats what the mapping mode says (a snapshot reader takes
	 * the position from aux_head).  Tools see no empty records for
	 * either, as they never have.
	 */
	if (likely(size || (handle->aux_flags & ~(u64)(PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK |
						       PERF_AUX_FLAG_OVERWRITE))))
		perf_event_aux_event(handle->event, start, size, handle->aux_flags);

	wakeup = aux_advance(rb, aux, head);
	if (handle->aux_flags & PERF_AUX_FLAG_TRUNCATED) {
		perf_event_disable_inatomic(handle->event);
		wakeup = true;
	}
	if (wakeup)
		perf_output_wakeup(handle);
out:
	rcu_read_unlock();
	txn_close(handle, rb);
	aux_put_atomic(aux);
}
EXPORT_SYMBOL_GPL(perf_aux_output_end);

/**
 * perf_aux_output_skip() - leave a hole in the AUX area
 * @handle: an open transaction
 * @size: bytes to skip
 *
 * For hardware that cannot write at every offset (alignment, region
 * boundaries): moves the transaction's start past @size bytes the
 * hardware will not write, publishing the new aux_head without a record.
 * The consumer is woken if a watermark was crossed.
 *
 * Context: any, NMI included.
 * Return: 0, -ENOSPC if @size exceeds the space left, or -EINVAL if
 * @handle holds no transaction.
 */
int perf_aux_output_skip(struct perf_output_handle *handle, unsigned long size)
{
	struct perf_aux *aux = txn_aux(handle);
	struct perf_buffer *rb = handle->rb;

	if (!aux)
		return -EINVAL;
	if (size > handle->size)
		return -ENOSPC;

	/* From the mode test to the last store: see aux_install(). */
	rcu_read_lock();
	/* A stale transaction moves nothing of the buffer (aux_stale()). */
	if (aux_stale(aux)) {
		handle->head += size;
	} else {
		if (aux_advance(rb, aux, rb->aux.head + size)) {
			perf_output_wakeup(handle);
			handle->wakeup = rb->aux.wakeup + aux->watermark;
		}
		handle->head = rb->aux.head;
	}
	rcu_read_unlock();
	handle->size -= size;
	return 0;
}
EXPORT_SYMBOL_GPL(perf_aux_output_skip);

/**
 * perf_aux_output_flag() - add flags to the transaction's PERF_RECORD_AUX
 * @handle: an open transaction
 * @flags: PERF_AUX_FLAG_* (TRUNCATED, PARTIAL, COLLISION, the PMU format
 *	bits); OVERWRITE is perf's to set and is refused with a warning
 *
 * Context: any, NMI included.
 */
void perf_aux_output_flag(struct perf_output_handle *handle, u64 flags)
{
	if (WARN_ON_ONCE(flags & PERF_AUX_FLAG_OVERWRITE))
		return;
	handle->aux_flags |= flags;
}
EXPORT_SYMBOL_GPL(perf_aux_output_flag);

/**
 * perf_get_aux() - the driver's data of the open transaction
 * @handle: a handle
 *
 * Return: what pmu::setup_aux returned for the area @handle writes to, or
 * NULL if no transaction is open on @handle.
 */
void *perf_get_aux(struct perf_output_handle *handle)
{
	struct perf_aux *aux = txn_aux(handle);

	return aux ? aux->priv : NULL;
}
EXPORT_SYMBOL_GPL(perf_get_aux);

/**
 * perf_output_copy_aux() - copy AUX data into a data-area record
 * @aux_handle: the open AUX transaction to copy from
 * @handle: the data-area output handle to copy to
 * @from: start offset in the AUX area (taken modulo its size)
 * @to: end offset (likewise); @from == @to copies the whole area
 *
 * For pmu::snapshot_aux, which fills an AUX sample.
 *
 * Return: bytes copied (0 if @aux_handle holds no transaction), or
 * -EFAULT if the data area took less.
 */
long perf_output_copy_aux(struct perf_output_handle *aux_handle,
			  struct perf_output_handle *handle,
			  unsigned long from, unsigned long to)
{
	struct perf_aux *aux = txn_aux(aux_handle);
	unsigned long mask, len;
	long copied = 0;

	if (!aux)
		return 0;
	mask = aux->size - 1;
	/* The -1 and +1 make from == to copy the whole area, not nothing. */
	len = ((to - from - 1) & mask) + 1;
	from &= mask;
	while (len) {
		unsigned long n = min(len, PAGE_SIZE - offset_in_page(from));
		void *src = aux->pages[from >> PAGE_SHIFT] + offset_in_page(from);

		if (perf_output_copy(handle, src, n))
			return -EFAULT;
		copied += n;
		len -= n;
		from = (from + n) & mask;
	}
	return copied;
}

/* Records --------------------------------------------------------------------- */

/*
 * PERF_RECORD_AUX itself is the perf core's perf_event_aux_event(), as in
 * 6.12: in core.c, next to the helpers it inlines (the sample_id header
 * and trailer), it costs the output end fewer instructions than a copy
 * here, which would call both out of line.  This file emits the other
 * side-band record, PERF_RECORD_AUX_OUTPUT_HW_ID, laid out as it goes
 * into the data area, so that it goes out in one copy.
 */
struct aux_side_record {
	struct perf_event_header header;
	u64 hw_id;
};

/* Emit the first @len bytes of @rec, whose header is filled in here. */
static void aux_record(struct perf_event *event, struct aux_side_record *rec,
		       u32 type, u16 len)
{
	struct perf_output_handle handle;
	struct perf_sample_data sample;

	perf_event_header__init(&rec->header, &sample, type, 0, len, event);
	if (perf_output_begin(&handle, &sample, event, rec->header.size))
		return;
	perf_output_copy(&handle, rec, len);
	perf_event__output_id_sample(event, &handle, &sample);
	perf_output_end(&handle);
}

/**
 * perf_report_aux_output_id() - emit a PERF_RECORD_AUX_OUTPUT_HW_ID
 * @event: the writing event (a child reports into its parent's buffer)
 * @hw_id: the hardware's identifier for this event's trace stream
 *
 * Lets the decoder match trace packets that carry a hardware id to the
 * event that produced them.
 */
void perf_report_aux_output_id(struct perf_event *event, u64 hw_id)
{
	struct aux_side_record rec = { .hw_id = hw_id };

	aux_record(event->parent ?: event, &rec, PERF_RECORD_AUX_OUTPUT_HW_ID,
		   sizeof(rec));
}
EXPORT_SYMBOL_GPL(perf_report_aux_output_id);

/* AUX samples and pause/resume ------------------------------------------------ */

/*
 * Both run in the overflow path of another event of the group (NMI or
 * IRQ) on the CPU where the AUX event ("the sampler") is active, and both
 * call into the PMU, which must not be re-entered from an NMI that hits
 * them: rb->aux.in_sampling and rb->aux.in_pause_resume are per-buffer
 * recursion guards, set with interrupts off.  The buffer is found under
 * RCU; the area itself is pinned by the sampler's open transaction.
 *
 * The buffer is the one the sampler's trace goes to: for an inherited
 * child, which has no buffer of its own, its parent's, exactly as for
 * perf_aux_output_begin() (and as 6.12's ring_buffer_get() redirects).
 * inherit_group() makes a child's aux_event the child leader, so without
 * the redirect every thread but the one that opened the events would get
 * empty samples and no pause or resume.
 */
static struct perf_buffer *sampler_rb(struct perf_event *sampler)
{
	return event_rb(sampler->parent ?: sampler);
}

/**
 * perf_prepare_sample_aux() - size the AUX part of a sample
 * @event: the sampled event; its aux_event is the sampler
 * @data: the sample; data->aux_size is set here
 * @size: the most the sample may take
 *
 * Return: data->aux_size: @size capped at the area size, rounded up to 8
 * bytes; 0 if there is nothing to sample from, or if this NMI hit a
 * sample being taken.
 */
unsigned long perf_prepare_sample_aux(struct perf_event *event,
				      struct perf_sample_data *data,
				      size_t size)
{
	struct perf_event *sampler = event->aux_event;
	struct perf_buffer *rb;
	struct perf_aux *aux;

	data->aux_size = 0;
	if (!sampler ||
	    WARN_ON_ONCE(READ_ONCE(sampler->state) != PERF_EVENT_STATE_ACTIVE) ||
	    WARN_ON_ONCE(READ_ONCE(sampler->oncpu) != smp_processor_id()))
		return 0;

	rcu_read_lock();
	rb = sampler_rb(sampler);
	if (rb && !READ_ONCE(rb->aux.in_sampling)) {
		aux = rcu_dereference(rb->aux.area);
		size = min_t(size_t, size, aux ? aux->size : 0);
		data->aux_size = ALIGN(size, sizeof(u64));
	}
	rcu_read_unlock();
	return data->aux_size;
}

/**
 * perf_aux_sample_output() - write the AUX part of a sample
 * @event: the sampled event
 * @handle: the data-area output handle of the sample
 * @data: the sample, sized by perf_prepare_sample_aux()
 *
 * The sampler's PMU copies the latest data->aux_size bytes of trace
 * (pmu::snapshot_aux, which may stop the hardware briefly); what it does
 * not fill is padded with zeroes, so the record keeps the size announced
 * in its header.
 */
void perf_aux_sample_output(struct perf_event *event,
			    struct perf_output_handle *handle,
			    struct perf_sample_data *data)
{
	struct perf_event *sampler = event->aux_event;
	struct perf_buffer *rb;
	unsigned long flags;
	long size = 0;
	u64 zero = 0;

	if (WARN_ON_ONCE(!sampler || !data->aux_size))
		return;

	rcu_read_lock();
	rb = sampler_rb(sampler);
	if (rb) {
		/*
		 * pmu::snapshot_aux, not stop/start, so that the event state
		 * the IRQ-context callbacks own is left alone; interrupts
		 * off so that an IPI cannot restart the event under it.
		 */
		local_irq_save(flags);
		WRITE_ONCE(rb->aux.in_sampling, 1);
		barrier();
		size = sampler->pmu->snapshot_aux(sampler, handle, data->aux_size);
		barrier();
		WRITE_ONCE(rb->aux.in_sampling, 0);
		local_irq_restore(flags);
	}
	rcu_read_unlock();

	/* perf_output_copy() cannot fail; if that ever changes, say so. */
	if (WARN_ON_ONCE(size < 0))
		size = 0;
	/* Only the rounding up to 8 bytes should be left to pad. */
	WARN_ON_ONCE(data->aux_size - size >= sizeof(u64) && rb);
	while (size < data->aux_size) {
		unsigned long n = min_t(unsigned long, data->aux_size - size,
					sizeof(zero));

		perf_output_copy(handle, &zero, n);
		size += n;
	}
}

/**
 * perf_event_aux_pause() - pause or resume an AUX event's trace
 * @event: the AUX event (the group leader of the event that overflowed)
 * @pause: true to pause, false to resume
 *
 * For attr.aux_pause/aux_resume: stops the PMU with PERF_EF_PAUSE or
 * starts it with PERF_EF_RESUME, without changing the event's state, and
 * only if that changes hw.aux_paused.  A pause or resume hit by an NMI
 * that wants another is not re-entered: the inner one is dropped.
 */
void perf_event_aux_pause(struct perf_event *event, bool pause)
{
	struct perf_buffer *rb;
	unsigned long flags;

	if (WARN_ON_ONCE(!event))
		return;

	rcu_read_lock();
	rb = sampler_rb(event);
	if (!rb)
		goto out;
	local_irq_save(flags);
	if (!READ_ONCE(rb->aux.in_pause_resume)) {
		WRITE_ONCE(rb->aux.in_pause_resume, 1);
		barrier();
		if (pause && !event->hw.aux_paused) {
			event->hw.aux_paused = 1;
			event->pmu->stop(event, PERF_EF_PAUSE);
		} else if (!pause && event->hw.aux_paused) {
			event->hw.aux_paused = 0;
			event->pmu->start(event, PERF_EF_RESUME);
		}
		barrier();
		WRITE_ONCE(rb->aux.in_pause_resume, 0);
	}
	local_irq_restore(flags);
out:
	rcu_read_unlock();
}

#if IS_ENABLED(CONFIG_PERF_AUX_KUNIT_TEST)
#include "aux_test.c"
#endif
