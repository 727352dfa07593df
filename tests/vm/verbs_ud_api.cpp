// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_ud_api DEV_A GID_A DEV_B GID_B [--interop]
//
// UD datagrams both ways between two UD QPs, one on each device, through
// both posting APIs and both polling APIs of the provider: A posts with
// ibv_post_send and polls with ibv_poll_cq, B posts through the ibv_wr_*
// API (ibv_wr_set_ud_addr) and polls an ibv_cq_ex (ibv_wc_read_src_qp,
// ibv_wc_read_wc_flags and the rest). Every receive is checked byte by
// byte: the 40-byte GRH (for IPv4 GIDs 20 zero bytes and then the
// packet's IPv4 header, for IPv6 GIDs its IPv6 header: the peers'
// addresses, UDP, the packet's length, for IPv4 a valid checksum), the
// payload after it and nothing written past it; the completion's byte_len
// (GRH included), source QP, IBV_WC_GRH and immediate, with and without
// inline data. Then what the provider refuses on a UD QP (an opcode other
// than SEND, a send without an address, QP types it does not offer, an AH
// without a GRH), and the Q_Key rules both ways (a mismatch completes on
// the sender and is not received; the high bit stands for the sending
// QP's Q_Key). verbs_ud.cpp covers drops, counters
// and length errors.
//
// B must be a softrdma device; A may be another driver's (rdma_rxe) with
// --interop, which leaves out the refusals (A's provider answers those).
#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check.hpp"

using vmtest::check;
using vmtest::check_errno;

namespace {

constexpr std::uint32_t kQkey = 0x11111111;
// The network header at the head of every UD receive (kGrh_SIZE).
constexpr std::size_t kGrh = 40;
constexpr std::size_t kBuf = 64 * 1024;
constexpr std::size_t kSendOff = 0;
constexpr std::size_t kRecvOff = 32 * 1024;
// Room of every receive: the GRH, a 4096-byte datagram and a margin.
constexpr std::size_t kRecvLen = kGrh + 4096 + 64;
constexpr std::uint8_t kUntouched = 0xee;

constexpr std::uint64_t kWcFlags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				   IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				   IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				   IBV_WC_EX_WITH_DLID_PATH_BITS;

struct Side {
	const char *name = "";
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_cq_ex *cqx = nullptr; // B: cq is its ibv_cq
	ibv_qp *qp = nullptr;
	ibv_qp_ex *qpx = nullptr;
	ibv_mr *mr = nullptr;
	ibv_ah *ah = nullptr; // to the peer
	std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kBuf);
	int gid_index = -1;
	ibv_gid gid{};
	std::size_t mtu = 0; // the port's active MTU in bytes

	Side() = default;
	Side(const Side &) = delete;
	Side &operator=(const Side &) = delete;
	~Side()
	{
		if (ah)
			ibv_destroy_ah(ah);
		if (qp)
			ibv_destroy_qp(qp);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
	}
	[[nodiscard]] std::uintptr_t addr(std::size_t off) const
	{
		return reinterpret_cast<std::uintptr_t>(buf.data() + off);
	}
};

bool setup(Side &s, const char *dev, const char *gid, bool cq_ex)
{
	s.name = dev;
	s.ctx = vmtest::open_by_name(dev);
	if (!s.ctx)
		return false;
	s.gid_index = vmtest::gid_index(s.ctx, gid, s.gid);
	ibv_port_attr pa{};
	if (ibv_query_port(s.ctx, 1, &pa))
		return false;
	s.mtu = std::size_t{128} << pa.active_mtu;
	s.pd = ibv_alloc_pd(s.ctx);
	if (cq_ex) {
		ibv_cq_init_attr_ex ca{};
		ca.cqe = 256;
		ca.wc_flags = kWcFlags;
		s.cqx = ibv_create_cq_ex(s.ctx, &ca);
		s.cq = s.cqx ? ibv_cq_ex_to_cq(s.cqx) : nullptr;
	} else {
		s.cq = ibv_create_cq(s.ctx, 256, nullptr, nullptr, 0);
	}
	if (!s.pd || !s.cq)
		return false;
	s.mr = ibv_reg_mr(s.pd, s.buf.data(), kBuf, IBV_ACCESS_LOCAL_WRITE);
	ibv_qp_init_attr_ex ia{};
	ia.send_cq = s.cq;
	ia.recv_cq = s.cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 32;
	ia.cap.max_recv_wr = 32;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	ia.cap.max_inline_data = 64;
	ia.pd = s.pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	s.qp = ibv_create_qp_ex(s.ctx, &ia);
	if (!s.qp)
		return false;
	s.qpx = ibv_qp_to_qp_ex(s.qp);
	return s.gid_index >= 0 && s.mr && s.qpx;
}

