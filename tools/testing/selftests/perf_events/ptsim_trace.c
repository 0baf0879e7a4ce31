// SPDX-License-Identifier: GPL-2.0
/*
 * The ptsim trace check (ptsim_trace.h).
 */
#include "ptsim_lib.h"

/* Length of the ptsim packet at p, 0 if it is not one ptsim writes. */
size_t pt_len(const unsigned char *p, size_t left)
{
	size_t n = 0;

	if (p[0] == 0x00)
		n = 1;				/* PAD */
	else if (p[0] == 0x02 && left >= 2) {
		static const unsigned char ext[][2] = {
			{ 0x82, 16 },	/* PSB */
			{ 0x23, 2 },	/* PSBEND */
			{ 0x03, 4 },	/* CBR */
			{ 0xf3, 2 },	/* OVF */
			{ 0x12, 6 },	/* PTW, 4-byte payload */
			{ 0x92, 6 },	/* the same, IP bit: ptsim_mark */
			{ 0x32, 10 },	/* PTW, 8-byte payload */
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(ext); i++)
			if (p[1] == ext[i][0])
				n = ext[i][1];
	} else if (p[0] == 0x19)
		n = 8;				/* TSC */
	else if (p[0] == 0x99)
		n = 2;				/* MODE.Exec */
	else if ((p[0] & 0x1f) == 0x01 || (p[0] & 0x1f) == 0x11 ||
		 (p[0] & 0x1f) == 0x1d) {	/* TIP.PGD, TIP.PGE, FUP */
		if ((p[0] >> 5) == 0)
			n = 1;
		else if ((p[0] >> 5) == 6)
			n = 9;
	} else if (!(p[0] & 1))
		n = 1;				/* short TNT */
	if (n == 16 && left >= 16) {
		size_t i;

		for (i = 0; i < 16; i += 2)
			if (p[i] != 0x02 || p[i + 1] != 0x82)
				return 0;
	}
	return n <= left ? n : 0;
}

__u64 get_le(const unsigned char *p, int bytes)
{
	__u64 v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

/* Is there a lossy AUX record whose data ends in (lo, hi]? */
static bool lossy_end_in(struct capture *s, __u64 lo, __u64 hi)
{
	size_t i;

	for (i = 0; i < s->nrecs; i++) {
		struct aux_rec *r = &s->recs[i];

		if (r->type == PERF_RECORD_AUX &&
		    (r->c & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL |
			     PERF_AUX_FLAG_COLLISION)) &&
		    r->a + r->b > lo && r->a + r->b <= hi)
			return true;
	}
	return false;
}

/*
 * Walk one contiguous piece of trace (starting at AUX offset aux_off),
 * count packets and check the PTW sequence numbers.  A gap must be
 * explained by OVF + PTW32 with the exact number of bytes dropped, or by
 * a lossy AUX record ending between the two numbers.  region, if not 0,
 * is the region size: no packet may cross a multiple of it.
 */
