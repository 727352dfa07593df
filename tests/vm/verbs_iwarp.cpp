// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_iwarp --server IP PORT [OPTION...]   (passive side, e.g. in netns b)
// verbs_iwarp --client IP PORT [OPTION...]   (active side, IP is the server's)
//
// The verbs conformance program of the iWARP transport: two processes, each
// with one RC QP connected through rdma_cm (iw_cm, MPA). The client is the
// requester; the server places, answers and checks. Each group of checks
// runs on a connection of its own (an error leaves a QP in ERR), its
// buffers' addresses and keys in the connection's private data. A plain TCP
// connection on PORT + 1 keeps the two processes in step.
//
// Every operation's bytes are compared where they arrive; every error is
// checked with its exact completion status on each side, the QP in ERR and
// the rest flushed. The client prints, for each connection, its TCP port
// and the Terminate messages the wire must carry ("# conn", "# term"
// lines), which run.sh checks in a capture with tshark.
//
// Options (give both sides the same):
//   --mss N     TCP MSS of the link (default 1448: MTU 1500 with
//               timestamps); sizes around the MULPDU boundaries follow it
//   --small     no 1 MiB messages, fewer sizes (the debug kernel)
//   --only A,B  run only these groups
//   --odp       every MR on demand (IBV_ACCESS_ON_DEMAND); the transfer
//               groups (send, write, read) then take the device's mapping
//               of their buffers away before each message: the sink's
//               pages dropped (MADV_DONTNEED), the source's invalidated
//               with their bytes kept (mprotect)
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "check.hpp"

using vmtest::check;

namespace {

constexpr std::size_t kBuf = 3U << 20;
constexpr std::size_t kSink = kBuf / 2; // sources below, sinks above
constexpr std::uint32_t kMagic = 0x69774346;
constexpr std::uint32_t kBadKey = 0xdead0000;

struct Options {
	bool server = false;
	std::string ip;
	std::string port;
	std::size_t mss = 1448;
	bool small = false;
	bool odp = false;
	std::vector<std::string> only;
};

Options opt;

// The byte at index i of pattern seed: both sides compute it.
std::uint8_t pat(std::uint32_t seed, std::size_t i)
{
	return static_cast<std::uint8_t>((std::size_t{seed} * 131) ^ (i * 7) ^ (i >> 8) ^ (i >> 16) ^ 0x5a);
}

void fill(std::span<std::uint8_t> b, std::uint32_t seed, std::size_t from = 0)
{
	for (std::size_t i = 0; i < b.size(); ++i)
		b[i] = pat(seed, from + i);
}

bool matches(std::span<const std::uint8_t> b, std::uint32_t seed, std::size_t from = 0)
{
	for (std::size_t i = 0; i < b.size(); ++i)
		if (b[i] != pat(seed, from + i))
			return false;
	return true;
}

// --odp: vmtest::odp_invalidate() of b (nothing without --odp).
void odp_invalidate(std::span<std::uint8_t> b, bool keep)
{
	if (opt.odp && !vmtest::odp_invalidate(b.data(), b.size(), keep))
		check(false, std::string(keep ? "mprotect" : "madvise") + " of the buffer");
}

// The plain TCP connection that keeps the two sides in step.
class Ctl {
public:
	Ctl() = default;
	Ctl(const Ctl &) = delete;
	Ctl &operator=(const Ctl &) = delete;
	Ctl(Ctl &&) = delete;
	Ctl &operator=(Ctl &&) = delete;
	~Ctl()
	{
		if (fd_ >= 0)
			close(fd_);
	}

	bool open(const Options &o)
	{
		sockaddr_in sa{};
		sa.sin_family = AF_INET;
		sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(o.port) + 1));
		if (inet_pton(AF_INET, o.ip.c_str(), &sa.sin_addr) != 1)
			return false;
		auto *addr = reinterpret_cast<sockaddr *>(&sa);
		if (o.server) {
			const int l = socket(AF_INET, SOCK_STREAM, 0);
			const int one = 1;
			setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (l < 0 || bind(l, addr, sizeof(sa)) || listen(l, 1)) {
				if (l >= 0)
					close(l);
				return false;
			}
			fd_ = accept(l, nullptr, nullptr);
			close(l);
		} else {
			for (int i = 0; i < 200 && fd_ < 0; ++i) {
				fd_ = socket(AF_INET, SOCK_STREAM, 0);
				if (connect(fd_, addr, sizeof(sa)) == 0)
					break;
				close(fd_);
				fd_ = -1;
				std::this_thread::sleep_for(std::chrono::milliseconds(100));
			}
		}
		const int one = 1;
		if (fd_ >= 0)
			setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return fd_ >= 0;
	}

	// Both sides reach the step tag; false if the peer is elsewhere.
	[[nodiscard]] bool sync(std::uint32_t tag) const
	{
		std::uint32_t peer = 0;
		return ::send(fd_, &tag, sizeof(tag), MSG_NOSIGNAL) == sizeof(tag) &&
		       recv(fd_, &peer, sizeof(peer), MSG_WAITALL) == sizeof(peer) && peer == tag;
	}

private:
	int fd_ = -1;
};

// Connect request and reply private data.
struct Hello {
	std::uint32_t magic;
	std::uint32_t group;
};

struct Keys {
	std::uint32_t magic;
	std::uint32_t group;
	std::uint64_t addr;		// the buffer, kBuf bytes
	std::uint32_t rkey;		// remote read and write
	std::uint32_t ro_rkey;		// remote read only
	std::uint32_t wo_rkey;		// remote write only
	std::uint32_t local_rkey;	// no remote access
};

// One rdma_cm connection and its verbs resources.
struct Conn {
	rdma_cm_id *id = nullptr;
	ibv_pd *pd = nullptr;
	ibv_comp_channel *ch = nullptr;
	ibv_cq *scq = nullptr;
	ibv_cq *rcq = nullptr; // completion events on ch
	bool has_qp = false;
	ibv_mr *mr = nullptr;
	ibv_mr *ro = nullptr;
	ibv_mr *wo = nullptr;
	ibv_mr *loc = nullptr;
	std::vector<std::uint8_t> buf;
	ibv_device_attr dev{};
	ibv_qp_cap cap{};
	Keys peer{};
	std::uint32_t group = 0;
	std::uint8_t ird = 0; // server: responder resources to accept with

	Conn() = default;
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;
	Conn(Conn &&) = delete;
	Conn &operator=(Conn &&) = delete;
	~Conn()
	{
		if (id)
			rdma_disconnect(id);
		if (has_qp)
			rdma_destroy_qp(id);
		for (ibv_mr *m : {mr, ro, wo, loc})
			if (m)
				ibv_dereg_mr(m);
		if (scq)
			ibv_destroy_cq(scq);
		if (rcq)
			ibv_destroy_cq(rcq);
		if (ch)
			ibv_destroy_comp_channel(ch);
		if (pd)
			ibv_dealloc_pd(pd);
		if (id)
			rdma_destroy_id(id);
	}

