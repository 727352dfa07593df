// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for softrdma. The pure helpers of util.c are compiled into
 * this module from the same source file softrdma.ko uses; the wire codecs
 * are inline in roce.h; the ICRC and the QP attribute checks are called in
 * softrdma.ko, which exports them to KUnit only.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/unaligned.h>

#include "../../kernel/core/util.c"
#include "roce.h"

static void mtu_roce_test(struct kunit *test)
{
	const enum softrdma_transport t = SOFTRDMA_TRANSPORT_ROCE;

	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(1500, t), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(9000, t), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(4096 + SOFTRDMA_ROCE_OVERHEAD, t),
			IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(4095 + SOFTRDMA_ROCE_OVERHEAD, t),
			IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(1024 + SOFTRDMA_ROCE_OVERHEAD, t),
			IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(1023 + SOFTRDMA_ROCE_OVERHEAD, t),
			IB_MTU_512);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(68, t), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(0, t), IB_MTU_256);
}

static void mtu_iwarp_test(struct kunit *test)
{
	const enum softrdma_transport t = SOFTRDMA_TRANSPORT_IWARP;

	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(1500, t), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(2048 + SOFTRDMA_IWARP_OVERHEAD, t),
			IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, softrdma_active_mtu(2047 + SOFTRDMA_IWARP_OVERHEAD, t),
			IB_MTU_1024);
}

static void ring_slots_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(0, 65536), 2U);
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(1, 65536), 2U);
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(3, 65536), 4U);
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(100, 65536), 128U);
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(65536, 65536), 65536U);
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(65537, 65536), 0U);
	KUNIT_EXPECT_EQ(test, softrdma_ring_slots(U32_MAX, 65536), 0U);
}

static void ring_used_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softrdma_ring_used(5, 3, 8), 2);
	KUNIT_EXPECT_EQ(test, softrdma_ring_used(8, 0, 8), 8);
	/* Free-running indices wrap at 2^32. */
	KUNIT_EXPECT_EQ(test, softrdma_ring_used(2, 0xfffffffe, 4), 4);
	/* More used than slots, or a consumer ahead of the producer. */
	KUNIT_EXPECT_EQ(test, softrdma_ring_used(9, 0, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, softrdma_ring_used(0, 1, 8), -EINVAL);
}

static void gid_from_mac_test(struct kunit *test)
{
	static const u8 mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	union ib_gid gid;
	int i;

	memset(&gid, 0xa5, sizeof(gid));
	softrdma_gid_from_mac(&gid, mac);
	KUNIT_EXPECT_MEMEQ(test, gid.raw, mac, sizeof(mac));
	for (i = 6; i < 16; i++)
		KUNIT_EXPECT_EQ(test, gid.raw[i], 0);
}

static struct kunit_case softrdma_util_cases[] = {
	KUNIT_CASE(mtu_roce_test),
	KUNIT_CASE(mtu_iwarp_test),
	KUNIT_CASE(ring_slots_test),
	KUNIT_CASE(ring_used_test),
	KUNIT_CASE(gid_from_mac_test),
	{}
};

static struct kunit_suite softrdma_util_suite = {
	.name = "softrdma_util",
	.test_cases = softrdma_util_cases,
};

/*
 * Header codecs. The reference bytes are an RC RDMA WRITE ONLY of one byte
 * that rdma_rxe put on the wire (BTH and RETH of rxe_write1 below).
 */
static const u8 rxe_write1_bth[SOFTRDMA_BTH_LEN] = {
	0x0a, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x10,
	0x80, 0xff, 0xff, 0xf4,
};

static const u8 rxe_write1_reth[SOFTRDMA_RETH_LEN] = {
	0x00, 0x00, 0x7f, 0xd5, 0xe2, 0xdf, 0xe0, 0x10,
	0x00, 0x00, 0x02, 0x85, 0x00, 0x00, 0x00, 0x01,
};