void pt_check_piece(struct capture *s, struct pt_check *w,
		    const unsigned char *p, size_t len,
		    __u64 aux_off, size_t region)
{
	__u64 last_pos = 0, ovf_lost = 0, at = 0;
	bool synced = false, ovf = false, after_psb = false;
	size_t i = 0, n;

	w->have_seq = false;
	while (i < len) {
		n = pt_len(p + i, len - i);
		if (!synced) {
			/* Snapshots start anywhere: sync on the first PSB. */
			if (n == 16) {
				synced = true;
				continue;
			}
			/* ... but a normal trace starts with one. */
			if (!s->snapshot && p[i])
				w->errors++;
			i++;
			continue;
		}
		if (!n) {
			w->errors++;
			synced = false;
			i++;
			continue;
		}
		/*
		 * A data record's fill (six PADs, or TNTs with PTSIM_CFG1_TNT) is
		 * part of the record: w->pad counts the alignment only.
		 */
		if (n == 10 && p[i + 1] == 0x32 && i + PTSIM_REC <= len) {
			size_t f;

			for (f = i + n; f < i + PTSIM_REC; f++)
				if (p[f] != 0x00 && p[f] != 0x06)
					break;
			if (f == i + PTSIM_REC) {
				for (f = i + n; f < i + PTSIM_REC; f++)
					w->tnt += p[f] == 0x06;
				n = PTSIM_REC;
			}
		}
		if (region && (aux_off + i) / region !=
			      (aux_off + i + n - 1) / region)
			w->straddles++;
		w->packets++;
		if ((p[i] & 0x1f) == 0x11 && after_psb)
			w->enables++;
		after_psb = p[i] == 0x02 && p[i + 1] == 0x23;
		if (p[i] == 0x00) {
			w->pad++;
		} else if (p[i] == 0x02 && p[i + 1] == 0x82) {
			w->psb++;
		} else if (p[i] == 0x02 && p[i + 1] == 0x23) {
			w->psbend++;
		} else if (p[i] == 0x02 && p[i + 1] == 0xf3) {
			w->ovf++;
			ovf = true;
		} else if (p[i] == 0x02 && p[i + 1] == 0x12) {
			w->ptw32++;
			if (ovf)
				ovf_lost += get_le(p + i + 2, 4);
		} else if (p[i] == 0x02 && p[i + 1] == 0x92) {
			__u32 nr = get_le(p + i + 2, 4);

			if (nr != w->last_mark + 1)
				w->mark_skips++;
			w->marks++;
			w->last_mark = nr;
		} else if (p[i] == 0x02 && p[i + 1] == 0x32) {
			__u64 seq = get_le(p + i + 2, 8);

			w->ptw64++;
			if (w->have_seq && seq != w->last_seq + 1) {
				__u64 missing = seq - w->last_seq - 1;
				bool by_ovf = ovf && ovf_lost == missing * PTSIM_REC;

				w->gaps++;
				if (seq <= w->last_seq ||
				    (!by_ovf && !lossy_end_in(s, aux_off + last_pos,
							      aux_off + i)))
					w->unexplained++;
			}
			if (w->ptw64 == 1)
				w->first_seq = seq;
			w->have_seq = true;
			w->last_seq = seq;
			last_pos = i;
			ovf = false;
			ovf_lost = 0;
		} else if (p[i] == 0x19) {
			w->tsc++;
		} else if ((p[i] & 0x1f) == 0x11) {
			w->pge++;
		} else if ((p[i] & 0x1f) == 0x01) {
			w->pgd++;
		} else if ((p[i] & 0x1f) == 0x1d) {
			w->fup++;
		}
		/* FUP and TIP.PGE carry the traced task's user IP. */
		if (n == 9 && ((p[i] & 0x1f) == 0x11 || (p[i] & 0x1f) == 0x1d)) {
			__u64 ip = get_le(p + i + 1, 8);

			if (ip && ip < (1ULL << 47))
				w->user_ips++;
			else
				w->bad_ips++;
			/*
			 * perf's decoder walks the code from the trace's IP
			 * to a FUP's: ptsim's FUPs are all at the trace's IP.
			 */
			if ((p[i] & 0x1f) == 0x11 || !at)
				at = ip;
			else if (ip != at)
				w->fup_moved++;
		}
		i += n;
	}
}

/* Walk the whole trace, piece by piece (pieces are snapshots). */
void pt_check_trace(struct capture *s, struct pt_check *w, size_t region)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	/* A malformed data record is an error of the trace it belongs to. */
	w->errors = s->bad_records;
	if (!s->snapshot) {
		/* Normal mode: one piece, file offset == AUX offset. */
		pt_check_piece(s, w, s->trace, s->len, 0, region);
		return;
	}
	for (i = 0; i < s->ncopies; i++) {
		struct aux_copy *c = &s->copies[i];
		size_t len = c->size;

		/* A snapshot that wrapped is two copies: join them. */
		if (i + 1 < s->ncopies &&
		    s->copies[i + 1].aux_off == c->aux_off + c->size) {
			len += s->copies[i + 1].size;
			i++;
		}
		pt_check_piece(s, w, s->trace + c->file_off, len, c->aux_off,
			       region);
	}
}
