// SPDX-License-Identifier: GPL-2.0
/*
 * intel_pt_host: a PMU named intel_pt, so that perf finds what it finds
 * on an Intel host, for perf's ptsim tests run beside it (the suite
 * modules/intel_pt_host, scripts/guest/perf-test.sh -m).
 *
 * perf's intel-pt module serves the PMU it knows by name, intel_pt, and
 * ptsim, which writes Intel PT packets; with both present, each event
 * must go to the intel-pt module with its own PMU.  What perf reads of
 * an intel_pt PMU is here as arch/x86/events/intel/pt.c shows it on a
 * machine with Intel PT: its type, the format terms perf parses and
 * validates (pt, tsc, branch, mtc, mtc_period, cyc, cyc_thresh,
 * psb_period, noretcomp, ...), the caps perf sets its defaults and
 * checks from (mtc, psb_cyc, mtc_periods, cycle_thresholds,
 * psb_periods, topa_multiple_entries, ...) and max_nonturbo_ratio.
 * Values are those of a Skylake's.
 *
 * Events of it are accepted, as intel_pt accepts them, and trace
 * nothing: it maps an AUX area and never begins a transaction, so perf
 * records an Intel PT recording of this PMU with no trace in it.  It
 * is exclusive, as intel_pt is.
 */
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

static struct pmu pt_host_pmu;

/* The format terms: intel_pt's bits of attr.config. */
PMU_FORMAT_ATTR(pt,		"config:0");
PMU_FORMAT_ATTR(cyc,		"config:1");
PMU_FORMAT_ATTR(pwr_evt,	"config:4");
PMU_FORMAT_ATTR(fup_on_ptw,	"config:5");
PMU_FORMAT_ATTR(mtc,		"config:9");
PMU_FORMAT_ATTR(tsc,		"config:10");
PMU_FORMAT_ATTR(noretcomp,	"config:11");
PMU_FORMAT_ATTR(ptw,		"config:12");
PMU_FORMAT_ATTR(branch,		"config:13");
PMU_FORMAT_ATTR(mtc_period,	"config:14-17");
PMU_FORMAT_ATTR(cyc_thresh,	"config:19-22");
PMU_FORMAT_ATTR(psb_period,	"config:24-27");

static struct attribute *pt_host_format_attrs[] = {
	&format_attr_pt.attr,
	&format_attr_cyc.attr,
	&format_attr_pwr_evt.attr,
	&format_attr_fup_on_ptw.attr,
	&format_attr_mtc.attr,
	&format_attr_tsc.attr,
	&format_attr_noretcomp.attr,
	&format_attr_ptw.attr,
	&format_attr_branch.attr,
	&format_attr_mtc_period.attr,
	&format_attr_cyc_thresh.attr,
	&format_attr_psb_period.attr,
	NULL,
};

static const struct attribute_group pt_host_format_group = {
	.name	= "format",
	.attrs	= pt_host_format_attrs,
};

