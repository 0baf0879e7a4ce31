// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the perf AUX area (kernel/events/aux.c).
 *
 * Included at the end of aux.c when CONFIG_PERF_AUX_KUNIT_TEST is set, so
 * that the static pieces (the page allocator, the producer's advance) are
 * tested as they are, not through a copy.  The tests need no PMU and no
 * event mapping: the output API is driven on a buffer and an area built
 * here by hand, in the states the real code puts them in.
 *
 * Positions are free-running byte counts modulo 2^BITS_PER_LONG, so every
 * arithmetic case is also checked where the counters wrap.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>

#define WRAP(x)	((unsigned long)(x))	/* ULONG_MAX - n + 1 == WRAP(-n) */

/* perf_aux_space() ------------------------------------------------------- */

struct space_case {
	const char *name;
	unsigned long head, tail, size, want;
};

static const struct space_case space_cases[] = {
	{ "empty",			0, 0, 4096, 4095 },
	{ "one byte used",		1, 0, 4096, 4094 },
	{ "one byte left",		4095, 1, 4096, 1 },
	{ "full (one byte kept)",	4095, 0, 4096, 0 },
	{ "exactly size used",		4096, 0, 4096, 0 },
	{ "tail ahead of head",		10, 20, 4096, 0 },
	{ "tail far behind",		1UL << 40, 0, 4096, 0 },
	{ "head wrapped, tail not",	WRAP(16), WRAP(-16), 4096, 4095 - 32 },
	{ "both wrapped",		WRAP(100), WRAP(50), 4096, 4095 - 50 },
	{ "wrap, tail ahead",		WRAP(-16), WRAP(16), 4096, 0 },
	{ "at 2^64-1",			ULONG_MAX, ULONG_MAX, 1UL << 20, (1UL << 20) - 1 },
	{ "2^63 area, half used",	1UL << 62, 0, 1UL << 63, (1UL << 63) - 1 - (1UL << 62) },
};

static void space_case_desc(const struct space_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(space, space_cases, space_case_desc);

static void aux_test_space(struct kunit *test)
{
	const struct space_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, perf_aux_space(c->head, c->tail, c->size), c->want);
}

/* perf_aux_crossed() ----------------------------------------------------- */

struct crossed_case {
	const char *name;
	unsigned long head, wakeup, watermark, want;
};

static const struct crossed_case crossed_cases[] = {
	{ "below",			4095, 0, 4096, 0 },
	{ "exactly at",			4096, 0, 4096, 4096 },
	{ "past, rounds down",		5000, 0, 4096, 4096 },
	{ "two boundaries at once",	3 * 4096 + 7, 0, 4096, 3 * 4096 },
	{ "not a power of two",		7 * 3000 + 1, 6 * 3000, 3000, 7 * 3000 },
	{ "below, not a power of two",	6 * 3000 + 2999, 6 * 3000, 3000, 6 * 3000 },
	{ "wakeup at the top, head wrapped", 4096, WRAP(-4096), 8192, 0 },
	{ "wakeup at the top, not yet",	4095, WRAP(-4096), 8192, WRAP(-4096) },
	{ "head at 2^64-1",		ULONG_MAX, WRAP(-8192), 4096, WRAP(-4096) },
};

static void crossed_case_desc(const struct crossed_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(crossed, crossed_cases, crossed_case_desc);

static void aux_test_crossed(struct kunit *test)
{
	const struct crossed_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, perf_aux_crossed(c->head, c->wakeup, c->watermark),
			c->want);
}

/* The defaults and the allocation order ----------------------------------- */

static void aux_test_default_watermark(struct kunit *test)
{
	/* Half the area ... */
	KUNIT_EXPECT_EQ(test, perf_aux_default_watermark(1), PAGE_SIZE / 2);
	KUNIT_EXPECT_EQ(test, perf_aux_default_watermark(16), 8 * PAGE_SIZE);
	/* ... up to what the 32-bit attr::aux_watermark can hold. */
	KUNIT_EXPECT_EQ(test, perf_aux_default_watermark(1UL << 21), (unsigned long)U32_MAX);
	KUNIT_EXPECT_EQ(test, perf_aux_default_watermark(1UL << 30), (unsigned long)U32_MAX);
}

static void aux_test_max_order(struct kunit *test)
{
	/* Scatter-gather PMUs: single pages, whatever the area (as 6.12). */
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1024, 64 * PAGE_SIZE, false, false), 0U);
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1024, 0, true, false), 0U);
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1, 0, true, false), 0U);
	/* Contiguous PMUs: chunks of one watermark ... */
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1024, 64 * PAGE_SIZE, false, true), 6U);
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1024, PAGE_SIZE / 2, false, true), 0U);
	/* ... rounded up, never more than the area ... */
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1024, 3 * PAGE_SIZE, false, true), 2U);
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(8, 1UL << 30, false, true), 3U);
	/* ... and the whole area in overwrite mode. */
	KUNIT_EXPECT_EQ(test, perf_aux_max_order(1024, 0, true, true), 10U);
}

