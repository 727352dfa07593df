// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The send queue's batch builder (the ibv_wr_* API) against a ring in
// ordinary memory, with this test reading what the kernel would.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include <arpa/inet.h>

#include "aligned_ring.hpp"
#include "queue.hpp"

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint32_t kMaxSge = 3;
constexpr std::uint32_t kMaxInline = 48;
constexpr std::uint32_t kSlot = SOFTRDMA_SEND_WQE_HDR_SIZE + 64;

struct Sq : AlignedRing {
	Sq() : AlignedRing(kSlots, kSlot), q(*softrdma::RingView::make(bytes(), kSlots, kSlot),
					     kMaxSge, kMaxInline)
	{
	}
	softrdma_send_wqe wqe(std::uint32_t i)
	{
		softrdma_send_wqe h{};
		std::memcpy(&h, slot(i).data(), sizeof(h));
		return h;
	}
	softrdma_sge sge(std::uint32_t i, std::uint32_t n)
	{
		softrdma_sge s{};
		std::memcpy(&s, slot(i).subspan(sizeof(softrdma_send_wqe) + n * sizeof(s)).data(),
			    sizeof(s));
		return s;
	}
	softrdma::SendQueue q;
};

softrdma_wr_hdr hdr(ibv_wr_opcode op, std::uint64_t wr_id, unsigned flags = 0)
{
	softrdma_wr_hdr h{};
	h.opcode = op;
	h.wr_id = wr_id;
	h.send_flags = flags;
	return h;
}

} // namespace

// Every opcode's header fields land where the ABI puts them.
TEST(SendBatch, EncodesEachOpcode)
{
	struct Case {
		ibv_wr_opcode op;
		std::uint32_t imm;
		std::uint32_t rkey;
		std::uint64_t raddr;
		std::uint64_t cmp;
		std::uint64_t swap;
	};
	const std::array<Case, 8> cases{{
		{IBV_WR_SEND, 0, 0, 0, 0, 0},
		{IBV_WR_SEND_WITH_IMM, htonl(0x11223344), 0, 0, 0, 0},
		{IBV_WR_SEND_WITH_INV, 0xabcd, 0, 0, 0, 0},
		{IBV_WR_RDMA_WRITE, 0, 0x51, 0x1000, 0, 0},
		{IBV_WR_RDMA_WRITE_WITH_IMM, htonl(0x55667788), 0x52, 0x2000, 0, 0},
		{IBV_WR_RDMA_READ, 0, 0x53, 0x3000, 0, 0},
		{IBV_WR_ATOMIC_CMP_AND_SWP, 0, 0x54, 0x4000, 0x1111222233334444, 0x5555666677778888},
		{IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 0x55, 0x5000, 0x99, 0},
	}};
	std::uint64_t id = 100;
	for (const auto &c : cases) {
		Sq m;
		softrdma_wr_hdr h = hdr(c.op, id, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
		h.imm_data = c.imm;
		h.rkey = c.rkey;
		h.remote_addr = c.raddr;
		h.compare_add = c.cmp;
		h.swap = c.swap;
		const ibv_sge s{0xfeed0000, 8, 0x77};
		m.q.start();
		m.q.begin(h);
		m.q.set_sges({&s, 1});
		ASSERT_EQ(m.q.complete(), 0) << c.op;
		EXPECT_EQ(m.hdr().producer, 1U);
		const auto w = m.wqe(0);
		EXPECT_EQ(w.wr_id, id);
		EXPECT_EQ(w.opcode, unsigned{c.op});
		EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_SIGNALED | SOFTRDMA_WQE_FENCE});
		EXPECT_EQ(w.imm_data, c.imm);
		EXPECT_EQ(w.rkey, c.rkey);
		EXPECT_EQ(w.remote_addr, c.raddr);
		EXPECT_EQ(w.compare_add, c.cmp);
		EXPECT_EQ(w.swap, c.swap);
		EXPECT_EQ(w.num_sge, 1U);
		EXPECT_EQ(w.inline_len, 0U);
		EXPECT_EQ(m.sge(0, 0).addr, 0xfeed0000U);
		EXPECT_EQ(m.sge(0, 0).length, 8U);
		EXPECT_EQ(m.sge(0, 0).lkey, 0x77U);
		++id;
	}
}

