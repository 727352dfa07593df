// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_iwarp_ext server|client ADDR PORT MODE
//
// iWARP beyond RFC 5040's Send/Write/Read, over the RDMA CM:
//   ext    RFC 7306 agreed: Send with Immediate Data (also empty), RDMA
//          Write with Immediate Data, fetch-and-add and compare-and-swap
//          (results checked at both ends), then RDMA Send with Invalidate of
//          a type 2 memory window the server bound to its QP (the window's
//          bytes, the invalidated key and the wc flags checked), and a second
//          Send with Invalidate of the dead key, which the server completes
//          with IBV_WC_REM_INV_REQ_ERR.
//   noext  RFC 7306 not agreed (a siw peer, or softrdma rdmap_ext=0): for
//          each extension opcode, one connection: Send, RDMA Write and RDMA
//          Read work (bytes compared), then the extension opcode posted by a
//          softiwarp client completes with IBV_WC_LOC_QP_OP_ERR.
//          A noext server speaks first: a 4-byte SEND once the connection
//          is established, which a noext client waits for before it posts.
//          siw's accept sends its MPA Reply before it gives the socket to
//          its QP; what arrives in between waits unread until more comes,
//          and a client's last RDMA Read Request would wait for ever. siw
//          raises ESTABLISHED once its QP has the socket.
//   plain  like noext, but the client does not try the extension opcodes
//          and nobody waits for a first SEND (siw as the client: its
//          provider refuses the opcodes itself, and its connect hands the
//          socket to its QP after the MPA Reply, as its accept does).
//   ext-odp  ext's immediates and atomics (not the windows) on ODP MRs
//          (IBV_ACCESS_ON_DEMAND) whose pages the device does not have
//          mapped before each operation: the server's receive slots and
//          Write target dropped, its atomic word invalidated with its value
//          kept, the client's sources invalidated and its results dropped.
// The server runs first, in the other network namespace; the client prints
// TAP lines, the server too. Exit status: 0 only if every check passed.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <netdb.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"

using vmtest::check;

namespace {

constexpr std::size_t kBuf = 1 << 20;
constexpr std::size_t kAtomic = 0;		// the server's atomic target
constexpr std::size_t kWriteImm = 8192;		// Write with Immediate lands here
constexpr std::size_t kWriteImmLen = 5000;
constexpr std::size_t kWin = 32768;		// the window over the server's bytes
constexpr std::size_t kWinLen = 4096;
constexpr std::size_t kPlainWrite = 40960;	// plain RDMA Write target
constexpr std::size_t kPlainRead = 49152;	// plain RDMA Read source
constexpr std::size_t kPlainLen = 3000;
constexpr std::size_t kSrc = 65536;		// the client's sources
constexpr std::size_t kRecv = std::size_t{512} * 1024;	// receive slots
constexpr std::size_t kSlot = std::size_t{32} * 1024;
constexpr int kSlots = 16;
constexpr int kNoextRounds = 4;

bool odp = false; // ext-odp

struct Peer {
	std::uint64_t addr;
	std::uint32_t rkey;
};

std::uint8_t pattern(std::size_t i, unsigned seed)
{
	return static_cast<std::uint8_t>((i * 131 + std::size_t{seed} * 7 + (i >> 8)) & 0xff);
}

void fill(std::uint8_t *p, std::size_t len, unsigned seed)
{
	for (std::size_t i = 0; i < len; ++i)
		p[i] = pattern(i, seed);
}

bool same(const std::uint8_t *p, std::size_t len, unsigned seed)
{
	for (std::size_t i = 0; i < len; ++i)
		if (p[i] != pattern(i, seed))
			return false;
	return true;
}

struct Conn {
	rdma_event_channel *ch = nullptr;
	rdma_cm_id *listen_id = nullptr;
	rdma_cm_id *id = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	std::vector<ibv_wc> aside;	// completions of the kind not waited for yet
	ibv_mr *mr = nullptr;
	std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kBuf);
	Peer peer{};

