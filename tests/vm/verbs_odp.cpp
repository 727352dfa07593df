// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_odp DEV_A GID_A DEV_B GID_B
// verbs_odp DEV	(softiwarp: its caps, MRs and prefetch; no second device)
//
// On-demand paging between two RC QPs (A and B), every byte checked:
// - the device reports ODP for RC and XRC (SEND, RECV, WRITE, READ,
//   ATOMIC, SRQ_RECV, FLUSH, ATOMIC_WRITE) and UD (SEND, RECV), and
//   implicit ODP;
// - ODP MRs over fresh anonymous memory (no page present): SEND into an
//   ODP receive buffer from an ODP buffer, RDMA WRITE into and RDMA READ
//   from ODP memory (READ into ODP memory too), fetch-and-add and
//   compare-and-swap on ODP memory with their results into ODP memory,
//   three pages and a bit at an odd offset; again after MADV_DONTNEED
//   (target pages gone) and after mprotect (source pages kept, the
//   device's mapping invalidated);
// - a WRITE into a page the parent wrote after fork() lands in the
//   parent's page, not in the child's copy;
// - ibv_advise_mr: PREFETCH and PREFETCH_WRITE with and without FLUSH,
//   NO_FAULT, then transfers; EINVAL for an unknown key and a non-ODP MR;
// - munmap: a WRITE into a range B unmapped completes with
//   IBV_WC_REM_ACCESS_ERR, a SEND from a range A unmapped with
//   IBV_WC_LOC_PROT_ERR; and an unmap while a 4 MiB WRITE is on its way
//   ends in success or one of those two, never in a crash;
// - registrations racing MADV_DONTNEED of their range (the MMU notifier
//   runs before the MR is set up) all succeed, with no crash;
// - UD: eight datagrams posted back to back from an ODP buffer into ODP
//   receive buffers, pages absent on both ends (fresh memory, then
//   MADV_DONTNEED, then mprotect), each across a page boundary: every
//   status and wr_id in order, the GRH, the bytes after it exact and
//   nothing written past them, no datagram dropped (rx_ud_odp_drops,
//   rx_ud_no_recv_drops); receives into a page B unmapped complete with
//   IBV_WC_LOC_PROT_ERR, and the datagrams after them land;
// - implicit ODP MRs (the whole address space) on both ends: the same
//   transfers and atomics over buffers that straddle a 16 MiB boundary
//   (two of the MR's children), fresh, dropped and invalidated, the
//   faults and invalidations counted (odp_faults, odp_invalidations); a
//   WRITE into a hole of B's address space completes with
//   IBV_WC_REM_ACCESS_ERR.
#include <infiniband/verbs.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::hw_counter;

namespace {

// Wait up to 30 s for one completion: a transfer whose pages are faulted
// in waits out RNR delays and the requester's ticks.
bool wait_wc(ibv_cq *cq, ibv_wc &wc)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);

	while (std::chrono::steady_clock::now() < end) {
		const int n = ibv_poll_cq(cq, 1, &wc);
		if (n)
			return n == 1;
	}
	return false;
}

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMap = 16 * kPage;
constexpr std::size_t kOff = 17;		// odd offset of every transfer
constexpr std::size_t kLen = 3 * kPage + 100;	// four pages touched
constexpr int kOdp = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		     IBV_ACCESS_ON_DEMAND;

// An anonymous mapping with an ODP MR over it.
struct OdpBuf {
	std::uint8_t *p = nullptr;
	std::size_t len = 0;
	ibv_mr *mr = nullptr;

	OdpBuf() = default;
	OdpBuf(const OdpBuf &) = delete;
	OdpBuf &operator=(const OdpBuf &) = delete;
	~OdpBuf()
	{
		if (mr)
			ibv_dereg_mr(mr);
		if (base)
			munmap(base, base_len);
		else if (p)
			munmap(p, len);
	}

	std::uint8_t *base = nullptr;	// what to unmap, if not p
	std::size_t base_len = 0;

	bool make(ibv_pd *pd, std::size_t bytes, int access = kOdp)
	{
		len = bytes;
		void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return false;
		p = static_cast<std::uint8_t *>(m);
		mr = ibv_reg_mr(pd, p, bytes, access);
		return mr != nullptr;
	}

