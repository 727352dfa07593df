// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests of the UD wire codecs in roce.h: the DETH and the Q_Key a
 * UD send carries. Compiled into softrdma_kunit.ko: softrdma_kunit.c
 * includes this file.
 */

/* A DETH as a GSI QP sends it: Q_Key 0x80010000, source QP 1. */
static const u8 gsi_deth[SOFTRDMA_DETH_LEN] = {
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};

static void deth_encode_gsi_test(struct kunit *test)
{
	struct softrdma_deth deth;

	memset(&deth, 0xa5, sizeof(deth));
	softrdma_deth_fill(&deth, SOFTRDMA_GSI_QKEY, SOFTRDMA_GSI_QPN);
	KUNIT_EXPECT_MEMEQ(test, &deth, gsi_deth, SOFTRDMA_DETH_LEN);
}

static void deth_decode_test(struct kunit *test)
{
	static const u8 raw[SOFTRDMA_DETH_LEN] = {
		0x11, 0x22, 0x33, 0x44, 0xff, 0xab, 0xcd, 0xef,
	};
	const struct softrdma_deth *deth = (const void *)raw;

	KUNIT_EXPECT_EQ(test, softrdma_deth_qkey(deth), 0x11223344U);
	/* The reserved byte before the source QP is not part of it. */
	KUNIT_EXPECT_EQ(test, softrdma_deth_sqpn(deth), 0xabcdefU);
}

static void deth_masks_sqpn_test(struct kunit *test)
{
	static const u8 want[SOFTRDMA_DETH_LEN] = {
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
	};
	struct softrdma_deth deth;

	softrdma_deth_fill(&deth, 0xffffffff, 0xff000012);
	KUNIT_EXPECT_MEMEQ(test, &deth, want, SOFTRDMA_DETH_LEN);
	KUNIT_EXPECT_EQ(test, softrdma_deth_sqpn(&deth), 0x12U);
}

static void ud_qkey_test(struct kunit *test)
{
	/* The high bit asks for the QP's own Q_Key (IBTA 10.2.5). */
	KUNIT_EXPECT_EQ(test, softrdma_ud_qkey(0x80000000, 0x1234), 0x1234U);
	KUNIT_EXPECT_EQ(test, softrdma_ud_qkey(SOFTRDMA_GSI_QKEY,
					       SOFTRDMA_GSI_QKEY),
			SOFTRDMA_GSI_QKEY);
	KUNIT_EXPECT_EQ(test, softrdma_ud_qkey(0x80000001, 7), 7U);
	KUNIT_EXPECT_EQ(test, softrdma_ud_qkey(0x7fffffff, 7), 0x7fffffffU);
	KUNIT_EXPECT_EQ(test, softrdma_ud_qkey(0x11111111, 7), 0x11111111U);
}

static void ud_layout_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct softrdma_deth), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct softrdma_deth, sqpn), 4);
	/* Transport 011b (UD), SEND Only and SEND Only with Immediate. */
	KUNIT_EXPECT_EQ(test, UD_SEND_ONLY, 0x64);
	KUNIT_EXPECT_EQ(test, UD_SEND_ONLY_IMM, 0x65);
	KUNIT_EXPECT_EQ(test, SOFTRDMA_GRH_SIZE, 40);
}

static struct kunit_case softrdma_ud_cases[] = {
	KUNIT_CASE(deth_encode_gsi_test),
	KUNIT_CASE(deth_decode_test),
	KUNIT_CASE(deth_masks_sqpn_test),
	KUNIT_CASE(ud_qkey_test),
	KUNIT_CASE(ud_layout_test),
	{}
};

static struct kunit_suite softrdma_ud_suite = {
	.name = "softrdma_ud",
	.test_cases = softrdma_ud_cases,
};
