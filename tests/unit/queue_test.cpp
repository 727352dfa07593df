// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The provider's send and receive queues against rings in ordinary memory,
// with this test reading what the kernel would.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "aligned_ring.hpp"
#include "queue.hpp"

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint32_t kMaxSge = 2;
constexpr std::uint32_t kSendSlot = SOFTRDMA_SEND_WQE_HDR_SIZE + 64;
constexpr std::uint32_t kRecvSlot = SOFTRDMA_RECV_WQE_HDR_SIZE + kMaxSge * sizeof(softrdma_sge);

struct Mem : AlignedRing {
	explicit Mem(std::uint32_t slot_size) : AlignedRing(kSlots, slot_size) {}
};

softrdma::SendQueue make_sq(Mem &m)
{
	return {*softrdma::RingView::make(m.bytes(), kSlots, kSendSlot), kMaxSge, 64};
}

} // namespace

TEST(SendQueue, WritesHeaderAndSges)
{
	Mem m(kSendSlot);
	auto sq = make_sq(m);
	std::array<ibv_sge, 2> sge{{{0x1000, 10, 0x111}, {0x2000, 20, 0x222}}};
	ibv_send_wr wr{};
	wr.wr_id = 42;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr.sg_list = sge.data();
	wr.num_sge = 2;
	wr.imm_data = 0x01020304;
	wr.wr.rdma.remote_addr = 0xabcdef;
	wr.wr.rdma.rkey = 0x777;
	ASSERT_EQ(sq.post(wr), 0);
	EXPECT_EQ(m.hdr().producer, 1U);

	softrdma_send_wqe h{};
	std::memcpy(&h, m.slot(0).data(), sizeof(h));
	EXPECT_EQ(h.wr_id, 42U);
	EXPECT_EQ(h.opcode, unsigned{IBV_WR_RDMA_WRITE_WITH_IMM});
	EXPECT_EQ(h.flags, unsigned{SOFTRDMA_WQE_SIGNALED | SOFTRDMA_WQE_SOLICITED});
	EXPECT_EQ(h.num_sge, 2U);
	EXPECT_EQ(h.imm_data, 0x01020304U);
	EXPECT_EQ(h.remote_addr, 0xabcdefU);
	EXPECT_EQ(h.rkey, 0x777U);
	std::array<softrdma_sge, 2> got{};
	std::memcpy(got.data(), m.slot(0).subspan(sizeof(h)).data(), sizeof(got));
	EXPECT_EQ(got[1].addr, 0x2000U);
	EXPECT_EQ(got[1].length, 20U);
	EXPECT_EQ(got[1].lkey, 0x222U);
}

TEST(SendQueue, CopiesInlineData)
{
	Mem m(kSendSlot);
	auto sq = make_sq(m);
	const std::string_view a = "hello, ";
	const std::string_view b = "world";
	std::array<ibv_sge, 2> sge{{{reinterpret_cast<std::uintptr_t>(a.data()), 7, 0},
				    {reinterpret_cast<std::uintptr_t>(b.data()), 5, 0}}};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	wr.sg_list = sge.data();
	wr.num_sge = 2;
	ASSERT_EQ(sq.post(wr), 0);
	softrdma_send_wqe h{};
	std::memcpy(&h, m.slot(0).data(), sizeof(h));
	EXPECT_EQ(h.flags, unsigned{SOFTRDMA_WQE_INLINE});
	EXPECT_EQ(h.inline_len, 12U);
	EXPECT_EQ(h.num_sge, 0U);
	EXPECT_EQ(std::memcmp(m.slot(0).subspan(sizeof(h)).data(), "hello, world", 12), 0);
}

TEST(SendQueue, RefusesWhatDoesNotFit)
{
	Mem m(kSendSlot);
	auto sq = make_sq(m);
	std::array<ibv_sge, 3> sge{};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sge.data();
	wr.num_sge = 3;
	EXPECT_EQ(sq.post(wr), EINVAL); // more SGEs than the queue takes
	std::vector<char> big(65);
	ibv_sge one{reinterpret_cast<std::uintptr_t>(big.data()), 65, 0};
	wr.sg_list = &one;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(sq.post(wr), EINVAL); // more inline data than max_inline
	wr.send_flags = 0;
	wr.opcode = static_cast<ibv_wr_opcode>(99);
	EXPECT_EQ(sq.post(wr), EINVAL); // no such opcode
	EXPECT_EQ(m.hdr().producer, 0U);
}