	// @bytes of fresh memory two pages short of a 16 MiB boundary (the
	// children of an implicit MR are 16 MiB), and an implicit ODP MR.
	bool make_implicit(ibv_pd *pd, std::size_t bytes)
	{
		constexpr std::uintptr_t kChild = 16 << 20;

		len = bytes;
		base_len = 2 * kChild + bytes;
		void *m = mmap(nullptr, base_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return false;
		base = static_cast<std::uint8_t *>(m);
		const std::uintptr_t edge = (reinterpret_cast<std::uintptr_t>(base) + kChild) &
					    ~(kChild - 1);
		p = base + (edge - reinterpret_cast<std::uintptr_t>(base)) - 2 * kPage;
		mr = ibv_reg_mr(pd, nullptr, SIZE_MAX, kOdp);
		return mr != nullptr;
	}

	[[nodiscard]] std::uint64_t addr(std::size_t off) const
	{
		return reinterpret_cast<std::uintptr_t>(p + off);
	}

	// Zap the pages: the device's mapping goes, the data too.
	void drop() const { vmtest::odp_invalidate(p, len, false); }

	// The device's mapping goes, the data stays.
	void invalidate() const { vmtest::odp_invalidate(p, len, true); }
};

void fill(std::uint8_t *p, std::size_t n, unsigned seed)
{
	for (std::size_t i = 0; i < n; ++i)
		p[i] = static_cast<std::uint8_t>(i * 7 + seed);
}

bool same(const std::uint8_t *p, std::size_t n, unsigned seed)
{
	for (std::size_t i = 0; i < n; ++i)
		if (p[i] != static_cast<std::uint8_t>(i * 7 + seed))
			return false;
	return true;
}

// Post one work request on A and wait for its completion.
int post_one(const vmtest::RcSide &s, ibv_send_wr &wr, ibv_wc &wc)
{
	ibv_send_wr *bad = nullptr;

	wr.send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(s.qp, &wr, &bad))
		return -1;
	return wait_wc(s.cq, wc) ? 0 : -1;
}

ibv_send_wr rdma_wr(ibv_wr_opcode op, ibv_sge &sge, std::uint64_t raddr,
		    std::uint32_t rkey)
{
	ibv_send_wr wr{};
	wr.wr_id = op;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return wr;
}

bool connect(vmtest::RcSide &a, vmtest::RcSide &b)
{
	constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC;

	return a.connect(b, 100, 200, kQpAccess) && b.connect(a, 200, 100, kQpAccess);
}

