// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// UD, UC and XRC QPs on the send side: the opcodes each QP type takes, the
// QP types a device takes, a UD WQE's destination (the AH's number, the
// remote QP and Q_Key) beside its immediate, and an XRC WQE's remote SRQ,
// through ibv_post_send and the batch builder. The ring is in ordinary
// memory; this test reads what the kernel would.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>

#include <arpa/inet.h>

#include "aligned_ring.hpp"
#include "queue.hpp"
#include "test_ah.hpp"

// The shim's accessor, over the test's AHs.
extern "C" uint32_t softrdma_ah_num(const struct ibv_ah *ah)
{
	return reinterpret_cast<const TestAh *>(ah)->num;
}

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint32_t kMaxSge = 2;
constexpr std::uint32_t kMaxInline = 32;
constexpr std::uint32_t kSlot = SOFTRDMA_SEND_WQE_HDR_SIZE + 64;

struct Sq : AlignedRing {
	explicit Sq(ibv_qp_type type)
		: AlignedRing(kSlots, kSlot),
		  q(*softrdma::RingView::make(bytes(), kSlots, kSlot), kMaxSge, kMaxInline, type)
	{
	}
	softrdma_send_wqe wqe(std::uint32_t i)
	{
		softrdma_send_wqe h{};
		std::memcpy(&h, slot(i).data(), sizeof(h));
		return h;
	}
	softrdma::SendQueue q;
};

softrdma_wr_hdr hdr(ibv_wr_opcode op, std::uint64_t wr_id, std::uint32_t imm = 0)
{
	softrdma_wr_hdr h{};
	h.opcode = op;
	h.wr_id = wr_id;
	h.imm_data = imm;
	return h;
}

ibv_send_wr ud_send(TestAh &ah, ibv_sge &sge)
{
	ibv_send_wr wr{};
	wr.wr_id = 9;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm_data = htonl(0xcafe);
	wr.wr.ud.ah = &ah.ah;
	wr.wr.ud.remote_qpn = 0x123456;
	wr.wr.ud.remote_qkey = 0x11112222;
	return wr;
}

constexpr std::array kAllOps{IBV_WR_RDMA_WRITE,		  IBV_WR_RDMA_WRITE_WITH_IMM,
			     IBV_WR_SEND,		  IBV_WR_SEND_WITH_IMM,
			     IBV_WR_RDMA_READ,		  IBV_WR_ATOMIC_CMP_AND_SWP,
			     IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
			     IBV_WR_BIND_MW,		  IBV_WR_SEND_WITH_INV};

} // namespace

// ibv_post_send on a UD QP: the AH's number, remote QPN and Q_Key go into
// the WQE's ud, the immediate stays in imm_data, the gather list follows.
TEST(UdSendQueue, PostWritesTheDestination)
{
	Sq s(IBV_QPT_UD);
	TestAh ah(0x4321);
	ibv_sge sge{0x1000, 100, 0x77};
	auto wr = ud_send(ah, sge);
	ASSERT_EQ(s.q.post(wr), 0);
	EXPECT_EQ(s.hdr().producer, 1U);
	const auto w = s.wqe(0);
	EXPECT_EQ(w.wr_id, 9U);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_SEND_WITH_IMM});
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_SIGNALED});
	EXPECT_EQ(w.imm_data, htonl(0xcafe));
	EXPECT_EQ(w.ud.ah_num, 0x4321U);
	EXPECT_EQ(w.ud.remote_qpn, 0x123456U);
	EXPECT_EQ(w.ud.remote_qkey, 0x11112222U);
	EXPECT_EQ(w.ud.pkey_index, 0U);
	EXPECT_EQ(w.num_sge, 1U);
	softrdma_sge e{};
	std::memcpy(&e, s.slot(0).subspan(sizeof(w)).data(), sizeof(e));
	EXPECT_EQ(e.addr, 0x1000U);
	EXPECT_EQ(e.length, 100U);
	EXPECT_EQ(e.lkey, 0x77U);

	// A Q_Key with its high bit set goes as it is: the kernel then uses
	// the QP's own. Inline data works as on RC.
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.remote_qkey = 0x80000000;
	const std::string_view text = "datagram";
	sge = {reinterpret_cast<std::uintptr_t>(text.data()), 8, 0};
	wr.send_flags = IBV_SEND_INLINE;
	ASSERT_EQ(s.q.post(wr), 0);
	const auto v = s.wqe(1);
	EXPECT_EQ(v.opcode, unsigned{IBV_WR_SEND});
	EXPECT_EQ(v.ud.remote_qkey, 0x80000000U);
	EXPECT_EQ(v.ud.ah_num, 0x4321U);
	EXPECT_EQ(v.flags, unsigned{SOFTRDMA_WQE_INLINE});
	EXPECT_EQ(v.inline_len, 8U);
	EXPECT_EQ(std::memcmp(s.slot(1).subspan(sizeof(v)).data(), "datagram", 8), 0);
}

