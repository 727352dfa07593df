// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for softrdma. The pure helpers of util.c are compiled into
 * this module from the same source file softrdma.ko uses; the wire codecs
 * are inline in roce.h; the ICRC and the QP attribute checks are called in
 * softrdma.ko, which exports them to KUnit only.
 */
#include <crypto/hash.h>
#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/random.h>
#include <linux/udp.h>
#include <linux/unaligned.h>

#include "../../kernel/core/util.c"
#include "roce.h"
#include "iwarp.h"

static void mtu_roce_test(struct kunit *test)
{
	const unsigned int t = SOFTRDMA_ROCE_OVERHEAD;

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
	const unsigned int t = SOFTRDMA_IWARP_OVERHEAD;

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

/* Every index of a small range, each once; then -EBUSY; then the freed one. */
static void xa_alloc_random_fills_test(struct kunit *test)
{
	struct xarray xa;
	u32 id, i;

	xa_init_flags(&xa, XA_FLAGS_LOCK_BH);
	for (i = 0; i < 64; i++) {
		KUNIT_ASSERT_EQ(test, softrdma_xa_alloc_random(&xa, &id,
							       xa_mk_value(i),
							       XA_LIMIT(1, 64),
							       NULL, 0), 0);
		KUNIT_EXPECT_GE(test, id, 1U);
		KUNIT_EXPECT_LE(test, id, 64U);
		KUNIT_EXPECT_PTR_EQ(test, xa_load(&xa, id), xa_mk_value(i));
	}
	for (i = 1; i <= 64; i++)
		KUNIT_EXPECT_TRUE(test, xa_is_value(xa_load(&xa, i)));
	KUNIT_EXPECT_EQ(test, softrdma_xa_alloc_random(&xa, &id, xa_mk_value(0),
						       XA_LIMIT(1, 64), NULL, 0),
			-EBUSY);
	xa_erase_bh(&xa, 40);
	KUNIT_EXPECT_EQ(test, softrdma_xa_alloc_random(&xa, &id, xa_mk_value(0),
						       XA_LIMIT(1, 64), NULL, 0),
			0);
	KUNIT_EXPECT_EQ(test, id, 40U);
	xa_destroy(&xa);
}

/* Indices to avoid (QP numbers in quarantine) are never given, even last. */
static void xa_alloc_random_avoids_test(struct kunit *test)
{
	static const u32 avoid[] = { 0, 16, 17, 23, 31 };
	struct xarray xa;
	u32 id, i, j;

	xa_init_flags(&xa, XA_FLAGS_LOCK_BH);
	for (i = 0; i < 12; i++) {
		KUNIT_ASSERT_EQ(test, softrdma_xa_alloc_random(&xa, &id,
							       xa_mk_value(i),
							       XA_LIMIT(16, 31),
							       avoid,
							       ARRAY_SIZE(avoid)),
				0);
		for (j = 0; j < ARRAY_SIZE(avoid); j++)
			KUNIT_EXPECT_NE(test, id, avoid[j]);
	}
	KUNIT_EXPECT_EQ(test, softrdma_xa_alloc_random(&xa, &id, xa_mk_value(0),
						       XA_LIMIT(16, 31), avoid,
						       ARRAY_SIZE(avoid)),
			-EBUSY);
	for (j = 1; j < ARRAY_SIZE(avoid); j++)
		KUNIT_EXPECT_NULL(test, xa_load(&xa, avoid[j]));
	xa_destroy(&xa);
}

/*
 * 1024 indices of the 24-bit key space: all 16 parts of the range hit (a
 * part missed: a chance of 10^-27), and no step between consecutive ones
 * three times (about 1 in 10^6; a counter repeats its step every time).
 */
static void xa_alloc_random_spread_test(struct kunit *test)
{
	const u32 n = 1024;
	u32 *ids = kunit_kcalloc(test, n, sizeof(*ids), GFP_KERNEL);
	u32 i, j, parts = 0, most = 0;
	struct xarray xa;

	KUNIT_ASSERT_NOT_NULL(test, ids);
	xa_init_flags(&xa, XA_FLAGS_LOCK_BH);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, softrdma_xa_alloc_random(&xa, &ids[i],
							       xa_mk_value(i),
							       XA_LIMIT(1, 0xffffff),
							       NULL, 0), 0);
		KUNIT_EXPECT_GE(test, ids[i], 1U);
		KUNIT_EXPECT_LE(test, ids[i], 0xffffffU);
		parts |= BIT(ids[i] >> 20);
	}
	KUNIT_EXPECT_EQ(test, hweight32(parts), 16);
	for (i = 1; i < n; i++) {
		u32 times = 0;

		for (j = 1; j < n; j++)
			times += ids[j] - ids[j - 1] == ids[i] - ids[i - 1];
		most = max(most, times);
	}
	KUNIT_EXPECT_LE(test, most, 2U);
	xa_destroy(&xa);
}

