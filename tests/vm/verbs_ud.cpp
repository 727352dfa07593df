// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// UD conformance between two softroce devices of one process: a UD QP on
// each (the receiver's also one taking from an SRQ), address handles,
// SEND and SEND with immediate with the 40-byte GRH checked byte for byte,
// the Q_Key rules (a mismatch is dropped and counted; the high bit means
// the QP's own), a datagram with no receive posted (dropped and counted),
// a receive buffer too small (IBV_WC_LOC_LEN_ERR) and a send longer than
// the MTU (IBV_WC_LOC_LEN_ERR, the sends behind it flushed, the QP then in
// SQE, receiving still; back to RTS, it sends again).
//
// With --mcast MGID MGID2, multicast instead: A sends to the group MGID
// (::ffff:224.x.y.z or ff..), to which both QPs of B and A's second QP are
// attached: three receivers on two devices, each its own copy of every
// datagram (bytes, GRH, source QP compared; a completion matched by device
// and QP number), A's by loopback, if its Q_Key matches; a QP created with
// IBV_QP_CREATE_BLOCK_SELF_MCAST_LB gets others' datagrams, not its own; a
// QP detached gets nothing more; a datagram to the group for a unicast QP
// number is dropped and counted; the IP group is joined on A's netdev
// while a QP is attached, left after the last detach; bad attaches and
// detaches fail with EINVAL. On MGID2: max_mcast_qp_attach QPs attach,
// one more gets ENOMEM, destroying them leaves the group.
//
// usage: verbs_ud DEV_A GID_A DEV_B GID_B [--mcast MGID MGID2]
// (GIDs as IPv6 text, v4-mapped or not)
#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "rc_pair.hpp"

using vmtest::check;
using vmtest::check_errno;

namespace {

constexpr std::uint32_t kQkeyA = 0x11111111;
constexpr std::uint32_t kQkeyB = 0x22222222;
constexpr std::size_t kGrh = 40;
constexpr std::size_t kBuf = 8192;

struct UdSide {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_srq *srq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_qp *sqp = nullptr; // takes its receives from srq
	ibv_mr *mr = nullptr;
	ibv_ah *ah = nullptr;  // to the peer
	std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kBuf);
	int gid_index = -1;
	ibv_gid gid{};
	std::string dev;

	UdSide() = default;
	UdSide(const UdSide &) = delete;
	UdSide &operator=(const UdSide &) = delete;
	~UdSide()
	{
		if (ah)
			ibv_destroy_ah(ah);
		for (ibv_qp *q : {qp, sqp})
			if (q)
				ibv_destroy_qp(q);
		if (srq)
			ibv_destroy_srq(srq);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
	}

	ibv_qp *make_qp(ibv_srq *s, std::uint32_t qkey) const
	{
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_UD, cq, 16, 1);
		ia.srq = s;
		ibv_qp *q = ibv_create_qp(pd, &ia);
		if (!q)
			return nullptr;
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qkey = qkey;
		bool ok = !ibv_modify_qp(q, &a,
					 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
		a = {};
		a.qp_state = IBV_QPS_RTR;
		ok = ok && !ibv_modify_qp(q, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0x123;
		ok = ok && !ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		if (!ok) {
			ibv_destroy_qp(q);
			return nullptr;
		}
		return q;
	}

	bool setup(const char *name, const char *gid_text, std::uint32_t qkey)
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
		mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
		ibv_srq_init_attr sa{};
		sa.attr.max_wr = 16;
		sa.attr.max_sge = 1;
		srq = ibv_create_srq(pd, &sa);
		qp = make_qp(nullptr, qkey);
		sqp = srq ? make_qp(srq, qkey) : nullptr;
		return mr && qp && sqp;
	}

	bool make_ah(const UdSide &peer)
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

	int post_recv(ibv_qp *q, std::size_t off, std::uint32_t len, std::uint64_t id) const
	{
		ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data() + off), len, mr->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (q == sqp)
			return ibv_post_srq_recv(srq, &wr, &bad);
		return ibv_post_recv(q, &wr, &bad);
	}

	int send(ibv_qp *to, std::size_t off, std::uint32_t len, std::uint32_t qkey,
		 bool imm, std::uint64_t id) const
	{
		ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data() + off), len, mr->lkey};
		ibv_send_wr wr{};
		ibv_send_wr *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr.imm_data = htonl(0xfeedf00d);
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = to->qp_num;
		wr.wr.ud.remote_qkey = qkey;
		return ibv_post_send(qp, &wr, &bad);
	}

	[[nodiscard]] long counter(const char *name) const { return vmtest::hw_counter(dev, name); }
};

