// SPDX-License-Identifier: GPL-2.0
/*
 * aux-pmus - list the PMUs of this system and whether each can map an AUX
 * area.
 *
 * The kernel has no sysfs attribute for "this PMU has an AUX area", so the
 * only faithful test is the one a tool performs: open an event of the PMU,
 * map its data area, and map an AUX area at aux_offset.  A PMU that cannot
 * open an event with config 0 is reported as such, with the errno.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define SYSFS_PMUS "/sys/bus/event_source/devices"
#define DATA_PAGES 4
#define AUX_PAGES 16

static int read_type(const char *pmu)
{
	char path[512];
	FILE *f;
	int type = -1;

	snprintf(path, sizeof(path), SYSFS_PMUS "/%s/type", pmu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

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
	/* Per-task first, as an unprivileged tool would; then per-CPU. */
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
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

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(void)
{
	struct dirent **names;
	int n, i, naux = 0;

	n = scandir(SYSFS_PMUS, &names, NULL, by_name);
	if (n < 0) {
		perror(SYSFS_PMUS);
		return 1;
	}
	for (i = 0; i < n; i++) {
		const char *pmu = names[i]->d_name, *step;
		int type, fd, err;

		type = pmu[0] == '.' ? -1 : read_type(pmu);
		fd = type < 0 ? -1 : open_event(type);
		if (type < 0) {
			/* not a PMU directory */
		} else if (fd < 0) {
			printf("pmu %-12s type %-3d cannot open an event: %s\n",
			       pmu, type, strerror(errno));
		} else {
			err = probe_aux(fd, &step);
			if (err)
				printf("pmu %-12s type %-3d AUX area: no (%s: %s)\n",
				       pmu, type, step, strerror(err));
			else
				printf("pmu %-12s type %-3d AUX area: yes\n", pmu, type);
			naux += !err;
		}
		if (fd >= 0)
			close(fd);
		free(names[i]);
	}
	free(names);
	printf("aux-pmus: %d AUX-capable PMU%s\n", naux, naux == 1 ? "" : "s");
	return 0;
}