/*
 * Walk an allocated page array chunk by chunk: each chunk's pages are
 * consecutive and zeroed, its first page says its order (none for a
 * single page).  Return the number of chunks; *@max and *@min are set to
 * the largest and smallest order seen.
 */
static int aux_test_chunks(struct kunit *test, struct perf_aux *aux,
			   unsigned int *max, unsigned int *min)
{
	int n = 0, chunks = 0;

	*max = 0;
	*min = UINT_MAX;
	while (n < aux->nr_pages) {
		struct page *first = virt_to_page(aux->pages[n]);
		unsigned int order = PagePrivate(first) ? page_private(first) : 0;
		int j;

		KUNIT_EXPECT_TRUE(test, !PagePrivate(first) || order > 0);
		KUNIT_ASSERT_LE(test, n + (1 << order), aux->nr_pages);
		for (j = 0; j < 1 << order; j++) {
			KUNIT_EXPECT_PTR_EQ(test, virt_to_page(aux->pages[n + j]),
					    first + j);
			KUNIT_EXPECT_TRUE(test, !memchr_inv(aux->pages[n + j], 0,
							    PAGE_SIZE));
			if (j)
				KUNIT_EXPECT_FALSE(test, PagePrivate(first + j));
		}
		*max = max(*max, order);
		*min = min(*min, order);
		n += 1 << order;
		chunks++;
	}
	return chunks;
}

/*
 * A contiguous PMU gets chunks of the order asked for.  The test runs
 * early in a freshly booted kernel, where 64 KiB blocks are free, so
 * every chunk gets the full order; an allocator that settled for less
 * (or for single pages) fails here.
 */
static void aux_test_alloc_contiguous(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 2, 4 };
	unsigned int i, max, min;

	for (i = 0; i < ARRAY_SIZE(orders); i++) {
		struct perf_aux aux = { .nr_pages = 32 };
		int chunks;

		aux.pages = kcalloc(aux.nr_pages, sizeof(void *), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, aux.pages);
		KUNIT_ASSERT_EQ(test, aux_alloc_pages(&aux, NUMA_NO_NODE, orders[i]), 0);
		chunks = aux_test_chunks(test, &aux, &max, &min);
		KUNIT_EXPECT_EQ(test, max, orders[i]);
		KUNIT_EXPECT_EQ(test, min, orders[i]);
		KUNIT_EXPECT_EQ(test, chunks, 32 >> orders[i]);
		aux_free_pages(aux.pages, aux.nr_pages);
	}
}

/*
 * A scatter-gather PMU gets single pages, even for an area that large
 * chunks would fit: aux_create() asks perf_aux_max_order() for the order
 * and the allocator takes nothing larger.
 */
static void aux_test_alloc_sg(struct kunit *test)
{
	struct perf_aux aux = { .nr_pages = 512 };
	unsigned int max, min;

	aux.pages = kcalloc(aux.nr_pages, sizeof(void *), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, aux.pages);
	KUNIT_ASSERT_EQ(test, aux_alloc_pages(&aux, NUMA_NO_NODE,
					      perf_aux_max_order(512, 256 * PAGE_SIZE,
								 false, false)), 0);
	KUNIT_EXPECT_EQ(test, aux_test_chunks(test, &aux, &max, &min), 512);
	KUNIT_EXPECT_EQ(test, max, 0U);
	aux_free_pages(aux.pages, aux.nr_pages);
}

/* The output API on a hand-built buffer ----------------------------------- */

/* What the output API asked of the event: wake-ups and disables. */
static atomic_t aux_test_wakeups, aux_test_disables;

static void aux_test_wakeup_fn(struct irq_work *work)
{
	atomic_inc(&aux_test_wakeups);
}

static void aux_test_disable_fn(struct irq_work *work)
{
	atomic_inc(&aux_test_disables);
}

static void aux_test_sync(void *data)
{
	struct perf_event *event = data;

	irq_work_sync(&event->pending_irq);
	irq_work_sync(&event->pending_disable_irq);
}

/* Wait for the queued wake-ups and disables, and return how many ran. */
static int aux_test_wakeups_seen(struct perf_event *event)
{
	aux_test_sync(event);
	return atomic_read(&aux_test_wakeups);
}