// RESET -> INIT -> RTR -> RTS: a UD QP needs no peer.
bool bring_up(Side &s)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qkey = kQkey;
	if (ibv_modify_qp(s.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return false;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(s.qp, &a, IBV_QP_STATE))
		return false;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	return ibv_modify_qp(s.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0;
}

ibv_ah_attr ah_attr(const Side &from, const Side &to)
{
	ibv_ah_attr a{};
	a.is_global = 1;
	a.port_num = 1;
	a.grh.dgid = to.gid;
	a.grh.sgid_index = static_cast<std::uint8_t>(from.gid_index);
	a.grh.hop_limit = 64;
	return a;
}

// One completion of s's CQ, through whichever API s polls with, or none
// within ms milliseconds.
std::optional<ibv_wc> poll_one(Side &s, int ms)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	do {
		if (s.cqx) {
			ibv_poll_cq_attr pa{};
			if (ibv_start_poll(s.cqx, &pa) != 0)
				continue;
			ibv_wc wc{};
			wc.wr_id = s.cqx->wr_id;
			wc.status = s.cqx->status;
			wc.opcode = ibv_wc_read_opcode(s.cqx);
			wc.byte_len = ibv_wc_read_byte_len(s.cqx);
			wc.wc_flags = ibv_wc_read_wc_flags(s.cqx);
			if (wc.wc_flags & IBV_WC_WITH_IMM)
				wc.imm_data = ibv_wc_read_imm_data(s.cqx);
			wc.qp_num = ibv_wc_read_qp_num(s.cqx);
			wc.src_qp = ibv_wc_read_src_qp(s.cqx);
			wc.slid = static_cast<std::uint16_t>(ibv_wc_read_slid(s.cqx));
			wc.sl = ibv_wc_read_sl(s.cqx);
			wc.dlid_path_bits = ibv_wc_read_dlid_path_bits(s.cqx);
			ibv_end_poll(s.cqx);
			return wc;
		}
		ibv_wc wc{};
		const int n = ibv_poll_cq(s.cq, 1, &wc);
		if (n == 1)
			return wc;
		if (n < 0)
			return std::nullopt;
	} while (std::chrono::steady_clock::now() < end);
	return std::nullopt;
}

bool post_recv(Side &r, std::uint64_t wr_id)
{
	std::memset(r.buf.data() + kRecvOff, kUntouched, kRecvLen);
	ibv_sge sge{r.addr(kRecvOff), static_cast<std::uint32_t>(kRecvLen), r.mr->lkey};
	ibv_recv_wr wr{};
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ibv_recv_wr *bad = nullptr;
	return ibv_post_recv(r.qp, &wr, &bad) == 0;
}

struct Send {
	std::size_t len = 0;
	std::optional<std::uint32_t> imm; // host order
	std::uint32_t qkey = kQkey;
	bool inline_data = false;
	std::uint64_t wr_id = 0;
};

void fill_payload(Side &s, std::size_t len, std::uint8_t seed)
{
	for (std::size_t i = 0; i < len; ++i)
		s.buf[kSendOff + i] = static_cast<std::uint8_t>(seed + i * 7);
}