// The builder and ibv_post_send write the same bytes for the same request.
TEST(SendBatch, SameBytesAsPostSend)
{
	Sq a;
	Sq b;
	std::array<ibv_sge, 2> sge{{{0x1000, 10, 0x111}, {0x2000, 20, 0x222}}};
	ibv_send_wr wr{};
	wr.wr_id = 9;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr.sg_list = sge.data();
	wr.num_sge = 2;
	wr.imm_data = htonl(7);
	wr.wr.rdma.remote_addr = 0xabc;
	wr.wr.rdma.rkey = 0x99;
	ASSERT_EQ(a.q.post(wr), 0);
	softrdma_wr_hdr h = hdr(IBV_WR_RDMA_WRITE_WITH_IMM, 9,
				IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	h.imm_data = htonl(7);
	h.remote_addr = 0xabc;
	h.rkey = 0x99;
	b.q.start();
	b.q.begin(h);
	b.q.set_sges(sge);
	ASSERT_EQ(b.q.complete(), 0);
	EXPECT_EQ(std::memcmp(a.slot(0).data(), b.slot(0).data(), kSlot), 0);
}

TEST(SendBatch, InlineDataListIsCopied)
{
	Sq m;
	std::array<char, 7> x{'i', 'n', 'l', 'i', 'n', 'e', ' '};
	std::array<char, 4> y{'d', 'a', 't', 'a'};
	std::array<char, 8> zbuf{};
	const std::array<ibv_data_buf, 3> bufs{
		{{x.data(), x.size()}, {zbuf.data(), 0}, {y.data(), y.size()}}};
	m.q.start();
	m.q.begin(hdr(IBV_WR_SEND, 1, IBV_SEND_INLINE));
	m.q.set_inline(bufs);
	m.q.begin(hdr(IBV_WR_RDMA_WRITE, 2));
	const ibv_data_buf one{y.data(), y.size()};
	m.q.set_inline({&one, 1});
	ASSERT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 2U);
	auto w = m.wqe(0);
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_INLINE}); // IBV_SEND_INLINE in wr_flags means nothing
	EXPECT_EQ(w.inline_len, 11U);
	EXPECT_EQ(w.num_sge, 0U);
	EXPECT_EQ(std::memcmp(m.slot(0).subspan(sizeof(w)).data(), "inline data", 11), 0);
	w = m.wqe(1);
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_INLINE});
	EXPECT_EQ(w.inline_len, 4U);
	EXPECT_EQ(std::memcmp(m.slot(1).subspan(sizeof(w)).data(), "data", 4), 0);
}

// The last data setter wins, whichever kind it is.
TEST(SendBatch, LaterSetterReplacesData)
{
	Sq m;
	std::array<char, 3> abc{'a', 'b', 'c'};
	const ibv_data_buf b{abc.data(), abc.size()};
	const ibv_sge s{0x10, 1, 2};
	m.q.start();
	m.q.begin(hdr(IBV_WR_SEND, 1));
	m.q.set_inline({&b, 1});
	m.q.set_sges({&s, 1});
	m.q.begin(hdr(IBV_WR_SEND, 2));
	m.q.set_sges({&s, 1});
	m.q.set_inline({&b, 1});
	ASSERT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.wqe(0).flags, 0U);
	EXPECT_EQ(m.wqe(0).num_sge, 1U);
	EXPECT_EQ(m.wqe(0).inline_len, 0U);
	EXPECT_EQ(m.wqe(1).flags, unsigned{SOFTRDMA_WQE_INLINE});
	EXPECT_EQ(m.wqe(1).num_sge, 0U);
	EXPECT_EQ(m.wqe(1).inline_len, 3U);
}

