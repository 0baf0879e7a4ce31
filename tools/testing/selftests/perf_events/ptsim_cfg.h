/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ptsim PMU as the tests see it: the encoding of its configuration
 * (attr.config, config1 and config2), its sysfs and debugfs files, and
 * opening one of its events.
 */
#ifndef PTSIM_CFG_H
#define PTSIM_CFG_H

#define PTSIM_SYSFS	"/sys/bus/event_source/devices/ptsim"
#define PTSIM_REC	16	/* data record size */

/*
 * ptsim's format/ directory, with the names drivers/hwtracing/ptsim/ptsim.h
 * gives the fields: a field of several bits takes its value, a one-bit
 * field is the bit.  attr.config holds the bits of Intel PT's layout that
 * ptsim implements, where intel_pt has them.
 */
#define PTSIM_CFG_PT			((__u64)1 << 0)
#define PTSIM_CFG_TSC			((__u64)1 << 10)	/* TSC in PSB+ */
#define PTSIM_CFG_BRANCH		((__u64)1 << 13)	/* for CFG1_TNT */
#define PTSIM_CFG_PSB(x)		((__u64)(x) << 24)
/* perf's default for an Intel PT PMU: every test traces with it. */
#define PTSIM_CONFIG	(PTSIM_CFG_PT | PTSIM_CFG_TSC | PTSIM_CFG_BRANCH)
/*
 * attr.config1: the simulation, and the PMU format type and the loss
 * flag of AUX records.  ptsim_attr() takes these.
 */
#define PTSIM_CFG1_FMT(x)		((__u64)(x) << 0)
#define PTSIM_CFG1_LOSS(x)		((__u64)(x) << 8)	/* 1 PARTIAL, 2 COLLISION */
#define PTSIM_CFG1_RATE(x)		((__u64)(x) << 10)
#define PTSIM_CFG1_PERIOD(x)		((__u64)(x) << 26)
#define PTSIM_CFG1_FIFO(x)		((__u64)(x) << 38)
#define PTSIM_CFG1_DRAIN(x)		((__u64)(x) << 43)
#define PTSIM_CFG1_REGION(x)		((__u64)(x) << 55)
#define PTSIM_CFG1_NOFLUSH		((__u64)1 << 59)	/* pmu::flush declines */
#define PTSIM_CFG1_IRQ_PMI		((__u64)1 << 60)	/* PMI in the tick */
#define PTSIM_CFG1_TNT			((__u64)1 << 61)	/* TNTs, not PADs */
/* attr.config2: the benchmark mode */
#define PTSIM_CFG2_BENCH(x)		((__u64)(x) << 0)
#define PTSIM_CFG2_BENCH_SPLIT		((__u64)1 << 5)		/* time end/begin */

int pmu_type(const char *name);
int ptsim_type(void);
/*
 * ptsim's caps/ files (-1 for one it does not have), and a field of its
 * per-CPU debugfs files (nmi, irqoff, tick; root only).
 */
long ptsim_cap(const char *name);
long ptsim_debugfs_cpu(const char *file, int cpu, const char *field);

/*
 * debugfs, where ptsim keeps its counters (PTSIM_DEBUGFS) and the kernel
 * its fault injection.  A runner such as run_kselftest.sh mounts nothing:
 * debugfs_missing() mounts it at DEBUGFS_ROOT if it is not mounted there
 * and the caller may (root), for the rest of the program, which unmounts
 * it when it exits.  ptsim_debugfs_missing() also wants ptsim's
 * directory in it.  Each returns NULL if what it wants is there, else
 * why not: a case that needs the counters skips with that reason, a
 * check that needs one is left out with a note saying it.  Every reader
 * of debugfs in these tests goes through them.
 */
#define DEBUGFS_ROOT	"/sys/kernel/debug"
#define PTSIM_DEBUGFS	DEBUGFS_ROOT "/ptsim"

const char *debugfs_missing(void);
const char *ptsim_debugfs_missing(void);

/*
 * What a case needs of the system: a fixture's setup skips the case
 * (ptsim_need(), ptsim_harness.h) with ptsim_missing()'s reason,
 * unless all of it is there.
 */
