// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_mw DEV_A GID_A DEV_B GID_B
//
// Memory windows (IBTA Vol. 1 10.6.7) between two RC QPs: B allocates and
// binds windows over its memory, A reaches B's memory through them (WRITE,
// READ, atomics) and invalidates them with SEND with Invalidate; B
// invalidates them locally. Every byte moved is compared, every status is
// the one the spec gives. B's MR grants no remote access of its own: what A
// can do, a window allows. Where rdma_rxe is B, checks it does not make
// (legal room, or a known difference) are skipped: see Peer.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::RcSide;
using vmtest::wait_qp_state;
using vmtest::wait_wc;

namespace {

// What B, the device binding the windows, does where devices differ.
struct Peer {
	// softrdma refuses a type 1 window in a bind WQE (ibv_bind_mw only)
	// and a type 2 bind that keeps the 8-bit key; rdma_rxe does neither.
	bool strict_bind = true;
	// rdma_rxe fails a bad invalidation without a NAK (see verbs_atomic).
	bool nak_bad_inv = true;
	// softrdma refuses to deregister an MR windows are bound to (EBUSY).
	bool dereg_busy = true;
	// rdma_rxe's provider reads the MR of a bind that has none (a type 1
	// zero-length bind) and crashes.
	bool bind_without_mr = true;
	// rdma_rxe moves the QP to error before it completes a failed bind or
	// LOCAL_INV, which then completes flushed instead of with its status.
	bool local_error_flushed = false;
	// rdma_rxe checks an access through a window against the MR's bounds,
	// not the window's.
	bool window_bounds = true;
	// The flag a receive that invalidated has. rdma_rxe writes the kernel's
	// IB_WC_WITH_INVALIDATE (1 << 2, IBV_WC_IP_CSUM_OK to libibverbs).
	unsigned with_inv = IBV_WC_WITH_INV;
};

constexpr std::size_t kBuf = 64 * 1024;
constexpr int kAccessA = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
// B's MR: windows may be bound to it, nothing remote goes through its rkey.
constexpr int kAccessB = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC;
constexpr int kWinAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC;
constexpr std::size_t kWin = 4096;	// the window: B's bytes [kWin, kWin + kWinLen)
constexpr std::size_t kWinLen = 1024;

struct Args {
	const char *dev_a, *gid_a, *dev_b, *gid_b;
};

template <typename Pred>
void expect_wc(const RcSide &s, ibv_wc &wc, Pred ok, const std::string &what)
{
	const bool got = wait_wc(s.cq, wc);
	check(got && ok(), what + " (got " + (got ? ibv_wc_status_str(wc.status) : "no completion") +
				   ")");
}

// Expect one completion: wr_id, status and opcode (opcode unchecked on errors).
void expect(const RcSide &s, std::uint64_t id, ibv_wc_status st, ibv_wc_opcode op,
	    const std::string &what)
{
	ibv_wc wc{};
	expect_wc(s, wc,
		  [&] {
			  return wc.wr_id == id && wc.status == st &&
				 (st != IBV_WC_SUCCESS || wc.opcode == op);
		  },
		  what + " completes with " + ibv_wc_status_str(st));
}

bool post(RcSide &s, ibv_send_wr &wr)
{
	ibv_send_wr *bad = nullptr;
	return ibv_post_send(s.qp, &wr, &bad) == 0;
}

bool post_bind(RcSide &s, std::uint64_t id, ibv_mw *mw, std::uint32_t rkey, ibv_mr *mr,
	       std::uint64_t addr, std::uint64_t len, unsigned access = kWinAccess)
{
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = {mr, addr, len, access};
	return post(s, wr);
}

// After a type 2 bind completed: the consumer keeps mw->rkey current
// (rdma_rxe names the window by it; softrdma by its index only).
void bound(ibv_mw *mw, std::uint32_t rkey)
{
	if (mw)
		mw->rkey = rkey;
}

bool post_local_inv(RcSide &s, std::uint64_t id, std::uint32_t rkey)
{
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	return post(s, wr);
}

bool post_rdma(RcSide &a, std::uint64_t id, ibv_wr_opcode op, std::size_t off, std::uint32_t len,
	       std::uint64_t raddr, std::uint32_t rkey)
{
	ibv_sge sge{a.addr(off), len, a.mr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return post(a, wr);
}

bool post_fetch_add(RcSide &a, std::uint64_t id, std::size_t off, std::uint64_t raddr,
		    std::uint32_t rkey, std::uint64_t add)
{
	ibv_sge sge{a.addr(off), 8, a.mr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add;
	return post(a, wr);
}

bool post_recv(RcSide &b, std::uint64_t id, std::size_t off, std::uint32_t len)
{
	ibv_sge sge{b.addr(off), len, b.mr->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(b.qp, &wr, &bad) == 0;
}

bool post_send_inv(RcSide &a, std::uint64_t id, std::size_t off, std::uint32_t len,
		   std::uint32_t rkey)
{
	ibv_sge sge{a.addr(off), len, a.mr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	return post(a, wr);
}

void fill(RcSide &s, std::size_t off, std::size_t len, std::uint8_t seed)
{
	for (std::size_t i = 0; i < len; ++i)
		s.buf[off + i] = static_cast<std::uint8_t>(seed + i * 7);
}

bool same(const RcSide &x, std::size_t xoff, const RcSide &y, std::size_t yoff, std::size_t len)
{
	return std::memcmp(x.buf.data() + xoff, y.buf.data() + yoff, len) == 0;
}

// A SEND with Invalidate of rkey from A; B's receive must report it.
void send_inv_ok(RcSide &a, RcSide &b, std::uint32_t rkey, std::uint64_t id, const Peer &peer)
{
	fill(a, 200, 16, 0x31);
	check(post_recv(b, id, 0, 64), "post a receive");
	check(post_send_inv(a, id + 1, 200, 16, rkey), "post SEND_WITH_INV of the window's rkey");
	ibv_wc wc{};
	const bool got = wait_wc(b.cq, wc);
	check(got && wc.wr_id == id && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == 16 && (wc.wc_flags & peer.with_inv) &&
		      !(wc.wc_flags & IBV_WC_WITH_IMM) && wc.invalidated_rkey == rkey,
	      "the receive completes with IBV_WC_WITH_INV and the invalidated rkey (status " +
		      std::to_string(wc.status) + ", opcode " + std::to_string(wc.opcode) +
		      ", byte_len " + std::to_string(wc.byte_len) + ", flags " +
		      std::to_string(wc.wc_flags) + ", rkey " + std::to_string(wc.invalidated_rkey) +
		      ", want " + std::to_string(rkey) + ")");
	check(same(a, 200, b, 0, 16), "the SEND's bytes arrived");
	expect(a, id + 1, IBV_WC_SUCCESS, IBV_WC_SEND, "the SEND_WITH_INV");
}

// Type 2: bind, WRITE/READ/atomic through the window, SEND with
// Invalidate, bind again, invalidate locally, bind again, then bounds.
void type2(RcSide &a, RcSide &b, const Peer &peer)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	check(mw && mw->type == IBV_MW_TYPE_2, "allocate a type 2 window");
	if (!mw)
		return;
	const std::uint32_t k1 = ibv_inc_rkey(mw->rkey);
	check(post_bind(b, 1, mw, k1, b.mr, b.addr(kWin), kWinLen), "post a type 2 bind");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind");
	bound(mw, k1);

	// Access through B's MR itself is refused: it grants none.
	fill(a, 0, 256, 0x10);
	check(post_rdma(a, 2, IBV_WR_RDMA_WRITE, 0, 256, b.addr(kWin + 100), k1),
	      "post a WRITE through the window");
	expect(a, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the WRITE");
	check(same(a, 0, b, kWin + 100, 256), "the WRITE's bytes landed in the window");

	fill(b, kWin + 512, 512, 0x55);
	check(post_rdma(a, 3, IBV_WR_RDMA_READ, 1024, 512, b.addr(kWin + 512), k1),
	      "post a READ of the window's last 512 bytes");
	expect(a, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "the READ");
	check(same(a, 1024, b, kWin + 512, 512), "the READ returned the window's bytes");

	std::uint64_t v = 0x1000;
	std::memcpy(b.buf.data() + kWin + kWinLen - 8, &v, 8);
	check(post_fetch_add(a, 4, 2048, b.addr(kWin + kWinLen - 8), k1, 5),
	      "post a FETCH_ADD on the window's last word");
	expect(a, 4, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, "the FETCH_ADD");
	std::uint64_t orig = 0;
	std::memcpy(&orig, a.buf.data() + 2048, 8);
	std::memcpy(&v, b.buf.data() + kWin + kWinLen - 8, 8);
	check(orig == 0x1000 && v == 0x1005, "the FETCH_ADD added and returned the old value");

	if (peer.dereg_busy) {
		ibv_mr *mr2 = ibv_reg_mr(b.pd, b.buf.data() + 8192, 4096, kAccessB);
		ibv_mw *mw2 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
		check(mr2 && mw2 && post_bind(b, 5, mw2, ibv_inc_rkey(mw2->rkey), mr2,
					      b.addr(8192), 16),
		      "bind a second window to a second MR");
		expect(b, 5, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "that bind");
		check(mr2 && ibv_dereg_mr(mr2) == EBUSY,
		      "an MR with a window bound cannot be deregistered (EBUSY)");
		check(mw2 && ibv_dealloc_mw(mw2) == 0, "deallocate the bound window");
		check(mr2 && ibv_dereg_mr(mr2) == 0, "then the MR deregisters");
	}

	send_inv_ok(a, b, k1, 10, peer);

	// Free again: bind under a new key, invalidate locally.
	const std::uint32_t k2 = ibv_inc_rkey(k1);
	check(post_bind(b, 20, mw, k2, b.mr, b.addr(kWin), kWinLen), "bind the freed window again");
	expect(b, 20, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the second bind");
	bound(mw, k2);
	check(post_local_inv(b, 21, k2), "post a LOCAL_INV of the window");
	expect(b, 21, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, "the LOCAL_INV");

	// A bind behind a WRITE completes after it, in SQ order.
	const std::uint32_t k3 = ibv_inc_rkey(k2);
	fill(b, 300, 64, 0x77);
	check(post_rdma(b, 30, IBV_WR_RDMA_WRITE, 300, 64, a.addr(4096), a.mr->rkey) &&
		      post_bind(b, 31, mw, k3, b.mr, b.addr(kWin), kWinLen, IBV_ACCESS_REMOTE_READ),
	      "post a WRITE from B, then a bind (read only)");
	expect(b, 30, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "B's WRITE, first");
	expect(b, 31, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind, second");
	bound(mw, k3);
	check(same(b, 300, a, 4096, 64), "B's WRITE landed");
	fill(b, kWin, 64, 0x99);
	check(post_rdma(a, 32, IBV_WR_RDMA_READ, 3000, 64, b.addr(kWin), k3),
	      "post a READ through the read-only window");
	expect(a, 32, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "the READ");
	check(same(a, 3000, b, kWin, 64), "the READ returned the window's bytes");

	// One byte past the window's end.
	if (peer.window_bounds) {
		check(post_rdma(a, 33, IBV_WR_RDMA_READ, 0, 8, b.addr(kWin + kWinLen - 7), k3),
		      "post a READ that ends one byte past the window");
		expect(a, 33, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ, "the READ out of bounds");
	}
	check(ibv_dealloc_mw(mw) == 0, "deallocate the window");
}

// An access the window does not allow, or through a dead window.
void denied(RcSide &a, RcSide &b, const Peer &peer, int how)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	const std::uint32_t k = mw ? ibv_inc_rkey(mw->rkey) : 0;
	check(mw && post_bind(b, 1, mw, k, b.mr, b.addr(kWin), kWinLen,
			      how == 0 ? IBV_ACCESS_REMOTE_READ : kWinAccess),
	      "bind a type 2 window");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind");
	bound(mw, k);
	std::string what;
	switch (how) {
	case 0:
		what = "a WRITE through a read-only window";
		break;
	case 1:
		send_inv_ok(a, b, k, 2, peer);
		what = "a WRITE through a window invalidated remotely";
		break;
	case 2:
		check(post_local_inv(b, 2, k), "post a LOCAL_INV");
		expect(b, 2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, "the LOCAL_INV");
		what = "a WRITE through a window invalidated locally";
		break;
	case 3:
		check(ibv_dealloc_mw(mw) == 0, "deallocate the bound window");
		mw = nullptr;
		what = "a WRITE through a deallocated window";
		break;
	default:
		check(post_rdma(a, 3, IBV_WR_RDMA_WRITE, 0, 16, b.addr(kWin), b.mr->rkey),
		      "post a WRITE through B's MR rkey");
		expect(a, 3, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE,
		       "a WRITE through an MR without remote access");
		if (mw)
			ibv_dealloc_mw(mw);
		return;
	}
	const std::vector<std::uint8_t> before(b.buf.begin() + kWin, b.buf.begin() + kWin + 64);
	fill(a, 0, 64, 0xee);
	check(post_rdma(a, 9, IBV_WR_RDMA_WRITE, 0, 64, b.addr(kWin), k), "post " + what);
	expect(a, 9, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, what);
	check(std::memcmp(before.data(), b.buf.data() + kWin, 64) == 0, "B's memory is untouched");
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "deallocate the window");
}

// Type 1: ibv_bind_mw, use, rebind elsewhere, zero-length bind.
void type1(RcSide &a, RcSide &b, const Peer &peer)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
	check(mw && mw->type == IBV_MW_TYPE_1, "allocate a type 1 window");
	if (!mw)
		return;
	const std::uint32_t k0 = mw->rkey;
	ibv_mw_bind mb{};
	mb.wr_id = 1;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info = {b.mr, b.addr(kWin), 2048, IBV_ACCESS_REMOTE_READ};
	check(ibv_bind_mw(b.qp, mw, &mb) == 0, "ibv_bind_mw a type 1 window");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the type 1 bind");
	const std::uint32_t k1 = mw->rkey;
	check(k1 != k0 && (k1 >> 8) == (k0 >> 8), "the window has a new 8-bit key");
	fill(b, kWin + 1000, 1000, 0x21);
	check(post_rdma(a, 2, IBV_WR_RDMA_READ, 0, 1000, b.addr(kWin + 1000), k1),
	      "post a READ through it");
	expect(a, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "the READ");
	check(same(a, 0, b, kWin + 1000, 1000), "the READ returned the window's bytes");

	// A valid type 1 window binds again, elsewhere, without invalidation.
	mb.wr_id = 3;
	mb.bind_info = {b.mr, b.addr(16384), 512, IBV_ACCESS_REMOTE_WRITE};
	check(ibv_bind_mw(b.qp, mw, &mb) == 0, "bind it again to another range, writable");
	expect(b, 3, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the rebind");
	const std::uint32_t k2 = mw->rkey;
	fill(a, 4096, 512, 0x42);
	check(post_rdma(a, 4, IBV_WR_RDMA_WRITE, 4096, 512, b.addr(16384), k2),
	      "post a WRITE through the new binding");
	expect(a, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the WRITE");
	check(same(a, 4096, b, 16384, 512), "the WRITE's bytes landed");

	if (!peer.bind_without_mr) {
		check(ibv_dealloc_mw(mw) == 0, "deallocate the type 1 window");
		return;
	}
	// Zero length: the window exists but gives access to nothing.
	mb.wr_id = 5;
	mb.bind_info = {nullptr, 0, 0, 0};
	check(ibv_bind_mw(b.qp, mw, &mb) == 0, "bind it with zero length");
	expect(b, 5, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the zero-length bind");
	check(post_rdma(a, 6, IBV_WR_RDMA_WRITE, 4096, 8, b.addr(16384), mw->rkey),
	      "post a WRITE through the zero-length window");
	expect(a, 6, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, "the WRITE");
	check(ibv_dealloc_mw(mw) == 0, "deallocate the type 1 window");
}

// SEND with Invalidate of what may not be invalidated remotely.
void bad_send_inv(RcSide &a, RcSide &b, const Peer & /*peer*/, bool type1_mw)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
	std::uint32_t key = b.mr->rkey;
	if (type1_mw) {
		ibv_mw_bind mb{};
		mb.wr_id = 1;
		mb.send_flags = IBV_SEND_SIGNALED;
		mb.bind_info = {b.mr, b.addr(kWin), 64, IBV_ACCESS_REMOTE_READ};
		check(mw && ibv_bind_mw(b.qp, mw, &mb) == 0, "bind a type 1 window");
		expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind");
		key = mw ? mw->rkey : 0;
	}
	check(post_recv(b, 2, 0, 64), "post a receive");
	check(post_send_inv(a, 3, 0, 16, key),
	      type1_mw ? "post SEND_WITH_INV of a type 1 window" : "post SEND_WITH_INV of an MR");
	expect(b, 2, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV, "the receive");
	expect(a, 3, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND, "the SEND_WITH_INV");
	if (mw)
		ibv_dealloc_mw(mw);
}

// Each bind or LOCAL_INV B must refuse: the status, and the QP in error.
void bad_local(RcSide & /*a*/, RcSide &b, const Peer &peer, int how)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, how == 5 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	ibv_pd *pd2 = nullptr;
	ibv_mr *mr2 = nullptr;
	check(mw != nullptr, "allocate a window");
	if (!mw)
		return;
	const std::uint32_t k = ibv_inc_rkey(mw->rkey);
	ibv_wc_status want = IBV_WC_MW_BIND_ERR;
	std::string what;
	bool posted = false;
	const auto status = [&](ibv_wc_status st) {
		return peer.local_error_flushed ? IBV_WC_WR_FLUSH_ERR : st;
	};
	want = status(want);
	switch (how) {
	case 0:
		mr2 = ibv_reg_mr(b.pd, b.buf.data() + 8192, 4096, IBV_ACCESS_LOCAL_WRITE);
		posted = mr2 && post_bind(b, 9, mw, k, mr2, b.addr(8192), 64);
		what = "a bind to an MR without IBV_ACCESS_MW_BIND";
		break;
	case 1:
		posted = post_bind(b, 9, mw, k, b.mr, b.addr(kBuf - 512), 1024);
		what = "a bind past the MR's end";
		break;
	case 2:
		posted = post_bind(b, 9, mw, mw->rkey, b.mr, b.addr(kWin), 64);
		what = "a type 2 bind that keeps the 8-bit key";
		break;
	case 3:
		posted = post_bind(b, 9, mw, k, b.mr, b.addr(kWin), 0);
		what = "a zero-length type 2 bind";
		break;
	case 4:
		check(post_bind(b, 8, mw, k, b.mr, b.addr(kWin), 64), "bind a type 2 window");
		expect(b, 8, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the first bind");
		bound(mw, k);
		posted = post_bind(b, 9, mw, ibv_inc_rkey(k), b.mr, b.addr(kWin), 64);
		what = "a bind of a type 2 window still bound";
		break;
	case 5:
		posted = post_bind(b, 9, mw, k, b.mr, b.addr(kWin), 64);
		what = "a bind WQE for a type 1 window";
		break;
	case 6:
		pd2 = ibv_alloc_pd(b.ctx);
		ibv_dealloc_mw(mw);
		mw = pd2 ? ibv_alloc_mw(pd2, IBV_MW_TYPE_2) : nullptr;
		posted = mw && post_bind(b, 9, mw, ibv_inc_rkey(mw->rkey), b.mr, b.addr(kWin), 64);
		what = "a bind of a window of another PD";
		break;
	case 7:
		mr2 = ibv_reg_mr(b.pd, b.buf.data() + 8192, 4096, IBV_ACCESS_MW_BIND);
		posted = mr2 && post_bind(b, 9, mw, k, mr2, b.addr(8192), 64);
		what = "a writable window on an MR without local write";
		break;
	case 8:
		posted = post_local_inv(b, 9, b.mr->rkey);
		want = status(IBV_WC_LOC_QP_OP_ERR);
		what = "a LOCAL_INV of an MR's key";
		break;
	case 9: {
		ibv_mw *t1 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
		posted = t1 && post_local_inv(b, 9, t1->rkey);
		want = status(IBV_WC_LOC_QP_OP_ERR);
		what = "a LOCAL_INV of a type 1 window";
		ibv_wc wc{};
		expect_wc(b, wc, [&] { return wc.wr_id == 9 && wc.status == want; },
			  what + " completes with " + ibv_wc_status_str(want));
		if (t1)
			ibv_dealloc_mw(t1);
		ibv_dealloc_mw(mw);
		return;
	}
	default:
		posted = post_local_inv(b, 9, mw->rkey);
		want = status(IBV_WC_LOC_QP_OP_ERR);
		what = "a LOCAL_INV of a free type 2 window";
		break;
	}
	check(posted, "post " + what);
	ibv_wc wc{};
	expect_wc(b, wc, [&] { return wc.wr_id == 9 && wc.status == want; },
		  what + " completes with " + ibv_wc_status_str(want));
	check(wait_qp_state(b.qp, IBV_QPS_ERR) == IBV_QPS_ERR, "and the QP is in the error state");
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

// A type 2 window serves only the QP it was bound through: a second QP of
// B, same PD, connected to a second QP of A, is refused.
void other_qp(RcSide &a, RcSide &b, const Args &args)
{
	RcSide a2;
	RcSide b2;
	bool ok = a2.setup(args.dev_a, args.gid_a, kBuf, kAccessA) &&
		  b2.setup(args.dev_b, args.gid_b, kBuf, kAccessB);
	if (ok) {
		ibv_destroy_qp(b2.qp);
		ibv_qp_init_attr ia{};
		ia.send_cq = b.cq; // B's context, as the PD
		ia.recv_cq = b.cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = 16;
		ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		b2.qp = ibv_create_qp(b.pd, &ia); // B's PD
		ok = b2.qp && a2.connect(b2, 40, 50, kQpAccess) && b2.connect(a2, 50, 40, kQpAccess);
	}
	check(ok, "a second QP pair, B's QP in B's PD");
	if (!ok)
		return;
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	const std::uint32_t k = mw ? ibv_inc_rkey(mw->rkey) : 0;
	check(mw && post_bind(b, 1, mw, k, b.mr, b.addr(kWin), kWinLen), "bind a type 2 window");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind");
	bound(mw, k);
	fill(a, 0, 32, 0x61);
	check(post_rdma(a, 2, IBV_WR_RDMA_WRITE, 0, 32, b.addr(kWin), k),
	      "post a WRITE through the QP it was bound through");
	expect(a, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "that WRITE");
	check(same(a, 0, b, kWin, 32), "its bytes landed");
	check(post_rdma(a2, 3, IBV_WR_RDMA_WRITE, 0, 32, b.addr(kWin), k),
	      "post a WRITE through another QP of the same PD");
	expect(a2, 3, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, "the WRITE through the other QP");
	if (mw)
		ibv_dealloc_mw(mw);
}

// The ibv_wr_* API: wr_bind_mw and wr_local_inv on an extended QP of B.
void qp_ex(RcSide &a, RcSide &b)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(b.qp);
	check(mw && qpx && qpx->wr_bind_mw && qpx->wr_local_inv, "an extended QP with bind ops");
	if (!mw || !qpx)
		return;
	const std::uint32_t k = ibv_inc_rkey(mw->rkey);
	const ibv_mw_bind_info info{b.mr, b.addr(kWin), kWinLen, kWinAccess};
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, k, &info);
	check(ibv_wr_complete(qpx) == 0, "wr_bind_mw");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the wr_bind_mw");
	bound(mw, k);
	fill(a, 0, 128, 0x13);
	check(post_rdma(a, 2, IBV_WR_RDMA_WRITE, 0, 128, b.addr(kWin + 64), k),
	      "post a WRITE through the window");
	expect(a, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the WRITE");
	check(same(a, 0, b, kWin + 64, 128), "the WRITE's bytes landed");
	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, k);
	check(ibv_wr_complete(qpx) == 0, "wr_local_inv");
	expect(b, 3, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, "the wr_local_inv");
	check(post_rdma(a, 4, IBV_WR_RDMA_WRITE, 0, 8, b.addr(kWin + 64), k),
	      "post a WRITE through the invalidated window");
	expect(a, 4, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, "the WRITE");
	ibv_dealloc_mw(mw);
}

// A bind whose access names IBV_ACCESS_LOCAL_WRITE beside REMOTE_WRITE, as
// programs written for rdma_rxe do, on a QP of B with LOCAL_WRITE |
// REMOTE_WRITE: windows of both types bind, and WRITEs through them land.
void local_write_bind(RcSide &a, RcSide &b)
{
	constexpr unsigned kAcc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	ibv_mw *mw2 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	const std::uint32_t k = mw2 ? ibv_inc_rkey(mw2->rkey) : 0;
	check(mw2 && post_bind(b, 1, mw2, k, b.mr, b.addr(kWin), kWinLen, kAcc),
	      "post a type 2 bind with LOCAL_WRITE | REMOTE_WRITE");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the type 2 bind");
	bound(mw2, k);
	fill(a, 0, 256, 0x3c);
	check(post_rdma(a, 2, IBV_WR_RDMA_WRITE, 0, 256, b.addr(kWin + 8), k),
	      "post a WRITE through the type 2 window");
	expect(a, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the WRITE");
	check(same(a, 0, b, kWin + 8, 256), "the WRITE's bytes landed");

	ibv_mw *mw1 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
	ibv_mw_bind mb{};
	mb.wr_id = 3;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info = {b.mr, b.addr(16384), 512, kAcc};
	check(mw1 && ibv_bind_mw(b.qp, mw1, &mb) == 0,
	      "ibv_bind_mw a type 1 window with LOCAL_WRITE | REMOTE_WRITE");
	expect(b, 3, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the type 1 bind");
	fill(a, 1024, 512, 0x5d);
	check(mw1 && post_rdma(a, 4, IBV_WR_RDMA_WRITE, 1024, 512, b.addr(16384), mw1->rkey),
	      "post a WRITE through the type 1 window");
	expect(a, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the WRITE");
	check(same(a, 1024, b, 16384, 512), "the WRITE's bytes landed");
	if (mw1)
		ibv_dealloc_mw(mw1);
	if (mw2)
		ibv_dealloc_mw(mw2);
}

// B's extended CQ, made by make_cq_ex.
ibv_cq_ex *b_cqx = nullptr;

// SEND with Invalidate into B's extended CQ: ibv_wc_read_invalidated_rkey.
void cq_ex_inv(RcSide &a, RcSide &b, const Peer &peer)
{
	ibv_mw *mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	const std::uint32_t k = mw ? ibv_inc_rkey(mw->rkey) : 0;
	check(mw && post_bind(b, 1, mw, k, b.mr, b.addr(kWin), kWinLen), "bind a type 2 window");
	expect(b, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind");
	bound(mw, k);
	fill(a, 0, 24, 0x5a);
	check(post_recv(b, 2, 0, 64) && post_send_inv(a, 3, 0, 24, k),
	      "post a receive and a SEND_WITH_INV of the window");
	expect(a, 3, IBV_WC_SUCCESS, IBV_WC_SEND, "the SEND_WITH_INV");
	ibv_cq_ex *cqx = b_cqx;
	ibv_poll_cq_attr pa{};
	int ret = ENOENT;
	for (long i = 0; i < 20000000 && ret == ENOENT; ++i)
		ret = ibv_start_poll(cqx, &pa);
	check(ret == 0, "the receive is polled with ibv_start_poll");
	if (ret)
		return;
	const bool ok = cqx->wr_id == 2 && cqx->status == IBV_WC_SUCCESS &&
			ibv_wc_read_opcode(cqx) == IBV_WC_RECV && ibv_wc_read_byte_len(cqx) == 24 &&
			(ibv_wc_read_wc_flags(cqx) & peer.with_inv) &&
			ibv_wc_read_invalidated_rkey(cqx) == k;
	ibv_end_poll(cqx);
	check(ok, "it reads IBV_WC_WITH_INV and ibv_wc_read_invalidated_rkey gives the window's rkey");
	check(same(a, 0, b, 0, 24), "the SEND's bytes arrived");
	check(post_rdma(a, 4, IBV_WR_RDMA_WRITE, 0, 8, b.addr(kWin), k),
	      "post a WRITE through the invalidated window");
	expect(a, 4, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, "the WRITE");
	if (mw)
		ibv_dealloc_mw(mw);
}

// B's CQ made again as an extended one, and its QP on it.
bool make_cq_ex(RcSide &b)
{
	ibv_destroy_qp(b.qp);
	b.qp = nullptr;
	ibv_destroy_cq(b.cq);
	ibv_cq_init_attr_ex ca{};
	ca.cqe = 64;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM;
	b_cqx = ibv_create_cq_ex(b.ctx, &ca);
	b.cq = b_cqx ? ibv_cq_ex_to_cq(b_cqx) : nullptr;
	if (!b.cq)
		return false;
	ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, b.cq, 16, 1);
	b.qp = ibv_create_qp(b.pd, &ia);
	return b.qp != nullptr;
}

// B's QP made again as an extended one with the bind ops.
bool make_qp_ex(RcSide &b)
{
	ibv_destroy_qp(b.qp);
	ibv_qp_init_attr_ex ia{};
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.pd = b.pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	b.qp = ibv_create_qp_ex(b.ctx, &ia);
	return b.qp != nullptr;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_mw DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	const Args args{argv[1], argv[2], argv[3], argv[4]};
	Peer peer;
	if (std::string(args.dev_b).starts_with("rxe")) {
		peer.strict_bind = false;
		peer.nak_bad_inv = false;
		peer.dereg_busy = false;
		peer.bind_without_mr = false;
		peer.local_error_flushed = true;
		peer.window_bounds = false;
		peer.with_inv = IBV_WC_IP_CSUM_OK;
	}

	{
		ibv_context *ctx = vmtest::open_by_name(args.dev_b);
		ibv_device_attr_ex da{};
		check(ctx && ibv_query_device_ex(ctx, nullptr, &da) == 0 &&
			      (da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
			      (da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
			      da.orig_attr.max_mw > 0,
		      "B reports memory windows, type 2B, and max_mw");
		if (ctx)
			ibv_close_device(ctx);
	}

	using Fn = std::function<void(RcSide &, RcSide &)>;
	std::vector<std::pair<std::string, Fn>> runs = {
		{"type 2 windows", [&](RcSide &a, RcSide &b) { type2(a, b, peer); }},
		{"type 1 windows", [&](RcSide &a, RcSide &b) { type1(a, b, peer); }},
		{"another QP", [&](RcSide &a, RcSide &b) { other_qp(a, b, args); }},
		{"qp_ex", [&](RcSide &a, RcSide &b) {
			 check(make_qp_ex(b) && a.connect(b, 5, 7, kQpAccess) &&
				       b.connect(a, 7, 5, kQpAccess),
			       "B's QP made again as an extended QP");
			 if (!vmtest::failures)
				 qp_ex(a, b);
		 }},
	};
	runs.emplace_back("cq_ex", [&](RcSide &a, RcSide &b) {
		check(make_cq_ex(b) && a.connect(b, 5, 7, kQpAccess) && b.connect(a, 7, 5, kQpAccess),
		      "B's CQ made again as an extended CQ");
		if (!vmtest::failures)
			cq_ex_inv(a, b, peer);
	});
	runs.emplace_back("local write", [&](RcSide &a, RcSide &b) {
		check(a.connect(b, 5, 7, kQpAccess) &&
			      b.connect(a, 7, 5, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
		      "B's QP with LOCAL_WRITE | REMOTE_WRITE");
		local_write_bind(a, b);
	});
	for (int how = 0; how < 5; ++how)
		runs.emplace_back("denied " + std::to_string(how),
				  [&, how](RcSide &a, RcSide &b) { denied(a, b, peer, how); });
	if (peer.nak_bad_inv) {
		runs.emplace_back("SEND_WITH_INV of an MR", [&](RcSide &a, RcSide &b) {
			bad_send_inv(a, b, peer, false);
		});
		runs.emplace_back("SEND_WITH_INV of a type 1 window", [&](RcSide &a, RcSide &b) {
			bad_send_inv(a, b, peer, true);
		});
	}
	for (int how = 0; how <= 10; ++how) {
		// rdma_rxe: no such checks (2, 5); a free window (10) is not
		// refused and takes it down.
		if (!peer.strict_bind && (how == 2 || how == 5 || how == 10))
			continue;
		runs.emplace_back("bad local " + std::to_string(how),
				  [&, how](RcSide &a, RcSide &b) { bad_local(a, b, peer, how); });
	}
	for (auto &[what, fn] : runs) {
		RcSide a;
		RcSide b;
		const bool ok = a.setup(args.dev_a, args.gid_a, kBuf, kAccessA) &&
				b.setup(args.dev_b, args.gid_b, kBuf, kAccessB);
		const bool qpx = what == "qp_ex" || what == "cq_ex" || what == "local write";
		check(ok && (qpx || (a.connect(b, 0xfffff0, 0x300, kQpAccess) &&
				     b.connect(a, 0x300, 0xfffff0, kQpAccess))),
		      "fresh QPs for " + what);
		if (ok)
			fn(a, b);
	}
	return vmtest::summary();
}
