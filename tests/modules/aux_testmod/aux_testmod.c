// SPDX-License-Identifier: GPL-2.0
/*
 * aux_testmod: an AUX PMU in a module, for the test of what an AUX area
 * pins (tests/modules/aux_testmod/aux_testmod_test.c).
 *
 * The PMU writes nothing.  It exists so that a test can hold an AUX
 * transaction open across munmap() and close() of its event, as a writer
 * that looked the area up just before it was unmapped does (see the top
 * of kernel/events/aux.c), and then check that the area keeps the module
 * of pmu::free_aux loaded until it is freed.
 *
 * debugfs aux_testmod/hold: writing 1 begins a transaction on the last
 * event initialised (with interrupts off, as a PMI would), 0 ends it.
 * A begun transaction also asks perf_get_aux() for its setup_aux data,
 * as drivers do from their interrupt, and reports a hardware id
 * (AUX_TESTMOD_HW_ID) with perf_report_aux_output_id(), as CoreSight
 * does: neither is called by ptsim.
 * debugfs aux_testmod/counts: "setup N free N mapped N get N", the calls
 * of setup_aux, free_aux and event_mapped, and the perf_get_aux() calls
 * that returned what setup_aux had.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/slab.h>

#define AUX_TESTMOD_HW_ID	0xa0c0ffeeULL

static struct pmu aux_testmod_pmu;
static DEFINE_MUTEX(aux_testmod_lock);
static struct perf_event *aux_testmod_event;	/* under the lock */
static struct perf_output_handle aux_testmod_handle;
static bool aux_testmod_held;
static atomic_t aux_testmod_setups, aux_testmod_frees, aux_testmod_mapped;
static atomic_t aux_testmod_gets;
static struct dentry *aux_testmod_dir;

static void aux_testmod_destroy(struct perf_event *event)
{
	mutex_lock(&aux_testmod_lock);
	if (aux_testmod_event == event)
		aux_testmod_event = NULL;
	mutex_unlock(&aux_testmod_lock);
}

static int aux_testmod_event_init(struct perf_event *event)
{
	if (event->attr.type != aux_testmod_pmu.type)
		return -ENOENT;
	event->destroy = aux_testmod_destroy;
	mutex_lock(&aux_testmod_lock);
	aux_testmod_event = event;
	mutex_unlock(&aux_testmod_lock);
	return 0;
}

static int aux_testmod_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	return 0;
}

static void aux_testmod_del(struct perf_event *event, int flags)
{
}

static void aux_testmod_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
}

/* Deliberately leaves the held transaction alone: it models the window. */
static void aux_testmod_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
}

static void aux_testmod_read(struct perf_event *event)
{
}

/* Called for every mapping of the event's buffer, data or AUX. */
static void aux_testmod_event_mapped(struct perf_event *event, struct mm_struct *mm)
{
	atomic_inc(&aux_testmod_mapped);
}

static void *aux_testmod_setup_aux(struct perf_event *event, void **pages,
				   int nr_pages, bool overwrite)
{
	atomic_inc(&aux_testmod_setups);
	return kzalloc(sizeof(long), GFP_KERNEL);
}

static void aux_testmod_free_aux(void *priv)
{
	atomic_inc(&aux_testmod_frees);
	kfree(priv);
}

static struct pmu aux_testmod_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_ITRACE,
	.event_init	= aux_testmod_event_init,
	.add		= aux_testmod_add,
	.del		= aux_testmod_del,
	.start		= aux_testmod_start,
	.stop		= aux_testmod_stop,
	.read		= aux_testmod_read,
	.event_mapped	= aux_testmod_event_mapped,
	.setup_aux	= aux_testmod_setup_aux,
	.free_aux	= aux_testmod_free_aux,
};

static ssize_t aux_testmod_hold_write(struct file *file, const char __user *buf,
				      size_t count, loff_t *ppos)
{
	unsigned long flags;
	bool hold;
	int ret;

	ret = kstrtobool_from_user(buf, count, &hold);
	if (ret)
		return ret;
	mutex_lock(&aux_testmod_lock);
	ret = -EINVAL;
	if (hold == aux_testmod_held)
		goto out;
	local_irq_save(flags);
	if (hold) {
		void *priv = NULL;

		if (aux_testmod_event)
			priv = perf_aux_output_begin(&aux_testmod_handle,
						     aux_testmod_event);
		if (priv) {
			aux_testmod_held = true;
			if (perf_get_aux(&aux_testmod_handle) == priv)
				atomic_inc(&aux_testmod_gets);
			perf_report_aux_output_id(aux_testmod_event,
						  AUX_TESTMOD_HW_ID);
		}
	} else {
		perf_aux_output_end(&aux_testmod_handle, 0);
		aux_testmod_held = false;
	}
	local_irq_restore(flags);
	ret = hold == aux_testmod_held ? count : -ENODATA;
out:
	mutex_unlock(&aux_testmod_lock);
	return ret;
}

static const struct file_operations aux_testmod_hold_fops = {
	.owner	= THIS_MODULE,
	.write	= aux_testmod_hold_write,
};

static int aux_testmod_counts_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "setup %d free %d mapped %d get %d\n",
		   atomic_read(&aux_testmod_setups),
		   atomic_read(&aux_testmod_frees),
		   atomic_read(&aux_testmod_mapped),
		   atomic_read(&aux_testmod_gets));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(aux_testmod_counts);

static int __init aux_testmod_init(void)
{
	int ret;

	aux_testmod_dir = debugfs_create_dir("aux_testmod", NULL);
	debugfs_create_file("hold", 0200, aux_testmod_dir, NULL,
			    &aux_testmod_hold_fops);
	debugfs_create_file("counts", 0400, aux_testmod_dir, NULL,
			    &aux_testmod_counts_fops);
	ret = perf_pmu_register(&aux_testmod_pmu, "aux_testmod", -1);
	if (ret)
		debugfs_remove_recursive(aux_testmod_dir);
	return ret;
}

static void __exit aux_testmod_exit(void)
{
	perf_pmu_unregister(&aux_testmod_pmu);
	debugfs_remove_recursive(aux_testmod_dir);
}

module_init(aux_testmod_init);
module_exit(aux_testmod_exit);
MODULE_DESCRIPTION("An AUX PMU in a module, for testing what an AUX area pins");
MODULE_LICENSE("GPL");
