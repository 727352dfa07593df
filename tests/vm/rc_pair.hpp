// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Two RC QPs on two devices of one process, connected to each other: the
// fixture of the guest conformance programs.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

#include "check.hpp"

namespace vmtest {

struct RcSide {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	ibv_srq *srq = nullptr;
	std::vector<std::uint8_t> buf;
	int gid_index = -1;
	ibv_gid gid{};

	RcSide() = default;
	RcSide(const RcSide &) = delete;
	RcSide &operator=(const RcSide &) = delete;
	~RcSide()
	{
		if (qp)
			ibv_destroy_qp(qp);
		if (srq)
			ibv_destroy_srq(srq);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
	}

	// Open dev, find the GID, make a PD, a CQ, an MR of bytes with access
	// and an RC QP (taking its receives from a new SRQ of srq_wr WRs if
	// srq_wr is not 0).
	bool setup(const char *dev, const char *gid_text, std::size_t bytes, int access,
		   std::uint32_t srq_wr = 0)
	{
		buf.assign(bytes, 0);
		ctx = open_by_name(dev);
		if (!ctx)
			return false;
		gid_index = vmtest::gid_index(ctx, gid_text, gid);
		pd = ibv_alloc_pd(ctx);
		cq = ibv_create_cq(ctx, 256, nullptr, nullptr, 0);
		if (pd)
			mr = ibv_reg_mr(pd, buf.data(), bytes, access);
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, cq, 64, 4);
		ia.cap.max_inline_data = 128;
		if (pd && srq_wr) {
			ibv_srq_init_attr sa{};
			sa.attr.max_wr = srq_wr;
			sa.attr.max_sge = 2;
			srq = ibv_create_srq(pd, &sa);
			if (!srq)
				return false;
			ia.srq = srq;
		}
		if (pd && cq)
			qp = ibv_create_qp(pd, &ia);
		return gid_index >= 0 && pd && cq && mr && qp;
	}

	// RESET -> INIT -> RTR -> RTS towards peer; qp_access for the peer.
	bool connect(const RcSide &peer, std::uint32_t my_psn, std::uint32_t peer_psn,
		     int qp_access, std::uint8_t rd_atomic = 4) const
	{
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = qp_access;
		if (ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS))
			return false;
		a = {};
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = peer.qp->qp_num;
		a.rq_psn = peer_psn;
		a.max_dest_rd_atomic = rd_atomic;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = peer.gid;
		a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
		a.ah_attr.grh.hop_limit = 64;
		if (ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER))
			return false;
		a = {};
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = my_psn;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = rd_atomic;
		return ibv_modify_qp(qp, &a,
				     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_MAX_QP_RD_ATOMIC) == 0;
	}

	[[nodiscard]] std::uintptr_t addr(std::size_t off) const
	{
		return reinterpret_cast<std::uintptr_t>(buf.data() + off);
	}
};

// Wait for one completion on cq (the transfer runs in the kernel).
inline bool wait_wc(ibv_cq *cq, ibv_wc &wc)
{
	for (long i = 0; i < 20000000; ++i) {
		const int n = ibv_poll_cq(cq, 1, &wc);
		if (n)
			return n == 1;
	}
	return false;
}

} // namespace vmtest