static int aux_test_disables_seen(struct perf_event *event)
{
	aux_test_sync(event);
	return atomic_read(&aux_test_disables);
}

struct aux_fixture {
	struct perf_buffer *rb;
	struct perf_aux *aux;
	struct perf_event *event;
};

/*
 * A buffer with a user page and a published area of @nr_pages pages (no
 * pages allocated: the API under test does not touch them), and an event
 * whose output goes there.  The area holds its "mapped" reference.
 */
static void aux_fixture_init(struct kunit *test, struct aux_fixture *f,
			     int nr_pages, unsigned long watermark, bool overwrite)
{
	f->rb = kunit_kzalloc(test, sizeof(*f->rb), GFP_KERNEL);
	f->aux = kunit_kzalloc(test, sizeof(*f->aux), GFP_KERNEL);
	f->event = kunit_kzalloc(test, sizeof(*f->event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->rb);
	KUNIT_ASSERT_NOT_NULL(test, f->aux);
	KUNIT_ASSERT_NOT_NULL(test, f->event);
	f->rb->user_page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->rb->user_page);

	perf_aux_rb_init(f->rb);
	/* A buffer without data pages is paused: records are dropped. */
	f->rb->paused = 1;
	refcount_set(&f->aux->refcount, 1);
	f->aux->nr_pages = nr_pages;
	f->aux->size = (unsigned long)nr_pages << PAGE_SHIFT;
	f->aux->watermark = overwrite ? 0 : watermark;
	f->aux->mode = overwrite ? PERF_AUX_OVERWRITE : 0;
	f->aux->priv = f->aux;	/* any non-NULL cookie */
	f->aux->rb = f->rb;
	rcu_assign_pointer(f->rb->aux.area, f->aux);
	f->event->rb = f->rb;

	/* The event's irq_works stand in for the perf core's. */
	init_irq_work(&f->event->pending_irq, aux_test_wakeup_fn);
	init_irq_work(&f->event->pending_disable_irq, aux_test_disable_fn);
	atomic_set(&aux_test_wakeups, 0);
	atomic_set(&aux_test_disables, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, aux_test_sync, f->event), 0);
}

/* Put the producer (and the consumer) at @head, as after earlier traffic. */
static void aux_fixture_seek(struct aux_fixture *f, unsigned long head,
			     unsigned long tail)
{
	f->rb->aux.head = head;
	f->rb->aux.wakeup = f->aux->watermark ? head - head % f->aux->watermark : 0;
	f->rb->user_page->aux_head = head;
	f->rb->user_page->aux_tail = tail;
}

/* An area of two pages with one byte free: none usable. */
static void aux_fixture_full(struct kunit *test, struct aux_fixture *f)
{
	unsigned long size = 2 * PAGE_SIZE;

	aux_fixture_init(test, f, 2, PAGE_SIZE, false);
	aux_fixture_seek(f, WRAP(5), WRAP(5 - size + 1));
}

static void aux_test_begin_space(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct aux_fixture f;
	unsigned long head = WRAP(-100);	/* wraps during the test */

	/* The watermark is large enough that the 300 bytes cross none. */
	aux_fixture_init(test, &f, 4, 1UL << 20, false);
	aux_fixture_seek(&f, head, head - 1000);
	f.rb->aux.wakeup = WRAP(-(1L << 19));

	KUNIT_ASSERT_PTR_EQ(test, perf_aux_output_begin(&handle, f.event), f.aux->priv);
	KUNIT_EXPECT_PTR_EQ(test, perf_get_aux(&handle), f.aux->priv);
	KUNIT_EXPECT_EQ(test, handle.head, head);
	KUNIT_EXPECT_EQ(test, handle.size, 4 * PAGE_SIZE - 1 - 1000);
	/* The open transaction pins the area. */
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 2);
	KUNIT_EXPECT_PTR_EQ(test, f.rb->aux.txn, &handle);
	KUNIT_EXPECT_PTR_EQ(test, f.rb->aux.txn_area, f.aux);

	/* Skipping more than the space is refused and changes nothing. */
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, handle.size + 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, f.rb->aux.head, head);

	/* A skip moves the start, publishes the head and uses up space. */
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, 300), 0);
	KUNIT_EXPECT_EQ(test, handle.head, head + 300);
	KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, head + 300);
	KUNIT_EXPECT_EQ(test, handle.size, 4 * PAGE_SIZE - 1 - 1300);

	/* An empty transaction ends without a record and unpins the area. */
	perf_aux_output_end(&handle, 0);
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 0);
	KUNIT_EXPECT_NULL(test, handle.event);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
	KUNIT_EXPECT_EQ(test, f.rb->aux.head, head + 300);
	KUNIT_EXPECT_NULL(test, perf_get_aux(&handle));
}

