// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_restate DEV_A GID_A DEV_B GID_B [rxe]
//
// A receive WQE its own MR does not grant, and the way back, as rdma-core's
// own tests (test_mr.py) take it. A is the requester, B the responder;
// with "rxe", B is an rdma_rxe device.
//
// 1. B's receive names an MR of another PD than its QP's; then (not on
//    rdma_rxe, which moves no MR) its MR, moved to another PD by
//    ibv_rereg_mr; then its MR, moved to another address range after the
//    receive was posted. Each time A's SEND completes with
//    IBV_WC_REM_OP_ERR (the responder's NAK is a Remote Operational
//    Error), B's receive with IBV_WC_LOC_PROT_ERR (rdma_rxe:
//    IBV_WC_LOC_QP_OP_ERR), and both QPs are in ERR.
// 2. Then each QP goes back ERR -> RESET -> INIT -> RTR -> RTS with
//    nothing but what ibv_query_qp (every attribute bit) reported for it
//    in RTS, with each transition's usual attribute mask, and a SEND
//    arrives byte-exact again.
#include <infiniband/verbs.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::check_errno;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

constexpr std::size_t kBuf = 64 * 1024;
constexpr std::uint32_t kMsg = 3000;	// three packets at MTU 1024
// Every attribute bit of ibv_query_qp, as rdma-core's tests ask.
constexpr int kAllAttrs = 0x1ffffff;

struct Args {
	const char *dev_a, *gid_a, *dev_b, *gid_b;
	bool rxe = false;	// B is rdma_rxe
};

void fill(std::uint8_t *p, std::size_t len, std::uint8_t seed)
{
	for (std::size_t i = 0; i < len; ++i)
		p[i] = static_cast<std::uint8_t>(seed + i * 7);
}

// Wait for one completion on cq: its wr_id and status must be those given.
bool expect(ibv_cq *cq, std::uint64_t id, ibv_wc_status st, const std::string &what,
	    ibv_wc *out = nullptr)
{
	ibv_wc wc{};
	const bool got = wait_wc(cq, wc);
	const bool ok = got && wc.wr_id == id && wc.status == st;
	check(ok, what + " completes with " + ibv_wc_status_str(st) + " (got " +
			  (got ? ibv_wc_status_str(wc.status) : "no completion") + ", wr_id " +
			  std::to_string(wc.wr_id) + ")");
	if (out)
		*out = wc;
	return ok;
}

bool post_send(const RcSide &s, std::uint64_t id, std::size_t off, std::uint32_t len)
{
	ibv_sge sge{s.addr(off), len, s.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(s.qp, &wr, &bad) == 0;
}

bool post_recv(ibv_qp *qp, std::uint64_t id, std::uintptr_t addr, std::uint32_t len,
	       std::uint32_t lkey)
{
	ibv_sge sge{addr, len, lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad) == 0;
}

// What query_qp reported for a QP in RTS.
struct Saved {
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
};

bool query_all(ibv_qp *qp, Saved &s)
{
	return ibv_query_qp(qp, &s.attr, kAllAttrs, &s.init) == 0;
}

// ERR -> RESET, then INIT, RTR and RTS with the masks of each transition
// (pyverbs' to_rts) and the attributes of saved, unchanged.
void restate(ibv_qp *qp, const Saved &saved, const std::string &who)
{
	ibv_qp_attr r{};
	r.qp_state = IBV_QPS_RESET;
	check_errno(ibv_modify_qp(qp, &r, IBV_QP_STATE), 0, who + ": ERR -> RESET");
	ibv_qp_attr a = saved.attr;
	a.qp_state = IBV_QPS_INIT;
	check_errno(ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS),
		    0, who + ": RESET -> INIT with the attributes query reported");
	a = saved.attr;
	a.qp_state = IBV_QPS_RTR;
	check_errno(ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER),
		    0, who + ": INIT -> RTR with the attributes query reported");
	a = saved.attr;
	a.qp_state = IBV_QPS_RTS;
	check_errno(ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					  IBV_QP_MAX_QP_RD_ATOMIC),
		    0, who + ": RTR -> RTS with the attributes query reported");
	check(vmtest::wait_qp_state(qp, IBV_QPS_RTS) == IBV_QPS_RTS, who + ": in RTS again");
}

// A SEND of kMsg bytes from A's buffer at 0 into B's receive at dst (its
// lkey key) fails: REM_OP_ERR at A, want_recv at B, both QPs in ERR.
void send_fails(RcSide &a, RcSide &b, std::uint64_t id, ibv_wc_status want_recv)
{
	fill(a.buf.data(), kMsg, static_cast<std::uint8_t>(id));
	check(post_send(a, id, 0, kMsg), "post A's SEND " + std::to_string(id));
	expect(a.cq, id, IBV_WC_REM_OP_ERR, "A's SEND");
	expect(b.cq, id + 1000, want_recv, "B's receive");
	check(vmtest::wait_qp_state(a.qp, IBV_QPS_ERR) == IBV_QPS_ERR, "A's QP is in ERR");
	check(vmtest::wait_qp_state(b.qp, IBV_QPS_ERR) == IBV_QPS_ERR, "B's QP is in ERR");
}