static void bth_encode_rxe_test(struct kunit *test)
{
	struct softrdma_bth bth;

	memset(&bth, 0xa5, sizeof(bth));
	softrdma_bth_fill(&bth, RC_WRITE_ONLY, 3 << SOFTRDMA_BTH_PAD_SHIFT,
			  0x10, 0xfffff4, true);
	KUNIT_EXPECT_MEMEQ(test, &bth, rxe_write1_bth, SOFTRDMA_BTH_LEN);
}

static void bth_decode_rxe_test(struct kunit *test)
{
	const struct softrdma_bth *bth = (const void *)rxe_write1_bth;

	KUNIT_EXPECT_EQ(test, bth->opcode, RC_WRITE_ONLY);
	KUNIT_EXPECT_EQ(test, softrdma_bth_pad(bth), 3);
	KUNIT_EXPECT_FALSE(test, softrdma_bth_se(bth));
	KUNIT_EXPECT_EQ(test, ntohs(bth->pkey), SOFTRDMA_DEFAULT_PKEY);
	KUNIT_EXPECT_EQ(test, softrdma_bth_dqpn(bth), 0x10U);
	KUNIT_EXPECT_EQ(test, softrdma_bth_psn(bth), 0xfffff4U);
	KUNIT_EXPECT_TRUE(test, softrdma_bth_ackreq(bth));
}

static void bth_encode_bytes_test(struct kunit *test)
{
	static const u8 want[SOFTRDMA_BTH_LEN] = {
		0x04, 0xa0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x00, 0xab, 0xcd, 0xef,
	};
	static const u8 want_masked[SOFTRDMA_BTH_LEN] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff,
		0x80, 0x00, 0x00, 0x00,
	};
	struct softrdma_bth bth;

	/* SEND ONLY, solicited, two pad bytes, no AckReq. */
	softrdma_bth_fill(&bth, RC_SEND_ONLY,
			  SOFTRDMA_BTH_SE | 2 << SOFTRDMA_BTH_PAD_SHIFT,
			  0x123456, 0xabcdef, false);
	KUNIT_EXPECT_MEMEQ(test, &bth, want, SOFTRDMA_BTH_LEN);
	/* Bits above 24 never reach resv8a or the AckReq bit. */
	softrdma_bth_fill(&bth, RC_ACK, 0, 0xffffffff, 0x7f000000, true);
	KUNIT_EXPECT_MEMEQ(test, &bth, want_masked, SOFTRDMA_BTH_LEN);
}

static void bth_round_trip_test(struct kunit *test)
{
	static const u32 psns[] = { 0, 1, 0x7fffff, 0x800000, 0xfffffe,
				    0xffffff };
	static const u32 qpns[] = { 0, 1, 0x11, 0xabcdef, 0xffffff };
	struct softrdma_bth bth;
	unsigned int i, j, pad;

	for (i = 0; i < ARRAY_SIZE(psns); i++) {
		for (j = 0; j < ARRAY_SIZE(qpns); j++) {
			for (pad = 0; pad < 4; pad++) {
				bool se = pad & 1, ackreq = i & 1;
				u8 flags = pad << SOFTRDMA_BTH_PAD_SHIFT |
					   (se ? SOFTRDMA_BTH_SE : 0);

				softrdma_bth_fill(&bth, RC_FETCH_ADD, flags,
						  qpns[j], psns[i], ackreq);
				KUNIT_EXPECT_EQ(test, bth.opcode, RC_FETCH_ADD);
				KUNIT_EXPECT_EQ(test, softrdma_bth_pad(&bth),
						pad);
				KUNIT_EXPECT_EQ(test, softrdma_bth_se(&bth), se);
				KUNIT_EXPECT_EQ(test, softrdma_bth_dqpn(&bth),
						qpns[j]);
				KUNIT_EXPECT_EQ(test, softrdma_bth_psn(&bth),
						psns[i]);
				KUNIT_EXPECT_EQ(test,
						softrdma_bth_ackreq(&bth),
						ackreq);
				/* TVer 0, no migration request. */
				KUNIT_EXPECT_EQ(test, bth.flags & 0x4f, 0);
			}
		}
	}
}