TEST(SendQueue, FullRingIsEnomem)
{
	Mem m(kSendSlot);
	auto sq = make_sq(m);
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	for (std::uint32_t i = 0; i < kSlots; ++i)
		ASSERT_EQ(sq.post(wr), 0);
	EXPECT_EQ(sq.post(wr), ENOMEM);
	m.hdr().consumer = 1; // the kernel took one
	EXPECT_EQ(sq.post(wr), 0);
	EXPECT_EQ(m.hdr().producer, kSlots + 1);
}

TEST(RecvQueue, WritesEntriesAndHonoursLimits)
{
	Mem m(kRecvSlot);
	softrdma::RecvQueue rq(*softrdma::RingView::make(m.bytes(), kSlots, kRecvSlot), kMaxSge);
	std::array<ibv_sge, 3> sge{{{0x10, 1, 2}, {0x20, 3, 4}, {0x30, 5, 6}}};
	ibv_recv_wr wr{};
	wr.wr_id = 7;
	wr.sg_list = sge.data();
	wr.num_sge = 3;
	EXPECT_EQ(rq.post(wr), EINVAL);
	wr.num_sge = 2;
	ASSERT_EQ(rq.post(wr), 0);
	softrdma_recv_wqe h{};
	std::memcpy(&h, m.slot(0).data(), sizeof(h));
	EXPECT_EQ(h.wr_id, 7U);
	EXPECT_EQ(h.num_sge, 2U);
	softrdma_sge s{};
	std::memcpy(&s, m.slot(0).subspan(sizeof(h) + sizeof(s)).data(), sizeof(s));
	EXPECT_EQ(s.addr, 0x20U);
	EXPECT_EQ(s.lkey, 4U);
	for (std::uint32_t i = 1; i < kSlots; ++i)
		ASSERT_EQ(rq.post(wr), 0);
	EXPECT_EQ(rq.post(wr), ENOMEM);
}

// RDMA FLUSH and ATOMIC WRITE: their operands in the WQE, no data; only the
// ibv_wr_* API names them.
TEST(SendQueue, FlushAndAtomicWrite)
{
	Mem m(kSendSlot);
	auto sq = make_sq(m);
	softrdma_wr_hdr f{};
	f.wr_id = 7;
	f.opcode = softrdma::kWrFlush;
	f.flush.rkey = 0x1234;
	f.flush.remote_addr = 0x5000;
	f.flush.length = 4096;
	f.flush.type = 1;
	f.flush.level = 1;
	softrdma_wr_hdr a{};
	a.wr_id = 8;
	a.opcode = softrdma::kWrAtomicWrite;
	a.atomic_write.rkey = 0x4321;
	a.atomic_write.remote_addr = 0x6008;
	constexpr std::array<std::uint8_t, 8> value{1, 2, 3, 4, 5, 6, 7, 8};
	std::memcpy(a.atomic_write.data, value.data(), value.size());
	sq.start();
	sq.begin(f);
	sq.begin(a);
	ASSERT_EQ(sq.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 2U);
	softrdma_send_wqe h{};
	std::memcpy(&h, m.slot(0).data(), sizeof(h));
	EXPECT_EQ(h.opcode, softrdma::kWrFlush);
	EXPECT_EQ(h.num_sge, 0U);
	EXPECT_EQ(h.flush.rkey, 0x1234U);
	EXPECT_EQ(h.flush.remote_addr, 0x5000U);
	EXPECT_EQ(h.flush.length, 4096U);
	EXPECT_EQ(h.flush.type, 1U);
	EXPECT_EQ(h.flush.level, 1U);
	std::memcpy(&h, m.slot(1).data(), sizeof(h));
	EXPECT_EQ(h.opcode, softrdma::kWrAtomicWrite);
	EXPECT_EQ(h.num_sge, 0U);
	EXPECT_EQ(h.atomic_write.rkey, 0x4321U);
	EXPECT_EQ(h.atomic_write.remote_addr, 0x6008U);
	EXPECT_EQ(std::memcmp(h.atomic_write.data, value.data(), value.size()), 0);

	// Neither takes a gather list; ibv_post_send cannot carry them.
	const ibv_sge sge{0x1000, 8, 1};
	sq.start();
	sq.begin(a);
	sq.set_sges({&sge, 1});
	EXPECT_EQ(sq.complete(), EINVAL);
	ibv_send_wr wr{};
	wr.opcode = static_cast<ibv_wr_opcode>(softrdma::kWrFlush);
	EXPECT_EQ(sq.post(wr), EINVAL);
	wr.opcode = static_cast<ibv_wr_opcode>(softrdma::kWrAtomicWrite);
	EXPECT_EQ(sq.post(wr), EINVAL);
	EXPECT_EQ(m.hdr().producer, 2U);
}
