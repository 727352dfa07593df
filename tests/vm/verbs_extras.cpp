// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_extras DEV_A GID_A DEV_B GID_B [rxe]
//
// What rdma_rxe offers a verbs program beyond the basics, checked on B (A
// is the peer): the statuses of extended CQs it cannot make, the RDMA
// FLUSH access flags on QPs and MRs (RDMA FLUSH itself: verbs_flush.cpp),
// ibv_rereg_mr (new access, new PD, new range) and resizing an SRQ with
// ibv_modify_srq while WQEs are posted.
// Every byte moved is compared, every status is the exact one. With "rxe",
// B is an rdma_rxe device: the checks run as they do on softrdma, except
// where the two differ by design (see Peer).
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::check_errno;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

// Where B, the device under test, differs from softrdma by design.
struct Peer {
	// B is softrdma (not rdma_rxe).
	bool softrdma = true;
	// rdma_rxe advertises FLUSH_GLOBAL and FLUSH_PERSISTENT; softroce
	// FLUSH_GLOBAL only (it has no persistent memory), so ib_core refuses
	// its MRs with FLUSH_PERSISTENT with EOPNOTSUPP.
	bool flush_persistent = false;
	// The provider's own refusals of create_cq_ex (rdma_rxe's differ).
	bool cq_ex_refusals = true;
	// rdma_rxe rereg_mr changes PD and access only, not the range.
	bool rereg_trans = true;
};

constexpr std::size_t kBuf = 64 * 1024;
constexpr int kAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct Args {
	const char *dev_a, *gid_a, *dev_b, *gid_b;
};

void fill(std::uint8_t *p, std::size_t len, std::uint8_t seed)
{
	for (std::size_t i = 0; i < len; ++i)
		p[i] = static_cast<std::uint8_t>(seed + i * 13);
}

// Wait for one completion on cq: its wr_id and status (and opcode on
// success) must be those given.
void expect(ibv_cq *cq, std::uint64_t id, ibv_wc_status st, const std::string &what)
{
	ibv_wc wc{};
	const bool got = wait_wc(cq, wc);
	check(got && wc.wr_id == id && wc.status == st,
	      what + " completes with " + ibv_wc_status_str(st) + " (got " +
		      (got ? ibv_wc_status_str(wc.status) : "no completion") + ", wr_id " +
		      std::to_string(wc.wr_id) + ")");
}

bool post_write(ibv_qp *qp, std::uint64_t id, const void *src, std::uint32_t len,
		std::uint32_t lkey, std::uint64_t raddr, std::uint32_t rkey)
{
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(src), len, lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad) == 0;
}

bool post_send(ibv_qp *qp, std::uint64_t id, const void *src, std::uint32_t len,
	       std::uint32_t lkey)
{
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(src), len, lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(qp, &wr, &bad) == 0;
}

bool post_recv(ibv_qp *qp, std::uint64_t id, void *dst, std::uint32_t len, std::uint32_t lkey)
{
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(dst), len, lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad) == 0;
}

// 1. create_cq_ex: what UCX asks for first, and other flags the provider
// does not offer, answer EOPNOTSUPP (UCX falls back to ibv_create_cq on
// that, and on nothing else).
void cq_ex_flags(ibv_context *ctx, const Peer &peer)
{
	if (!peer.cq_ex_refusals)
		return;
	struct Case {
		const char *what;
		std::uint64_t wc_flags;
		std::uint32_t comp_mask;
		std::uint32_t flags;
	};
	const Case cases[] = {
		{"IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN (UCX)", IBV_WC_EX_WITH_BYTE_LEN,
		 IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN},
		{"a parent domain", IBV_WC_EX_WITH_BYTE_LEN, IBV_CQ_INIT_ATTR_MASK_PD, 0},
		{"completion timestamps", IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0, 0},
		{"an unknown create flag", IBV_WC_EX_WITH_BYTE_LEN, IBV_CQ_INIT_ATTR_MASK_FLAGS,
		 1U << 7},
		{"an unknown completion field", IBV_WC_EX_WITH_BYTE_LEN | (std::uint64_t{1} << 40), 0,
		 0},
	};
	for (const Case &c : cases) {
		ibv_cq_init_attr_ex a{};
		a.cqe = 16;
		a.wc_flags = c.wc_flags;
		a.comp_mask = c.comp_mask;
		a.flags = c.flags;
		errno = 0;
		ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);
		check_errno(cq ? 0 : errno, EOPNOTSUPP,
			    std::string("create_cq_ex with ") + c.what + " is refused");
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}
	ibv_cq_init_attr_ex a{};
	a.cqe = 16;
	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);
	check(cq != nullptr, "create_cq_ex single-threaded with byte_len, imm, qp_num");
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