// A SEND of kMsg bytes into a receive of B at dst (lkey) arrives.
void send_lands(RcSide &a, RcSide &b, std::uint64_t id, std::uint8_t *dst, std::uint32_t lkey)
{
	std::memset(dst, 0, kMsg);
	fill(a.buf.data(), kMsg, static_cast<std::uint8_t>(id));
	check(post_recv(b.qp, id + 1000, reinterpret_cast<std::uintptr_t>(dst), kMsg, lkey) &&
		      post_send(a, id, 0, kMsg),
	      "post B's receive and A's SEND " + std::to_string(id));
	expect(a.cq, id, IBV_WC_SUCCESS, "A's SEND");
	ibv_wc wc{};
	expect(b.cq, id + 1000, IBV_WC_SUCCESS, "B's receive", &wc);
	check(wc.byte_len == kMsg && std::memcmp(a.buf.data(), dst, kMsg) == 0,
	      "the SEND's " + std::to_string(kMsg) + " bytes arrived (byte_len " +
		      std::to_string(wc.byte_len) + ")");
}

// Both QPs' saved attributes: B's address vector as connect() set it.
bool save_both(const RcSide &a, const RcSide &b, Saved &sa, Saved &sb)
{
	const bool ok = query_all(a.qp, sa) && query_all(b.qp, sb);
	check(ok, "query_qp of both QPs in RTS, every attribute bit");
	if (!ok)
		return false;
	const ibv_ah_attr &ah = sb.attr.ah_attr;
	check(sb.attr.qp_state == IBV_QPS_RTS && ah.is_global == 1 && ah.port_num == 1 &&
		      ah.grh.sgid_index == b.gid_index && ah.grh.hop_limit == 64 &&
		      std::memcmp(ah.grh.dgid.raw, a.gid.raw, 16) == 0,
	      "B's query reports RTS and the address vector it was given");
	check(sb.attr.dest_qp_num == a.qp->qp_num && sb.attr.rq_psn == 100 &&
		      sb.attr.path_mtu == IBV_MTU_1024 && sa.attr.sq_psn == 100,
	      "B's query reports its peer's QPN, its PSNs and MTU");
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_restate DEV_A GID_A DEV_B GID_B [rxe]\n");
		return 2;
	}
	Args args{argv[1], argv[2], argv[3], argv[4]};
	args.rxe = argc > 5 && std::string(argv[5]) == "rxe";
	const ibv_wc_status recv_err = args.rxe ? IBV_WC_LOC_QP_OP_ERR : IBV_WC_LOC_PROT_ERR;

	RcSide a;
	RcSide b;
	constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	const bool ok = a.setup(args.dev_a, args.gid_a, kBuf, IBV_ACCESS_LOCAL_WRITE) &&
			b.setup(args.dev_b, args.gid_b, kBuf, IBV_ACCESS_LOCAL_WRITE) &&
			a.connect(b, 100, 200, kQpAccess) && b.connect(a, 200, 100, kQpAccess);
	check(ok, std::string("an RC QP pair, ") + args.dev_a + " -> " + args.dev_b);
	if (!ok)
		return vmtest::summary();
	Saved sa;
	Saved sb;
	if (!save_both(a, b, sa, sb))
		return vmtest::summary();
	send_lands(a, b, 1, b.buf.data() + 4096, b.mr->lkey);

	ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	check(pd2 != nullptr, "a second PD on B");
	if (!pd2)
		return vmtest::summary();

	// 1. A receive names an MR of the second PD.
	std::vector<std::uint8_t> buf2(kBuf);
	ibv_mr *mr2 = ibv_reg_mr(pd2, buf2.data(), buf2.size(), IBV_ACCESS_LOCAL_WRITE);
	check(mr2 != nullptr, "an MR in the second PD");
	if (!mr2)
		return vmtest::summary();
	check(post_recv(b.qp, 1002, reinterpret_cast<std::uintptr_t>(buf2.data()), kMsg,
			mr2->lkey),
	      "post B's receive into the second PD's MR");
	send_fails(a, b, 2, recv_err);
	restate(a.qp, sa, "A");
	restate(b.qp, sb, "B");
	send_lands(a, b, 3, b.buf.data() + 12288, b.mr->lkey);
	check_errno(ibv_dereg_mr(mr2), 0, "deregister the second PD's MR");

	// rdma_rxe (6.12) moves no MR: ibv_rereg_mr fails there.
	if (args.rxe) {
		check_errno(ibv_dealloc_pd(pd2), 0, "deallocate the second PD");
		return vmtest::summary();
	}

	// 2. B's MR moves to the second PD; a receive names it.
	check_errno(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, pd2, nullptr, 0, 0), 0,
		    "rereg_mr: B's MR to the second PD");
	check(post_recv(b.qp, 1004, b.addr(8192), kMsg, b.mr->lkey),
	      "post B's receive into the moved MR");
	send_fails(a, b, 4, recv_err);
	restate(a.qp, sa, "A");
	restate(b.qp, sb, "B");
	check_errno(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, b.pd, nullptr, 0, 0), 0,
		    "rereg_mr: B's MR back to its PD");
	send_lands(a, b, 5, b.buf.data() + 12288, b.mr->lkey);

	// 3. A receive posted, then its MR moves to another range.
	std::vector<std::uint8_t> other(kBuf);
	check(post_recv(b.qp, 1006, b.addr(16384), kMsg, b.mr->lkey),
	      "post B's receive into its MR");
	check_errno(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, other.data(),
				 other.size(), 0),
		    0, "rereg_mr: B's MR to another range, the receive posted");
	send_fails(a, b, 6, recv_err);
	restate(a.qp, sa, "A");
	restate(b.qp, sb, "B");
	send_lands(a, b, 7, other.data() + 20000, b.mr->lkey);
	// The MR goes before the range it now maps, and before its PD.
	check_errno(ibv_dereg_mr(b.mr), 0, "deregister B's MR");
	b.mr = nullptr;
	check_errno(ibv_dealloc_pd(pd2), 0, "deallocate the second PD");
	return vmtest::summary();
}
