// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_xrc DEV_A GID_A DEV_B GID_B DIR
//
// XRC (IBTA Vol. 1, Annex A14) from an XRC INI QP on A to an XRC TGT QP
// on B. SENDs (ibv_post_send with remote_srqn, and ibv_wr_* with
// ibv_wr_set_xrc_srqn, with immediate) land byte-exact in the XRC SRQ the
// request names and complete on that SRQ's CQ with the TGT QP's number;
// RDMA WRITE (also with immediate), RDMA READ and fetch-and-add reach B's
// memory under the SRQ's PD. The TGT QP is made by one context and
// opened (ibv_open_qp) by a second one that opened the same domain file
// (DIR/xrcd1), and outlives its creator's handle. A SEND naming an XRC SRQ
// of another domain (DIR/xrcd2) completes with IBV_WC_REM_ACCESS_ERR and
// lands nowhere. Prints "srqn N" (the good SRQ's number) for the capture
// check of xrc_verbs.sh.
#include <infiniband/verbs.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::wait_wc;

namespace {

constexpr std::size_t kBuf = 64 * 1024;
constexpr int kRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// One device's context, PD, CQ and a registered buffer.
struct Side {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	std::vector<std::uint8_t> buf;
	int gid_index = -1;
	ibv_gid gid{};

	Side() = default;
	Side(const Side &) = delete;
	Side &operator=(const Side &) = delete;
	~Side()
	{
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
	}

	bool setup(const char *dev, const char *gid_text, int access)
	{
		buf.assign(kBuf, 0);
		ctx = vmtest::open_by_name(dev);
		if (!ctx)
			return false;
		gid_index = vmtest::gid_index(ctx, gid_text, gid);
		pd = ibv_alloc_pd(ctx);
		cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
		if (pd)
			mr = ibv_reg_mr(pd, buf.data(), kBuf, access);
		return gid_index >= 0 && pd && cq && mr;
	}