// No completion arrives on cq within about 200 ms.
bool quiet(ibv_cq *cq)
{
	ibv_wc wc{};
	for (int i = 0; i < 200; ++i) {
		if (ibv_poll_cq(cq, 1, &wc))
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	return true;
}

// The GRH of a datagram from a to b, as its first 40 received bytes.
bool grh_ok(const std::uint8_t *g, const UdSide &a, const UdSide &b)
{
	const bool v4 = IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr *>(a.gid.raw));
	if (!v4)
		return (g[0] >> 4) == 6 && g[6] == IPPROTO_UDP &&
		       !std::memcmp(g + 8, a.gid.raw, 16) && !std::memcmp(g + 24, b.gid.raw, 16);
	static const std::array<std::uint8_t, 20> zero{};
	const std::uint8_t *ip = g + 20;
	return !std::memcmp(g, zero.data(), zero.size()) && ip[0] == 0x45 &&
	       ip[9] == IPPROTO_UDP && !std::memcmp(ip + 12, a.gid.raw + 12, 4) &&
	       !std::memcmp(ip + 16, b.gid.raw + 12, 4);
}

// Is the IP multicast group of @mgid joined on some netdev of this
// process's network namespace (/proc/net/igmp or igmp6)?
bool ip_joined(const ibv_gid &mgid)
{
	const bool v4 = IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr *>(mgid.raw));
	std::ifstream f(v4 ? "/proc/net/igmp" : "/proc/net/igmp6");
	char want[40];
	if (v4) {
		// The group as the kernel prints it: %08X of the __be32.
		std::uint32_t a = 0;
		std::memcpy(&a, mgid.raw + 12, 4);
		std::snprintf(want, sizeof(want), "%08X", a);
	} else {
		for (int i = 0; i < 16; ++i)
			std::snprintf(want + 2 * i, 3, "%02x", mgid.raw[i]);
	}
	std::string line;
	while (std::getline(f, line))
		if (line.find(want) != std::string::npos)
			return true;
	return false;
}

bool is_v4(const ibv_gid &gid)
{
	return IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr *>(gid.raw));
}

// A QP that may receive from the group, its side and its buffer offset.
struct McRx {
	UdSide *side;
	ibv_qp *qp;
	std::size_t off;
};