// Nothing is visible to the kernel before complete(), then all at once.
TEST(SendBatch, PublishesOnlyAtComplete)
{
	Sq m;
	const ibv_sge s{0x10, 1, 2};
	m.q.start();
	for (std::uint64_t i = 0; i < 3; ++i) {
		m.q.begin(hdr(IBV_WR_SEND, 10 + i));
		m.q.set_sges({&s, 1});
		EXPECT_EQ(m.hdr().producer, 0U);
	}
	EXPECT_EQ(m.wqe(1).wr_id, 11U); // written, not yet published
	ASSERT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 3U);
	EXPECT_EQ(m.wqe(0).wr_id, 10U);
	// An empty batch publishes nothing new.
	m.q.start();
	EXPECT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 3U);
}

// A WQE's header is written once, with its data: the slot holds nothing of
// a request while its setters may still change it.
TEST(SendBatch, WritesEachHeaderOnce)
{
	Sq m;
	std::array<char, 3> abc{'a', 'b', 'c'};
	const ibv_data_buf b{abc.data(), abc.size()};
	const ibv_sge s{0x10, 1, 2};
	m.q.start();
	m.q.begin(hdr(IBV_WR_SEND, 1));
	m.q.set_sges({&s, 1});
	EXPECT_EQ(m.wqe(0).wr_id, 0U); // the body is there, not the header
	EXPECT_EQ(m.sge(0, 0).addr, 0x10U);
	m.q.set_inline({&b, 1});
	EXPECT_EQ(m.wqe(0).opcode, 0U);
	m.q.begin(hdr(IBV_WR_SEND, 2)); // the first request is finished
	EXPECT_EQ(m.wqe(0).wr_id, 1U);
	EXPECT_EQ(m.wqe(0).flags, unsigned{SOFTRDMA_WQE_INLINE});
	EXPECT_EQ(m.wqe(0).inline_len, 3U);
	EXPECT_EQ(m.wqe(1).wr_id, 0U);
	ASSERT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.wqe(1).wr_id, 2U);
	EXPECT_EQ(m.hdr().producer, 2U);
	// A dropped request leaves its slot's header alone.
	m.q.start();
	m.q.begin(hdr(IBV_WR_RDMA_WRITE, 3));
	m.q.abort();
	EXPECT_EQ(m.wqe(2).wr_id, 0U);
}

TEST(SendBatch, AbortDropsTheBatch)
{
	Sq m;
	m.q.start();
	m.q.begin(hdr(IBV_WR_SEND, 1));
	m.q.begin(hdr(IBV_WR_SEND, 2));
	m.q.abort();
	EXPECT_EQ(m.hdr().producer, 0U);
	// The next batch reuses the slots.
	m.q.start();
	m.q.begin(hdr(IBV_WR_RDMA_WRITE, 3));
	ASSERT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 1U);
	EXPECT_EQ(m.wqe(0).wr_id, 3U);
	EXPECT_EQ(m.wqe(0).opcode, unsigned{IBV_WR_RDMA_WRITE});
}

// A batch that overflows the queue publishes none of its requests.
TEST(SendBatch, OverflowFailsTheWholeBatch)
{
	Sq m;
	m.hdr().producer = m.hdr().consumer = 0xfffffffe; // and across the wrap
	m.q.start();
	for (std::uint64_t i = 0; i <= kSlots; ++i)
		m.q.begin(hdr(IBV_WR_SEND, i));
	EXPECT_EQ(m.q.complete(), ENOMEM);
	EXPECT_EQ(m.hdr().producer, 0xfffffffeU);
	// Exactly full is fine.
	m.q.start();
	for (std::uint64_t i = 0; i < kSlots; ++i)
		m.q.begin(hdr(IBV_WR_SEND, i));
	EXPECT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 0xfffffffeU + kSlots);
	// The kernel consumed one: one more fits.
	m.hdr().consumer += 1;
	m.q.start();
	m.q.begin(hdr(IBV_WR_SEND, 9));
	EXPECT_EQ(m.q.complete(), 0);
	EXPECT_EQ(m.hdr().producer, 0xfffffffeU + kSlots + 1);
}