// As connect(), A's retry timeout 4.096 us * 2^18 (about 1 s), not 2^14:
// on the debug kernel (KASAN, lockdep) a 4 MiB transfer faulting its
// pages in on both sides outlasted seven retries of 67 ms.
bool connect_slow(vmtest::RcSide &a, vmtest::RcSide &b)
{
	constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC;
	ibv_qp_attr qa{};

	if (!b.connect(a, 200, 100, kQpAccess))
		return false;
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qp_access_flags = kQpAccess;
	if (ibv_modify_qp(a.qp, &qa,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	qa = {};
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = IBV_MTU_1024;
	qa.dest_qp_num = b.qp->qp_num;
	qa.rq_psn = 200;
	qa.max_dest_rd_atomic = 4;
	qa.min_rnr_timer = 1;
	qa.ah_attr.is_global = 1;
	qa.ah_attr.port_num = 1;
	qa.ah_attr.grh.dgid = b.gid;
	qa.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(a.gid_index);
	qa.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(a.qp, &qa,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return false;
	qa = {};
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 100;
	qa.timeout = 18;
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;
	qa.max_rd_atomic = 4;
	return ibv_modify_qp(a.qp, &qa,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0;
}

// ODP of RC on both transports: every operation but the two softroce
// alone has (FLUSH, ATOMIC WRITE).
constexpr std::uint32_t kOdpRc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
				 IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
				 IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

// The device reports ODP and implicit ODP, and these caps for RC, XRC and
// UD; none for UC.
void caps(ibv_context *ctx, std::uint32_t rc, std::uint32_t xrc, std::uint32_t ud)
{
	ibv_device_attr_ex attr{};

	check(ibv_query_device_ex(ctx, nullptr, &attr) == 0, "query_device_ex");
	check(attr.odp_caps.general_caps == (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
	      "general_caps: ODP and implicit ODP (" +
		      std::to_string(attr.odp_caps.general_caps) + ")");
	check(attr.odp_caps.per_transport_caps.rc_odp_caps == rc,
	      "rc_odp_caps " + std::to_string(attr.odp_caps.per_transport_caps.rc_odp_caps));
	check(attr.xrc_odp_caps == xrc, "xrc_odp_caps " + std::to_string(attr.xrc_odp_caps));
	check(attr.odp_caps.per_transport_caps.ud_odp_caps == ud,
	      "ud_odp_caps " + std::to_string(attr.odp_caps.per_transport_caps.ud_odp_caps));
	check(attr.odp_caps.per_transport_caps.uc_odp_caps == 0, "no UC ODP");
}

// softroce's caps: RC and XRC with FLUSH and ATOMIC WRITE (rdma-core 56 has
// no names for them: IBV_ODP_SUPPORT_FLUSH, _ATOMIC_WRITE), UD's SEND, RECV.
void caps(ibv_context *ctx)
{
	constexpr std::uint32_t kOdpFlush = 1U << 6;
	constexpr std::uint32_t kOdpAtomicWrite = 1U << 7;
	const std::uint32_t rc = kOdpRc | kOdpFlush | kOdpAtomicWrite;

	caps(ctx, rc, rc, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV);
}

// SEND A -> B, WRITE A -> B, READ B -> A, atomics on B; all ODP, labelled.
void round(vmtest::RcSide &a, vmtest::RcSide &b, OdpBuf &oa, OdpBuf &ob,
	   const std::string &how, unsigned seed)
{
	ibv_wc wc{};
	bool posted = false;
	ibv_sge sge{};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;

	// SEND from A's ODP pages into B's ODP receive buffer.
	fill(oa.p + kOff, kLen, seed);
	if (how.ends_with("dropped")) {
		ob.drop();
	} else if (how.ends_with("invalidated")) {
		oa.invalidate();
		ob.invalidate();
	}
	sge = {ob.addr(kOff), static_cast<std::uint32_t>(kLen), ob.mr->lkey};
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	check(ibv_post_recv(b.qp, &rwr, &rbad) == 0, how + ": post_recv into ODP");
	ibv_sge ssge{oa.addr(kOff), static_cast<std::uint32_t>(kLen), oa.mr->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &ssge;
	wr.num_sge = 1;
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS,
	      how + ": SEND completes (" + ibv_wc_status_str(wc.status) + ")");
	check(wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == kLen &&
		      wc.opcode == IBV_WC_RECV,
	      how + ": receive completes with all bytes");
	check(same(ob.p + kOff, kLen, seed), how + ": SEND bytes exact");

	// RDMA WRITE from A into B's ODP pages.
	fill(oa.p + kOff, kLen, seed + 1);
	if (how.ends_with("dropped"))
		ob.drop();
	else if (how.ends_with("invalidated"))
		oa.invalidate(), ob.invalidate();
	ssge = {oa.addr(kOff), static_cast<std::uint32_t>(kLen), oa.mr->lkey};
	wr = rdma_wr(IBV_WR_RDMA_WRITE, ssge, ob.addr(kOff), ob.mr->rkey);
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS,
	      how + ": WRITE completes (" + ibv_wc_status_str(wc.status) + ")");
	check(same(ob.p + kOff, kLen, seed + 1), how + ": WRITE bytes exact");
	check(ob.p[kOff - 1] == 0 && ob.p[kOff + kLen] == 0, how + ": WRITE stays in range");

	// RDMA READ of B's ODP pages into A's ODP pages.
	fill(ob.p + kOff, kLen, seed + 2);
	if (how.ends_with("dropped"))
		oa.drop();
	else if (how.ends_with("invalidated"))
		oa.invalidate(), ob.invalidate();
	ssge = {oa.addr(kOff), static_cast<std::uint32_t>(kLen), oa.mr->lkey};
	wr = rdma_wr(IBV_WR_RDMA_READ, ssge, ob.addr(kOff), ob.mr->rkey);
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS,
	      how + ": READ completes (" + ibv_wc_status_str(wc.status) + ")");
	check(same(oa.p + kOff, kLen, seed + 2), how + ": READ bytes exact");

	// Fetch-and-add, then compare-and-swap, on B; results into A.
	const std::size_t at = 2 * kPage + 8;
	std::uint64_t v = 1000 + seed, got = 0;
	std::memcpy(ob.p + at, &v, sizeof(v));
	if (how.ends_with("dropped"))
		oa.drop();
	else if (how.ends_with("invalidated"))
		oa.invalidate(), ob.invalidate();
	ssge = {oa.addr(kPage), 8, oa.mr->lkey};
	wr = {};
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &ssge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = ob.addr(at);
	wr.wr.atomic.rkey = ob.mr->rkey;
	wr.wr.atomic.compare_add = 5;
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS,
	      how + ": fetch-and-add completes (" + ibv_wc_status_str(wc.status) + ")");
	std::memcpy(&got, oa.p + kPage, sizeof(got));
	check(got == v, how + ": fetch-and-add returns the old value");
	std::memcpy(&got, ob.p + at, sizeof(got));
	check(got == v + 5, how + ": fetch-and-add adds");
	if (!how.ends_with("fresh"))
		ob.invalidate();
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = v + 5;
	wr.wr.atomic.swap = 42;
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS,
	      how + ": compare-and-swap completes");
	std::memcpy(&got, ob.p + at, sizeof(got));
	check(got == 42, how + ": compare-and-swap swaps");
}

// A memory window bound to an ODP MR: the bind holds no page (an
// invalidation while it is bound goes through), the accesses through it
// fault pages in; also where the MR's own key made it the responder's
// kept MR first.
void windowed(vmtest::RcSide &a, vmtest::RcSide &b, OdpBuf &oa)
{
	OdpBuf ow;
	ibv_wc wc{};

	check(ow.make(b.pd, kMap, kOdp | IBV_ACCESS_MW_BIND), "an ODP MR windows bind to");
	ibv_mw *mw = ow.mr ? ibv_alloc_mw(b.pd, IBV_MW_TYPE_1) : nullptr;
	check(mw != nullptr, "a type 1 window");
	if (!mw)
		return;
	ibv_mw_bind mb{};
	mb.wr_id = 9;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info = {ow.mr, ow.addr(0), kMap,
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
	check(ibv_bind_mw(b.qp, mw, &mb) == 0 && wait_wc(b.cq, wc) &&
		      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
	      std::string("bind it to the ODP MR, no page present (") +
		      ibv_wc_status_str(wc.status) + ")");
	ibv_sge ssge{oa.addr(kOff), static_cast<std::uint32_t>(kLen), oa.mr->lkey};
	// WRITE A's bytes into the MR, or READ the MR's into A, by @rkey.
	auto xfer = [&](ibv_wr_opcode op, std::uint32_t rkey, unsigned seed,
			const std::string &what) {
		const bool write = op == IBV_WR_RDMA_WRITE;
		fill((write ? oa.p : ow.p) + kOff, kLen, seed);
		ibv_send_wr wr = rdma_wr(op, ssge, ow.addr(kOff), rkey);
		check(post_one(a, wr, wc) == 0 && wc.status == IBV_WC_SUCCESS,
		      what + " (" + ibv_wc_status_str(wc.status) + ")");
		check(same((write ? ow.p : oa.p) + kOff, kLen, seed), what + ": bytes exact");
	};
	for (unsigned i = 0; i < 2; ++i) {
		const std::string how = i ? "window after the MR's own key" : "window";

		if (i)
			xfer(IBV_WR_RDMA_WRITE, ow.mr->rkey, 50, how + ": WRITE by the MR's rkey");
		ow.drop();
		xfer(IBV_WR_RDMA_WRITE, mw->rkey, 60 + i,
		     how + ": WRITE through it into unmapped pages");
		// Its pages go while it is bound: nothing waits for the bind.
		ow.invalidate();
		xfer(IBV_WR_RDMA_READ, mw->rkey, 70 + i,
		     how + ": READ through it after an invalidation");
	}
	check(ibv_dealloc_mw(mw) == 0, "deallocate the window");
	ow.drop();
	check(ibv_dereg_mr(ow.mr) == 0, "deregister the MR after its window");
	ow.mr = nullptr;
}

// After fork(), the parent writes its page (copy on write): a WRITE lands
// in the parent's new page; the child's copy keeps the old bytes.
void forked(vmtest::RcSide &a, OdpBuf &oa, OdpBuf &ob)
{
	int to_child[2], to_parent[2];
	ibv_wc wc{};
	bool posted = false;

	std::memset(ob.p, 0x11, kPage);
	if (pipe(to_child) || pipe(to_parent)) {
		check(false, "pipes");
		return;
	}
	const pid_t pid = fork();
	if (pid == 0) {
		char c = 0;
		std::uint8_t first = 0;

		if (read(to_child[0], &c, 1) != 1)
			_exit(2);
		first = ob.p[100];
		_exit(first == 0x11 ? 0 : 1);
	}
	ob.p[0] = 0x22;		// the parent's copy on write
	fill(oa.p, 512, 9);
	ibv_sge sge{oa.addr(0), 512, oa.mr->lkey};
	ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, ob.addr(64), ob.mr->rkey);
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS,
	      "fork: WRITE completes");
	check(same(ob.p + 64, 512, 9) && ob.p[0] == 0x22,
	      "fork: WRITE lands in the parent's page");
	char go = 1;
	int status = -1;

	check(write(to_child[1], &go, 1) == 1, "fork: child told");
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "fork: the child's copy keeps its bytes");
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

