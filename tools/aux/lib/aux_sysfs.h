/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read a PMU's sysfs files (/sys/bus/event_source/devices/<pmu>/...) and
 * other files that hold one number.  Shared by tools/aux, the perf_events
 * selftests and the auxlab test programs; libc only.
 */
#ifndef AUX_SYSFS_H
#define AUX_SYSFS_H

#define AUXC_PMU_DIR	"/sys/bus/event_source/devices"

int auxc_read_ll(const char *path, long long *val);
int auxc_pmu_read_ll(const char *pmu, const char *file, long long *val);
int auxc_pmu_type(const char *pmu);

#endif /* AUX_SYSFS_H */