// Post one datagram from s to r: A posts with ibv_post_send, B through
// the ibv_wr_* API. Returns the post's errno.
int post_send(Side &s, const Side &r, const Send &m)
{
	const auto op = m.imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	if (!s.cqx) {
		ibv_sge sge{s.addr(kSendOff), static_cast<std::uint32_t>(m.len), s.mr->lkey};
		ibv_send_wr wr{};
		wr.wr_id = m.wr_id;
		wr.opcode = op;
		wr.send_flags = IBV_SEND_SIGNALED | (m.inline_data ? IBV_SEND_INLINE : 0);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.imm_data = htonl(m.imm.value_or(0));
		wr.wr.ud.ah = s.ah;
		wr.wr.ud.remote_qpn = r.qp->qp_num;
		wr.wr.ud.remote_qkey = m.qkey;
		ibv_send_wr *bad = nullptr;
		return ibv_post_send(s.qp, &wr, &bad);
	}
	ibv_wr_start(s.qpx);
	s.qpx->wr_id = m.wr_id;
	s.qpx->wr_flags = IBV_SEND_SIGNALED;
	if (m.imm)
		ibv_wr_send_imm(s.qpx, htonl(*m.imm));
	else
		ibv_wr_send(s.qpx);
	ibv_wr_set_ud_addr(s.qpx, s.ah, r.qp->qp_num, m.qkey);
	if (m.inline_data)
		ibv_wr_set_inline_data(s.qpx, s.buf.data() + kSendOff, m.len);
	else
		ibv_wr_set_sge(s.qpx, s.mr->lkey, s.addr(kSendOff), static_cast<std::uint32_t>(m.len));
	return ibv_wr_complete(s.qpx);
}

bool is_v4(const ibv_gid &g)
{
	static constexpr std::array<std::uint8_t, 12> prefix{0, 0, 0, 0, 0, 0,
							     0, 0, 0, 0, 0xff, 0xff};
	return std::memcmp(g.raw, prefix.data(), prefix.size()) == 0;
}

