// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The extended verbs as libibverbs calls them: the ibv_wr_* builders and
// the ibv_cq_ex poll, through the function pointers the core sets, over
// rings in ordinary memory. This file plays the shim's part in finding the
// core object of an ibv_qp_ex or ibv_cq_ex.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include <arpa/inet.h>

#include "aligned_ring.hpp"
#include "handles.hpp"
#include "test_ah.hpp"

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint32_t kSlot = SOFTRDMA_SEND_WQE_HDR_SIZE + 64;
constexpr std::uint32_t kRecvSlot = SOFTRDMA_RECV_WQE_HDR_SIZE + 2 * sizeof(softrdma_sge);

// An ibv_qp_ex and its core QP, as the shim's sr_qp holds them.
struct TestQp {
	explicit TestQp(ibv_qp_type type = IBV_QPT_RC, std::uint64_t ops = ~std::uint64_t{0})
		: sqm(kSlots, kSlot), rqm(kSlots, kRecvSlot)
	{
		core.emplace(softrdma::Mapping{}, softrdma::Mapping{},
			     softrdma::SendQueue(*softrdma::RingView::make(sqm.bytes(), kSlots, kSlot),
						 3, 48, type),
			     softrdma::RecvQueue(
				     *softrdma::RingView::make(rqm.bytes(), kSlots, kRecvSlot), 2),
			     softrdma::KickTarget{-1, 0}, false);
		core->qp.set_state(IBV_QPS_RTS);
		qpx.qp_base.qp_type = type;
		softrdma_qp_ex_init(&qpx, ops);
	}
	softrdma_send_wqe wqe(std::uint32_t i)
	{
		softrdma_send_wqe h{};
		std::memcpy(&h, sqm.slot(i).data(), sizeof(h));
		return h;
	}
	ibv_qp_ex qpx{};
	AlignedRing sqm;
	AlignedRing rqm;
	std::optional<softrdma_qp> core;
};

// An ibv_cq_ex and its core CQ.
struct TestCq {
	TestCq() : mem(kSlots, SOFTRDMA_CQE_SIZE)
	{
		core.emplace(softrdma::Mapping{},
			     *softrdma::RingView::make(mem.bytes(), kSlots, SOFTRDMA_CQE_SIZE),
			     true);
		softrdma_cq_ex_init(&cqx);
	}
	// The kernel's side: one more CQE.
	void produce(const softrdma_cqe &c)
	{
		std::memcpy(mem.slot(mem.hdr().producer).data(), &c, sizeof(c));
		mem.hdr().producer += 1;
	}
	ibv_cq_ex cqx{};
	AlignedRing mem;
	std::optional<softrdma_cq> core;
};

TestQp *g_qp;
TestCq *g_cq;

} // namespace

extern "C" struct softrdma_qp *softrdma_qpx_core(struct ibv_qp_ex *qpx)
{
	return qpx == &g_qp->qpx ? &*g_qp->core : nullptr;
}

extern "C" struct softrdma_cq *softrdma_cqx_core(struct ibv_cq_ex *cqx)
{
	return cqx == &g_cq->cqx ? &*g_cq->core : nullptr;
}

// Each builder puts its arguments where the WQE says, after the wr_id and
// flags the caller set; the batch is published at wr_complete.
TEST(VerbsEx, BuildersEncodeTheirFields)
{
	TestQp t;
	g_qp = &t;
	ibv_qp_ex *q = &t.qpx;
	ibv_mr mr{};
	mr.lkey = 0x66;
	ibv_mw mw{};
	mw.rkey = 0x80000201;
	const ibv_mw_bind_info info{&mr, 0x8000, 0x10, IBV_ACCESS_REMOTE_WRITE};
	const ibv_sge sge{0x1000, 4, 0x9};

	q->wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_rdma_write_imm(q, 0x51, 0x2000, htonl(0xabc));
	q->wr_set_sge(q, sge.lkey, sge.addr, sge.length);
	q->wr_id = 2;
	q->wr_flags = 0;
	q->wr_atomic_cmp_swp(q, 0x52, 0x3000, 7, 8);
	q->wr_set_sge_list(q, 1, &sge);
	q->wr_id = 3;
	q->wr_bind_mw(q, &mw, 0x80000202, &info);
	q->wr_id = 4;
	q->wr_send_inv(q, 0x1234);
	q->wr_set_inline_data(q, mr.addr, 0);
	EXPECT_EQ(t.sqm.hdr().producer, 0U);
	ASSERT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(t.sqm.hdr().producer, 4U);

	auto w = t.wqe(0);
	EXPECT_EQ(w.wr_id, 1U);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_RDMA_WRITE_WITH_IMM});
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_SIGNALED});
	EXPECT_EQ(w.imm_data, htonl(0xabc));
	EXPECT_EQ(w.rkey, 0x51U);
	EXPECT_EQ(w.remote_addr, 0x2000U);
	EXPECT_EQ(w.num_sge, 1U);
	w = t.wqe(1);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_ATOMIC_CMP_AND_SWP});
	EXPECT_EQ(w.compare_add, 7U);
	EXPECT_EQ(w.swap, 8U);
	w = t.wqe(2);
	EXPECT_EQ(w.wr_id, 3U);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_BIND_MW});
	EXPECT_EQ(w.flags, 0U); // a bind WQE, not ibv_bind_mw's type 1
	EXPECT_EQ(w.bind_mw.mw_rkey, 0x80000201U);
	EXPECT_EQ(w.bind_mw.new_rkey, 0x80000202U);
	EXPECT_EQ(w.bind_mw.addr, 0x8000U);
	EXPECT_EQ(w.bind_mw.length, 0x10U);
	EXPECT_EQ(w.bind_mw.mr_lkey, 0x66U);
	EXPECT_EQ(w.bind_mw.access, unsigned{IBV_ACCESS_REMOTE_WRITE});
	EXPECT_EQ(mw.rkey, 0x80000201U); // the caller updates it on success
	w = t.wqe(3);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_SEND_WITH_INV});
	EXPECT_EQ(w.imm_data, 0x1234U);
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_INLINE});

	// wr_abort drops a batch.
	q->wr_start(q);
	q->wr_send(q);
	q->wr_abort(q);
	EXPECT_EQ(t.sqm.hdr().producer, 4U);
	g_qp = nullptr;
}