static void reth_decode_rxe_test(struct kunit *test)
{
	const struct softrdma_reth *reth = (const void *)rxe_write1_reth;

	KUNIT_EXPECT_EQ(test, be64_to_cpu(reth->va), 0x00007fd5e2dfe010ULL);
	KUNIT_EXPECT_EQ(test, ntohl(reth->rkey), 0x285U);
	KUNIT_EXPECT_EQ(test, ntohl(reth->len), 1U);
}

static void aeth_test(struct kunit *test)
{
	static const u8 nak_seq[SOFTRDMA_AETH_LEN] = { 0x60, 0x01, 0x02, 0x03 };
	static const u8 ack[SOFTRDMA_AETH_LEN] = { 0x1f, 0xff, 0xff, 0xff };
	struct softrdma_aeth aeth;

	softrdma_aeth_fill(&aeth, SOFTRDMA_NAK_PSN_SEQ, 0x010203);
	KUNIT_EXPECT_MEMEQ(test, &aeth, nak_seq, SOFTRDMA_AETH_LEN);
	KUNIT_EXPECT_EQ(test, softrdma_aeth_syndrome(&aeth),
			SOFTRDMA_NAK_PSN_SEQ);
	KUNIT_EXPECT_EQ(test, softrdma_aeth_msn(&aeth), 0x010203U);
	/* The MSN wraps at 24 bits and never spills into the syndrome. */
	softrdma_aeth_fill(&aeth, SOFTRDMA_AETH_ACK_NO_CREDIT, 0x12ffffff);
	KUNIT_EXPECT_MEMEQ(test, &aeth, ack, SOFTRDMA_AETH_LEN);
	KUNIT_EXPECT_EQ(test, softrdma_aeth_syndrome(&aeth),
			SOFTRDMA_AETH_ACK_NO_CREDIT);
	KUNIT_EXPECT_EQ(test, softrdma_aeth_msn(&aeth), 0xffffffU);
}

/* Field offsets on the wire (IBTA 9.3.4, 9.3.6, 9.3.7). */
static void ext_header_layout_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_reth, rkey), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_reth, len), 12);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_atomic_eth, rkey), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_atomic_eth, swap_add),
			12);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_atomic_eth, compare),
			20);
	KUNIT_EXPECT_EQ(test, sizeof(struct softrdma_atomic_ack_eth),
			SOFTRDMA_ATOMIC_ACK_ETH_LEN);
	KUNIT_EXPECT_EQ(test, sizeof(struct softrdma_ieth), SOFTRDMA_IETH_LEN);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_bth, qpn), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_bth, apsn), 8);
}

static struct kunit_case softrdma_hdr_cases[] = {
	KUNIT_CASE(bth_encode_rxe_test),
	KUNIT_CASE(bth_decode_rxe_test),
	KUNIT_CASE(bth_encode_bytes_test),
	KUNIT_CASE(bth_round_trip_test),
	KUNIT_CASE(reth_decode_rxe_test),
	KUNIT_CASE(aeth_test),
	KUNIT_CASE(ext_header_layout_test),
	{}
};

static struct kunit_suite softrdma_hdr_suite = {
	.name = "softrdma_hdr",
	.test_cases = softrdma_hdr_cases,
};

/*
 * ICRC against packets rdma_rxe put on the wire (rxe0 on veth0 writing to
 * softroce over RoCEv2/IPv4), from the IPv4 header to the ICRC.
 */
static const u8 rxe_write1[] = {	/* RC WRITE ONLY, 1 byte, PadCnt 3 */
	0x45, 0x00, 0x00, 0x40, 0x0c, 0xa2, 0x40, 0x00, 0x40, 0x11, 0x1a, 0x09,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x10, 0x12, 0xb7,
	0x00, 0x2c, 0x00, 0x00, 0x0a, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x10,
	0x80, 0xff, 0xff, 0xf4, 0x00, 0x00, 0x7f, 0xd5, 0xe2, 0xdf, 0xe0, 0x10,
	0x00, 0x00, 0x02, 0x85, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0x00,
	0xe3, 0xc7, 0x9e, 0x90,
};