// Without an AH, or with an opcode UD does not have, nothing is posted.
TEST(UdSendQueue, RefusesWhatUdCannotSend)
{
	Sq s(IBV_QPT_UD);
	TestAh ah(1);
	ibv_sge sge{0x1000, 4, 1};
	auto wr = ud_send(ah, sge);
	wr.wr.ud.ah = nullptr;
	EXPECT_EQ(s.q.post(wr), EINVAL);
	wr.wr.ud.ah = &ah.ah;
	for (const auto op : kAllOps) {
		wr.opcode = op;
		const bool ok = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
		if (!ok) {
			EXPECT_EQ(s.q.post(wr), EINVAL) << op;
		}
	}
	EXPECT_EQ(s.hdr().producer, 0U);
}

// The batch builder: the address may come before or after the data; a
// request left without one fails the whole batch, and an address on a QP
// that is not UD is an error.
TEST(UdSendBatch, EveryRequestNeedsItsAddress)
{
	Sq s(IBV_QPT_UD);
	TestAh a(7);
	TestAh b(8);
	const ibv_sge sge{0x2000, 16, 3};
	std::array<char, 4> text{'a', 'b', 'c', 'd'};
	const ibv_data_buf buf{text.data(), text.size()};
	s.q.start();
	s.q.begin(hdr(IBV_WR_SEND, 1));
	s.q.set_ud(&a.ah, 0x10, 0x20);
	s.q.set_sges({&sge, 1});
	s.q.begin(hdr(IBV_WR_SEND_WITH_IMM, 2, htonl(42)));
	s.q.set_inline({&buf, 1});
	s.q.set_ud(&b.ah, 0x11, 0x21);
	ASSERT_EQ(s.q.complete(), 0);
	EXPECT_EQ(s.hdr().producer, 2U);
	auto w = s.wqe(0);
	EXPECT_EQ(w.ud.ah_num, 7U);
	EXPECT_EQ(w.ud.remote_qpn, 0x10U);
	EXPECT_EQ(w.ud.remote_qkey, 0x20U);
	EXPECT_EQ(w.num_sge, 1U);
	w = s.wqe(1);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_SEND_WITH_IMM});
	EXPECT_EQ(w.imm_data, htonl(42));
	EXPECT_EQ(w.ud.ah_num, 8U);
	EXPECT_EQ(w.ud.remote_qpn, 0x11U);
	EXPECT_EQ(w.ud.remote_qkey, 0x21U);
	EXPECT_EQ(w.inline_len, 4U);

	// The second request has no address: nothing of the batch is posted.
	s.q.start();
	s.q.begin(hdr(IBV_WR_SEND, 3));
	s.q.set_ud(&a.ah, 1, 2);
	s.q.begin(hdr(IBV_WR_SEND, 4));
	s.q.set_sges({&sge, 1});
	EXPECT_EQ(s.q.complete(), EINVAL);
	// Nor is one whose address has no AH.
	s.q.start();
	s.q.begin(hdr(IBV_WR_SEND, 5));
	s.q.set_ud(nullptr, 1, 2);
	EXPECT_EQ(s.q.complete(), EINVAL);
	EXPECT_EQ(s.hdr().producer, 2U);

	Sq rc(IBV_QPT_RC);
	rc.q.start();
	rc.q.begin(hdr(IBV_WR_SEND, 6));
	rc.q.set_ud(&a.ah, 1, 2);
	EXPECT_EQ(rc.q.complete(), EINVAL);
	EXPECT_EQ(rc.hdr().producer, 0U);
}

// UC takes SEND and RDMA WRITE, with or without immediate, with their
// fields where RC has them; nothing that needs an answer or a window.
TEST(UcSendQueue, TakesSendAndWriteOnly)
{
	Sq s(IBV_QPT_UC);
	ibv_sge sge{0x3000, 8, 5};
	ibv_send_wr wr{};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(3);
	wr.wr.rdma.remote_addr = 0xfeed0000;
	wr.wr.rdma.rkey = 0x5151;
	ASSERT_EQ(s.q.post(wr), 0);
	const auto w = s.wqe(0);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_RDMA_WRITE_WITH_IMM});
	EXPECT_EQ(w.imm_data, htonl(3));
	EXPECT_EQ(w.remote_addr, 0xfeed0000U);
	EXPECT_EQ(w.rkey, 0x5151U);
	std::uint32_t posted = 1;
	for (const auto op : kAllOps) {
		wr.opcode = op;
		const bool ok = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
				op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
		EXPECT_EQ(s.q.post(wr), ok ? 0 : EINVAL) << op;
		posted += ok ? 1 : 0;
		if (posted == kSlots)
			s.hdr().consumer = s.hdr().producer; // the kernel took them
	}
	// A UC QP takes no address.
	TestAh ah(1);
	s.q.start();
	s.q.begin(hdr(IBV_WR_SEND, 1));
	s.q.set_ud(&ah.ah, 1, 1);
	EXPECT_EQ(s.q.complete(), EINVAL);
}