std::uint16_t be16(const std::uint8_t *p)
{
	return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

// The GRH of a datagram of len payload bytes (imm: with an immediate)
// sent from s to r, as the packet carried it.
void check_grh(const std::uint8_t *grh, const Side &s, const Side &r, std::size_t len,
	       bool imm, const std::string &what)
{
	// UDP, BTH, DETH, [ImmDt], the payload padded to 4 bytes, ICRC.
	const std::size_t roce = 8 + 12 + 8 + (imm ? 4 : 0) + ((len + 3) & ~std::size_t{3}) + 4;
	if (is_v4(s.gid)) {
		static constexpr std::array<std::uint8_t, 20> zero{};
		check(std::memcmp(grh, zero.data(), zero.size()) == 0,
		      what + ": GRH starts with 20 zero bytes");
		const std::uint8_t *ip = grh + 20;
		check(ip[0] == 0x45, what + ": an IPv4 header without options follows");
		check(ip[9] == IPPROTO_UDP, what + ": IPv4 protocol UDP");
		check(be16(ip + 2) == 20 + roce,
		      what + ": IPv4 total length " + std::to_string(be16(ip + 2)) + ", want " +
			      std::to_string(20 + roce));
		check(std::memcmp(ip + 12, s.gid.raw + 12, 4) == 0, what + ": IPv4 source is the sender");
		check(std::memcmp(ip + 16, r.gid.raw + 12, 4) == 0,
		      what + ": IPv4 destination is the receiver");
		std::uint32_t sum = 0;
		for (int i = 0; i < 20; i += 2)
			sum += be16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		check(sum == 0xffff, what + ": IPv4 header checksum holds");
	} else {
		check(grh[0] >> 4 == 6, what + ": GRH is an IPv6 header");
		check(grh[6] == IPPROTO_UDP, what + ": IPv6 next header UDP");
		check(be16(grh + 4) == roce,
		      what + ": IPv6 payload length " + std::to_string(be16(grh + 4)) + ", want " +
			      std::to_string(roce));
		check(std::memcmp(grh + 8, s.gid.raw, 16) == 0, what + ": IPv6 source is the sender");
		check(std::memcmp(grh + 24, r.gid.raw, 16) == 0,
		      what + ": IPv6 destination is the receiver");
	}
}

// One datagram from s to r, every byte and field checked where it arrives.
void transfer(Side &s, Side &r, const Send &m, const std::string &what)
{
	const auto seed = static_cast<std::uint8_t>(m.len * 3 + 1);
	fill_payload(s, m.len, seed);
	if (!post_recv(r, 100 + m.wr_id)) {
		check(false, what + ": post_recv");
		return;
	}
	check_errno(post_send(s, r, m), 0, what + ": post send");
	const auto sc = poll_one(s, 5000);
	check(sc && sc->status == IBV_WC_SUCCESS && sc->opcode == IBV_WC_SEND &&
		      sc->wr_id == m.wr_id,
	      what + ": send completes" +
		      (sc ? " (status " + std::to_string(sc->status) + ")" : std::string(" (none)")));
	const auto rc = poll_one(r, 5000);
	check(rc.has_value(), what + ": receive completes");
	if (!rc)
		return;
	check(rc->status == IBV_WC_SUCCESS && rc->opcode == IBV_WC_RECV &&
		      rc->wr_id == 100 + m.wr_id,
	      what + ": receive status " + std::to_string(rc->status) + ", opcode " +
		      std::to_string(rc->opcode));
	check(rc->byte_len == kGrh + m.len,
	      what + ": byte_len " + std::to_string(rc->byte_len) + " counts the GRH");
	check(rc->qp_num == r.qp->qp_num, what + ": qp_num is the receiver's");
	check(rc->src_qp == s.qp->qp_num,
	      what + ": src_qp " + std::to_string(rc->src_qp) + " is the sender's " +
		      std::to_string(s.qp->qp_num));
	check(rc->wc_flags & IBV_WC_GRH, what + ": IBV_WC_GRH");
	check(!!(rc->wc_flags & IBV_WC_WITH_IMM) == m.imm.has_value(), what + ": IBV_WC_WITH_IMM");
	if (m.imm)
		check(ntohl(rc->imm_data) == *m.imm, what + ": immediate data");
	const std::uint8_t *got = r.buf.data() + kRecvOff;
	check_grh(got, s, r, m.len, m.imm.has_value(), what);
	bool same = true;
	for (std::size_t i = 0; i < m.len && same; ++i)
		same = got[kGrh + i] == static_cast<std::uint8_t>(seed + i * 7);
	check(same, what + ": payload arrived intact");
	check(got[kGrh + m.len] == kUntouched, what + ": nothing written past it");
}

// What the provider and the core refuse before anything reaches the wire.
void refusals(Side &a, Side &b)
{
	// An address on RoCE needs a GRH.
	ibv_ah_attr no_grh{};
	no_grh.port_num = 1;
	errno = 0;
	ibv_ah *ah = ibv_create_ah(a.pd, &no_grh);
	check(!ah, "an AH without a GRH is refused on RoCE");
	check_errno(ah ? 0 : errno, EINVAL, "an AH without a GRH");
	if (ah)
		ibv_destroy_ah(ah);

	// The one QP type we do not offer (XRC has its own test, xrc_verbs).
	{
		ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RAW_PACKET, a.cq, 1, 1);
		errno = 0;
		ibv_qp *qp = ibv_create_qp(a.pd, &ia);
		check_errno(qp ? 0 : errno, EOPNOTSUPP, "a raw packet QP refused");
		if (qp)
			ibv_destroy_qp(qp);
	}

	// A UD QP sends, nothing else, and each send needs an address.
	ibv_sge sge{a.addr(kSendOff), 8, a.mr->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = b.addr(0);
	wr.wr.rdma.rkey = b.mr->rkey;
	ibv_send_wr *bad = nullptr;
	check_errno(ibv_post_send(a.qp, &wr, &bad), EINVAL, "RDMA WRITE on a UD QP");
	check(bad == &wr, "bad_wr is the write");
	wr = {};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	wr.wr.ud.remote_qkey = kQkey;
	check_errno(ibv_post_send(a.qp, &wr, &bad), EINVAL, "a UD send without an AH");
	ibv_wr_start(b.qpx);
	ibv_wr_send(b.qpx);
	ibv_wr_set_sge(b.qpx, b.mr->lkey, b.addr(kSendOff), 8);
	check_errno(ibv_wr_complete(b.qpx), EINVAL, "an ibv_wr_* UD send without wr_set_ud_addr");
	check(!poll_one(a, 50) && !poll_one(b, 50), "nothing refused completes");
}

// Q_Keys, from s to r: a datagram whose Q_Key is not the receiver's is
// dropped, with no completion, and leaves the posted receive to the next
// one, which comes with the right Q_Key or (privileged) with its high bit
// set, which stands for the sending QP's own (both QPs have kQkey).
void qkeys(Side &s, Side &r, bool privileged)
{
	const std::string dir = std::string(s.name) + "->" + r.name + " ";
	fill_payload(s, 64, 9);
	if (!post_recv(r, 500)) {
		check(false, dir + "qkey: post_recv");
		return;
	}
	const Send bad_key{64, std::nullopt, kQkey ^ 0x1, false, 50};
	check_errno(post_send(s, r, bad_key), 0, dir + "qkey mismatch: post");
	const auto sc = poll_one(s, 5000);
	check(sc && sc->status == IBV_WC_SUCCESS,
	      dir + "qkey mismatch: the sender completes (UD does not know)");
	check(!poll_one(r, 500), dir + "qkey mismatch: no receive completion");
	const std::string how = privileged ? "the QP's own Q_Key (high bit)" : "the right Q_Key";
	const Send next{64, 0x4242, privileged ? 0x80000000 : kQkey, false, 51};
	check_errno(post_send(s, r, next), 0, dir + how + ": post");
	const auto sc2 = poll_one(s, 5000);
	check(sc2 && sc2->status == IBV_WC_SUCCESS, dir + how + ": send completes");
	const auto rc = poll_one(r, 5000);
	check(rc && rc->status == IBV_WC_SUCCESS && rc->wr_id == 500 &&
		      rc->byte_len == kGrh + 64 && (rc->wc_flags & IBV_WC_WITH_IMM) &&
		      ntohl(rc->imm_data) == 0x4242,
	      dir + how + ": arrives, in the receive the mismatch left");
}

} // namespace

