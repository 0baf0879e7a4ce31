// SPDX-License-Identifier: GPL-2.0
/*
 * Raw AUX area recording, for PMUs that fill an AUX area and that perf has
 * no module for, when perf record is asked to (--aux-raw):
 * perf_pmu__aux_area() finds them.
 *
 * perf record maps the AUX area, as for any AUX PMU, and records its data
 * as AUXTRACE events after an AUXTRACE_INFO of type PERF_AUXTRACE_RAW
 * naming the PMU.  perf does not decode the data: perf report -D and perf
 * script list the records, and with PERF_RAW_AUX_DIR set in the
 * environment write the data of each AUX buffer, in order, to a file of
 * its own for the PMU's own decoder, with an index of the AUXTRACE and
 * AUX records of that buffer next to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/zalloc.h>
#include <internal/lib.h>

#include "auxtrace.h"
#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "pmu.h"
#include "record.h"
#include "sample.h"
#include "session.h"
#include "raw-aux.h"

#define KiB(x) ((x) * 1024)
#define MiB(x) ((x) * 1024 * 1024)

/*
 * Can @pmu fill an AUX area?  Core and software PMUs cannot: only the
 * others are asked (with @evsel's config).  Return 1 if so, 0 if not, or
 * a negative errno if the kernel could not tell.
 */
static int raw_aux_pmu(struct perf_pmu *pmu, struct evsel *evsel)
{
	if (pmu->is_core || perf_pmu__is_software(pmu))
		return 0;
	return perf_pmu__aux_area(pmu, &evsel->core.attr);
}

/* ---- perf record ---- */

struct raw_aux_recording {
	struct auxtrace_record	itr;
	struct perf_pmu		*pmu;
	struct evlist		*evlist;
};

static struct evsel *raw_aux_evsel(struct raw_aux_recording *rar)
{
	struct evsel *evsel;

	evlist__for_each_entry(rar->evlist, evsel) {
		if (evsel->core.attr.type == rar->pmu->type)
			return evsel;
	}
	return NULL;
}

static int raw_aux_set_sizes(struct raw_aux_recording *rar,
			     struct record_opts *opts)
{
	bool privileged = perf_event_paranoid_check(-1);
	size_t sz;

	/* The defaults of the other AUX PMUs: 4MiB, 128KiB unprivileged. */
	if (!opts->auxtrace_mmap_pages && opts->auxtrace_snapshot_mode &&
	    opts->auxtrace_snapshot_size) {
		sz = round_up(opts->auxtrace_snapshot_size, page_size);
		opts->auxtrace_mmap_pages = roundup_pow_of_two(sz / page_size);
	} else if (!opts->auxtrace_mmap_pages && privileged) {
		opts->auxtrace_mmap_pages = MiB(4) / page_size;
	} else if (!opts->auxtrace_mmap_pages) {
		opts->auxtrace_mmap_pages = KiB(128) / page_size;
		if (opts->mmap_pages == UINT_MAX)
			opts->mmap_pages = KiB(256) / page_size;
	}

	sz = opts->auxtrace_mmap_pages * (size_t)page_size;
	if (sz < KiB(4) || !is_power_of_2(sz)) {
		pr_err("Invalid AUX area size for %s: %zu bytes: must be at least 4KiB and a power of 2\n",
		       rar->pmu->name, sz);
		return -EINVAL;
	}

	if (!opts->auxtrace_snapshot_mode)
		return 0;
	if (!opts->auxtrace_snapshot_size)
		opts->auxtrace_snapshot_size = sz;
	if (opts->auxtrace_snapshot_size > sz) {
		pr_err("Snapshot size %zu must not be greater than the AUX area size %zu of %s\n",
		       opts->auxtrace_snapshot_size, sz, rar->pmu->name);
		return -EINVAL;
	}
	return 0;
}

static int raw_aux_recording_options(struct auxtrace_record *itr,
				     struct evlist *evlist,
				     struct record_opts *opts)
{
	struct raw_aux_recording *rar =
			container_of(itr, struct raw_aux_recording, itr);
	struct evsel *evsel, *aux_evsel = NULL;
	int err;

