/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A capture: one ptsim event with its data and AUX areas mapped, consumed
 * with tools/aux/lib's consumer, and what came out (the trace, the
 * records, the copies), saved in aux-record's format for the host.
 */
#ifndef PTSIM_CAPTURE_H
#define PTSIM_CAPTURE_H

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
struct capture {
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
	unsigned long throttles, unthrottles;	/* PERF_RECORD_(UN)THROTTLE */
	unsigned long bad_records;	/* malformed data records: errors */
	bool reenable;		/* re-enable after TRUNCATED, as tools do */
};

/* aux_head as a consumer reads it: acquire, for the data before it. */
static inline __u64 capture_aux_head(const struct capture *s)
{
	return __atomic_load_n(&s->pg->aux_head, __ATOMIC_ACQUIRE);
}

void *grow(void *p, size_t *cap, size_t need, size_t elem);
/*
 * Whether this kernel refuses to map the AUX area through an event whose
 * output goes to another event's buffer (EBUSY): capture_map_shared()
 * with two events cannot work there.
 */
bool aux_shared_refused(void);
#define AUX_SHARED_REFUSED \
	"this kernel refuses an AUX mmap() through an event redirected to another's buffer (EBUSY)"
int capture_map_shared(struct capture *s, int fd, int data_fd,
		       __u64 config, int data_pages, int aux_pages,
		       bool snapshot);
int capture_map(struct capture *s, int fd, __u64 config,
		int data_pages, int aux_pages, bool snapshot);
void capture_read_records(struct capture *s);
void capture_append(struct capture *s, __u64 aux_off, size_t size);
size_t capture_copy_aux(struct capture *s);
size_t capture_snapshot(struct capture *s);
void capture_restart(struct capture *s);
bool capture_poll(struct capture *s, int timeout_ms);
long long capture_discard(struct capture *s);
void capture_save(struct capture *s, const char *name);
void capture_free(struct capture *s);
bool capture_until_len(struct capture *s, size_t len, int timeout_ms);
int capture_until_exit(struct capture *s, pid_t pid);

#endif /* PTSIM_CAPTURE_H */
