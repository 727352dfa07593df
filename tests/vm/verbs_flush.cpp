// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_flush DEV_A GID_A DEV_B GID_B [--no-flush]
// verbs_flush --refused DEV
//
// IBTA 1.5's RDMA FLUSH and ATOMIC WRITE through the ibv_wr_* API, A the
// requester, B the target (either may be rdma_rxe): the device advertises
// both; RDMA WRITEs, FLUSHes (of a range and of a whole MR) and ATOMIC
// WRITEs complete in order with their own opcodes, and B's memory holds
// every byte written; then each error on a fresh pair, with its exact
// status: an ATOMIC WRITE not 8-byte aligned, a FLUSH of an MR without
// FLUSH_GLOBAL, an ATOMIC WRITE to a QP without REMOTE_WRITE (softrdma as
// B only: rdma_rxe answers it as an invalid request). On softrdma,
// ibv_post_send refuses both opcodes (EINVAL: its work request has no
// fields for them).
// With --no-flush, ATOMIC WRITE only: rdma_rxe (6.12) computes a FLUSH
// packet's ICRC over its headers twice (its opcode table gives FLUSH no
// payload offset) and sends a user FLUSH with VA 0, so no correct peer
// takes its FLUSHes, nor it theirs.
// With --refused: DEV (softiwarp; iWARP has neither) refuses a QP with
// the FLUSH and ATOMIC WRITE builders, EOPNOTSUPP.
#include <infiniband/verbs.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::check_errno;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

constexpr std::size_t kBuf = 64 * 1024;
constexpr int kTargetMr = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_FLUSH_GLOBAL;
constexpr int kTargetQp = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_FLUSH_GLOBAL;
constexpr std::uint64_t kOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_FLUSH |
			       IBV_QP_EX_WITH_ATOMIC_WRITE;
// IB_UVERBS_DEVICE_FLUSH_GLOBAL and IB_UVERBS_DEVICE_ATOMIC_WRITE.
constexpr std::uint64_t kCapFlushGlobal = std::uint64_t{1} << 38;
constexpr std::uint64_t kCapAtomicWrite = std::uint64_t{1} << 40;

struct Args {
	const char *dev_a, *gid_a, *dev_b, *gid_b;
	bool flush = true;
};

bool is_softrdma(const char *dev)
{
	return std::string_view(dev).starts_with("sr");
}

// An RC QP on side's PD and CQ with the ibv_wr_* builders of ops.
ibv_qp *create_qp_ex(ibv_context *ctx, ibv_pd *pd, ibv_cq *cq, std::uint64_t ops)
{
	ibv_qp_init_attr_ex ia{};
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.pd = pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.send_ops_flags = ops;
	return ibv_create_qp_ex(ctx, &ia);
}

// A requester A (ibv_qp_ex) connected to a target B.
struct Pair {
	RcSide a, b;
	ibv_qp_ex *qpx = nullptr;

	bool setup(const Args &args, int target_qp_access)
	{
		if (!a.setup(args.dev_a, args.gid_a, kBuf, IBV_ACCESS_LOCAL_WRITE) ||
		    !b.setup(args.dev_b, args.gid_b, kBuf, kTargetMr))
			return false;
		ibv_destroy_qp(a.qp);
		a.qp = create_qp_ex(a.ctx, a.pd, a.cq, kOps);
		if (!a.qp)
			return false;
		qpx = ibv_qp_to_qp_ex(a.qp);
		return qpx && a.connect(b, 100, 200, 0) && b.connect(a, 200, 100, target_qp_access);
	}
};

// Wait for one completion on cq: its wr_id, status and (on success) opcode
// must be those given.
void expect(ibv_cq *cq, std::uint64_t id, ibv_wc_status st, ibv_wc_opcode op,
	    const std::string &what)
{
	ibv_wc wc{};
	const bool got = wait_wc(cq, wc);
	check(got && wc.wr_id == id && wc.status == st &&
		      (st != IBV_WC_SUCCESS || wc.opcode == op),
	      what + ": wr_id " + std::to_string(id) + " " + ibv_wc_status_str(st) +
		      " opcode " + std::to_string(op) + " (got " +
		      (got ? std::string(ibv_wc_status_str(wc.status)) + " wr_id " +
				     std::to_string(wc.wr_id) + " opcode " +
				     std::to_string(wc.opcode)
			   : std::string("no completion")) +
		      ")");
}

