// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The provider's ring logic against a ring in ordinary memory, with this
// test playing the kernel's part.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "aligned_ring.hpp"
#include "ring.hpp"

namespace {

// A CQ ring, with this test in the kernel's part.
struct FakeCqRing : AlignedRing {
	explicit FakeCqRing(std::uint32_t n) : AlignedRing(n, SOFTRDMA_CQE_SIZE) {}
	void produce(const softrdma_cqe &cqe)
	{
		std::memcpy(slot(hdr().producer).data(), &cqe, sizeof(cqe));
		hdr().producer++;
	}
};

softrdma_cqe make_cqe(std::uint64_t wr_id)
{
	softrdma_cqe c{};
	c.wr_id = wr_id;
	c.status = IBV_WC_SUCCESS;
	c.opcode = IBV_WC_RECV;
	c.byte_len = static_cast<std::uint32_t>(wr_id * 3);
	c.qp_num = 17;
	return c;
}

} // namespace

TEST(RingView, RejectsBadShapes)
{
	FakeCqRing r(8);
	EXPECT_FALSE(softrdma::RingView::make(r.bytes(), 6, SOFTRDMA_CQE_SIZE));
	EXPECT_FALSE(softrdma::RingView::make(r.bytes(), 16, SOFTRDMA_CQE_SIZE));
	EXPECT_FALSE(softrdma::RingView::make(r.bytes(), 8, 0));
	EXPECT_FALSE(softrdma::RingView::make(r.bytes().subspan(8), 4, SOFTRDMA_CQE_SIZE));
	EXPECT_TRUE(softrdma::RingView::make(r.bytes(), 8, SOFTRDMA_CQE_SIZE));
}

// The kernel's reading of the arm word (kernel/core/verbs.c): a change of
// the upper half asks for the next completion, else of the lower for the
// next solicited one.
static const char *arm_request(std::uint32_t seen, std::uint32_t now)
{
	if (seen == now)
		return "none";
	return ((seen ^ now) & SOFTRDMA_CQ_ARM_NEXT) ? "next" : "solicited";
}

TEST(CqRing, ArmCountsEachKindInItsHalf)
{
	FakeCqRing r(8);
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 8, SOFTRDMA_CQE_SIZE));
	std::uint32_t seen = r.hdr().arm;

	cq.arm(true);
	EXPECT_STREQ(arm_request(seen, r.hdr().arm), "solicited");
	seen = r.hdr().arm;
	cq.arm(false);
	EXPECT_STREQ(arm_request(seen, r.hdr().arm), "next");
	// Both before the kernel looks: the next completion wins.
	seen = r.hdr().arm;
	cq.arm(false);
	cq.arm(true);
	EXPECT_STREQ(arm_request(seen, r.hdr().arm), "next");
	EXPECT_EQ(r.hdr().consumer, 0U);
	EXPECT_EQ(r.hdr().producer, 0U);
}

TEST(CqRing, ArmHalvesWrapApart)
{
	FakeCqRing r(8);
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 8, SOFTRDMA_CQE_SIZE));

	r.hdr().arm = 0x1234ffffU;
	cq.arm(true);
	EXPECT_EQ(r.hdr().arm, 0x12340000U);
	EXPECT_STREQ(arm_request(0x1234ffffU, r.hdr().arm), "solicited");
	r.hdr().arm = 0xffff0007U;
	cq.arm(false);
	EXPECT_EQ(r.hdr().arm, 0x00000007U);
	EXPECT_STREQ(arm_request(0xffff0007U, r.hdr().arm), "next");
}

TEST(CqRing, EmptyPollsNothing)
{
	FakeCqRing r(8);
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 8, SOFTRDMA_CQE_SIZE));
	std::array<ibv_wc, 4> wc{};
	EXPECT_TRUE(cq.empty());
	EXPECT_EQ(cq.poll(wc), 0);
	EXPECT_EQ(r.hdr().consumer, 0U);
}