// 2. A QP whose access flags include FLUSH_GLOBAL and FLUSH_PERSISTENT
// reaches INIT and reports them; an MR with FLUSH_GLOBAL is registered,
// one with FLUSH_PERSISTENT only where the device advertises it, else
// refused with EOPNOTSUPP.
void flush_access(RcSide &b, const Peer &peer)
{
	constexpr int kFlush = IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT;
	ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, b.cq, 4, 1);
	ibv_qp *qp = ibv_create_qp(b.pd, &ia);
	check(qp != nullptr, "create a QP");
	if (!qp)
		return;
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | kFlush;
	check_errno(ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS),
		    0, "RESET -> INIT with FLUSH_GLOBAL | FLUSH_PERSISTENT access");
	ibv_qp_attr q{};
	ibv_qp_init_attr qi{};
	const bool queried = ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, &qi) == 0;
	check(queried && q.qp_state == IBV_QPS_INIT && q.qp_access_flags == a.qp_access_flags,
	      "query_qp: INIT, with the FLUSH access flags (flags " +
		      std::to_string(q.qp_access_flags) + ")");
	ibv_destroy_qp(qp);

	ibv_mr *mr = ibv_reg_mr(b.pd, b.buf.data(), 4096,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_GLOBAL);
	check(mr != nullptr, "an MR with FLUSH_GLOBAL access registers");
	if (mr)
		ibv_dereg_mr(mr);
	// (FLUSH_PERSISTENT needs persistent memory under the MR: rdma_rxe
	// checks the pages, so it is not tried there.)
	if (peer.flush_persistent)
		return;
	errno = 0;
	mr = ibv_reg_mr(b.pd, b.buf.data(), 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_PERSISTENT);
	check_errno(mr ? 0 : errno, EOPNOTSUPP,
		    "an MR with FLUSH_PERSISTENT access is refused: no persistent memory");
	if (mr)
		ibv_dereg_mr(mr);
}

// Two QP pairs A1-B1 and A2-B2; B2's QP is in a second PD of B1's
// context (a PD an MR of B1 can move to), with a CQ of its own there.
struct Pairs {
	RcSide a1, b1, a2, b2;
	ibv_pd *pd2 = nullptr;
	ibv_cq *cq2 = nullptr;

	Pairs() = default;
	Pairs(const Pairs &) = delete;
	Pairs &operator=(const Pairs &) = delete;
	~Pairs()
	{
		// b2's QP and, once moved, b1's MR use pd2: they go first.
		if (b2.qp)
			ibv_destroy_qp(b2.qp);
		b2.qp = nullptr;
		if (b1.mr)
			ibv_dereg_mr(b1.mr);
		b1.mr = nullptr;
		if (pd2)
			ibv_dealloc_pd(pd2);
		if (cq2)
			ibv_destroy_cq(cq2);
	}

	bool setup(const Args &args)
	{
		if (!a1.setup(args.dev_a, args.gid_a, kBuf, kAll) ||
		    !b1.setup(args.dev_b, args.gid_b, kBuf, IBV_ACCESS_LOCAL_WRITE) ||
		    !a2.setup(args.dev_a, args.gid_a, kBuf, kAll) ||
		    !b2.setup(args.dev_b, args.gid_b, kBuf, IBV_ACCESS_LOCAL_WRITE))
			return false;
		pd2 = ibv_alloc_pd(b1.ctx);
		cq2 = ibv_create_cq(b1.ctx, 64, nullptr, nullptr, 0);
		if (!pd2 || !cq2)
			return false;
		ibv_destroy_qp(b2.qp);
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, cq2, 16, 1);
		b2.qp = ibv_create_qp(pd2, &ia);
		return b2.qp && a1.connect(b1, 100, 200, kQpAccess) &&
		       b1.connect(a1, 200, 100, kQpAccess) && a2.connect(b2, 300, 400, kQpAccess) &&
		       b2.connect(a2, 400, 300, kQpAccess);
	}
};