// What the core accepts of create_qp_ex and create_cq_ex.
TEST(VerbsEx, Checks)
{
	ibv_qp_init_attr_ex qa{};
	qa.qp_type = IBV_QPT_RC;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_BIND_MW;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), 0);
	qa.qp_type = IBV_QPT_UC;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), EOPNOTSUPP);
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), 0);
	// Each QP type has the builders of the opcodes it takes, no more.
	constexpr std::uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	constexpr std::uint64_t uc = ud | IBV_QP_EX_WITH_RDMA_WRITE |
				     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	const std::array<std::uint64_t, 7> more{
		IBV_QP_EX_WITH_SEND_WITH_INV,	     IBV_QP_EX_WITH_RDMA_READ,
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		IBV_QP_EX_WITH_BIND_MW,		     IBV_QP_EX_WITH_LOCAL_INV,
		IBV_QP_EX_WITH_TSO};
	for (const auto &[type, ops] : {std::pair{IBV_QPT_UD, ud}, std::pair{IBV_QPT_UC, uc}}) {
		qa.qp_type = type;
		qa.send_ops_flags = ops;
		EXPECT_EQ(softrdma_qp_ex_check(&qa, false), 0) << type;
		if (type == IBV_QPT_UD) {
			qa.send_ops_flags = ops | IBV_QP_EX_WITH_RDMA_WRITE;
			EXPECT_EQ(softrdma_qp_ex_check(&qa, false), EOPNOTSUPP);
		}
		for (const auto m : more) {
			qa.send_ops_flags = ops | m;
			EXPECT_EQ(softrdma_qp_ex_check(&qa, false), EOPNOTSUPP) << type << " " << m;
		}
	}
	qa.qp_type = IBV_QPT_RC;
	qa.send_ops_flags = uc | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_LOCAL_INV;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), 0);
	// One creation flag (multicast loopback blocking, for UD), no other.
	qa.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), 0);
	qa.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), 0);
	qa.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), EOPNOTSUPP);
	qa.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | IBV_QP_CREATE_CVLAN_STRIPPING;
	EXPECT_EQ(softrdma_qp_ex_check(&qa, false), EOPNOTSUPP);

	ibv_cq_init_attr_ex ca{};
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), 0);
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), 0);
	ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);

	// What UCX asks for first: EOPNOTSUPP (its cue to fall back to
	// ibv_create_cq), never EINVAL; likewise any flag, mask bit or
	// completion field the provider does not know.
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);
	ca.flags = 1U << 30;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);
	ca.flags = 0;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);
	ca.comp_mask = 1U << 30;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);
	ca.comp_mask = 0;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | (std::uint64_t{1} << 40);
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);
	ca.wc_flags = IBV_WC_EX_WITH_TM_INFO;
	EXPECT_EQ(softrdma_cq_ex_check(&ca), EOPNOTSUPP);
}

