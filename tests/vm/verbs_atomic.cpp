// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_atomic DEV_A GID_A DEV_B GID_B
//
// A requests, B responds. Where rdma_rxe is one of them, its own (legal)
// choices are expected instead: see Peer.
// Atomic operations and SEND with invalidate between two RC QPs: every
// result is compared with what the operation must have done, every error
// status is the one the spec gives.
#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

// What the devices under test do where the spec leaves room.
struct Peer {
	// rdma_rxe's provider refuses a misaligned atomic when it is posted.
	bool requester_checks_alignment = false;
	// rdma_rxe answers an operation its QP does not allow with an
	// Invalid Request NAK (ours: Remote Access, as HCAs do).
	ibv_wc_status qp_access_status = IBV_WC_REM_ACCESS_ERR;
	// rdma_rxe fails a bad invalidation without a NAK; the sender then
	// only sees retries run out. Not worth a test against it.
	bool test_send_inv = true;
};

constexpr std::size_t kBuf = 64 * 1024;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

std::uint64_t word(const RcSide &s, std::size_t off)
{
	std::uint64_t v;
	std::memcpy(&v, s.buf.data() + off, sizeof(v));
	return v;
}

void set_word(RcSide &s, std::size_t off, std::uint64_t v)
{
	std::memcpy(s.buf.data() + off, &v, sizeof(v));
}

bool post_atomic(RcSide &s, ibv_wr_opcode op, std::uint64_t id, std::size_t local_off,
		 std::uintptr_t raddr, std::uint32_t rkey, std::uint64_t compare_add,
		 std::uint64_t swap, unsigned flags = IBV_SEND_SIGNALED)
{
	ibv_sge sge{s.addr(local_off), 8, s.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = flags;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(s.qp, &wr, &bad) == 0;
}

// Wait for a completion on s and check it with ok(); the message tells
// what arrived.
template <typename Pred> void expect_wc(const RcSide &s, ibv_wc &wc, Pred ok, const std::string &what)
{
	const bool got = wait_wc(s.cq, wc);
	check(got && ok(),
	      what + " (got " + (got ? ibv_wc_status_str(wc.status) : "no completion") + ")");
}

// Fetch-and-add and compare-and-swap results, A on B's memory.
void atomics_ok(RcSide &a, RcSide &b)
{
	ibv_wc wc{};
	set_word(b, 64, 0x1122334455667788ULL);
	check(post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, b.addr(64), b.mr->rkey, 0x10, 0),
	      "post FETCH_ADD");
	expect_wc(a, wc, [&] { return wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && wc.opcode == IBV_WC_FETCH_ADD && wc.byte_len == 8; },
		  "FETCH_ADD completes with IBV_WC_FETCH_ADD, byte_len 8");
	check(word(a, 0) == 0x1122334455667788ULL, "FETCH_ADD returns the original value");
	check(word(b, 64) == 0x1122334455667798ULL, "FETCH_ADD added to the remote word");

	// A failing compare leaves memory alone but still returns the value.
	check(post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 2, 8, b.addr(64), b.mr->rkey, 1, 0xdead),
	      "post CMP_SWP with a wrong compare value");
	expect_wc(a, wc, [&] { return wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_COMP_SWAP; },
		  "CMP_SWP completes with IBV_WC_COMP_SWAP");
	check(word(a, 8) == 0x1122334455667798ULL && word(b, 64) == 0x1122334455667798ULL,
	      "a failed compare returns the value and swaps nothing");

	check(post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 3, 16, b.addr(64), b.mr->rkey,
			  0x1122334455667798ULL, 0xfeedfacecafebeefULL),
	      "post CMP_SWP with the right compare value");
	expect_wc(a, wc, [&] { return wc.status == IBV_WC_SUCCESS; },
		  "CMP_SWP completes");
	check(word(a, 16) == 0x1122334455667798ULL && word(b, 64) == 0xfeedfacecafebeefULL,
	      "a matching compare swaps and returns the old value");

	// Wrap-around of the 64-bit add.
	set_word(b, 72, ~0ULL);
	check(post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 24, b.addr(72), b.mr->rkey, 2, 0),
	      "post FETCH_ADD across 2^64");
	expect_wc(a, wc, [&] { return wc.status == IBV_WC_SUCCESS && word(a, 24) == ~0ULL && word(b, 72) == 1; },
		  "FETCH_ADD wraps modulo 2^64");

	// Many in flight: more than max_rd_atomic (4), unsignalled but the last.
	set_word(b, 80, 0);
	bool posted = true;
	for (int i = 0; i < 40; ++i)
		posted &= post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 100 + i, 128 + 8 * i,
				      b.addr(80), b.mr->rkey, 3, 0,
				      i == 39 ? IBV_SEND_SIGNALED : 0);
	check(posted, "post 40 FETCH_ADDs back to back");
	expect_wc(a, wc, [&] { return wc.status == IBV_WC_SUCCESS && wc.wr_id == 139; },
		  "the last of them completes");
	bool seq = true;
	for (int i = 0; i < 40; ++i)
		seq &= word(a, 128 + 8 * i) == 3ULL * i;
	check(word(b, 80) == 120 && seq, "each add executed exactly once, in order");
}

