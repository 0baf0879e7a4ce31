// SPDX-License-Identifier: GPL-2.0
/*
 * Read a PMU's sysfs files and other one-number files (aux_sysfs.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "aux_sysfs.h"

/**
 * auxc_read_ll() - Read the number a file starts with.
 * @path: the file, e.g. a sysctl or a sysfs attribute
 * @val: the number, set only on success
 *
 * Return: 0, -errno if the file cannot be opened, or -EINVAL if it does
 * not start with a decimal number.
 */
int auxc_read_ll(const char *path, long long *val)
{
	FILE *f = fopen(path, "r");
	long long v;
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%lld", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*val = v;
	return 0;
}

/**
 * auxc_pmu_read_ll() - Read a number from a PMU's directory in sysfs.
 * @pmu: the PMU's name, e.g. "ptsim"
 * @file: a file under /sys/bus/event_source/devices/<pmu>/, e.g. "type"
 *	or "caps/aux_sample"
 * @val: the number, set only on success
 *
 * Return: as auxc_read_ll(); -ENAMETOOLONG if the path does not fit.
 */
int auxc_pmu_read_ll(const char *pmu, const char *file, long long *val)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), AUXC_PMU_DIR "/%s/%s", pmu, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return auxc_read_ll(path, val);
}

/**
 * auxc_pmu_type() - The type of a PMU, for perf_event_attr.type.
 * @pmu: the PMU's name
 *
 * Return: the type, or -errno as auxc_pmu_read_ll() (-ENOENT: no such
 * PMU), -EINVAL if the type is not one.
 */
int auxc_pmu_type(const char *pmu)
{
	long long type;
	int err;

	err = auxc_pmu_read_ll(pmu, "type", &type);
	if (err)
		return err;
	if (type < 0 || type > INT_MAX)
		return -EINVAL;
	return type;
}