void advise(vmtest::RcSide &a, vmtest::RcSide &b, OdpBuf &oa, OdpBuf &ob)
{
	ibv_sge sge{oa.addr(kOff), static_cast<std::uint32_t>(kLen), oa.mr->lkey};
	ibv_wc wc{};
	bool posted = false;

	oa.drop();
	check(ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) == 0,
	      "advise_mr PREFETCH_WRITE, FLUSH");
	check(ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1) == 0,
	      "advise_mr PREFETCH");
	check(ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) == 0,
	      "advise_mr PREFETCH_NO_FAULT");
	fill(oa.p + kOff, kLen, 77);
	ibv_sge dst{ob.addr(kOff), static_cast<std::uint32_t>(kLen), ob.mr->lkey};
	check(ibv_advise_mr(b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &dst, 1) == 0,
	      "advise_mr PREFETCH_WRITE on B");
	ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, ob.addr(kOff), ob.mr->rkey);
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_SUCCESS &&
		      same(ob.p + kOff, kLen, 77),
	      "WRITE after prefetch: bytes exact");
	ibv_sge bad = sge;
	bad.lkey ^= 0x80;
	const int r = ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &bad, 1);
	check(r == EINVAL, "advise_mr of an unknown key: EINVAL (" + std::to_string(r) + ")");
	ibv_sge plain{a.addr(0), 64, a.mr->lkey};
	const int r2 = ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &plain, 1);
	check(r2 == EINVAL, "advise_mr of a pinned MR: EINVAL (" + std::to_string(r2) + ")");
}

