// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_rc DEV_A GID_A DEV_B GID_B
//
// Two RC QPs, one on each device, connected to each other over RoCEv2.
// Every transfer's bytes are compared where they arrive; the last check
// provokes a remote access error and checks its status on both sides.
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

namespace {

constexpr std::size_t kBuf = 256 * 1024;

struct Side {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kBuf);
	int gid_index = -1;
	ibv_gid gid{};
};

bool setup(Side &s, const char *dev, const char *gid)
{
	s.ctx = vmtest::open_by_name(dev);
	if (!s.ctx)
		return false;
	s.gid_index = vmtest::gid_index(s.ctx, gid, s.gid);
	s.pd = ibv_alloc_pd(s.ctx);
	s.cq = ibv_create_cq(s.ctx, 256, nullptr, nullptr, 0);
	s.mr = ibv_reg_mr(s.pd, s.buf.data(), kBuf,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ibv_qp_init_attr ia{};
	ia.send_cq = s.cq;
	ia.recv_cq = s.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 128;
	s.qp = s.pd ? ibv_create_qp(s.pd, &ia) : nullptr;
	return s.gid_index >= 0 && s.pd && s.cq && s.mr && s.qp;
}

bool connect(Side &s, const Side &peer, std::uint32_t my_psn, std::uint32_t peer_psn)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(s.qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer.qp->qp_num;
	a.rq_psn = peer_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(s.gid_index);
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(s.qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return false;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(s.qp, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0;
}

// Wait for one completion on cq (the transfer runs in the kernel).
bool wait_wc(ibv_cq *cq, ibv_wc &wc)
{
	for (long i = 0; i < 20000000; ++i) {
		const int n = ibv_poll_cq(cq, 1, &wc);
		if (n)
			return n == 1;
	}
	return false;
}

void fill(std::vector<std::uint8_t> &b, std::size_t off, std::size_t len, std::uint8_t seed)
{
	for (std::size_t i = 0; i < len; ++i)
		b[off + i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
}

bool post_recv(Side &s, std::uint64_t id, std::size_t off, std::size_t len)
{
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(s.buf.data() + off),
		    static_cast<std::uint32_t>(len), s.mr->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(s.qp, &wr, &bad) == 0;
}

bool post_send(Side &s, ibv_wr_opcode op, std::uint64_t id, std::size_t off, std::size_t len,
	       std::uint64_t raddr = 0, std::uint32_t rkey = 0, unsigned flags = 0)
{
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(s.buf.data() + off),
		    static_cast<std::uint32_t>(len), s.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.imm_data = htonl(0xc0ffee00U + static_cast<std::uint32_t>(len & 0xff));
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s.qp, &wr, &bad) == 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_rc DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	Side a;
	Side b;
	check(setup(a, argv[1], argv[2]) && setup(b, argv[3], argv[4]), "both sides set up");
	// Start PSNs near the 24-bit wrap so transfers cross it.
	check(connect(a, b, 0xfffff0, 0xffffe0) && connect(b, a, 0xffffe0, 0xfffff0),
	      "QPs connected (RESET -> INIT -> RTR -> RTS)");
	if (vmtest::failures)
		return vmtest::summary();

	const std::array<std::size_t, 9> sizes{0, 1, 3, 1023, 1024, 1025, 4096, 20000, 65536};
	const std::size_t half = kBuf / 2;
	std::uint8_t seed = 1;
	for (const std::size_t len : sizes) {
		const std::string n = std::to_string(len) + " B";
		ibv_wc wc{};

		// SEND (with immediate for odd sizes): A -> B.
		fill(a.buf, 0, len, seed);
		std::memset(b.buf.data() + half, 0, len + 16);
		const bool imm = len & 1;
		check(post_recv(b, 100 + len, half, len + 16), "post_recv " + n);
		check(post_send(a, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 200 + len, 0, len),
		      "post SEND " + n);
		check(wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 200 + len &&
			      wc.opcode == IBV_WC_SEND,
		      "SEND " + n + " completes at the sender");
		check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 100 + len &&
			      wc.opcode == IBV_WC_RECV && wc.byte_len == len &&
			      (!imm || ((wc.wc_flags & IBV_WC_WITH_IMM) &&
					wc.imm_data == htonl(0xc0ffee00U + (len & 0xff)))),
		      "SEND " + n + " received, byte_len and immediate right");
		check(std::memcmp(a.buf.data(), b.buf.data() + half, len) == 0 &&
			      b.buf[half + len] == 0,
		      "SEND " + n + " bytes arrived intact");
		++seed;

		// RDMA WRITE: A -> B.
		fill(a.buf, 0, len, seed);
		std::memset(b.buf.data() + half, 0, len + 16);
		check(post_send(a, IBV_WR_RDMA_WRITE, 300 + len, 0, len,
				reinterpret_cast<std::uintptr_t>(b.buf.data() + half), b.mr->rkey),
		      "post WRITE " + n);
		check(wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 300 + len &&
			      wc.opcode == IBV_WC_RDMA_WRITE,
		      "WRITE " + n + " completes");
		check(std::memcmp(a.buf.data(), b.buf.data() + half, len) == 0 &&
			      b.buf[half + len] == 0,
		      "WRITE " + n + " bytes arrived intact");
		++seed;

		// RDMA READ: B's bytes into A.
		fill(b.buf, half, len, seed);
		std::memset(a.buf.data(), 0, len + 16);
		check(post_send(a, IBV_WR_RDMA_READ, 400 + len, 0, len,
				reinterpret_cast<std::uintptr_t>(b.buf.data() + half), b.mr->rkey),
		      "post READ " + n);
		check(wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 400 + len &&
			      wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == len,
		      "READ " + n + " completes");
		check(std::memcmp(a.buf.data(), b.buf.data() + half, len) == 0 && a.buf[len] == 0,
		      "READ " + n + " bytes arrived intact");
		++seed;
	}

	// WRITE with immediate consumes a receive on B.
	{
		ibv_wc wc{};
		fill(a.buf, 0, 3000, 77);
		check(post_recv(b, 501, half, 16), "post_recv for WRITE_WITH_IMM");
		check(post_send(a, IBV_WR_RDMA_WRITE_WITH_IMM, 502, 0, 3000,
				reinterpret_cast<std::uintptr_t>(b.buf.data() + 1000), b.mr->rkey),
		      "post WRITE_WITH_IMM 3000 B");
		check(wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 502,
		      "WRITE_WITH_IMM completes");
		check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 501 &&
			      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 3000 &&
			      (wc.wc_flags & IBV_WC_WITH_IMM),
		      "... and B gets RECV_RDMA_WITH_IMM");
		check(std::memcmp(a.buf.data(), b.buf.data() + 1000, 3000) == 0,
		      "WRITE_WITH_IMM bytes arrived intact");
	}

	// Inline SEND.
	{
		ibv_wc wc{};
		fill(a.buf, 0, 100, 9);
		check(post_recv(b, 601, half, 128), "post_recv for inline SEND");
		check(post_send(a, IBV_WR_SEND, 602, 0, 100, 0, 0, IBV_SEND_INLINE),
		      "post inline SEND 100 B");
		check(wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 602,
		      "inline SEND completes");
		check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 100 &&
			      std::memcmp(a.buf.data(), b.buf.data() + half, 100) == 0,
		      "inline SEND bytes arrived intact");
	}

	// A WRITE beyond the remote MR: remote access error; both QPs fail.
	{
		ibv_wc wc{};
		check(post_send(a, IBV_WR_RDMA_WRITE, 701, 0, 4096,
				reinterpret_cast<std::uintptr_t>(b.buf.data() + kBuf - 100), b.mr->rkey),
		      "post a WRITE past the end of B's MR");
		check(wait_wc(a.cq, wc) && wc.wr_id == 701 && wc.status == IBV_WC_REM_ACCESS_ERR,
		      "it completes with IBV_WC_REM_ACCESS_ERR, got " +
			      std::string(ibv_wc_status_str(wc.status)));
		ibv_qp_attr qa{};
		ibv_qp_init_attr qi{};
		check(ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_ERR,
		      "the requester's QP is in ERR");
	}

	for (Side *s : {&a, &b}) {
		ibv_destroy_qp(s->qp);
		ibv_dereg_mr(s->mr);
		ibv_destroy_cq(s->cq);
		ibv_dealloc_pd(s->pd);
		ibv_close_device(s->ctx);
	}
	return vmtest::summary();
}