/* A read-only file _name that reads _fmt of the values (caps/mtc, say). */
#define PT_HOST_ATTR(_name, _fmt, ...)					\
static ssize_t pt_host_##_name##_show(struct device *dev,		\
				      struct device_attribute *attr,	\
				      char *page)			\
{									\
	return sysfs_emit(page, _fmt "\n", __VA_ARGS__);		\
}									\
static struct device_attribute pt_host_attr_##_name =			\
	__ATTR(_name, 0444, pt_host_##_name##_show, NULL)

PT_HOST_ATTR(cr3_filtering, "%u", 1);
PT_HOST_ATTR(psb_cyc, "%u", 1);
PT_HOST_ATTR(ip_filtering, "%u", 1);
PT_HOST_ATTR(mtc, "%u", 1);
PT_HOST_ATTR(ptwrite, "%u", 0);
PT_HOST_ATTR(power_event_trace, "%u", 0);
PT_HOST_ATTR(event_trace, "%u", 0);
PT_HOST_ATTR(tnt_disable, "%u", 0);
PT_HOST_ATTR(topa_output, "%u", 1);
PT_HOST_ATTR(topa_multiple_entries, "%u", 1);
PT_HOST_ATTR(single_range_output, "%u", 1);
PT_HOST_ATTR(output_subsys, "%u", 0);
PT_HOST_ATTR(payloads_lip, "%u", 0);
PT_HOST_ATTR(num_address_ranges, "%u", 2);
PT_HOST_ATTR(mtc_periods, "%x", 0x249);
PT_HOST_ATTR(cycle_thresholds, "%x", 0x3fff);
PT_HOST_ATTR(psb_periods, "%x", 0x3f);

static struct attribute *pt_host_caps_attrs[] = {
	&pt_host_attr_cr3_filtering.attr,
	&pt_host_attr_psb_cyc.attr,
	&pt_host_attr_ip_filtering.attr,
	&pt_host_attr_mtc.attr,
	&pt_host_attr_ptwrite.attr,
	&pt_host_attr_power_event_trace.attr,
	&pt_host_attr_event_trace.attr,
	&pt_host_attr_tnt_disable.attr,
	&pt_host_attr_topa_output.attr,
	&pt_host_attr_topa_multiple_entries.attr,
	&pt_host_attr_single_range_output.attr,
	&pt_host_attr_output_subsys.attr,
	&pt_host_attr_payloads_lip.attr,
	&pt_host_attr_num_address_ranges.attr,
	&pt_host_attr_mtc_periods.attr,
	&pt_host_attr_cycle_thresholds.attr,
	&pt_host_attr_psb_periods.attr,
	NULL,
};

static const struct attribute_group pt_host_caps_group = {
	.name	= "caps",
	.attrs	= pt_host_caps_attrs,
};

/* In the PMU's own directory, as intel_pt has them. */
PT_HOST_ATTR(max_nonturbo_ratio, "%u", 24);
PT_HOST_ATTR(tsc_art_ratio, "%u:%u", 2, 166);

static struct attribute *pt_host_timing_attrs[] = {
	&pt_host_attr_max_nonturbo_ratio.attr,
	&pt_host_attr_tsc_art_ratio.attr,
	NULL,
};

static const struct attribute_group pt_host_timing_group = {
	.attrs	= pt_host_timing_attrs,
};

static const struct attribute_group *pt_host_attr_groups[] = {
	&pt_host_format_group,
	&pt_host_caps_group,
	&pt_host_timing_group,
	NULL,
};

static int pt_host_event_init(struct perf_event *event)
{
	if (event->attr.type != pt_host_pmu.type)
		return -ENOENT;
	return 0;
}

static void pt_host_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
}

static void pt_host_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
}

static int pt_host_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		pt_host_start(event, flags);
	return 0;
}

static void pt_host_del(struct perf_event *event, int flags)
{
	pt_host_stop(event, flags);
}

static void pt_host_read(struct perf_event *event)
{
}

static void *pt_host_setup_aux(struct perf_event *event, void **pages,
			       int nr_pages, bool overwrite)
{
	return kzalloc(sizeof(long), GFP_KERNEL);
}

static void pt_host_free_aux(void *priv)
{
	kfree(priv);
}

static struct pmu pt_host_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_ITRACE | PERF_PMU_CAP_EXCLUSIVE,
	.attr_groups	= pt_host_attr_groups,
	.event_init	= pt_host_event_init,
	.add		= pt_host_add,
	.del		= pt_host_del,
	.start		= pt_host_start,
	.stop		= pt_host_stop,
	.read		= pt_host_read,
	.setup_aux	= pt_host_setup_aux,
	.free_aux	= pt_host_free_aux,
};

static int __init pt_host_init(void)
{
	return perf_pmu_register(&pt_host_pmu, "intel_pt", -1);
}

static void __exit pt_host_exit(void)
{
	perf_pmu_unregister(&pt_host_pmu);
}

module_init(pt_host_init);
module_exit(pt_host_exit);
MODULE_DESCRIPTION("A PMU named intel_pt that traces nothing, for perf's tests of ptsim beside it");
MODULE_LICENSE("GPL");
