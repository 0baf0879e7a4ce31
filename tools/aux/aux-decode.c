// SPDX-License-Identifier: GPL-2.0
/*
 * aux-decode - decode and check directories written by aux-record.
 *
 *	aux-decode [-v] [--tap] DIR...
 *
 * Each DIR holds aux.bin (AUX data) and records.txt (the record stream,
 * see Documentation/admin-guide/perf/ptsim.rst).  Every byte of aux.bin
 * is decoded with the libipt packet decoder, packets are counted by type,
 * and the sequence numbers of the ptsim data records (PTW packets with an
 * 8-byte payload) are checked: consecutive ones must increase by one, and
 * every gap must be explained by
 *
 *  (a) an OVF packet between the two, followed by 4-byte PTW packets whose
 *      payloads (bytes dropped) add up to 16 bytes per missing record;
 *  (b) a PERF_RECORD_AUX with TRUNCATED, PARTIAL or COLLISION set whose
 *      end lies in (AUX offset of the first, AUX offset of the second];
 *  (c) a boundary between copies that are not contiguous in the AUX
 *      stream (snapshot mode).
 *
 * Copies (COPY lines) that follow each other in the AUX stream form one
 * segment, decoded as one stream; each segment has its own decoder.
 *
 * A FLUSH line (aux-record --flush-at-exit) gives ptsim's counter, the
 * bytes it had queued into its FIFO, read just before PERF_EVENT_IOC_FLUSH,
 * and aux_head before and after the ioctl.  Everything counted must then be
 * in the AUX area below the new head: the summary reports fifo_flushed (how
 * far the flush moved aux_head) and fifo_stranded, the counted bytes that
 * are missing from the bytes below it that are not alignment PAD (the
 * PADs that fill a data record after its PTW are trace).  fifo_stranded
 * is "n/a" where it cannot be known: in snapshot mode, when the copies do
 * not cover the AUX area from 0 up to the head, or when a TRUNCATED,
 * PARTIAL or COLLISION record says data was lost on the way.
 *
 * A DIR is ok if it parsed, had no decode error, no unexplained gap, and
 * no stranded byte after a flush that succeeded.  The exit status is 0 if
 * every DIR is ok, 1 otherwise, 2 on bad usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>

#define AUX_TRUNCATED	0x01
#define AUX_PARTIAL	0x04
#define AUX_COLLISION	0x08
#define AUX_GAP_FLAGS	(AUX_TRUNCATED | AUX_PARTIAL | AUX_COLLISION)
#define RECORD_BYTES	16	/* one ptsim data record */
#define MAX_TOKENS	16

/* __printf() from tools/include: build with -I tools/include */
#include <linux/compiler.h>

enum pkt_class {
	PK_PAD, PK_PSB, PK_PSBEND, PK_TSC, PK_CBR, PK_MODE, PK_FUP, PK_TIP,
	PK_TIP_PGE, PK_TIP_PGD, PK_TNT, PK_PTW, PK_OVF, PK_OTHER, PK_NR
};

static const char *const class_name[PK_NR] = {
	"pad", "psb", "psbend", "tsc", "cbr", "mode", "fup", "tip",
	"tip.pge", "tip.pgd", "tnt", "ptw", "ovf", "other",
};

struct aux_rec {
	__u64 offset, size, flags;
};

/* A run of COPY lines that is contiguous in aux.bin and in the AUX stream */
struct segment {
	__u64 file_off, aux_off, size;
};

struct trace {
	const char *dir;
	bool snapshot;
	__u64 aux_size;
	struct aux_rec *aux;
	size_t naux;
	struct segment *seg;
	size_t nseg;
	__u64 copied;		/* bytes covered by COPY lines */
	unsigned char *bin;
	__u64 binlen;
	bool have_flush;	/* a FLUSH line: */
	__u64 flush_errno, flush_count, flush_before, flush_head;
};