int main(int argc, char **argv)
{
	const bool interop = argc == 6 && std::string(argv[5]) == "--interop";
	if (argc < 5 || (argc > 5 && !interop)) {
		std::fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B [--interop]\n", argv[0]);
		return 2;
	}
	Side a;
	Side b;
	check(setup(a, argv[1], argv[2], false), std::string("setup ") + argv[1]);
	check(setup(b, argv[3], argv[4], true), std::string("setup ") + argv[3]);
	if (vmtest::failures)
		return vmtest::summary();
	check(bring_up(a) && bring_up(b), "both UD QPs in RTS");
	ibv_ah_attr aa = ah_attr(a, b);
	ibv_ah_attr ba = ah_attr(b, a);
	a.ah = ibv_create_ah(a.pd, &aa);
	b.ah = ibv_create_ah(b.pd, &ba);
	check(a.ah && b.ah, "an AH each way");
	if (vmtest::failures)
		return vmtest::summary();
	std::printf("# A %s qpn %u, B %s qpn %u, MTU %zu\n", a.name, a.qp->qp_num, b.name,
		    b.qp->qp_num, a.mtu);

	std::uint64_t id = 1;
	for (Side *s : {&a, &b}) {
		Side &r = s == &a ? b : a;
		const std::string dir = std::string(s->name) + "->" + r.name;
		for (const std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{3},
					      std::size_t{64}, std::size_t{1000}, s->mtu}) {
			transfer(*s, r, {len, std::nullopt, kQkey, false, id++},
				 dir + " " + std::to_string(len) + " B");
			transfer(*s, r, {len, 0xa0000000U + static_cast<std::uint32_t>(len), kQkey,
					 false, id++},
				 dir + " " + std::to_string(len) + " B with immediate");
		}
		transfer(*s, r, {50, 7, kQkey, true, id++}, dir + " 50 B inline with immediate");
	}
	if (!interop)
		refusals(a, b);
	// rxe (6.12) sends a Q_Key with its high bit set as it is, not the
	// QP's: with --interop only softrdma sends one.
	qkeys(a, b, !interop);
	qkeys(b, a, true);
	return vmtest::summary();
}