	Conn() = default;
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;
	Conn(Conn &&) = delete;
	Conn &operator=(Conn &&) = delete;
	~Conn()
	{
		if (id) {
			if (id->qp)
				rdma_destroy_qp(id);
			rdma_destroy_id(id);
		}
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (listen_id)
			rdma_destroy_id(listen_id);
		if (ch)
			rdma_destroy_event_channel(ch);
	}

	[[nodiscard]] std::uint64_t addr(std::size_t off) const
	{
		return reinterpret_cast<std::uintptr_t>(buf.data() + off);
	}

	[[nodiscard]] Peer me() const
	{
		return {addr(0), mr->rkey};
	}

	// PD, CQ, MR and QP on the device id is bound to.
	bool resources()
	{
		pd = ibv_alloc_pd(id->verbs);
		cq = ibv_create_cq(id->verbs, 256, nullptr, nullptr, 0);
		if (!pd || !cq)
			return false;
		// Windows bind to no ODP MR.
		mr = ibv_reg_mr(pd, buf.data(), kBuf,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
					(odp ? IBV_ACCESS_ON_DEMAND : IBV_ACCESS_MW_BIND));
		if (!mr)
			return false;
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, cq, 64, 2);
		if (rdma_create_qp(id, pd, &ia))
			return false;
		for (int i = 0; i < kSlots; ++i)
			if (!post_recv(100 + static_cast<std::uint64_t>(i), i))
				return false;
		// Before the peer can send: what arrives finds no page mapped.
		return !odp ||
		       (vmtest::odp_invalidate(buf.data() + kRecv, kSlot * kSlots, false) &&
			vmtest::odp_invalidate(buf.data() + kWriteImm, kWriteImmLen, false) &&
			vmtest::odp_invalidate(buf.data(), kWriteImm, true));
	}

	bool post_recv(std::uint64_t wr_id, int slot) const
	{
		ibv_sge sge{addr(kRecv + kSlot * static_cast<std::size_t>(slot)),
			    static_cast<std::uint32_t>(kSlot), mr->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = wr_id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_recv(id->qp, &wr, &bad) == 0;
	}

	[[nodiscard]] std::uint8_t *slot(const ibv_wc &wc)
	{
		return buf.data() + kRecv + kSlot * (wc.wr_id - 100);
	}

	bool post(ibv_send_wr &wr)
	{
		ibv_send_wr *bad = nullptr;
		wr.send_flags |= IBV_SEND_SIGNALED;
		return ibv_post_send(id->qp, &wr, &bad) == 0;
	}

	bool post_op(std::uint64_t wr_id, ibv_wr_opcode op, std::size_t off, std::uint32_t len,
		     std::uint64_t raddr = 0, std::uint32_t rkey = 0, std::uint32_t imm_or_inv = 0)
	{
		ibv_sge sge{addr(off), len, mr->lkey};
		ibv_send_wr wr{};
		wr.wr_id = wr_id;
		wr.opcode = op;
		wr.sg_list = &sge;
		wr.num_sge = len ? 1 : 0;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		if (op == IBV_WR_SEND_WITH_INV)
			wr.invalidate_rkey = imm_or_inv;
		else
			wr.imm_data = htonl(imm_or_inv);
		return post(wr);
	}

	bool post_atomic(std::uint64_t wr_id, ibv_wr_opcode op, std::size_t off,
			 std::uint64_t compare_add, std::uint64_t swap)
	{
		ibv_sge sge{addr(off), 8, mr->lkey};
		ibv_send_wr wr{};
		wr.wr_id = wr_id;
		wr.opcode = op;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = peer.addr + kAtomic;
		wr.wr.atomic.rkey = peer.rkey;
		wr.wr.atomic.compare_add = compare_add;
		wr.wr.atomic.swap = swap;
		return post(wr);
	}

	// The next send (wr_id < 100) or receive completion within 60 s (the
	// transfer runs in the kernel, which may be a slow debug kernel). The
	// two kinds share the CQ in no set order: the peer's answer may
	// complete before the send it answers; the other kind waits aside.
	bool wait(ibv_wc &wc, bool want_recv = false)
	{
		for (auto it = aside.begin(); it != aside.end(); ++it) {
			if ((it->wr_id >= 100) == want_recv) {
				wc = *it;
				aside.erase(it);
				return true;
			}
		}
		const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
		for (long i = 0;; ++i) {
			const int n = ibv_poll_cq(cq, 1, &wc);
			if (n < 0)
				return false;
			if (n == 1 && (wc.wr_id >= 100) == want_recv)
				return true;
			if (n == 1)
				aside.push_back(wc);
			if (i % 4096 == 0 && std::chrono::steady_clock::now() > end)
				return false;
		}
	}

	// Expect a completion of wr_id with status st (and opcode op on success).
	void expect(std::uint64_t wr_id, ibv_wc_status st, ibv_wc_opcode op,
		    const std::string &what)
	{
		ibv_wc wc{};
		const bool got = wait(wc);
		check(got && wc.wr_id == wr_id && wc.status == st &&
			      (st != IBV_WC_SUCCESS || wc.opcode == op),
		      what + " completes with " + ibv_wc_status_str(st) + " (got " +
			      (got ? std::string(ibv_wc_status_str(wc.status)) + ", wr_id " +
					     std::to_string(wc.wr_id)
				   : std::string("none")) +
			      ")");
	}

	// Expect the next receive: its completion in wc.
	bool recv(ibv_wc &wc, const std::string &what)
	{
		const bool got = wait(wc, true);
		const bool ok = got && wc.wr_id >= 100 && wc.wr_id < 100 + kSlots;
		check(ok, what + " arrives (got " +
				  (got ? std::string(ibv_wc_status_str(wc.status))
				       : std::string("none")) +
				  ")");
		return ok;
	}

	bool event(rdma_cm_event_type want, Peer *pd_out = nullptr)
	{
		rdma_cm_event *ev = nullptr;
		if (rdma_get_cm_event(ch, &ev))
			return false;
		const bool ok = ev->event == want;
		if (!ok)
			std::printf("# cm event %s, want %s\n", rdma_event_str(ev->event),
				    rdma_event_str(want));
		if (ok && pd_out && ev->param.conn.private_data &&
		    ev->param.conn.private_data_len >= sizeof(Peer))
			std::memcpy(pd_out, ev->param.conn.private_data, sizeof(Peer));
		if (ok && want == RDMA_CM_EVENT_CONNECT_REQUEST)
			id = ev->id;
		rdma_ack_cm_event(ev);
		return ok;
	}
};

