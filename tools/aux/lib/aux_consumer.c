// SPDX-License-Identifier: GPL-2.0
/*
 * The consumer side of the perf AUX area protocol (aux_consumer.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "aux_consumer.h"

/**
 * auxc_map_data() - Map an event's user page and data area.
 * @c: the consumer, filled in here
 * @data_fd: the event whose buffer is mapped
 * @data_pages: pages of data area, after the user page
 *
 * Return: 0, or -errno with nothing mapped.
 */
int auxc_map_data(struct auxc *c, int data_fd, size_t data_pages)
{
	void *p;
	int err;

	memset(c, 0, sizeof(*c));
	c->fd = data_fd;
	c->psz = sysconf(_SC_PAGESIZE);
	c->data_size = data_pages * c->psz;
	c->rec = malloc(AUXC_MAX_RECORD);
	if (!c->rec)
		return -ENOMEM;
	p = mmap(NULL, c->psz + c->data_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, data_fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		free(c->rec);
		c->rec = NULL;
		return err;
	}
	c->pg = p;
	c->data = (unsigned char *)p + c->psz;
	return 0;
}

/**
 * auxc_map_aux() - Map an AUX area right above the data area.
 * @c: a consumer whose data area is mapped (auxc_map_data())
 * @fd: the event that owns the AUX area: the one whose data area is
 *	mapped, or one whose output goes there (PERF_EVENT_IOC_SET_OUTPUT)
 * @aux_pages: pages of AUX area
 * @snapshot: map it read-only: the PMU overwrites it (overwrite mode)
 *
 * @fd becomes the consumer's event, the one a caller polls.
 *
 * Return: 0, or -errno with the AUX area not mapped (the data area is).
 */
int auxc_map_aux(struct auxc *c, int fd, size_t aux_pages,
		 bool snapshot)
{
	size_t size = aux_pages * c->psz;
	void *p;

	c->fd = fd;
	c->snapshot = snapshot;
	c->pg->aux_offset = c->psz + c->data_size;
	c->pg->aux_size = size;
	p = mmap(NULL, size, snapshot ? PROT_READ : PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, c->pg->aux_offset);
	if (p == MAP_FAILED)
		return -errno;
	c->aux = p;
	c->aux_size = size;
	return 0;
}

/**
 * auxc_map() - Map the data area of one event and the AUX area of another.
 * @c: the consumer, filled in here
 * @fd: the event that owns the AUX area
 * @data_fd: the event whose buffer is mapped; if it is not @fd, @fd's
 *	output is sent there first (PERF_EVENT_IOC_SET_OUTPUT), the way a
 *	tool shares one buffer among events
 * @data_pages: pages of data area
 * @aux_pages: pages of AUX area
 * @snapshot: overwrite mode: the AUX area is mapped read-only
 *
 * Return: 0, or -errno with nothing mapped.
 */
int auxc_map(struct auxc *c, int fd, int data_fd, size_t data_pages,
	     size_t aux_pages, bool snapshot)
{
	int err;

	err = auxc_map_data(c, data_fd, data_pages);
	if (err)
		return err;
	if (fd != data_fd && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, data_fd)) {
		err = -errno;
		goto unmap;
	}
	err = auxc_map_aux(c, fd, aux_pages, snapshot);
	if (err)
		goto unmap;
	return 0;
unmap:
	auxc_unmap(c);
	return err;
}

/**
 * auxc_unmap() - Unmap what auxc_map() or its parts mapped.
 * @c: the consumer; its event stays open
 */
void auxc_unmap(struct auxc *c)
{
	if (c->aux)
		munmap(c->aux, c->aux_size);
	if (c->pg)
		munmap(c->pg, c->psz + c->data_size);
	free(c->rec);
	c->aux = NULL;
	c->pg = NULL;
	c->data = NULL;
	c->rec = NULL;
}

/**
 * auxc_parse_record() - Parse the fields of an AUX-related record.
 * @h: a whole record, contiguous
 * @r: filled in: the fields of PERF_RECORD_AUX, ITRACE_START or LOST,
 *	and the rest of the record (sample_id, or all of another type)
 *
 * Return: 0, or -EBADMSG if @h is too short for its type.
 */
int auxc_parse_record(const struct perf_event_header *h, struct auxc_record *r)
{
	const unsigned char *body = (const unsigned char *)(h + 1);
	size_t len = h->size - sizeof(*h), fixed = 0;
	__u64 u[3];
	__u32 w[2];

	memset(r, 0, sizeof(*r));
	r->hdr = h;
	if (h->size < sizeof(*h))
		return -EBADMSG;
	switch (h->type) {
	case PERF_RECORD_AUX:
		fixed = sizeof(u);
		if (len < fixed)
			return -EBADMSG;
		memcpy(u, body, sizeof(u));
		r->offset = u[0];
		r->size = u[1];
		r->flags = u[2];
		break;
	case PERF_RECORD_ITRACE_START:
		fixed = sizeof(w);
		if (len < fixed)
			return -EBADMSG;
		memcpy(w, body, sizeof(w));
		r->pid = w[0];
		r->tid = w[1];
		break;
	case PERF_RECORD_LOST:
		fixed = 2 * sizeof(__u64);
		if (len < fixed)
			return -EBADMSG;
		memcpy(u, body, fixed);
		r->id = u[0];
		r->lost = u[1];
		break;
	}
	r->sample_id = body + fixed;
	r->sample_id_size = len - fixed;
	return 0;
}

