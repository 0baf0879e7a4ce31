// SPDX-License-Identifier: GPL-2.0
/*
 * aux-pmus - list the PMUs of this system and whether each can map an AUX
 * area.
 *
 * The kernel has no sysfs attribute for "this PMU has an AUX area", so the
 * only faithful test is the one a tool performs: open an event of the PMU,
 * map its data area, and map an AUX area at aux_offset.  Only that last
 * mmap() answers: 0, yes; EOPNOTSUPP, no (the core's has_aux() check);
 * ENOMEM, yes, but the PMU refused this size.  Anything else (EPERM over
 * the locked-memory limit, which is charged before has_aux() is checked;
 * an event that cannot be opened: EACCES under perf_event_paranoid, EBUSY
 * while an exclusive PMU is in use, EINVAL for config 0) says nothing
 * about the PMU, and is reported as "unknown" with the errno.  The
 * selftest ptsim_aux_abi_test pins each of these answers.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "lib/aux_sysfs.h"

#define DATA_PAGES 4
#define AUX_PAGES 16

static int open_event(int type)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	/*
	 * Per-task first, as an unprivileged tool would; then on CPU 0 if
	 * that is EINVAL, as for a PMU without a task context (uncore-like).
	 */
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
	return fd;
}

/* Returns 0 if an AUX area could be mapped, else the errno of the step. */
static int probe_aux(int fd, const char **step)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t data_len = (1 + DATA_PAGES) * psz, aux_len = AUX_PAGES * psz;
	struct perf_event_mmap_page *pg;
	void *aux;
	int err = 0;

	*step = "mmap data";
	pg = mmap(NULL, data_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		return errno;
	pg->aux_offset = data_len;
	pg->aux_size = aux_len;
	*step = "mmap aux";
	aux = mmap(NULL, aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, data_len);
	if (aux == MAP_FAILED)
		err = errno;
	else
		munmap(aux, aux_len);
	munmap(pg, data_len);
	return err;
}

/*
 * The answer of a probe that ended at @step with @err (0: the AUX area was
 * mapped): "yes", "no", or "unknown".
 */
static const char *verdict(const char *step, int err)
{
	bool aux_step = !strcmp(step, "mmap aux");

	if (!err || (aux_step && err == ENOMEM))
		return "yes";
	if (aux_step && err == EOPNOTSUPP)
		return "no";
	return "unknown";
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(void)
{
	struct dirent **names;
	int n, i, naux = 0, nunknown = 0;

	n = scandir(AUXC_PMU_DIR, &names, NULL, by_name);
	if (n < 0) {
		perror(AUXC_PMU_DIR);
		return 1;
	}
	for (i = 0; i < n; i++) {
		const char *pmu = names[i]->d_name, *step = "open", *v;
		int type, fd, err;

		type = pmu[0] == '.' ? -1 : auxc_pmu_type(pmu);
		if (type < 0) {
			/* not a PMU directory */
			free(names[i]);
			continue;
		}
		fd = open_event(type);
		err = fd < 0 ? errno : probe_aux(fd, &step);
		v = verdict(step, err);
		if (err)
			printf("pmu %-12s type %-3d AUX area: %s (%s: %s)\n",
			       pmu, type, v, step, strerror(err));
		else
			printf("pmu %-12s type %-3d AUX area: %s\n", pmu, type, v);
		naux += !strcmp(v, "yes");
		nunknown += !strcmp(v, "unknown");
		if (fd >= 0)
			close(fd);
		free(names[i]);
	}
	free(names);
	printf("aux-pmus: %d AUX-capable PMU%s, %d unknown\n", naux,
	       naux == 1 ? "" : "s", nunknown);
	return 0;
}