// A request that does not fit fails complete() with EINVAL, and the
// good requests around it are not published either.
TEST(SendBatch, BadRequestFailsTheWholeBatch)
{
	std::vector<char> big(kMaxInline + 1, 'x');
	const ibv_data_buf too_long{big.data(), big.size()};
	const ibv_data_buf max{big.data(), kMaxInline};
	std::array<ibv_sge, kMaxSge + 1> sges{};
	const ibv_sge s{0x10, 1, 2};

	struct Bad {
		const char *what;
		std::function<void(softrdma::SendQueue &)> add;
	};
	const ibv_data_buf none{nullptr, 0};
	const std::array<Bad, 6> bads{{
		{"inline too long",
		 [&](softrdma::SendQueue &q) {
			 q.begin(hdr(IBV_WR_SEND, 5));
			 q.set_inline({&too_long, 1});
		 }},
		{"too many SGEs",
		 [&](softrdma::SendQueue &q) {
			 q.begin(hdr(IBV_WR_RDMA_WRITE, 5));
			 q.set_sges(sges);
		 }},
		{"inline READ",
		 [&](softrdma::SendQueue &q) {
			 q.begin(hdr(IBV_WR_RDMA_READ, 5));
			 q.set_inline({&none, 1});
		 }},
		{"inline atomic",
		 [&](softrdma::SendQueue &q) {
			 q.begin(hdr(IBV_WR_ATOMIC_FETCH_AND_ADD, 5));
			 q.set_inline({&none, 1});
		 }},
		{"unknown opcode",
		 [](softrdma::SendQueue &q) { q.begin(hdr(static_cast<ibv_wr_opcode>(99), 5)); }},
		{"setter without builder", [&](softrdma::SendQueue &q) { q.set_sges({&s, 1}); }},
	}};
	for (const auto &bad : bads) {
		Sq m;
		m.q.start();
		if (std::string_view(bad.what) != "setter without builder") {
			m.q.begin(hdr(IBV_WR_SEND, 1));
			m.q.set_sges({&s, 1});
		}
		bad.add(m.q);
		m.q.begin(hdr(IBV_WR_SEND, 2));
		m.q.set_inline({&max, 1}); // at the limit: fine on its own
		EXPECT_EQ(m.q.complete(), EINVAL) << bad.what;
		EXPECT_EQ(m.hdr().producer, 0U) << bad.what;
		// The queue works again afterwards.
		m.q.start();
		m.q.begin(hdr(IBV_WR_SEND, 3));
		m.q.set_inline({&max, 1});
		EXPECT_EQ(m.q.complete(), 0) << bad.what;
		EXPECT_EQ(m.hdr().producer, 1U) << bad.what;
		EXPECT_EQ(m.wqe(0).wr_id, 3U) << bad.what;
		EXPECT_EQ(m.wqe(0).inline_len, kMaxInline) << bad.what;
	}
}

// ibv_post_send's path still publishes each request as it goes.
TEST(SendBatch, PostStillPublishesPerRequest)
{
	Sq m;
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	ASSERT_EQ(m.q.post(wr), 0);
	EXPECT_EQ(m.hdr().producer, 1U);
	// An atomic with IBV_SEND_INLINE takes its SGE as an SGE.
	ibv_sge s{0x80, 8, 3};
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_INLINE;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = 0x4000;
	wr.wr.atomic.rkey = 0x44;
	wr.wr.atomic.compare_add = 5;
	ASSERT_EQ(m.q.post(wr), 0);
	EXPECT_EQ(m.hdr().producer, 2U);
	EXPECT_EQ(m.wqe(1).flags, 0U);
	EXPECT_EQ(m.wqe(1).num_sge, 1U);
	EXPECT_EQ(m.wqe(1).compare_add, 5U);
	EXPECT_EQ(m.wqe(1).rkey, 0x44U);
	wr.num_sge = -1;
	EXPECT_EQ(m.q.post(wr), EINVAL);
	EXPECT_EQ(m.hdr().producer, 2U);
}