// munmap: remote and local accesses to unmapped ranges fail, exactly.
void unmapped(const char **argv)
{
	vmtest::RcSide a, b;
	ibv_wc wc{};
	bool posted = false;

	if (!a.setup(argv[1], argv[2], 4096, IBV_ACCESS_LOCAL_WRITE) ||
	    !b.setup(argv[3], argv[4], 4096, IBV_ACCESS_LOCAL_WRITE) || !connect(a, b)) {
		check(false, "munmap: second pair set up");
		return;
	}
	OdpBuf oa, ob;
	if (!oa.make(a.pd, kMap) || !ob.make(b.pd, kMap)) {
		check(false, "munmap: ODP MRs");
		return;
	}
	fill(oa.p, kMap, 3);
	munmap(ob.p + 4 * kPage, 4 * kPage);
	ibv_sge sge{oa.addr(0), static_cast<std::uint32_t>(kPage), oa.mr->lkey};
	ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, ob.addr(5 * kPage), ob.mr->rkey);
	posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_REM_ACCESS_ERR,
	      std::string("munmap: WRITE into B's unmapped range: ") +
		      ibv_wc_status_str(wc.status));

	vmtest::RcSide c, d;
	if (!c.setup(argv[1], argv[2], 4096, IBV_ACCESS_LOCAL_WRITE) ||
	    !d.setup(argv[3], argv[4], 4096, IBV_ACCESS_LOCAL_WRITE) || !connect(c, d)) {
		check(false, "munmap: third pair set up");
		return;
	}
	OdpBuf oc;
	if (!oc.make(c.pd, kMap)) {
		check(false, "munmap: ODP MR of C");
		return;
	}
	fill(oc.p, kMap, 4);
	munmap(oc.p + 8 * kPage, 2 * kPage);
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	ibv_sge rsge{d.addr(0), 4096, d.mr->lkey};
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ibv_post_recv(d.qp, &rwr, &rbad);
	ibv_sge ssge{oc.addr(8 * kPage + 10), 100, oc.mr->lkey};
	wr = {};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &ssge;
	wr.num_sge = 1;
	posted = post_one(c, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_LOC_PROT_ERR,
	      std::string("munmap: SEND from C's unmapped range: ") +
		      ibv_wc_status_str(wc.status));
}

// munmap while a long WRITE runs: any of the three endings, no crash.
void unmap_in_flight(const char **argv)
{
	constexpr std::size_t kBig = 4 << 20;
	vmtest::RcSide a, b;
	ibv_wc wc{};
	bool posted = false;
	ibv_send_wr *bad = nullptr;

	if (!a.setup(argv[1], argv[2], 4096, IBV_ACCESS_LOCAL_WRITE) ||
	    !b.setup(argv[3], argv[4], 4096, IBV_ACCESS_LOCAL_WRITE) || !connect_slow(a, b)) {
		check(false, "in flight: pair set up");
		return;
	}
	OdpBuf oa, ob;
	if (!oa.make(a.pd, kBig) || !ob.make(b.pd, kBig)) {
		check(false, "in flight: ODP MRs");
		return;
	}
	fill(oa.p, kBig, 5);
	ibv_sge sge{oa.addr(0), static_cast<std::uint32_t>(kBig), oa.mr->lkey};
	ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, ob.addr(0), ob.mr->rkey);
	wr.send_flags = IBV_SEND_SIGNALED;
	check(ibv_post_send(a.qp, &wr, &bad) == 0, "in flight: 4 MiB WRITE posted");
	munmap(ob.p + kBig / 2, kBig / 2);
	posted = wait_wc(a.cq, wc);
	check(posted && (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_REM_ACCESS_ERR),
	      std::string("in flight: B unmapped half: ") + ibv_wc_status_str(wc.status));
	// What landed before the unmap is what was sent.
	check(same(ob.p, kBig / 2, 5), "in flight: the half still mapped is exact");
	munmap(ob.p, kBig / 2);
	ob.p = nullptr;
}