/* Copy @len bytes at stream position @pos out of a ring of @size bytes. */
static void ring_copy(const unsigned char *ring, size_t size, __u64 pos,
		      void *dst, size_t len)
{
	size_t off = pos % size, first = size - off;

	if (first > len)
		first = len;
	memcpy(dst, ring + off, first);
	if (len > first)
		memcpy((unsigned char *)dst + first, ring, len - first);
}

/**
 * auxc_ring_read_records() - Take every record published in a data area.
 * @pg: the user page
 * @data: the data area
 * @data_size: its size
 * @buf: room for one record, AUXC_MAX_RECORD bytes, aligned for __u64
 * @fn: called with each record, contiguous in @buf; may be NULL
 * @arg: passed to @fn
 *
 * Reads from data_tail to data_head and publishes data_tail.  A record
 * the kernel cannot have written (a size that does not fit, a record too
 * short for its type) ends the walk: nothing after it can be parsed, so
 * the rest of the area is given back for the kernel to go on.
 *
 * Return: the number of records taken, or -EBADMSG after a malformed one.
 */
long auxc_ring_read_records(struct perf_event_mmap_page *pg,
			    const unsigned char *data, size_t data_size,
			    void *buf, auxc_record_fn fn, void *arg)
{
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = pg->data_tail;
	struct perf_event_header *h = buf;
	struct auxc_record r;
	long n = 0;

	if (head - tail > data_size)
		goto bad;
	while (tail != head) {
		if (head - tail < sizeof(*h))
			goto bad;
		ring_copy(data, data_size, tail, h, sizeof(*h));
		if (h->size < sizeof(*h) || h->size > head - tail)
			goto bad;
		ring_copy(data, data_size, tail, buf, h->size);
		if (auxc_parse_record(h, &r))
			goto bad;
		if (fn)
			fn(&r, arg);
		n++;
		tail += h->size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return n;
bad:
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return -EBADMSG;
}

/*
 * Overwrite mode: add up the sizes of the PERF_RECORD_AUX records
 * published since the last count, without taking them (auxc_snapshot()
 * needs them, whoever reads the records).  A record that cannot be
 * parsed ends the count; auxc_ring_read_records() will say so.
 */
static void auxc_note_aux(struct auxc *c)
{
	__u64 head, pos;
	struct perf_event_header *h = c->rec;
	struct auxc_record r;

	if (!c->snapshot || !c->data)
		return;
	head = __atomic_load_n(&c->pg->data_head, __ATOMIC_ACQUIRE);
	pos = c->pg->data_tail;
	if ((__s64)(c->snap_seen - pos) > 0)
		pos = c->snap_seen;
	if (head - pos > c->data_size)
		return;
	while (pos != head) {
		if (head - pos < sizeof(*h))
			break;
		ring_copy(c->data, c->data_size, pos, h, sizeof(*h));
		if (h->size < sizeof(*h) || h->size > head - pos)
			break;
		if (h->type == PERF_RECORD_AUX) {
			ring_copy(c->data, c->data_size, pos, c->rec, h->size);
			if (!auxc_parse_record(h, &r))
				c->snap_bytes += r.size;
		}
		pos += h->size;
	}
	c->snap_seen = pos;
}

/**
 * auxc_read_records() - Take every record published in a consumer's data area.
 * @c: the consumer
 * @fn: called with each record; may be NULL
 * @arg: passed to @fn
 *
 * Return: as auxc_ring_read_records().
 */
long auxc_read_records(struct auxc *c, auxc_record_fn fn, void *arg)
{
	auxc_note_aux(c);
	return auxc_ring_read_records(c->pg, c->data, c->data_size, c->rec, fn,
				      arg);
}

/**
 * auxc_copy_range() - Hand a range of the AUX stream over, split at the wrap.
 * @c: the consumer
 * @start: where the range starts in the AUX stream (aux_head's units)
 * @len: its length, at most the area's size
 * @fn: called with each contiguous piece, at most two
 * @arg: passed to @fn
 */
void auxc_copy_range(struct auxc *c, __u64 start, __u64 len,
		     auxc_copy_fn fn, void *arg)
{
	size_t off = start % c->aux_size;
	__u64 first = c->aux_size - off;

	if (first > len)
		first = len;
	if (first)
		fn(start, c->aux + off, first, arg);
	if (len > first)
		fn(start + first, c->aux, len - first, arg);
}

/**
 * auxc_consume() - Take the new data of the AUX area and free its space.
 * @c: the consumer, in normal mode (the AUX area mapped writable)
 * @fn: called with each contiguous piece of [aux_tail, aux_head), at
 *	most two (the area's wrap splits it); may be NULL
 * @arg: passed to @fn
 *
 * Then publishes aux_tail = aux_head: the PMU may write there again.
 *
 * Return: the bytes taken, or -ERANGE if aux_head is more than the
 * area's size ahead of aux_tail, or behind it (nothing is taken).
 */
long long auxc_consume(struct auxc *c, auxc_copy_fn fn, void *arg)
{
	__u64 head = __atomic_load_n(&c->pg->aux_head, __ATOMIC_ACQUIRE);
	__u64 tail = c->pg->aux_tail;

	if (head == tail)
		return 0;
	if (head - tail > c->aux_size)
		return -ERANGE;
	if (fn)
		auxc_copy_range(c, tail, head - tail, fn, arg);
	__atomic_store_n(&c->pg->aux_tail, head, __ATOMIC_RELEASE);
	return head - tail;
}

/**
 * auxc_snapshot() - Take the newest data of an AUX area in overwrite mode.
 * @c: the consumer, in overwrite mode
 * @fn: called with each contiguous piece, at most two; may be NULL
 * @arg: passed to @fn, with the pieces' positions in the AUX stream:
 *	each snapshot starts where the last one ended, or further on by
 *	whole areas where the PMU wrote more than the area holds
 *
 * The event must be stopped: aux_head is published at the end of a
 * transaction.  In overwrite mode aux_head is where the PMU writes next,
 * an offset into the area (intel_pt, arm_spe_pmu, ptsim) or a running
 * count (CoreSight): taken modulo the area's size, it says where the
 * newest data ends, not how much of it is new.  That is the sum of the
 * sizes of the PERF_RECORD_AUX records since the last snapshot (what each
 * transaction wrote, at most the area's size; intel_pt always reports the
 * area's size), or the distance aux_head moved if that is more.  At most
 * the area's size is taken, ending at aux_head.
 *
 * Return: the bytes taken.
 */
long long auxc_snapshot(struct auxc *c, auxc_copy_fn fn, void *arg)
{
	__u64 head = __atomic_load_n(&c->pg->aux_head, __ATOMIC_ACQUIRE);
	__u64 size = c->aux_size;
	__u64 moved, written, end, len;

	auxc_note_aux(c);
	/* The area's size is a power of two. */
	moved = (head - c->snap_head) & (size - 1);
	written = c->snap_bytes > moved ? c->snap_bytes : moved;
	end = c->snap_pos + moved;
	if (written > moved)
		end += (written - moved + size - 1) / size * size;
	len = written < size ? written : size;
	if (len && fn)
		auxc_copy_range(c, end - len, len, fn, arg);
	c->snap_head = head;
	c->snap_pos = end;
	c->snap_bytes = 0;
	return len;
}

/**
 * auxc_fprint_header() - Write the first line of a records.txt.
 * @f: the file
 * @pmu: the PMU's name
 * @type: its type
 * @config: the event's attr.config
 * @snapshot: overwrite mode
 * @aux_size: the AUX area's size
 *
 * records.txt is aux-record's log of a recording, next to its aux.bin
 * (Documentation/admin-guide/perf/ptsim.rst describes the format).
 *
 * Return: as fprintf().
 */
int auxc_fprint_header(FILE *f, const char *pmu, int type,
		       unsigned long long config, bool snapshot,
		       size_t aux_size)
{
	return fprintf(f, "pmu %s type=%d config=0x%llx mode=%s aux_size=%zu\n",
		       pmu, type, config, snapshot ? "snapshot" : "normal",
		       aux_size);
}

/**
 * auxc_fprint_record() - Write the line of a record in records.txt.
 * @f: the file
 * @r: a parsed record; types other than AUX, ITRACE_START and LOST have
 *	no line
 *
 * Return: as fprintf(), 0 for a record without a line.
 */
int auxc_fprint_record(FILE *f, const struct auxc_record *r)
{
	switch (r->hdr->type) {
	case PERF_RECORD_AUX:
		return fprintf(f, "AUX offset=%llu size=%llu flags=0x%llx\n",
			       (unsigned long long)r->offset,
			       (unsigned long long)r->size,
			       (unsigned long long)r->flags);
	case PERF_RECORD_ITRACE_START:
		return fprintf(f, "ITRACE_START pid=%u tid=%u\n", r->pid,
			       r->tid);
	case PERF_RECORD_LOST:
		return fprintf(f, "LOST id=%llu lost=%llu\n",
			       (unsigned long long)r->id,
			       (unsigned long long)r->lost);
	}
	return 0;
}

/**
 * auxc_fprint_copy() - Write the COPY line of a piece of AUX data.
 * @f: the file
 * @file_off: where the piece is in aux.bin
 * @aux_off: where it was in the AUX stream
 * @size: its size
 *
 * Return: as fprintf().
 */
int auxc_fprint_copy(FILE *f, __u64 file_off, __u64 aux_off, __u64 size)
{
	return fprintf(f, "COPY file_off=%llu aux_off=%llu size=%llu\n",
		       (unsigned long long)file_off,
		       (unsigned long long)aux_off, (unsigned long long)size);
}
