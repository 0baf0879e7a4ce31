/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The consumer side of the perf AUX area protocol: map an event's data
 * and AUX areas, take the records of the data area and the new data of
 * the AUX area, and give the space back (Documentation/admin-guide/perf/
 * ptsim.rst, "Consuming the AUX area").  Shared by tools/aux and the
 * perf_events selftests; libc and the uapi headers only.
 */
#ifndef AUX_CONSUMER_H
#define AUX_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <linux/types.h>

/* The largest record the data area can hold (perf_event_header.size). */
#define AUXC_MAX_RECORD	65536

/* One event's data and AUX areas, mapped. */
struct auxc {
	int fd;				/* the event that owns the AUX area */
	bool snapshot;			/* AUX area read-only: overwrite mode */
	long psz;			/* the page size */
	struct perf_event_mmap_page *pg; /* the user page */
	unsigned char *data;		/* the data area, after the user page */
	size_t data_size;
	unsigned char *aux;		/* the AUX area */
	size_t aux_size;
	__u64 snap_head;		/* aux_head at the last snapshot */
	__u64 snap_pos;			/* where it ended in the AUX stream */
	__u64 snap_bytes;		/* AUX record sizes since then */
	__u64 snap_seen;		/* data area position counted up to */
	void *rec;			/* one record, contiguous */
};

/* A record of the data area, with the fields of the AUX records parsed. */
struct auxc_record {
	const struct perf_event_header *hdr;	/* the whole record */
	__u64 offset, size, flags;		/* PERF_RECORD_AUX */
	__u32 pid, tid;				/* PERF_RECORD_ITRACE_START */
	__u64 id, lost;				/* PERF_RECORD_LOST */
	const void *sample_id;			/* what follows those fields */
	size_t sample_id_size;
};

typedef void (*auxc_record_fn)(const struct auxc_record *r, void *arg);
typedef void (*auxc_copy_fn)(__u64 aux_off, const void *p, size_t len,
			    void *arg);

int auxc_map_data(struct auxc *c, int data_fd, size_t data_pages);
int auxc_map_aux(struct auxc *c, int fd, size_t aux_pages, bool snapshot);
int auxc_map(struct auxc *c, int fd, int data_fd, size_t data_pages,
	     size_t aux_pages, bool snapshot);
void auxc_unmap(struct auxc *c);

int auxc_parse_record(const struct perf_event_header *h, struct auxc_record *r);
long auxc_ring_read_records(struct perf_event_mmap_page *pg,
			    const unsigned char *data, size_t data_size,
			    void *buf, auxc_record_fn fn, void *arg);
long auxc_read_records(struct auxc *c, auxc_record_fn fn, void *arg);

void auxc_copy_range(struct auxc *c, __u64 start, __u64 len,
		     auxc_copy_fn fn, void *arg);
long long auxc_consume(struct auxc *c, auxc_copy_fn fn, void *arg);
long long auxc_snapshot(struct auxc *c, auxc_copy_fn fn, void *arg);

int auxc_fprint_header(FILE *f, const char *pmu, int type,
		       unsigned long long config, bool snapshot,
		       size_t aux_size);
int auxc_fprint_record(FILE *f, const struct auxc_record *r);
int auxc_fprint_copy(FILE *f, __u64 file_off, __u64 aux_off, __u64 size);

#endif /* AUX_CONSUMER_H */