// ODP registrations of a range another thread zaps again and again: an
// invalidation may come while the MR is being registered, before it is
// set up. Up to 2000 of them, or 2 s.
void reg_races(ibv_pd *pd)
{
	constexpr int kMax = 2000;
	void *m = mmap(nullptr, kMap, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		check(false, "race: mmap");
		return;
	}
	auto *p = static_cast<std::uint8_t *>(m);
	std::atomic<bool> stop{false};
	std::thread zap([&] {
		while (!stop.load(std::memory_order_relaxed))
			madvise(p, kMap, MADV_DONTNEED);
	});
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
	int n = 0, ok = 0;

	while (n < kMax && std::chrono::steady_clock::now() < end) {
		ibv_mr *mr = ibv_reg_mr(pd, p, kMap, kOdp);

		n++;
		if (mr && ibv_dereg_mr(mr) == 0)
			ok++;
	}
	stop = true;
	zap.join();
	munmap(p, kMap);
	check(n > 0 && ok == n, "race: " + std::to_string(ok) + " of " + std::to_string(n) +
					" registrations against MADV_DONTNEED");
}


// One end of the UD test: a UD QP in RTS, its CQ, an AH to the peer.
struct UdEnd {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_ah *ah = nullptr;
	int gid_index = -1;
	ibv_gid gid{};
	std::string dev;

	UdEnd() = default;
	UdEnd(const UdEnd &) = delete;
	UdEnd &operator=(const UdEnd &) = delete;
	~UdEnd()
	{
		if (ah)
			ibv_destroy_ah(ah);
		if (qp)
			ibv_destroy_qp(qp);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
	}

	bool setup(const char *name, const char *gid_text)
	{
		dev = name;
		ctx = vmtest::open_by_name(name);
		if (!ctx)
			return false;
		gid_index = vmtest::gid_index(ctx, gid_text, gid);
		pd = ibv_alloc_pd(ctx);
		cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
		if (!pd || !cq || gid_index < 0)
			return false;
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_UD, cq, 16, 1);
		qp = ibv_create_qp(pd, &ia);
		if (!qp)
			return false;
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qkey = kUdQkey;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						  IBV_QP_QKEY))
			return false;
		a = {};
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			return false;
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0x55;
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0;
	}

	bool make_ah(const UdEnd &peer)
	{
		ibv_ah_attr a{};
		a.is_global = 1;
		a.port_num = 1;
		a.grh.dgid = peer.gid;
		a.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
		a.grh.hop_limit = 64;
		ah = ibv_create_ah(pd, &a);
		return ah != nullptr;
	}

	[[nodiscard]] long counter(const char *name) const { return hw_counter(dev, name); }

	static constexpr std::uint32_t kUdQkey = 0x11111111;
};

constexpr std::size_t kGrh = 40;
constexpr int kUdMsgs = 8;
constexpr std::uint32_t kUdLen = 1000;		// within the 1024 MTU of veth
constexpr std::size_t kUdSrcOff = 3500;		// each payload across a page edge
constexpr std::size_t kUdDstOff = 3600;		// each GRH in one page, its payload in the next