	rar->evlist = evlist;
	evlist__for_each_entry(evlist, evsel) {
		if (evsel->core.attr.type != rar->pmu->type)
			continue;
		if (aux_evsel) {
			pr_err("There may be only one %s event\n", rar->pmu->name);
			return -EINVAL;
		}
		evsel->core.attr.freq = 0;
		evsel->core.attr.sample_period = 1;
		evsel->no_aux_samples = true;
		evsel->needs_auxtrace_mmap = true;
		aux_evsel = evsel;
	}
	if (!aux_evsel)
		return 0;

	if (opts->auxtrace_sample_mode) {
		pr_err("AUX area sampling of %s is not supported: perf has no decoder for it\n",
		       rar->pmu->name);
		return -EINVAL;
	}
	opts->full_auxtrace = true;

	err = raw_aux_set_sizes(rar, opts);
	if (err)
		return err;

	/*
	 * The AUX event comes first, so that its buffer's file descriptor is
	 * the one the AUX area is mapped on.  Its AUX records name the buffer
	 * they describe by their CPU, or by their thread with --per-thread.
	 */
	evlist__to_front(evlist, aux_evsel);
	evsel__set_sample_bit(aux_evsel, TIME);
	if (!opts->target.per_thread)
		opts->sample_cpu = true;
	return 0;
}

static size_t raw_aux_info_priv_size(struct auxtrace_record *itr,
				     struct evlist *evlist __maybe_unused)
{
	struct raw_aux_recording *rar =
			container_of(itr, struct raw_aux_recording, itr);

	return (RAW_AUX_NAME + DIV_ROUND_UP(strlen(rar->pmu->name) + 1,
					    sizeof(u64))) * sizeof(u64);
}

static int raw_aux_info_fill(struct auxtrace_record *itr,
			     struct perf_session *session,
			     struct perf_record_auxtrace_info *auxtrace_info,
			     size_t priv_size)
{
	struct raw_aux_recording *rar =
			container_of(itr, struct raw_aux_recording, itr);
	size_t len = strlen(rar->pmu->name);

	if (priv_size != raw_aux_info_priv_size(itr, session->evlist))
		return -EINVAL;

	auxtrace_info->type = PERF_AUXTRACE_RAW;
	auxtrace_info->priv[RAW_AUX_PMU_TYPE] = rar->pmu->type;
	auxtrace_info->priv[RAW_AUX_NAME_LEN] = len;
	memset(&auxtrace_info->priv[RAW_AUX_NAME], 0,
	       priv_size - RAW_AUX_NAME * sizeof(u64));
	memcpy(&auxtrace_info->priv[RAW_AUX_NAME], rar->pmu->name, len);
	return 0;
}

/* -S[size]: the size of a snapshot, in bytes; the AUX area's if none. */
static int raw_aux_parse_snapshot_options(struct auxtrace_record *itr __maybe_unused,
					  struct record_opts *opts,
					  const char *str)
{
	unsigned long long size = 0;
	char *end;

	if (str && *str) {
		errno = 0;
		size = strtoull(str, &end, 0);
		if (*end || errno || size > SIZE_MAX) {
			pr_err("Invalid snapshot size: %s\n", str);
			return -EINVAL;
		}
	}
	opts->auxtrace_snapshot_mode = true;
	opts->auxtrace_snapshot_size = size;
	return 0;
}

/* Snapshots: the PMU publishes its head when the event is disabled. */
static int raw_aux_snapshot_start(struct auxtrace_record *itr)
{
	struct raw_aux_recording *rar =
			container_of(itr, struct raw_aux_recording, itr);
	struct evsel *evsel = raw_aux_evsel(rar);

	return evsel ? evsel__disable(evsel) : -EINVAL;
}

static int raw_aux_snapshot_finish(struct auxtrace_record *itr)
{
	struct raw_aux_recording *rar =
			container_of(itr, struct raw_aux_recording, itr);
	struct evsel *evsel = raw_aux_evsel(rar);

	return evsel ? evsel__enable(evsel) : -EINVAL;
}