rdma_conn_param conn_param(const Peer *pd)
{
	rdma_conn_param p{};
	p.private_data = pd;
	p.private_data_len = sizeof(*pd);
	p.responder_resources = 4;
	p.initiator_depth = 4;
	return p;
}

bool resolve(const char *addr, const char *port, sockaddr_storage &ss)
{
	addrinfo hints{};
	addrinfo *res = nullptr;
	hints.ai_family = AF_INET;
	if (getaddrinfo(addr, port, &hints, &res) || !res)
		return false;
	std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return true;
}

// Client: a connected Conn, or false.
bool client_connect(Conn &c, const char *addr, const char *port)
{
	sockaddr_storage ss{};
	c.ch = rdma_create_event_channel();
	if (!c.ch || !resolve(addr, port, ss) ||
	    rdma_create_id(c.ch, &c.id, nullptr, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c.id, nullptr, reinterpret_cast<sockaddr *>(&ss), 5000) ||
	    !c.event(RDMA_CM_EVENT_ADDR_RESOLVED) || rdma_resolve_route(c.id, 5000) ||
	    !c.event(RDMA_CM_EVENT_ROUTE_RESOLVED) || !c.resources())
		return false;
	const Peer me = c.me();
	rdma_conn_param p = conn_param(&me);
	return rdma_connect(c.id, &p) == 0 && c.event(RDMA_CM_EVENT_ESTABLISHED, &c.peer);
}

// Server: accept one connection on the listening Conn.
bool server_accept(Conn &c)
{
	if (!c.event(RDMA_CM_EVENT_CONNECT_REQUEST, &c.peer) || !c.resources())
		return false;
	const Peer me = c.me();
	rdma_conn_param p = conn_param(&me);
	return rdma_accept(c.id, &p) == 0 && c.event(RDMA_CM_EVENT_ESTABLISHED);
}