// Post kUdMsgs receives into B's ODP pages, then kUdMsgs sends of A's:
// each status, wr_id, length, GRH and byte checked. @bad: the index of
// the page of B unmapped (0: none): the two receives whose buffers touch
// it (bad - 1 and bad) end in IBV_WC_LOC_PROT_ERR.
void ud_round(UdEnd &a, UdEnd &b, OdpBuf &oa, OdpBuf &ob, const std::string &how,
	      unsigned seed, int bad = 0)
{
	ibv_wc wc{};

	for (int i = 0; i < kUdMsgs; ++i)
		fill(oa.p + i * kPage + kUdSrcOff, kUdLen, seed + i);
	if (how == "dropped") {
		ob.drop();
		oa.drop();
		for (int i = 0; i < kUdMsgs; ++i)
			fill(oa.p + i * kPage + kUdSrcOff, kUdLen, seed + i);
	} else if (how == "invalidated") {
		oa.invalidate();
		ob.invalidate();
	}
	const long odp_drops = b.counter("rx_ud_odp_drops");
	const long no_recv = b.counter("rx_ud_no_recv_drops");
	bool ok = true;

	for (int i = 0; i < kUdMsgs; ++i) {
		ibv_sge sge{ob.addr(i * kPage + kUdDstOff), static_cast<std::uint32_t>(kGrh + kUdLen),
			    ob.mr->lkey};
		ibv_recv_wr rwr{};
		ibv_recv_wr *rbad = nullptr;

		rwr.wr_id = 100 + i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ok = ok && ibv_post_recv(b.qp, &rwr, &rbad) == 0;
	}
	for (int i = 0; i < kUdMsgs; ++i) {
		ibv_sge sge{oa.addr(i * kPage + kUdSrcOff), kUdLen, oa.mr->lkey};
		ibv_send_wr wr{};
		ibv_send_wr *sbad = nullptr;

		wr.wr_id = 200 + i;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = a.ah;
		wr.wr.ud.remote_qpn = b.qp->qp_num;
		wr.wr.ud.remote_qkey = UdEnd::kUdQkey;
		ok = ok && ibv_post_send(a.qp, &wr, &sbad) == 0;
	}
	check(ok, "UD " + how + ": " + std::to_string(kUdMsgs) + " receives and sends posted");
	for (int i = 0; i < kUdMsgs; ++i) {
		const bool got = wait_wc(a.cq, wc);

		check(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 200U + i &&
			      wc.opcode == IBV_WC_SEND,
		      "UD " + how + ": send " + std::to_string(i) + " completes (" +
			      (got ? ibv_wc_status_str(wc.status) : "none") + ")");
	}
	for (int i = 0; i < kUdMsgs; ++i) {
		const std::uint8_t *g = ob.p + i * kPage + kUdDstOff;
		const std::string what = "UD " + how + ": receive " + std::to_string(i);
		const bool got = wait_wc(b.cq, wc);

		if (bad && (i == bad - 1 || i == bad)) {
			check(got && wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 100U + i,
			      what + " into an unmapped range: " +
				      (got ? ibv_wc_status_str(wc.status) : "none"));
			continue;
		}
		check(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 100U + i &&
			      wc.opcode == IBV_WC_RECV && wc.byte_len == kGrh + kUdLen &&
			      (wc.wc_flags & IBV_WC_GRH) && wc.src_qp == a.qp->qp_num,
		      what + " completes (" + (got ? ibv_wc_status_str(wc.status) : "none") +
			      ", " + std::to_string(wc.byte_len) + " bytes)");
		// IPv4: 20 zero bytes, then the IPv4 header, from A to B.
		bool grh = g[20] == 0x45;
		for (int k = 0; k < 20; ++k)
			grh = grh && g[k] == 0;
		grh = grh && std::memcmp(g + 20 + 12, a.gid.raw + 12, 4) == 0 &&
		      std::memcmp(g + 20 + 16, b.gid.raw + 12, 4) == 0;
		check(grh, what + ": the GRH (IPv4, A to B)");
		check(same(g + kGrh, kUdLen, seed + i), what + ": bytes exact");
		check(g[-1] == 0 && g[kGrh + kUdLen] == 0, what + ": nothing written out of it");
	}
	check(b.counter("rx_ud_odp_drops") == odp_drops &&
		      b.counter("rx_ud_no_recv_drops") == no_recv,
	      "UD " + how + ": no datagram dropped");
}

// UD between A and B, ODP MRs on both ends: the rounds above, then a
// receive buffer B unmapped.
void ud(const char **argv)
{
	UdEnd a, b;

	if (!a.setup(argv[1], argv[2]) || !b.setup(argv[3], argv[4]) || !a.make_ah(b)) {
		check(false, "UD: QPs and AH set up");
		return;
	}
	OdpBuf oa, ob;
	if (!oa.make(a.pd, kMap) || !ob.make(b.pd, kMap)) {
		check(false, "UD: ODP MRs");
		return;
	}
	ud_round(a, b, oa, ob, "fresh", 31);
	ud_round(a, b, oa, ob, "dropped", 41);
	ud_round(a, b, oa, ob, "invalidated", 51);
	// B's third page goes: the two receives into it fail, the rest land.
	std::memset(ob.p, 0, ob.len);
	munmap(ob.p + 2 * kPage, kPage);
	ud_round(a, b, oa, ob, "unmapped", 61, 2);
}

} // namespace