struct seq_state {
	bool have_prev;
	__u64 prev;		/* sequence number of the last PTW64 */
	__u64 prev_aux;		/* and its AUX offset */
	bool ovf;		/* OVF seen since */
	__u64 dropped;		/* PTW32 payloads after it */
	bool boundary;		/* non-contiguous copy boundary since */
};

struct result {
	__u64 packets, errors, gaps, unexplained;
	__u64 count[PK_NR];
	__u64 pad_below_flush;	/* PAD bytes at AUX offsets < flush_head */
};

static bool verbose, tap;
static char errbuf[512];
/* -v lines about gaps and errors, printed after the DIR's summary */
static char *details;
static size_t details_len;

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, n * size);
	if (!p) {
		perror("aux-decode: realloc");
		exit(2);
	}
	return p;
}

/* Diagnostic output: "# "-prefixed on stdout in TAP mode. */
static void __printf(1, 2) note(const char *fmt, ...)
{
	va_list ap;

	if (tap)
		fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Build an output line piece by piece; emit_line() prints it. */
static char *line_buf;
static size_t line_len;

static void __printf(1, 2) add(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	line_buf = grow(line_buf, line_len + n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(line_buf + line_len, n + 1, fmt, ap);
	va_end(ap);
	line_len += n;
}

static void emit_line(void)
{
	note("%s", line_len ? line_buf : "");
	line_len = 0;
}

/* Queue a -v line for after the summary. */
static void __printf(1, 2) detail(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	details = grow(details, details_len + n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(details + details_len, n + 1, fmt, ap);
	va_end(ap);
	details_len += n + 1;	/* lines are kept NUL-separated */
}

static void flush_details(void)
{
	size_t i;

	for (i = 0; i < details_len; i += strlen(details + i) + 1)
		note("%s", details + i);
	details_len = 0;
}

/* Record why a DIR could not be parsed; returns -1. */
static int __printf(1, 2) bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_u64(const char *s, __u64 *v)
{
	char *end;

	if (*s == '-' || *s == '\0')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

/*
 * Parse the "key=value" tokens tok[first..n) of a line: every key of
 * @keys must be there once, nothing else.  Numbers go to @val; a key
 * named @strkey has its text stored in @str instead.
 */
static int parse_fields(char **tok, int first, int n, const char *const *keys,
			int nkeys, __u64 *val, const char *strkey,
			const char **str, const char *path, int line)
{
	unsigned int seen = 0;
	int i, k;

	for (i = first; i < n; i++) {
		char *eq = strchr(tok[i], '=');

		if (!eq)
			return bad("%s:%d: '%s' is not key=value", path, line,
				   tok[i]);
		*eq = '\0';
		for (k = 0; k < nkeys; k++)
			if (!strcmp(tok[i], keys[k]))
				break;
		if (k == nkeys || (seen & (1u << k)))
			return bad("%s:%d: unexpected or repeated field '%s'",
				   path, line, tok[i]);
		seen |= 1u << k;
		if (strkey && !strcmp(keys[k], strkey))
			*str = eq + 1;
		else if (parse_u64(eq + 1, &val[k]))
			return bad("%s:%d: %s: bad number '%s'", path, line,
				   tok[i], eq + 1);
	}
	if (seen != (1u << nkeys) - 1)
		return bad("%s:%d: missing field(s) in a %s line", path, line,
			   tok[0]);
	return 0;
}

static int add_copy(struct trace *t, const __u64 *v, const char *path,
		    int line)
{
	struct segment *last = t->nseg ? &t->seg[t->nseg - 1] : NULL;

	if (v[0] != t->copied)
		return bad("%s:%d: COPY file_off=%llu, expected %llu",
			   path, line, v[0], t->copied);
	if (v[1] + v[2] < v[1])
		return bad("%s:%d: COPY range overflows", path, line);
	if (t->snapshot && v[2] > t->aux_size)
		return bad("%s:%d: COPY larger than the AUX area", path, line);
	t->copied += v[2];
	if (!v[2])
		return 0;
	if (last && last->aux_off + last->size == v[1]) {
		last->size += v[2];
		return 0;
	}
	t->seg = grow(t->seg, t->nseg + 1, sizeof(*t->seg));
	t->seg[t->nseg++] = (struct segment){ v[0], v[1], v[2] };
	return 0;
}

static int parse_line(struct trace *t, char *buf, const char *path, int line)
{
	static const char *const hdr_keys[] = {
		"type", "config", "mode", "aux_size"
	};
	static const char *const aux_keys[] = { "offset", "size", "flags" };
	static const char *const copy_keys[] = { "file_off", "aux_off", "size" };
	static const char *const itrace_keys[] = { "pid", "tid" };
	static const char *const lost_keys[] = { "id", "lost" };
	static const char *const flush_keys[] = {
		"errno", "count", "head_before", "head"
	};
	char *tok[MAX_TOKENS], *save = NULL, *s;
	const char *mode = NULL;
	__u64 v[4];
	int n = 0;

	for (s = strtok_r(buf, " \t\r\n", &save); s;
	     s = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == MAX_TOKENS)
			return bad("%s:%d: too many fields", path, line);
		tok[n++] = s;
	}
	if (line == 1) {
		if (n < 2 || strcmp(tok[0], "pmu"))
			return bad("%s:1: the first line is not a 'pmu' header",
				   path);
		if (parse_fields(tok, 2, n, hdr_keys, 4, v, "mode", &mode,
				 path, line))
			return -1;
		if (!strcmp(mode, "snapshot"))
			t->snapshot = true;
		else if (strcmp(mode, "normal"))
			return bad("%s:1: unknown mode '%s'", path, mode);
		if (!v[3])
			return bad("%s:1: aux_size is 0", path);
		t->aux_size = v[3];
		return 0;
	}
	if (!n)
		return 0;
	if (!strcmp(tok[0], "AUX")) {
		if (parse_fields(tok, 1, n, aux_keys, 3, v, NULL, NULL, path,
				 line))
			return -1;
		t->aux = grow(t->aux, t->naux + 1, sizeof(*t->aux));
		t->aux[t->naux++] = (struct aux_rec){ v[0], v[1], v[2] };
		return 0;
	}
	if (!strcmp(tok[0], "COPY")) {
		if (parse_fields(tok, 1, n, copy_keys, 3, v, NULL, NULL, path,
				 line))
			return -1;
		return add_copy(t, v, path, line);
	}
	if (!strcmp(tok[0], "ITRACE_START"))
		return parse_fields(tok, 1, n, itrace_keys, 2, v, NULL, NULL,
				    path, line);
	if (!strcmp(tok[0], "LOST"))
		return parse_fields(tok, 1, n, lost_keys, 2, v, NULL, NULL,
				    path, line);
	if (!strcmp(tok[0], "FLUSH")) {
		if (t->have_flush)
			return bad("%s:%d: a second FLUSH line", path, line);
		if (parse_fields(tok, 1, n, flush_keys, 4, v, NULL, NULL, path,
				 line))
			return -1;
		if (v[3] < v[2])
			return bad("%s:%d: FLUSH head below head_before", path,
				   line);
		t->have_flush = true;
		t->flush_errno = v[0];
		t->flush_count = v[1];
		t->flush_before = v[2];
		t->flush_head = v[3];
		return 0;
	}
	return bad("%s:%d: unknown record '%s'", path, line, tok[0]);
}

static int read_records(struct trace *t)
{
	char path[4096], *buf = NULL;
	size_t cap = 0;
	int line = 0, ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/records.txt", t->dir);
	f = fopen(path, "r");
	if (!f)
		return bad("%s: %s", path, strerror(errno));
	while (!ret && getline(&buf, &cap, f) >= 0)
		ret = parse_line(t, buf, path, ++line);
	if (!ret && ferror(f))
		ret = bad("%s: read error", path);
	if (!ret && !line)
		ret = bad("%s: empty file", path);
	free(buf);
	fclose(f);
	return ret;
}

static int read_bin(struct trace *t)
{
	char path[4096];
	size_t cap = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/aux.bin", t->dir);
	f = fopen(path, "rb");
	if (!f)
		return bad("%s: %s", path, strerror(errno));
	for (;;) {
		if (t->binlen == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			t->bin = grow(t->bin, cap, 1);
		}
		n = fread(t->bin + t->binlen, 1, cap - t->binlen, f);
		t->binlen += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		return bad("%s: read error", path);
	}
	fclose(f);
	if (t->copied != t->binlen)
		return bad("%s has %llu bytes, COPY lines cover %llu",
			   path, t->binlen, t->copied);
	return 0;
}

static enum pkt_class classify(enum pt_packet_type type)
{
	switch (type) {
	case ppt_pad:
		return PK_PAD;
	case ppt_psb:
		return PK_PSB;
	case ppt_psbend:
		return PK_PSBEND;
	case ppt_tsc:
		return PK_TSC;
	case ppt_cbr:
		return PK_CBR;
	case ppt_mode:
		return PK_MODE;
	case ppt_fup:
		return PK_FUP;
	case ppt_tip:
		return PK_TIP;
	case ppt_tip_pge:
		return PK_TIP_PGE;
	case ppt_tip_pgd:
		return PK_TIP_PGD;
	case ppt_tnt_8:
	case ppt_tnt_64:
		return PK_TNT;
	case ppt_ptw:
		return PK_PTW;
	case ppt_ovf:
		return PK_OVF;
	default:
		return PK_OTHER;
	}
}

/* Rule (b): a lossy AUX record ends in (lo, hi], or [0, hi] if !have_lo */
static bool lossy_aux_end(const struct trace *t, bool have_lo, __u64 lo,
			  __u64 hi)
{
	size_t i;

	for (i = 0; i < t->naux; i++) {
		__u64 end = t->aux[i].offset + t->aux[i].size;

		if (!(t->aux[i].flags & AUX_GAP_FLAGS))
			continue;
		if ((!have_lo || end > lo) && end <= hi)
			return true;
	}
	return false;
}

static void report_gap(const struct seq_state *s, __u64 seq, __u64 aux_off,
		       const char *why)
{
	char prev[24] = "start";

	if (!verbose)
		return;
	if (s->have_prev)
		snprintf(prev, sizeof(prev), "%llu", s->prev);
	detail("  gap: seq %s -> %llu aux_off=%llu %s%s%s", prev, seq, aux_off,
	       why ? "explained by " : "UNEXPLAINED", why ? why : "",
	       s->have_prev && seq <= s->prev ? " (backwards)" : "");
}

static void check_seq(const struct trace *t, struct seq_state *s,
		      struct result *r, __u64 seq, __u64 aux_off)
{
	const char *why = NULL;
	__u64 missing;

	if (!s->have_prev) {
		/* normal mode: the buffer's first record is number 0 */
		if (t->snapshot || seq == 0)
			goto out;
		if (lossy_aux_end(t, false, 0, aux_off))
			why = "lossy AUX record";
	} else {
		if (seq == s->prev + 1)
			goto out;
		/* backwards is never explained */
		missing = seq > s->prev ? seq - s->prev - 1 : 0;
		if (!missing)
			why = NULL;
		else if (s->ovf && missing <= ~0ULL / RECORD_BYTES &&
			 s->dropped == missing * RECORD_BYTES)
			why = "OVF";
		else if (lossy_aux_end(t, true, s->prev_aux, aux_off))
			why = "lossy AUX record";
		else if (s->boundary)
			why = "snapshot boundary";
	}
	r->gaps++;
	if (!why)
		r->unexplained++;
	report_gap(s, seq, aux_off, why);
out:
	s->have_prev = true;
	s->prev = seq;
	s->prev_aux = aux_off;
	s->ovf = false;
	s->dropped = 0;
	s->boundary = false;
}

static bool all_pad(const unsigned char *p, __u64 n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void decode_error(struct result *r, const struct segment *sg,
			 __u64 off, const char *what)
{
	r->errors++;
	if (verbose)
		detail("  decode error: file_off=%llu aux_off=%llu: %s",
		       sg->file_off + off, sg->aux_off + off, what);
}

/* How many of the @len bytes at AUX offset @off lie below the flush head. */
static __u64 below(const struct trace *t, __u64 off, __u64 len)
{
	if (!t->have_flush || off >= t->flush_head)
		return 0;
	return len < t->flush_head - off ? len : t->flush_head - off;
}

/*
 * fifo_stranded: bytes the counter says were queued before the flush that
 * are not among the bytes below its head, alignment PADs left out.  False
 * if that cannot be known (see the top of the file).
 */
static bool stranded(const struct trace *t, const struct result *r,
		     __u64 *out)
{
	__u64 delivered;

	if (t->snapshot || lossy_aux_end(t, false, 0, t->flush_head))
		return false;
	/* normal mode: one segment from AUX offset 0 must reach the head */
	if (t->flush_head &&
	    (!t->nseg || t->seg[0].aux_off ||
	     t->seg[0].size < t->flush_head))
		return false;
	delivered = t->flush_head - r->pad_below_flush;
	*out = t->flush_count > delivered ? t->flush_count - delivered : 0;
	return true;
}

static int decode_segment(const struct trace *t, const struct segment *sg,
			  struct seq_state *s, struct result *r)
{
	unsigned char *begin = t->bin + sg->file_off;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct pt_config cfg;
	uint64_t off, sync = 0;	/* libipt's type */
	uint64_t fill_end = 0;	/* end of the last data record's PTW fill */
	int err;

	pt_config_init(&cfg);
	cfg.begin = begin;
	cfg.end = begin + sg->size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return bad("cannot allocate a libipt packet decoder");

	/*
	 * ptsim's trace starts with a PSB; a snapshot may begin anywhere,
	 * so there the bytes before the first PSB are skipped silently.
	 */
	err = pt_pkt_sync_forward(dec);
	if (err < 0) {
		if (!t->snapshot && !all_pad(begin, sg->size))
			decode_error(r, sg, 0, "no PSB in the trace");
		goto out;
	}
	if (pt_pkt_get_sync_offset(dec, &sync) < 0)
		sync = 0;
	if (t->snapshot) {
		/* unknown alignment: what precedes the PSB is not decoded */
	} else if (all_pad(begin, sync)) {
		r->packets += sync;
		r->count[PK_PAD] += sync;
		r->pad_below_flush += below(t, sg->aux_off, sync);
	} else {
		decode_error(r, sg, 0, "data before the first PSB");
	}

	for (;;) {
		if (pt_pkt_get_offset(dec, &off) < 0)
			break;
		err = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (err == -pte_eos) {
			if (off < sg->size)
				decode_error(r, sg, off,
					     "packet cut off at the end");
			break;
		}
		if (err < 0) {
			decode_error(r, sg, off, pt_errstr(pt_errcode(err)));
			/* on to the next PSB; whatever is between is lost */
			if (pt_pkt_sync_forward(dec) < 0 ||
			    pt_pkt_get_sync_offset(dec, &sync) < 0 ||
			    sync <= off)
				break;
			continue;
		}
		r->packets++;
		r->count[classify(pkt.type)]++;
		/*
		 * A data record's PADs after its PTW are part of the record,
		 * which ptsim's counter counts: only the others (alignment)
		 * are not trace.
		 */
		if (pkt.type == ppt_pad && off >= fill_end)
			r->pad_below_flush += below(t, sg->aux_off + off, 1);
		if (pkt.type == ppt_ptw && pkt.payload.ptw.plc == 1)
			fill_end = off + RECORD_BYTES;
		if (pkt.type == ppt_ovf) {
			s->ovf = true;
		} else if (pkt.type == ppt_ptw && pkt.payload.ptw.plc == 1) {
			check_seq(t, s, r, pkt.payload.ptw.payload,
				  sg->aux_off + off);
		} else if (pkt.type == ppt_ptw && pkt.payload.ptw.plc == 0 &&
			   !pkt.payload.ptw.ip) {
			/* (with the IP bit, it is a ptsim_mark sample) */
			if (s->ovf)
				s->dropped += pkt.payload.ptw.payload;
		}
	}
out:
	pt_pkt_free_decoder(dec);
	return 0;
}

static void free_trace(struct trace *t)
{
	free(t->aux);
	free(t->seg);
	free(t->bin);
}

/* Returns true if the DIR is ok. */
static bool check_dir(const char *dir, int num)
{
	struct seq_state s = { 0 };
	struct result r = { 0 };
	struct trace t = { 0 };
	const char *base;
	bool ok = false;
	size_t i, len;
	int k;

	t.dir = dir;
	errbuf[0] = '\0';
	if (read_records(&t) || read_bin(&t))
		goto out;
	for (i = 0; i < t.nseg; i++) {
		s.boundary = i > 0;
		if (decode_segment(&t, &t.seg[i], &s, &r))
			goto out;
	}
	ok = !r.errors && !r.unexplained;

	add("aux-decode: dir=%s bytes=%llu aux_records=%zu", dir, t.binlen,
	    t.naux);
	add(" packets=%llu decode_errors=%llu", r.packets, r.errors);
	add(" seq_gaps=%llu unexplained_gaps=%llu", r.gaps, r.unexplained);
	if (t.have_flush) {
		__u64 left;

		add(" flush_errno=%llu fifo_flushed=%llu", t.flush_errno,
		    t.flush_head - t.flush_before);
		if (stranded(&t, &r, &left)) {
			add(" fifo_stranded=%llu", left);
			/* a flush that succeeded must leave nothing behind */
			if (left && !t.flush_errno)
				ok = false;
		} else {
			add(" fifo_stranded=n/a");
		}
	}
	emit_line();
	if (verbose) {
		add("  types:");
		for (k = 0; k < PK_NR; k++)
			add(" %s=%llu", class_name[k], r.count[k]);
		emit_line();
		flush_details();
	}
out:
	if (errbuf[0]) {
		if (tap)
			note("error: %s", errbuf);
		else
			fprintf(stderr, "aux-decode: %s\n", errbuf);
	}
	if (tap) {
		len = strlen(dir);
		while (len > 1 && dir[len - 1] == '/')
			len--;
		base = dir + len;
		while (base > dir && base[-1] != '/')
			base--;
		printf("%sok %d - %.*s\n", ok ? "" : "not ", num,
		       (int)(dir + len - base), base);
	}
	details_len = 0;
	free_trace(&t);
	fflush(stdout);
	return ok;
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: aux-decode [-v] [--tap] DIR...\n");
}

int main(int argc, char **argv)
{
	bool opts = true, all_ok = true;
	int i, ndirs = 0;
	char **dirs;

	dirs = calloc(argc, sizeof(*dirs));
	if (!dirs) {
		perror("aux-decode: calloc");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts && !strcmp(a, "--")) {
			opts = false;
			continue;
		}
		if (!opts || a[0] != '-' || !a[1]) {
			dirs[ndirs++] = argv[i];
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_help(stdout);
			free(dirs);
			return 0;
		}
		if (!strcmp(a, "-v")) {
			verbose = true;
		} else if (!strcmp(a, "--tap")) {
			tap = true;
		} else {
			fprintf(stderr, "aux-decode: unknown option '%s'\n", a);
			print_help(stderr);
			free(dirs);
			return 2;
		}
	}
	if (!ndirs) {
		print_help(stderr);
		free(dirs);
		return 2;
	}
	if (tap)
		printf("TAP version 13\n1..%d\n", ndirs);
	for (i = 0; i < ndirs; i++)
		if (!check_dir(dirs[i], i + 1))
			all_ok = false;
	free(dirs);
	free(details);
	free(line_buf);
	return all_ok ? 0 : 1;
}