TEST(CqRing, PollsInOrderAndPublishesConsumer)
{
	FakeCqRing r(4);
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	for (std::uint64_t i = 1; i <= 3; ++i)
		r.produce(make_cqe(i));
	std::array<ibv_wc, 2> wc{};
	ASSERT_EQ(cq.poll(wc), 2);
	EXPECT_EQ(wc[0].wr_id, 1U);
	EXPECT_EQ(wc[1].wr_id, 2U);
	EXPECT_EQ(wc[1].byte_len, 6U);
	EXPECT_EQ(wc[1].opcode, IBV_WC_RECV);
	EXPECT_EQ(wc[1].qp_num, 17U);
	EXPECT_EQ(r.hdr().consumer, 2U);
	ASSERT_EQ(cq.poll(wc), 1);
	EXPECT_EQ(wc[0].wr_id, 3U);
	EXPECT_EQ(cq.poll(wc), 0);
	EXPECT_EQ(r.hdr().consumer, 3U);
}

TEST(CqRing, IndicesWrapAt32Bits)
{
	FakeCqRing r(4);
	r.hdr().producer = 0xfffffffeU;
	r.hdr().consumer = 0xfffffffeU;
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	for (std::uint64_t i = 10; i < 14; ++i)
		r.produce(make_cqe(i));
	EXPECT_EQ(r.hdr().producer, 2U);
	std::array<ibv_wc, 8> wc{};
	ASSERT_EQ(cq.poll(wc), 4);
	for (std::size_t i = 0; i < 4; ++i)
		EXPECT_EQ(wc.at(i).wr_id, 10 + i);
	EXPECT_EQ(r.hdr().consumer, 2U);
}

TEST(CqRing, CorruptProducerIsAnError)
{
	FakeCqRing r(4);
	r.hdr().producer = 5; // five entries in a ring of four
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	std::array<ibv_wc, 8> wc{};
	EXPECT_EQ(cq.poll(wc), -EIO);
	EXPECT_EQ(r.hdr().consumer, 0U);
}

// The completions of one QP go, the others stay in order, across the
// 32-bit wrap of the indices; the kernel may go on producing after.
TEST(CqRing, PurgeDropsOneQpKeepsOrder)
{
	FakeCqRing r(8);
	r.hdr().producer = 0xfffffffdU;
	r.hdr().consumer = 0xfffffffdU;
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 8, SOFTRDMA_CQE_SIZE));
	// wr_ids 1..7, QP 99 on 1, 3, 4 and 7.
	for (std::uint64_t i = 1; i <= 7; ++i) {
		softrdma_cqe c = make_cqe(i);
		if (i == 1 || i == 3 || i == 4 || i == 7)
			c.qp_num = 99;
		r.produce(c);
	}
	EXPECT_EQ(cq.purge(98), 0);
	EXPECT_EQ(r.hdr().consumer, 0xfffffffdU);
	EXPECT_EQ(cq.purge(99), 4);
	EXPECT_EQ(r.hdr().consumer, 0xfffffffdU + 4);
	EXPECT_EQ(cq.purge(99), 0);
	r.produce(make_cqe(8));
	std::array<ibv_wc, 8> wc{};
	ASSERT_EQ(cq.poll(wc), 4);
	EXPECT_EQ(wc[0].wr_id, 2U);
	EXPECT_EQ(wc[1].wr_id, 5U);
	EXPECT_EQ(wc[2].wr_id, 6U);
	EXPECT_EQ(wc[3].wr_id, 8U);
	for (std::size_t i = 0; i < 4; ++i)
		EXPECT_EQ(wc.at(i).qp_num, 17U);
	EXPECT_TRUE(cq.empty());
}

TEST(CqRing, PurgeOfEveryEntryEmptiesTheRing)
{
	FakeCqRing r(4);
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	for (std::uint64_t i = 1; i <= 4; ++i)
		r.produce(make_cqe(i));
	EXPECT_EQ(cq.purge(17), 4);
	EXPECT_EQ(r.hdr().consumer, 4U);
	EXPECT_TRUE(cq.empty());
	r.hdr().producer = 9; // five entries in a ring of four
	EXPECT_EQ(cq.purge(17), -EIO);
	EXPECT_EQ(r.hdr().consumer, 4U);
}

