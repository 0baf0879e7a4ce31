// SPDX-License-Identifier: GPL-2.0
/*
 * The ptsim PMU: its sysfs and debugfs files, its events (ptsim_cfg.h).
 */
#include "ptsim_lib.h"
#include "ptsim_acct.h"
#include <sys/mount.h>
#include <sys/vfs.h>

#ifndef DEBUGFS_MAGIC
#define DEBUGFS_MAGIC	0x64626720
#endif

/* The type of the PMU @name (sysfs), -1 if there is none. */
int pmu_type(const char *name)
{
	int type = auxc_pmu_type(name);

	return type < 0 ? -1 : type;
}

int ptsim_type(void)
{
	return pmu_type("ptsim");
}

/*
 * ptsim's caps/@name (sysfs), -1 if it has none.  ptsim built as a module
 * has no AUX sampling (caps/aux_sample 0) and no PMI for ptsim_mark
 * (caps/mark_pmi 0): 6.12 exports neither perf_output_copy_aux() nor
 * perf_event_overflow().
 */
long ptsim_cap(const char *name)
{
	char file[64];
	long long v;

	snprintf(file, sizeof(file), "caps/%s", name);
	return auxc_pmu_read_ll("ptsim", file, &v) ? -1 : v;
}

/*
 * ptsim_debugfs_cpu() - A field of one of ptsim's per-CPU debugfs files
 * @file: "nmi", "irqoff" or "tick", whose lines are "cpu<N> <name> <n>
 *	  <name> <n> ...", one per CPU (root only)
 * @cpu: the CPU, or < 0 for the sum over all of them
 * @field: the name
 *
 * Return: the value, or -1 if the file cannot be read or has no @field
 * (for @cpu).
 */
long ptsim_debugfs_cpu(const char *file, int cpu, const char *field)
{
	char path[128], name[16];
	unsigned long long v;
	bool found = false;
	int at = -1;
	long sum = 0;
	FILE *f;

	if (ptsim_debugfs_missing())
		return -1;
	snprintf(path, sizeof(path), PTSIM_DEBUGFS "/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, " %15s", name) == 1) {
		if (sscanf(name, "cpu%d", &at) == 1)
			continue;
		if (fscanf(f, " %llu", &v) != 1)
			break;
		if (!strcmp(name, field) && (cpu < 0 || cpu == at)) {
			sum += v;
			found = true;
		}
	}
	fclose(f);
	return found ? sum : -1;
}

/*
 * debugfs as the tests found it: the program's first process (which
 * alone unmounts, at its exit) and, shared with every process it forks
 * (a kselftest harness case runs in one, and it may be the one that
 * mounts), whether one of them mounted debugfs.
 */
static pid_t debugfs_owner;
static int *debugfs_ours;

