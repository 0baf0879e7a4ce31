// SPDX-License-Identifier: GPL-2.0
/*
 * aux_share: a non-exclusive AUX PMU in a module, for the test that no
 * two writers ever hold transactions on one buffer at once
 * (tests/modules/aux_share/aux_share_test.c).
 *
 * The PMU is what s390's cpum_sf is in diagnostic mode, the one AUX PMU
 * in the tree without PERF_PMU_CAP_EXCLUSIVE: per-task events of it may
 * be inherited, and two of them may share a task.  Like intel_pt, it
 * begins a transaction when its event starts and holds it until the
 * event stops, writing nothing.  Each CPU has its own handle, as a PMU
 * driver's is per CPU.
 *
 * debugfs aux_share/counts: "begun N refused N most_open N": the begins
 * that returned the area, those that returned NULL, and the most
 * transactions ever open at once (over every buffer: the test has one).
 *
 * debugfs aux_share/unregister (where perf_pmu_unregister() can revoke
 * events, see the Makefile): writing 1 unregisters the PMU while the
 * module stays loaded, as a driver whose device goes away does
 * (hisi_ptt's PCI remove, say); 7.3's core then revokes the PMU's events
 * (__pmu_detach_event()), mapped ones included.  6.12's does not: the
 * file is not there.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>

static struct pmu aux_share_pmu;
static DEFINE_PER_CPU(struct perf_output_handle, aux_share_handle);
static atomic_t aux_share_begun, aux_share_refused, aux_share_open;
static atomic_t aux_share_most;
static struct dentry *aux_share_dir;
static bool aux_share_registered;

static int aux_share_event_init(struct perf_event *event)
{
	if (event->attr.type != aux_share_pmu.type)
		return -ENOENT;
	return 0;
}

/* Called with interrupts off, as from the perf core. */
static void aux_share_start(struct perf_event *event, int flags)
{
	struct perf_output_handle *handle = this_cpu_ptr(&aux_share_handle);
	int open, most;

	event->hw.state = 0;
	if (!perf_aux_output_begin(handle, event)) {
		atomic_inc(&aux_share_refused);
		return;
	}
	atomic_inc(&aux_share_begun);
	open = atomic_inc_return(&aux_share_open);
	most = atomic_read(&aux_share_most);
	while (open > most && !atomic_try_cmpxchg(&aux_share_most, &most, open))
		;
}

static void aux_share_stop(struct perf_event *event, int flags)
{
	struct perf_output_handle *handle = this_cpu_ptr(&aux_share_handle);

	if (event->hw.state & PERF_HES_STOPPED)
		return;
	event->hw.state = PERF_HES_STOPPED;
	if (perf_get_aux(handle)) {
		perf_aux_output_end(handle, 0);
		atomic_dec(&aux_share_open);
	}
}

static int aux_share_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		aux_share_start(event, flags);
	return 0;
}

static void aux_share_del(struct perf_event *event, int flags)
{
	aux_share_stop(event, PERF_EF_UPDATE);
}

static void aux_share_read(struct perf_event *event)
{
}

static void *aux_share_setup_aux(struct perf_event *event, void **pages,
				 int nr_pages, bool overwrite)
{
	return kzalloc(sizeof(long), GFP_KERNEL);
}

static void aux_share_free_aux(void *priv)
{
	kfree(priv);
}

static struct pmu aux_share_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_ITRACE,
	.event_init	= aux_share_event_init,
	.add		= aux_share_add,
	.del		= aux_share_del,
	.start		= aux_share_start,
	.stop		= aux_share_stop,
	.read		= aux_share_read,
	.setup_aux	= aux_share_setup_aux,
	.free_aux	= aux_share_free_aux,
};

static int aux_share_counts_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "begun %d refused %d most_open %d\n",
		   atomic_read(&aux_share_begun),
		   atomic_read(&aux_share_refused),
		   atomic_read(&aux_share_most));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(aux_share_counts);

#ifdef AUX_SHARE_UNREGISTER
static DEFINE_MUTEX(aux_share_lock);

static ssize_t aux_share_unregister_write(struct file *file,
					  const char __user *buf,
					  size_t count, loff_t *ppos)
{
	bool yes;
	int ret;

	ret = kstrtobool_from_user(buf, count, &yes);
	if (ret || !yes)
		return ret ?: -EINVAL;
	mutex_lock(&aux_share_lock);
	ret = -ENOENT;
	if (aux_share_registered) {
		ret = perf_pmu_unregister(&aux_share_pmu);
		aux_share_registered = ret != 0;
	}
	mutex_unlock(&aux_share_lock);
	return ret ?: count;
}

static const struct file_operations aux_share_unregister_fops = {
	.owner	= THIS_MODULE,
	.write	= aux_share_unregister_write,
};

static void aux_share_unregister_file(void)
{
	debugfs_create_file("unregister", 0200, aux_share_dir, NULL,
			    &aux_share_unregister_fops);
}
#else
static void aux_share_unregister_file(void)
{
}
#endif

static int __init aux_share_init(void)
{
	int ret = perf_pmu_register(&aux_share_pmu, "aux_share", -1);

	if (ret)
		return ret;
	aux_share_registered = true;
	aux_share_dir = debugfs_create_dir("aux_share", NULL);
	debugfs_create_file("counts", 0400, aux_share_dir, NULL,
			    &aux_share_counts_fops);
	aux_share_unregister_file();
	return 0;
}

static void __exit aux_share_exit(void)
{
	debugfs_remove_recursive(aux_share_dir);
	if (aux_share_registered)
		perf_pmu_unregister(&aux_share_pmu);
}

module_init(aux_share_init);
module_exit(aux_share_exit);
MODULE_DESCRIPTION("A non-exclusive AUX PMU, for testing that one buffer has one writer at a time");
MODULE_LICENSE("GPL");