// Errors: each completes with its status and moves the QPs to ERR.
void misaligned(RcSide &a, RcSide &b, const Peer &peer)
{
	ibv_wc wc{};
	const bool posted =
		post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 9, 0, b.addr(68), b.mr->rkey, 1, 0);
	if (peer.requester_checks_alignment) {
		check(!posted, "the requester refuses a misaligned FETCH_ADD when posted");
		return;
	}
	check(posted, "post FETCH_ADD on a misaligned address");
	expect_wc(a, wc, [&] { return wc.wr_id == 9 && wc.status == IBV_WC_REM_INV_REQ_ERR; },
		  "it completes with IBV_WC_REM_INV_REQ_ERR");
}

void no_atomic_access(RcSide &a, RcSide &b, const Peer &peer)
{
	ibv_wc wc{};
	check(post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 10, 0, b.addr(64), b.mr->rkey, 0, 1),
	      "post CMP_SWP to a QP without remote atomic access");
	expect_wc(a, wc, [&] { return wc.wr_id == 10 && wc.status == peer.qp_access_status; },
		  std::string("it completes with ") + ibv_wc_status_str(peer.qp_access_status));
}

void send_inv(RcSide &a, RcSide &b, const Peer & /*peer*/)
{
	ibv_wc wc{};
	ibv_sge rsge{b.addr(0), 64, b.mr->lkey};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	rwr.wr_id = 20;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	check(ibv_post_recv(b.qp, &rwr, &rbad) == 0, "post a receive");
	ibv_sge sge{a.addr(0), 32, a.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = 21;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = b.mr->rkey;
	check(ibv_post_send(a.qp, &wr, &bad) == 0, "post SEND_WITH_INV of a plain MR's rkey");
	expect_wc(b, wc, [&] { return wc.wr_id == 20 && wc.status == IBV_WC_REM_INV_REQ_ERR; },
		  "the receive completes with IBV_WC_REM_INV_REQ_ERR (only MWs may be invalidated)");
	expect_wc(a, wc, [&] { return wc.wr_id == 21 && wc.status == IBV_WC_REM_INV_REQ_ERR; },
		  "the send completes with IBV_WC_REM_INV_REQ_ERR");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_atomic DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	Peer peer;
	const auto is_rxe = [](const char *dev) { return std::string(dev).starts_with("rxe"); };
	if (is_rxe(argv[1]))
		peer.requester_checks_alignment = true;
	if (is_rxe(argv[3]))
		peer.qp_access_status = IBV_WC_REM_INV_REQ_ERR;
	if (is_rxe(argv[1]) || is_rxe(argv[3]))
		peer.test_send_inv = false;
	constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	{
		RcSide a;
		RcSide b;
		check(a.setup(argv[1], argv[2], kBuf, kAccess) &&
			      b.setup(argv[3], argv[4], kBuf, kAccess),
		      "both sides set up");
		check(a.connect(b, 0xfffffe, 0x100, kQpAccess | IBV_ACCESS_REMOTE_ATOMIC) &&
			      b.connect(a, 0x100, 0xfffffe,
					kQpAccess | IBV_ACCESS_REMOTE_ATOMIC),
		      "QPs connected with remote atomic access");
		if (!vmtest::failures) {
			atomics_ok(a, b);
			misaligned(a, b, peer);
		}
	}
	const std::pair<const char *, void (*)(RcSide &, RcSide &, const Peer &)> errs[] = {
		{"no atomic access", no_atomic_access},
		{"send with invalidate", send_inv},
	};
	for (const auto &[what, fn] : errs) {
		if (!peer.test_send_inv && fn == send_inv)
			continue;
		RcSide a;
		RcSide b;
		check(a.setup(argv[1], argv[2], kBuf, kAccess) &&
			      b.setup(argv[3], argv[4], kBuf, kAccess) &&
			      a.connect(b, 5, 7, kQpAccess) && b.connect(a, 7, 5, kQpAccess),
		      std::string("fresh QPs for ") + what);
		if (!vmtest::failures)
			fn(a, b, peer);
	}
	return vmtest::summary();
}