/*
 * In overwrite mode the driver reports its write position in handle->head
 * and perf publishes exactly that, whatever @size says; the tail is not
 * looked at.  Here a running count, as CoreSight's ETF hands it (intel_pt
 * and arm_spe_pmu hand an offset into the area, which is the same case
 * without the wraps).
 */
static void aux_test_overwrite_head(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct aux_fixture f;

	aux_fixture_init(test, &f, 2, 0, true);
	aux_fixture_seek(&f, WRAP(-64), 12345);	/* a tail that would mean "full" */

	KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_EQ(test, handle.size, 0UL);
	KUNIT_EXPECT_EQ(test, handle.head, WRAP(-64));
	handle.head = WRAP(-64) + 3 * 2 * PAGE_SIZE + 8;	/* wrapped the area 3 times */
	perf_aux_output_end(&handle, 0);

	KUNIT_EXPECT_EQ(test, f.rb->aux.head, WRAP(-64) + 3 * 2 * PAGE_SIZE + 8);
	KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, WRAP(-64) + 3 * 2 * PAGE_SIZE + 8);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
}

/*
 * Crossing a watermark boundary wakes the consumer once, also where the
 * position wraps at 2^64, and moves the handle's next wake-up point.
 */
static void aux_test_skip_watermark(struct kunit *test)
{
	struct perf_output_handle handle = {};
	unsigned long wm = PAGE_SIZE;
	struct aux_fixture f;

	aux_fixture_init(test, &f, 4, wm, false);
	aux_fixture_seek(&f, WRAP(-wm - 10), WRAP(-wm - 10));

	KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_EQ(test, handle.wakeup, WRAP(-wm));
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, 9), 0);
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 0);
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, 1), 0);	/* at 2^64 - wm */
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 1);
	KUNIT_EXPECT_EQ(test, handle.wakeup, 0UL);
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, wm + 5), 0);	/* past 2^64 */
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 2);
	KUNIT_EXPECT_EQ(test, f.rb->aux.wakeup, 0UL);
	KUNIT_EXPECT_EQ(test, handle.wakeup, wm);
	KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, 5UL);
	perf_aux_output_end(&handle, 0);
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 2);
	KUNIT_EXPECT_EQ(test, aux_test_disables_seen(f.event), 0);
}

/*
 * A full buffer gives no transaction: the consumer is woken and the
 * event disabled (the consumer re-enables it once it has made room),
 * and the area is not left pinned.
 */
static void aux_test_begin_full(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct aux_fixture f;

	aux_fixture_full(test, &f);

	KUNIT_EXPECT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_NULL(test, handle.event);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 1);
	KUNIT_EXPECT_EQ(test, aux_test_disables_seen(f.event), 1);

	/* Once the consumer has read one byte, there is one to write. */
	f.rb->user_page->aux_tail += 1;
	KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_EQ(test, handle.size, 1UL);
	perf_aux_output_end(&handle, 0);
}

/*
 * A driver's interrupt handler that ends the open transaction, as PMIs do:
 * perf_get_aux() says whether there is one.  Run as the event's disable
 * irq_work, which begin queues when it finds the area full: on x86 that
 * is a self-IPI, taken as soon as it is sent, inside begin.
 */
static struct perf_output_handle *aux_test_irq_handle;
static atomic_t aux_test_irq_ends, aux_test_irq_in_begin;
static bool aux_test_in_begin;

static void aux_test_irq_end_fn(struct irq_work *work)
{
	atomic_inc(&aux_test_disables);
	if (READ_ONCE(aux_test_in_begin))
		atomic_inc(&aux_test_irq_in_begin);
	if (perf_get_aux(aux_test_irq_handle)) {
		atomic_inc(&aux_test_irq_ends);
		perf_aux_output_end(aux_test_irq_handle, 0);
	}
}

/*
 * A begin that finds the area full holds no transaction an interrupt can
 * see: ending the transaction there would close it twice (the second
 * close may give back another CPU's claim) and drop the begin's
 * reference twice.
 */