/*
 * perf knows nothing of the PMU's trace, so it cannot find where a
 * wrapped buffer's oldest data begins: take the aux_head the PMU
 * published as the end of the data, and only what is new since the last
 * snapshot while that is less than the buffer, else the whole buffer
 * below it.  In overwrite mode the PMU hands the kernel that head: an
 * offset into the buffer for intel_pt, arm_spe and ptsim, a running
 * count for CoreSight.  An offset that did not move forward wrapped (the
 * whole buffer, as intel-pt.c takes it once it has wrapped); one that
 * did may also have wrapped, which only the PMU's module could tell.
 */
static int raw_aux_find_snapshot(struct auxtrace_record *itr __maybe_unused,
				 int idx __maybe_unused,
				 struct auxtrace_mmap *mm,
				 unsigned char *data __maybe_unused,
				 u64 *head, u64 *old)
{
	/* The last snapshot's end, moved on by a buffer (below). */
	if (*head < mm->len && *old >= mm->len)
		*old -= mm->len;
	if (*head > *old && *head - *old <= mm->len)
		return 0;
	*old = *head;
	*head += mm->len;
	return 0;
}

static u64 raw_aux_reference(struct auxtrace_record *itr __maybe_unused)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void raw_aux_recording_free(struct auxtrace_record *itr)
{
	free(container_of(itr, struct raw_aux_recording, itr));
}

/**
 * raw_aux_recording_init - record the AUX area of a PMU perf has no module for
 * @evlist: the events to record (perf record --aux-raw)
 * @err: set to 0, or to a negative error number
 *
 * The PMU of an event that is neither a core nor a software one is taken
 * if the kernel says that it can fill an AUX area, or cannot tell (with a
 * warning: perf record's own open or mapping of the event then fails the
 * same way if the cause lasts, and says so); not if the kernel says it
 * cannot.
 *
 * Return: an auxtrace_record for the one PMU of @evlist that fills an AUX
 * area, or NULL on error: there is none, or more than one.
 */
struct auxtrace_record *raw_aux_recording_init(struct evlist *evlist,
					       int *err)
{
	struct perf_pmu *pmu = NULL, *p;
	struct raw_aux_recording *rar;
	struct evsel *evsel;
	int ret;

	*err = 0;
	evlist__for_each_entry(evlist, evsel) {
		p = evsel__find_pmu(evsel);
		if (!p || p == pmu)
			continue;
		ret = raw_aux_pmu(p, evsel);
		if (!ret)
			continue;
		if (pmu) {
			pr_err("Cannot record the AUX areas of %s and %s together\n",
			       pmu->name, p->name);
			*err = -EINVAL;
			return NULL;
		}
		if (ret < 0)
			pr_warning("WARNING: cannot tell whether %s can fill an AUX area (%s): recording it raw\n",
				   p->name, strerror(-ret));
		pmu = p;
	}
	if (!pmu) {
		pr_err("--aux-raw: no event's PMU can fill an AUX area (-v says what the kernel answered)\n");
		*err = -EINVAL;
		return NULL;
	}

	rar = zalloc(sizeof(*rar));
	if (!rar) {
		*err = -ENOMEM;
		return NULL;
	}
	/* Its events are AUX area events from here on (evsel__is_aux_event()). */
	pmu->auxtrace = true;
	rar->pmu = pmu;
	rar->itr.recording_options = raw_aux_recording_options;
	rar->itr.info_priv_size = raw_aux_info_priv_size;
	rar->itr.info_fill = raw_aux_info_fill;
	rar->itr.parse_snapshot_options = raw_aux_parse_snapshot_options;
	rar->itr.snapshot_start = raw_aux_snapshot_start;
	rar->itr.snapshot_finish = raw_aux_snapshot_finish;
	rar->itr.find_snapshot = raw_aux_find_snapshot;
	rar->itr.free = raw_aux_recording_free;
	rar->itr.reference = raw_aux_reference;
	rar->itr.read_finish = auxtrace_record__read_finish;
	pr_debug("%s: recording its AUX area raw\n", pmu->name);
	return &rar->itr;
}

/* ---- perf report, perf script ---- */