static const u8 rxe_write0[] = {	/* RC WRITE ONLY, 0 bytes */
	0x45, 0x00, 0x00, 0x3c, 0x0c, 0x9e, 0x40, 0x00, 0x40, 0x11, 0x1a, 0x11,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x10, 0x12, 0xb7,
	0x00, 0x28, 0x00, 0x00, 0x0a, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x10,
	0x80, 0xff, 0xff, 0xf1, 0x00, 0x00, 0x7f, 0xd5, 0xe2, 0xdf, 0xe0, 0x10,
	0x00, 0x00, 0x02, 0x85, 0x00, 0x00, 0x00, 0x00, 0x86, 0x6a, 0x5e, 0x23,
};

#define ICRC_HDRS	(sizeof(struct iphdr) + sizeof(struct udphdr))

/* The ICRC of @pkt (IPv4 header on, ICRC last) as softrdma computes it. */
static u32 icrc_of(const u8 *pkt, size_t len)
{
	return softrdma_icrc((const struct iphdr *)pkt,
			     (const struct udphdr *)(pkt + sizeof(struct iphdr)),
			     pkt + ICRC_HDRS,
			     len - ICRC_HDRS - SOFTRDMA_ICRC_LEN);
}

/* The ICRC @pkt carries: little-endian, as on the wire. */
static u32 icrc_carried(const u8 *pkt, size_t len)
{
	return get_unaligned_le32(pkt + len - SOFTRDMA_ICRC_LEN);
}

static void icrc_rxe_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, icrc_carried(rxe_write1, sizeof(rxe_write1)),
			0x909ec7e3U);
	KUNIT_EXPECT_EQ(test, icrc_of(rxe_write1, sizeof(rxe_write1)),
			0x909ec7e3U);
	KUNIT_EXPECT_EQ(test, icrc_of(rxe_write0, sizeof(rxe_write0)),
			icrc_carried(rxe_write0, sizeof(rxe_write0)));
}

/*
 * The same over IPv6 (fd00::1 to fd00::2), RC WRITE ONLY of 1 byte, from
 * the IPv6 header to the ICRC.
 */
static const u8 rxe6_write1[] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x11, 0x40, 0xfd, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02, 0xc1, 0x10, 0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00,
	0x0a, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x10, 0x80, 0xff, 0xff, 0xf4,
	0x00, 0x00, 0x7f, 0x4d, 0x3d, 0x3a, 0x40, 0x10, 0x00, 0x00, 0x02, 0x55,
	0x00, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0x00, 0x02, 0x33, 0xf9, 0x0d,
};

#define ICRC6_HDRS	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))

static u32 icrc6_of(const u8 *pkt, size_t len)
{
	return softrdma_icrc6((const struct ipv6hdr *)pkt,
			      (const struct udphdr *)(pkt +
						      sizeof(struct ipv6hdr)),
			      pkt + ICRC6_HDRS,
			      len - ICRC6_HDRS - SOFTRDMA_ICRC_LEN);
}

static void icrc6_rxe_test(struct kunit *test)
{
	u8 p[sizeof(rxe6_write1)];

	KUNIT_EXPECT_EQ(test, icrc_carried(rxe6_write1, sizeof(p)),
			0x0df93302U);
	KUNIT_EXPECT_EQ(test, icrc6_of(rxe6_write1, sizeof(p)), 0x0df93302U);
	/* Traffic class, flow label, hop limit, UDP checksum, resv8a. */
	memcpy(p, rxe6_write1, sizeof(p));
	p[0] = 0x6f;
	p[1] = 0x12;
	p[2] = 0x34;
	p[3] = 0x56;
	p[7] = 1;
	p[46] = 0x12;
	p[47] = 0x34;
	p[52] = 0xc0;
	KUNIT_EXPECT_EQ(test, icrc6_of(p, sizeof(p)), 0x0df93302U);
	/* The addresses count. */
	memcpy(p, rxe6_write1, sizeof(p));
	p[23] ^= 1;
	KUNIT_EXPECT_NE(test, icrc6_of(p, sizeof(p)), 0x0df93302U);
}