	bool resources()
	{
		buf.assign(kBuf, 0);
		ibv_context *ctx = id->verbs;
		if (!ctx || ibv_query_device(ctx, &dev))
			return false;
		pd = ibv_alloc_pd(ctx);
		ch = ibv_create_comp_channel(ctx);
		scq = ibv_create_cq(ctx, 512, nullptr, nullptr, 0);
		rcq = ch ? ibv_create_cq(ctx, 512, nullptr, ch, 0) : nullptr;
		if (!pd || !scq || !rcq)
			return false;
		const int od = opt.odp ? IBV_ACCESS_ON_DEMAND : 0;
		mr = ibv_reg_mr(pd, buf.data(), kBuf,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ | od);
		ro = ibv_reg_mr(pd, buf.data(), kBuf, IBV_ACCESS_REMOTE_READ | od);
		wo = ibv_reg_mr(pd, buf.data(), kBuf,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | od);
		loc = ibv_reg_mr(pd, buf.data(), kBuf, IBV_ACCESS_LOCAL_WRITE | od);
		if (!mr || !ro || !wo || !loc)
			return false;
		ibv_qp_init_attr ia{};
		ia.send_cq = scq;
		ia.recv_cq = rcq;
		ia.qp_type = IBV_QPT_RC;
		ia.sq_sig_all = 0;
		ia.cap.max_send_wr = 128;
		ia.cap.max_recv_wr = 64;
		ia.cap.max_send_sge = static_cast<std::uint32_t>(dev.max_sge);
		ia.cap.max_recv_sge = static_cast<std::uint32_t>(dev.max_sge);
		ia.cap.max_inline_data = 512;
		if (rdma_create_qp(id, pd, &ia))
			return false;
		has_qp = true;
		cap = ia.cap;
		return true;
	}

	[[nodiscard]] std::uintptr_t addr(std::size_t off) const
	{
		return reinterpret_cast<std::uintptr_t>(buf.data() + off);
	}

	[[nodiscard]] ibv_sge sge(std::size_t off, std::size_t len) const
	{
		return {addr(off), static_cast<std::uint32_t>(len), mr->lkey};
	}

	[[nodiscard]] std::span<std::uint8_t> at(std::size_t off, std::size_t len)
	{
		return std::span(buf).subspan(off, len);
	}

	[[nodiscard]] std::uint64_t raddr(std::size_t off) const
	{
		return peer.addr + off;
	}

	[[nodiscard]] Keys keys() const
	{
		return {kMagic,	  group,      reinterpret_cast<std::uintptr_t>(buf.data()),
			mr->rkey, ro->rkey,   wo->rkey,
			loc->rkey};
	}

	[[nodiscard]] std::uint16_t local_port() const
	{
		const sockaddr *sa = rdma_get_local_addr(id);
		return sa && sa->sa_family == AF_INET ?
			       ntohs(reinterpret_cast<const sockaddr_in *>(sa)->sin_port) :
			       0;
	}

	// Client: resolve, make the resources; then pre-post and connect().
	bool create_client()
	{
		rdma_addrinfo hints{};
		rdma_addrinfo *res = nullptr;
		hints.ai_port_space = RDMA_PS_TCP;
		if (rdma_getaddrinfo(opt.ip.c_str(), opt.port.c_str(), &hints, &res))
			return false;
		const int ret = rdma_create_ep(&id, res, nullptr, nullptr);
		rdma_freeaddrinfo(res);
		if (ret) {
			id = nullptr;
			return false;
		}
		return resources();
	}

	bool connect()
	{
		const Hello h{kMagic, group};
		rdma_conn_param p{};
		p.private_data = &h;
		p.private_data_len = sizeof(h);
		p.initiator_depth = static_cast<std::uint8_t>(std::min(dev.max_qp_init_rd_atom, 255));
		p.responder_resources = static_cast<std::uint8_t>(std::min(dev.max_qp_rd_atom, 255));
		p.retry_count = 7;
		if (rdma_connect(id, &p))
			return false;
		const rdma_cm_event *ev = id->event;
		if (!ev || ev->param.conn.private_data_len < sizeof(Keys))
			return false;
		std::memcpy(&peer, ev->param.conn.private_data, sizeof(peer));
		std::printf("# conn %u port %u\n", group, local_port());
		return peer.magic == kMagic && peer.group == group;
	}

	// Server: take the next connect request on listen.
	bool request(rdma_cm_id *listen)
	{
		if (rdma_get_request(listen, &id)) {
			id = nullptr;
			return false;
		}
		const rdma_cm_event *ev = id->event;
		Hello h{};
		if (!ev || ev->param.conn.private_data_len < sizeof(h))
			return false;
		std::memcpy(&h, ev->param.conn.private_data, sizeof(h));
		return h.magic == kMagic && h.group == group && resources();
	}

	[[nodiscard]] bool accept() const
	{
		const Keys k = keys();
		rdma_conn_param p{};
		p.private_data = &k;
		p.private_data_len = sizeof(k);
		p.initiator_depth = static_cast<std::uint8_t>(std::min(dev.max_qp_init_rd_atom, 255));
		p.responder_resources =
			ird ? ird : static_cast<std::uint8_t>(std::min(dev.max_qp_rd_atom, 255));
		return rdma_accept(id, &p) == 0;
	}
};

// Wait up to ms for one completion.
bool poll1(ibv_cq *cq, ibv_wc &wc, int ms = 20000)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	for (unsigned spin = 0;; ++spin) {
		const int n = ibv_poll_cq(cq, 1, &wc);
		if (n)
			return n == 1;
		if (std::chrono::steady_clock::now() > end)
			return false;
		if (spin > 1000)
			std::this_thread::sleep_for(std::chrono::microseconds(50));
	}
}

// Completions that arrive within ms (where none should).
int poll_quiet(ibv_cq *cq, int ms)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	int got = 0;
	while (std::chrono::steady_clock::now() < end) {
		ibv_wc wc{};
		got += std::max(ibv_poll_cq(cq, 1, &wc), 0);
		std::this_thread::sleep_for(std::chrono::microseconds(200));
	}
	return got;
}

std::string wc_text(bool got, const ibv_wc &wc)
{
	if (!got)
		return "no completion";
	return std::string(ibv_wc_status_str(wc.status)) + ", wr_id " + std::to_string(wc.wr_id) +
	       ", opcode " + std::to_string(wc.opcode) + ", byte_len " + std::to_string(wc.byte_len);
}

// Expect one completion: wr_id, status (or alt, if not SUCCESS) and, on
// success, opcode and length.
bool expect_wc(ibv_cq *cq, std::uint64_t wr_id, ibv_wc_status status, ibv_wc_opcode op,
	       long byte_len, const std::string &what, ibv_wc_status alt = IBV_WC_SUCCESS)
{
	if (alt == IBV_WC_SUCCESS)
		alt = status; // none
	ibv_wc wc{};
	const bool got = poll1(cq, wc);
	const bool ok = got && wc.wr_id == wr_id && (wc.status == status || wc.status == alt) &&
			(wc.status != IBV_WC_SUCCESS ||
			 (wc.opcode == op && (byte_len < 0 || wc.byte_len == byte_len)));
	check(ok, what + ": " + ibv_wc_status_str(status) +
			  (alt != status ?
				   std::string(" or ") + ibv_wc_status_str(alt) :
				   std::string()) +
			  " (got " + wc_text(got, wc) + ")");
	return ok;
}

int post_send(Conn &c, ibv_wr_opcode op, std::uint64_t wr_id, std::span<ibv_sge> sges,
	      unsigned flags, std::uint64_t raddr = 0, std::uint32_t rkey = 0)
{
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sges.data();
	wr.num_sge = static_cast<int>(sges.size());
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(c.id->qp, &wr, &bad);
}

int post_recv(Conn &c, std::uint64_t wr_id, std::span<ibv_sge> sges)
{
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = wr_id;
	wr.sg_list = sges.data();
	wr.num_sge = static_cast<int>(sges.size());
	return ibv_post_recv(c.id->qp, &wr, &bad);
}