bool server_listen(Conn &c, const char *addr, const char *port)
{
	sockaddr_storage ss{};
	c.ch = rdma_create_event_channel();
	return c.ch && resolve(addr, port, ss) &&
	       rdma_create_id(c.ch, &c.listen_id, nullptr, RDMA_PS_TCP) == 0 &&
	       rdma_bind_addr(c.listen_id, reinterpret_cast<sockaddr *>(&ss)) == 0 &&
	       rdma_listen(c.listen_id, 4) == 0;
}

// ---- ext: both sides -------------------------------------------------------

// A device that carries RFC 7306 atomics and type 2 windows says so.
void check_device_caps(const Conn &c)
{
	ibv_device_attr da{};
	const bool ok = ibv_query_device(c.id->verbs, &da) == 0;
	check(ok && da.atomic_cap == IBV_ATOMIC_HCA, "the device reports IBV_ATOMIC_HCA");
	check(ok && (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && da.max_mw > 0,
	      "the device reports memory windows, type 2B, and max_mw");
}

void client_ext(Conn &c)
{
	check_device_caps(c);
	// Send with Immediate Data, 20000 bytes (several FPDUs), and empty.
	fill(c.buf.data() + kSrc, 20000, 1);
	check(!odp || vmtest::odp_invalidate(c.buf.data() + kSrc, 20000, true),
	      "ODP: the source's pages invalidated");
	check(c.post_op(1, IBV_WR_SEND_WITH_IMM, kSrc, 20000, 0, 0, 0x11223344),
	      "post SEND_WITH_IMM 20000 B");
	c.expect(1, IBV_WC_SUCCESS, IBV_WC_SEND, "SEND_WITH_IMM");
	check(c.post_op(2, IBV_WR_SEND_WITH_IMM, kSrc, 0, 0, 0, 0x55667788),
	      "post SEND_WITH_IMM 0 B");
	c.expect(2, IBV_WC_SUCCESS, IBV_WC_SEND, "empty SEND_WITH_IMM");

	// RDMA Write with Immediate Data.
	fill(c.buf.data() + kSrc, kWriteImmLen, 2);
	check(!odp || vmtest::odp_invalidate(c.buf.data() + kSrc, kWriteImmLen, true),
	      "ODP: the source's pages invalidated");
	check(c.post_op(3, IBV_WR_RDMA_WRITE_WITH_IMM, kSrc, kWriteImmLen,
			c.peer.addr + kWriteImm, c.peer.rkey, 0x99aabbcc),
	      "post RDMA_WRITE_WITH_IMM 5000 B");
	c.expect(3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "RDMA_WRITE_WITH_IMM");

	// Atomics on the server's word (100): +5, 105 -> 7, 1 -> 9 (fails).
	auto *res = reinterpret_cast<std::uint64_t *>(c.buf.data());
	res[0] = res[1] = res[2] = ~0ULL;
	check(!odp || vmtest::odp_invalidate(c.buf.data(), kSrc, false),
	      "ODP: the results' pages dropped");
	check(c.post_atomic(4, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 5, 0), "post FETCH_AND_ADD +5");
	c.expect(4, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, "FETCH_AND_ADD");
	check(res[0] == 100, "FETCH_AND_ADD returns 100 (got " + std::to_string(res[0]) + ")");
	check(c.post_atomic(5, IBV_WR_ATOMIC_CMP_AND_SWP, 8, 105, 7), "post CMP_AND_SWP 105 -> 7");
	c.expect(5, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, "CMP_AND_SWP");
	check(res[1] == 105, "CMP_AND_SWP returns 105 (got " + std::to_string(res[1]) + ")");
	check(c.post_atomic(6, IBV_WR_ATOMIC_CMP_AND_SWP, 16, 1, 9),
	      "post CMP_AND_SWP 1 -> 9 (no match)");
	c.expect(6, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, "unmatched CMP_AND_SWP");
	check(res[2] == 7, "unmatched CMP_AND_SWP returns 7 (got " + std::to_string(res[2]) + ")");
	// Tell the server: it checks its word.
	check(c.post_op(7, IBV_WR_SEND, kSrc, 8), "post SEND after the atomics");
	c.expect(7, IBV_WC_SUCCESS, IBV_WC_SEND, "that SEND");
	if (odp)
		return;

	// The server binds a window to its QP and sends us its rkey.
	ibv_wc wc{};
	std::uint32_t win_rkey = 0;
	if (c.recv(wc, "the window's rkey")) {
		check(wc.status == IBV_WC_SUCCESS && wc.byte_len == 4, "4 bytes: the rkey");
		std::memcpy(&win_rkey, c.slot(wc), 4);
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	fill(c.buf.data() + kSrc, 64, 3);
	check(c.post_op(8, IBV_WR_RDMA_WRITE, kSrc, 64, c.peer.addr + kWin + 100, win_rkey),
	      "post RDMA_WRITE through the window");
	c.expect(8, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "RDMA_WRITE through the window");
	fill(c.buf.data() + kSrc + 64, 100, 4);
	check(c.post_op(9, IBV_WR_SEND_WITH_INV, kSrc + 64, 100, 0, 0, win_rkey),
	      "post SEND_WITH_INV of the window");
	c.expect(9, IBV_WC_SUCCESS, IBV_WC_SEND, "SEND_WITH_INV");
	// Once more: the key is dead now; the server fails the receive.
	if (c.recv(wc, "the server's go-ahead"))
		check(wc.status == IBV_WC_SUCCESS, "go-ahead received");
	check(c.post_op(10, IBV_WR_SEND_WITH_INV, kSrc + 64, 100, 0, 0, win_rkey),
	      "post SEND_WITH_INV of the dead key");
	c.expect(10, IBV_WC_SUCCESS, IBV_WC_SEND, "that SEND_WITH_INV leaves");
	// The server's Terminate ends the connection.
	check(c.event(RDMA_CM_EVENT_DISCONNECTED), "disconnected after the Terminate");
}

void server_ext(Conn &c)
{
	auto *word = reinterpret_cast<std::uint64_t *>(c.buf.data() + kAtomic);
	ibv_wc wc{};

	check_device_caps(c);

	if (c.recv(wc, "SEND_WITH_IMM 20000 B")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      (wc.wc_flags & IBV_WC_WITH_IMM) &&
			      !(wc.wc_flags & IBV_WC_WITH_INV) && wc.imm_data == htonl(0x11223344) &&
			      wc.byte_len == 20000,
		      "RECV WITH_IMM 0x11223344, 20000 B");
		check(same(c.slot(wc), 20000, 1), "its 20000 bytes");
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	if (c.recv(wc, "empty SEND_WITH_IMM")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0x55667788) &&
			      wc.byte_len == 0,
		      "RECV WITH_IMM 0x55667788, 0 B");
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	if (c.recv(wc, "RDMA_WRITE_WITH_IMM")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0x99aabbcc) &&
			      wc.byte_len == kWriteImmLen,
		      "RECV_RDMA_WITH_IMM 0x99aabbcc, 5000 B");
		check(same(c.buf.data() + kWriteImm, kWriteImmLen, 2), "the written 5000 bytes");
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	if (c.recv(wc, "SEND after the atomics")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      !(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) &&
			      wc.byte_len == 8,
		      "plain RECV, 8 B, no flags");
		check(*word == 7, "the atomics left 7 (got " + std::to_string(*word) + ")");
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	if (odp) {
		check(c.event(RDMA_CM_EVENT_DISCONNECTED), "disconnected");
		return;
	}

	// A type 2 window over [kWin, kWin + kWinLen), bound to this QP.
	ibv_mw *mw = ibv_alloc_mw(c.pd, IBV_MW_TYPE_2);
	check(mw != nullptr, "allocate a type 2 window");
	if (!mw)
		return;
	const std::uint32_t rkey = ibv_inc_rkey(mw->rkey);
	ibv_send_wr wr{};
	wr.wr_id = 50;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = {c.mr, c.addr(kWin), kWinLen, IBV_ACCESS_REMOTE_WRITE};
	check(c.post(wr), "post the bind");
	c.expect(50, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind");
	mw->rkey = rkey;
	std::memcpy(c.buf.data() + kSrc, &rkey, 4);
	check(c.post_op(51, IBV_WR_SEND, kSrc, 4), "send the window's rkey");
	c.expect(51, IBV_WC_SUCCESS, IBV_WC_SEND, "that SEND");
	if (c.recv(wc, "SEND_WITH_INV")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      (wc.wc_flags & IBV_WC_WITH_INV) && !(wc.wc_flags & IBV_WC_WITH_IMM) &&
			      wc.invalidated_rkey == rkey && wc.byte_len == 100,
		      "RECV WITH_INV of the window's rkey, 100 B");
		check(same(c.slot(wc), 100, 4), "its 100 bytes");
		check(same(c.buf.data() + kWin + 100, 64, 3), "the 64 bytes written through the window");
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	check(c.post_op(52, IBV_WR_SEND, kSrc, 4), "send the go-ahead");
	c.expect(52, IBV_WC_SUCCESS, IBV_WC_SEND, "that SEND");
	// RFC 5040: an STag that cannot be invalidated ends the stream with a
	// Terminate; the receive fails.
	if (c.recv(wc, "SEND_WITH_INV of the dead key"))
		check(wc.status == IBV_WC_REM_INV_REQ_ERR,
		      std::string("it fails with REM_INV_REQ_ERR (got ") +
			      ibv_wc_status_str(wc.status) + ")");
	check(c.event(RDMA_CM_EVENT_DISCONNECTED), "disconnected");
	ibv_dealloc_mw(mw);
}

// ---- noext / plain ----------------------------------------------------------

constexpr std::array<ibv_wr_opcode, kNoextRounds> kExtOps = {
	IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_ATOMIC_CMP_AND_SWP};

void client_plain(Conn &c, ibv_wr_opcode ext, bool try_ext)
{
	ibv_wc wc{};
	if (try_ext && c.recv(wc, "the server's first SEND")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == 4,
		      "RECV 4 B");
		check(same(c.slot(wc), 4, 8), "its 4 bytes");
		c.post_recv(wc.wr_id, static_cast<int>(wc.wr_id - 100));
	}
	fill(c.buf.data() + kSrc, kPlainLen, 5);
	check(c.post_op(1, IBV_WR_RDMA_WRITE, kSrc, kPlainLen, c.peer.addr + kPlainWrite,
			c.peer.rkey),
	      "post RDMA_WRITE");
	c.expect(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "RDMA_WRITE");
	fill(c.buf.data() + kSrc + kPlainLen, 500, 6);
	check(c.post_op(2, IBV_WR_SEND, kSrc + kPlainLen, 500), "post SEND");
	c.expect(2, IBV_WC_SUCCESS, IBV_WC_SEND, "SEND");
	std::memset(c.buf.data() + kSrc, 0, kPlainLen);
	check(c.post_op(3, IBV_WR_RDMA_READ, kSrc, kPlainLen, c.peer.addr + kPlainRead,
			c.peer.rkey),
	      "post RDMA_READ");
	c.expect(3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "RDMA_READ");
	check(same(c.buf.data() + kSrc, kPlainLen, 7), "the bytes read");
	if (!try_ext)
		return;
	// A local WQE right behind an RDMA Write sent by reference (4 KiB and
	// more: it completes once TCP has seen it acked) goes once that Write
	// completes: the ACK's completion lets it go. The Write's first 3000
	// bytes are those the server checks: they do not change.
	ibv_mw *mw = ibv_alloc_mw(c.pd, IBV_MW_TYPE_2);
	check(mw != nullptr, "alloc a type 2 window");
	if (mw) {
		fill(c.buf.data() + kSrc, kPlainRead - kPlainWrite, 5);
		check(c.post_op(5, IBV_WR_RDMA_WRITE, kSrc, kPlainRead - kPlainWrite,
				c.peer.addr + kPlainWrite, c.peer.rkey),
		      "post an 8 KiB RDMA_WRITE");
		ibv_send_wr wr{};
		wr.wr_id = 6;
		wr.opcode = IBV_WR_BIND_MW;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info = {c.mr, c.addr(kWin), 4096, IBV_ACCESS_REMOTE_WRITE};
		check(c.post(wr), "post a bind right behind it");
		c.expect(5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "the 8 KiB RDMA_WRITE");
		c.expect(6, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "the bind behind it");
	}
	// Not agreed: the kernel completes the extension opcode in error. A
	// Read posted just before it completes first: answered, or flushed.
	constexpr std::size_t sink = kSrc + 8192;
	std::memset(c.buf.data() + sink, 0, kPlainLen);
	check(c.post_op(7, IBV_WR_RDMA_READ, sink, kPlainLen, c.peer.addr + kPlainRead,
			c.peer.rkey),
	      "post an RDMA_READ");
	bool posted = ext == IBV_WR_ATOMIC_FETCH_AND_ADD || ext == IBV_WR_ATOMIC_CMP_AND_SWP
			      ? c.post_atomic(4, ext, 0, 1, 2)
			      : c.post_op(4, ext, kSrc, 16, c.peer.addr + kPlainWrite, c.peer.rkey,
					  0x1234);
	check(posted, "post extension opcode " + std::to_string(ext) + " right behind it");
	const bool got = c.wait(wc);
	check(got && wc.wr_id == 7 &&
		      (wc.status == IBV_WC_WR_FLUSH_ERR ||
		       (wc.status == IBV_WC_SUCCESS && same(c.buf.data() + sink, kPlainLen, 7))),
	      "the RDMA_READ before it completes first, flushed or with its bytes (got " +
		      (got ? std::string(ibv_wc_status_str(wc.status)) + ", wr_id " +
				     std::to_string(wc.wr_id)
			   : std::string("none")) +
		      ")");
	c.expect(4, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND,
		 "extension opcode " + std::to_string(ext) + " without agreement");
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "dealloc the window");
}