/* Bytes the ICRC treats as ones: a router may rewrite them. */
static bool icrc_masked(size_t i)
{
	return i == 1 || i == 8 || i == 10 || i == 11 ||	/* TOS TTL csum */
	       i == 26 || i == 27 ||				/* UDP csum */
	       i == ICRC_HDRS + 4;				/* resv8a */
}

static void icrc_ignores_mutable_test(struct kunit *test)
{
	u8 *p = kunit_kmalloc(test, sizeof(rxe_write1), GFP_KERNEL);
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	memcpy(p, rxe_write1, sizeof(rxe_write1));
	for (i = 0; i < sizeof(rxe_write1) - SOFTRDMA_ICRC_LEN; i++)
		if (icrc_masked(i))
			p[i] = 0x5a ^ i;
	KUNIT_EXPECT_EQ(test, icrc_of(p, sizeof(rxe_write1)), 0x909ec7e3U);
}

static void icrc_sees_every_bit_test(struct kunit *test)
{
	u8 *p = kunit_kmalloc(test, sizeof(rxe_write1), GFP_KERNEL);
	const u32 want = icrc_carried(rxe_write1, sizeof(rxe_write1));
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < sizeof(rxe_write1) - SOFTRDMA_ICRC_LEN; i++) {
		unsigned int bit;

		if (icrc_masked(i))
			continue;
		for (bit = 0; bit < 8; bit++) {
			memcpy(p, rxe_write1, sizeof(rxe_write1));
			p[i] ^= 1 << bit;
			KUNIT_EXPECT_NE_MSG(test, icrc_of(p, sizeof(rxe_write1)),
					    want, "byte %zu bit %u", i, bit);
		}
	}
}

static struct kunit_case softrdma_icrc_cases[] = {
	KUNIT_CASE(icrc_rxe_test),
	KUNIT_CASE(icrc6_rxe_test),
	KUNIT_CASE(icrc_ignores_mutable_test),
	KUNIT_CASE(icrc_sees_every_bit_test),
	{}
};

static struct kunit_suite softrdma_icrc_suite = {
	.name = "softrdma_icrc",
	.test_cases = softrdma_icrc_cases,
};

/* PSN arithmetic: 24 bits, compared within half the space (2^23). */
static void psn_add_wrap_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softrdma_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, softrdma_psn_add(0xfffff0, 0x20), 0x10U);
	KUNIT_EXPECT_EQ(test, softrdma_psn_add(0, 0), 0U);
	KUNIT_EXPECT_EQ(test, softrdma_psn_add(5, 0x1000000), 5U);
	/* Adding 0xffffff steps back by one (the completer's last PSN). */
	KUNIT_EXPECT_EQ(test, softrdma_psn_add(0, 0xffffff), 0xffffffU);
	KUNIT_EXPECT_EQ(test, softrdma_psn_add(0x123456, 0xffffff), 0x123455U);
}

static void psn_diff_wrap_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0, 0xffffff), 1);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0xffffff, 0), -1);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0x10, 0xfffff0), 0x20);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0xfffff0, 0x10), -0x20);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0xabcdef, 0xabcdef), 0);
}