// One multicast round: a receive posted on every QP of @rx (wr_id: its
// index in @rx), @len bytes sent by @from (a QP of @src) to the group
// through @mah (to QP @dqpn). Each QP of @want gets the datagram once (bytes, source QP
// and the group as GRH destination checked), the others nothing. QP
// numbers are per device: a completion is matched by its CQ's side and QP
// number, and its wr_id must agree.
void mcast_round(UdSide &src, ibv_qp *from, ibv_ah *mah, const ibv_gid &mgid,
		 const std::vector<McRx> &rx, const std::vector<ibv_qp *> &want,
		 std::uint32_t len, const std::string &what, UdSide &other,
		 std::uint32_t dqpn = 0xffffff)
{
	static std::uint32_t round;
	++round;
	for (std::size_t i = 0; i < len; ++i)
		src.buf[i] = static_cast<std::uint8_t>(i * 13 + round);
	for (std::size_t i = 0; i < rx.size(); ++i) {
		const McRx &r = rx[i];
		std::memset(r.side->buf.data() + r.off, 0xee, 2048);
		check(!r.side->post_recv(r.qp, r.off, 2048, i),
		      what + ": post a receive on QP " + std::to_string(r.qp->qp_num));
	}
	ibv_sge sge{reinterpret_cast<std::uintptr_t>(src.buf.data()), len, src.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = 1000 + round;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = mah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = kQkeyB;
	check(!ibv_post_send(from, &wr, &bad),
	      what + ": post a send of " + std::to_string(len) + " B to the group");

	// Every completion of both CQs until 300 ms after the last one.
	std::vector<std::pair<UdSide *, ibv_wc>> got;
	auto last = std::chrono::steady_clock::now();
	while (std::chrono::steady_clock::now() - last < std::chrono::milliseconds(300)) {
		bool any = false;
		for (UdSide *s : {&src, &other}) {
			ibv_wc wc{};
			if (ibv_poll_cq(s->cq, 1, &wc) == 1) {
				got.emplace_back(s, wc);
				any = true;
			}
		}
		if (any)
			last = std::chrono::steady_clock::now();
	}
	bool sent = false;
	std::vector<ibv_qp *> received;
	for (const auto &[side, wc] : got) {
		if (side == &src && wc.qp_num == from->qp_num && wc.wr_id == wr.wr_id) {
			sent = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
			continue;
		}
		const McRx *r = nullptr;
		for (const McRx &x : rx)
			if (x.side == side && x.qp->qp_num == wc.qp_num)
				r = &x;
		const std::string q = what + ": " + side->dev + " QP " + std::to_string(wc.qp_num);
		check(r && std::find(want.begin(), want.end(), r->qp) != want.end(),
		      q + " is meant to receive");
		if (!r)
			continue;
		check(wc.wr_id == static_cast<std::uint64_t>(r - rx.data()),
		      q + ": the completion is of its own receive");
		received.push_back(r->qp);
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      wc.byte_len == kGrh + len && wc.src_qp == from->qp_num &&
			      (wc.wc_flags & IBV_WC_GRH),
		      q + " receives " + std::to_string(len) + " B with a GRH from QP " +
			      std::to_string(from->qp_num) + " (" + ibv_wc_status_str(wc.status) +
			      ", " + std::to_string(wc.byte_len) + " B, source QP " +
			      std::to_string(wc.src_qp) + ")");
		const std::uint8_t *g = r->side->buf.data() + r->off;
		const bool dst_ok = is_v4(mgid) ? !std::memcmp(g + 36, mgid.raw + 12, 4)
						: !std::memcmp(g + 24, mgid.raw, 16);
		check(dst_ok, q + ": the GRH's destination is the group");
		check(!std::memcmp(g + kGrh, src.buf.data(), len), q + ": the bytes arrived");
	}
	check(sent, what + ": the send completes");
	for (ibv_qp *w : want)
		check(std::count(received.begin(), received.end(), w) == 1,
		      what + ": QP " + std::to_string(w->qp_num) + " got it once");
}

// A UD QP on @s with its own receive queue, created with @flags through
// ibv_create_qp_ex (0: no creation flags), taken to RTS with @qkey.
ibv_qp *make_qp_ex(UdSide &s, std::uint32_t flags, std::uint32_t qkey)
{
	ibv_qp_init_attr_ex ia{};
	ia.send_cq = s.cq;
	ia.recv_cq = s.cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = s.pd;
	if (flags) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		ia.create_flags = flags;
	}
	ibv_qp *q = ibv_create_qp_ex(s.ctx, &ia);
	if (!q) {
		std::fprintf(stderr, "ibv_create_qp_ex: %s\n", std::strerror(errno));
		return nullptr;
	}
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	bool ok = !ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	a = {};
	a.qp_state = IBV_QPS_RTR;
	ok = ok && !ibv_modify_qp(q, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x456;
	ok = ok && !ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (!ok) {
		std::fprintf(stderr, "ibv_modify_qp: %s\n", std::strerror(errno));
		ibv_destroy_qp(q);
		return nullptr;
	}
	return q;
}

