// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_rc DEV_A GID_A DEV_B GID_B [OPTION...]
//
// Two RC QPs, one on each device, connected to each other over RoCEv2.
// Every transfer's bytes are compared where they arrive. WRITEs then go
// to two MRs of B's in turn, and one is deregistered with the QPs up
// (softrdma's responder keeps the MR a key last found: deregistration must
// not wait for it). The last check provokes a remote access error and
// checks its status on both sides.
//
// Options (for lossy links and MTU tests):
//   --mtu N        path MTU: 256, 512, 1024 (default), 2048 or 4096
//   --timeout N    QP local ACK timeout, 4.096 us * 2^N (default 14)
//   --retry N      retry_cnt (default 7)
//   --sizes A,B..  transfer sizes of the one-at-a-time loop (0..65536)
//   --iters N      run the one-at-a-time loop N times (default 1)
//   --burst N      then post N WRs (SEND, WRITE, READ, WRITE_IMM in turn)
//                  back to back before polling, --rounds times (default 0)
//   --burst-size B bytes per burst WR (default 3000, at most 128 KiB / N)
//   --rounds N     bursts to run (default 1)
//   --list         post each burst as one list of WRs (one ibv_post_send)
//   --wait S       seconds to wait for each completion (default 20)
//   --rnr-ms N     also post a SEND N ms before its receive (RNR NAKs; the
//                  QP's rnr_retry is 7, infinite, so it must succeed)
//   --no-err       skip the remote access error check (a lost NAK turns it
//                  into a retry-exceeded error, rightly)
//   --sr           agree on selective repeat with ibv_set_ece on both QPs
//                  (what the RDMA CM does for its connections), checked
//                  with ibv_query_ece once they are connected
//   --ece OPTS     the same with softrdma's options OPTS (bit 0 selective
//                  repeat, bit 1 ECN; --sr is --ece 1)
//
// API options (combine with each other and with the above):
//   --wr           post every send through the ibv_wr_* API (ibv_qp_ex),
//                  one request per wr_start..wr_complete batch (bursts
//                  too), and add its own checks (SGE and inline lists,
//                  batches, abort, errors)
//   --cq-ex        poll extended CQs (ibv_cq_ex) instead of ibv_poll_cq
//
// UC (--uc): two UC QPs instead, and only the UC checks (uc_run): SENDs
// and RDMA WRITEs with immediate from A to B over --sizes, --iters times;
// with --no-err the link may lose packets (see uc_run).
#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"

using vmtest::check;
using vmtest::check_errno;