TEST(CqeToWc, MapsFlagsAndImmediate)
{
	softrdma_cqe c = make_cqe(7);
	c.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	c.flags = SOFTRDMA_CQE_WITH_IMM | SOFTRDMA_CQE_GRH;
	c.imm_data = 0x12345678;
	ibv_wc wc{};
	softrdma::cqe_to_wc(c, wc);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_WITH_IMM | IBV_WC_GRH});
	EXPECT_EQ(wc.imm_data, 0x12345678U);

	c.flags = SOFTRDMA_CQE_WITH_INV;
	c.imm_data = 0xabcd;
	softrdma::cqe_to_wc(c, wc);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_WITH_INV});
	EXPECT_EQ(wc.invalidated_rkey, 0xabcdU);

	c.flags = 0;
	c.status = IBV_WC_REM_ACCESS_ERR;
	softrdma::cqe_to_wc(c, wc);
	EXPECT_EQ(wc.wc_flags, 0U);
	EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
}

TEST(CqRingEx, EmptyStartIsEnoent)
{
	FakeCqRing r(4);
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	EXPECT_EQ(cq.start_poll(), ENOENT);
	EXPECT_EQ(r.hdr().consumer, 0U);
}

TEST(CqRingEx, WalksAndConsumesAtEnd)
{
	FakeCqRing r(4);
	r.hdr().producer = r.hdr().consumer = 0xffffffff; // across the wrap
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	softrdma_cqe c = make_cqe(1);
	c.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	c.flags = SOFTRDMA_CQE_WITH_IMM;
	c.imm_data = 0x01020304;
	c.src_qp = 33;
	c.slid = 5;
	c.sl = 2;
	c.dlid_path_bits = 1;
	c.vendor_err = 0x44;
	r.produce(c);
	r.produce(make_cqe(2));
	r.produce(make_cqe(3));

	ASSERT_EQ(cq.start_poll(), 0);
	const ibv_wc &wc = cq.current();
	EXPECT_EQ(wc.wr_id, 1U);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_WITH_IMM});
	EXPECT_EQ(wc.imm_data, 0x01020304U);
	EXPECT_EQ(wc.byte_len, 3U);
	EXPECT_EQ(wc.qp_num, 17U);
	EXPECT_EQ(wc.src_qp, 33U);
	EXPECT_EQ(wc.slid, 5U);
	EXPECT_EQ(wc.sl, 2U);
	EXPECT_EQ(wc.dlid_path_bits, 1U);
	EXPECT_EQ(wc.vendor_err, 0x44U);
	ASSERT_EQ(cq.next_poll(), 0);
	EXPECT_EQ(cq.current().wr_id, 2U);
	EXPECT_EQ(cq.current().wc_flags, 0U);
	EXPECT_EQ(r.hdr().consumer, 0xffffffffU); // nothing handed back yet
	cq.end_poll();
	EXPECT_EQ(r.hdr().consumer, 1U);

	ASSERT_EQ(cq.start_poll(), 0);
	EXPECT_EQ(cq.current().wr_id, 3U);
	EXPECT_EQ(cq.next_poll(), ENOENT);
	EXPECT_EQ(cq.current().wr_id, 3U);
	cq.end_poll();
	EXPECT_EQ(r.hdr().consumer, 2U);
	EXPECT_EQ(cq.start_poll(), ENOENT);

	// A completion arriving during a poll is found by next_poll.
	r.produce(make_cqe(4));
	ASSERT_EQ(cq.start_poll(), 0);
	r.produce(make_cqe(5));
	ASSERT_EQ(cq.next_poll(), 0);
	EXPECT_EQ(cq.current().wr_id, 5U);
	cq.end_poll();
	EXPECT_EQ(r.hdr().consumer, 4U);
}

TEST(CqRingEx, CorruptProducerIsEio)
{
	FakeCqRing r(4);
	r.hdr().producer = 5;
	softrdma::CqRing cq(*softrdma::RingView::make(r.bytes(), 4, SOFTRDMA_CQE_SIZE));
	EXPECT_EQ(cq.start_poll(), EIO);
	EXPECT_EQ(r.hdr().consumer, 0U);
}
