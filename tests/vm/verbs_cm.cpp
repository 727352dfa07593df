// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_cm server ADDR PORT
// verbs_cm client ADDR PORT UNREACHABLE_ADDR [LOCAL_ADDR [VIA_ADDR VIA_DEV]]
//
// The RDMA CM as a program uses it, over RoCE (a softroce device or
// rdma_rxe on either side), server and client in processes of their own
// (an rdma_cm ID lives in its process's network namespace):
//   1. connect with private data, which the server checks, accepted with
//      private data of its own, which the client checks; a message each
//      way over the QP the CM connected, bytes compared; the client
//      disconnects and the server sees DISCONNECTED;
//   2. a connect the server rejects with private data: the client gets
//      REJECTED, status 28 (IB_CM_REJ_CONSUMER_DEFINED), and that data;
//   3. a connect to a port nobody listens on: REJECTED, status 8
//      (IB_CM_REJ_INVALID_SERVICE_ID);
//   4. an address nobody answers ARP for: ADDR_ERROR, status -ETIMEDOUT
//      (-110, as rdma_rxe gives it).
//   5. route errors (with LOCAL_ADDR, the client's own address): on RoCE
//      the CM builds the route itself (no SA to ask), so it answers them
//      at once, never with ROUTE_ERROR: a route on an ID bound but not
//      resolved is EINVAL, a zero timeout EINVAL (and the ID then still
//      resolves its route); with VIA_ADDR, a peer reached through the
//      netdev VIA_DEV (a VLAN the script made), its address resolved and
//      VIA_DEV deleted before the route: ENODEV.
// The server serves cases 1 and 2, then exits.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <netdb.h>

#include <array>
#include <cstdlib>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"

using vmtest::check;

namespace {

constexpr int kTimeoutMs = 3000;
constexpr std::size_t kMsg = 3000;
constexpr std::string_view kReqAccept = "A: softrdma connect request";
constexpr std::string_view kReqReject = "R: reject me, please";
constexpr std::string_view kRepData = "server accepts";
constexpr std::string_view kRejData = "server rejects you";
constexpr int kRejConsumer = 28; // IB_CM_REJ_CONSUMER_DEFINED
constexpr int kRejNoService = 8; // IB_CM_REJ_INVALID_SERVICE_ID

bool starts_with(const void *data, std::uint8_t len, std::string_view want)
{
	return data && len >= want.size() && std::memcmp(data, want.data(), want.size()) == 0;
}

// The address of ADDR (IPv4 or IPv6) and PORT.
bool address(const char *addr, const char *port, sockaddr_storage &out)
{
	addrinfo hints{};
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	addrinfo *res = nullptr;
	if (getaddrinfo(addr, port, &hints, &res) || !res)
		return false;
	std::memcpy(&out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return true;
}

// The next event on ec: its type, status and private data (copied), acked.
struct Event {
	rdma_cm_event_type type = RDMA_CM_EVENT_DEVICE_REMOVAL;
	int status = 0;
	rdma_cm_id *id = nullptr;
	std::vector<std::uint8_t> data;
	bool ok = false;
};

Event next_event(rdma_event_channel *ec)
{
	Event e;
	rdma_cm_event *ev = nullptr;
	if (rdma_get_cm_event(ec, &ev))
		return e;
	e.ok = true;
	e.type = ev->event;
	e.status = ev->status;
	e.id = ev->id;
	const auto *p = static_cast<const std::uint8_t *>(ev->param.conn.private_data);
	if (p)
		e.data.assign(p, p + ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	return e;
}

std::string name(const Event &e)
{
	return e.ok ? std::string(rdma_event_str(e.type)) + " status " + std::to_string(e.status)
		    : std::string("no event");
}

// A connected endpoint's verbs resources: PD, CQ, QP on the ID's device,
// and one registered buffer (send half, receive half).
struct Conn {
	rdma_cm_id *id = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(2 * kMsg);
	unsigned early = 0; // bit N: wr_id N completed, not yet waited for

	Conn() = default;
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;
	~Conn()
	{
		if (id && id->qp)
			rdma_destroy_qp(id);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (id)
			rdma_destroy_id(id);
	}

	bool setup(rdma_cm_id *cm_id)
	{
		id = cm_id;
		pd = ibv_alloc_pd(id->verbs);
		cq = pd ? ibv_create_cq(id->verbs, 16, nullptr, nullptr, 0) : nullptr;
		mr = cq ? ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE) : nullptr;
		if (!mr)
			return false;
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, cq, 4, 1);
		if (rdma_create_qp(id, pd, &ia))
			return false;
		ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data() + kMsg), kMsg, mr->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = 1;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_recv(id->qp, &wr, &bad) == 0;
	}