// start_poll / next_poll / end_poll and the readers, as libibverbs calls
// them; the CQ's lock is held from a successful start_poll to end_poll.
TEST(VerbsEx, CqExPollsAndReads)
{
	TestCq t;
	g_cq = &t;
	ibv_cq_ex *c = &t.cqx;
	ibv_poll_cq_attr attr{};
	EXPECT_EQ(c->start_poll(c, &attr), ENOENT);
	softrdma_cqe e{};
	e.wr_id = 11;
	e.status = IBV_WC_SUCCESS;
	e.opcode = IBV_WC_RECV;
	e.byte_len = 99;
	e.imm_data = htonl(5);
	e.flags = SOFTRDMA_CQE_WITH_IMM;
	e.qp_num = 0x12;
	t.produce(e);
	e.wr_id = 12;
	e.status = IBV_WC_WR_FLUSH_ERR;
	e.flags = 0;
	t.produce(e);
	ASSERT_EQ(c->start_poll(c, &attr), 0);
	EXPECT_EQ(c->wr_id, 11U);
	EXPECT_EQ(c->status, IBV_WC_SUCCESS);
	EXPECT_EQ(c->read_opcode(c), IBV_WC_RECV);
	EXPECT_EQ(c->read_byte_len(c), 99U);
	EXPECT_EQ(c->read_imm_data(c), htonl(5));
	EXPECT_EQ(c->read_wc_flags(c), unsigned{IBV_WC_WITH_IMM});
	EXPECT_EQ(c->read_qp_num(c), 0x12U);
	EXPECT_FALSE(t.core->lock.try_lock());
	ASSERT_EQ(c->next_poll(c), 0);
	EXPECT_EQ(c->wr_id, 12U);
	EXPECT_EQ(c->status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(c->next_poll(c), ENOENT);
	c->end_poll(c);
	EXPECT_EQ(t.mem.hdr().consumer, 2U);
	ASSERT_TRUE(t.core->lock.try_lock());
	t.core->lock.unlock();
	attr.comp_mask = 1;
	EXPECT_EQ(c->start_poll(c, &attr), EINVAL);
	g_cq = nullptr;
}

// A UD QP's builders: wr_set_ud_addr (only a UD QP has it) puts the AH's
// number, the remote QP and its Q_Key into the WQE, before or after the
// data; SEND and SEND_WITH_IMM are its only builders.
TEST(VerbsEx, UdBuildersAndAddress)
{
	TestQp t(IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	g_qp = &t;
	ibv_qp_ex *q = &t.qpx;
	EXPECT_EQ(q->wr_rdma_write, nullptr);
	EXPECT_EQ(q->wr_send_inv, nullptr);
	ASSERT_NE(q->wr_set_ud_addr, nullptr);
	TestAh ah(0x99);
	const ibv_sge sge{0x1000, 64, 0x9};
	q->wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_send(q);
	q->wr_set_ud_addr(q, &ah.ah, 0xabcdef, 0x1234);
	q->wr_set_sge(q, sge.lkey, sge.addr, sge.length);
	q->wr_id = 2;
	q->wr_flags = 0;
	q->wr_send_imm(q, htonl(0x77));
	q->wr_set_sge_list(q, 1, &sge);
	q->wr_set_ud_addr(q, &ah.ah, 0x42, 0x80000000);
	ASSERT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(t.sqm.hdr().producer, 2U);
	auto w = t.wqe(0);
	EXPECT_EQ(w.wr_id, 1U);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_SEND});
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_SIGNALED});
	EXPECT_EQ(w.ud.ah_num, 0x99U);
	EXPECT_EQ(w.ud.remote_qpn, 0xabcdefU);
	EXPECT_EQ(w.ud.remote_qkey, 0x1234U);
	EXPECT_EQ(w.num_sge, 1U);
	w = t.wqe(1);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_SEND_WITH_IMM});
	EXPECT_EQ(w.imm_data, htonl(0x77));
	EXPECT_EQ(w.ud.remote_qpn, 0x42U);
	EXPECT_EQ(w.ud.remote_qkey, 0x80000000U);

	// A send without its address fails the batch.
	q->wr_start(q);
	q->wr_send(q);
	q->wr_set_sge(q, sge.lkey, sge.addr, sge.length);
	EXPECT_EQ(q->wr_complete(q), EINVAL);
	EXPECT_EQ(t.sqm.hdr().producer, 2U);
	g_qp = nullptr;

	// RC and UC QPs get no wr_set_ud_addr; UC gets its four builders.
	TestQp uc(IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(uc.qpx.wr_set_ud_addr, nullptr);
	EXPECT_NE(uc.qpx.wr_rdma_write_imm, nullptr);
	EXPECT_EQ(uc.qpx.wr_rdma_read, nullptr);
	TestQp rc;
	EXPECT_EQ(rc.qpx.wr_set_ud_addr, nullptr);
}