// 3. ibv_rereg_mr of B1's MR: access, then PD, then range.
void rereg(const Args &args, const Peer &peer)
{
	Pairs p;
	const bool ok = p.setup(args);
	check(ok, "two QP pairs, B's second QP in a second PD of the first QP's context");
	if (!ok)
		return;
	ibv_mr *mr = p.b1.mr;

	// LOCAL_WRITE -> LOCAL_WRITE | REMOTE_WRITE: a WRITE through it lands.
	check_errno(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
		    0, "rereg_mr: LOCAL_WRITE -> LOCAL_WRITE | REMOTE_WRITE");
	fill(p.a1.buf.data(), 4096, 0x21);
	check(post_write(p.a1.qp, 1, p.a1.buf.data(), 4096, p.a1.mr->lkey, p.b1.addr(8192),
			 mr->rkey),
	      "post a WRITE of 4 KiB through the MR's rkey");
	expect(p.a1.cq, 1, IBV_WC_SUCCESS, "the WRITE");
	check(std::memcmp(p.a1.buf.data(), p.b1.buf.data() + 8192, 4096) == 0,
	      "the WRITE's bytes landed");

	// To pd2: a QP of the old PD may no longer use it, one of pd2 may.
	check_errno(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, p.pd2, nullptr, 0, 0), 0,
		    "rereg_mr: to a second PD");
	check(mr->pd == p.pd2, "the MR's PD is the second PD");
	// Posted together with an RDMA WRITE before it (inline: no MR of b1's
	// PD is left): the WRITE is in flight when the SEND fails, and
	// completes first, flushed (or acknowledged, had its ACK come first).
	fill(p.b1.buf.data(), 512, 0x42);
	ibv_sge wsge{reinterpret_cast<std::uintptr_t>(p.b1.buf.data()), 64, 0};
	ibv_sge ssge{reinterpret_cast<std::uintptr_t>(p.b1.buf.data()), 512, mr->lkey};
	ibv_send_wr send{};
	send.wr_id = 2;
	send.opcode = IBV_WR_SEND;
	send.sg_list = &ssge;
	send.num_sge = 1;
	send.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr write{};
	write.wr_id = 6;
	write.next = &send;
	write.opcode = IBV_WR_RDMA_WRITE;
	write.sg_list = &wsge;
	write.num_sge = 1;
	write.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	write.wr.rdma.remote_addr = p.a1.addr(12288);
	write.wr.rdma.rkey = p.a1.mr->rkey;
	ibv_send_wr *bad = nullptr;
	check(ibv_post_send(p.b1.qp, &write, &bad) == 0,
	      "post an inline WRITE and, behind it, a SEND from the MR on a QP of the old PD");
	ibv_wc wc{};
	const bool got = wait_wc(p.b1.cq, wc);
	check(got && wc.wr_id == 6 &&
		      (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR),
	      std::string("the WRITE before it completes first, acknowledged or flushed (got ") +
		      (got ? ibv_wc_status_str(wc.status) : "no completion") + ", wr_id " +
		      std::to_string(wc.wr_id) + ")");
	expect(p.b1.cq, 2, IBV_WC_LOC_PROT_ERR, "the SEND on the old PD");
	check(post_recv(p.a2.qp, 3, p.a2.buf.data() + 1024, 512, p.a2.mr->lkey) &&
		      post_send(p.b2.qp, 4, p.b1.buf.data(), 512, mr->lkey),
	      "post the same SEND on a QP of the new PD");
	expect(p.cq2, 4, IBV_WC_SUCCESS, "the SEND on the new PD");
	expect(p.a2.cq, 3, IBV_WC_SUCCESS, "its receive");
	check(std::memcmp(p.b1.buf.data(), p.a2.buf.data() + 1024, 512) == 0,
	      "the SEND's bytes arrived");
	fill(p.a2.buf.data(), 2048, 0x63);
	check(post_write(p.a2.qp, 5, p.a2.buf.data(), 2048, p.a2.mr->lkey, p.b1.addr(20000),
			 mr->rkey),
	      "post a WRITE through the new PD's QP");
	expect(p.a2.cq, 5, IBV_WC_SUCCESS, "the WRITE");
	check(std::memcmp(p.a2.buf.data(), p.b1.buf.data() + 20000, 2048) == 0,
	      "the WRITE's bytes landed");

	// A new range (the keys may change): WRITEs land in the new range.
	if (!peer.rereg_trans)
		return;
	check_errno(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr,
				 p.b2.buf.data() + 4096, 16384, 0),
		    0, "rereg_mr: to another range");
	fill(p.a2.buf.data(), 1000, 0x7a);
	check(post_write(p.a2.qp, 6, p.a2.buf.data(), 1000, p.a2.mr->lkey,
			 p.b2.addr(4096 + 15384), mr->rkey),
	      "post a WRITE to the new range's last 1000 bytes");
	expect(p.a2.cq, 6, IBV_WC_SUCCESS, "the WRITE");
	check(std::memcmp(p.a2.buf.data(), p.b2.buf.data() + 4096 + 15384, 1000) == 0,
	      "the WRITE's bytes landed in the new range");
}