	// Send kMsg bytes of seed's pattern.
	bool send(std::uint8_t seed)
	{
		for (std::size_t i = 0; i < kMsg; ++i)
			buf[i] = static_cast<std::uint8_t>(seed + i * 31);
		ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data()), kMsg, mr->lkey};
		ibv_send_wr wr{};
		ibv_send_wr *bad = nullptr;
		wr.wr_id = 2;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		return ibv_post_send(id->qp, &wr, &bad) == 0;
	}

	// Wait for the successful completion of wr_id (1: the receive, 2: the
	// send); for the receive, compare its bytes with seed's pattern. The
	// other one may complete first (the peer's answer can come before the
	// ACK of our SEND): it is kept for its own wait.
	bool wait(std::uint64_t wr_id, std::uint8_t seed)
	{
		ibv_wc wc{};
		for (long i = 0; i < 50000000 && !(early & (1U << wr_id)); ++i) {
			const int n = ibv_poll_cq(cq, 1, &wc);
			if (n < 0)
				return false;
			if (n == 0)
				continue;
			if (wc.status != IBV_WC_SUCCESS || (wc.wr_id != 1 && wc.wr_id != 2))
				return false;
			if (wc.wr_id == 1 && wc.byte_len != kMsg)
				return false;
			early |= 1U << wc.wr_id;
		}
		if (!(early & (1U << wr_id)))
			return false;
		early &= ~(1U << wr_id);
		if (wr_id != 1)
			return true;
		for (std::size_t k = 0; k < kMsg; ++k)
			if (buf[kMsg + k] != static_cast<std::uint8_t>(seed + k * 31))
				return false;
		return true;
	}
};

int server(const char *addr, const char *port)
{
	sockaddr_storage sa{};
	rdma_event_channel *ec = rdma_create_event_channel();
	rdma_cm_id *listen_id = nullptr;
	const bool ok = ec && address(addr, port, sa) &&
			!rdma_create_id(ec, &listen_id, nullptr, RDMA_PS_TCP) &&
			!rdma_bind_addr(listen_id, reinterpret_cast<sockaddr *>(&sa)) &&
			!rdma_listen(listen_id, 4);
	check(ok, std::string("server listens on ") + addr + " port " + port);
	if (!ok)
		return vmtest::summary();
	std::printf("listening\n");
	std::fflush(stdout);
	Conn conn;
	bool accepted = false, rejected = false;
	while (!(accepted && rejected)) {
		Event e = next_event(ec);
		if (!e.ok) {
			check(false, "server: an event");
			break;
		}
		if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    starts_with(e.data.data(), static_cast<std::uint8_t>(e.data.size()), kReqReject)) {
			check(rdma_reject(e.id, kRejData.data(),
					  static_cast<std::uint8_t>(kRejData.size())) == 0,
			      "server rejects a request with private data");
			rdma_destroy_id(e.id);
			rejected = true;
		} else if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			check(starts_with(e.data.data(), static_cast<std::uint8_t>(e.data.size()),
					  kReqAccept),
			      "server: the request carries the client's private data");
			const bool set = conn.setup(e.id);
			check(set, "server: a QP on the request's ID");
			rdma_conn_param p{};
			p.private_data = kRepData.data();
			p.private_data_len = static_cast<std::uint8_t>(kRepData.size());
			p.responder_resources = 1;
			p.initiator_depth = 1;
			check(set && rdma_accept(e.id, &p) == 0, "server accepts with private data");
		} else if (e.type == RDMA_CM_EVENT_ESTABLISHED) {
			check(conn.wait(1, 0x40), "server receives the client's bytes");
			check(conn.send(0x80) && conn.wait(2, 0), "server sends its bytes");
		} else if (e.type == RDMA_CM_EVENT_DISCONNECTED) {
			check(true, "server: DISCONNECTED after the client's disconnect");
			rdma_disconnect(e.id);
			accepted = true;
		} else {
			check(false, "server: unexpected " + name(e));
			break;
		}
	}
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ec);
	return vmtest::summary();
}