static struct kunit_case softrdma_util_cases[] = {
	KUNIT_CASE(mtu_roce_test),
	KUNIT_CASE(mtu_iwarp_test),
	KUNIT_CASE(ring_slots_test),
	KUNIT_CASE(ring_used_test),
	KUNIT_CASE(gid_from_mac_test),
	KUNIT_CASE(xa_alloc_random_fills_test),
	KUNIT_CASE(xa_alloc_random_avoids_test),
	KUNIT_CASE(xa_alloc_random_spread_test),
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

/* The XRCETH (Annex A14): 8 reserved bits, then the 24-bit XRC SRQ. */
static void xrceth_test(struct kunit *test)
{
	static const u8 want[SOFTRDMA_XRCETH_LEN] = { 0x00, 0x34, 0x56, 0x78 };
	static const u8 raw[SOFTRDMA_XRCETH_LEN] = { 0xff, 0xab, 0xcd, 0xef };
	struct softrdma_xrceth x;

	memset(&x, 0xa5, sizeof(x));
	/* The number is cut to 24 bits; the reserved byte is 0. */
	softrdma_xrceth_fill(&x, 0x12345678);
	KUNIT_EXPECT_MEMEQ(test, &x, want, SOFTRDMA_XRCETH_LEN);
	KUNIT_EXPECT_EQ(test, softrdma_xrceth_srqn(&x), 0x345678U);
	/* A peer's reserved bits are not part of it. */
	KUNIT_EXPECT_EQ(test,
			softrdma_xrceth_srqn((const struct softrdma_xrceth *)raw),
			0xabcdefU);
	/* XRC opcodes: the RC ones with the transport bits 101. */
	KUNIT_EXPECT_EQ(test, RC_SEND_ONLY | SOFTRDMA_XRC_TRANSPORT, 0xa4);
	KUNIT_EXPECT_EQ(test, RC_ACK | SOFTRDMA_XRC_TRANSPORT, 0xb1);
	KUNIT_EXPECT_EQ(test, RC_SEND_ONLY_INV | SOFTRDMA_XRC_TRANSPORT, 0xb7);
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
	KUNIT_CASE(xrceth_test),
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

/*
 * Whether the module's CRCs fold (if the CPU can), whatever its trial
 * chose at load; returns the way before. Under the lab's emulator the
 * trial picks the library, and the fold's paths would go untried.
 */
static bool crc_fold_use(bool on)
{
#ifdef CONFIG_X86_64
	return softrdma_crc32_fold_use(on);
#else
	return false;
#endif
}

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

/*
 * The bytes the ICRC masks over IPv6: traffic class and flow label
 * (bytes 0 to 3 but the version nibble), hop limit, UDP checksum, resv8a.
 */
static bool icrc6_masked(size_t i)
{
	return i < 4 || i == 7 || i == ICRC6_HDRS - 2 ||
	       i == ICRC6_HDRS - 1 || i == ICRC6_HDRS + 4;
}

/*
 * Packets with payloads of every length to 300 and a few MTUs', random
 * headers and bytes, over IPv4 and IPv6, folded and not: the ICRC as
 * the spec defines it, crc32_le() over ones for the LRH and the masked
 * headers (byte by byte here), then the payload.
 */
static u32 icrc_spec(const u8 *pkt, size_t hlen, size_t len, bool v6)
{
	static const u8 ones[8] = { 0xff, 0xff, 0xff, 0xff,
				    0xff, 0xff, 0xff, 0xff };
	u32 crc = crc32_le(~0U, ones, sizeof(ones));
	u8 b;
	size_t i;

	for (i = 0; i < hlen + SOFTRDMA_BTH_LEN; i++) {
		b = pkt[i];
		if (v6 ? icrc6_masked(i) : icrc_masked(i))
			b = v6 && i == 0 ? b | 0x0f : 0xff;
		crc = crc32_le(crc, &b, 1);
	}
	return ~crc32_le(crc, pkt + hlen + SOFTRDMA_BTH_LEN, len);
}

static void icrc_payloads_test(struct kunit *test)
{
	static const size_t big[] = { 1024, 1036, 2048, 4096, 4099 };
	const size_t room = ICRC6_HDRS + SOFTRDMA_BTH_LEN + 4099 + 16;
	u8 *buf = kunit_kmalloc(test, room, GFP_KERNEL);
	unsigned int bad = 0, i, on, v6, off;
	size_t len, hlen;
	bool was;
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	get_random_bytes(buf, room);
	for (on = 0; on < 2; on++) {
		was = crc_fold_use(on);
		for (i = 0; i < 301 + ARRAY_SIZE(big); i++) {
			len = i <= 300 ? i : big[i - 301];
			for (v6 = 0; v6 < 2; v6++) {
				off = (i + v6) % 16;
				p = buf + off;
				hlen = v6 ? ICRC6_HDRS : ICRC_HDRS;
				if (icrc_spec(p, hlen, len, v6) !=
				    (v6 ? icrc6_of(p, hlen + SOFTRDMA_BTH_LEN +
						   len + SOFTRDMA_ICRC_LEN) :
				     icrc_of(p, hlen + SOFTRDMA_BTH_LEN + len +
					     SOFTRDMA_ICRC_LEN)) && !bad++)
					kunit_info(test, "first at %zu, v6 %u, fold %u\n",
						   len, v6, on);
			}
		}
		crc_fold_use(was);
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

static struct kunit_case softrdma_icrc_cases[] = {
	KUNIT_CASE(icrc_rxe_test),
	KUNIT_CASE(icrc6_rxe_test),
	KUNIT_CASE(icrc_ignores_mutable_test),
	KUNIT_CASE(icrc_sees_every_bit_test),
	KUNIT_CASE(icrc_payloads_test),
	{}
};

static struct kunit_suite softrdma_icrc_suite = {
	.name = "softrdma_icrc",
	.test_cases = softrdma_icrc_cases,
};

/*
 * The fast CRCs (crc.c: softrdma_crc32() for the ICRC; compat.h:
 * softrdma_crc32c() for MPA) against the library's crc32_le() and crc32c(), from random
 * seeds over random bytes at every alignment: a driver that started from
 * its key instead of the seed, inverted it, or took it byte swapped would
 * differ. Lengths 0 to 300 at each of 16 offsets, then packets of a few
 * KiB, those also with bottom halves off, as the receive path runs.
 */
static u32 crc32_lib(u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}

static u32 crc32c_lib(u32 crc, const void *p, size_t len)
{
	return crc32c(crc, p, len);
}

/* A CRC as computed by @tfm through softrdma_crc_shash(), or by @fast. */
struct crc_impl {
	const char *label;
	struct crypto_shash *tfm;
	u32 (*fast)(u32 crc, const void *p, size_t len);
	u32 (*lib)(u32 crc, const void *p, size_t len);
};

static u32 crc_run(const struct crc_impl *c, u32 seed, const void *p,
		   size_t len)
{
#ifndef SOFTRDMA_HAVE_CRC_ARCH
	if (c->tfm)
		return softrdma_crc_shash(c->tfm, seed, p, len);
#endif
	return c->fast(seed, p, len);
}

#define CRC_OFFS	16
#define CRC_BUF_LEN	(9000 + CRC_OFFS)

static const size_t crc_big[] = { 1024, 1500, 4096, 4099, 9000 };

/* Seeds: 0 and ~0 (what callers pass) and random ones. */
static u32 crc_seed(unsigned int i)
{
	return i % 4 == 0 ? 0 : i % 4 == 1 ? ~0U : get_random_u32();
}

/* How many of @c's CRCs differ from the library's; the first in @first. */
static unsigned int crc_compare(const struct crc_impl *c, const u8 *buf,
				char *first, size_t first_len)
{
	u32 seeds[ARRAY_SIZE(crc_big) * CRC_OFFS];
	u32 got[ARRAY_SIZE(crc_big) * CRC_OFFS];
	unsigned int bad = 0, i, off;
	size_t len;
	u32 seed;

	for (len = 0; len <= 300; len++) {
		for (off = 0; off < CRC_OFFS; off++) {
			seed = crc_seed(len * CRC_OFFS + off);
			if (crc_run(c, seed, buf + off, len) !=
			    c->lib(seed, buf + off, len) && !bad++)
				snprintf(first, first_len,
					 "len %zu off %u seed %#x", len, off,
					 seed);
		}
	}
	local_bh_disable();
	for (i = 0; i < ARRAY_SIZE(got); i++) {
		seeds[i] = crc_seed(i);
		got[i] = crc_run(c, seeds[i], buf + i % CRC_OFFS,
				 crc_big[i / CRC_OFFS]);
	}
	local_bh_enable();
	for (i = 0; i < ARRAY_SIZE(got); i++) {
		len = crc_big[i / CRC_OFFS];
		off = i % CRC_OFFS;
		if (got[i] != c->lib(seeds[i], buf + off, len) && !bad++)
			snprintf(first, first_len, "len %zu off %u seed %#x",
				 len, off, seeds[i]);
	}
	return bad;
}

/* CRC_BUF_LEN random bytes. */
static u8 *crc_buf(struct kunit *test)
{
	u8 *buf = kunit_kmalloc(test, CRC_BUF_LEN, GFP_KERNEL);

	if (buf)
		get_random_bytes(buf, CRC_BUF_LEN);
	return buf;
}

static void crc_check(struct kunit *test, const struct crc_impl *c,
		      const u8 *buf)
{
	char first[64] = "";

	KUNIT_EXPECT_EQ_MSG(test, crc_compare(c, buf, first, sizeof(first)),
			    0U, "%s differs from the library, first at %s",
			    c->label, first);
}

/* @fast (@label) against @lib over a fresh random buffer. */
static void crc_fast_check(struct kunit *test, const char *label,
			   u32 (*fast)(u32 crc, const void *p, size_t len),
			   u32 (*lib)(u32 crc, const void *p, size_t len))
{
	const struct crc_impl c = { .label = label, .fast = fast, .lib = lib };
	u8 *buf = crc_buf(test);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	crc_check(test, &c, buf);
}

static void crc32_fast_test(struct kunit *test)
{
	crc_fast_check(test, "softrdma_crc32()", softrdma_crc32, crc32_lib);
}

#ifdef CONFIG_X86_64
/* The PCLMULQDQ fold itself, whether or not the module chose it. */
static u32 crc32_fold_only(u32 crc, const void *p, size_t len)
{
	if (len < 16)
		return crc32_le(crc, p, len);
	return softrdma_crc32_by_fold(crc, NULL, p, len);
}

static void crc32_fold_test(struct kunit *test)
{
	if (!softrdma_crc32_fold_there())
		kunit_skip(test, "no PCLMULQDQ");
	crc_fast_check(test, "the PCLMULQDQ fold", crc32_fold_only, crc32_lib);
}

static u32 crc32_fold_copy_only(u32 crc, void *dst, const void *src,
				size_t len)
{
	if (len < 16) {
		memcpy(dst, src, len);
		return crc32_le(crc, src, len);
	}
	return softrdma_crc32_by_fold(crc, dst, src, len);
}
#endif

/*
 * A CRC and copy (@copy) against crc32_le() and the bytes: every length to
 * 300 and a few KiB, source and destination each at 16 offsets, the bytes
 * either side of the copy untouched.
 */
static void crc_copy_check(struct kunit *test,
			   u32 (*copy)(u32 crc, void *dst, const void *src,
				       size_t len))
{
	static const size_t lens[] = { 63, 64, 65, 79, 80, 127, 128, 1024,
				       1036, 4096, 4099, 9000 };
	u8 *src = crc_buf(test), *dst;
	unsigned int bad = 0, i, so, dof;
	size_t len, k;
	u32 seed;

	dst = kunit_kmalloc(test, CRC_BUF_LEN + 2 * CRC_OFFS, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < 301 + ARRAY_SIZE(lens); i++) {
		len = i <= 300 ? i : lens[i - 301];
		so = i % CRC_OFFS;
		for (dof = 0; dof < CRC_OFFS; dof++) {
			memset(dst, 0xa5, CRC_BUF_LEN + 2 * CRC_OFFS);
			seed = crc_seed(i + dof);
			if (copy(seed, dst + CRC_OFFS + dof, src + so, len) !=
			    crc32_le(seed, src + so, len) ||
			    memcmp(dst + CRC_OFFS + dof, src + so, len)) {
				bad++;
				continue;
			}
			for (k = 0; k < CRC_OFFS + dof; k++)
				bad += dst[k] != 0xa5;
			for (k = CRC_OFFS + dof + len;
			     k < CRC_BUF_LEN + 2 * CRC_OFFS; k++)
				bad += dst[k] != 0xa5;
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/*
 * Pieces in one hold of the FPU (softrdma_crc32_begin()), the fold's way
 * and the library's: a third, then the rest.
 */
static u32 crc32_held_thirds(u32 crc, const void *p, size_t len)
{
	bool held = softrdma_crc32_begin();

	crc = softrdma_crc32_in(held, crc, p, len / 3);
	crc = softrdma_crc32_in(held, crc, p + len / 3, len - len / 3);
	softrdma_crc32_end(held);
	return crc;
}

/*
 * The same by softrdma_crc32_in2() (an inline: its KUnit copy), whole
 * lanes first, then the rest.
 */
static u32 crc32_held_lanes(u32 crc, const void *p, size_t len)
{
	bool held = softrdma_crc32_begin();
	size_t a = len / 3 & ~(size_t)15;

	crc = softrdma_crc32_in2_kunit(held, crc, p, a, p + a, len - a);
	softrdma_crc32_end(held);
	return crc;
}

/*
 * Every cut of a packet's 1072 bytes (ones, headers, 1 KiB) in two, by
 * softrdma_crc32_in() twice and by softrdma_crc32_in2().
 */
static void crc32_held_cuts(struct kunit *test, const u8 *buf)
{
	const size_t len = 1072;
	unsigned int bad = 0;
	size_t cut;
	bool held;
	u32 crc;

	for (cut = 0; cut <= len; cut++) {
		held = softrdma_crc32_begin();
		crc = softrdma_crc32_in(held, ~0U, buf + cut % 16, cut);
		crc = softrdma_crc32_in(held, crc, buf + cut % 16 + cut,
					len - cut);
		softrdma_crc32_end(held);
		bad += crc != crc32_le(~0U, buf + cut % 16, len);
		held = softrdma_crc32_begin();
		crc = softrdma_crc32_in2_kunit(held, ~0U, buf + cut % 16,
					       cut, buf + cut % 16 + cut,
					       len - cut);
		softrdma_crc32_end(held);
		bad += crc != crc32_le(~0U, buf + cut % 16, len);
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

static void crc32_held_test(struct kunit *test)
{
	u8 *buf = crc_buf(test);
	bool was;
	int on;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (on = 0; on < 2; on++) {
		was = crc_fold_use(on);
		crc_fast_check(test, on ? "softrdma_crc32_in(), the fold's" :
				     "softrdma_crc32_in(), the library's",
			       crc32_held_thirds, crc32_lib);
		crc_fast_check(test, on ? "softrdma_crc32_in2(), the fold's" :
				     "softrdma_crc32_in2(), the library's",
			       crc32_held_lanes, crc32_lib);
		crc32_held_cuts(test, buf);
		crc_fold_use(was);
	}
}

/* softrdma_crc32_copy_in() in one hold of the FPU, as a train is filled. */
static u32 crc32_copy_in_held(u32 crc, void *dst, const void *src, size_t len)
{
	bool held = softrdma_crc32_begin();

	crc = softrdma_crc32_copy_in(held, crc, dst, src, len);
	softrdma_crc32_end(held);
	return crc;
}

static void crc32_copy_test(struct kunit *test)
{
	crc_copy_check(test, softrdma_crc32_copy);
	crc_copy_check(test, crc32_copy_in_held);
#ifdef CONFIG_X86_64
	if (softrdma_crc32_fold_there())
		crc_copy_check(test, crc32_fold_copy_only);
#endif
}

static void crc32c_fast_test(struct kunit *test)
{
	crc_fast_check(test, "softrdma_crc32c()", softrdma_crc32c, crc32c_lib);
}

#ifndef SOFTRDMA_HAVE_CRC_ARCH
/*
 * The crypto driver path itself, whichever the module chose at load: the
 * crypto API's best driver for @alg through softrdma_crc_shash().
 */
static void crc_shash_check(struct kunit *test, const char *alg,
			    u32 (*lib)(u32 crc, const void *p, size_t len))
{
	struct crc_impl c = { .lib = lib };
	struct crypto_shash *tfm;
	u8 *buf = crc_buf(test);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	tfm = crypto_alloc_shash(alg, 0, 0);
	if (IS_ERR(tfm))
		kunit_skip(test, "no %s crypto driver (%ld)", alg,
			   PTR_ERR(tfm));
	c.tfm = tfm;
	c.label = crypto_shash_driver_name(tfm);
	kunit_info(test, "%s: %s\n", alg, c.label);
	crc_check(test, &c, buf);
	crypto_free_shash(tfm);
}

static void crc32c_shash_test(struct kunit *test)
{
	crc_shash_check(test, "crc32c", crc32c_lib);
}
#endif

static struct kunit_case softrdma_crc_cases[] = {
	KUNIT_CASE(crc32_fast_test),
	KUNIT_CASE(crc32c_fast_test),
#ifdef CONFIG_X86_64
	KUNIT_CASE(crc32_fold_test),
#endif
	KUNIT_CASE(crc32_copy_test),
	KUNIT_CASE(crc32_held_test),
#ifndef SOFTRDMA_HAVE_CRC_ARCH
	KUNIT_CASE(crc32c_shash_test),
#endif
	{}
};

static struct kunit_suite softrdma_crc_suite = {
	.name = "softrdma_crc",
	.test_cases = softrdma_crc_cases,
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

/*
 * iWARP framing: MPA CRC32c and markers (RFC 5044), DDP segmentation and
 * its checks (RFC 5041), Terminate (RFC 5040 4.8), with the helpers of
 * kernel/iwarp/mpa.c and ddp.c that softrdma.ko exports to KUnit.
 */
static void mpa_crc32c_rfc3720_test(struct kunit *test)
{
	/* RFC 3720 B.4; the CRC goes on the wire least significant byte first. */
	static const u8 read10[48] = {
		0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
		0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
	};
	u8 b[32];
	int i;

	memset(b, 0, sizeof(b));
	KUNIT_EXPECT_EQ(test, softrdma_mpa_crc(b, 32), 0x8a9136aaU);
	memset(b, 0xff, sizeof(b));
	KUNIT_EXPECT_EQ(test, softrdma_mpa_crc(b, 32), 0x62a8ab43U);
	for (i = 0; i < 32; i++)
		b[i] = i;
	KUNIT_EXPECT_EQ(test, softrdma_mpa_crc(b, 32), 0x46dd794eU);
	for (i = 0; i < 32; i++)
		b[i] = 31 - i;
	KUNIT_EXPECT_EQ(test, softrdma_mpa_crc(b, 32), 0x113fdb5cU);
	KUNIT_EXPECT_EQ(test, softrdma_mpa_crc(read10, sizeof(read10)),
			0xd9963a56U);
}

/*
 * Known FPDUs with markers and CRC, computed outside the kernel (a bitwise
 * CRC32c and marker walk in Python): an untagged Send of "softrdma", MSN 1,
 * at stream offset 0 (a marker ahead of it, FPDUPTR 0), and one of the
 * bytes 0..39 at offset 496 (a marker 16 bytes in, FPDUPTR 16).
 */
static const u8 mpa_send_at0[36] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x1a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x73, 0x6f, 0x66, 0x74, 0x72, 0x64, 0x6d, 0x61, 0x20, 0xd2, 0xb5, 0x08,
};

static const u8 mpa_send_at496_head[24] = {
	0x00, 0x3a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
};

static u32 mpa_send_fpdu(u8 *buf, const void *payload, u32 n, u32 msn,
			 bool crc, bool markers, u32 soff)
{
	softrdma_ddp_untagged_fill((void *)(buf + 2), RDMAP_SEND, true,
				   SOFTRDMA_QN_SEND, msn, 0, 0);
	memcpy(buf + 2 + SOFTRDMA_UNTAGGED_LEN, payload, n);
	return softrdma_fpdu_close_at(buf, SOFTRDMA_UNTAGGED_LEN + n, crc,
				      markers, soff);
}

static void mpa_fpdu_known_test(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 128, GFP_KERNEL);
	u8 payload[40];
	u32 len, i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = mpa_send_fpdu(buf, "softrdma", 8, 1, true, true, 0);
	KUNIT_EXPECT_EQ(test, len, 36U);
	KUNIT_EXPECT_MEMEQ(test, buf, mpa_send_at0, sizeof(mpa_send_at0));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(buf + 32), 0x08b5d220U);

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = i;
	len = mpa_send_fpdu(buf, payload, sizeof(payload), 1, true, true, 496);
	KUNIT_EXPECT_EQ(test, len, 68U);
	KUNIT_EXPECT_MEMEQ(test, buf, mpa_send_at496_head,
			   sizeof(mpa_send_at496_head));
	KUNIT_EXPECT_MEMEQ(test, buf + 24, payload, sizeof(payload));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(buf + 64), 0x5828be30U);

	/* Without markers: the same Send is 32 bytes, its CRC over them. */
	len = mpa_send_fpdu(buf, "softrdma", 8, 1, true, false, 0);
	KUNIT_EXPECT_EQ(test, len, 32U);
	KUNIT_EXPECT_MEMEQ(test, buf, mpa_send_at0 + 4, 28);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(buf + 28),
			softrdma_mpa_crc(buf, 28));
	/* Without CRC the field is there, zero. */
	len = mpa_send_fpdu(buf, "softrdma", 8, 1, false, true, 0);
	KUNIT_EXPECT_EQ(test, len, 36U);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(buf + 32), 0U);
}

/*
 * One FPDU of @ulen ULPDU bytes at stream offset @soff, walked byte by byte:
 * a marker at every stream position that is a multiple of 512, pointing
 * back to the length field; the other bytes are the FPDU without markers;
 * the CRC covers all; the receive side finds the length, checks and strips.
 */
static void mpa_marker_case(struct kunit *test, u8 *plain, u8 *wire,
			    u32 ulen, u32 soff)
{
	u32 plen = 2 + ulen + (-(2 + ulen) & 3) + 4;
	u32 len, w, i = 0, nm = 0, lf, rlen;
	int err;

	for (w = 0; w < ulen; w++)
		plain[2 + w] = (u8)(w * 7 + soff + ulen);
	memcpy(wire + 2, plain + 2, ulen);
	len = softrdma_fpdu_close_at(wire, ulen, true, true, soff);
	softrdma_fpdu_close(plain, ulen, false);
	lf = soff % 512 ? 0 : 4;
	for (w = 0; w < len; w++) {
		if ((soff + w) % 512 == 0) {
			u32 ptr = w ? w - lf : 0;

			KUNIT_EXPECT_LT_MSG(test, w + 4, len,
					    "soff %u ulen %u: marker at the end",
					    soff, ulen);
			KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be16(wire + w), 0,
					    "soff %u ulen %u w %u", soff, ulen, w);
			KUNIT_EXPECT_EQ_MSG(test,
					    get_unaligned_be16(wire + w + 2),
					    ptr, "soff %u ulen %u w %u", soff,
					    ulen, w);
			nm++;
			w += 3;
			continue;
		}
		/* Everything but the CRC field is the plain FPDU's. */
		if (i < plen - 4 && wire[w] != plain[i]) {
			KUNIT_FAIL(test, "soff %u ulen %u: byte %u is %#x, want %#x",
				   soff, ulen, w, wire[w], plain[i]);
			return;
		}
		i++;
	}
	KUNIT_EXPECT_EQ_MSG(test, i, plen, "soff %u ulen %u", soff, ulen);
	KUNIT_EXPECT_EQ_MSG(test, len, plen + 4 * nm, "soff %u ulen %u", soff,
			    ulen);
	KUNIT_EXPECT_EQ(test, softrdma_mpa_markers(soff, plen), nm);
	KUNIT_EXPECT_EQ_MSG(test, get_unaligned_le32(wire + len - 4),
			    softrdma_mpa_crc(wire, len - 4), "soff %u ulen %u",
			    soff, ulen);
	/* Receive: header bytes, then the whole FPDU. */
	KUNIT_EXPECT_EQ(test, softrdma_mpa_hdr_len(soff, true),
			soff % 512 ? 2U : 6U);
	KUNIT_EXPECT_EQ(test, softrdma_mpa_fpdu_len(wire, soff, true, &rlen),
			len);
	KUNIT_EXPECT_EQ(test, rlen, ulen);
	err = softrdma_fpdu_check(wire, len, soff, true, true);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "soff %u ulen %u", soff, ulen);
	KUNIT_EXPECT_MEMEQ(test, wire, plain, plen - 4);
}

static void mpa_markers_every_offset_test(struct kunit *test)
{
	static const u32 ulens[] = { 14, 18, 31, 490, 491, 494, 505, 506, 507,
				     508, 509, 1000, 1430, 4000 };
	static const u32 bases[] = { 0, 0xfffffe00 };
	u8 *plain = kunit_kzalloc(test, 8192, GFP_KERNEL);
	u8 *wire = kunit_kzalloc(test, 8192, GFP_KERNEL);
	u32 b, s, l;

	KUNIT_ASSERT_NOT_NULL(test, plain);
	KUNIT_ASSERT_NOT_NULL(test, wire);
	/* FPDUs start at multiples of 4: every one of the 128 offsets. */
	for (b = 0; b < ARRAY_SIZE(bases); b++)
		for (s = 0; s < 512; s += 4)
			for (l = 0; l < ARRAY_SIZE(ulens); l++)
				mpa_marker_case(test, plain, wire, ulens[l],
						bases[b] + s);
}

static void mpa_markers_roundtrip_stream_test(struct kunit *test)
{
	u8 *tx = kunit_kzalloc(test, 1 << 16, GFP_KERNEL);
	u8 *rx = kunit_kzalloc(test, 1 << 16, GFP_KERNEL);
	u32 soff = 0, roff = 0, k;

	KUNIT_ASSERT_NOT_NULL(test, tx);
	KUNIT_ASSERT_NOT_NULL(test, rx);
	/* A stream of FPDUs of growing sizes, read back as rx.c does. */
	for (k = 0; k < 200; k++) {
		u32 ulen = 14 + (k * 37) % 1500, hl, len, rl, i;

		for (i = 0; i < ulen; i++)
			tx[2 + i] = (u8)(k + i);
		len = softrdma_fpdu_close_at(tx, ulen, true, true, soff);
		soff += len;
		hl = softrdma_mpa_hdr_len(roff, true);
		KUNIT_ASSERT_EQ(test, softrdma_mpa_fpdu_len(tx, roff,
							    true, &rl), len);
		KUNIT_ASSERT_LE(test, hl, len);
		memcpy(rx, tx, len);
		KUNIT_ASSERT_EQ(test, softrdma_fpdu_check(rx, len, roff, true,
							  true), 0);
		KUNIT_EXPECT_EQ(test, get_unaligned_be16(rx), ulen);
		for (i = 0; i < ulen; i++)
			if (rx[2 + i] != (u8)(k + i)) {
				KUNIT_FAIL(test, "FPDU %u byte %u", k, i);
				break;
			}
		roff += len;
	}
	KUNIT_EXPECT_EQ(test, soff, roff);
}

static void mpa_markers_bad_test(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u8 payload[1000];
	u32 len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(payload, 0x5a, sizeof(payload));
	/* A marker that points elsewhere: misaligned FPDU (Terminate 0x03). */
	len = mpa_send_fpdu(buf, payload, sizeof(payload), 1, false, true, 0);
	put_unaligned_be16(508 + 4, buf + 512 + 2);
	KUNIT_EXPECT_EQ(test, softrdma_fpdu_check(buf, len, 0, false, true),
			-EPROTO);
	/* Its two low bits and the reserved field do not count. */
	len = mpa_send_fpdu(buf, payload, sizeof(payload), 1, false, true, 0);
	put_unaligned_be16(508 | 3, buf + 512 + 2);
	put_unaligned_be16(0xffff, buf + 512);
	KUNIT_EXPECT_EQ(test, softrdma_fpdu_check(buf, len, 0, false, true), 0);
	/* But the CRC covers markers, reserved field included. */
	len = mpa_send_fpdu(buf, payload, sizeof(payload), 1, true, true, 0);
	buf[512] ^= 1;
	KUNIT_EXPECT_EQ(test, softrdma_fpdu_check(buf, len, 0, true, true),
			-EBADMSG);
	len = mpa_send_fpdu(buf, payload, sizeof(payload), 1, true, true, 0);
	buf[100] ^= 0x80;
	KUNIT_EXPECT_EQ(test, softrdma_fpdu_check(buf, len, 0, true, true),
			-EBADMSG);
	/* The leading marker must be zero. */
	len = mpa_send_fpdu(buf, payload, sizeof(payload), 1, false, true, 0);
	put_unaligned_be16(4, buf + 2);
	KUNIT_EXPECT_EQ(test, softrdma_fpdu_check(buf, len, 0, false, true),
			-EPROTO);
}

static void mpa_mulpdu_test(struct kunit *test)
{
	static const u32 msss[] = { 0, 256, 536, 1448, 8948, 65483, 65535,
				    100000 };
	u8 *buf = kunit_kzalloc(test, SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	u32 i, s;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	/* Without markers as before: the MSS less length, CRC and 3 of pad. */
	KUNIT_EXPECT_EQ(test, softrdma_mpa_mulpdu(1448, false), 1439U);
	KUNIT_EXPECT_EQ(test, softrdma_mpa_mulpdu(0, false), 247U);
	/* RFC 5044 12.1.2: EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS % 4). */
	KUNIT_EXPECT_EQ(test, softrdma_mpa_mulpdu(1448, true), 1430U);
	KUNIT_EXPECT_EQ(test, softrdma_mpa_mulpdu(1460, true), 1442U);
	KUNIT_EXPECT_EQ(test, softrdma_mpa_mulpdu(65535, true), 65014U);
	/* A full FPDU fits the segment wherever the stream is. */
	for (i = 0; i < ARRAY_SIZE(msss); i++) {
		u32 emss = clamp_t(u32, msss[i], 256, 65535);
		u32 m = softrdma_mpa_mulpdu(msss[i], true);

		for (s = 0; s < 512; s += 4)
			KUNIT_EXPECT_LE_MSG(test,
					    softrdma_fpdu_close_at(buf, m, false,
								   true, s),
					    emss, "mss %u soff %u", msss[i], s);
		m = softrdma_mpa_mulpdu(msss[i], false);
		KUNIT_EXPECT_LE(test, softrdma_fpdu_close_at(buf, m, false,
							     false, 0), emss);
	}
}

/*
 * DDP: a message cut at the MULPDU into FPDUs (markers, CRC, a stream that
 * runs on), received, checked and placed by MO gives the message back.
 */
static void ddp_untagged_segments_test(struct kunit *test)
{
	static const u32 lens[] = { 0, 1, 1411, 1412, 1413, 10000, 65536 };
	u32 mulpdu = softrdma_mpa_mulpdu(1448, true);
	u32 max = mulpdu - SOFTRDMA_UNTAGGED_LEN, soff = 0, msn = 7, i, k;
	u8 *msg = kunit_kzalloc(test, 65536, GFP_KERNEL);
	u8 *got = kunit_kzalloc(test, 65536, GFP_KERNEL);
	u8 *f = kunit_kzalloc(test, SOFTRDMA_FPDU_MAX, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, msg);
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_NOT_NULL(test, f);
	for (i = 0; i < 65536; i++)
		msg[i] = (u8)(i * 13 + (i >> 8));
	for (k = 0; k < ARRAY_SIZE(lens); k++, msn++) {
		u32 len = lens[k], off = 0, segs = 0, placed = 0;
		bool last;

		memset(got, 0, 65536);
		do {
			struct softrdma_ddp_untagged h;
			struct softrdma_term_cause tc;
			u32 n = softrdma_ddp_seg(len, off, max, &last);
			u32 wl, rl;

			softrdma_ddp_untagged_fill((void *)(f + 2), RDMAP_SEND,
						   last, SOFTRDMA_QN_SEND, msn,
						   off, 0);
			memcpy(f + 2 + SOFTRDMA_UNTAGGED_LEN, msg + off, n);
			wl = softrdma_fpdu_close_at(f, SOFTRDMA_UNTAGGED_LEN + n,
						    true, true, soff);
			KUNIT_ASSERT_EQ(test, softrdma_mpa_fpdu_len(f, soff, true,
								    &rl), wl);
			KUNIT_ASSERT_EQ(test, softrdma_fpdu_check(f, wl, soff,
								  true, true), 0);
			soff += wl;
			KUNIT_ASSERT_LE(test, rl, mulpdu);
			KUNIT_ASSERT_TRUE(test,
					  softrdma_ddp_hdr_check(f + 2, rl,
								 SOFTRDMA_QN_AREQ,
								 &tc));
			memcpy(&h, f + 2, sizeof(h));
			KUNIT_EXPECT_EQ(test, ntohl(h.qn), SOFTRDMA_QN_SEND);
			KUNIT_EXPECT_EQ(test, ntohl(h.msn), msn);
			KUNIT_EXPECT_EQ(test, ntohl(h.mo), off);
			KUNIT_EXPECT_EQ(test, !!(h.ddp & SOFTRDMA_DDP_L), last);
			KUNIT_EXPECT_EQ(test, !!(h.ddp & SOFTRDMA_DDP_T), false);
			KUNIT_EXPECT_EQ(test, h.rdmap & SOFTRDMA_RDMAP_OP_MASK,
					RDMAP_SEND);
			KUNIT_ASSERT_TRUE(test, softrdma_ddp_seq_check(ntohl(h.msn),
								       ntohl(h.mo),
								       msn, placed,
								       &tc));
			memcpy(got + ntohl(h.mo), f + 2 + SOFTRDMA_UNTAGGED_LEN,
			       rl - SOFTRDMA_UNTAGGED_LEN);
			placed += rl - SOFTRDMA_UNTAGGED_LEN;
			off += n;
			segs++;
		} while (!last);
		KUNIT_EXPECT_EQ(test, placed, len);
		KUNIT_EXPECT_EQ(test, segs, len ? DIV_ROUND_UP(len, max) : 1);
		KUNIT_EXPECT_MEMEQ(test, got, msg, len);
	}
}

static void ddp_tagged_segments_test(struct kunit *test)
{
	struct softrdma_ddp_tagged h;
	u32 len = 5000, max = 1430 - SOFTRDMA_TAGGED_LEN, off = 0, n;
	bool last;

	do {
		n = softrdma_ddp_seg(len, off, max, &last);
		softrdma_ddp_tagged_fill(&h, RDMAP_WRITE, last, 0x12345678,
					 0xfedcba9876543210ULL + off);
		KUNIT_EXPECT_EQ(test, h.ddp, (u8)(SOFTRDMA_DDP_T |
					    (last ? SOFTRDMA_DDP_L : 0) | 1));
		KUNIT_EXPECT_EQ(test, h.rdmap, 0x40 | RDMAP_WRITE);
		KUNIT_EXPECT_EQ(test, ntohl(h.stag), 0x12345678U);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(h.to),
				0xfedcba9876543210ULL + off);
		KUNIT_EXPECT_EQ(test, last, off + n == len);
		off += n;
	} while (!last);
	KUNIT_EXPECT_EQ(test, off, len);
}

static void ddp_header_bytes_test(struct kunit *test)
{
	/* RDMA Read Request, MSN 2, and a tagged Read Response, on the wire. */
	static const u8 rreq[SOFTRDMA_UNTAGGED_LEN] = {
		0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0,
	};
	static const u8 rresp[SOFTRDMA_TAGGED_LEN] = {
		0x81, 0x42, 0xaa, 0xbb, 0xcc, 0xdd, 0, 0, 0, 1, 0, 0, 0x10, 0,
	};
	struct softrdma_ddp_untagged u;
	struct softrdma_ddp_tagged t;

	softrdma_ddp_untagged_fill(&u, RDMAP_READ_REQ, true, SOFTRDMA_QN_READ,
				   2, 0, 0);
	KUNIT_EXPECT_MEMEQ(test, &u, rreq, sizeof(rreq));
	softrdma_ddp_tagged_fill(&t, RDMAP_READ_RESP, false, 0xaabbccdd,
				 0x100001000ULL);
	KUNIT_EXPECT_MEMEQ(test, &t, rresp, sizeof(rresp));
}

static void ddp_checks_terminate_test(struct kunit *test)
{
	struct softrdma_term_cause tc;
	struct softrdma_ddp_untagged u;
	struct softrdma_ddp_tagged t;

#define EXPECT_CAUSE(l, e, c) do {					\
		KUNIT_EXPECT_EQ(test, tc.layer, l);			\
		KUNIT_EXPECT_EQ(test, tc.etype, e);			\
		KUNIT_EXPECT_EQ(test, tc.code, c);			\
	} while (0)
	softrdma_ddp_untagged_fill(&u, RDMAP_SEND, true, SOFTRDMA_QN_SEND, 1,
				   0, 0);
	KUNIT_EXPECT_TRUE(test, softrdma_ddp_hdr_check((u8 *)&u, 18,
						       SOFTRDMA_QN_AREQ, &tc));
	/* Queue number 3 and up: DDP, untagged buffer, invalid QN. */
	u.qn = htonl(3);
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_hdr_check((u8 *)&u, 18,
							SOFTRDMA_QN_AREQ, &tc));
	EXPECT_CAUSE(1, 2, 0x01);
	/* With RFC 7306 agreed, queues 3 and 4 exist, 5 does not. */
	KUNIT_EXPECT_TRUE(test, softrdma_ddp_hdr_check((u8 *)&u, 18,
						       SOFTRDMA_QN_NUM, &tc));
	u.qn = htonl(SOFTRDMA_QN_NUM);
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_hdr_check((u8 *)&u, 18,
							SOFTRDMA_QN_NUM, &tc));
	EXPECT_CAUSE(1, 2, 0x01);
	u.qn = htonl(SOFTRDMA_QN_TERM);
	KUNIT_EXPECT_TRUE(test, softrdma_ddp_hdr_check((u8 *)&u, 18,
						       SOFTRDMA_QN_AREQ, &tc));
	/* Too short for its header: LLP (MPA), invalid ULPDU length. */
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_hdr_check((u8 *)&u, 17,
							SOFTRDMA_QN_AREQ, &tc));
	EXPECT_CAUSE(2, 0, 0x04);
	/* DDP version 0: untagged 0x06, tagged 0x04. */
	u.ddp &= ~SOFTRDMA_DDP_DV_MASK;
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_hdr_check((u8 *)&u, 18,
							SOFTRDMA_QN_AREQ, &tc));
	EXPECT_CAUSE(1, 2, 0x06);
	softrdma_ddp_tagged_fill(&t, RDMAP_WRITE, true, 1, 0);
	KUNIT_EXPECT_TRUE(test, softrdma_ddp_hdr_check((u8 *)&t, 14,
						       SOFTRDMA_QN_AREQ, &tc));
	t.ddp = SOFTRDMA_DDP_T | 2;
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_hdr_check((u8 *)&t, 14,
							SOFTRDMA_QN_AREQ, &tc));
	EXPECT_CAUSE(1, 1, 0x04);
	/* RDMAP version 2: RDMAP, remote operation, invalid version. */
	softrdma_ddp_tagged_fill(&t, RDMAP_WRITE, true, 1, 0);
	t.rdmap = 2 << 6 | RDMAP_WRITE;
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_hdr_check((u8 *)&t, 14,
							SOFTRDMA_QN_AREQ, &tc));
	EXPECT_CAUSE(0, 2, 0x05);
	/* MSN out of range, then MO not where the message is. */
	KUNIT_EXPECT_TRUE(test, softrdma_ddp_seq_check(5, 1000, 5, 1000, &tc));
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_seq_check(6, 0, 5, 0, &tc));
	EXPECT_CAUSE(1, 2, 0x03);
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_seq_check(4, 0, 5, 0, &tc));
	EXPECT_CAUSE(1, 2, 0x03);
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_seq_check(5, 1412, 5, 0, &tc));
	EXPECT_CAUSE(1, 2, 0x04);
	KUNIT_EXPECT_FALSE(test, softrdma_ddp_seq_check(5, 0, 5, 1412, &tc));
	EXPECT_CAUSE(1, 2, 0x04);