ibv_qp_state qp_state(Conn &c)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	if (ibv_query_qp(c.id->qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

bool wait_err(Conn &c, int ms = 10000)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	while (qp_state(c) != IBV_QPS_ERR) {
		if (std::chrono::steady_clock::now() > end)
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	return true;
}

// The sizes of the transfer loops: small ones, those around the payload of
// one FPDU (MULPDU less the DDP header; MULPDU is the MSS less the MPA
// length, pad and CRC), 64 KiB and 1 MiB.
std::vector<std::size_t> sizes()
{
	const std::size_t mulpdu = opt.mss - 9;
	const std::size_t send = mulpdu - 18;
	const std::size_t tagged = mulpdu - 14;
	std::vector<std::size_t> v{0, 1, 3, send - 1, send, send + 1, tagged - 1, tagged,
				   tagged + 1, 2 * send, 2 * tagged + 1, 65535, 65536};
	if (!opt.small) {
		for (const std::size_t s : {std::size_t{1023}, std::size_t{1024}, std::size_t{4096},
					    3 * send + 5, std::size_t{65537}, std::size_t{1} << 20})
			v.push_back(s);
	}
	std::sort(v.begin(), v.end());
	v.erase(std::unique(v.begin(), v.end()), v.end());
	return v;
}

using Part = std::function<void(Conn &, Ctl &)>;

struct Group {
	const char *name;
	Part client;
	Part server;
	std::uint8_t ird = 0; // server's responder resources (0: device max)
};

// ---- transfers ----

void send_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "send: connected");
	std::uint32_t step = 0;
	for (const std::size_t len : sizes()) {
		const std::string n = std::to_string(len) + " B";
		fill(c.at(0, len), ++step);
		odp_invalidate(c.at(0, len), true);
		ibv_sge s = c.sge(0, len);
		check(ctl.sync(step), "send: step " + std::to_string(step));
		check(post_send(c, IBV_WR_SEND, step, {&s, len ? 1U : 0U}, IBV_SEND_SIGNALED) == 0,
		      "post SEND " + n);
		expect_wc(c.scq, step, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "SEND " + n + " completes");
		check(ctl.sync(step), "send: step end");
	}
}

void send_server(Conn &c, Ctl &ctl)
{
	check(c.accept(), "send: accepted");
	std::uint32_t step = 0;
	for (const std::size_t len : sizes()) {
		const std::string n = std::to_string(len) + " B";
		std::fill_n(c.buf.begin() + kSink, len + 64, 0xee);
		odp_invalidate(c.at(kSink, len), false);
		ibv_sge s = c.sge(kSink, len + 64);
		check(post_recv(c, ++step, {&s, 1}) == 0, "post_recv for " + n);
		check(ctl.sync(step), "send: step " + std::to_string(step));
		expect_wc(c.rcq, step, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<long>(len),
			  "SEND " + n + " received");
		check(matches(c.at(kSink, len), step) && c.buf[kSink + len] == 0xee,
		      "SEND " + n + " bytes arrived intact, none past them");
		check(ctl.sync(step), "send: step end");
	}
}

void write_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "write: connected");
	std::uint32_t step = 0;
	for (const std::size_t len : sizes()) {
		const std::string n = std::to_string(len) + " B";
		fill(c.at(0, len), ++step);
		odp_invalidate(c.at(0, len), true);
		ibv_sge s = c.sge(0, len);
		std::array<std::uint8_t, 8> mark{};
		std::memcpy(mark.data(), &step, sizeof(step));
		ibv_sge m{reinterpret_cast<std::uintptr_t>(mark.data()), sizeof(mark), 0};
		check(ctl.sync(step), "write: step " + std::to_string(step));
		// The SEND behind it completes at the server only once the WRITE
		// is placed (RFC 5040 5.5: messages complete in order).
		check(post_send(c, IBV_WR_RDMA_WRITE, step, {&s, len ? 1U : 0U}, IBV_SEND_SIGNALED,
				c.raddr(kSink), c.peer.rkey) == 0 &&
			      post_send(c, IBV_WR_SEND, 1000 + step, {&m, 1},
					IBV_SEND_SIGNALED | IBV_SEND_INLINE) == 0,
		      "post WRITE " + n + " and an inline SEND behind it");
		expect_wc(c.scq, step, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1,
			  "WRITE " + n + " completes");
		expect_wc(c.scq, 1000 + step, IBV_WC_SUCCESS, IBV_WC_SEND, -1,
			  "the SEND behind it completes");
		check(ctl.sync(step), "write: step end");
	}
}

void write_server(Conn &c, Ctl &ctl)
{
	check(c.accept(), "write: accepted");
	std::uint32_t step = 0;
	for (const std::size_t len : sizes()) {
		const std::string n = std::to_string(len) + " B";
		std::fill_n(c.buf.begin() + kSink, len + 64, 0xee);
		odp_invalidate(c.at(kSink, len), false);
		ibv_sge s = c.sge(0, 64);
		check(post_recv(c, 1000 + ++step, {&s, 1}) == 0, "post_recv for the marker");
		check(ctl.sync(step), "write: step " + std::to_string(step));
		std::uint32_t tag = 0;
		expect_wc(c.rcq, 1000 + step, IBV_WC_SUCCESS, IBV_WC_RECV, 8,
			  "the SEND behind WRITE " + n + " received");
		std::memcpy(&tag, c.buf.data(), sizeof(tag));
		check(tag == step, "the marker's bytes are right");
		check(matches(c.at(kSink, len), step) && c.buf[kSink + len] == 0xee,
		      "WRITE " + n + " bytes placed intact, none past them");
		check(ctl.sync(step), "write: step end");
	}
}

void read_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "read: connected");
	std::uint32_t step = 0;
	for (const std::size_t len : sizes()) {
		const std::string n = std::to_string(len) + " B";
		std::fill_n(c.buf.begin() + kSink, len + 64, 0xee);
		odp_invalidate(c.at(kSink, len), false);
		ibv_sge s = c.sge(kSink, len);
		++step;
		check(ctl.sync(step), "read: step " + std::to_string(step));
		check(post_send(c, IBV_WR_RDMA_READ, step, {&s, len ? 1U : 0U}, IBV_SEND_SIGNALED,
				c.raddr(0), c.peer.rkey) == 0,
		      "post READ " + n);
		expect_wc(c.scq, step, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, static_cast<long>(len),
			  "READ " + n + " completes");
		check(matches(c.at(kSink, len), step) && c.buf[kSink + len] == 0xee,
		      "READ " + n + " bytes arrived intact, none past them");
		check(ctl.sync(step), "read: step end");
	}
}

void read_server(Conn &c, Ctl &ctl)
{
	check(c.accept(), "read: accepted");
	std::uint32_t step = 0;
	for (const std::size_t len : sizes()) {
		fill(c.at(0, len), ++step);
		odp_invalidate(c.at(0, len), true);
		check(ctl.sync(step), "read: step " + std::to_string(step));
		check(ctl.sync(step), "read: step end");
	}
}

