// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit test of ptsim's Intel PT packet encoders (ptsim-pkt.h): every
 * packet against its byte layout in the Intel SDM, vol. 3, chapter
 * "Intel Processor Trace", section "Packets".  The expected bytes are
 * written out here by hand from the SDM's tables, not computed, so an
 * encoder that drifts from the format fails.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "ptsim-pkt.h"

/* Room for the longest packet (PSB, 16 bytes) and a guard after it. */
#define BUF_SIZE	32
#define GUARD		0x5a

enum pkt_kind { PSB, EXT, TSC, CBR, MODE_EXEC, FUP, TIP_PGE, TIP_PGD,
	       PTW64, PTW32, PTW32_IP };

struct pkt_case {
	const char	*name;
	enum pkt_kind	kind;
	u64		arg;
	u8		bytes[16];
	unsigned int	len;
};

static unsigned int pkt_encode(const struct pkt_case *c, u8 *p)
{
	switch (c->kind) {
	case PSB:
		return pt_psb(p);
	case EXT:
		return pt_ext(p, c->arg);
	case TSC:
		return pt_tsc(p, c->arg);
	case CBR:
		return pt_cbr(p, c->arg);
	case MODE_EXEC:
		return pt_mode_exec(p);
	case FUP:
		return pt_ip(p, PT_FUP, c->arg);
	case TIP_PGE:
		return pt_ip(p, PT_TIP_PGE, c->arg);
	case TIP_PGD:
		return pt_ip(p, PT_TIP_PGD, c->arg);
	case PTW64:
		return pt_ptw64(p, c->arg);
	case PTW32:
		return pt_ptw32(p, c->arg);
	case PTW32_IP:
		return pt_ptw32_ip(p, c->arg);
	}
	return 0;
}

static const struct pkt_case pkt_cases[] = {
	/* PSB: 02 82 repeated 8 times. */
	{ "psb", PSB, 0,
	  { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 }, 16 },
	{ "psbend", EXT, 0x23, { 0x02, 0x23 }, 2 },
	{ "ovf", EXT, 0xf3, { 0x02, 0xf3 }, 2 },
	/* TSC: 0x19, then TSC[55:0] little endian; bits 63:56 are not sent. */
	{ "tsc", TSC, 0x0011223344556677ULL,
	  { 0x19, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 8 },
	{ "tsc_bits_55_0", TSC, 0xff00000000000001ULL,
	  { 0x19, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 }, 8 },
	/* CBR: 02 03, the core:bus ratio, a reserved zero byte. */
	{ "cbr", CBR, 0x20, { 0x02, 0x03, 0x20, 0x00 }, 4 },
	/* MODE.Exec: 0x99, leaf 000 in bits 7:5, CS.L (bit 0) for 64-bit. */
	{ "mode_exec_64bit", MODE_EXEC, 0, { 0x99, 0x01 }, 2 },
	/* FUP: IPBytes (7:5) 110 = 8 bytes of IP, then 11101. */
	{ "fup", FUP, 0x00007f0012345678ULL,
	  { 0xdd, 0x78, 0x56, 0x34, 0x12, 0x00, 0x7f, 0x00, 0x00 }, 9 },
	/* IPBytes 000: the IP is suppressed, the packet is one byte. */
	{ "fup_suppressed", FUP, 0, { 0x1d }, 1 },
	/* TIP.PGE: 10001; TIP.PGD: 00001. */
	{ "tip_pge", TIP_PGE, 0x401000,
	  { 0xd1, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00 }, 9 },
	{ "tip_pgd_suppressed", TIP_PGD, 0, { 0x01 }, 1 },
	/*
	 * PTW: 02, then IP (bit 7), PayloadBytes (6:5: 00 four, 01 eight)
	 * and 10010; the payload little endian.
	 */
	{ "ptw_8_bytes", PTW64, 0x0102030405060708ULL,
	  { 0x02, 0x32, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 }, 10 },
	{ "ptw_4_bytes", PTW32, 0xa1b2c3d4,
	  { 0x02, 0x12, 0xd4, 0xc3, 0xb2, 0xa1 }, 6 },
	{ "ptw_4_bytes_ip", PTW32_IP, 7,
	  { 0x02, 0x92, 0x07, 0x00, 0x00, 0x00 }, 6 },
};

static void pkt_case_desc(const struct pkt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pkt, pkt_cases, pkt_case_desc);

/* Each packet: its length, its bytes, and not one byte written past it. */
static void ptsim_pkt_layout(struct kunit *test)
{
	const struct pkt_case *c = test->param_value;
	u8 buf[BUF_SIZE];
	unsigned int len;

	memset(buf, GUARD, sizeof(buf));
	len = pkt_encode(c, buf);
	KUNIT_ASSERT_EQ(test, len, c->len);
	KUNIT_EXPECT_MEMEQ(test, buf, c->bytes, c->len);
	KUNIT_EXPECT_EQ(test, buf[len], GUARD);
}

static struct kunit_case ptsim_pkt_test_cases[] = {
	KUNIT_CASE_PARAM(ptsim_pkt_layout, pkt_gen_params),
	{}
};

static struct kunit_suite ptsim_pkt_test_suite = {
	.name = "ptsim_pkt",
	.test_cases = ptsim_pkt_test_cases,
};

kunit_test_suite(ptsim_pkt_test_suite);

MODULE_DESCRIPTION("KUnit test of ptsim's Intel PT packet encoders");
MODULE_LICENSE("GPL");