// A UD receive's completion: the source QP, the GRH flag (with the
// immediate's), the P_Key index, SL, SLID and path bits, through ibv_wc
// and the ibv_cq_ex readers alike.
TEST(VerbsEx, UdCompletionFields)
{
	softrdma_cqe e{};
	e.wr_id = 21;
	e.status = IBV_WC_SUCCESS;
	e.opcode = IBV_WC_RECV;
	e.byte_len = SOFTRDMA_GRH_SIZE + 100;
	e.qp_num = 0x33;
	e.src_qp = 0xfedcba;
	e.flags = SOFTRDMA_CQE_GRH | SOFTRDMA_CQE_WITH_IMM;
	e.imm_data = htonl(0x5a5a);
	e.pkey_index = 3;
	e.slid = 0x1234;
	e.sl = 5;
	e.dlid_path_bits = 0x7f;
	e.network_hdr_type = SOFTRDMA_NETWORK_IB; // the SL as it came

	ibv_wc wc{};
	softrdma::cqe_to_wc(e, wc);
	EXPECT_EQ(wc.wr_id, 21U);
	EXPECT_EQ(wc.byte_len, SOFTRDMA_GRH_SIZE + 100U);
	EXPECT_EQ(wc.src_qp, 0xfedcbaU);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_GRH | IBV_WC_WITH_IMM});
	EXPECT_EQ(wc.imm_data, htonl(0x5a5a));
	EXPECT_EQ(wc.pkey_index, 3U);
	EXPECT_EQ(wc.slid, 0x1234U);
	EXPECT_EQ(wc.sl, 5U);
	EXPECT_EQ(wc.dlid_path_bits, 0x7fU);
	e.flags = SOFTRDMA_CQE_GRH;
	softrdma::cqe_to_wc(e, wc);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_GRH});

	TestCq t;
	g_cq = &t;
	ibv_cq_ex *c = &t.cqx;
	t.produce(e);
	e.flags = SOFTRDMA_CQE_WITH_IMM; // no GRH: an RC receive
	e.src_qp = 0;
	t.produce(e);
	ibv_poll_cq_attr attr{};
	ASSERT_EQ(c->start_poll(c, &attr), 0);
	EXPECT_EQ(c->read_src_qp(c), 0xfedcbaU);
	EXPECT_EQ(c->read_wc_flags(c), unsigned{IBV_WC_GRH});
	EXPECT_EQ(c->read_slid(c), 0x1234U);
	EXPECT_EQ(c->read_sl(c), 5U);
	EXPECT_EQ(c->read_dlid_path_bits(c), 0x7fU);
	EXPECT_EQ(c->read_byte_len(c), SOFTRDMA_GRH_SIZE + 100U);
	ASSERT_EQ(c->next_poll(c), 0);
	EXPECT_EQ(c->read_wc_flags(c), unsigned{IBV_WC_WITH_IMM});
	EXPECT_EQ(c->read_src_qp(c), 0U);
	c->end_poll(c);
	g_cq = nullptr;
}

// A datagram over RoCEv2: its SL says how it came, as mlx5's does (IPv4 2,
// IPv6 1), where UCX's ud_verbs looks for it, through ibv_wc and the
// ibv_cq_ex readers alike; a completion without a GRH keeps its SL.
TEST(VerbsEx, RoceDatagramSlIsNetworkType)
{
	softrdma_cqe e{};
	e.wr_id = 1;
	e.status = IBV_WC_SUCCESS;
	e.opcode = IBV_WC_RECV;
	e.flags = SOFTRDMA_CQE_GRH;
	e.sl = 0;
	e.network_hdr_type = SOFTRDMA_NETWORK_IPV4;

	ibv_wc wc{};
	softrdma::cqe_to_wc(e, wc);
	EXPECT_EQ(wc.sl, 2U);
	EXPECT_EQ(wc.wc_flags, unsigned{IBV_WC_GRH});
	e.network_hdr_type = SOFTRDMA_NETWORK_IPV6;
	softrdma::cqe_to_wc(e, wc);
	EXPECT_EQ(wc.sl, 1U);
	e.flags = 0; // network_hdr_type means nothing without a GRH
	e.sl = 3;
	softrdma::cqe_to_wc(e, wc);
	EXPECT_EQ(wc.sl, 3U);

	TestCq t;
	g_cq = &t;
	ibv_cq_ex *c = &t.cqx;
	e.flags = SOFTRDMA_CQE_GRH;
	e.network_hdr_type = SOFTRDMA_NETWORK_IPV4;
	t.produce(e);
	e.network_hdr_type = SOFTRDMA_NETWORK_IPV6;
	t.produce(e);
	ibv_poll_cq_attr attr{};
	ASSERT_EQ(c->start_poll(c, &attr), 0);
	EXPECT_EQ(c->read_sl(c), 2U);
	ASSERT_EQ(c->next_poll(c), 0);
	EXPECT_EQ(c->read_sl(c), 1U);
	c->end_poll(c);
	g_cq = nullptr;
}