static void aux_test_begin_full_irq(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct aux_fixture f;
	void *priv;

	if (!arch_irq_work_has_interrupt())
		kunit_skip(test, "irq_work runs from the tick here, never inside begin");
	aux_fixture_full(test, &f);
	/* The test's own reference: a double put must not free the area. */
	refcount_inc(&f.aux->refcount);
	init_irq_work(&f.event->pending_disable_irq, aux_test_irq_end_fn);
	aux_test_irq_handle = &handle;
	atomic_set(&aux_test_irq_ends, 0);
	atomic_set(&aux_test_irq_in_begin, 0);

	WRITE_ONCE(aux_test_in_begin, true);
	priv = perf_aux_output_begin(&handle, f.event);
	WRITE_ONCE(aux_test_in_begin, false);
	KUNIT_EXPECT_NULL(test, priv);
	KUNIT_ASSERT_EQ(test, aux_test_disables_seen(f.event), 1);
	if (!atomic_read(&aux_test_irq_in_begin))
		kunit_skip(test, "the interrupt came after begin returned");
	KUNIT_EXPECT_EQ(test, atomic_read(&aux_test_irq_ends), 0);
	KUNIT_EXPECT_NULL(test, handle.event);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 2);
	refcount_set(&f.aux->refcount, 1);	/* whatever happened above */
}

/*
 * A begin on an area that munmap() has marked but not yet unpublished
 * (the window at the top of aux.c) is as stale as an end there: if the
 * area is full, it fails without a wakeup or a disable.
 */
static void aux_test_begin_full_stale(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct aux_fixture f;

	aux_fixture_full(test, &f);
	WRITE_ONCE(f.aux->mode, f.aux->mode | PERF_AUX_UNMAPPED);

	KUNIT_EXPECT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_NULL(test, handle.event);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
	KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 0);
	KUNIT_EXPECT_EQ(test, aux_test_disables_seen(f.event), 0);
}

/* A buffer whose area is gone (or dying) gives no transaction. */
static void aux_test_begin_unmapped(struct kunit *test)
{
	struct perf_output_handle handle = { .event = (void *)1 };
	struct aux_fixture f;

	aux_fixture_init(test, &f, 2, PAGE_SIZE, false);
	refcount_set(&f.aux->refcount, 0);	/* dropped its last reference */
	KUNIT_EXPECT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_NULL(test, handle.event);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);

	RCU_INIT_POINTER(f.rb->aux.area, NULL);	/* unpublished */
	handle.event = (void *)1;
	KUNIT_EXPECT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_NULL(test, handle.event);
}

/* An inherited event writes into its parent's buffer. */
static void aux_test_begin_child(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct perf_event *child;
	struct aux_fixture f;

	aux_fixture_init(test, &f, 2, PAGE_SIZE, false);
	child = kunit_kzalloc(test, sizeof(*child), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, child);
	child->parent = f.event;

	KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, child));
	KUNIT_EXPECT_PTR_EQ(test, handle.rb, f.rb);
	KUNIT_EXPECT_PTR_EQ(test, handle.event, child);
	perf_aux_output_end(&handle, 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
}

/*
 * A transaction that began on an area and ends after that area was
 * unmapped (the window at the top of aux.c) and a new one mapped on the
 * same buffer must change nothing of the buffer: not its head, not the
 * user page's aux_head, no wakeup and no disable, whatever the old area's
 * mode and whatever the driver says.  It still unpins the old area.
 */
static void aux_test_stale_end(struct kunit *test)
{
	static const bool modes[] = { false, true };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		struct perf_output_handle handle = {};
		struct perf_aux *new;
		struct aux_fixture f;

		/* The old area: overwrite or normal. */
		aux_fixture_init(test, &f, 4, PAGE_SIZE, modes[i]);
		aux_fixture_seek(&f, 1000, 1000);
		KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));

		/* munmap(): unpublished, stopped (this one was missed). */
		RCU_INIT_POINTER(f.rb->aux.area, NULL);
		WRITE_ONCE(f.aux->mode, f.aux->mode | PERF_AUX_UNMAPPED);

		/*
		 * A skip in the stale transaction moves its own head only,
		 * nothing of the buffer (overwrite mode has no room to skip).
		 */
		if (!modes[i]) {
			KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, 100), 0);
			KUNIT_EXPECT_EQ(test, handle.head, 1100UL);
			KUNIT_EXPECT_EQ(test, handle.size, 4 * PAGE_SIZE - 1 - 100);
			KUNIT_EXPECT_EQ(test, f.rb->aux.head, 1000UL);
			KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, 1000ULL);
			KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 0);
		}

		/* mmap() of a new, normal area on the same buffer. */
		new = kunit_kzalloc(test, sizeof(*new), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, new);
		refcount_set(&new->refcount, 1);
		new->nr_pages = 2;
		new->size = 2 * PAGE_SIZE;
		new->watermark = PAGE_SIZE;
		new->priv = new;	/* any non-NULL cookie */
		new->rb = f.rb;
		rcu_assign_pointer(f.rb->aux.area, new);
		aux_fixture_seek(&f, 5000, 5000);

		/* The stale end, with an old absolute head and TRUNCATED. */
		handle.head = 1000 + 3 * PAGE_SIZE;
		perf_aux_output_flag(&handle, PERF_AUX_FLAG_TRUNCATED);
		perf_aux_output_end(&handle, 3 * PAGE_SIZE);

		KUNIT_EXPECT_EQ(test, f.rb->aux.head, 5000UL);
		KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, 5000ULL);
		KUNIT_EXPECT_EQ(test, aux_test_wakeups_seen(f.event), 0);
		KUNIT_EXPECT_EQ(test, aux_test_disables_seen(f.event), 0);
		KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
		KUNIT_EXPECT_NULL(test, handle.event);
		/* Only the transaction's reference was dropped. */
		KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);

		/* The new area is written from where the buffer was. */
		KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));
		KUNIT_EXPECT_EQ(test, handle.head, 5000UL);
		KUNIT_EXPECT_EQ(test, handle.size, 2 * PAGE_SIZE - 1);
		perf_aux_output_end(&handle, 0);
		KUNIT_EXPECT_EQ(test, refcount_read(&new->refcount), 1);
	}
}