// A bind WQE: the window's rkey, the new one, the range, the MR's lkey and
// the window's access in its own fields; from ibv_post_send as from the
// builder.
TEST(SendBatch, EncodesBindMw)
{
	ibv_mr mr{};
	mr.lkey = 0x1234ab;
	ibv_mw mw{};
	mw.rkey = 0x80000102;
	const ibv_mw_bind_info info{&mr, 0x7000, 0x300,
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
	std::array<ibv_sge, 1> junk{{{0xdead, 1, 2}}};
	ibv_send_wr wr{};
	wr.wr_id = 42;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = junk.data();
	wr.num_sge = 1; // means nothing to a bind
	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = 0x80000103;
	wr.bind_mw.bind_info = info;
	Sq a;
	ASSERT_EQ(a.q.post(wr), 0);
	const auto w = a.wqe(0);
	EXPECT_EQ(w.wr_id, 42U);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_BIND_MW});
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_SIGNALED});
	EXPECT_EQ(w.bind_mw.mw_rkey, 0x80000102U);
	EXPECT_EQ(w.bind_mw.new_rkey, 0x80000103U);
	EXPECT_EQ(w.bind_mw.addr, 0x7000U);
	EXPECT_EQ(w.bind_mw.length, 0x300U);
	EXPECT_EQ(w.bind_mw.mr_lkey, 0x1234abU);
	EXPECT_EQ(w.bind_mw.access,
		  unsigned{IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE});
	EXPECT_EQ(w.num_sge, 0U);
	EXPECT_EQ(w.inline_len, 0U);
	EXPECT_EQ(w.remote_srqn | w.reserved, 0U);
	// Where the kernel reads them (softrdma-abi.h).
	softrdma_bind_mw_wqe raw{};
	std::memcpy(&raw, a.slot(0).subspan(offsetof(softrdma_send_wqe, bind_mw)).data(),
		    sizeof(raw));
	EXPECT_EQ(raw.mr_lkey, 0x1234abU);
	EXPECT_EQ(raw.length, 0x300U);

	// The builder writes the same bytes; the type 1 form adds its flag.
	Sq b;
	softrdma_wr_hdr h = softrdma::bind_mw_hdr(mw.rkey, 0x80000103, info, false);
	h.wr_id = 42;
	h.send_flags = IBV_SEND_SIGNALED;
	b.q.start();
	b.q.begin(h);
	ASSERT_EQ(b.q.complete(), 0);
	EXPECT_EQ(std::memcmp(a.slot(0).data(), b.slot(0).data(), kSlot), 0);

	Sq c;
	h = softrdma::bind_mw_hdr(mw.rkey, 0x80000103, {nullptr, 0, 0, 0}, true);
	c.q.start();
	c.q.begin(h);
	ASSERT_EQ(c.q.complete(), 0);
	EXPECT_EQ(c.wqe(0).flags, unsigned{SOFTRDMA_WQE_BIND_TYPE1});
	EXPECT_EQ(c.wqe(0).bind_mw.mr_lkey, 0U);
	EXPECT_EQ(c.wqe(0).bind_mw.access, 0U);
	EXPECT_EQ(c.wqe(0).bind_mw.length, 0U);

	// A bind names its window.
	wr.bind_mw.mw = nullptr;
	Sq d;
	EXPECT_EQ(d.q.post(wr), EINVAL);
	EXPECT_EQ(d.hdr().producer, 0U);
}

// A local invalidate carries its key where SEND with Invalidate does.
TEST(SendBatch, EncodesLocalInv)
{
	ibv_send_wr wr{};
	wr.wr_id = 7;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0x80000255;
	wr.num_sge = 3;
	Sq a;
	ASSERT_EQ(a.q.post(wr), 0);
	const auto w = a.wqe(0);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_LOCAL_INV});
	EXPECT_EQ(w.imm_data, 0x80000255U);
	EXPECT_EQ(w.num_sge, 0U);
}
