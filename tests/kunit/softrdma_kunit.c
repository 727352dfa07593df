// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for softrdma's pure helpers. The helpers are compiled into
 * this module from the same source file softrdma.ko uses.
 */
#include <kunit/test.h>

#include "../../kernel/core/util.c"

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

kunit_test_suite(softrdma_util_suite);

MODULE_DESCRIPTION("KUnit tests for softrdma");
MODULE_LICENSE("Dual BSD/GPL");
