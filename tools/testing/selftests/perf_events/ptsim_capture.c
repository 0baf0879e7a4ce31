// SPDX-License-Identifier: GPL-2.0
/*
 * A capture: an event's output, read with tools/aux/lib's AUX consumer
 * (ptsim_capture.h).
 */
#include "ptsim_lib.h"

void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * elem);
	if (!p) {
		perror("realloc");
		exit(1);
	}
	*cap = n;
	return p;
}

/*
 * Map 1 + data_pages pages of data area on @data_fd, then aux_pages of
 * AUX area right above it (read-only: overwrite mode) on @fd.  When the
 * two differ, @fd's output goes to @data_fd's buffer first, with
 * PERF_EVENT_IOC_SET_OUTPUT: the way a tool shares one buffer among
 * events.  The capture polls (and re-enables) @fd.  Returns 0 or -errno,
 * with the capture cleaned up.
 */
int capture_map_shared(struct capture *s, int fd, int data_fd,
		       __u64 config, int data_pages, int aux_pages,
		       bool snapshot)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->config = config;
	s->snapshot = snapshot;
	err = auxc_map(&s->c, fd, data_fd, data_pages, aux_pages, snapshot);
	if (err)
		return err;
	s->psz = s->c.psz;
	s->pg = s->c.pg;
	s->data_size = s->c.data_size;
	s->aux = s->c.aux;
	s->aux_size = s->c.aux_size;
	s->reenable = true;
	return 0;
}

/*
 * 6.12 maps it (and a mapping through such an event takes it off the
 * buffer when it is unmapped); mainline refuses it since "perf/core:
 * Refuse an AUX mmap() through an event without a mapping" (7.3), as it
 * refuses the data area since d06bf78e55d5.  A ptsim event on CPU 0
 * redirected to a dummy's buffer there; false if they cannot be set up.
 */
bool aux_shared_refused(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg;
	struct perf_event_attr attr;
	int fd, owner, err = 0;
	void *aux;

	ptsim_attr(&attr, 0);
	fd = perf_open(&attr, -1, 0, -1);
	owner = dummy_open_on(-1, 0);
	pg = owner < 0 ? MAP_FAILED :
		mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, owner, 0);
	if (fd >= 0 && pg != MAP_FAILED &&
	    !ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, owner)) {
		pg->aux_offset = 2 * psz;
		pg->aux_size = 16 * psz;
		aux = mmap(NULL, 16 * psz, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, 2 * psz);
		if (aux == MAP_FAILED)
			err = errno;
		else
			munmap(aux, 16 * psz);
	}
	if (pg != MAP_FAILED)
		munmap(pg, 2 * psz);
	if (owner >= 0)
		close(owner);
	if (fd >= 0)
		close(fd);
	return err == EBUSY;
}

/* Both areas on @fd's own buffer. */
int capture_map(struct capture *s, int fd, __u64 config,
		int data_pages, int aux_pages, bool snapshot)
{
	return capture_map_shared(s, fd, fd, config, data_pages, aux_pages,
				  snapshot);
}

static void capture_add_rec(struct capture *s, __u32 type, __u64 a,
			    __u64 b, __u64 c)
{
	s->recs = grow(s->recs, &s->rcap, s->nrecs + 1, sizeof(*s->recs));
	s->recs[s->nrecs++] = (struct aux_rec){ type, a, b, c, 0 };
}

static void capture_record(const struct auxc_record *r, void *arg)
{
	struct capture *s = arg;
	__u64 v;

	switch (r->hdr->type) {
	case PERF_RECORD_AUX:
		s->aux_records++;
		if (r->flags & PERF_AUX_FLAG_TRUNCATED)
			s->truncated++;
		capture_add_rec(s, PERF_RECORD_AUX, r->offset, r->size, r->flags);
		/* sample_id_all with PERF_SAMPLE_TID: pid, tid */
		if (r->sample_id_size >= sizeof(v)) {
			memcpy(&v, r->sample_id, sizeof(v));
			s->recs[s->nrecs - 1].pid = (__u32)v;
		}
		break;
	case PERF_RECORD_ITRACE_START:
		s->itrace_start++;
		capture_add_rec(s, PERF_RECORD_ITRACE_START, r->pid, r->tid, 0);
		break;
	case PERF_RECORD_LOST:
		s->lost += r->lost;
		capture_add_rec(s, PERF_RECORD_LOST, r->id, r->lost, 0);
		break;
	case PERF_RECORD_THROTTLE:
		s->throttles++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		s->unthrottles++;
		break;
	}
}

/*
 * Consume the data area: PERF_RECORD_AUX, ITRACE_START, LOST (kept), and
 * (counted) THROTTLE, UNTHROTTLE.  A
 * malformed record is an error (pt_check_trace() counts it).
 */
void capture_read_records(struct capture *s)
{
	if (auxc_read_records(&s->c, capture_record, s) < 0)
		s->bad_records++;
}

/* Append a piece of AUX data; the pieces of one take make one copy. */
static void capture_piece(__u64 aux_off, const void *p, size_t size,
			  void *arg)
{
	struct capture *s = arg;
	struct aux_copy *last = s->ncopies ? &s->copies[s->ncopies - 1] : NULL;

	s->trace = grow(s->trace, &s->cap, s->len + size, 1);
	if (s->joined && last && last->aux_off + last->size == aux_off) {
		last->size += size;
	} else {
		s->copies = grow(s->copies, &s->ccap, s->ncopies + 1,
				 sizeof(*s->copies));
		s->copies[s->ncopies++] =
			(struct aux_copy){ s->len, aux_off, size };
	}
	s->joined = true;
	memcpy(s->trace + s->len, p, size);
	s->len += size;
}

