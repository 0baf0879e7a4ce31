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
//  - core.c: the AUX branch of perf_mmap(), which now hands any non-zero
//    offset to perf_aux_mmap(); the AUX teardown in perf_mmap_close() and
//    the AUX count in perf_mmap_open(), which the AUX VMA's own vm_ops do
//    around these two; PERF_RECORD_AUX and PERF_RECORD_AUX_OUTPUT_HW_ID;
//    AUX sampling; pause/resume.  perf_mmap_open(), perf_mmap_close() and
//    perf_pmu_output_stop() become visible to aux.c.
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
- if (vma->vm_pgoff)
-	atomic_inc(&event->rb->aux_mmap_count);
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

@@
identifier f = {perf_mmap_open, perf_mmap_close, perf_pmu_output_stop};
@@
- static
  void f(...) { ... }

@@
@@
- static void perf_pmu_output_stop(struct perf_event *event);

// perf_mmap(): the AUX branch goes; a non-zero offset goes to aux.c before
// any of the data area's checks.
@mm@
statement S;
@@
perf_mmap(struct file *file, struct vm_area_struct *vma)
{
  ...
  vma_size = vma->vm_end - vma->vm_start;
+
+ if (vma->vm_pgoff)
+	return perf_aux_mmap(event, vma);
- if (vma->vm_pgoff == 0) {
	nr_pages = (vma_size / PAGE_SIZE) - 1;
- } else S
  ...
}

@@
identifier l = {accounting, aux_unlock};
@@
perf_mmap(...)
{
  <...
- l:
  ...>
}

@@
@@
perf_mmap(...)
{
  ...
- struct mutex *aux_mutex = NULL;
  <...
- if (aux_mutex)
-	mutex_unlock(aux_mutex);
  ...>
}

@@
@@
perf_mmap(...)
{
  <...
- WARN_ON(!rb && event->rb);
  ...>
}

// The allocation: only the data area is left to allocate here.
@@
statement S;
@@
  if (!rb) S
- else {
-	ret = rb_alloc_aux(...);
-	...
- }

@@
statement S;
@@
perf_mmap(...)
{
  <...
  if (!ret) S
- else if (rb) { ... }
  ...>
}

// ---- internal.h --------------------------------------------------------------

@@
type T;
identifier fld = {aux_watermark, aux_mutex, aux_head, aux_nest, aux_wakeup,
		  aux_pgoff, aux_nr_pages, aux_overwrite, aux_mmap_count,
		  aux_mmap_locked, aux_mmap_user, aux_mmap_mm,
		  aux_refcount, aux_in_sampling,
		  aux_in_pause_resume, aux_pages, aux_priv};
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