// Solicited events: an unsolicited SEND raises none on a CQ armed for
// solicited completions only; a solicited one does.
bool cq_event(Conn &c, int ms)
{
	pollfd p{c.ch->fd, POLLIN, 0};
	const int flags = fcntl(c.ch->fd, F_GETFL);
	fcntl(c.ch->fd, F_SETFL, flags | O_NONBLOCK);
	if (poll(&p, 1, ms) != 1)
		return false;
	ibv_cq *cq = nullptr;
	void *ctx = nullptr;
	if (ibv_get_cq_event(c.ch, &cq, &ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == c.rcq;
}

void solicited_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "solicited: connected");
	fill(c.at(0, 3000), 7);
	ibv_sge s = c.sge(0, 3000);
	check(ctl.sync(1), "solicited: armed");
	check(post_send(c, IBV_WR_SEND, 1, {&s, 1}, IBV_SEND_SIGNALED) == 0,
	      "post an unsolicited SEND");
	expect_wc(c.scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "the unsolicited SEND completes");
	check(ctl.sync(2), "solicited: unsolicited seen");
	check(post_send(c, IBV_WR_SEND, 2, {&s, 1}, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED) == 0,
	      "post a solicited SEND");
	expect_wc(c.scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "the solicited SEND completes");
	check(ctl.sync(3), "solicited: rearmed");
	check(post_send(c, IBV_WR_SEND, 3, {&s, 1}, IBV_SEND_SIGNALED) == 0,
	      "post another unsolicited SEND");
	expect_wc(c.scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "it completes");
	check(ctl.sync(4), "solicited: done");
}

void solicited_server(Conn &c, Ctl &ctl)
{
	std::array<ibv_sge, 3> s{c.sge(kSink, 4096), c.sge(kSink + 4096, 4096),
				 c.sge(kSink + 8192, 4096)};
	check(post_recv(c, 1, {s.data(), 1}) == 0 && post_recv(c, 2, {&s[1], 1}) == 0 &&
		      post_recv(c, 3, {&s[2], 1}) == 0,
	      "post three receives");
	check(c.accept(), "solicited: accepted");
	check(ibv_req_notify_cq(c.rcq, 1) == 0, "arm the receive CQ for solicited completions");
	check(ctl.sync(1), "solicited: armed");
	expect_wc(c.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, 3000, "the unsolicited SEND received");
	check(!cq_event(c, 300), "no completion event for the unsolicited SEND");
	check(ctl.sync(2), "solicited: unsolicited seen");
	check(cq_event(c, 10000), "a completion event for the solicited SEND");
	expect_wc(c.rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, 3000, "the solicited SEND received");
	check(matches(c.at(kSink, 3000), 7) && matches(c.at(kSink + 4096, 3000), 7),
	      "both SENDs' bytes arrived intact");
	// Armed for the next completion, then for the next solicited one
	// before any came: the next completion it stays (IBTA 11.4.2.2).
	check(ibv_req_notify_cq(c.rcq, 0) == 0 && ibv_req_notify_cq(c.rcq, 1) == 0,
	      "arm for the next completion, then for a solicited one");
	check(ctl.sync(3), "solicited: rearmed");
	check(cq_event(c, 10000), "a completion event for the unsolicited SEND");
	expect_wc(c.rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV, 3000, "the third SEND received");
	check(matches(c.at(kSink + 8192, 3000), 7), "its bytes arrived intact");
	check(ctl.sync(4), "solicited: done");
}

// Unsignaled WRs complete silently; a signaled one behind them reports.
void unsignaled_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "unsignaled: connected");
	check(ctl.sync(1), "unsignaled: ready");
	bool ok = true;
	std::vector<ibv_sge> s;
	for (std::uint32_t i = 0; i < 10; ++i)
		s.push_back(c.sge(std::size_t{i} * 5000, 1000 + i * 300));
	for (std::uint32_t i = 0; i < 10; ++i) {
		fill(c.at(std::size_t{i} * 5000, s[i].length), 100 + i);
		// WRITEs and SENDs in turn, none signaled.
		ok = ok && (i & 1 ? post_send(c, IBV_WR_SEND, 100 + i, {&s[i], 1}, 0)
				  : post_send(c, IBV_WR_RDMA_WRITE, 100 + i, {&s[i], 1}, 0,
					      c.raddr(kSink + std::size_t{i} * 5000), c.peer.rkey)) == 0;
	}
	ibv_sge m = c.sge(60000, 4);
	fill(c.at(60000, 4), 99);
	ok = ok && post_send(c, IBV_WR_SEND, 999, {&m, 1}, IBV_SEND_SIGNALED) == 0;
	check(ok, "post 10 unsignaled WRITEs and SENDs, then a signaled SEND");
	expect_wc(c.scq, 999, IBV_WC_SUCCESS, IBV_WC_SEND, -1,
		  "only the signaled SEND reports, first");
	check(poll_quiet(c.scq, 300) == 0, "no other send completion");
	check(ctl.sync(2), "unsignaled: done");
}

void unsignaled_server(Conn &c, Ctl &ctl)
{
	std::fill_n(c.buf.begin() + kSink, 60000, 0xee);
	bool ok = true;
	for (std::uint32_t i = 0; i < 6; ++i) {
		ibv_sge s = c.sge(kSink + 60000 + std::size_t{i} * 5000, 5000);
		ok = ok && post_recv(c, 200 + i, {&s, 1}) == 0;
	}
	check(ok, "post 6 receives");
	check(c.accept(), "unsignaled: accepted");
	check(ctl.sync(1), "unsignaled: ready");
	for (std::uint32_t i = 1; i < 10; i += 2)
		expect_wc(c.rcq, 200 + i / 2, IBV_WC_SUCCESS, IBV_WC_RECV, 1000 + i * 300,
			  "unsignaled SEND " + std::to_string(i) + " received");
	expect_wc(c.rcq, 205, IBV_WC_SUCCESS, IBV_WC_RECV, 4, "the signaled SEND received");
	ok = true;
	for (std::uint32_t i = 0; i < 10; ++i) {
		const std::size_t len = 1000 + i * 300;
		ok = ok && (i & 1 ? matches(c.at(kSink + 60000 + std::size_t{i / 2} * 5000, len), 100 + i)
				  : matches(c.at(kSink + std::size_t{i} * 5000, len), 100 + i) &&
					    c.buf[kSink + std::size_t{i} * 5000 + len] == 0xee);
	}
	check(ok, "every unsignaled WR's bytes arrived intact");
	check(ctl.sync(2), "unsignaled: done");
}

// The send SGE list of n entries: varied lengths from scattered places.
std::vector<ibv_sge> gather(Conn &c, std::uint32_t n, std::size_t base, std::size_t &total)
{
	std::vector<ibv_sge> v;
	total = 0;
	for (std::uint32_t i = 0; i < n; ++i) {
		const std::size_t len = 1 + ((i * 977U) % 3000);
		v.push_back(c.sge(base + (static_cast<std::size_t>(n - 1 - i) * 4096), len));
		total += len;
	}
	return v;
}