// The limits query_device reports hold: one group takes
// max_mcast_qp_attach QPs, the next attach fails with ENOMEM; detaching
// them frees the group (its IP group is left).
void mcast_limits(UdSide &a, const ibv_gid &mgid)
{
	ibv_device_attr da{};
	check(!ibv_query_device(a.ctx, &da), "query device");
	check(da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
		      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach,
	      "multicast limits: " + std::to_string(da.max_mcast_grp) + " groups, " +
		      std::to_string(da.max_mcast_qp_attach) + " QPs each, " +
		      std::to_string(da.max_total_mcast_qp_attach) + " in all");
	if (da.max_mcast_qp_attach <= 0 || da.max_mcast_qp_attach > 256)
		return;
	std::vector<ibv_qp *> qps;
	for (int i = 0; i <= da.max_mcast_qp_attach; ++i) {
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_UD, a.cq, 1, 1);
		ibv_qp *q = ibv_create_qp(a.pd, &ia);
		check(q != nullptr, "create UD QP " + std::to_string(i) + " for the limit");
		if (!q)
			break;
		qps.push_back(q);
	}
	if (qps.size() == static_cast<std::size_t>(da.max_mcast_qp_attach) + 1) {
		int fails = 0;
		for (int i = 0; i < da.max_mcast_qp_attach; ++i)
			fails += ibv_attach_mcast(qps[i], &mgid, 0) != 0;
		check(fails == 0, std::to_string(da.max_mcast_qp_attach) + " QPs attach to one group");
		check_errno(ibv_attach_mcast(qps.back(), &mgid, 0), ENOMEM,
			    "one QP more than max_mcast_qp_attach");
		check(ip_joined(mgid), "the limit's IP group is joined");
	}
	// uverbs refuses to destroy a QP still attached (EBUSY; it detaches
	// only when the process goes): detach them, then destroy.
	if (qps.size() == static_cast<std::size_t>(da.max_mcast_qp_attach) + 1) {
		check_errno(ibv_destroy_qp(qps[0]), EBUSY, "an attached QP is not destroyed");
		int fails = 0;
		for (int i = 0; i < da.max_mcast_qp_attach; ++i)
			fails += ibv_detach_mcast(qps[i], &mgid, 0) != 0;
		check(fails == 0, "every QP detaches");
	}
	for (ibv_qp *q : qps)
		ibv_destroy_qp(q);
	check(!ip_joined(mgid), "the last detach left the group: its IP group is left");
}

