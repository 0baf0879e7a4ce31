/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace check: a walk of the packets ptsim writes, counting them and
 * checking the sequence numbers; every gap must be explained by a record
 * or an OVF packet.
 */
#ifndef PTSIM_TRACE_H
#define PTSIM_TRACE_H

struct pt_check {
	unsigned long packets, pad, psb, psbend, ptw64, ptw32, ovf, pge, pgd;
	unsigned long fup, tsc, errors, gaps, unexplained;
	unsigned long straddles;	/* packets crossing a region end */
	/* TIP.PGE right after a PSB+: an enable or a resume, not a tick */
	unsigned long enables;
	/* TNT bits; FUPs away from the trace's IP (its last TIP.PGE's) */
	unsigned long tnt, fup_moved;
	unsigned long user_ips, bad_ips;	/* IPs in FUP and TIP.PGE */
	__u64 first_seq, last_seq;
	bool have_seq;
	/* ptsim_mark samples (aux_output): how many, numbers out of order */
	unsigned long marks, mark_skips;
	__u32 last_mark;
};

size_t pt_len(const unsigned char *p, size_t left);
__u64 get_le(const unsigned char *p, int bytes);
void pt_check_piece(struct capture *s, struct pt_check *w,
		    const unsigned char *p, size_t len,
		    __u64 aux_off, size_t region);
void pt_check_trace(struct capture *s, struct pt_check *w, size_t region);

#endif /* PTSIM_TRACE_H */