void sge_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "sge: connected");
	const std::uint32_t n = c.cap.max_send_sge;
	check(n == static_cast<std::uint32_t>(c.dev.max_sge),
	      "the QP has max_sge (" + std::to_string(c.dev.max_sge) + ") send SGEs");
	fill(c.at(0, kSink), 21);
	std::size_t total = 0;
	auto g = gather(c, n, 0, total);
	check(ctl.sync(1), "sge: ready");
	check(post_send(c, IBV_WR_SEND, 1, g, IBV_SEND_SIGNALED) == 0,
	      "post a SEND of " + std::to_string(n) + " SGEs");
	expect_wc(c.scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "the SGE-list SEND completes");
	check(post_send(c, IBV_WR_RDMA_WRITE, 2, g, IBV_SEND_SIGNALED, c.raddr(kSink + 400000),
			c.peer.rkey) == 0,
	      "post a WRITE of " + std::to_string(n) + " SGEs");
	expect_wc(c.scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1, "the SGE-list WRITE completes");
	ibv_sge m = c.sge(0, 0);
	check(post_send(c, IBV_WR_SEND, 3, {&m, 0}, IBV_SEND_SIGNALED) == 0 &&
		      expect_wc(c.scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "marker SEND"),
	      "a zero-length SEND behind the WRITE");
	check(ctl.sync(2), "sge: sent");
	// READ into an SGE list (sink SGEs: the same shape, above kSink).
	std::fill_n(c.buf.begin() + kSink, kSink, 0);
	const std::uint32_t nr = std::min(n, static_cast<std::uint32_t>(c.dev.max_sge_rd));
	auto r = gather(c, nr, kSink, total);
	check(post_send(c, IBV_WR_RDMA_READ, 4, r, IBV_SEND_SIGNALED, c.raddr(0), c.peer.rkey) == 0,
	      "post a READ into " + std::to_string(nr) + " SGEs");
	expect_wc(c.scq, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, static_cast<long>(total),
		  "the SGE-list READ completes");
	bool ok = true;
	std::size_t off = 0;
	for (const ibv_sge &e : r) {
		ok = ok && matches(c.at(e.addr - c.addr(0), e.length), 22, off) &&
		     c.buf[e.addr - c.addr(0) + e.length] == 0;
		off += e.length;
	}
	check(ok, "the READ scattered its bytes over the SGE list");
	check(ctl.sync(3), "sge: done");
}

void sge_server(Conn &c, Ctl &ctl)
{
	const std::uint32_t n = c.cap.max_recv_sge;
	check(n == static_cast<std::uint32_t>(c.dev.max_sge),
	      "the QP has max_sge (" + std::to_string(c.dev.max_sge) + ") receive SGEs");
	std::fill_n(c.buf.begin() + kSink, kSink, 0);
	// The receive list: n SGEs of 2000 B, scattered backwards.
	std::vector<ibv_sge> r;
	for (std::uint32_t i = 0; i < n; ++i)
		r.push_back(c.sge(kSink + (static_cast<std::size_t>(n - 1 - i) * 2048), 2000));
	ibv_sge m = c.sge(kSink + 300000, 64);
	check(post_recv(c, 1, r) == 0 && post_recv(c, 3, {&m, 1}) == 0,
	      "post a receive of " + std::to_string(n) + " SGEs and one more");
	check(c.accept(), "sge: accepted");
	check(ctl.sync(1), "sge: ready");
	// What the client gathered: its pattern 21 at its SGEs' offsets.
	std::size_t total = 0;
	std::vector<std::uint8_t> want;
	for (std::uint32_t i = 0; i < c.cap.max_send_sge; ++i) {
		const std::size_t len = 1 + ((i * 977U) % 3000);
		const std::size_t off = static_cast<std::size_t>(c.cap.max_send_sge - 1 - i) * 4096;
		for (std::size_t k = 0; k < len; ++k)
			want.push_back(pat(21, off + k));
		total += len;
	}
	expect_wc(c.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<long>(total),
		  "the SGE-list SEND received");
	std::vector<std::uint8_t> got;
	for (const ibv_sge &e : r)
		for (std::size_t k = 0; k < e.length && got.size() < total; ++k)
			got.push_back(c.buf[e.addr - c.addr(0) + k]);
	check(got == want, "the SEND's gathered bytes scattered intact over the receive list");
	expect_wc(c.rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV, 0, "the zero-length SEND received");
	check(std::equal(want.begin(), want.end(), c.buf.begin() + kSink + 400000) &&
		      c.buf[kSink + 400000 + total] == 0,
	      "the WRITE's gathered bytes placed intact");
	// The READ's source, ready before the client may read it.
	fill(c.at(0, kSink), 22);
	check(ctl.sync(2), "sge: sent");
	check(ctl.sync(3), "sge: done");
}