void server_plain(Conn &c, bool first)
{
	ibv_wc wc{};
	if (first) {
		fill(c.buf.data() + kSrc, 4, 8);
		check(c.post_op(60, IBV_WR_SEND, kSrc, 4), "post the first SEND");
		c.expect(60, IBV_WC_SUCCESS, IBV_WC_SEND, "the first SEND");
	}
	if (c.recv(wc, "SEND")) {
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == 500 &&
			      !(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)),
		      "RECV 500 B, no flags");
		check(same(c.slot(wc), 500, 6), "its 500 bytes");
		check(same(c.buf.data() + kPlainWrite, kPlainLen, 5), "the bytes written before it");
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 5) {
		std::fprintf(stderr, "usage: %s server|client ADDR PORT ext|ext-odp|noext|plain\n",
			     argv[0]);
		return 2;
	}
	const std::string_view role = argv[1], mode = argv[4];
	const bool server = role == "server";
	const bool ext = mode == "ext" || mode == "ext-odp";
	const int rounds = ext ? 1 : kNoextRounds;

	odp = mode == "ext-odp";

	if (server) {
		Conn l;
		check(server_listen(l, argv[2], argv[3]), "listen");
		std::printf("# listening\n");
		std::fflush(stdout);
		for (int r = 0; r < rounds; ++r) {
			Conn c;
			c.ch = l.ch;
			fill(c.buf.data() + kPlainRead, kPlainLen, 7);
			*reinterpret_cast<std::uint64_t *>(c.buf.data() + kAtomic) = 100;
			if (!server_accept(c)) {
				check(false, "accept a connection");
				c.ch = nullptr;
				break;
			}
			check(true, "accept connection " + std::to_string(r));
			if (ext) {
				server_ext(c);
			} else {
				server_plain(c, mode == "noext");
				check(c.event(RDMA_CM_EVENT_DISCONNECTED), "disconnected");
			}
			c.ch = nullptr;
		}
		return vmtest::summary();
	}

	for (int r = 0; r < rounds; ++r) {
		Conn c;
		if (!client_connect(c, argv[2], argv[3])) {
			check(false, "connect");
			break;
		}
		check(true, "connected (round " + std::to_string(r) + ")");
		if (ext)
			client_ext(c);
		else
			client_plain(c, kExtOps.at(static_cast<std::size_t>(r)), mode == "noext");
		if (mode != "ext")
			rdma_disconnect(c.id);
	}
	return vmtest::summary();
}