void caps(ibv_context *ctx, const char *dev)
{
	ibv_device_attr_ex attr{};
	const int ret = ibv_query_device_ex(ctx, nullptr, &attr);
	check(ret == 0 && (attr.device_cap_flags_ex & kCapFlushGlobal) &&
		      (attr.device_cap_flags_ex & kCapAtomicWrite),
	      std::string(dev) + " advertises FLUSH_GLOBAL and ATOMIC_WRITE");
}

// 1. WRITE, FLUSH (range), ATOMIC WRITEs, FLUSH (MR) in one batch.
void transfers(const Args &args)
{
	Pair p;
	const bool ok = p.setup(args, kTargetQp);
	check(ok, "a requester with the FLUSH and ATOMIC WRITE builders, connected");
	if (!ok)
		return;
	caps(p.a.ctx, args.dev_a);
	caps(p.b.ctx, args.dev_b);
	constexpr std::uint32_t kLen = 4096;
	constexpr std::size_t kAtomicOff = 8192;
	constexpr int kWrites = 16;
	for (std::uint32_t i = 0; i < kLen; ++i)
		p.a.buf[i] = static_cast<std::uint8_t>(i * 7 + 3);
	std::array<std::array<std::uint8_t, 8>, kWrites> words{};
	for (int w = 0; w < kWrites; ++w)
		for (int i = 0; i < 8; ++i)
			words[w][i] = static_cast<std::uint8_t>(0x10 * w + i + 1);

	ibv_qp_ex *q = p.qpx;
	ibv_wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(q, p.b.mr->rkey, p.b.addr(0));
	ibv_wr_set_sge(q, p.a.mr->lkey, p.a.addr(0), kLen);
	q->wr_id = 2;
	if (args.flush)
		ibv_wr_flush(q, p.b.mr->rkey, p.b.addr(0), kLen, IBV_FLUSH_GLOBAL,
			     IBV_FLUSH_RANGE);
	check(ibv_wr_complete(q) == 0, "post WRITE, FLUSH of its range");
	expect(p.a.cq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the WRITE");
	if (args.flush)
		expect(p.a.cq, 2, IBV_WC_SUCCESS, IBV_WC_FLUSH, "the FLUSH of its range");
	check(std::memcmp(p.b.buf.data(), p.a.buf.data(), kLen) == 0,
	      "B holds the bytes written before the FLUSH");

	// ATOMIC WRITEs to one word, then a FLUSH of the whole MR: in order,
	// the last value stays. The batch holds more than max_rd_atomic (4).
	ibv_wr_start(q);
	for (int w = 0; w < kWrites; ++w) {
		q->wr_id = 10 + w;
		ibv_wr_atomic_write(q, p.b.mr->rkey, p.b.addr(kAtomicOff), words[w].data());
	}
	q->wr_id = 30;
	if (args.flush)
		ibv_wr_flush(q, p.b.mr->rkey, p.b.addr(0), 0, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
	check(ibv_wr_complete(q) == 0, "post 16 ATOMIC WRITEs and a FLUSH of the MR");
	for (int w = 0; w < kWrites; ++w)
		expect(p.a.cq, 10 + w, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE,
		       "ATOMIC WRITE " + std::to_string(w));
	if (args.flush)
		expect(p.a.cq, 30, IBV_WC_SUCCESS, IBV_WC_FLUSH, "the FLUSH of the whole MR");
	check(std::memcmp(p.b.buf.data() + kAtomicOff, words[kWrites - 1].data(), 8) == 0,
	      "B's word holds the last ATOMIC WRITE's 8 bytes, as given");
	check(p.b.buf[kAtomicOff - 1] == 0 && p.b.buf[kAtomicOff + 8] == 0,
	      "nothing around the word changed");

	if (is_softrdma(args.dev_a)) {
		// ibv_post_send has no fields for them.
		for (const auto op : {IBV_WR_FLUSH, IBV_WR_ATOMIC_WRITE}) {
			ibv_send_wr wr{};
			ibv_send_wr *bad = nullptr;
			wr.opcode = op;
			wr.send_flags = IBV_SEND_SIGNALED;
			check_errno(ibv_post_send(p.a.qp, &wr, &bad), EINVAL,
				    "ibv_post_send of opcode " + std::to_string(op) + " is refused");
		}
	}
}

// 2. Each error on a pair of its own: the exact status at A.
void errors(const Args &args)
{
	struct Case {
		const char *what;
		int target_qp;
		bool flush;
		std::size_t off;
		bool plain_mr; // the FLUSH names an MR without FLUSH_GLOBAL
		ibv_wc_status want;
	};
	const Case cases[] = {
		{"an ATOMIC WRITE not 8-byte aligned", kTargetQp, false, 4, false,
		 IBV_WC_REM_INV_REQ_ERR},
		{"a FLUSH of an MR without FLUSH_GLOBAL", kTargetQp, true, 0, true,
		 IBV_WC_REM_ACCESS_ERR},
		{"an ATOMIC WRITE to a QP without REMOTE_WRITE", IBV_ACCESS_REMOTE_READ, false, 0,
		 false, IBV_WC_REM_ACCESS_ERR},
	};
	for (const Case &c : cases) {
		// rdma_rxe answers a request its QP's access refuses with an
		// invalid request NAK, softroce with a remote access one.
		if ((c.target_qp != kTargetQp && !is_softrdma(args.dev_b)) ||
		    (c.flush && !args.flush))
			continue;
		Pair p;
		const bool ok = p.setup(args, c.target_qp);
		check(ok, std::string("a fresh pair for ") + c.what);
		if (!ok)
			continue;
		ibv_mr *plain = nullptr;
		std::uint32_t rkey = p.b.mr->rkey;
		if (c.plain_mr) {
			plain = ibv_reg_mr(p.b.pd, p.b.buf.data() + 32768, 4096,
					   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
			check(plain != nullptr, "an MR without FLUSH_GLOBAL");
			if (!plain)
				continue;
			rkey = plain->rkey;
		}
		const std::array<std::uint8_t, 8> word{1, 2, 3, 4, 5, 6, 7, 8};
		ibv_qp_ex *q = p.qpx;
		ibv_wr_start(q);
		q->wr_id = 99;
		q->wr_flags = IBV_SEND_SIGNALED;
		if (c.flush)
			ibv_wr_flush(q, rkey, p.b.addr(32768), 4096, IBV_FLUSH_GLOBAL,
				     IBV_FLUSH_RANGE);
		else
			ibv_wr_atomic_write(q, rkey, p.b.addr(c.off), word.data());
		check(ibv_wr_complete(q) == 0, std::string("post ") + c.what);
		expect(p.a.cq, 99, c.want, IBV_WC_ATOMIC_WRITE, c.what);
		check(std::memcmp(p.b.buf.data() + c.off, word.data(), word.size()) != 0,
		      std::string("B's memory is untouched after ") + c.what);
		if (plain)
			ibv_dereg_mr(plain);
	}
}

// iWARP has neither: the builders are refused.
int refused(const char *dev)
{
	ibv_context *ctx = vmtest::open_by_name(dev);
	check(ctx != nullptr, std::string("open ") + dev);
	if (!ctx)
		return vmtest::summary();
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ibv_cq *cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
	for (const std::uint64_t op : {std::uint64_t{IBV_QP_EX_WITH_FLUSH},
				       std::uint64_t{IBV_QP_EX_WITH_ATOMIC_WRITE}}) {
		errno = 0;
		ibv_qp *qp = pd && cq ? create_qp_ex(ctx, pd, cq, IBV_QP_EX_WITH_RDMA_WRITE | op)
				      : nullptr;
		check_errno(qp ? 0 : errno, EOPNOTSUPP,
			    std::string(dev) + " refuses a QP with send op " + std::to_string(op));
		if (qp)
			ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return vmtest::summary();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 3 && std::string_view(argv[1]) == "--refused")
		return refused(argv[2]);
	const bool no_flush = argc == 6 && std::string_view(argv[5]) == "--no-flush";
	if (argc != 5 && !no_flush) {
		std::fprintf(stderr, "usage: verbs_flush DEV_A GID_A DEV_B GID_B [--no-flush]\n"
				     "       verbs_flush --refused DEV\n");
		return 2;
	}
	const Args args{argv[1], argv[2], argv[3], argv[4], !no_flush};
	transfers(args);
	errors(args);
	return vmtest::summary();
}