// Multicast: A's QP sends to the group; B's two QPs and A's second QP
// are attached.
int mcast(UdSide &a, UdSide &b, const char *mgid_text, const char *mgid2_text)
{
	ibv_gid mgid{};
	ibv_gid mgid2{};
	check(inet_pton(AF_INET6, mgid_text, mgid.raw) == 1, std::string("group ") + mgid_text);
	check(inet_pton(AF_INET6, mgid2_text, mgid2.raw) == 1, std::string("group ") + mgid2_text);
	ibv_ah_attr aa{};
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = mgid;
	aa.grh.sgid_index = static_cast<std::uint8_t>(a.gid_index);
	aa.grh.hop_limit = 64;
	ibv_ah *mah = ibv_create_ah(a.pd, &aa);
	check(mah != nullptr, "address handle to the group");
	// A QP that never gets what it sends itself, with B's Q_Key.
	ibv_qp *blk = make_qp_ex(a, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, kQkeyB);
	check(blk != nullptr, std::string("UD QP with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (") +
				      (blk ? "made" : std::strerror(errno)) + ")");
	if (vmtest::failures)
		return vmtest::summary();

	// Bad input: not a multicast GID; a detach never attached.
	check_errno(ibv_attach_mcast(b.qp, &a.gid, 0), EINVAL, "attach to a unicast GID");
	check_errno(ibv_detach_mcast(b.qp, &mgid, 0), EINVAL, "detach never attached");
	check(!ip_joined(mgid), "the IP group is not joined on A's side before");
	for (ibv_qp *q : {b.qp, b.sqp, a.sqp})
		check(!ibv_attach_mcast(q, &mgid, 0), "attach QP " + std::to_string(q->qp_num));
	check(!ibv_attach_mcast(a.sqp, &mgid, 0), "attach again: no error");
	check_errno(ibv_detach_mcast(a.sqp, &mgid2, 0), EINVAL,
		    "detach from another group, never attached");
	check(ip_joined(mgid), "the IP group is joined on A's side");

	const std::vector<McRx> rx{{&b, b.qp, 2048}, {&b, b.sqp, 4096}, {&a, a.sqp, 4096}};
	// A's second QP has A's Q_Key: the datagram (B's) is not for it.
	const long qk = a.counter("rx_qkey_drops");
	mcast_round(a, a.qp, mah, mgid, rx, {b.qp, b.sqp}, 100, "both of B", b);
	check(a.counter("rx_qkey_drops") == qk + 1, "A's QP dropped it for its Q_Key, counted");
	ibv_qp_attr at{};
	at.qkey = kQkeyB;
	check(!ibv_modify_qp(a.sqp, &at, IBV_QP_QKEY), "A's second QP takes B's Q_Key");
	ibv_port_attr pa{};
	check(!ibv_query_port(a.ctx, 1, &pa), "query port");
	const std::uint32_t mtu = 128U << pa.active_mtu;
	// The receive A's second QP did not take is still posted (SRQ).
	for (std::uint32_t len : {0U, 1U, 777U, mtu})
		mcast_round(a, a.qp, mah, mgid, rx, {b.qp, b.sqp, a.sqp}, len,
			    "all three, A's by loopback", b);

	// The blocking QP receives from others, not from itself.
	check(!ibv_attach_mcast(blk, &mgid, 0), "attach the blocking QP");
	std::vector<McRx> rx4 = rx;
	rx4.push_back({&a, blk, 6144});
	mcast_round(a, a.qp, mah, mgid, rx4, {b.qp, b.sqp, a.sqp, blk}, 200,
		    "four, the blocking QP from another", b);
	// A receive posted on it, which it must not take.
	mcast_round(a, blk, mah, mgid, rx4, {b.qp, b.sqp, a.sqp}, 300,
		    "sent by the blocking QP: not back to it", b);
	check(!ibv_detach_mcast(blk, &mgid, 0), "detach the blocking QP");

	check(!ibv_detach_mcast(b.qp, &mgid, 0), "detach B's first QP");
	check_errno(ibv_detach_mcast(b.qp, &mgid, 0), EINVAL, "detach it again");
	mcast_round(a, a.qp, mah, mgid, rx, {b.sqp, a.sqp}, 300, "after a detach", b);
	// A group is reached through QP 0xFFFFFF only: else dropped, counted.
	const long mc = b.counter("rx_mcast_drops");
	mcast_round(a, a.qp, mah, mgid, rx, {}, 64, "to the group, a unicast QP number", b,
		    b.sqp->qp_num);
	check(b.counter("rx_mcast_drops") == mc + 1,
	      "B dropped the datagram to the group for a QP number, counted");
	check(!ibv_detach_mcast(b.sqp, &mgid, 0), "detach B's second QP");
	check(!ibv_detach_mcast(a.sqp, &mgid, 0), "detach A's second QP");
	check(!ip_joined(mgid), "the IP group is left on A's side");
	mcast_round(a, a.qp, mah, mgid, rx, {}, 50, "after all detached", b);
	ibv_destroy_ah(mah);
	ibv_destroy_qp(blk);

	mcast_limits(a, mgid2);
	return vmtest::summary();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_ud DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	UdSide a;
	UdSide b;
	check(a.setup(argv[1], argv[2], kQkeyA), std::string("UD QPs on ") + argv[1]);
	check(b.setup(argv[3], argv[4], kQkeyB), std::string("UD QPs on ") + argv[3]);
	if (vmtest::failures)
		return vmtest::summary();
	check(a.make_ah(b), "address handle A -> B");
	check(b.make_ah(a), "address handle B -> A");
	if (vmtest::failures)
		return vmtest::summary();
	if (argc == 8 && std::string(argv[5]) == "--mcast")
		return mcast(a, b, argv[6], argv[7]);
	ibv_port_attr pa{};
	check(!ibv_query_port(a.ctx, 1, &pa), "query port");
	const std::uint32_t mtu = 128U << pa.active_mtu;
	ibv_wc wc{};

	// SEND and SEND with immediate, to the QP and to the SRQ's QP.
	for (std::uint32_t len : {0U, 1U, 100U, mtu}) {
		for (ibv_qp *to : {b.qp, b.sqp}) {
			const bool imm = len == 100;
			for (std::size_t i = 0; i < len; ++i)
				a.buf[i] = static_cast<std::uint8_t>(i * 7 + len);
			std::memset(b.buf.data() + 4096, 0xee, 4096);
			const std::string what = std::to_string(len) + " B to " +
						 (to == b.sqp ? "the SRQ's QP" : "the QP");
			check(!b.post_recv(to, 4096, 4096, 7), "post receive for " + what);
			check(!a.send(to, 0, len, kQkeyB, imm, 8), "post send of " + what);
			check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS &&
				      wc.wr_id == 8 && wc.opcode == IBV_WC_SEND,
			      "send of " + what + " completes");
			check(vmtest::wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS &&
				      wc.wr_id == 7 && wc.opcode == IBV_WC_RECV,
			      "receive of " + what + " completes");
			check(wc.byte_len == kGrh + len, "byte_len " + std::to_string(wc.byte_len) +
								 " counts the GRH");
			check(wc.src_qp == a.qp->qp_num && wc.qp_num == to->qp_num,
			      "source and destination QP");
			check((wc.wc_flags & IBV_WC_GRH) &&
				      !!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
				      (!imm || wc.imm_data == htonl(0xfeedf00d)),
			      "GRH flag, immediate data");
			check(grh_ok(b.buf.data() + 4096, a, b), "the GRH is the IP header");
			check(!std::memcmp(b.buf.data() + 4096 + kGrh, a.buf.data(), len),
			      "the bytes arrived");
		}
	}

	// A wrong Q_Key: dropped and counted, the receive stays posted.
	const long qk = b.counter("rx_qkey_drops");
	check(!b.post_recv(b.qp, 4096, 4096, 9), "post receive");
	check(!a.send(b.qp, 0, 10, kQkeyA, false, 10), "send with B's Q_Key wrong");
	check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS, "... completes");
	check(quiet(b.cq) && b.counter("rx_qkey_drops") == qk + 1, "... dropped, counted");
	// The high bit: the sender's own Q_Key, A's, still wrong; then right.
	check(!a.send(b.qp, 0, 10, 0x80000000, false, 11), "send with the QP's Q_Key");
	check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS, "... completes");
	check(quiet(b.cq) && b.counter("rx_qkey_drops") == qk + 2, "... A's: dropped");
	ibv_qp_attr at{};
	at.qkey = kQkeyB;
	check(!ibv_modify_qp(a.qp, &at, IBV_QP_QKEY), "A's Q_Key set to B's");
	check(!a.send(b.qp, 0, 10, 0x80000000, false, 12), "send with the QP's Q_Key");
	check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS, "... completes");
	check(vmtest::wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 9 &&
		      wc.byte_len == kGrh + 10,
	      "... received");

	// No receive posted: dropped and counted.
	const long nr = b.counter("rx_ud_no_recv_drops");
	check(!a.send(b.qp, 0, 10, kQkeyB, false, 13), "send with no receive posted");
	check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS, "... completes");
	check(quiet(b.cq) && b.counter("rx_ud_no_recv_drops") == nr + 1, "... dropped, counted");

	// A receive buffer too small for GRH and payload.
	check(!b.post_recv(b.qp, 4096, kGrh + 10, 14), "post a receive of 50 B");
	check(!a.send(b.qp, 0, 100, kQkeyB, false, 15), "send 100 B");
	check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS, "... completes");
	check(vmtest::wait_wc(b.cq, wc) && wc.wr_id == 14 && wc.status == IBV_WC_LOC_LEN_ERR,
	      "... the receive completes with IBV_WC_LOC_LEN_ERR (" +
		      std::string(ibv_wc_status_str(wc.status)) + ")");

	// Longer than the MTU, with two more sends behind it in one post: a
	// local length error, the QP goes to SQE (the send queue error state),
	// the two after it are flushed; receives go on; a send posted in SQE
	// is flushed too; the consumer moves the QP back, SQE -> RTS, and
	// sends work again.
	{
		std::array<ibv_sge, 3> sge{};
		std::array<ibv_send_wr, 3> wr{};
		const std::array<std::uint32_t, 3> lens{mtu + 1, 10, 20};
		for (std::size_t i = 0; i < wr.size(); ++i) {
			sge[i] = {reinterpret_cast<std::uintptr_t>(a.buf.data()), lens[i], a.mr->lkey};
			wr[i].wr_id = 16 + i;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].opcode = IBV_WR_SEND;
			wr[i].send_flags = IBV_SEND_SIGNALED;
			wr[i].wr.ud.ah = a.ah;
			wr[i].wr.ud.remote_qpn = b.qp->qp_num;
			wr[i].wr.ud.remote_qkey = kQkeyB;
			wr[i].next = i + 1 < wr.size() ? &wr[i + 1] : nullptr;
		}
		ibv_send_wr *bad = nullptr;
		check(!ibv_post_send(a.qp, wr.data(), &bad), "post sends of MTU + 1, 10 and 20 B");
	}
	check(vmtest::wait_wc(a.cq, wc) && wc.wr_id == 16 && wc.status == IBV_WC_LOC_LEN_ERR,
	      "... MTU + 1 completes with IBV_WC_LOC_LEN_ERR (" +
		      std::string(ibv_wc_status_str(wc.status)) + ")");
	for (std::uint64_t id : {17U, 18U})
		check(vmtest::wait_wc(a.cq, wc) && wc.wr_id == id &&
			      wc.status == IBV_WC_WR_FLUSH_ERR && wc.opcode == IBV_WC_SEND,
		      "... the send behind it (" + std::to_string(id) + ") is flushed (" +
			      std::string(ibv_wc_status_str(wc.status)) + ")");
	check(vmtest::wait_qp_state(a.qp, IBV_QPS_SQE) == IBV_QPS_SQE, "... the QP is in SQE");
	check(quiet(b.cq), "... nothing reached B");
	// Receives still work in SQE (A's Q_Key is B's since above).
	std::memset(a.buf.data() + 4096, 0xee, 4096);
	for (std::size_t i = 0; i < 64; ++i)
		b.buf[i] = static_cast<std::uint8_t>(0xa0 + i);
	check(!a.post_recv(a.qp, 4096, 4096, 20), "post a receive on the QP in SQE");
	check(!b.send(a.qp, 0, 64, kQkeyB, false, 21), "B sends 64 B to it");
	check(vmtest::wait_wc(b.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 21,
	      "... completes");
	check(vmtest::wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 20 &&
		      wc.opcode == IBV_WC_RECV && wc.byte_len == kGrh + 64,
	      "... received in SQE");
	check(!std::memcmp(a.buf.data() + 4096 + kGrh, b.buf.data(), 64), "... its bytes arrived");
	check(!a.send(b.qp, 0, 30, kQkeyB, false, 22), "post a send in SQE");
	check(vmtest::wait_wc(a.cq, wc) && wc.wr_id == 22 && wc.status == IBV_WC_WR_FLUSH_ERR,
	      "... flushed (" + std::string(ibv_wc_status_str(wc.status)) + ")");
	ibv_qp_attr sa{};
	sa.qp_state = IBV_QPS_RTS;
	sa.cur_qp_state = IBV_QPS_RTS;
	check(ibv_modify_qp(a.qp, &sa, IBV_QP_STATE | IBV_QP_CUR_STATE) != 0,
	      "RTS -> RTS refused while the QP is in SQE");
	sa.cur_qp_state = IBV_QPS_SQE;
	check(!ibv_modify_qp(a.qp, &sa, IBV_QP_STATE | IBV_QP_CUR_STATE), "SQE -> RTS");
	check(vmtest::wait_qp_state(a.qp, IBV_QPS_RTS) == IBV_QPS_RTS, "... the QP is in RTS");
	for (std::size_t i = 0; i < 200; ++i)
		a.buf[i] = static_cast<std::uint8_t>(i * 3 + 1);
	std::memset(b.buf.data() + 4096, 0xee, 4096);
	check(!b.post_recv(b.qp, 4096, 4096, 23), "post a receive on B");
	check(!a.send(b.qp, 0, 200, kQkeyB, false, 24), "send 200 B after SQE -> RTS");
	check(vmtest::wait_wc(a.cq, wc) && wc.wr_id == 24 && wc.status == IBV_WC_SUCCESS,
	      "... completes");
	check(vmtest::wait_wc(b.cq, wc) && wc.wr_id == 23 && wc.status == IBV_WC_SUCCESS &&
		      wc.byte_len == kGrh + 200 && wc.src_qp == a.qp->qp_num,
	      "... received");
	check(!std::memcmp(b.buf.data() + 4096 + kGrh, a.buf.data(), 200), "... its bytes arrived");
	return vmtest::summary();
}