/* One AUX buffer: a CPU's, or with --per-thread a thread's. */
struct raw_aux_buf {
	bool	per_cpu;
	int	id;		/* the CPU, or the thread */
	FILE	*data;
	FILE	*index;
	u64	pos;		/* bytes written to data */
};

struct raw_aux {
	struct auxtrace		auxtrace;
	struct perf_session	*session;
	u32			pmu_type;
	char			*name;
	const char		*dir;
	struct raw_aux_buf	*bufs;
	int			nr_bufs;
	int			err;
};

static struct raw_aux_buf *raw_aux_buf_get(struct raw_aux *ra, bool per_cpu,
					   int id, bool create)
{
	struct raw_aux_buf *b;
	char path[PATH_MAX];
	int i;

	for (i = 0; i < ra->nr_bufs; i++) {
		if (ra->bufs[i].per_cpu == per_cpu && ra->bufs[i].id == id)
			return &ra->bufs[i];
	}
	if (!create)
		return NULL;

	b = realloc(ra->bufs, (ra->nr_bufs + 1) * sizeof(*b));
	if (!b)
		return NULL;
	ra->bufs = b;
	b = &ra->bufs[ra->nr_bufs];
	memset(b, 0, sizeof(*b));
	b->per_cpu = per_cpu;
	b->id = id;

	snprintf(path, sizeof(path), "%s/%s%d.bin", ra->dir,
		 per_cpu ? "cpu" : "tid", id);
	b->data = fopen(path, "w");
	if (!b->data) {
		pr_err("%s: %s\n", path, strerror(errno));
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s%d.txt", ra->dir,
		 per_cpu ? "cpu" : "tid", id);
	b->index = fopen(path, "w");
	if (!b->index) {
		pr_err("%s: %s\n", path, strerror(errno));
		fclose(b->data);
		return NULL;
	}
	fprintf(b->index, "pmu=%s type=%u %s=%d\n", ra->name, ra->pmu_type,
		per_cpu ? "cpu" : "tid", id);
	ra->nr_bufs++;
	return b;
}

static int raw_aux_process_event(struct perf_session *session,
				 union perf_event *event,
				 struct perf_sample *sample,
				 const struct perf_tool *tool __maybe_unused)
{
	struct raw_aux *ra = container_of(session->auxtrace, struct raw_aux,
					  auxtrace);
	struct raw_aux_buf *b = NULL;
	struct evsel *evsel;

	if (!ra->dir || event->header.type != PERF_RECORD_AUX)
		return 0;
	evsel = evlist__id2evsel(session->evlist, sample->id);
	if (evsel && !(evsel->core.attr.sample_type & PERF_SAMPLE_CPU))
		b = raw_aux_buf_get(ra, false, sample->tid, true);
	else
		b = raw_aux_buf_get(ra, true, sample->cpu, true);
	if (!b)
		return -ENOMEM;
	fprintf(b->index, "AUX offset=%llu size=%llu flags=%#llx time=%llu\n",
		(unsigned long long)event->aux.aux_offset,
		(unsigned long long)event->aux.aux_size,
		(unsigned long long)event->aux.flags,
		(unsigned long long)sample->time);
	return 0;
}

static int raw_aux_process_auxtrace_event(struct perf_session *session,
					  union perf_event *event,
					  const struct perf_tool *tool __maybe_unused)
{
	struct raw_aux *ra = container_of(session->auxtrace, struct raw_aux,
					  auxtrace);
	int fd = perf_data__fd(session->data);
	u64 size = event->auxtrace.size;
	struct raw_aux_buf *b;
	void *data;
	int err = 0;

	if (dump_trace)
		printf(". ... raw AUX data of %s: %llu bytes, not decoded\n",
		       ra->name, (unsigned long long)size);

	data = malloc(size ? size : 1);
	if (!data)
		return -ENOMEM;
	/* The data follows the event, in a file as in a pipe. */
	if (readn(fd, data, size) != (ssize_t)size) {
		err = -EIO;
		goto out;
	}
	if (!ra->dir)
		goto out;

	if (event->auxtrace.cpu != (u32)-1)
		b = raw_aux_buf_get(ra, true, event->auxtrace.cpu, true);
	else
		b = raw_aux_buf_get(ra, false, event->auxtrace.tid, true);
	if (!b) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(b->index,
		"AUXTRACE file_off=%llu offset=%llu size=%llu ref=%#llx idx=%u cpu=%d tid=%d\n",
		(unsigned long long)b->pos,
		(unsigned long long)event->auxtrace.offset,
		(unsigned long long)size,
		(unsigned long long)event->auxtrace.reference,
		event->auxtrace.idx, (int)event->auxtrace.cpu,
		event->auxtrace.tid);
	if (fwrite(data, 1, size, b->data) != size) {
		pr_err("raw AUX: writing the data of %s failed\n", ra->name);
		err = -EIO;
		goto out;
	}
	b->pos += size;
out:
	free(data);
	return err;
}