/* Append [aux_off, aux_off + size) of the AUX stream as one copy. */
void capture_append(struct capture *s, __u64 aux_off, size_t size)
{
	s->joined = false;
	auxc_copy_range(&s->c, aux_off, size, capture_piece, s);
}

/*
 * Normal mode: copy [aux_tail, aux_head) out and free it.  An aux_head
 * more than the area's size ahead of aux_tail is an error.
 */
size_t capture_copy_aux(struct capture *s)
{
	long long n;

	s->joined = false;
	n = auxc_consume(&s->c, capture_piece, s);
	if (n < 0) {
		s->bad_records++;
		return 0;
	}
	return n;
}

/*
 * Overwrite mode: the event must be stopped (aux_head is published at
 * the end of a transaction); copy the newest data, at most aux_size bytes.
 */
size_t capture_snapshot(struct capture *s)
{
	s->joined = false;
	return auxc_snapshot(&s->c, capture_piece, s);
}

/*
 * Restart after TRUNCATED.  The PMU stopped when the buffer filled, and
 * the kernel turns the event off, but not at once: the 6.12 core only at
 * its next sched-out (the AUX overrun path sets pending_disable without
 * queueing the work that acts on it), and ENABLE of an event still on is
 * a no-op.  So turn it off, take what is left, and turn it on again, as
 * a tool does; this works whenever the kernel's disable lands.
 */
void capture_restart(struct capture *s)
{
	ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
	capture_read_records(s);
	capture_copy_aux(s);
	ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* One round of consumption; true if poll() reported a wake-up. */
bool capture_poll(struct capture *s, int timeout_ms)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	bool woke = poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN);
	/* Before the records are read: they are what may count a TRUNCATED. */
	unsigned long truncated = s->truncated;

	if (woke)
		s->wakeups++;
	capture_read_records(s);
	if (!s->snapshot) {
		capture_copy_aux(s);
		if (s->reenable && s->truncated != truncated)
			capture_restart(s);
	}
	return woke;
}

/*
 * One round of a consumer that keeps no data, for a test that streams
 * for seconds and only counts: read the records, give the AUX area's new
 * data back (aux_tail to aux_head) without copying it out, and restart
 * after TRUNCATED as capture_poll() does (if s->reenable).  Returns the
 * bytes given back, or -1 (an error, counted as a bad record) if aux_head
 * was more than the area's size ahead of aux_tail.
 */
long long capture_discard(struct capture *s)
{
	unsigned long truncated = s->truncated;
	long long n, more = 0;

	capture_read_records(s);
	n = auxc_consume(&s->c, NULL, NULL);
	if (n >= 0 && s->reenable && s->truncated != truncated) {
		ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
		capture_read_records(s);
		more = auxc_consume(&s->c, NULL, NULL);
		ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	if (n < 0 || more < 0) {
		s->bad_records++;
		return -1;
	}
	return n + more;
}

/*
 * Write the trace in aux-record's directory format, $PTSIM_TRACE_DIR/@name/,
 * for tools/aux/aux-decode; nothing if PTSIM_TRACE_DIR is unset or empty.
 */
void capture_save(struct capture *s, const char *name)
{
	const char *root = getenv("PTSIM_TRACE_DIR");
	char path[PATH_MAX];
	FILE *f;
	size_t i;

	if (!root || !*root)
		return;
	snprintf(path, sizeof(path), "%s/%s", root, name);
	mkdir(root, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/aux.bin", root, name);
	f = fopen(path, "w");
	if (!f || fwrite(s->trace, 1, s->len, f) != s->len) {
		perror(path);
		exit(1);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/records.txt", root, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	auxc_fprint_header(f, "ptsim", ptsim_type(), s->config, s->snapshot,
			   s->aux_size);
	for (i = 0; i < s->nrecs; i++) {
		struct perf_event_header h = { .type = s->recs[i].type };
		struct auxc_record r = { .hdr = &h };

		/* a, b, c: offset size flags, pid tid or id lost */
		r.offset = s->recs[i].a;
		r.size = s->recs[i].b;
		r.flags = s->recs[i].c;
		r.pid = s->recs[i].a;
		r.tid = s->recs[i].b;
		r.id = s->recs[i].a;
		r.lost = s->recs[i].b;
		auxc_fprint_record(f, &r);
	}
	for (i = 0; i < s->ncopies; i++)
		auxc_fprint_copy(f, s->copies[i].file_off, s->copies[i].aux_off,
				 s->copies[i].size);
	fclose(f);
}

void capture_free(struct capture *s)
{
	auxc_unmap(&s->c);
	free(s->trace);
	free(s->recs);
	free(s->copies);
	s->aux = NULL;
	s->pg = NULL;
	s->trace = NULL;
	s->recs = NULL;
	s->copies = NULL;
}

/*
 * Consume until at least len bytes of trace have been copied out, or
 * timeout_ms have passed.  Returns whether len was reached.  The limit
 * is generous: it only bounds a test whose data stopped for good.
 */
bool capture_until_len(struct capture *s, size_t len, int timeout_ms)
{
	double end = now_ms() + timeout_ms;

	while (s->len < len && now_ms() < end)
		capture_poll(s, 10);
	return s->len >= len;
}

/* Consume until the child exits, then drain once more. */
int capture_until_exit(struct capture *s, pid_t pid)
{
	int status = -1;

	for (;;) {
		capture_poll(s, 10);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	capture_poll(s, 0);
	return status;
}