namespace {

constexpr std::size_t kBuf = 256 * 1024;

struct Options {
	ibv_mtu mtu = IBV_MTU_1024;
	std::uint8_t timeout = 14;
	std::uint8_t retry = 7;
	std::vector<std::size_t> sizes{0, 1, 3, 1023, 1024, 1025, 4096, 20000, 65536};
	int iters = 1;
	int burst = 0;
	std::size_t burst_size = 3000;
	int rounds = 1;
	int wait_s = 20;
	int rnr_ms = 0;
	bool err_check = true;
	bool wr = false;	// post sends with ibv_wr_*
	bool cq_ex = false;	// poll with ibv_start_poll & co
	bool list = false;	// a burst is one ibv_post_send
	bool uc = false;	// UC QPs and uc_run
	std::uint32_t ece = 0;	// ibv_set_ece's options, 0: none set
};

Options opt;

bool parse_mtu(long v, ibv_mtu &out)
{
	switch (v) {
	case 256: out = IBV_MTU_256; return true;
	case 512: out = IBV_MTU_512; return true;
	case 1024: out = IBV_MTU_1024; return true;
	case 2048: out = IBV_MTU_2048; return true;
	case 4096: out = IBV_MTU_4096; return true;
	default: return false;
	}
}

bool parse_options(int argc, char **argv)
{
	for (int i = 5; i < argc; ++i) {
		const std::string o = argv[i];
		if (o == "--no-err") {
			opt.err_check = false;
			continue;
		}
		if (o == "--wr") {
			opt.wr = true;
			continue;
		}
		if (o == "--cq-ex") {
			opt.cq_ex = true;
			continue;
		}
		if (o == "--list") {
			opt.list = true;
			continue;
		}
		if (o == "--uc") {
			opt.uc = true;
			continue;
		}
		if (o == "--sr") {
			opt.ece = 1;
			continue;
		}
		if (i + 1 >= argc)
			return false;
		const char *v = argv[++i];
		char *end = nullptr;
		const long n = std::strtol(v, &end, 0);
		const bool num = end != v && *end == '\0' && n >= 0;
		if (o == "--sizes") {
			opt.sizes.clear();
			for (const char *q = v; *q;) {
				const unsigned long sz = std::strtoul(q, &end, 0);
				if (end == q || sz > 65536)
					return false;
				opt.sizes.push_back(sz);
				q = *end == ',' ? end + 1 : end;
				if (*end && *end != ',')
					return false;
			}
		} else if (!num) {
			return false;
		} else if (o == "--mtu") {
			if (!parse_mtu(n, opt.mtu))
				return false;
		} else if (o == "--timeout" && n < 32) {
			opt.timeout = static_cast<std::uint8_t>(n);
		} else if (o == "--retry" && n < 8) {
			opt.retry = static_cast<std::uint8_t>(n);
		} else if (o == "--iters") {
			opt.iters = static_cast<int>(n);
		} else if (o == "--burst" && n <= 64) {
			opt.burst = static_cast<int>(n);
		} else if (o == "--burst-size") {
			opt.burst_size = static_cast<std::size_t>(n);
		} else if (o == "--rounds") {
			opt.rounds = static_cast<int>(n);
		} else if (o == "--rnr-ms") {
			opt.rnr_ms = static_cast<int>(n);
		} else if (o == "--ece" && n > 0 && n <= 3) {
			opt.ece = static_cast<std::uint32_t>(n);
		} else if (o == "--wait" && n > 0) {
			opt.wait_s = static_cast<int>(n);
		} else {
			return false;
		}
	}
	return opt.burst == 0 ||
	       (opt.burst_size + 64) * static_cast<std::size_t>(opt.burst) <= kBuf / 2;
}

constexpr std::uint64_t kSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				   IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ;
constexpr std::uint64_t kWcFlags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				   IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				   IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				   IBV_WC_EX_WITH_DLID_PATH_BITS;

struct Side {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_cq_ex *cqx = nullptr; // with --cq-ex: cq is its ibv_cq
	ibv_qp *qp = nullptr;
	ibv_qp_ex *qpx = nullptr; // with --wr
	ibv_qp_cap cap{};
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
	if (opt.cq_ex) {
		ibv_cq_init_attr_ex ca{};
		ca.cqe = 512;
		ca.wc_flags = kWcFlags;
		s.cqx = ibv_create_cq_ex(s.ctx, &ca);
		s.cq = s.cqx ? ibv_cq_ex_to_cq(s.cqx) : nullptr;
	} else {
		s.cq = ibv_create_cq(s.ctx, 512, nullptr, nullptr, 0);
	}
	s.mr = ibv_reg_mr(s.pd, s.buf.data(), kBuf,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ibv_qp_init_attr_ex ia{};
	ia.send_cq = s.cq;
	ia.recv_cq = s.cq;
	ia.qp_type = opt.uc ? IBV_QPT_UC : IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 128;
	ia.pd = s.pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (opt.wr) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = kSendOps;
	}
	s.qp = s.pd && s.cq ? ibv_create_qp_ex(s.ctx, &ia) : nullptr;
	if (s.qp && opt.wr)
		s.qpx = ibv_qp_to_qp_ex(s.qp);
	s.cap = ia.cap;
	return s.gid_index >= 0 && s.pd && s.cq && s.mr && s.qp && (!opt.wr || s.qpx);
}

// What the provider cannot do fails creation with EOPNOTSUPP.
void check_refusals(Side &s)
{
	ibv_cq_init_attr_ex ca{};
	ca.cqe = 16;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	ibv_cq_ex *cq = ibv_create_cq_ex(s.ctx, &ca);
	check(!cq && errno == EOPNOTSUPP, "a CQ with completion timestamps is refused (EOPNOTSUPP)");
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));

	ibv_qp_init_attr_ex ia{};
	ia.send_cq = s.cq;
	ia.recv_cq = s.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.pd = s.pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	// (BIND_MW and LOCAL_INV are offered: verbs_mw tests them.)
	for (const std::uint64_t op : {std::uint64_t{IBV_QP_EX_WITH_TSO}}) {
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND | op;
		errno = 0;
		ibv_qp *qp = ibv_create_qp_ex(s.ctx, &ia);
		check(!qp && errno == EOPNOTSUPP,
		      "a QP with send op " + std::to_string(op) + " is refused (EOPNOTSUPP)");
		if (qp)
			ibv_destroy_qp(qp);
	}
	// A QP in RESET takes no sends, through ibv_wr_* either.
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	ibv_qp *reset = ibv_create_qp_ex(s.ctx, &ia);
	ibv_qp_ex *rx = reset ? ibv_qp_to_qp_ex(reset) : nullptr;
	check(rx != nullptr, "a QP with send ops SEND has an ibv_qp_ex");
	if (rx) {
		ibv_wr_start(rx);
		rx->wr_id = 1;
		rx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(rx);
		ibv_wr_set_sge(rx, s.mr->lkey, reinterpret_cast<std::uintptr_t>(s.buf.data()), 8);
		check_errno(ibv_wr_complete(rx), EINVAL, "ibv_wr_complete on a QP in RESET fails");
		ibv_wr_start(rx); // the failure released the QP's lock
		ibv_wr_abort(rx);
	}
	if (reset)
		ibv_destroy_qp(reset);
	ia.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ia.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	ibv_qp *qp = ibv_create_qp_ex(s.ctx, &ia);
	check(!qp && errno == EOPNOTSUPP, "a QP with create flags is refused (EOPNOTSUPP)");
	if (qp)
		ibv_destroy_qp(qp);
}