static void psn_diff_edges_test(struct kunit *test)
{
	static const u32 bases[] = { 0, 1, 0x7fffff, 0x800000, 0xabcdef,
				     0xffffff };
	static const s32 steps[] = { 0, 1, -1, 0x7fffff, -0x7fffff,
				     -0x800000 };
	unsigned int i, j;

	/* 2^23 - 1 ahead is still ahead; 2^23 either way reads as behind. */
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0x800000, 0), -0x800000);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0, 0x800000), -0x800000);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0, 0x7fffff), -0x7fffff);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0x800001, 1), -0x800000);
	KUNIT_EXPECT_EQ(test, softrdma_psn_diff(0x800000, 1), 0x7fffff);
	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		for (j = 0; j < ARRAY_SIZE(steps); j++) {
			u32 b = bases[i];
			u32 a = softrdma_psn_add(b, (u32)steps[j]);

			KUNIT_EXPECT_EQ_MSG(test, softrdma_psn_diff(a, b),
					    steps[j], "base %#x step %d", b,
					    steps[j]);
		}
	}
}

static struct kunit_case softrdma_psn_cases[] = {
	KUNIT_CASE(psn_add_wrap_test),
	KUNIT_CASE(psn_diff_wrap_test),
	KUNIT_CASE(psn_diff_edges_test),
	{}
};

static struct kunit_suite softrdma_psn_suite = {
	.name = "softrdma_psn",
	.test_cases = softrdma_psn_cases,
};

/*
 * The RC QP state table: the transitions and attribute masks the RDMA core
 * allows (ib_modify_qp_is_ok(), which softrdma_modify_qp() asks first), then
 * softrdma's own value checks, on a QP of a device with our limits.
 */
struct qp_state_ctx {
	struct softrdma_dev *sdev;
	struct softrdma_qp *qp;
	struct ib_gid_attr sgid;
	struct ib_qp_attr attr;		/* valid values for every attribute */
};

#define QP_RTR_MASK	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | \
			 IB_QP_DEST_QPN | IB_QP_RQ_PSN | \
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)
#define QP_RTS_MASK	(IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | \
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
			 IB_QP_MAX_QP_RD_ATOMIC)
#define QP_INIT_MASK	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | \
			 IB_QP_ACCESS_FLAGS)

