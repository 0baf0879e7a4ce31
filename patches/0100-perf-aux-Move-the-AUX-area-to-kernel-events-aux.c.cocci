// SPDX-License-Identifier: GPL-2.0
// Subject: perf/aux: Move the AUX area out of core.c and ring_buffer.c
// Files: kernel/events/core.c kernel/events/ring_buffer.c kernel/events/internal.h
//
// Removes the perf core's own implementation of the AUX area, which
// kernel/events/aux.c replaces with the same API and ABI, and connects
// what remains to it:
//
//  - ring_buffer.c: the output API (perf_aux_output_begin/end/skip/flag,
//    perf_get_aux, perf_output_copy_aux), the page allocation and
//    freeing (rb_alloc_aux, rb_free_aux and helpers), and the AUX branch
//    of perf_mmap_to_page(); ring_buffer_init() calls perf_aux_rb_init().
//    perf_output_wakeup() becomes visible to aux.c.
//  - core.c: perf_mmap_aux(), which perf_mmap() now replaces with
//    perf_aux_mmap() under the same event->mmap_mutex; the AUX VMA keeps
//    the vm_ops perf_aux_mmap() gives it, is mapped by
//    perf_aux_map_range() instead of map_range() (which no longer takes
//    the AUX mutex), and is closed through them if that fails; the AUX
//    teardown in perf_mmap_close() and the AUX count in perf_mmap_open(),
//    which the AUX VMA's own vm_ops do around these two; PERF_RECORD_AUX
//    and PERF_RECORD_AUX_OUTPUT_HW_ID; AUX sampling; pause/resume.
//    perf_mmap_open(), perf_mmap_close(), perf_pmu_output_stop(),
//    perf_mmap_calc_limits() and perf_mmap_account() become visible to
//    aux.c.
//
// For Linux 7.3 (the rewrite is not part of the 6.12 series).
//  - internal.h: the AUX fields of struct perf_buffer, replaced by one
//    struct perf_rb_aux, and the helpers that read them.
//
// Applied by scripts/assemble.sh with spatch; the resulting diff is the
// commit that make series exports.

// ---- functions that aux.c provides now --------------------------------------

@gone@
identifier f = {perf_aux_output_flag, perf_aux_output_begin,
		rb_need_aux_wakeup, perf_aux_output_end, perf_aux_output_skip,
		perf_get_aux, perf_output_copy_aux, rb_alloc_aux_page,
		rb_free_aux_page, __rb_free_aux, rb_alloc_aux, rb_free_aux,
		perf_prepare_sample_aux, perf_pmu_snapshot_aux,
		perf_aux_sample_output, __perf_event_aux_pause,
		perf_event_aux_pause, perf_report_aux_output_id};
@@
- f(...) { ... }

@@
identifier gone.f;
declarer name EXPORT_SYMBOL_GPL;
@@
- EXPORT_SYMBOL_GPL(f);

@@
@@
- #define PERF_AUX_GFP (...)

// ---- ring_buffer.c -----------------------------------------------------------

@@
@@
- mutex_init(&rb->aux_mutex);
+ perf_aux_rb_init(rb);

@@
@@
perf_mmap_to_page(...)
{
- if (rb->aux_nr_pages) { ... }
  ...
}

@@
@@
- static
  void perf_output_wakeup(struct perf_output_handle *handle) { ... }

// ---- core.c: the mappings ----------------------------------------------------

@@
@@
perf_mmap_open(...)
{
  ...
- if (vma_start_pgoff(vma))
-	refcount_inc(&event->rb->aux_mmap_count);
  ...
}

@@
@@
perf_mmap_close(...)
{
  ...
- if (rb_has_aux(rb) && ...) { ... }
  ...
}

// Its prototype goes before the function loses "static" (spatch would
// change the prototype along with the definition).
@@
@@
- static void perf_pmu_output_stop(struct perf_event *event);

@@
identifier f = {perf_mmap_open, perf_mmap_close, perf_pmu_output_stop};
@@
- static
  void f(...) { ... }

@@
identifier f = {perf_mmap_calc_limits, perf_mmap_account};
type T;
@@
- static
  T f(...) { ... }

// The AUX branch of perf_mmap() is aux.c's now.
@@
@@
- perf_mmap_aux(...) { ... }

// map_range() maps only the data area: the AUX area does not serialize it.
@@
@@
map_range(...)
{
  ...
- guard(mutex)(&rb->aux_mutex);
  ...
}

// perf_mmap(): a non-zero offset goes to aux.c under the same checks and
// the same event->mmap_mutex; the AUX VMA has its own vm_ops, is mapped by
// aux.c, and is torn down through them if that fails.
@@
identifier vma, event, nr_pages;
@@
perf_mmap(...)
{
  <...
- perf_mmap_aux(vma, event, nr_pages)
+ perf_aux_mmap(vma, event, nr_pages)
  ...>
}

@@
@@
perf_mmap(...)
{
  <...
- vma->vm_ops = &perf_mmap_vmops;
+ if (!vma_start_pgoff(vma))
+	vma->vm_ops = &perf_mmap_vmops;
  ...>
}

@@
expression E;
@@
perf_mmap(...)
{
  <...
- E = map_range(event->rb, vma);
+ if (vma_start_pgoff(vma))
+	E = perf_aux_map_range(vma);
+ else
+	E = map_range(event->rb, vma);
  ...>
}

@@
@@
perf_mmap(...)
{
  <...
- perf_mmap_close(vma);
+ vma->vm_ops->close(vma);
  ...>
}

// ---- internal.h --------------------------------------------------------------

@@
type T;
identifier fld = {aux_watermark, aux_mutex, aux_head, aux_nest, aux_wakeup,
		  aux_pgoff, aux_nr_pages, aux_overwrite, aux_mmap_count,
		  aux_mmap_locked, aux_mmap_user, aux_mmap_mm,
		  aux_refcount, aux_in_sampling,
		  aux_in_pause_resume, aux_pages, aux_priv, aux_pmu, aux_module};
@@
struct perf_buffer {
  ...
- T fld;
  ...
};

@@
@@
struct perf_buffer {
  ...
- void (*free_aux)(void *);
+ struct perf_rb_aux aux;
  ...
};

@@
identifier f = {rb_alloc_aux, rb_free_aux};
type T;
@@
- T f(...);

@@
identifier f = {rb_has_aux, perf_aux_size};
type T;
@@
- static inline T f(...) { ... }

@@
@@
  #include <linux/refcount.h>
+ #include "aux.h"