// A UC QP's way to RTS (IBTA 11.2.4.2: no RDMA READ or atomic
// attributes, no ACK timeout or retries); RC's attributes are refused.
bool connect_uc(Side &s, const Side &peer, std::uint32_t my_psn, std::uint32_t peer_psn)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(s.qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = opt.mtu;
	a.dest_qp_num = peer.qp->qp_num;
	a.rq_psn = peer_psn;
	a.max_dest_rd_atomic = 4;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(s.gid_index);
	a.ah_attr.grh.hop_limit = 64;
	constexpr int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN;
	check_errno(ibv_modify_qp(s.qp, &a, rtr | IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL,
		    "UC to RTR with max_dest_rd_atomic is refused");
	if (ibv_modify_qp(s.qp, &a, rtr))
		return false;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;
	check_errno(ibv_modify_qp(s.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT),
		    EINVAL, "UC to RTS with an ACK timeout is refused");
	return ibv_modify_qp(s.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0;
}

bool connect(Side &s, const Side &peer, std::uint32_t my_psn, std::uint32_t peer_psn)
{
	if (opt.uc)
		return connect_uc(s, peer, my_psn, peer_psn);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(s.qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	// softrdma's options (bit 0 selective repeat, bit 1 ECN): asked for
	// on both QPs, as librdmacm does from the CM's REQ and REP.
	if (opt.ece) {
		ibv_ece e{};
		if (ibv_query_ece(s.qp, &e) || (e.options & opt.ece) != opt.ece)
			return false;
		e.options = opt.ece;
		if (ibv_set_ece(s.qp, &e))
			return false;
	}
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = opt.mtu;
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
	a.timeout = opt.timeout;
	a.retry_cnt = opt.retry;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(s.qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return false;
	if (opt.ece) {
		ibv_ece e{};
		check(ibv_query_ece(s.qp, &e) == 0 && e.options == opt.ece,
		      "the QP runs with the options asked for (ibv_query_ece)");
	}
	return true;
}

// The completion an extended poll is at, as an ibv_wc.
void read_wc(ibv_cq_ex *cq, ibv_wc &wc)
{
	wc = {};
	wc.wr_id = cq->wr_id;
	wc.status = cq->status;
	wc.opcode = ibv_wc_read_opcode(cq);
	wc.vendor_err = ibv_wc_read_vendor_err(cq);
	wc.byte_len = ibv_wc_read_byte_len(cq);
	wc.wc_flags = ibv_wc_read_wc_flags(cq);
	if (wc.wc_flags & IBV_WC_WITH_IMM)
		wc.imm_data = ibv_wc_read_imm_data(cq);
	wc.qp_num = ibv_wc_read_qp_num(cq);
	wc.src_qp = ibv_wc_read_src_qp(cq);
	wc.slid = static_cast<std::uint16_t>(ibv_wc_read_slid(cq));
	wc.sl = ibv_wc_read_sl(cq);
	wc.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
}

// Wait for wcs.size() completions on s's CQ (the transfers run in the
// kernel); with --cq-ex each extended poll takes all that are there. The
// ones that do not come read as IBV_WC_GENERAL_ERR.
bool wait_wcs(Side &s, std::span<ibv_wc> wcs)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(opt.wait_s);
	for (ibv_wc &wc : wcs) {
		wc = {};
		wc.status = IBV_WC_GENERAL_ERR;
	}
	std::size_t got = 0;
	for (long i = 0; got < wcs.size(); ++i) {
		if ((i & 1023) == 0 && i && std::chrono::steady_clock::now() > end) {
			std::printf("# %zu of %zu completions within %d s\n", got, wcs.size(),
				    opt.wait_s);
			return false;
		}
		if (!opt.cq_ex) {
			const int n = ibv_poll_cq(s.cq, 1, &wcs[got]);
			if (n < 0)
				return false;
			got += static_cast<std::size_t>(n);
			continue;
		}
		ibv_poll_cq_attr attr{};
		int ret = ibv_start_poll(s.cqx, &attr);
		if (ret == ENOENT)
			continue;
		if (ret)
			return false;
		read_wc(s.cqx, wcs[got++]);
		while (got < wcs.size() && (ret = ibv_next_poll(s.cqx)) == 0)
			read_wc(s.cqx, wcs[got++]);
		ibv_end_poll(s.cqx);
		if (ret && ret != ENOENT)
			return false;
	}
	return true;
}

bool wait_wc(Side &s, ibv_wc &wc)
{
	return wait_wcs(s, {&wc, 1});
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
	if (!opt.wr)
		return ibv_post_send(s.qp, &wr, &bad) == 0;

	ibv_qp_ex *q = s.qpx;
	ibv_wr_start(q);
	q->wr_id = id;
	q->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case IBV_WR_SEND:
		ibv_wr_send(q);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(q, wr.imm_data);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(q, rkey, raddr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(q, rkey, raddr, wr.imm_data);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(q, rkey, raddr);
		break;
	default:
		ibv_wr_abort(q);
		return false;
	}
	if (flags & IBV_SEND_INLINE)
		ibv_wr_set_inline_data(q, s.buf.data() + off, len);
	else
		ibv_wr_set_sge(q, s.mr->lkey, sge.addr, sge.length);
	return ibv_wr_complete(q) == 0;
}


// The ibv_wr_* checks of their own: lists, batches, abort, errors.
void wr_checks(Side &a, Side &b)
{
	const std::size_t half = kBuf / 2;
	const auto at = [](Side &s, std::size_t off) {
		return reinterpret_cast<std::uintptr_t>(s.buf.data() + off);
	};
	ibv_qp_ex *q = a.qpx;

	// A SEND gathered from three SGEs; B receives their concatenation.
	{
		fill(a.buf, 0, 8192, 31);
		std::memset(b.buf.data() + half, 0, 8192);
		check(post_recv(b, 801, half, 8192), "post_recv for the SGE-list SEND");
		const std::array<ibv_sge, 3> sg{{{at(a, 5000), 700, a.mr->lkey},
						 {at(a, 100), 1, a.mr->lkey},
						 {at(a, 2000), 2500, a.mr->lkey}}};
		ibv_wr_start(q);
		q->wr_id = 802;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(q);
		ibv_wr_set_sge_list(q, sg.size(), sg.data());
		check(ibv_wr_complete(q) == 0, "SEND of an SGE list posted");
		ibv_wc wc{};
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 802 &&
			      wc.opcode == IBV_WC_SEND,
		      "SGE-list SEND completes");
		check(wait_wc(b, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 801 &&
			      wc.byte_len == 3201,
		      "SGE-list SEND received, 3201 B");
		check(std::memcmp(b.buf.data() + half, a.buf.data() + 5000, 700) == 0 &&
			      b.buf[half + 700] == a.buf[100] &&
			      std::memcmp(b.buf.data() + half + 701, a.buf.data() + 2000, 2500) == 0 &&
			      b.buf[half + 3201] == 0,
		      "SGE-list SEND bytes arrived in order");
	}

	// An inline SEND_IMM from a list of buffers, one of them empty.
	{
		fill(a.buf, 0, 200, 41);
		std::memset(b.buf.data() + half, 0, 256);
		check(post_recv(b, 811, half, 256), "post_recv for the inline-list SEND");
		const std::array<ibv_data_buf, 3> bufs{{{a.buf.data() + 150, 50},
							{a.buf.data(), 0},
							{a.buf.data() + 10, 70}}};
		ibv_wr_start(q);
		q->wr_id = 812;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_imm(q, htonl(0x1badcafe));
		ibv_wr_set_inline_data_list(q, bufs.size(), bufs.data());
		check(ibv_wr_complete(q) == 0, "inline-list SEND_IMM posted");
		// The inline data was copied: changing the source now changes nothing.
		std::memset(a.buf.data(), 0xee, 200);
		fill(a.buf, 1000, 200, 41);
		ibv_wc wc{};
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 812,
		      "inline-list SEND_IMM completes");
		check(wait_wc(b, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 811 &&
			      wc.byte_len == 120 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
			      wc.imm_data == htonl(0x1badcafe),
		      "inline-list SEND_IMM received with its immediate");
		check(std::memcmp(b.buf.data() + half, a.buf.data() + 1150, 50) == 0 &&
			      std::memcmp(b.buf.data() + half + 50, a.buf.data() + 1010, 70) == 0,
		      "inline-list bytes arrived in order");
	}

	// A batch: three WRITEs and a READ in one wr_start..wr_complete.
	{
		fill(a.buf, 0, 30000, 51);
		fill(b.buf, half + 60000, 5000, 52);
		std::memset(b.buf.data() + half, 0, 40000);
		std::memset(a.buf.data() + 40000, 0, 5000);
		ibv_wr_start(q);
		for (std::uint64_t i = 0; i < 3; ++i) {
			q->wr_id = 820 + i;
			q->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_rdma_write(q, b.mr->rkey, at(b, half + i * 12000));
			ibv_wr_set_sge(q, a.mr->lkey, at(a, i * 10000), 10000);
		}
		q->wr_id = 823;
		ibv_wr_rdma_read(q, b.mr->rkey, at(b, half + 60000));
		ibv_wr_set_sge(q, a.mr->lkey, at(a, 40000), 5000);
		check(ibv_wr_complete(q) == 0, "batch of 3 WRITEs and a READ posted");
		std::array<ibv_wc, 4> wcs{};
		const bool got = wait_wcs(a, wcs);
		bool ok = got;
		for (std::size_t i = 0; got && i < wcs.size(); ++i)
			ok = ok && wcs[i].status == IBV_WC_SUCCESS && wcs[i].wr_id == 820 + i &&
			     wcs[i].opcode == (i < 3 ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ);
		check(ok, "the batch completes in order");
		ok = true;
		for (std::size_t i = 0; i < 3; ++i)
			ok = ok && std::memcmp(b.buf.data() + half + i * 12000,
					       a.buf.data() + i * 10000, 10000) == 0 &&
			     b.buf[half + i * 12000 + 10000] == 0;
		check(ok && std::memcmp(a.buf.data() + 40000, b.buf.data() + half + 60000, 5000) == 0,
		      "the batch's bytes arrived intact");
		if (opt.cq_ex)
			check(got && wcs[0].qp_num == a.qp->qp_num, "ibv_wc_read_qp_num is the QP's");
	}

	// wr_abort: nothing of the batch happens.
	{
		std::memset(b.buf.data() + half, 0, 4096);
		fill(a.buf, 0, 4096, 61);
		ibv_wr_start(q);
		q->wr_id = 830;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(q, b.mr->rkey, at(b, half));
		ibv_wr_set_sge(q, a.mr->lkey, at(a, 0), 4096);
		ibv_wr_abort(q);
		// The next batch follows; only it completes.
		ibv_wr_start(q);
		q->wr_id = 831;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(q, b.mr->rkey, at(b, half + 2048));
		ibv_wr_set_sge(q, a.mr->lkey, at(a, 100), 16);
		check(ibv_wr_complete(q) == 0, "post after an aborted batch");
		ibv_wc wc{};
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 831,
		      "only the batch after the aborted one completes");
		std::vector<std::uint8_t> zero(2048);
		check(std::memcmp(b.buf.data() + half, zero.data(), 2048) == 0 &&
			      std::memcmp(b.buf.data() + half + 2048, a.buf.data() + 100, 16) == 0,
		      "the aborted WRITE wrote nothing");
	}

	// Errors at wr_complete publish nothing of the batch.
	{
		std::memset(b.buf.data() + half, 0, 4096);
		fill(a.buf, 0, 4096, 71);
		const auto one_write = [&](std::uint64_t id, std::size_t off) {
			q->wr_id = id;
			q->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_rdma_write(q, b.mr->rkey, at(b, half + off));
			ibv_wr_set_sge(q, a.mr->lkey, at(a, off), 8);
		};
		// More requests than the queue holds.
		ibv_wr_start(q);
		for (std::uint32_t i = 0; i <= a.cap.max_send_wr; ++i)
			one_write(840, 0);
		check_errno(ibv_wr_complete(q), ENOMEM, "a batch past the queue's size fails");
		// Inline data longer than max_inline_data.
		ibv_wr_start(q);
		one_write(841, 0);
		q->wr_id = 842;
		ibv_wr_send(q);
		ibv_wr_set_inline_data(q, a.buf.data(), a.cap.max_inline_data + 1);
		check_errno(ibv_wr_complete(q), EINVAL, "a batch with inline data too long fails");
		// More SGEs than the queue takes.
		std::vector<ibv_sge> many(64, ibv_sge{at(a, 0), 1, a.mr->lkey});
		ibv_wr_start(q);
		one_write(843, 0);
		q->wr_id = 844;
		ibv_wr_send(q);
		ibv_wr_set_sge_list(q, many.size(), many.data());
		check_errno(ibv_wr_complete(q), EINVAL, "a batch with too many SGEs fails");
		// The QP still works, and none of the failed requests ran.
		ibv_wr_start(q);
		one_write(845, 64);
		check(ibv_wr_complete(q) == 0, "post after the failed batches");
		ibv_wc wc{};
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 845,
		      "the next completion is the good batch's");
		check(b.buf[half] == 0 && b.buf[half + 7] == 0 &&
			      std::memcmp(b.buf.data() + half + 64, a.buf.data() + 64, 8) == 0,
		      "the failed batches wrote nothing");
	}
}

// Post opt.burst WRs back to back (SEND, WRITE, READ, WRITE_IMM in turn),
// each on its own slice of the buffers, then poll them all and compare.
void burst(Side &a, Side &b, int round)
{
	const std::size_t half = kBuf / 2;
	const std::size_t len = opt.burst_size;
	const std::size_t stride = (len + 64) & ~std::size_t{63};
	const int n = opt.burst;
	const std::string r = "burst " + std::to_string(round) + ": ";
	static constexpr std::array<ibv_wr_opcode, 4> ops{IBV_WR_SEND, IBV_WR_RDMA_WRITE,
							 IBV_WR_RDMA_READ,
							 IBV_WR_RDMA_WRITE_WITH_IMM};
	const auto seed = [round](int j) { return static_cast<std::uint8_t>(round * 31 + j * 5); };

	std::memset(a.buf.data(), 0, half);
	std::memset(b.buf.data() + half, 0, half);
	int recvs = 0;
	bool ok = true;
	for (int j = 0; j < n; ++j) {
		const std::size_t off = static_cast<std::size_t>(j) * stride;
		const ibv_wr_opcode op = ops[static_cast<std::size_t>(j) % ops.size()];
		if (op == IBV_WR_RDMA_READ) {
			fill(b.buf, half + off, len, seed(j));
		} else {
			fill(a.buf, off, len, seed(j));
		}
		if (op == IBV_WR_SEND || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			ok = ok && post_recv(b, 1000 + j, half + off, op == IBV_WR_SEND ? len : 0);
			++recvs;
		}
	}
	check(ok, r + "post " + std::to_string(recvs) + " receives");
	ok = true;
	std::vector<ibv_sge> sges(static_cast<std::size_t>(n));
	std::vector<ibv_send_wr> wrs(static_cast<std::size_t>(n));
	for (int j = 0; j < n; ++j) {
		const auto k = static_cast<std::size_t>(j);
		const std::size_t off = k * stride;
		const ibv_wr_opcode op = ops[k % ops.size()];
		const auto remote = reinterpret_cast<std::uintptr_t>(b.buf.data() + half + off);
		if (!opt.list || opt.wr) {
			ok = ok && post_send(a, op, 2000 + j, off, len, remote, b.mr->rkey);
			continue;
		}
		sges[k] = {reinterpret_cast<std::uintptr_t>(a.buf.data() + off),
			   static_cast<std::uint32_t>(len), a.mr->lkey};
		wrs[k].wr_id = 2000 + k;
		wrs[k].opcode = op;
		wrs[k].sg_list = &sges[k];
		wrs[k].num_sge = 1;
		wrs[k].send_flags = IBV_SEND_SIGNALED;
		wrs[k].imm_data = htonl(0xc0ffee00U + static_cast<std::uint32_t>(len & 0xff));
		wrs[k].wr.rdma.remote_addr = remote;
		wrs[k].wr.rdma.rkey = b.mr->rkey;
		wrs[k].next = j + 1 < n ? &wrs[k + 1] : nullptr;
	}
	if (opt.list && !opt.wr && n > 0) {
		ibv_send_wr *bad = nullptr;
		ok = ibv_post_send(a.qp, wrs.data(), &bad) == 0;
	}
	check(ok, r + "post " + std::to_string(n) + " WRs back to back");
	for (int j = 0; j < n; ++j) {
		ibv_wc wc{};
		const ibv_wr_opcode op = ops[static_cast<std::size_t>(j) % ops.size()];
		static constexpr std::array<ibv_wc_opcode, 4> wcop{
			IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_RDMA_WRITE};
		const bool got = wait_wc(a, wc);
		if (!got || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != static_cast<std::uint64_t>(2000 + j) ||
		    wc.opcode != wcop[static_cast<std::size_t>(j) % 4] ||
		    (op == IBV_WR_RDMA_READ && wc.byte_len != len)) {
			check(false, r + "WR " + std::to_string(j) + " completes in order: got wr_id " +
					     std::to_string(wc.wr_id) + " status " +
					     ibv_wc_status_str(wc.status));
			return;
		}
	}
	check(true, r + "all " + std::to_string(n) + " WRs complete in order, successfully");
	for (int j = 0, k = 0; j < n; ++j) {
		const ibv_wr_opcode op = ops[static_cast<std::size_t>(j) % ops.size()];
		if (op != IBV_WR_SEND && op != IBV_WR_RDMA_WRITE_WITH_IMM)
			continue;
		ibv_wc wc{};
		const bool got = wait_wc(b, wc);
		const bool imm = op == IBV_WR_RDMA_WRITE_WITH_IMM;
		if (!got || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != static_cast<std::uint64_t>(1000 + j) || wc.byte_len != len ||
		    wc.opcode != (imm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
		    (imm && !(wc.wc_flags & IBV_WC_WITH_IMM))) {
			check(false, r + "receive " + std::to_string(k) + " (WR " +
					     std::to_string(j) + ") right: got wr_id " +
					     std::to_string(wc.wr_id) + " status " +
					     ibv_wc_status_str(wc.status) + " byte_len " +
					     std::to_string(wc.byte_len));
			return;
		}
		++k;
	}
	check(true, r + "receives complete in order with the right lengths");
	for (int j = 0; j < n; ++j) {
		const std::size_t off = static_cast<std::size_t>(j) * stride;
		if (std::memcmp(a.buf.data() + off, b.buf.data() + half + off, len) != 0 ||
		    a.buf[off + len] != 0 || b.buf[half + off + len] != 0) {
			check(false, r + "WR " + std::to_string(j) + " bytes arrived intact");
			return;
		}
	}
	check(true, r + "every WR's bytes arrived intact");
}

// One completion on s's CQ within ms milliseconds (plain polling).
bool poll_within(Side &s, ibv_wc &wc, int ms)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	for (long i = 0;; ++i) {
		const int n = ibv_poll_cq(s.cq, 1, &wc);
		if (n)
			return n == 1;
		if ((i & 1023) == 0 && std::chrono::steady_clock::now() > end)
			return false;
	}
}

constexpr std::uint32_t kUcImm = 0x5c000000;

// The bytes and length of UC message m.
std::size_t uc_len(std::size_t m)
{
	return opt.sizes[m % opt.sizes.size()];
}

std::vector<std::uint8_t> uc_bytes(std::size_t m)
{
	std::vector<std::uint8_t> v(uc_len(m));
	fill(v, 0, v.size(), static_cast<std::uint8_t>(m * 13 + 1));
	return v;
}

// Post UC message m from A (even m: SEND with immediate into B's one
// receive at half; odd: RDMA WRITE with immediate to B's offset 0), its
// number in the immediate data; wait for A's completion, which UC gives as
// soon as the last packet is sent. rkey: B's, or a bad one.
bool uc_post(Side &a, Side &b, std::size_t m, std::uint32_t rkey)
{
	const std::vector<std::uint8_t> v = uc_bytes(m);
	const bool write = m & 1;
	std::memcpy(a.buf.data(), v.data(), v.size());
	if (write)
		std::memset(b.buf.data(), 0, v.size() + 16);
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(a.buf.data()),
		    static_cast<std::uint32_t>(v.size()), a.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = 1000 + m;
	wr.opcode = write ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND_WITH_IMM;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(kUcImm + static_cast<std::uint32_t>(m));
	wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(b.buf.data());
	wr.wr.rdma.rkey = rkey;
	ibv_wc wc{};
	const std::string n = "UC message " + std::to_string(m) + " (" +
			      (write ? "WRITE_WITH_IMM " : "SEND_WITH_IMM ") +
			      std::to_string(v.size()) + " B)";
	check(ibv_post_send(a.qp, &wr, &bad) == 0, "post " + n);
	const bool got = wait_wc(a, wc);
	check(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1000 + m &&
		      wc.opcode == (write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND),
	      n + " completes at the sender once sent: " + ibv_wc_status_str(wc.status));
	return !vmtest::failures;
}

// A completion at B of a UC message: which one (by its immediate data),
// whole and right. Returns its number, or -1.
long uc_check_arrival(Side &b, const ibv_wc &wc, std::uint64_t recv_id)
{
	const long m = static_cast<long>(ntohl(wc.imm_data)) - kUcImm;
	const bool write = m & 1;
	const std::string n = "UC message " + std::to_string(m);
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == recv_id &&
		      (wc.wc_flags & IBV_WC_WITH_IMM) && m >= 0 && m < (1L << 20) &&
		      wc.opcode == (write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV),
	      n + " arrives: " + ibv_wc_status_str(wc.status) + " (wr_id " +
		      std::to_string(wc.wr_id) + " opcode " + std::to_string(wc.opcode) + ")");
	if (vmtest::failures)
		return -1;
	const std::vector<std::uint8_t> v = uc_bytes(static_cast<std::size_t>(m));
	const std::size_t off = write ? 0 : kBuf / 2;
	check(wc.byte_len == v.size() &&
		      std::memcmp(b.buf.data() + off, v.data(), v.size()) == 0,
	      n + " is whole and intact (" + std::to_string(wc.byte_len) + " of " +
		      std::to_string(v.size()) + " B)");
	return vmtest::failures ? -1 : m;
}

