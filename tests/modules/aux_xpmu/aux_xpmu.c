// SPDX-License-Identifier: GPL-2.0
/*
 * aux_xpmu: two AUX PMUs in a module, each with its own setup_aux, for
 * the test that one PMU's events never write into an AUX area the other
 * PMU set up (tests/modules/aux_xpmu/aux_xpmu_test.c).
 *
 * Each PMU's setup_aux returns a struct naming that PMU.  pmu::add with
 * PERF_EF_START (and pmu::start) begins a transaction, as a trace PMU
 * does, and ends it at once without writing: a begin that returns the
 * other PMU's data counts as "foreign", one that returns its own as
 * "own", a refused one as "none".  A driver handed another PMU's data
 * would program its hardware with it (on arm64, arm_spe with cs_etm's).
 *
 * debugfs aux_xpmu/counts: "own N foreign N none N", over both PMUs.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>

struct aux_xpmu_priv {
	struct pmu *pmu;	/* whose setup_aux made it */
};

static struct pmu aux_xpmu_pmus[2];
static DEFINE_PER_CPU(struct perf_output_handle, aux_xpmu_handle);
static atomic_t aux_xpmu_own, aux_xpmu_foreign, aux_xpmu_none;
static struct dentry *aux_xpmu_dir;

static int aux_xpmu_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	return 0;
}

/* Called with interrupts off, as from the perf core. */
static void aux_xpmu_start(struct perf_event *event, int flags)
{
	struct perf_output_handle *handle = this_cpu_ptr(&aux_xpmu_handle);
	struct aux_xpmu_priv *priv;

	event->hw.state = 0;
	priv = perf_aux_output_begin(handle, event);
	if (!priv) {
		atomic_inc(&aux_xpmu_none);
		return;
	}
	if (priv->pmu == event->pmu)
		atomic_inc(&aux_xpmu_own);
	else
		atomic_inc(&aux_xpmu_foreign);
	perf_aux_output_end(handle, 0);
}

static void aux_xpmu_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
}

static int aux_xpmu_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		aux_xpmu_start(event, flags);
	return 0;
}

static void aux_xpmu_del(struct perf_event *event, int flags)
{
	aux_xpmu_stop(event, flags);
}

static void aux_xpmu_read(struct perf_event *event)
{
}

static void *aux_xpmu_setup_aux(struct perf_event *event, void **pages,
				int nr_pages, bool overwrite)
{
	struct aux_xpmu_priv *priv = kzalloc(sizeof(*priv), GFP_KERNEL);

	if (priv)
		priv->pmu = event->pmu;
	return priv;
}

static void aux_xpmu_free_aux(void *priv)
{
	kfree(priv);
}

static int aux_xpmu_counts_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "own %d foreign %d none %d\n", atomic_read(&aux_xpmu_own),
		   atomic_read(&aux_xpmu_foreign), atomic_read(&aux_xpmu_none));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(aux_xpmu_counts);

static int __init aux_xpmu_init(void)
{
	static const char *const names[] = { "aux_xpmu_a", "aux_xpmu_b" };
	int i, ret = 0;

	for (i = 0; i < ARRAY_SIZE(aux_xpmu_pmus); i++) {
		aux_xpmu_pmus[i] = (struct pmu) {
			.module		= THIS_MODULE,
			.task_ctx_nr	= perf_sw_context,
			.capabilities	= PERF_PMU_CAP_ITRACE,
			.event_init	= aux_xpmu_event_init,
			.add		= aux_xpmu_add,
			.del		= aux_xpmu_del,
			.start		= aux_xpmu_start,
			.stop		= aux_xpmu_stop,
			.read		= aux_xpmu_read,
			.setup_aux	= aux_xpmu_setup_aux,
			.free_aux	= aux_xpmu_free_aux,
		};
		ret = perf_pmu_register(&aux_xpmu_pmus[i], names[i], -1);
		if (ret)
			break;
	}
	if (ret) {
		while (i--)
			perf_pmu_unregister(&aux_xpmu_pmus[i]);
		return ret;
	}
	aux_xpmu_dir = debugfs_create_dir("aux_xpmu", NULL);
	debugfs_create_file("counts", 0400, aux_xpmu_dir, NULL, &aux_xpmu_counts_fops);
	return 0;
}

static void __exit aux_xpmu_exit(void)
{
	debugfs_remove_recursive(aux_xpmu_dir);
	perf_pmu_unregister(&aux_xpmu_pmus[1]);
	perf_pmu_unregister(&aux_xpmu_pmus[0]);
}

module_init(aux_xpmu_init);
module_exit(aux_xpmu_exit);
MODULE_DESCRIPTION("Two AUX PMUs in a module, for testing that neither writes into the other's AUX area");
MODULE_LICENSE("GPL");