static int qp_state_init(struct kunit *test)
{
	struct qp_state_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct ib_qp_attr *a;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->sdev = kunit_kzalloc(test, sizeof(*c->sdev), GFP_KERNEL);
	c->qp = kunit_kzalloc(test, sizeof(*c->qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->sdev);
	KUNIT_ASSERT_NOT_NULL(test, c->qp);
	c->sdev->ibdev.attrs.max_qp_rd_atom = SOFTRDMA_MAX_RD_ATOMIC;
	c->sdev->ibdev.attrs.max_qp_init_rd_atom = SOFTRDMA_MAX_RD_ATOMIC;
	c->qp->sdev = c->sdev;
	c->qp->ibqp.qp_type = IB_QPT_RC;
	c->sgid.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;

	a = &c->attr;
	a->port_num = 1;
	a->pkey_index = 0;
	a->qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			     IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	a->ah_attr.ah_flags = IB_AH_GRH;
	a->ah_attr.grh.sgid_attr = &c->sgid;
	a->path_mtu = IB_MTU_1024;
	a->dest_qp_num = 0x11;
	a->rq_psn = 0xfffff0;
	a->sq_psn = 0x000010;
	a->max_dest_rd_atomic = SOFTRDMA_MAX_RD_ATOMIC;
	a->max_rd_atomic = SOFTRDMA_MAX_RD_ATOMIC;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	test->priv = c;
	return 0;
}

/* Whether softrdma_modify_qp() gets past its checks, as 0 or -EINVAL. */
static int qp_modify_check(struct kunit *test, enum ib_qp_state cur,
			   enum ib_qp_state next, int mask)
{
	struct qp_state_ctx *c = test->priv;

	c->attr.cur_qp_state = cur;
	c->attr.qp_state = next;
	if (!ib_modify_qp_is_ok(cur, next, IB_QPT_RC, mask))
		return -EINVAL;
	return softrdma_check_qp_attr(c->qp, &c->attr, mask);
}

/* Each attribute @req requires must be there; one missing is refused. */
static void qp_expect_required(struct kunit *test, enum ib_qp_state cur,
			       enum ib_qp_state next, int req)
{
	int bit;

	KUNIT_EXPECT_EQ(test, qp_modify_check(test, cur, next, req), 0);
	for (bit = 0; bit < 31; bit++) {
		int m = BIT(bit);

		if (m == IB_QP_STATE || !(req & m))
			continue;
		KUNIT_EXPECT_EQ_MSG(test,
				    qp_modify_check(test, cur, next, req & ~m),
				    -EINVAL, "%d->%d without mask bit %d",
				    cur, next, bit);
	}
}

static void qp_reset_to_init_test(struct kunit *test)
{
	struct qp_state_ctx *c = test->priv;
	const int m = QP_INIT_MASK;

	qp_expect_required(test, IB_QPS_RESET, IB_QPS_INIT, m);
	/* No connection attributes yet. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_INIT,
					      m | IB_QP_SQ_PSN), -EINVAL);
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_INIT,
					      m | IB_QP_AV), -EINVAL);
	c->attr.port_num = 2;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_INIT,
					      m), -EINVAL);
	c->attr.port_num = 1;
	c->attr.pkey_index = 1;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_INIT,
					      m), -EINVAL);
	c->attr.pkey_index = 0;
	c->attr.qp_access_flags |= IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_INIT,
					      m), -EINVAL);
	c->attr.qp_access_flags = 0;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_INIT,
					      m), 0);
	/* INIT to INIT may change the same attributes. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_INIT,
					      m), 0);
}

static void qp_init_to_rtr_test(struct kunit *test)
{
	struct qp_state_ctx *c = test->priv;
	const int m = QP_RTR_MASK;
	struct ib_qp_attr *a = &c->attr;

	qp_expect_required(test, IB_QPS_INIT, IB_QPS_RTR, m);
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR,
					      m | IB_QP_ACCESS_FLAGS |
					      IB_QP_PKEY_INDEX), 0);
	/* Send-side attributes belong to RTR -> RTS. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR,
					      m | IB_QP_SQ_PSN), -EINVAL);
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR,
					      m | IB_QP_TIMEOUT), -EINVAL);

	/* RoCEv2 needs a GRH and its source GID. */
	a->ah_attr.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->ah_attr.ah_flags = IB_AH_GRH;
	a->ah_attr.grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->ah_attr.grh.sgid_attr = &c->sgid;

	a->path_mtu = 0;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->path_mtu = IB_MTU_4096 + 1;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->path_mtu = IB_MTU_256;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			0);
	a->path_mtu = IB_MTU_4096;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			0);

	a->dest_qp_num = 0x1000000;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->dest_qp_num = 0xffffff;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			0);

	a->min_rnr_timer = 32;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->min_rnr_timer = 31;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			0);

	a->max_dest_rd_atomic = SOFTRDMA_MAX_RD_ATOMIC + 1;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			-EINVAL);
	a->max_dest_rd_atomic = 0;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR, m),
			0);
}