// Resolve addr:port's address on a new ID of ec: the event that ends it.
Event resolve_addr(rdma_event_channel *ec, rdma_cm_id *&id, const char *addr, const char *port)
{
	sockaddr_storage sa{};
	if (!address(addr, port, sa) || rdma_create_id(ec, &id, nullptr, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr *>(&sa), kTimeoutMs))
		return Event{};
	return next_event(ec);
}

// Resolve addr:port's address and route on a new ID of ec. Returns the
// first event that is not ADDR_RESOLVED (ROUTE_RESOLVED when all went
// well).
Event resolve(rdma_event_channel *ec, rdma_cm_id *&id, const char *addr, const char *port)
{
	Event e = resolve_addr(ec, id, addr, port);
	if (!e.ok || e.type != RDMA_CM_EVENT_ADDR_RESOLVED)
		return e;
	if (rdma_resolve_route(id, kTimeoutMs))
		return Event{};
	return next_event(ec);
}

// Connect to addr:port with private data req; the event that ends it.
Event connect(rdma_event_channel *ec, Conn &conn, const char *addr, const char *port,
	      std::string_view req)
{
	rdma_cm_id *id = nullptr;
	Event e = resolve(ec, id, addr, port);
	conn.id = id;
	if (!e.ok || e.type != RDMA_CM_EVENT_ROUTE_RESOLVED || !conn.setup(id))
		return e;
	rdma_conn_param p{};
	p.private_data = req.data();
	p.private_data_len = static_cast<std::uint8_t>(req.size());
	p.responder_resources = 1;
	p.initiator_depth = 1;
	p.retry_count = 7;
	if (rdma_connect(id, &p))
		return Event{};
	return next_event(ec);
}

// An rdma_cm ID destroyed with its scope.
struct Id {
	rdma_cm_id *p = nullptr;
	Id() = default;
	Id(const Id &) = delete;
	Id &operator=(const Id &) = delete;
	~Id()
	{
		if (p)
			rdma_destroy_id(p);
	}
};

// rdma_resolve_route's errno (0: it returned 0).
int route_errno(rdma_cm_id *id, int timeout_ms)
{
	errno = 0;
	return rdma_resolve_route(id, timeout_ms) ? errno : 0;
}

// Case 5: the route errors; via/via_dev may be null.
void route_errors(rdma_event_channel *ec, const char *addr, const char *port, const char *local,
		  const char *via, const char *via_dev)
{
	{
		Id id;
		sockaddr_storage sa{};
		const bool bound = address(local, "0", sa) &&
				   rdma_create_id(ec, &id.p, nullptr, RDMA_PS_TCP) == 0 &&
				   rdma_bind_addr(id.p, reinterpret_cast<sockaddr *>(&sa)) == 0 &&
				   id.p->verbs;
		check(bound, std::string("5. an ID bound to ") + local + ", on its device");
		if (bound)
			vmtest::check_errno(route_errno(id.p, kTimeoutMs), EINVAL,
					    "5. a route before the address: EINVAL");
	}
	{
		Id id;
		Event e = resolve_addr(ec, id.p, addr, port);
		check(e.type == RDMA_CM_EVENT_ADDR_RESOLVED, "5. ADDR_RESOLVED (" + name(e) + ")");
		if (e.type == RDMA_CM_EVENT_ADDR_RESOLVED) {
			vmtest::check_errno(route_errno(id.p, 0), EINVAL,
					    "5. a route with a zero timeout: EINVAL");
			const int err = route_errno(id.p, kTimeoutMs);
			e = err ? Event{} : next_event(ec);
			check(e.type == RDMA_CM_EVENT_ROUTE_RESOLVED,
			      "5. the same ID then resolves its route: ROUTE_RESOLVED (" + name(e) +
				      ", errno " + std::to_string(err) + ")");
		}
	}
	if (!via || !via_dev)
		return;
	Id id;
	const Event e = resolve_addr(ec, id.p, via, port);
	check(e.type == RDMA_CM_EVENT_ADDR_RESOLVED,
	      std::string("5. ") + via + " through " + via_dev + ": ADDR_RESOLVED (" + name(e) + ")");
	if (e.type != RDMA_CM_EVENT_ADDR_RESOLVED)
		return;
	const std::string del = std::string("ip link del ") + via_dev;
	check(std::system(del.c_str()) == 0, "5. " + del);
	vmtest::check_errno(route_errno(id.p, kTimeoutMs), ENODEV,
			    std::string("5. a route once ") + via_dev + " is gone: ENODEV");
}

