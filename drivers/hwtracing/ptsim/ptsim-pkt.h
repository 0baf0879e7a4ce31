/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Intel PT packets ptsim writes, as the Intel SDM (vol. 3, chapter
 * "Intel Processor Trace", section "Packets") lays them out.  Each
 * encoder writes one packet at @p and returns its length in bytes.
 * ptsim-pkt-test.c checks every one against the SDM's byte layout.
 */
#ifndef _PTSIM_PKT_H
#define _PTSIM_PKT_H

#include <linux/types.h>
#include <linux/unaligned.h>

#define PT_IPC_SUPPRESSED	0
#define PT_IPC_FULL		6	/* 8-byte IP, no compression */
#define PT_TIP_PGD		0x01
#define PT_TIP_PGE		0x11
#define PT_FUP			0x1d

static inline unsigned int pt_psb(u8 *p)
{
	unsigned int i;

	for (i = 0; i < 16; i += 2) {
		p[i] = 0x02;
		p[i + 1] = 0x82;
	}
	return 16;
}

static inline unsigned int pt_ext(u8 *p, u8 opcode)
{
	p[0] = 0x02;
	p[1] = opcode;
	return 2;
}

static inline unsigned int pt_tsc(u8 *p, u64 tsc)
{
	/* 0x19 followed by the low 7 bytes of the TSC, little endian. */
	put_unaligned_le64(tsc << 8 | 0x19, p);
	return 8;
}

static inline unsigned int pt_cbr(u8 *p, u8 ratio)
{
	p[0] = 0x02;
	p[1] = 0x03;
	p[2] = ratio;
	p[3] = 0;
	return 4;
}

static inline unsigned int pt_mode_exec(u8 *p)
{
	/* Leaf 000, CS.L=1: 64-bit code, as for a native 64-bit task. */
	p[0] = 0x99;
	p[1] = 0x01;
	return 2;
}

/* FUP and the TIP family: full 8-byte IP, or the IP suppressed. */
static inline unsigned int pt_ip(u8 *p, u8 opcode, u64 ip)
{
	if (!ip) {
		p[0] = (PT_IPC_SUPPRESSED << 5) | opcode;
		return 1;
	}
	p[0] = (PT_IPC_FULL << 5) | opcode;
	put_unaligned_le64(ip, p + 1);
	return 9;
}

/* PTW: PayloadBytes 01 is 8 bytes of payload, 00 is 4; IP bit clear. */
static inline unsigned int pt_ptw64(u8 *p, u64 v)
{
	p[0] = 0x02;
	p[1] = 0x32;
	put_unaligned_le64(v, p + 2);
	return 10;
}

static inline unsigned int pt_ptw32(u8 *p, u32 v)
{
	p[0] = 0x02;
	p[1] = 0x12;
	put_unaligned_le32(v, p + 2);
	return 6;
}

/* PTW, 4 bytes of payload, IP bit set: a FUP with the IP follows. */
static inline unsigned int pt_ptw32_ip(u8 *p, u32 v)
{
	p[0] = 0x02;
	p[1] = 0x92;
	put_unaligned_le32(v, p + 2);
	return 6;
}

#endif /* _PTSIM_PKT_H */