	[[nodiscard]] std::uint64_t addr(std::size_t off) const
	{
		return reinterpret_cast<std::uintptr_t>(buf.data() + off);
	}
};

// An XRC domain of ctx on the file fd (made if it does not exist).
ibv_xrcd *open_xrcd(ibv_context *ctx, int fd)
{
	ibv_xrcd_init_attr xa{};
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = fd;
	xa.oflags = O_CREAT;
	return ibv_open_xrcd(ctx, &xa);
}

ibv_srq *xrc_srq(Side &s, ibv_xrcd *xrcd, ibv_cq *cq)
{
	ibv_srq_init_attr_ex sa{};
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 2;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |
		       IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = xrcd;
	sa.cq = cq;
	sa.pd = s.pd;
	return ibv_create_srq_ex(s.ctx, &sa);
}

bool post_srq(ibv_srq *srq, const Side &b, std::uint64_t id, std::size_t off, std::uint32_t len)
{
	ibv_sge sge{b.addr(off), len, b.mr->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_srq_recv(srq, &wr, &bad) == 0;
}

// The address vector towards peer's GID from side s.
void set_av(ibv_qp_attr &a, const Side &s, const Side &peer)
{
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(s.gid_index);
	a.ah_attr.grh.hop_limit = 64;
}

bool connect_ini(ibv_qp *ini, const Side &a, const Side &b, std::uint32_t tgt_qpn)
{
	ibv_qp_attr at{};
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	if (ibv_modify_qp(ini, &at,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	at = {};
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = tgt_qpn;
	at.rq_psn = 0;
	set_av(at, a, b);
	if (ibv_modify_qp(ini, &at,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN))
		return false;
	at = {};
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 100;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 4;
	return ibv_modify_qp(ini, &at,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0;
}

// The TGT QP, INIT already: RTR towards the INI QP, then RTS (which an XRC
// TGT QP takes too, as ibv_xsrq_pingpong moves it).
bool connect_tgt(ibv_qp *tgt, const Side &b, const Side &a, std::uint32_t ini_qpn)
{
	ibv_qp_attr at{};
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = ini_qpn;
	at.rq_psn = 100;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	set_av(at, b, a);
	if (ibv_modify_qp(tgt, &at,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return false;
	at = {};
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 0;
	at.timeout = 14;
	return ibv_modify_qp(tgt, &at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT) == 0;
}

// One signalled work request of opcode on the INI QP, to XRC SRQ srqn.
bool post(ibv_qp *ini, const Side &a, ibv_wr_opcode opcode, std::uint32_t srqn,
	  std::size_t off, std::uint32_t len, std::uint64_t raddr = 0, std::uint32_t rkey = 0,
	  std::uint32_t imm = 0)
{
	ibv_sge sge{a.addr(off), len, a.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = 1000 + static_cast<std::uint64_t>(opcode);
	wr.opcode = opcode;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(imm);
	wr.qp_type.xrc.remote_srqn = srqn;
	if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 2;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(ini, &wr, &bad) == 0;
}

// The send completion of the request just posted.
bool sent(const Side &a, ibv_wc_status want = IBV_WC_SUCCESS)
{
	ibv_wc wc{};
	return wait_wc(a.cq, wc) && wc.status == want;
}

void fill(std::vector<std::uint8_t> &buf, std::size_t off, std::size_t len, int seed)
{
	for (std::size_t i = 0; i < len; ++i)
		buf[off + i] = static_cast<std::uint8_t>(i * 7 + static_cast<std::size_t>(seed));
}

bool same(const Side &x, std::size_t xoff, const Side &y, std::size_t yoff, std::size_t len)
{
	return std::memcmp(x.buf.data() + xoff, y.buf.data() + yoff, len) == 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 6) {
		std::fprintf(stderr, "usage: verbs_xrc DEV_A GID_A DEV_B GID_B DIR\n");
		return 2;
	}
	Side a;
	Side b;
	check(a.setup(argv[1], argv[2], IBV_ACCESS_LOCAL_WRITE) &&
		      b.setup(argv[3], argv[4], kRemote),
	      "devices, PDs, CQs and MRs set up");
	ibv_context *b2 = vmtest::open_by_name(argv[3]);
	check(b2 != nullptr, "a second context on B");
	if (vmtest::failures)
		return vmtest::summary();

	ibv_device_attr da{};
	check(ibv_query_device(b.ctx, &da) == 0 && (da.device_cap_flags & IBV_DEVICE_XRC) &&
		      da.max_srq > 0,
	      "the device reports IBV_DEVICE_XRC and SRQs");

	const std::string dir = argv[5];
	const int fd1 = open((dir + "/xrcd1").c_str(), O_RDONLY | O_CREAT, 0600);
	const int fd2 = open((dir + "/xrcd2").c_str(), O_RDONLY | O_CREAT, 0600);
	ibv_xrcd *x1 = open_xrcd(b.ctx, fd1);
	ibv_xrcd *x1b = open_xrcd(b2, fd1);
	ibv_xrcd *x2 = open_xrcd(b.ctx, fd2);
	check(fd1 >= 0 && fd2 >= 0 && x1 && x1b && x2,
	      "XRC domains: one file opened by two contexts, another file");
	ibv_cq *cq2 = ibv_create_cq(b.ctx, 16, nullptr, nullptr, 0);
	ibv_srq *s1 = x1 ? xrc_srq(b, x1, b.cq) : nullptr;
	ibv_srq *s2 = x2 && cq2 ? xrc_srq(b, x2, cq2) : nullptr;
	std::uint32_t n1 = 0;
	std::uint32_t n2 = 0;
	check(s1 && s2 && ibv_get_srq_num(s1, &n1) == 0 && ibv_get_srq_num(s2, &n2) == 0 &&
		      n1 && n2 && n1 != n2 && n1 <= 0xffffff && n2 <= 0xffffff,
	      "XRC SRQs in each domain, with their own 24-bit numbers");
	if (vmtest::failures)
		return vmtest::summary();
	std::printf("srqn %u\n", n1);

	ibv_qp_init_attr_ex ti{};
	ti.qp_type = IBV_QPT_XRC_RECV;
	ti.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ti.xrcd = x1;
	ibv_qp *tgt = ibv_create_qp_ex(b.ctx, &ti);
	check(tgt != nullptr, "XRC TGT QP created in the domain");
	ibv_qp_init_attr_ex ii{};
	ii.qp_type = IBV_QPT_XRC_SEND;
	ii.send_cq = a.cq;
	ii.cap.max_send_wr = 16;
	ii.cap.max_send_sge = 2;
	ii.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ii.pd = a.pd;
	ii.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ;
	ibv_qp *ini = ibv_create_qp_ex(a.ctx, &ii);
	check(ini != nullptr, "XRC INI QP created");
	if (vmtest::failures)
		return vmtest::summary();
	const std::uint32_t tgt_qpn = tgt->qp_num;

	ibv_qp_attr at{};
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC;
	check(ibv_modify_qp(tgt, &at,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0,
	      "TGT QP to INIT by its creator");
	ibv_qp_open_attr oa{};
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = tgt_qpn;
	oa.xrcd = x1b;
	oa.qp_type = IBV_QPT_XRC_RECV;
	ibv_qp *tgt2 = ibv_open_qp(b2, &oa);
	check(tgt2 != nullptr && tgt2->qp_num == tgt_qpn,
	      "the second context opens the TGT QP by number (ibv_open_qp)");
	oa.xrcd = x2;
	check(ibv_open_qp(b.ctx, &oa) == nullptr && errno == EINVAL,
	      "but not through another domain (EINVAL)");
	if (!tgt2)
		return vmtest::summary();
	check(connect_ini(ini, a, b, tgt_qpn) && connect_tgt(tgt2, b, a, ini->qp_num),
	      "INI QP to RTS; TGT QP to RTR and RTS through the opened handle");
	check(ibv_destroy_qp(tgt) == 0, "the creator's handle destroyed");
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	check(ibv_query_qp(tgt2, &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_RTS,
	      "the TGT QP lives on (RTS) while the other handle holds it");

	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	check(ibv_post_recv(ini, &rwr, &rbad) == EINVAL, "an INI QP takes no receives (EINVAL)");
	bool ok = true;
	for (int i = 0; i < 4; ++i)
		ok &= post_srq(s1, b, 1 + i, static_cast<std::size_t>(i) * 8192, 8192);
	check(ok && post_srq(s2, b, 99, 60000, 1024), "receives posted to both XRC SRQs");

	// SEND, three packets: into s1's first WQE, completed on s1's CQ.
	fill(a.buf, 0, 3000, 1);
	check(post(ini, a, IBV_WR_SEND, n1, 0, 3000) && sent(a), "SEND of 3000 bytes completes");
	ibv_wc wc{};
	check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.wr_id == 1 && wc.byte_len == 3000 && wc.qp_num == tgt_qpn &&
		      wc.src_qp == ini->qp_num,
	      "it completes on the XRC SRQ's CQ: WQE 1, 3000 bytes, qp_num the TGT QP's");
	check(same(a, 0, b, 0, 3000), "its 3000 bytes arrived");

	// SEND with immediate through ibv_wr_* and ibv_wr_set_xrc_srqn.
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(ini);
	fill(a.buf, 4096, 100, 2);
	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qpx, htonl(0x1234abcd));
	ibv_wr_set_xrc_srqn(qpx, n1);
	ibv_wr_set_sge(qpx, a.mr->lkey, a.addr(4096), 100);
	check(ibv_wr_complete(qpx) == 0 && sent(a), "SEND with immediate (ibv_wr_*) completes");
	check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 &&
		      wc.byte_len == 100 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
		      wc.imm_data == htonl(0x1234abcd) && wc.qp_num == tgt_qpn,
	      "it takes WQE 2, with its immediate");
	check(same(a, 4096, b, 8192, 100), "its 100 bytes arrived");

	// RDMA WRITE of 5000 bytes under B's rkey (the XRC SRQ's PD).
	fill(a.buf, 16384, 5000, 3);
	check(post(ini, a, IBV_WR_RDMA_WRITE, n1, 16384, 5000, b.addr(32768), b.mr->rkey) &&
		      sent(a),
	      "RDMA WRITE of 5000 bytes completes");
	check(same(a, 16384, b, 32768, 5000), "its 5000 bytes are in B's memory");

	// RDMA READ of 4000 bytes.
	fill(b.buf, 40960, 4000, 4);
	check(post(ini, a, IBV_WR_RDMA_READ, n1, 24576, 4000, b.addr(40960), b.mr->rkey) &&
		      sent(a),
	      "RDMA READ of 4000 bytes completes");
	check(same(a, 24576, b, 40960, 4000), "the 4000 bytes read are B's");

	// Fetch and add 2 to 40.
	const std::uint64_t forty = 40;
	std::memcpy(b.buf.data() + 49152, &forty, sizeof(forty));
	check(post(ini, a, IBV_WR_ATOMIC_FETCH_AND_ADD, n1, 28672, 8, b.addr(49152), b.mr->rkey) &&
		      sent(a),
	      "fetch-and-add completes");
	std::uint64_t orig = 0;
	std::uint64_t now = 0;
	std::memcpy(&orig, a.buf.data() + 28672, sizeof(orig));
	std::memcpy(&now, b.buf.data() + 49152, sizeof(now));
	check(orig == 40 && now == 42, "it read 40 and left 42");

	// RDMA WRITE with immediate: B's bytes, and a receive of s1.
	fill(a.buf, 30000, 64, 5);
	check(post(ini, a, IBV_WR_RDMA_WRITE_WITH_IMM, n1, 30000, 64, b.addr(51200), b.mr->rkey,
		   0x55) &&
		      sent(a),
	      "RDMA WRITE with immediate completes");
	check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 3 &&
		      wc.imm_data == htonl(0x55) && wc.qp_num == tgt_qpn,
	      "it takes WQE 3, with its immediate");
	check(same(a, 30000, b, 51200, 64), "its 64 bytes are in B's memory");

	// A SEND to the XRC SRQ of another domain: an XRC domain violation.
	check(post(ini, a, IBV_WR_SEND, n2, 0, 64) && sent(a, IBV_WC_REM_ACCESS_ERR),
	      "SEND to an XRC SRQ of another domain: IBV_WC_REM_ACCESS_ERR");
	check(ibv_poll_cq(b.cq, 1, &wc) == 0 && ibv_poll_cq(cq2, 1, &wc) == 0,
	      "and no receive completes on either SRQ's CQ");
	check(vmtest::wait_qp_state(tgt2, IBV_QPS_ERR) == IBV_QPS_ERR &&
		      vmtest::wait_qp_state(ini, IBV_QPS_ERR) == IBV_QPS_ERR,
	      "both QPs are in ERR");

	check(ibv_close_xrcd(x2) == EBUSY, "a domain with an SRQ cannot be closed (EBUSY)");
	check(ibv_destroy_qp(ini) == 0 && ibv_destroy_qp(tgt2) == 0 && ibv_destroy_srq(s1) == 0 &&
		      ibv_destroy_srq(s2) == 0,
	      "QPs and SRQs destroyed");
	check(ibv_close_xrcd(x2) == 0 && ibv_close_xrcd(x1b) == 0 && ibv_close_xrcd(x1) == 0,
	      "domains closed");
	ibv_destroy_cq(cq2);
	ibv_close_device(b2);
	close(fd1);
	close(fd2);
	return vmtest::summary();
}
