/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session: one ptsim event with its data and AUX areas mapped, consumed
 * with tools/aux/lib's consumer, and what came out (the trace, the
 * records, the copies), saved in aux-record's format for the host.
 */
#ifndef PTSIM_SESS_H
#define PTSIM_SESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "aux_consumer.h"

struct aux_rec {
	__u32 type;
	__u64 a, b, c;	/* AUX: offset size flags; ITRACE_START: pid tid */
	__u32 pid;	/* AUX: the task that wrote it (sample_id) */
};

struct aux_copy {
	__u64 file_off, aux_off, size;
};

/*
 * One event with its data and AUX areas mapped (the consumer of
 * tools/aux/lib/aux_consumer.h), and what came out.  pg, aux, aux_size,
 * data_size and psz are the consumer's, for the tests to read.
 */
struct sess {
	struct auxc c;
	int fd;
	__u64 config;
	long psz;
	bool snapshot;
	struct perf_event_mmap_page *pg;
	size_t data_size;
	void *aux;
	size_t aux_size;

	unsigned char *trace;	/* AUX data copied out, in order */
	size_t len, cap;
	struct aux_rec *recs;
	size_t nrecs, rcap;
	struct aux_copy *copies;
	size_t ncopies, ccap;
	bool joined;		/* the next piece extends the last copy */

	unsigned long aux_records, truncated, itrace_start, lost, wakeups;
	unsigned long bad_records;	/* malformed data records: errors */
	bool reenable;		/* re-enable after TRUNCATED, as tools do */
};

void *grow(void *p, size_t *cap, size_t need, size_t elem);
int sess_map_shared(struct sess *s, int fd, int data_fd,
		    __u64 config, int data_pages, int aux_pages,
		    bool snapshot);
int sess_map(struct sess *s, int fd, __u64 config,
	     int data_pages, int aux_pages, bool snapshot);
void sess_add_rec(struct sess *s, __u32 type, __u64 a, __u64 b,
		  __u64 c);
void sess_record(const struct auxc_record *r, void *arg);
void sess_read_records(struct sess *s);
void sess_piece(__u64 aux_off, const void *p, size_t size,
		void *arg);
void sess_append(struct sess *s, __u64 aux_off, size_t size);
size_t sess_copy_aux(struct sess *s);
size_t sess_snapshot(struct sess *s);
void sess_restart(struct sess *s);
bool sess_poll(struct sess *s, int timeout_ms);
void sess_save(struct sess *s, const char *name);
void sess_free(struct sess *s);
bool consume_until_len(struct sess *s, size_t len,
		       int timeout_ms);
int consume_until_exit(struct sess *s, pid_t pid);

#endif /* PTSIM_SESS_H */
