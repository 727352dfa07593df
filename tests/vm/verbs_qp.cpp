// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_qp DEVICE LOCAL_GID REMOTE_GID   (GIDs "-": skip the RTR checks,
//                                        as on iWARP, where iw_cm connects)
//
// RC queue pairs through libibverbs: creation and capabilities, the state
// machine and its attribute checks, immediate errors of posting, and
// flushing: every work request posted to a QP in error completes with
// IBV_WC_WR_FLUSH_ERR, in order, carrying its wr_id.
#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"

using vmtest::check;
using vmtest::check_errno;

namespace {

ibv_qp_state state_of(ibv_qp *qp)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr i{};
	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return static_cast<ibv_qp_state>(-1);
	return a.qp_state;
}

int to_init(ibv_qp *qp)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int to_state(ibv_qp *qp, ibv_qp_state s)
{
	ibv_qp_attr a{};
	a.qp_state = s;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

// Poll until n completions arrived (they are produced synchronously).
std::vector<ibv_wc> drain(ibv_cq *cq, int n)
{
	std::vector<ibv_wc> out;
	std::array<ibv_wc, 16> wc{};
	for (int tries = 0; tries < 1000 && static_cast<int>(out.size()) < n; ++tries) {
		const int got = ibv_poll_cq(cq, static_cast<int>(wc.size()), wc.data());
		if (got < 0)
			break;
		out.insert(out.end(), wc.begin(), wc.begin() + got);
	}
	return out;
}

bool flushed(const std::vector<ibv_wc> &wcs, std::uint64_t first, std::size_t n,
	     ibv_wc_opcode op, std::uint32_t qpn, bool check_op)
{
	if (wcs.size() != n)
		return false;
	for (std::size_t i = 0; i < n; ++i) {
		const ibv_wc &w = wcs[i];
		if (w.wr_id != first + i || w.status != IBV_WC_WR_FLUSH_ERR || w.qp_num != qpn ||
		    (check_op && w.opcode != op))
			return false;
	}
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 4) {
		std::fprintf(stderr, "usage: verbs_qp DEVICE LOCAL_GID REMOTE_GID\n");
		return 2;
	}
	ibv_context *ctx = vmtest::open_by_name(argv[1]);
	check(ctx != nullptr, std::string("open ") + argv[1]);
	if (!ctx)
		return 1;
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ibv_cq *scq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
	ibv_cq *rcq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
	check(pd && scq && rcq, "PD and CQs");
	if (!pd || !scq || !rcq)
		return vmtest::summary();

	ibv_qp_init_attr ia{};
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 6;
	ia.cap.max_recv_wr = 5;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	ia.cap.max_inline_data = 64;

	ibv_qp_init_attr bad = ia;
	bad.cap.max_send_wr = 1U << 20;
	errno = 0;
	check(ibv_create_qp(pd, &bad) == nullptr, "create_qp beyond max_qp_wr refused");
	check_errno(errno, EINVAL, "... with EINVAL");
	// UD QPs are RoCE's (an iWARP device is passed without GIDs).
	bad = ia;
	bad.qp_type = IBV_QPT_UD;
	errno = 0;
	if (std::string(argv[2]) == "-") {
		check(ibv_create_qp(pd, &bad) == nullptr, "no UD QPs on iWARP");
		check_errno(errno, EOPNOTSUPP, "... with EOPNOTSUPP");
	} else {
		ibv_qp *ud = ibv_create_qp(pd, &bad);
		check(ud != nullptr && ud->qp_num >= 16, "a UD QP on RoCE");
		check(!ud || ibv_destroy_qp(ud) == 0, "... destroyed");
	}

	ibv_qp *qp = ibv_create_qp(pd, &ia);
	check(qp != nullptr, "create RC QP");
	if (!qp)
		return vmtest::summary();
	check(qp->qp_num >= 16 && qp->qp_num <= 0xffffff, "QP number " + std::to_string(qp->qp_num));
	check(ia.cap.max_send_wr >= 6 && ia.cap.max_recv_wr >= 5 && ia.cap.max_send_sge >= 2 &&
		      ia.cap.max_recv_sge >= 2 && ia.cap.max_inline_data >= 64,
	      "capabilities at least as asked");
	const std::uint32_t rq_depth = ia.cap.max_recv_wr;
	if (ctx->device->transport_type == IBV_TRANSPORT_IWARP) {
		// An RNIC makes its QPs Idle: INIT, as siw reports them and
		// rdma-core's tests expect; RESET is a modify away.
		check(state_of(qp) == IBV_QPS_INIT, "new iWARP QP in INIT");
		check_errno(to_state(qp, IBV_QPS_RESET), 0, "INIT -> RESET");
		check(state_of(qp) == IBV_QPS_RESET, "query_qp: RESET");
	} else {
		check(state_of(qp) == IBV_QPS_RESET, "new QP in RESET");
	}

	std::array<ibv_sge, 3> sge{};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	ibv_send_wr swr{};
	ibv_send_wr *sbad = nullptr;
	rwr.sg_list = sge.data();
	rwr.num_sge = 1;
	check_errno(ibv_post_recv(qp, &rwr, &rbad), EINVAL, "post_recv in RESET");

	// The state machine: transitions and the attributes each one needs.
	check_errno(to_state(qp, IBV_QPS_RTR), EINVAL, "RESET -> RTR refused");
	if (ctx->device->transport_type == IBV_TRANSPORT_IWARP) {
		// iWARP has no P_Key and one port: the state alone will do, as
		// on siw (a QP made and moved to INIT like this stayed RESET).
		check_errno(to_state(qp, IBV_QPS_INIT), 0, "RESET -> INIT with the state alone");
		check(state_of(qp) == IBV_QPS_INIT, "query_qp: INIT");
		check_errno(to_state(qp, IBV_QPS_RESET), 0, "INIT -> RESET");
	} else {
		check_errno(to_state(qp, IBV_QPS_INIT), EINVAL,
			    "RESET -> INIT without port and pkey refused");
	}
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	check_errno(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						  IBV_QP_ACCESS_FLAGS),
		    EINVAL, "RESET -> INIT on port 2 refused");
	check(state_of(qp) == IBV_QPS_RESET, "still RESET after refusals");
	check_errno(to_init(qp), 0, "RESET -> INIT");
	ibv_qp_attr q{};
	ibv_qp_init_attr qi{};
	check(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP, &qi) == 0 &&
		      q.qp_state == IBV_QPS_INIT &&
		      q.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) &&
		      qi.cap.max_send_sge >= 2,
	      "query_qp: INIT with the access flags set");

	swr.opcode = IBV_WR_SEND;
	swr.sg_list = sge.data();
	swr.num_sge = 1;
	// An iWARP QP enters RTS in the kernel with its connection while the
	// RDMA CM leaves the initiator's in INIT: its sends wait in the ring.
	if (ctx->device->transport_type != IBV_TRANSPORT_IWARP) {
		check_errno(ibv_post_send(qp, &swr, &sbad), EINVAL, "post_send in INIT");
		check(sbad == &swr, "... bad_wr is the request");
	}

	// RTR and RTS: the attributes each transition needs and accepts.
	const bool rtr = std::string(argv[2]) != "-";
	ibv_gid local{};
	const int sgid = rtr ? vmtest::gid_index(ctx, argv[2], local) : 0;
	check(sgid >= 0, std::string("GID index of ") + argv[2]);
	ibv_qp_attr r{};
	r.qp_state = IBV_QPS_RTR;
	r.path_mtu = IBV_MTU_1024;
	r.dest_qp_num = 0x1234;
	r.rq_psn = 0xfffff0;
	r.max_dest_rd_atomic = 1;
	r.min_rnr_timer = 12;
	r.ah_attr.is_global = 1;
	r.ah_attr.port_num = 1;
	r.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(sgid);
	r.ah_attr.grh.hop_limit = 64;
	if (rtr)
		inet_pton(AF_INET6, argv[3], r.ah_attr.grh.dgid.raw);
	const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (rtr) {
		check_errno(ibv_modify_qp(qp, &r, rtr_mask & ~IBV_QP_AV), EINVAL,
			    "INIT -> RTR without an address refused");
		ibv_qp_attr r2 = r;
		r2.max_dest_rd_atomic = 200;
		check_errno(ibv_modify_qp(qp, &r2, rtr_mask), EINVAL,
			    "INIT -> RTR with max_dest_rd_atomic 200 refused");
		r2 = r;
		r2.min_rnr_timer = 32;
		check_errno(ibv_modify_qp(qp, &r2, rtr_mask), EINVAL,
			    "INIT -> RTR with min_rnr_timer 32 refused");
		// IPv4 on one end and IPv6 on the other: no such path.
		r2 = r;
		const auto *dgid = reinterpret_cast<const in6_addr *>(r.ah_attr.grh.dgid.raw);
		const bool v4 = IN6_IS_ADDR_V4MAPPED(dgid);
		inet_pton(AF_INET6, v4 ? "fd00::2" : "::ffff:10.0.0.2", r2.ah_attr.grh.dgid.raw);
		check_errno(ibv_modify_qp(qp, &r2, rtr_mask), EINVAL,
			    "INIT -> RTR between an IPv4 and an IPv6 GID refused");
		check(state_of(qp) == IBV_QPS_INIT, "still INIT");
		check_errno(ibv_modify_qp(qp, &r, rtr_mask), 0, "INIT -> RTR");
		ibv_qp_attr g{};
		ibv_qp_init_attr gi{};
		check(ibv_query_qp(qp, &g, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						   IBV_QP_RQ_PSN, &gi) == 0 &&
			      g.qp_state == IBV_QPS_RTR && g.path_mtu == IBV_MTU_1024 &&
			      g.dest_qp_num == 0x1234 && g.rq_psn == 0xfffff0,
		      "query_qp: RTR with its attributes");
		ibv_qp_attr t{};
		t.qp_state = IBV_QPS_RTS;
		t.sq_psn = 0x123;
		t.timeout = 14;
		t.retry_cnt = 7;
		t.rnr_retry = 7;
		t.max_rd_atomic = 1;
		const int rts_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		check_errno(ibv_modify_qp(qp, &t, rts_mask & ~IBV_QP_SQ_PSN), EINVAL,
			    "RTR -> RTS without sq_psn refused");
		t.retry_cnt = 8;
		check_errno(ibv_modify_qp(qp, &t, rts_mask), EINVAL, "RTR -> RTS with retry_cnt 8 refused");
		t.retry_cnt = 7;
		check_errno(ibv_modify_qp(qp, &t, rts_mask), 0, "RTR -> RTS");
		check(ibv_query_qp(qp, &g, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT, &gi) == 0 &&
			      g.qp_state == IBV_QPS_RTS && g.sq_psn == 0x123 && g.timeout == 14,
		      "query_qp: RTS with its attributes");
		check_errno(to_state(qp, IBV_QPS_SQD), 0, "RTS -> SQD");
		check_errno(to_state(qp, IBV_QPS_RTS), 0, "SQD -> RTS");
		check_errno(to_state(qp, IBV_QPS_RESET), 0, "RTS -> RESET");
		check_errno(to_init(qp), 0, "RESET -> INIT again");
	}

	// Receives posted in INIT are flushed when the QP enters ERR.
	std::array<ibv_recv_wr, 3> rl{};
	for (std::size_t i = 0; i < rl.size(); ++i) {
		rl[i].wr_id = 101 + i;
		rl[i].sg_list = sge.data();
		rl[i].num_sge = 1;
		rl[i].next = i + 1 < rl.size() ? &rl[i + 1] : nullptr;
	}
	check_errno(ibv_post_recv(qp, rl.data(), &rbad), 0, "post 3 receives in INIT");
	rwr.num_sge = 3;
	rwr.next = nullptr;
	check_errno(ibv_post_recv(qp, &rwr, &rbad), EINVAL, "a receive with too many SGEs");
	check(rbad == &rwr, "... bad_wr is the request");
	std::array<ibv_wc, 4> wc{};
	check(ibv_poll_cq(rcq, 4, wc.data()) == 0, "nothing completes before ERR");
	check_errno(to_state(qp, IBV_QPS_ERR), 0, "INIT -> ERR");
	check(flushed(drain(rcq, 3), 101, 3, IBV_WC_RECV, qp->qp_num, true),
	      "3 receives flushed in order with IBV_WC_WR_FLUSH_ERR");
	check(state_of(qp) == IBV_QPS_ERR, "query_qp: ERR");

	// In ERR, new work completes at once with FLUSH_ERR, signalled or not.
	std::array<ibv_send_wr, 2> sl{};
	for (std::size_t i = 0; i < sl.size(); ++i) {
		sl[i].wr_id = 201 + i;
		sl[i].opcode = i ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
		sl[i].sg_list = sge.data();
		sl[i].num_sge = 1;
		sl[i].next = i + 1 < sl.size() ? &sl[i + 1] : nullptr;
	}
	check_errno(ibv_post_send(qp, sl.data(), &sbad), 0, "post 2 sends in ERR");
	check(flushed(drain(scq, 2), 201, 2, IBV_WC_SEND, qp->qp_num, false),
	      "2 sends flushed with IBV_WC_WR_FLUSH_ERR");
	rwr.wr_id = 301;
	rwr.num_sge = 1;
	check_errno(ibv_post_recv(qp, &rwr, &rbad), 0, "post a receive in ERR");
	check(flushed(drain(rcq, 1), 301, 1, IBV_WC_RECV, qp->qp_num, true), "... flushed at once");

	// More receives than the ring holds: the rest is refused with ENOMEM
	// while the QP has not taken them (INIT), and bad_wr says where.
	check_errno(to_state(qp, IBV_QPS_RESET), 0, "ERR -> RESET");
	check(state_of(qp) == IBV_QPS_RESET, "query_qp: RESET");
	check_errno(to_init(qp), 0, "RESET -> INIT again");
	std::vector<ibv_recv_wr> many(rq_depth + 1);
	for (std::size_t i = 0; i < many.size(); ++i) {
		many[i].wr_id = 400 + i;
		many[i].sg_list = sge.data();
		many[i].num_sge = 1;
		many[i].next = i + 1 < many.size() ? &many[i + 1] : nullptr;
	}
	check_errno(ibv_post_recv(qp, many.data(), &rbad), ENOMEM, "a receive queue overflow");
	check(rbad == &many.back(), "... bad_wr is the first one that did not fit");
	check_errno(to_state(qp, IBV_QPS_ERR), 0, "INIT -> ERR");
	check(flushed(drain(rcq, static_cast<int>(rq_depth)), 400, rq_depth, IBV_WC_RECV,
		      qp->qp_num, true),
	      "the ring's worth flushed");

	check_errno(ibv_destroy_qp(qp), 0, "destroy_qp");
	check_errno(ibv_destroy_cq(scq), 0, "destroy send CQ");
	check_errno(ibv_destroy_cq(rcq), 0, "destroy recv CQ");
	check_errno(ibv_dealloc_pd(pd), 0, "dealloc_pd");
	check_errno(ibv_close_device(ctx), 0, "close_device");
	return vmtest::summary();
}