/*
 * perf_get_aux() answers for the open transaction only: not before a
 * begin, not after a failed begin (full buffer), not after the end.
 */
static void aux_test_get_aux(struct kunit *test)
{
	struct perf_output_handle handle = {};
	struct aux_fixture f;

	aux_fixture_init(test, &f, 2, PAGE_SIZE, false);
	aux_fixture_seek(&f, 0, 0);
	KUNIT_EXPECT_NULL(test, perf_get_aux(&handle));
	KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_PTR_EQ(test, perf_get_aux(&handle), f.aux->priv);
	perf_aux_output_end(&handle, 0);
	KUNIT_EXPECT_NULL(test, perf_get_aux(&handle));

	f.rb->user_page->aux_tail = WRAP(-(2 * PAGE_SIZE - 1));	/* full */
	KUNIT_EXPECT_NULL(test, perf_aux_output_begin(&handle, f.event));
	KUNIT_EXPECT_NULL(test, perf_get_aux(&handle));
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
}

/*
 * Only the handle that holds the buffer's transaction slot can skip in,
 * read or end the transaction.  @other is what the handle of a second
 * writer looked like when two begins could both pass a check of the slot
 * before either claimed it (on two CPUs, see aux_test_claim_race): filled
 * in for the same buffer and area.  Its skip, perf_get_aux() and end must
 * leave the open transaction, the head and the transaction's reference
 * alone; so must a handle whose transaction was ended already.
 */
static void aux_test_foreign_end(struct kunit *test)
{
	struct perf_output_handle handle = {}, other, *holder;
	struct aux_fixture f;

	aux_fixture_init(test, &f, 4, 1UL << 20, false);
	aux_fixture_seek(&f, 1000, 1000);
	KUNIT_ASSERT_NOT_NULL(test, perf_aux_output_begin(&handle, f.event));
	other = handle;

	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&other, 100), -EINVAL);
	KUNIT_EXPECT_NULL(test, perf_get_aux(&other));
	perf_aux_output_end(&other, 0);
	KUNIT_EXPECT_EQ(test, f.rb->aux.head, 1000UL);
	KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, 1000ULL);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 2);
	/* Had the slot been given back, the real end below would oops. */
	holder = READ_ONCE(f.rb->aux.txn);
	KUNIT_ASSERT_PTR_EQ(test, holder, &handle);
	KUNIT_EXPECT_PTR_EQ(test, perf_get_aux(&handle), f.aux->priv);

	/* The holder's own skip and end work ... */
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, 100), 0);
	perf_aux_output_end(&handle, 0);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
	KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, 1100ULL);

	/* ... once: a second end or skip finds nothing to act on. */
	perf_aux_output_end(&handle, 0);
	KUNIT_EXPECT_EQ(test, perf_aux_output_skip(&handle, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.aux->refcount), 1);
	KUNIT_EXPECT_EQ(test, f.rb->user_page->aux_head, 1100ULL);
}