static int raw_aux_flush(struct perf_session *session __maybe_unused,
			 const struct perf_tool *tool __maybe_unused)
{
	return 0;
}

static void raw_aux_free_events(struct perf_session *session __maybe_unused)
{
}

static void raw_aux_free(struct perf_session *session)
{
	struct raw_aux *ra = container_of(session->auxtrace, struct raw_aux,
					  auxtrace);
	int i;

	for (i = 0; i < ra->nr_bufs; i++) {
		fclose(ra->bufs[i].data);
		fclose(ra->bufs[i].index);
	}
	if (ra->dir && ra->nr_bufs)
		pr_info("raw AUX: the data of %s is in %d buffer file(s) in %s\n",
			ra->name, ra->nr_bufs, ra->dir);
	session->auxtrace = NULL;
	free(ra->bufs);
	free(ra->name);
	free(ra);
}

static bool raw_aux_evsel_is_auxtrace(struct perf_session *session,
				      struct evsel *evsel)
{
	struct raw_aux *ra = container_of(session->auxtrace, struct raw_aux,
					  auxtrace);

	return evsel->core.attr.type == ra->pmu_type;
}

/**
 * raw_aux_process_auxtrace_info - read an AUXTRACE_INFO of PERF_AUXTRACE_RAW
 * @event: the AUXTRACE_INFO event
 * @session: the session it is in
 *
 * Return: 0, or a negative error number.
 */
int raw_aux_process_auxtrace_info(union perf_event *event,
				  struct perf_session *session)
{
	struct perf_record_auxtrace_info *info = &event->auxtrace_info;
	size_t priv = info->header.size - sizeof(*info), len;
	struct raw_aux *ra;

	if (info->header.size < sizeof(*info) ||
	    priv < (RAW_AUX_NAME + 1) * sizeof(u64))
		return -EINVAL;
	len = info->priv[RAW_AUX_NAME_LEN];
	if (len >= priv - RAW_AUX_NAME * sizeof(u64))
		return -EINVAL;

	ra = zalloc(sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	ra->name = strndup((char *)&info->priv[RAW_AUX_NAME], len);
	if (!ra->name) {
		free(ra);
		return -ENOMEM;
	}
	ra->session = session;
	ra->pmu_type = info->priv[RAW_AUX_PMU_TYPE];
	ra->dir = getenv(RAW_AUX_DIR_ENV);
	if (ra->dir && mkdir(ra->dir, 0755) && errno != EEXIST) {
		pr_err("%s=%s: %s\n", RAW_AUX_DIR_ENV, ra->dir, strerror(errno));
		free(ra->name);
		free(ra);
		return -errno;
	}

	ra->auxtrace.process_event = raw_aux_process_event;
	ra->auxtrace.process_auxtrace_event = raw_aux_process_auxtrace_event;
	ra->auxtrace.flush_events = raw_aux_flush;
	ra->auxtrace.free_events = raw_aux_free_events;
	ra->auxtrace.free = raw_aux_free;
	ra->auxtrace.evsel_is_auxtrace = raw_aux_evsel_is_auxtrace;
	session->auxtrace = &ra->auxtrace;

	if (dump_trace)
		printf("  PMU Type           %u\n  PMU Name           %s\n",
		       ra->pmu_type, ra->name);
	return 0;
}