// 4. ibv_modify_srq (IBV_SRQ_MAX_WR): the ring grows with WQEs posted,
// which stay, in order; shrinking below what is posted is refused.
void srq_resize(const Args &args)
{
	constexpr std::uint32_t kMsg = 700;
	RcSide a;
	RcSide b;
	const bool ok = a.setup(args.dev_a, args.gid_a, kBuf, kAll) &&
			b.setup(args.dev_b, args.gid_b, kBuf, IBV_ACCESS_LOCAL_WRITE, 4) &&
			a.connect(b, 10, 20, kQpAccess) && b.connect(a, 20, 10, kQpAccess);
	check(ok, "a QP pair, B's receives from an SRQ of 4 WRs");
	if (!ok)
		return;
	ibv_srq_attr sa{};
	check(ibv_query_srq(b.srq, &sa) == 0 && sa.max_wr >= 4, "query_srq");
	const std::uint32_t first = sa.max_wr;
	auto post_srq = [&](std::uint64_t id) {
		ibv_sge sge{b.addr(id * kMsg), kMsg, b.mr->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_srq_recv(b.srq, &wr, &bad);
	};
	std::uint64_t next = 0;
	bool posted = true;
	while (next < first)
		posted = post_srq(next++) == 0 && posted;
	check(posted, "fill the SRQ (" + std::to_string(first) + " WRs)");
	check_errno(post_srq(next), ENOMEM, "one more does not fit");

	sa = {};
	sa.max_wr = 64;
	check_errno(ibv_modify_srq(b.srq, &sa, IBV_SRQ_MAX_WR), 0, "modify_srq: max_wr 64");
	sa = {};
	const bool queried = ibv_query_srq(b.srq, &sa) == 0;
	check(queried && sa.max_wr >= 64, "query_srq: max_wr " + std::to_string(sa.max_wr));
	posted = true;
	while (next < 40)
		posted = post_srq(next++) == 0 && posted;
	check(posted, "post up to 40 WRs in the grown SRQ");

	sa = {};
	sa.max_wr = 16;
	check_errno(ibv_modify_srq(b.srq, &sa, IBV_SRQ_MAX_WR), EINVAL,
		    "modify_srq: max_wr 16 below the 40 posted is refused");

	// 40 SENDs land in the WQEs in posting order, the first ones too.
	for (std::uint64_t i = 0; i < 40; ++i) {
		fill(a.buf.data() + i * kMsg, kMsg, static_cast<std::uint8_t>(i));
		if (!post_send(a.qp, 1000 + i, a.buf.data() + i * kMsg, kMsg, a.mr->lkey)) {
			check(false, "post SEND " + std::to_string(i));
			return;
		}
		ibv_wc wc{};
		const bool got = wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS &&
				 wc.wr_id == i && wc.byte_len == kMsg;
		if (!got) {
			check(false, "SEND " + std::to_string(i) + " fills SRQ WR " +
					     std::to_string(i) + " (status " +
					     std::to_string(wc.status) + ", wr_id " +
					     std::to_string(wc.wr_id) + ")");
			return;
		}
		ibv_wc swc{};
		if (!wait_wc(a.cq, swc) || swc.status != IBV_WC_SUCCESS) {
			check(false, "SEND " + std::to_string(i) + " completes");
			return;
		}
	}
	check(std::memcmp(a.buf.data(), b.buf.data(), 40 * kMsg) == 0,
	      "40 SENDs landed byte-exact in the SRQ's WRs, in posting order");

	// Empty again: shrinking is allowed.
	sa = {};
	sa.max_wr = 8;
	check_errno(ibv_modify_srq(b.srq, &sa, IBV_SRQ_MAX_WR), 0, "modify_srq: max_wr 8");
	next = 50;
	for (int i = 0; i < 2; ++i)
		post_srq(next++);
	fill(a.buf.data(), kMsg, 0x99);
	check(post_send(a.qp, 2000, a.buf.data(), kMsg, a.mr->lkey), "post a SEND");
	expect(b.cq, 50, IBV_WC_SUCCESS, "its receive in the shrunk SRQ");
	expect(a.cq, 2000, IBV_WC_SUCCESS, "the SEND");
	check(std::memcmp(a.buf.data(), b.buf.data() + 50 * kMsg, kMsg) == 0,
	      "its bytes landed");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_extras DEV_A GID_A DEV_B GID_B [rxe]\n");
		return 2;
	}
	const Args args{argv[1], argv[2], argv[3], argv[4]};
	Peer peer;
	if (argc > 5 && std::string(argv[5]) == "rxe") {
		peer.softrdma = false;
		peer.flush_persistent = true;
		peer.cq_ex_refusals = false;
		peer.rereg_trans = false;
	}
	{
		RcSide b;
		const bool ok = b.setup(args.dev_b, args.gid_b, kBuf, IBV_ACCESS_LOCAL_WRITE);
		check(ok, std::string("open ") + args.dev_b);
		if (!ok)
			return vmtest::summary();
		cq_ex_flags(b.ctx, peer);
		flush_access(b, peer);
	}
	// rdma_rxe as B: compared on the access flags only.
	if (peer.softrdma) {
		rereg(args, peer);
		srq_resize(args);
	}
	return vmtest::summary();
}