int client(const char *addr, const char *port, const char *unreachable, const char *local,
	   const char *via, const char *via_dev)
{
	rdma_event_channel *ec = rdma_create_event_channel();
	check(ec != nullptr, "an event channel");
	if (!ec)
		return vmtest::summary();
	{
		Conn conn;
		Event e = connect(ec, conn, addr, port, kReqAccept);
		check(e.type == RDMA_CM_EVENT_ESTABLISHED,
		      "1. connect with private data: ESTABLISHED (" + name(e) + ")");
		check(starts_with(e.data.data(), static_cast<std::uint8_t>(e.data.size()), kRepData),
		      "1. the server's accept carries its private data");
		if (e.type == RDMA_CM_EVENT_ESTABLISHED) {
			check(conn.send(0x40) && conn.wait(2, 0), "1. client sends its bytes");
			check(conn.wait(1, 0x80), "1. client receives the server's bytes");
			check(rdma_disconnect(conn.id) == 0, "1. client disconnects");
			e = next_event(ec);
			check(e.type == RDMA_CM_EVENT_DISCONNECTED,
			      "1. client: DISCONNECTED (" + name(e) + ")");
		}
	}
	{
		Conn conn;
		Event e = connect(ec, conn, addr, port, kReqReject);
		check(e.type == RDMA_CM_EVENT_REJECTED && e.status == kRejConsumer,
		      "2. a rejected connect: REJECTED status 28 (" + name(e) + ")");
		check(starts_with(e.data.data(), static_cast<std::uint8_t>(e.data.size()), kRejData),
		      "2. the reject carries the server's private data");
	}
	{
		const std::string other = std::to_string(std::stoi(port) + 1);
		Conn conn;
		Event e = connect(ec, conn, addr, other.c_str(), kReqAccept);
		check(e.type == RDMA_CM_EVENT_REJECTED && e.status == kRejNoService,
		      "3. a connect to a port nobody listens on: REJECTED status 8 (" + name(e) +
			      ")");
	}
	{
		Id id;
		Event e = resolve(ec, id.p, unreachable, port);
		check(e.type == RDMA_CM_EVENT_ADDR_ERROR && e.status == -ETIMEDOUT,
		      std::string("4. resolving ") + unreachable + ": ADDR_ERROR (" + name(e) + ")");
	}
	if (local)
		route_errors(ec, addr, port, local, via, via_dev);
	rdma_destroy_event_channel(ec);
	return vmtest::summary();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 4 && std::string_view(argv[1]) == "server")
		return server(argv[2], argv[3]);
	if ((argc == 5 || argc == 6 || argc == 8) && std::string_view(argv[1]) == "client")
		return client(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : nullptr,
			      argc > 7 ? argv[6] : nullptr, argc > 7 ? argv[7] : nullptr);
	std::fprintf(stderr, "usage: verbs_cm server ADDR PORT\n"
			     "       verbs_cm client ADDR PORT UNREACHABLE_ADDR [LOCAL_ADDR [VIA_ADDR "
			     "VIA_DEV]]\n");
	return 2;
}
