/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw AUX area recording: PMUs that fill an AUX area and that perf has no
 * module for.
 */
#ifndef INCLUDE__PERF_RAW_AUX_H__
#define INCLUDE__PERF_RAW_AUX_H__

#include <linux/types.h>

struct auxtrace_record;
struct evlist;
struct perf_session;
union perf_event;

/* Where perf report and perf script write the AUX data, if set. */
#define RAW_AUX_DIR_ENV		"PERF_RAW_AUX_DIR"

/*
 * The priv area of the AUXTRACE_INFO record: the PMU's type, the length
 * of its name, then the name, NUL-padded to 8 bytes.
 */
enum {
	RAW_AUX_PMU_TYPE,
	RAW_AUX_NAME_LEN,
	RAW_AUX_NAME,
};

struct auxtrace_record *raw_aux_recording_init(struct evlist *evlist,
					       int *err);
int raw_aux_process_auxtrace_info(union perf_event *event,
				  struct perf_session *session);

#endif