/* Two threads, each bound to one of two online CPUs. */
static void aux_test_cpus(struct kunit *test, unsigned int *a, unsigned int *b)
{
	*a = cpumask_first(cpu_online_mask);
	*b = cpumask_next(*a, cpu_online_mask);
	if (*b >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
}

static struct task_struct *aux_test_start(struct kunit *test,
					  int (*fn)(void *), void *data,
					  unsigned int cpu)
{
	struct task_struct *task;

	task = kthread_create_on_cpu(fn, data, cpu, "aux_test/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	wake_up_process(task);
	return task;
}

/*
 * Wait until the @n threads sharing @ready are all running, so that
 * they race for the whole of their time.  The wait yields to whatever
 * else this CPU must run: a stop_machine() that began on the other CPU
 * (the clocksource switch after the TSC's refined calibration, early in
 * a boot) holds it, and so the other thread, until this CPU's stopper
 * runs; a wait that never scheduled hung both for good.
 */
static void aux_test_gate(atomic_t *ready, int n)
{
	atomic_inc(ready);
	while (atomic_read(ready) < n) {
		cpu_relax();
		cond_resched();
	}
}

/* Stop @task (it may have returned already) and collect its result. */
static int aux_test_join(struct task_struct *task)
{
	int ret = kthread_stop(task);

	put_task_struct(task);
	return ret;
}

#define AUX_RACE_MS	500

struct claim_racer {
	struct perf_buffer *rb;
	struct perf_output_handle handle;
	atomic_t *ready;
	atomic_t *holders;
	atomic_t *overlaps;
	unsigned long claims;
	struct completion done;
};

/*
 * Claim the slot, hold it a little while counting the holders, give it
 * back; again until the time is up.
 */
static int aux_test_claim_fn(void *data)
{
	struct claim_racer *r = data;
	unsigned long n, until;

	aux_test_gate(r->ready, 2);
	until = jiffies + msecs_to_jiffies(AUX_RACE_MS);
	for (n = 1; time_before(jiffies, until); n++) {
		if (txn_claim(r->rb, &r->handle)) {
			r->claims++;
			if (atomic_inc_return(r->holders) > 1)
				atomic_inc(r->overlaps);
			ndelay(100);
			atomic_dec(r->holders);
			txn_close(&r->handle, r->rb);
		}
		if (!(n % 256))
			cond_resched();
	}
	complete(&r->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * Two writers on two CPUs begin on one buffer over and over (the claim
 * of perf_aux_output_begin(), without its warning): at no time may both
 * hold the slot.  A check of the slot followed by a store lets both
 * through when both check before either stores, which needs the two
 * CPUs to run at once: with KVM or QEMU's multi-threaded TCG, not with
 * the single-threaded TCG that QEMU 7.2 gives an x86 guest by default.
 */
static void aux_test_claim_race(struct kunit *test)
{
	atomic_t ready = ATOMIC_INIT(0), holders = ATOMIC_INIT(0);
	atomic_t overlaps = ATOMIC_INIT(0);
	struct claim_racer r[2] = {};
	struct task_struct *task[2];
	struct aux_fixture f;
	unsigned int cpu[2];
	int i;

	aux_test_cpus(test, &cpu[0], &cpu[1]);
	aux_fixture_init(test, &f, 2, PAGE_SIZE, false);
	for (i = 0; i < 2; i++) {
		r[i].rb = f.rb;
		r[i].ready = &ready;
		r[i].holders = &holders;
		r[i].overlaps = &overlaps;
		init_completion(&r[i].done);
	}
	for (i = 0; i < 2; i++)
		task[i] = aux_test_start(test, aux_test_claim_fn, &r[i], cpu[i]);
	for (i = 0; i < 2; i++)
		wait_for_completion(&r[i].done);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, aux_test_join(task[i]), 0);

	kunit_info(test, "claims %lu + %lu, overlaps %d\n", r[0].claims,
		   r[1].claims, atomic_read(&overlaps));
	KUNIT_EXPECT_EQ(test, atomic_read(&overlaps), 0);
	/* Both got the slot, so they did contend for it. */
	KUNIT_EXPECT_GT(test, r[0].claims, 0UL);
	KUNIT_EXPECT_GT(test, r[1].claims, 0UL);
	KUNIT_EXPECT_NULL(test, f.rb->aux.txn);
}

#define AUX_INSTALL_ROUNDS	4096

struct install_race {
	struct aux_fixture f;
	struct perf_aux *areas[AUX_INSTALL_ROUNDS];
	atomic_t ready;
	struct completion done;
	unsigned long txns;
	int rounds;
	int moved;
};

/* The writer: transactions of 64 bytes, read at once by the consumer. */
static int aux_test_writer_fn(void *data)
{
	struct install_race *r = data;
	struct perf_output_handle handle = {};
	struct perf_buffer *rb = r->f.rb;
	unsigned long n;

	aux_test_gate(&r->ready, 2);
	for (n = 1; !kthread_should_stop(); n++) {
		WRITE_ONCE(rb->user_page->aux_tail, READ_ONCE(rb->user_page->aux_head));
		if (perf_aux_output_begin(&handle, r->f.event)) {
			perf_aux_output_end(&handle, 64);
			r->txns++;
		}
		if (!(n % 64))
			cond_resched();
	}
	return 0;
}

/*
 * munmap() and mmap() of the area, as aux_unmap() and perf_aux_mmap() do
 * them, with the writer's transactions open across the unmap (the stop
 * missed it).  Each new area is published closed to new transactions
 * (no reference), so nothing may move the head until it is opened: a
 * move seen after aux_install() is an end of the old area publishing
 * into the new one.
 */
static int aux_test_mapper_fn(void *data)
{
	struct install_race *r = data;
	struct perf_buffer *rb = r->f.rb;
	struct perf_aux *old = r->f.aux;
	unsigned long until;
	int i;

	aux_test_gate(&r->ready, 2);
	until = jiffies + msecs_to_jiffies(3 * AUX_RACE_MS);
	for (i = 0; i < AUX_INSTALL_ROUNDS && time_before(jiffies, until); i++) {
		struct perf_aux *new = r->areas[i];
		u64 seen;

		/* As perf_aux_mmap() and the last munmap() do: under the mutex. */
		mutex_lock(&rb->aux.mutex);
		rcu_assign_pointer(rb->aux.area, NULL);
		WRITE_ONCE(old->mode, old->mode | PERF_AUX_UNMAPPED);
		aux_install(rb, new);
		mutex_unlock(&rb->aux.mutex);
		seen = READ_ONCE(rb->user_page->aux_head);
		usleep_range(50, 100);	/* an end takes about a microsecond */
		if (READ_ONCE(rb->user_page->aux_head) != seen)
			r->moved++;
		refcount_set(&new->refcount, 1);	/* "mapped": open */
		old = new;
		cond_resched();
	}
	r->rounds = i;
	complete(&r->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * An end that began on an area and tested its mode just before munmap()
 * marked it unmapped still publishes, for that area.  No such end may
 * publish once a newer area of the buffer is installed.
 */
static void aux_test_install_race(struct kunit *test)
{
	struct task_struct *writer, *mapper;
	struct install_race *r;
	unsigned int cpu[2];
	int i;

	aux_test_cpus(test, &cpu[0], &cpu[1]);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	aux_fixture_init(test, &r->f, 4, 1UL << 20, false);
	for (i = 0; i < AUX_INSTALL_ROUNDS; i++) {
		struct perf_aux *aux = kunit_kzalloc(test, sizeof(*aux), GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, aux);
		*aux = *r->f.aux;
		refcount_set(&aux->refcount, 0);
		aux->priv = aux;
		r->areas[i] = aux;
	}
	init_completion(&r->done);

	writer = aux_test_start(test, aux_test_writer_fn, r, cpu[1]);
	mapper = aux_test_start(test, aux_test_mapper_fn, r, cpu[0]);
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ(test, aux_test_join(mapper), 0);
	KUNIT_EXPECT_EQ(test, aux_test_join(writer), 0);

	kunit_info(test, "rounds %d, transactions %lu, moved %d\n", r->rounds,
		   r->txns, r->moved);
	KUNIT_EXPECT_EQ(test, r->moved, 0);
	KUNIT_EXPECT_GT(test, r->rounds, 8);
	KUNIT_EXPECT_GT(test, r->txns, 0UL);
	KUNIT_EXPECT_NULL(test, r->f.rb->aux.txn);
}

static struct kunit_case perf_aux_test_cases[] = {
	KUNIT_CASE_PARAM(aux_test_space, space_gen_params),
	KUNIT_CASE_PARAM(aux_test_crossed, crossed_gen_params),
	KUNIT_CASE(aux_test_default_watermark),
	KUNIT_CASE(aux_test_max_order),
	KUNIT_CASE(aux_test_alloc_contiguous),
	KUNIT_CASE(aux_test_alloc_sg),
	KUNIT_CASE(aux_test_begin_space),
	KUNIT_CASE(aux_test_overwrite_head),
	KUNIT_CASE(aux_test_skip_watermark),
	KUNIT_CASE(aux_test_begin_full),
	KUNIT_CASE(aux_test_begin_full_irq),
	KUNIT_CASE(aux_test_begin_full_stale),
	KUNIT_CASE(aux_test_begin_unmapped),
	KUNIT_CASE(aux_test_begin_child),
	KUNIT_CASE(aux_test_stale_end),
	KUNIT_CASE(aux_test_get_aux),
	KUNIT_CASE(aux_test_foreign_end),
	KUNIT_CASE(aux_test_claim_race),
	KUNIT_CASE(aux_test_install_race),
	{}
};

static struct kunit_suite perf_aux_test_suite = {
	.name = "perf_aux",
	.test_cases = perf_aux_test_cases,
};

kunit_test_suite(perf_aux_test_suite);