static void qp_rtr_to_rts_test(struct kunit *test)
{
	struct qp_state_ctx *c = test->priv;
	const int m = QP_RTS_MASK;
	struct ib_qp_attr *a = &c->attr;

	qp_expect_required(test, IB_QPS_RTR, IB_QPS_RTS, m);
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS,
					      m | IB_QP_CUR_STATE |
					      IB_QP_MIN_RNR_TIMER |
					      IB_QP_ACCESS_FLAGS), 0);
	/* The path is fixed at RTR. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS,
					      m | IB_QP_AV), -EINVAL);
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS,
					      m | IB_QP_RQ_PSN), -EINVAL);

	a->timeout = 32;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS, m),
			-EINVAL);
	a->timeout = 31;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS, m),
			0);
	a->retry_cnt = 8;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS, m),
			-EINVAL);
	a->retry_cnt = 0;
	a->rnr_retry = 8;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS, m),
			-EINVAL);
	a->rnr_retry = 7;
	a->max_rd_atomic = SOFTRDMA_MAX_RD_ATOMIC + 1;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS, m),
			-EINVAL);
	a->max_rd_atomic = SOFTRDMA_MAX_RD_ATOMIC;
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTR, IB_QPS_RTS, m),
			0);
	/* RTS to RTS: only the optional attributes, none required. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTS, IB_QPS_RTS,
					      IB_QP_STATE |
					      IB_QP_MIN_RNR_TIMER), 0);
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RTS, IB_QPS_RTS,
					      IB_QP_STATE | IB_QP_SQ_PSN),
			-EINVAL);
}

static void qp_to_err_and_reset_test(struct kunit *test)
{
	static const enum ib_qp_state from[] = {
		IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS, IB_QPS_SQD, IB_QPS_SQE,
		IB_QPS_ERR,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(from); i++) {
		KUNIT_EXPECT_EQ_MSG(test, qp_modify_check(test, from[i],
							  IB_QPS_ERR,
							  IB_QP_STATE),
				    0, "%d->ERR", from[i]);
		KUNIT_EXPECT_EQ_MSG(test, qp_modify_check(test, from[i],
							  IB_QPS_RESET,
							  IB_QP_STATE),
				    0, "%d->RESET", from[i]);
	}
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_RESET,
					      IB_QP_STATE), 0);
	/* A QP that never left RESET has nothing to flush. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_RESET, IB_QPS_ERR,
					      IB_QP_STATE), -EINVAL);
	/* Leaving ERR goes through RESET. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_ERR, IB_QPS_INIT,
					      QP_INIT_MASK), -EINVAL);
}

static void qp_illegal_test(struct kunit *test)
{
	static const struct {
		enum ib_qp_state cur, next;
	} bad[] = {
		{ IB_QPS_RESET, IB_QPS_RTR }, { IB_QPS_RESET, IB_QPS_RTS },
		{ IB_QPS_INIT, IB_QPS_RTS }, { IB_QPS_RTR, IB_QPS_INIT },
		{ IB_QPS_RTR, IB_QPS_RTR }, { IB_QPS_RTS, IB_QPS_RTR },
		{ IB_QPS_RTS, IB_QPS_INIT }, { IB_QPS_ERR, IB_QPS_RTS },
		{ IB_QPS_ERR, IB_QPS_RTR },
	};
	const int all = QP_INIT_MASK | QP_RTR_MASK | QP_RTS_MASK;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, qp_modify_check(test, bad[i].cur,
							  bad[i].next, all),
				    -EINVAL, "%d->%d", bad[i].cur, bad[i].next);
		KUNIT_EXPECT_EQ_MSG(test, qp_modify_check(test, bad[i].cur,
							  bad[i].next,
							  IB_QP_STATE),
				    -EINVAL, "%d->%d", bad[i].cur, bad[i].next);
	}
	/* A current state given by the caller is only for RTR and later. */
	KUNIT_EXPECT_EQ(test, qp_modify_check(test, IB_QPS_INIT, IB_QPS_RTR,
					      QP_RTR_MASK | IB_QP_CUR_STATE),
			-EINVAL);
}

static struct kunit_case softrdma_qp_state_cases[] = {
	KUNIT_CASE(qp_reset_to_init_test),
	KUNIT_CASE(qp_init_to_rtr_test),
	KUNIT_CASE(qp_rtr_to_rts_test),
	KUNIT_CASE(qp_to_err_and_reset_test),
	KUNIT_CASE(qp_illegal_test),
	{}
};

static struct kunit_suite softrdma_qp_state_suite = {
	.name = "softrdma_qp_state",
	.init = qp_state_init,
	.test_cases = softrdma_qp_state_cases,
};

kunit_test_suites(&softrdma_util_suite, &softrdma_hdr_suite,
		  &softrdma_icrc_suite, &softrdma_psn_suite,
		  &softrdma_qp_state_suite);

MODULE_DESCRIPTION("KUnit tests for softrdma");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