#undef EXPECT_CAUSE
}

static void term_encode_test(struct kunit *test)
{
	struct softrdma_term_cause tc = { .layer = 1, .etype = 2, .code = 4 };
	struct softrdma_ddp_untagged u;
	struct softrdma_ddp_tagged t;
	u8 rreq[SOFTRDMA_UNTAGGED_LEN + SOFTRDMA_RREQ_LEN];
	u8 buf[80];
	u32 n, i;

	/* No header known: the control field alone. */
	memset(buf, 0xa5, sizeof(buf));
	n = softrdma_term_fill(buf, &tc, NULL, 0);
	KUNIT_EXPECT_EQ(test, n, 4U);
	KUNIT_EXPECT_EQ(test, buf[0], 0x12);
	KUNIT_EXPECT_EQ(test, buf[1], 0x04);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 2), 0);
	/* An untagged segment: M and D, its length, its DDP header. */
	softrdma_ddp_untagged_fill(&u, RDMAP_SEND, false, SOFTRDMA_QN_SEND, 3,
				   1412, 0);
	n = softrdma_term_fill(buf, &tc, (u8 *)&u, 1430);
	KUNIT_EXPECT_EQ(test, n, 4U + 2 + SOFTRDMA_UNTAGGED_LEN);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 2), 0xc000);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 4), 1430);
	KUNIT_EXPECT_MEMEQ(test, buf + 6, &u, sizeof(u));
	/* A tagged one: its 14 bytes. RDMAP protection, invalid STag. */
	tc = (struct softrdma_term_cause){ .layer = 0, .etype = 1, .code = 0 };
	softrdma_ddp_tagged_fill(&t, RDMAP_WRITE, true, 0x1234, 0x5678);
	n = softrdma_term_fill(buf, &tc, (u8 *)&t, 100);
	KUNIT_EXPECT_EQ(test, n, 4U + 2 + SOFTRDMA_TAGGED_LEN);
	KUNIT_EXPECT_EQ(test, buf[0], 0x01);
	KUNIT_EXPECT_EQ(test, buf[1], 0x00);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 2), 0xc000);
	KUNIT_EXPECT_MEMEQ(test, buf + 6, &t, sizeof(t));
	/* An RDMA Read Request: R too, and the request copied. */
	softrdma_ddp_untagged_fill((void *)rreq, RDMAP_READ_REQ, true,
				   SOFTRDMA_QN_READ, 1, 0, 0);
	for (i = SOFTRDMA_UNTAGGED_LEN; i < sizeof(rreq); i++)
		rreq[i] = i;
	tc = (struct softrdma_term_cause){ .layer = 0, .etype = 1, .code = 2 };
	n = softrdma_term_fill(buf, &tc, rreq, sizeof(rreq));
	KUNIT_EXPECT_EQ(test, n, 4U + 2 + sizeof(rreq));
	KUNIT_EXPECT_EQ(test, buf[0], 0x01);
	KUNIT_EXPECT_EQ(test, buf[1], 0x02);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + 2), 0xe000);
	KUNIT_EXPECT_MEMEQ(test, buf + 6, rreq, sizeof(rreq));
	/* LLP: MPA CRC error. */
	tc = (struct softrdma_term_cause){ .layer = 2, .etype = 0, .code = 2 };
	n = softrdma_term_fill(buf, &tc, NULL, 0);
	KUNIT_EXPECT_EQ(test, buf[0], 0x20);
	KUNIT_EXPECT_EQ(test, buf[1], 0x02);
}