__attribute__((constructor)) static void debugfs_init(void)
{
	debugfs_owner = getpid();
	debugfs_ours = mmap(NULL, sizeof(*debugfs_ours), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (debugfs_ours == MAP_FAILED)
		debugfs_ours = NULL;
}

/* At the program's exit: unmount the debugfs it mounted, if it did. */
__attribute__((destructor)) static void debugfs_fini(void)
{
	if (getpid() != debugfs_owner || !debugfs_ours ||
	    !__atomic_load_n(debugfs_ours, __ATOMIC_ACQUIRE))
		return;
	if (umount2(DEBUGFS_ROOT, 0) && umount2(DEBUGFS_ROOT, MNT_DETACH))
		fprintf(stderr, "# cannot unmount the debugfs mounted at %s: %s\n",
			DEBUGFS_ROOT, strerror(errno));
	__atomic_store_n(debugfs_ours, 0, __ATOMIC_RELEASE);
}

static bool debugfs_mounted(void)
{
	struct statfs st;

	return !statfs(DEBUGFS_ROOT, &st) && st.f_type == DEBUGFS_MAGIC;
}

/*
 * debugfs_missing() - Make sure debugfs is mounted at DEBUGFS_ROOT
 *
 * If it is not, mount it (root only), once for the whole program: the
 * program's first process unmounts it when it exits (debugfs_fini()).
 *
 * Return: NULL if debugfs is mounted there now, else why it is not.
 */
const char *debugfs_missing(void)
{
	static char why[128];
	int expected = 0;

	if (debugfs_mounted())
		return NULL;
	/* One process mounts; another that finds it mounting waits. */
	if (debugfs_ours &&
	    !__atomic_compare_exchange_n(debugfs_ours, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		for (expected = 0; expected < 100 && !debugfs_mounted(); expected++)
			usleep(10000);
		if (debugfs_mounted())
			return NULL;
	}
	if (mount("none", DEBUGFS_ROOT, "debugfs", 0, NULL)) {
		snprintf(why, sizeof(why),
			 "debugfs is not mounted at %s and cannot be mounted (%s)",
			 DEBUGFS_ROOT, strerror(errno));
		if (debugfs_ours)
			__atomic_store_n(debugfs_ours, 0, __ATOMIC_RELEASE);
		return why;
	}
	fprintf(stderr, "# debugfs was not mounted: mounted it at %s until the program exits\n",
		DEBUGFS_ROOT);
	return NULL;
}

/*
 * ptsim_debugfs_missing() - Make sure ptsim's debugfs directory is there
 *
 * Return: NULL if PTSIM_DEBUGFS can be read (debugfs mounted by
 * debugfs_missing() if need be), else why not.
 */
const char *ptsim_debugfs_missing(void)
{
	const char *why = debugfs_missing();

	if (why)
		return why;
	if (access(PTSIM_DEBUGFS, R_OK | X_OK))
		return "no " PTSIM_DEBUGFS " (ptsim without debugfs, or not readable)";
	return NULL;
}

/*
 * ptsim's NMI counts on one CPU (cpu >= 0), or summed over all of them
 * (cpu < 0): "cpu<N> sent <n> handled <n> pmi <n> mark <n> late <n>
 * stray <n>".
 */
long ptsim_nmi_on(int cpu, const char *field)
{
	return ptsim_debugfs_cpu("nmi", cpu, field);
}

long ptsim_nmi(const char *field)
{
	return ptsim_nmi_on(-1, field);
}

struct nmi_counts ptsim_nmi_counts(void)
{
	struct nmi_counts n = {
		ptsim_nmi("pmi"), ptsim_nmi("mark"), ptsim_nmi("late"),
	};

	return n;
}

/* A ptsim event with perf's default config and @sim in config1. */
void ptsim_attr(struct perf_event_attr *attr, __u64 sim)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = ptsim_type();
	attr->config = PTSIM_CONFIG;
	attr->config1 = sim;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_TID;
}

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
	      int group)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, 0);
}

/* The count read() gives for @fd, or ~0 if the read fails. */
__u64 perf_count(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

/*
 * ptsim_missing() - What of @needs (PTSIM_NEED_*) this system lacks.
 * Return: why a case that needs it must skip, or NULL if nothing lacks.
 */
const char *ptsim_missing(unsigned int needs)
{
	const char *why = NULL;

	if ((needs & (PTSIM_NEED_MARK | PTSIM_NEED_MARK_PMI)) &&
	    (ptsim_type() < 0 || pmu_type("ptsim_mark") < 0))
		return "no ptsim_mark PMU";
	if (ptsim_type() < 0)
		return "no ptsim PMU";
	if ((needs & PTSIM_NEED_AUX_SAMPLE) && !ptsim_cap("aux_sample"))
		return "ptsim has no AUX sampling (a module: caps/aux_sample 0)";
	if ((needs & PTSIM_NEED_MARK_PMI) && !ptsim_cap("mark_pmi"))
		return "ptsim_mark has no PMI (a module: caps/mark_pmi 0)";
	if ((needs & PTSIM_NEED_2CPUS) && cpus_online() < 2)
		return "needs 2 online CPUs it may run on";
	if ((needs & PTSIM_NEED_HOTPLUG) && !cpu_hotplug_possible())
		return "no second online CPU that can go offline (one CPU, not root, no hotplug)";
	if ((needs & PTSIM_NEED_ROOT) && geteuid())
		return "needs root to set the sysctls and drop to nobody";
	if (needs & PTSIM_NEED_DEBUGFS)
		why = ptsim_debugfs_missing();
	if (!why && (needs & PTSIM_NEED_FAULTS))
		why = debugfs_missing();
	if (why)
		return why;
	if ((needs & PTSIM_NEED_FAULTS) && !fi_available())
		return "no fault injection (debug kernel only)";
	return NULL;
}