// Inline data: the buffer is free again as soon as the post returns.
void inline_client(Conn &c, Ctl &ctl)
{
	check(c.connect(), "inline: connected");
	const std::size_t max = c.cap.max_inline_data;
	check(max >= 64, "max_inline_data is " + std::to_string(max));
	check(ctl.sync(1), "inline: ready");
	std::uint64_t id = 1;
	for (const std::size_t len : {std::size_t{1}, max / 2, max}) {
		fill(c.at(0, len), static_cast<std::uint32_t>(id));
		// Two SGEs for the longest.
		std::array<ibv_sge, 2> s{c.sge(0, len == max ? len / 3 : len),
					 c.sge(len / 3, len - len / 3)};
		const std::string n = std::to_string(len) + " B";
		check(post_send(c, IBV_WR_SEND, id, {s.data(), len == max ? 2U : 1U},
				IBV_SEND_SIGNALED | IBV_SEND_INLINE) == 0,
		      "post an inline SEND of " + n);
		std::fill_n(c.buf.begin(), len, 0);
		expect_wc(c.scq, id, IBV_WC_SUCCESS, IBV_WC_SEND, -1, "inline SEND " + n + " completes");
		++id;
	}
	fill(c.at(0, max), 4);
	ibv_sge w = c.sge(0, max);
	check(post_send(c, IBV_WR_RDMA_WRITE, 4, {&w, 1}, IBV_SEND_SIGNALED | IBV_SEND_INLINE,
			c.raddr(kSink + 100000), c.peer.rkey) == 0,
	      "post an inline WRITE of max_inline_data");
	std::fill_n(c.buf.begin(), max, 0);
	expect_wc(c.scq, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1, "the inline WRITE completes");
	ibv_sge big = c.sge(0, max + 1);
	const int err = post_send(c, IBV_WR_SEND, 5, {&big, 1}, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	vmtest::check_errno(err, EINVAL, "an inline SEND of max_inline_data + 1 is refused");
	ibv_sge m = c.sge(0, 0);
	check(post_send(c, IBV_WR_SEND, 6, {&m, 0}, IBV_SEND_SIGNALED | IBV_SEND_INLINE) == 0,
	      "post a zero-length inline SEND");
	expect_wc(c.scq, 6, IBV_WC_SUCCESS, IBV_WC_SEND, -1,
		  "it completes next: the refused one left nothing behind");
	check(ctl.sync(2), "inline: done");
}

void inline_server(Conn &c, Ctl &ctl)
{
	bool ok = true;
	for (std::uint64_t i = 1; i <= 4; ++i) {
		ibv_sge s = c.sge(kSink + i * 1024, 1024);
		ok = ok && post_recv(c, i, {&s, 1}) == 0;
	}
	check(ok, "post 4 receives");
	check(c.accept(), "inline: accepted");
	check(ctl.sync(1), "inline: ready");
	const std::size_t max = c.cap.max_inline_data;
	std::uint64_t id = 1;
	for (const std::size_t len : {std::size_t{1}, max / 2, max}) {
		const std::string n = std::to_string(len) + " B";
		expect_wc(c.rcq, id, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<long>(len),
			  "inline SEND " + n + " received");
		check(matches(c.at(kSink + id * 1024, len), static_cast<std::uint32_t>(id)),
		      "inline SEND " + n + " bytes arrived intact");
		++id;
	}
	expect_wc(c.rcq, 4, IBV_WC_SUCCESS, IBV_WC_RECV, 0, "the zero-length inline SEND received");
	check(matches(c.at(kSink + 100000, max), 4), "the inline WRITE's bytes placed intact");
	check(ctl.sync(2), "inline: done");
}

// As many READs as the ORD allows in flight, and twice as many posted.
void ord_client(Conn &c, Ctl &ctl, std::uint32_t want_ord)
{
	check(c.connect(), "ord: connected");
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	check(ibv_query_qp(c.id->qp, &a, IBV_QP_MAX_QP_RD_ATOMIC, &ia) == 0 &&
		      a.max_rd_atomic == want_ord,
	      "the negotiated ORD is " + std::to_string(want_ord) + " (got " +
		      std::to_string(a.max_rd_atomic) + ")");
	const std::uint32_t n = std::min<std::uint32_t>(2 * want_ord + 1, 120);
	check(ctl.sync(1), "ord: ready");
	std::fill_n(c.buf.begin() + kSink, kSink, 0);
	std::vector<ibv_sge> s(n);
	std::vector<ibv_send_wr> wr(n);
	for (std::uint32_t i = 0; i < n; ++i) {
		s[i] = c.sge(kSink + std::size_t{i} * 8192, 3000 + i);
		wr[i].wr_id = i;
		wr[i].opcode = IBV_WR_RDMA_READ;
		wr[i].sg_list = &s[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = c.raddr(std::size_t{i} * 8192);
		wr[i].wr.rdma.rkey = c.peer.rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
	}
	ibv_send_wr *bad = nullptr;
	check(ibv_post_send(c.id->qp, wr.data(), &bad) == 0,
	      "post " + std::to_string(n) + " READs in one list");
	bool ok = true;
	for (std::uint32_t i = 0; i < n && ok; ++i) {
		ibv_wc wc{};
		ok = poll1(c.scq, wc) && wc.wr_id == i && wc.status == IBV_WC_SUCCESS &&
		     wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 3000 + i;
		if (!ok)
			check(false, "READ " + std::to_string(i) + ": " + wc_text(true, wc));
	}
	check(ok, "all READs complete in order, successfully");
	ok = true;
	for (std::uint32_t i = 0; i < n; ++i)
		ok = ok && matches(c.at(kSink + std::size_t{i} * 8192, 3000 + i), 300 + i) &&
		     c.buf[kSink + std::size_t{i} * 8192 + 3000 + i] == 0;
	check(ok, "every READ's bytes arrived intact");
	check(ctl.sync(2), "ord: done");
}

void ord_server(Conn &c, Ctl &ctl)
{
	for (std::uint32_t i = 0; i < 121; ++i)
		fill(c.at(std::size_t{i} * 8192, 4000), 300 + i);
	check(c.accept(), "ord: accepted");
	check(ctl.sync(1), "ord: ready");
	check(ctl.sync(2), "ord: done");
}

// ---- errors ----
// The requester's side of a remote error: what it posted before completes
// as given, the QP enters ERR, its receive and what it posts later flush.
void after_error(Conn &c, const std::string &what)
{
	check(wait_err(c), what + ": the QP enters ERR");
	expect_wc(c.rcq, 9, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, -1,
		  what + ": the posted receive flushes");
	ibv_sge s = c.sge(0, 100);
	check(post_send(c, IBV_WR_SEND, 10, {&s, 1}, IBV_SEND_SIGNALED) == 0,
	      what + ": post a SEND in ERR");
	expect_wc(c.scq, 10, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, -1, what + ": it flushes");
	check(poll_quiet(c.scq, 100) + poll_quiet(c.rcq, 100) == 0,
	      what + ": no other completion");
}

// A Terminate, sent or received, is also the QP's affiliated asynchronous
// error: IBV_EVENT_QP_FATAL for this QP within 10 s (other events on the
// shared context are acknowledged and passed over).
bool qp_fatal(Conn &c)
{
	ibv_context *ctx = c.id->verbs;
	const int fl = fcntl(ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return false;
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (std::chrono::steady_clock::now() < end) {
		pollfd p{ctx->async_fd, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ibv_async_event ev{};
		if (ibv_get_async_event(ctx, &ev) != 0)
			continue;
		const bool hit = ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == c.id->qp;
		ibv_ack_async_event(&ev);
		if (hit)
			return true;
	}
	return false;
}

// The responder's side: its receives (posted 1, 2) complete as given; it
// sent a Terminate, or (@terminated false) saw the connection go.
void responder_error(Conn &c, Ctl &ctl, const std::string &what, ibv_wc_status first,
		     bool terminated = true)
{
	check(c.accept(), what + ": accepted");
	check(ctl.sync(1), what + ": ready");
	expect_wc(c.rcq, 1, first, IBV_WC_RECV, -1, what + ": the first receive");
	expect_wc(c.rcq, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, -1,
		  what + ": the second receive flushes");
	check(wait_err(c), what + ": the responder's QP is in ERR");
	if (terminated)
		check(qp_fatal(c), what + ": the responder's QP reports IBV_EVENT_QP_FATAL");
	check(poll_quiet(c.rcq, 100) + poll_quiet(c.scq, 100) == 0,
	      what + ": no other completion");
	check(ctl.sync(2), what + ": done");
}

void prepost(Conn &c, std::size_t first_len, std::uint32_t first_lkey = 0)
{
	std::array<ibv_sge, 2> s{c.sge(kSink, first_len), c.sge(kSink + 65536, 65536)};
	if (first_lkey)
		s[0].lkey = first_lkey;
	check(post_recv(c, 1, {s.data(), 1}) == 0 && post_recv(c, 2, {&s[1], 1}) == 0,
	      "post two receives");
}

// "# term" lines: the Terminate the wire must carry (sent by the server).
void expect_term(const Conn &c, int layer, int etype, int code)
{
	std::printf("# term %u port %u layer %d etype %d code %d\n", c.group, c.local_port(), layer,
		    etype, code);
}

struct Err {
	const char *name = nullptr;
	ibv_wr_opcode op = IBV_WR_SEND;
	std::size_t len = 0;
	std::size_t roff = 0;	// remote offset
	int key = 0;		// 0 good, 1 bad, 2 read-only, 3 write-only, 4 no remote access
	ibv_wc_status status = IBV_WC_SUCCESS; // the requester's completion of it
	std::array<int, 3> term{}; // layer, etype, code
	// Or this, if the Terminate came before the WR completed.
	ibv_wc_status alt = IBV_WC_SUCCESS;
};

void remote_err_client(Conn &c, Ctl &ctl, const Err &e)
{
	ibv_sge r = c.sge(kSink + 200000, 64);
	check(post_recv(c, 9, {&r, 1}) == 0, std::string(e.name) + ": post a receive");
	check(c.connect(), std::string(e.name) + ": connected");
	expect_term(c, e.term[0], e.term[1], e.term[2]);
	check(ctl.sync(1), std::string(e.name) + ": ready");
	const std::array<std::uint32_t, 5> keys{c.peer.rkey, kBadKey | (c.peer.rkey & 0xff),
						c.peer.ro_rkey, c.peer.wo_rkey,
						c.peer.local_rkey};
	ibv_sge s = c.sge(e.op == IBV_WR_RDMA_READ ? kSink : 0, e.len);
	check(post_send(c, e.op, 1, {&s, 1}, IBV_SEND_SIGNALED, c.raddr(e.roff),
			keys[static_cast<std::size_t>(e.key)]) == 0,
	      std::string(e.name) + ": posted");
	expect_wc(c.scq, 1, e.status,
		  e.op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
		  e.op == IBV_WR_SEND	   ? IBV_WC_SEND :
					     IBV_WC_RDMA_WRITE,
		  -1, std::string(e.name) + ": the requester's completion", e.alt);
	after_error(c, e.name);
	check(qp_fatal(c), std::string(e.name) + ": the Terminate is IBV_EVENT_QP_FATAL");
	check(ctl.sync(2), std::string(e.name) + ": done");
}

// Local errors at the requester: the bad WR completes with status, the
// one posted with it flushes.
void local_err_client(Conn &c, Ctl &ctl, const char *name, ibv_wr_opcode op, ibv_sge bad,
		      ibv_wc_status status)
{
	ibv_sge r = c.sge(kSink + 200000, 64);
	check(post_recv(c, 9, {&r, 1}) == 0, std::string(name) + ": post a receive");
	check(c.connect(), std::string(name) + ": connected");
	check(ctl.sync(1), std::string(name) + ": ready");
	ibv_sge good = c.sge(0, 100);
	std::array<ibv_send_wr, 2> wr{};
	wr[0].wr_id = 1;
	wr[0].opcode = op;
	wr[0].sg_list = &bad;
	wr[0].num_sge = 1;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = c.raddr(kSink);
	wr[0].wr.rdma.rkey = c.peer.rkey;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].sg_list = &good;
	wr[1].num_sge = 1;
	// Fenced: it waits for a READ's response, so the READ's failure
	// flushes it before it goes.
	wr[1].send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_send_wr *badwr = nullptr;
	check(ibv_post_send(c.id->qp, wr.data(), &badwr) == 0,
	      std::string(name) + ": post it and a SEND behind it");
	expect_wc(c.scq, 1, status, IBV_WC_SEND, -1, std::string(name) + ": its completion");
	expect_wc(c.scq, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, -1,
		  std::string(name) + ": the SEND behind it flushes");
	after_error(c, name);
	check(ctl.sync(2), std::string(name) + ": done");
}

// Messages that fail at the data sink fit one FPDU: the sink then closes
// with nothing unread. (With more of the message still arriving, its close
// resets the connection, and the requester may see that before the
// Terminate: its WRs then flush instead.)
constexpr std::size_t kErrLen = 1000;

const std::array<Err, 9> kRemoteErrs{{
	// An RDMA Write completes at its source once sent: the data sink's
	// error reaches the requester as a Terminate after it, or before the
	// requester marked it done (then the Write fails with it). One FPDU
	// each: see kErrLen.
	{"write_bad_rkey", IBV_WR_RDMA_WRITE, kErrLen, kSink, 1, IBV_WC_SUCCESS, {1, 1, 0},
	 IBV_WC_REM_ACCESS_ERR},
	{"write_bounds", IBV_WR_RDMA_WRITE, kErrLen, kBuf - 100, 0, IBV_WC_SUCCESS, {1, 1, 1},
	 IBV_WC_REM_ACCESS_ERR},
	{"write_no_access", IBV_WR_RDMA_WRITE, kErrLen, kSink, 2, IBV_WC_SUCCESS, {0, 1, 2},
	 IBV_WC_REM_ACCESS_ERR},
	{"write_local_key", IBV_WR_RDMA_WRITE, kErrLen, kSink, 4, IBV_WC_SUCCESS, {0, 1, 2},
	 IBV_WC_REM_ACCESS_ERR},
	// A Read completes with the responder's error, which names it.
	{"read_bad_rkey", IBV_WR_RDMA_READ, 4096, 0, 1, IBV_WC_REM_ACCESS_ERR, {0, 1, 0}},
	{"read_bounds", IBV_WR_RDMA_READ, 4096, kBuf - 100, 0, IBV_WC_REM_ACCESS_ERR, {0, 1, 1}},
	{"read_no_access", IBV_WR_RDMA_READ, 4096, 0, 3, IBV_WC_REM_ACCESS_ERR, {0, 1, 2}},
	// A SEND longer than the receive: DDP untagged, message too long.
	{"send_too_long", IBV_WR_SEND, kErrLen, 0, 0, IBV_WC_SUCCESS, {1, 2, 5}, IBV_WC_REM_OP_ERR},
	// A SEND with no receive posted: DDP untagged, no buffer.
	{"send_no_recv", IBV_WR_SEND, 100, 0, 0, IBV_WC_SUCCESS, {1, 2, 2}, IBV_WC_REM_OP_ERR},
}};

// The responder's side of a remote error.
void remote_err_server(Conn &c, Ctl &ctl, const Err &e, const std::string &name)
{
	const bool no_recv = e.term == std::array<int, 3>{1, 2, 2};
	const bool too_long = e.term == std::array<int, 3>{1, 2, 5};
	if (!no_recv) {
		prepost(c, too_long ? 100 : 65536);
		responder_error(c, ctl, name, too_long ? IBV_WC_LOC_LEN_ERR : IBV_WC_WR_FLUSH_ERR);
		return;
	}
	// No receive: nothing to complete, the QP enters ERR.
	check(c.accept(), name + ": accepted");
	check(ctl.sync(1), name + ": ready");
	check(wait_err(c), name + ": the responder's QP is in ERR");
	check(qp_fatal(c), name + ": the responder's QP reports IBV_EVENT_QP_FATAL");
	check(poll_quiet(c.rcq, 100) == 0, name + ": no completion");
	check(ctl.sync(2), name + ": done");
}

// ---- connection management ----

constexpr std::string_view kNo = "softrdma says no";

// The client's connect is refused: rdma_connect fails with ECONNREFUSED
// and the REJECTED event carries what the server said, byte for byte.
bool refused(Conn &c, const std::string &name, std::string_view pdata)
{
	rdma_conn_param p{};
	const Hello h{kMagic, c.group};
	p.private_data = &h;
	p.private_data_len = sizeof(h);
	p.initiator_depth = 1;
	p.responder_resources = 1;
	const int ret = rdma_connect(c.id, &p);
	const int err = errno;
	const rdma_cm_event *ev = c.id->event;
	check(ret == -1 && err == ECONNREFUSED,
	      name + ": rdma_connect fails with ECONNREFUSED (got " + std::to_string(ret) + ", " +
		      std::strerror(err) + ")");
	check(ev && ev->event == RDMA_CM_EVENT_REJECTED,
	      name + ": the event is REJECTED (got " +
		      (ev ? rdma_event_str(ev->event) : "none") + ")");
	if (!ev)
		return false;
	const std::string_view got(static_cast<const char *>(ev->param.conn.private_data),
				   ev->param.conn.private_data_len);
	check(got == pdata,
	      name + ": its private data is the server's " + std::to_string(pdata.size()) +
		      " bytes (got " + std::to_string(got.size()) + ")");
	return true;
}

void reject_client(Conn &c, Ctl &ctl)
{
	refused(c, "reject", kNo);
	check(ctl.sync(1), "reject: done");
}

void reject_server(Conn &c, Ctl &ctl)
{
	check(rdma_reject(c.id, kNo.data(), static_cast<std::uint8_t>(kNo.size())) == 0,
	      "reject: rdma_reject with private data");
	check(ctl.sync(1), "reject: done");
}

// The server destroys the request without an answer: iw_cm rejects it.
void unanswered_client(Conn &c, Ctl &ctl)
{
	refused(c, "unanswered", "");
	check(ctl.sync(1), "unanswered: done");
}

void unanswered_server(Conn &c, Ctl &ctl)
{
	if (c.has_qp)
		rdma_destroy_qp(c.id);
	c.has_qp = false;
	check(rdma_destroy_id(c.id) == 0, "unanswered: the request's id destroyed unanswered");
	c.id = nullptr;
	check(ctl.sync(1), "unanswered: done");
}

std::vector<Group> groups()
{
	std::vector<Group> g{
		{"send", send_client, send_server},
		{"write", write_client, write_server},
		{"read", read_client, read_server},
		{"solicited", solicited_client, solicited_server},
		{"unsignaled", unsignaled_client, unsignaled_server},
		{"sge", sge_client, sge_server},
		{"inline", inline_client, inline_server},
		{"ord", [](Conn &c, Ctl &ctl) {
			 ord_client(c, ctl, std::min<std::uint32_t>(
						    static_cast<std::uint32_t>(c.dev.max_qp_init_rd_atom),
						    static_cast<std::uint32_t>(c.dev.max_qp_rd_atom)));
		 },
		 ord_server},
		// The server grants an IRD of 3: the client may have no more
		// than 3 READs in flight (more would be terminated).
		{"ord_small", [](Conn &c, Ctl &ctl) { ord_client(c, ctl, 3); }, ord_server, 3},
		{"reject", reject_client, reject_server},
		{"unanswered", unanswered_client, unanswered_server},
	};
	for (const Err &e : kRemoteErrs) {
		const std::string name = e.name;
		g.push_back({e.name, [&e](Conn &c, Ctl &ctl) { remote_err_client(c, ctl, e); },
			     [&e, name](Conn &c, Ctl &ctl) { remote_err_server(c, ctl, e, name); }});
	}
	// A receive whose lkey is bad: LOC_PROT_ERR where the SEND lands; DDP
	// catastrophic on the wire (the sender is not at fault).
	g.push_back({"recv_bad_lkey",
		     [](Conn &c, Ctl &ctl) {
			     remote_err_client(c, ctl,
					       {"recv_bad_lkey", IBV_WR_SEND, 100, 0, 0, IBV_WC_SUCCESS,
						{1, 0, 0}, IBV_WC_REM_OP_ERR});
		     },
		     [](Conn &c, Ctl &ctl) {
			     prepost(c, 1000, kBadKey | 0x11);
			     responder_error(c, ctl, "recv_bad_lkey", IBV_WC_LOC_PROT_ERR);
		     }});
	// Local errors: nothing bad goes on the wire; the responder sees the
	// connection go and flushes.
	const auto flushed = [](Conn &c, Ctl &ctl) {
		prepost(c, 65536);
		responder_error(c, ctl, "local error", IBV_WC_WR_FLUSH_ERR, false);
	};
	g.push_back({"send_bad_lkey",
		     [](Conn &c, Ctl &ctl) {
			     ibv_sge s = c.sge(0, 100);
			     s.lkey = kBadKey | 0x22;
			     local_err_client(c, ctl, "send_bad_lkey", IBV_WR_SEND, s,
					      IBV_WC_LOC_PROT_ERR);
		     },
		     flushed});
	g.push_back({"send_local_bounds",
		     [](Conn &c, Ctl &ctl) {
			     local_err_client(c, ctl, "send_local_bounds", IBV_WR_SEND,
					      c.sge(kBuf - 50, 100), IBV_WC_LOC_PROT_ERR);
		     },
		     flushed});
	g.push_back({"write_bad_lkey",
		     [](Conn &c, Ctl &ctl) {
			     ibv_sge s = c.sge(0, 100);
			     s.lkey = kBadKey | 0x33;
			     local_err_client(c, ctl, "write_bad_lkey", IBV_WR_RDMA_WRITE, s,
					      IBV_WC_LOC_PROT_ERR);
		     },
		     flushed});
	g.push_back({"read_bad_lkey",
		     [](Conn &c, Ctl &ctl) {
			     ibv_sge s = c.sge(kSink, 100);
			     s.lkey = kBadKey | 0x44;
			     local_err_client(c, ctl, "read_bad_lkey", IBV_WR_RDMA_READ, s,
					      IBV_WC_LOC_PROT_ERR);
		     },
		     flushed});
	g.push_back({"read_no_local_write",
		     [](Conn &c, Ctl &ctl) {
			     // The sink MR lacks local write access.
			     ibv_sge s = c.sge(kSink, 100);
			     s.lkey = c.ro->lkey;
			     local_err_client(c, ctl, "read_no_local_write", IBV_WR_RDMA_READ, s,
					      IBV_WC_LOC_PROT_ERR);
		     },
		     flushed});
	// Send with Invalidate, Immediate Data and atomics (RFC 7306): the
	// ext mode of verbs_iwarp_ext.
	return g;
}

bool parse(int argc, char **argv)
{
	if (argc < 4)
		return false;
	const std::string mode = argv[1];
	if (mode != "--server" && mode != "--client")
		return false;
	opt.server = mode == "--server";
	opt.ip = argv[2];
	opt.port = argv[3];
	for (int i = 4; i < argc; ++i) {
		const std::string o = argv[i];
		if (o == "--small") {
			opt.small = true;
		} else if (o == "--odp") {
			opt.odp = true;
		} else if (o == "--mss" && i + 1 < argc) {
			opt.mss = std::strtoul(argv[++i], nullptr, 0);
			if (opt.mss < 256 || opt.mss > 65535)
				return false;
		} else if (o == "--only" && i + 1 < argc) {
			const std::string v = argv[++i];
			std::size_t p = 0;
			while (p <= v.size()) {
				const std::size_t q = std::min(v.find(',', p), v.size());
				opt.only.push_back(v.substr(p, q - p));
				p = q + 1;
			}
		} else {
			return false;
		}
	}
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	if (!parse(argc, argv)) {
		(void)std::fprintf(stderr, "usage: verbs_iwarp --server|--client IP PORT [--mss N] "
				     "[--small] [--odp] [--only GROUP,...]\n");
		return 2;
	}
	(void)std::setvbuf(stdout, nullptr, _IOLBF, 0);
	const char *side = opt.server ? "server" : "client";
	Ctl ctl;
	rdma_cm_id *listen = nullptr;
	if (opt.server) {
		rdma_addrinfo hints{};
		rdma_addrinfo *res = nullptr;
		hints.ai_flags = RAI_PASSIVE;
		hints.ai_port_space = RDMA_PS_TCP;
		const bool ok = rdma_getaddrinfo(opt.ip.c_str(), opt.port.c_str(), &hints, &res) == 0 &&
				rdma_create_ep(&listen, res, nullptr, nullptr) == 0 &&
				rdma_listen(listen, 4) == 0;
		if (res)
			rdma_freeaddrinfo(res);
		check(ok, "server: listening on " + opt.ip + " port " + opt.port);
		if (!ok)
			return vmtest::summary();
	}
	check(ctl.open(opt), std::string(side) + ": control connection");
	if (vmtest::failures)
		return vmtest::summary();
	const auto all = groups();
	std::uint32_t gi = 0;
	for (const Group &g : all) {
		++gi;
		if (!opt.only.empty() &&
		    std::find(opt.only.begin(), opt.only.end(), g.name) == opt.only.end())
			continue;
		std::printf("# group %s\n", g.name);
		if (!ctl.sync(gi)) {
			check(false, std::string("in step with the peer at group ") + g.name);
			break;
		}
		const int failed = vmtest::failures;
		{
			Conn c;
			c.group = gi;
			c.ird = g.ird;
			if (opt.server) {
				check(c.request(listen), std::string(g.name) + ": connect request");
				if (vmtest::failures == failed)
					g.server(c, ctl);
			} else {
				check(c.create_client(), std::string(g.name) + ": resources");
				if (vmtest::failures == failed)
					g.client(c, ctl);
			}
		}
		// A failed group may leave the peer waiting anywhere: stop.
		if (vmtest::failures != failed || !ctl.sync(gi + 1000))
			break;
	}
	if (listen)
		rdma_destroy_ep(listen);
	return vmtest::summary();
}