bool uc_post_recv(Side &b, std::uint64_t id)
{
	std::memset(b.buf.data() + kBuf / 2, 0, 65536 + 16);
	return post_recv(b, id, kBuf / 2, 65536 + 16);
}

// UC: messages A -> B one at a time. Without --no-err each must arrive;
// with it (a lossy link) each that arrives must be whole and right, in
// order, none twice, and one whose packet was lost must never complete:
// its receive is used by the next message instead. Without --no-err, first
// what UC drops silently: a SEND with no receive posted and a WRITE with a
// bad R_Key; neither completes at B, both QPs stay in RTS, and the receive
// the WRITE found is the next message's.
void uc_run(Side &a, Side &b)
{
	const bool lossy = !opt.err_check;
	const std::size_t first = lossy ? 0 : 2;
	const std::size_t total = static_cast<std::size_t>(opt.iters) * opt.sizes.size();
	std::uint64_t recv_id = 1;
	long last = static_cast<long>(first) - 1;
	std::size_t arrived = 0;
	ibv_wc wc{};

	if (!lossy) {
		if (!uc_post(a, b, 0, b.mr->rkey))
			return;
		check(!poll_within(b, wc, 300), "a UC SEND with no receive posted is dropped");
		check(uc_post_recv(b, recv_id), "post B's receive");
		if (!uc_post(a, b, 1, b.mr->rkey ^ 0x5a5a00))
			return;
		check(!poll_within(b, wc, 300), "a UC WRITE_WITH_IMM with a bad rkey is dropped");
		check(vmtest::wait_qp_state(a.qp, IBV_QPS_RTS) == IBV_QPS_RTS &&
			      vmtest::wait_qp_state(b.qp, IBV_QPS_RTS) == IBV_QPS_RTS,
		      "both UC QPs stay in RTS");
	} else {
		check(uc_post_recv(b, recv_id), "post B's receive");
	}
	for (std::size_t m = first; m < first + total; ++m) {
		if (!uc_post(a, b, m, b.mr->rkey))
			return;
		// A lost message leaves B's receive posted for the next.
		if (!poll_within(b, wc, lossy ? 300 : opt.wait_s * 1000)) {
			check(lossy, "UC message " + std::to_string(m) + " arrives in time");
			continue;
		}
		const long got = uc_check_arrival(b, wc, recv_id);
		if (got < 0)
			return;
		check(got > last && got <= static_cast<long>(m) && (lossy || got == last + 1),
		      "UC message " + std::to_string(got) + " comes in order, once");
		last = got;
		++arrived;
		check(uc_post_recv(b, ++recv_id), "post B's next receive");
	}
	check(!poll_within(b, wc, 500), "nothing else completes at B");
	std::printf("# UC: %zu of %zu messages arrived\n", arrived, total);
	check(lossy ? arrived > 0 : arrived == total, "UC messages arrived");
}