// The opcodes per QP type, the one table both posting APIs use.
TEST(QpTypes, OpcodesPerType)
{
	for (const auto op : kAllOps) {
		EXPECT_TRUE(softrdma::qp_type_opcode(IBV_QPT_RC, op)) << op;
		EXPECT_EQ(softrdma::qp_type_opcode(IBV_QPT_UC, op),
			  op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
				  op == IBV_WR_RDMA_WRITE_WITH_IMM)
			<< op;
		EXPECT_EQ(softrdma::qp_type_opcode(IBV_QPT_UD, op),
			  op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM)
			<< op;
		EXPECT_TRUE(softrdma::qp_type_opcode(IBV_QPT_XRC_SEND, op)) << op;
		EXPECT_FALSE(softrdma::qp_type_opcode(IBV_QPT_XRC_RECV, op)) << op;
	}
	EXPECT_FALSE(softrdma::qp_type_opcode(IBV_QPT_RC, 99));
	// IBTA 1.5's FLUSH and ATOMIC WRITE: RC only.
	EXPECT_FALSE(softrdma::qp_type_opcode(IBV_QPT_XRC_SEND, softrdma::kWrFlush));
	EXPECT_FALSE(softrdma::qp_type_opcode(IBV_QPT_XRC_SEND, softrdma::kWrAtomicWrite));
}

// The QP types a device takes: RC everywhere, UC, UD and XRC on RoCE; the
// types libibverbs knows but we do not offer are EOPNOTSUPP (what test
// suites skip on), a value that is no type EINVAL.
TEST(QpTypes, TypeCheck)
{
	for (const bool iwarp : {false, true}) {
		EXPECT_EQ(softrdma_qp_type_check(IBV_QPT_RC, iwarp), 0);
		EXPECT_EQ(softrdma_qp_type_check(IBV_QPT_UC, iwarp), iwarp ? EOPNOTSUPP : 0);
		EXPECT_EQ(softrdma_qp_type_check(IBV_QPT_UD, iwarp), iwarp ? EOPNOTSUPP : 0);
		EXPECT_EQ(softrdma_qp_type_check(IBV_QPT_XRC_SEND, iwarp), iwarp ? EOPNOTSUPP : 0);
		EXPECT_EQ(softrdma_qp_type_check(IBV_QPT_XRC_RECV, iwarp), iwarp ? EOPNOTSUPP : 0);
		for (const auto t : {IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER})
			EXPECT_EQ(softrdma_qp_type_check(t, iwarp), EOPNOTSUPP) << t;
		EXPECT_EQ(softrdma_qp_type_check(static_cast<ibv_qp_type>(0), iwarp), EINVAL);
		EXPECT_EQ(softrdma_qp_type_check(static_cast<ibv_qp_type>(0x55), iwarp), EINVAL);
	}
}

// An XRC INI QP's WQE names the remote XRC SRQ, from ibv_post_send
// (wr.qp_type.xrc.remote_srqn) and from the batch builder
// (set_xrc_srqn()); other QP types leave the field 0 and refuse the setter.
TEST(Xrc, RemoteSrqn)
{
	Sq s(IBV_QPT_XRC_SEND);
	ibv_sge sge{0x1000, 64, 0x77};
	ibv_send_wr wr{};
	wr.wr_id = 5;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.qp_type.xrc.remote_srqn = 0xabcdef;
	ASSERT_EQ(s.q.post(wr), 0);
	EXPECT_EQ(s.wqe(0).remote_srqn, 0xabcdefU);
	EXPECT_EQ(s.wqe(0).opcode, unsigned{IBV_WR_SEND});

	s.q.start();
	s.q.begin(hdr(IBV_WR_RDMA_WRITE, 6));
	s.q.set_xrc_srqn(0x123);
	s.q.set_sges({&sge, 1});
	ASSERT_EQ(s.q.complete(), 0);
	EXPECT_EQ(s.wqe(1).remote_srqn, 0x123U);
	// Where the kernel reads it (softrdma-abi.h).
	std::uint32_t raw = 0;
	std::memcpy(&raw, s.slot(1).subspan(offsetof(softrdma_send_wqe, remote_srqn)).data(),
		    sizeof(raw));
	EXPECT_EQ(raw, 0x123U);

	Sq rc(IBV_QPT_RC);
	wr.qp_type.xrc.remote_srqn = 0x99;
	ASSERT_EQ(rc.q.post(wr), 0);
	EXPECT_EQ(rc.wqe(0).remote_srqn, 0U);
	rc.q.start();
	rc.q.begin(hdr(IBV_WR_SEND, 7));
	rc.q.set_xrc_srqn(0x99);
	EXPECT_EQ(rc.q.complete(), EINVAL);
}