enum {
	PTSIM_NEED_PMU		= 1 << 0,	/* ptsim */
	PTSIM_NEED_MARK		= 1 << 1,	/* ptsim_mark */
	PTSIM_NEED_MARK_PMI	= 1 << 2,	/* ptsim_mark's PMI: caps/mark_pmi */
	PTSIM_NEED_AUX_SAMPLE	= 1 << 3,	/* caps/aux_sample */
	PTSIM_NEED_2CPUS	= 1 << 4,	/* online_cpu(1) */
	PTSIM_NEED_HOTPLUG	= 1 << 5,	/* hotplug_cpu() can go offline */
	PTSIM_NEED_ROOT		= 1 << 6,	/* to set sysctls, drop to nobody */
	PTSIM_NEED_FAULTS	= 1 << 7,	/* fault injection: fi_available() */
	PTSIM_NEED_DEBUGFS	= 1 << 8,	/* ptsim's counters in debugfs */
};

const char *ptsim_missing(unsigned int needs);

/*
 * ptsim's PMIs handled in NMI so far, summed over the CPUs, from debugfs
 * ptsim/nmi (root only): "pmi" (transactions ended and begun, or
 * truncated, by the NMI handler), "mark" (ptsim_mark overflows) or
 * "late" (PMIs whose NMI did not come in time).  -1 if it cannot be
 * read; on x86-64 ptsim always has the file (its NMI delivery is built
 * there only), so a test that claims the NMI path requires it there
 * (PTSIM_NMI_EXPECTED) whenever ptsim's debugfs directory can be read.
 */
#if defined(__x86_64__)
#define PTSIM_NMI_EXPECTED	1
#else
#define PTSIM_NMI_EXPECTED	0
#endif

long ptsim_nmi_on(int cpu, const char *field);
long ptsim_nmi(const char *field);

struct nmi_counts {
	long pmi, mark, late;
};

struct nmi_counts ptsim_nmi_counts(void);

/*
 * In a test: since @before (ptsim_nmi_counts()), at least @min more of
 * @field went through ptsim's NMI handler.  On x86 only, where ptsim
 * delivers its PMIs as NMIs (its default); the guest's tests run one at
 * a time, so the counts are the test's.  Without ptsim's debugfs
 * (ptsim_debugfs_missing()) the check is left out, with a note.
 *
 * A late PMI is only a note: where another NMI user shares the NMI (on
 * AMD, perf's NMI window handler claims unknown NMIs for a while after
 * its own), ptsim's first NMI of an event can come late, which is not
 * what these tests are about.  ptsim then handles that event's PMIs in
 * place (ptsim-nmi.c), so @field is not held to @min either: the note
 * gives both counts.
 */
#define EXPECT_NMI(before, field, min) do {					\
	struct nmi_counts _was = (before), _now = ptsim_nmi_counts();		\
	const char *_why = ptsim_debugfs_missing();				\
	long _min = (min);							\
										\
	if (PTSIM_NMI_EXPECTED && _why) {					\
		TH_LOG("NMI " #field " not checked: %s", _why);			\
	} else if (PTSIM_NMI_EXPECTED) {					\
		ASSERT_GE(_was.field, 0) TH_LOG("no debugfs ptsim/nmi");	\
		ASSERT_GE(_now.field, 0) TH_LOG("no debugfs ptsim/nmi");	\
		if (_was.late != _now.late) {					\
			TH_LOG("note: late PMIs %ld -> %ld (tolerated), NMI "	\
			       #field " %ld -> %ld not held to %ld more",	\
			       _was.late, _now.late, _was.field, _now.field,	\
			       _min);						\
		} else {							\
			/* (EXPECT_GE() ... TH_LOG() is two statements) */	\
			EXPECT_GE(_now.field - _was.field, _min)		\
				TH_LOG("NMI " #field ": %ld -> %ld, wanted %ld more", \
				       _was.field, _now.field, _min);		\
		}								\
	}									\
} while (0)

void ptsim_attr(struct perf_event_attr *attr, __u64 sim);
int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
	      int group);
__u64 perf_count(int fd);

#endif /* PTSIM_CFG_H */