// softiwarp (its transfers: verbs_iwarp --odp): ODP for RC, no FLUSH or
// ATOMIC WRITE there, no UD or XRC; explicit and implicit ODP MRs
// register, ibv_advise_mr prefetches into them.
int iwarp_odp(const char *dev)
{
	ibv_context *ctx = vmtest::open_by_name(dev);

	check(ctx != nullptr, std::string("open ") + dev);
	if (!ctx)
		return vmtest::summary();
	ibv_pd *pd = ibv_alloc_pd(ctx);
	caps(ctx, kOdpRc, 0, 0);
	{
		OdpBuf o, imp;
		check(pd && o.make(pd, kMap), "an ODP MR");
		check(pd && imp.make_implicit(pd, kMap), "an implicit ODP MR");
		if (o.mr && imp.mr) {
			ibv_sge sge{o.addr(kOff), static_cast<std::uint32_t>(kLen), o.mr->lkey};
			check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) == 0,
			      "PREFETCH_WRITE with FLUSH");
			sge = {imp.addr(kOff), static_cast<std::uint32_t>(kLen), imp.mr->lkey};
			check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1) == 0,
			      "PREFETCH into the implicit MR");
		}
	}
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return vmtest::summary();
}

// Implicit ODP MRs on a pair of their own: every transfer of round() over
// two children, then a WRITE into a hole (no mapping there) of B's.
void implicit(const char **argv)
{
	vmtest::RcSide a, b;
	ibv_wc wc{};

	if (!a.setup(argv[1], argv[2], 4096, IBV_ACCESS_LOCAL_WRITE) ||
	    !b.setup(argv[3], argv[4], 4096, IBV_ACCESS_LOCAL_WRITE) || !connect(a, b)) {
		check(false, "implicit: pair set up");
		return;
	}
	OdpBuf ia, ib;
	check(ia.make_implicit(a.pd, kMap) && ib.make_implicit(b.pd, kMap),
	      "implicit ODP MRs on both ends");
	if (!ia.mr || !ib.mr)
		return;
	check(ia.mr->addr == nullptr && ia.mr->length == SIZE_MAX, "implicit MR: address 0, all");
	const long faults = hw_counter(argv[3], "odp_faults");
	const long invalidations = hw_counter(argv[3], "odp_invalidations");
	round(a, b, ia, ib, "implicit, fresh", 31);
	round(a, b, ia, ib, "implicit, dropped", 41);
	round(a, b, ia, ib, "implicit, invalidated", 51);
	check(faults >= 0 && hw_counter(argv[3], "odp_faults") > faults,
	      "implicit: B's faults counted (odp_faults)");
	check(invalidations >= 0 && hw_counter(argv[3], "odp_invalidations") > invalidations,
	      "implicit: B's invalidations counted (odp_invalidations)");

	munmap(ib.p + 8 * kPage, 4 * kPage);
	fill(ia.p, kPage, 61);
	ibv_sge sge{ia.addr(0), static_cast<std::uint32_t>(kPage), ia.mr->lkey};
	ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, ib.addr(9 * kPage), ib.mr->rkey);
	const bool posted = post_one(a, wr, wc) == 0;
	check(posted && wc.status == IBV_WC_REM_ACCESS_ERR,
	      std::string("implicit: WRITE into a hole of B's: ") + ibv_wc_status_str(wc.status));
}

int main(int argc, const char **argv)
{
	if (argc == 2)
		return iwarp_odp(argv[1]);
	if (argc != 5) {
		std::fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B | %s DEV\n",
			     argv[0], argv[0]);
		return 2;
	}
	vmtest::RcSide a, b;

	check(a.setup(argv[1], argv[2], 4096, IBV_ACCESS_LOCAL_WRITE) &&
		      b.setup(argv[3], argv[4], 4096, IBV_ACCESS_LOCAL_WRITE) && connect(a, b),
	      "RC pair");
	if (vmtest::checks != 1 || !a.qp || !b.qp)
		return 1;
	caps(a.ctx);

	reg_races(a.pd);

	OdpBuf oa, ob;
	check(oa.make(a.pd, kMap) && ob.make(b.pd, kMap), "ODP MRs over fresh anonymous memory");
	if (!oa.mr || !ob.mr)
		return 1;
	round(a, b, oa, ob, "fresh", 1);
	round(a, b, oa, ob, "dropped", 11);
	round(a, b, oa, ob, "invalidated", 21);
	forked(a, oa, ob);
	windowed(a, b, oa);
	advise(a, b, oa, ob);
	unmapped(argv);
	unmap_in_flight(argv);
	implicit(argv);
	ud(argv);

	return vmtest::summary();
}