static struct kunit_case softrdma_iwarp_cases[] = {
	KUNIT_CASE(mpa_crc32c_rfc3720_test),
	KUNIT_CASE(mpa_fpdu_known_test),
	KUNIT_CASE(mpa_markers_every_offset_test),
	KUNIT_CASE(mpa_markers_roundtrip_stream_test),
	KUNIT_CASE(mpa_markers_bad_test),
	KUNIT_CASE(mpa_mulpdu_test),
	KUNIT_CASE(ddp_untagged_segments_test),
	KUNIT_CASE(ddp_tagged_segments_test),
	KUNIT_CASE(ddp_header_bytes_test),
	KUNIT_CASE(ddp_checks_terminate_test),
	KUNIT_CASE(term_encode_test),
	{}
};

static struct kunit_suite softrdma_iwarp_suite = {
	.name = "softrdma_iwarp",
	.test_cases = softrdma_iwarp_cases,
};

/* The UD codecs' suite, and DCQCN's. */
#include "ud_kunit.c"
#include "cc_kunit.c"

kunit_test_suites(&softrdma_util_suite, &softrdma_hdr_suite,
		  &softrdma_icrc_suite, &softrdma_crc_suite,
		  &softrdma_psn_suite, &softrdma_qp_state_suite,
		  &softrdma_iwarp_suite, &softrdma_ud_suite,
		  &softrdma_dcqcn_suite);

MODULE_DESCRIPTION("KUnit tests for softrdma");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