// B's responder keeps the MR a key found for the requests after it
// (softrdma): WRITEs into a second MR of B's and back into the first land
// where their keys say; the second MR is deregistered while the QPs stay
// up, which must not wait for another request to it; the first works on.
void kept_mr(Side &a, Side &b)
{
	std::vector<std::uint8_t> other(8192);
	ibv_mr *mr2 = ibv_reg_mr(b.pd, other.data(), other.size(),
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ibv_wc wc{};

	check(mr2 != nullptr, "a second MR on B");
	if (!mr2)
		return;
	for (int i = 0; i < 4 && !vmtest::failures; ++i) {
		const bool second = i % 2 == 0;
		std::uint8_t *dst = second ? other.data() + 100 : b.buf.data() + 2000;
		const std::string n = "WRITE " + std::to_string(i) + " into B's " +
				      (second ? "second" : "first") + " MR";

		fill(a.buf, 0, 3000, static_cast<std::uint8_t>(90 + i));
		std::memset(dst, 0, 3000);
		check(post_send(a, IBV_WR_RDMA_WRITE, 900 + i, 0, 3000,
				reinterpret_cast<std::uintptr_t>(dst),
				second ? mr2->rkey : b.mr->rkey),
		      "post " + n);
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 900U + i,
		      n + " completes: " + ibv_wc_status_str(wc.status));
		check(std::memcmp(a.buf.data(), dst, 3000) == 0, n + ": its bytes land there");
	}
	// The last WRITE went to the first MR: make the second the kept one.
	fill(a.buf, 0, 100, 99);
	check(post_send(a, IBV_WR_RDMA_WRITE, 910, 0, 100,
			reinterpret_cast<std::uintptr_t>(other.data()), mr2->rkey) &&
		      wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS &&
		      std::memcmp(a.buf.data(), other.data(), 100) == 0,
	      "a WRITE into the second MR again");
	check(ibv_dereg_mr(mr2) == 0, "B deregisters the MR its responder keeps");
	fill(a.buf, 0, 3000, 98);
	check(post_send(a, IBV_WR_RDMA_WRITE, 911, 0, 3000,
			reinterpret_cast<std::uintptr_t>(b.buf.data() + 2000), b.mr->rkey) &&
		      wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS &&
		      std::memcmp(a.buf.data(), b.buf.data() + 2000, 3000) == 0,
	      "a WRITE into the first MR after it");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5 || !parse_options(argc, argv)) {
		std::fprintf(stderr, "usage: verbs_rc DEV_A GID_A DEV_B GID_B [--mtu N] "
				     "[--timeout N] [--retry N] [--sizes A,B,..] [--iters N] "
				     "[--burst N] [--burst-size B] [--rounds N] [--list] [--wait S] "
				     "[--rnr-ms N] [--no-err] [--wr] [--cq-ex] [--uc]\n");
		return 2;
	}
	Side a;
	Side b;
	check(setup(a, argv[1], argv[2]) && setup(b, argv[3], argv[4]), "both sides set up");
	if (opt.wr || opt.cq_ex)
		check_refusals(a);
	// Start PSNs near the 24-bit wrap so transfers cross it.
	check(connect(a, b, 0xfffff0, 0xffffe0) && connect(b, a, 0xffffe0, 0xfffff0),
	      "QPs connected (RESET -> INIT -> RTR -> RTS)");
	if (vmtest::failures)
		return vmtest::summary();
	if (opt.uc) {
		uc_run(a, b);
		return vmtest::summary();
	}

	const std::size_t half = kBuf / 2;
	std::uint8_t seed = 1;
	for (int it = 0; it < opt.iters * static_cast<int>(opt.sizes.size()); ++it) {
		const std::size_t len = opt.sizes[static_cast<std::size_t>(it) % opt.sizes.size()];
		if (vmtest::failures)
			return vmtest::summary();	// the QP is likely in ERR now
		const std::string n = std::to_string(len) + " B";
		ibv_wc wc{};

		// SEND (with immediate for odd sizes): A -> B.
		fill(a.buf, 0, len, seed);
		std::memset(b.buf.data() + half, 0, len + 16);
		const bool imm = len & 1;
		check(post_recv(b, 100 + len, half, len + 16), "post_recv " + n);
		check(post_send(a, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 200 + len, 0, len),
		      "post SEND " + n);
		const bool sent = wait_wc(a, wc);
		check(sent && wc.status == IBV_WC_SUCCESS && wc.wr_id == 200 + len &&
			      wc.opcode == IBV_WC_SEND,
		      "SEND " + n + " completes at the sender: " + ibv_wc_status_str(wc.status) +
			      " (wr_id " + std::to_string(wc.wr_id) + " opcode " +
			      std::to_string(wc.opcode) + ")");
		if (vmtest::failures)
			return vmtest::summary();	// the QP is likely in ERR now
		check(wait_wc(b, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 100 + len &&
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
		const bool written = wait_wc(a, wc);
		check(written && wc.status == IBV_WC_SUCCESS && wc.wr_id == 300 + len &&
			      wc.opcode == IBV_WC_RDMA_WRITE,
		      "WRITE " + n + " completes: " + ibv_wc_status_str(wc.status));
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
		const bool read = wait_wc(a, wc);
		check(read && wc.status == IBV_WC_SUCCESS && wc.wr_id == 400 + len &&
			      wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == len,
		      "READ " + n + " completes: " + ibv_wc_status_str(wc.status));
		check(std::memcmp(a.buf.data(), b.buf.data() + half, len) == 0 && a.buf[len] == 0,
		      "READ " + n + " bytes arrived intact");
		++seed;
	}

	for (int r = 0; r < opt.rounds && opt.burst; ++r) {
		if (vmtest::failures)
			return vmtest::summary();
		burst(a, b, r);
	}
	if (vmtest::failures)
		return vmtest::summary();

	// A SEND that finds no receive: RNR NAKs until B posts one.
	if (opt.rnr_ms) {
		ibv_wc wc{};
		fill(a.buf, 0, 3000, 55);
		std::memset(b.buf.data() + half, 0, 3016);
		check(post_send(a, IBV_WR_SEND, 802, 0, 3000), "post SEND 3000 B, no receive yet");
		std::this_thread::sleep_for(std::chrono::milliseconds(opt.rnr_ms));
		check(post_recv(b, 801, half, 3016), "post its receive after the RNR wait");
		const bool sent = wait_wc(a, wc);
		check(sent && wc.status == IBV_WC_SUCCESS && wc.wr_id == 802,
		      std::string("the SEND completes after RNR NAKs: ") +
			      ibv_wc_status_str(wc.status));
		check(wait_wc(b, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 801 &&
			      wc.byte_len == 3000 &&
			      std::memcmp(a.buf.data(), b.buf.data() + half, 3000) == 0,
		      "... and its bytes arrive intact");
		if (vmtest::failures)
			return vmtest::summary();
	}

	// WRITE with immediate consumes a receive on B.
	{
		ibv_wc wc{};
		fill(a.buf, 0, 3000, 77);
		check(post_recv(b, 501, half, 16), "post_recv for WRITE_WITH_IMM");
		check(post_send(a, IBV_WR_RDMA_WRITE_WITH_IMM, 502, 0, 3000,
				reinterpret_cast<std::uintptr_t>(b.buf.data() + 1000), b.mr->rkey),
		      "post WRITE_WITH_IMM 3000 B");
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 502,
		      "WRITE_WITH_IMM completes");
		check(wait_wc(b, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 501 &&
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
		check(wait_wc(a, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 602,
		      "inline SEND completes");
		check(wait_wc(b, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 100 &&
			      std::memcmp(a.buf.data(), b.buf.data() + half, 100) == 0,
		      "inline SEND bytes arrived intact");
	}

	if (opt.wr)
		wr_checks(a, b);

	kept_mr(a, b);

	// A WRITE beyond the remote MR: remote access error; both QPs fail.
	if (opt.err_check) {
		ibv_wc wc{};
		check(post_send(a, IBV_WR_RDMA_WRITE, 701, 0, 4096,
				reinterpret_cast<std::uintptr_t>(b.buf.data() + kBuf - 100), b.mr->rkey),
		      "post a WRITE past the end of B's MR");
		const bool got = wait_wc(a, wc);
		check(got && wc.wr_id == 701 && wc.status == IBV_WC_REM_ACCESS_ERR,
		      "it completes with IBV_WC_REM_ACCESS_ERR, got " +
			      std::string(ibv_wc_status_str(wc.status)));
		const int st = vmtest::wait_qp_state(a.qp, IBV_QPS_ERR);
		check(st == IBV_QPS_ERR, std::string("the requester's QP (") + argv[1] +
						 ") is in ERR, got state " + std::to_string(st));
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
