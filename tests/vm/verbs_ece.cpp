// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_ece DEV_A GID_A DEV_B GID_B [IWARP_DEV]
//
// Enhanced Connection Establishment on softroce RC QPs, without the CM
// (cm_ece.sh runs it through librdmacm):
// 1. ibv_query_ece of a new QP gives our vendor id (0x025352) and the
//    device's options, selective repeat (SR) among them; ibv_set_ece
//    refuses a foreign vendor id and a comp_mask with EINVAL (a vendor id
//    of 0 is libibverbs' EOPNOTSUPP).
// 2. Both ends set SR, then connect: each QP reports SR accepted, and the
//    kernel says so (rdma res: "retx sr"); a SEND arrives byte-exact.
//    Set again after RTS, a change (0) fails the next modify with EINVAL,
//    the same options pass.
// 3. Two QPs connected without ibv_set_ece run go-back-N ("retx gbn"),
//    and a QP that takes 0 reports 0.
// 4. A softiwarp QP (IWARP_DEV) has no ECE: EOPNOTSUPP both ways.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::check_errno;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

constexpr std::uint32_t kVendor = 0x025352;
constexpr std::uint32_t kSr = 1U << 0;
constexpr std::size_t kBuf = 16 * 1024;
constexpr std::uint32_t kMsg = 5000;	// five packets at MTU 1024
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

std::string hex(std::uint32_t v)
{
	char b[16];
	std::snprintf(b, sizeof(b), "0x%x", v);
	return b;
}

// What ibv_query_ece says of qp: its return value, vendor id and options.
struct Ece {
	int ret;
	std::uint32_t vendor;
	std::uint32_t options;
};

Ece query(ibv_qp *qp)
{
	ibv_ece e{};
	const int ret = ibv_query_ece(qp, &e);
	return {ret, e.vendor_id, e.options};
}

int set(ibv_qp *qp, std::uint32_t vendor, std::uint32_t options, std::uint32_t comp_mask = 0)
{
	ibv_ece e{};
	e.vendor_id = vendor;
	e.options = options;
	e.comp_mask = comp_mask;
	return ibv_set_ece(qp, &e);
}

// The driver's "retx" of a QP, as `rdma -dd res show qp` prints it.
std::string retx(const char *dev, std::uint32_t qpn)
{
	const std::string cmd = std::string("rdma -dd res show qp link ") + dev + "/1 lqpn " +
				std::to_string(qpn) + " 2>&1";
	std::string out;
	if (FILE *p = popen(cmd.c_str(), "r")) {
		char line[512];
		while (std::fgets(line, sizeof(line), p))
			out += line;
		pclose(p);
	}
	std::printf("# %s", out.c_str());
	const auto at = out.find("retx ");
	if (at == std::string::npos)
		return "(none)";
	return out.substr(at + 5, out.find_first_of(" \n", at + 5) - at - 5);
}

void fill(std::uint8_t *p, std::size_t len, std::uint8_t seed)
{
	for (std::size_t i = 0; i < len; ++i)
		p[i] = static_cast<std::uint8_t>(seed + i * 13);
}

// A SEND of kMsg bytes from a to b arrives byte-exact.
bool send_check(RcSide &a, RcSide &b, std::uint8_t seed)
{
	fill(a.buf.data(), kMsg, seed);
	std::memset(b.buf.data(), 0, kMsg);
	ibv_sge rs{b.addr(0), kMsg, b.mr->lkey};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	rwr.wr_id = 2;
	rwr.sg_list = &rs;
	rwr.num_sge = 1;
	ibv_sge ss{a.addr(0), kMsg, a.mr->lkey};
	ibv_send_wr swr{};
	ibv_send_wr *sbad = nullptr;
	swr.wr_id = 1;
	swr.opcode = IBV_WR_SEND;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_recv(b.qp, &rwr, &rbad) || ibv_post_send(a.qp, &swr, &sbad))
		return false;
	ibv_wc wa{}, wb{};
	const bool done = wait_wc(a.cq, wa) && wait_wc(b.cq, wb);
	return done && wa.status == IBV_WC_SUCCESS && wb.status == IBV_WC_SUCCESS &&
	       wb.byte_len == kMsg && std::memcmp(a.buf.data(), b.buf.data(), kMsg) == 0;
}

void new_qp(const char *dev_a, const char *gid_a, const char *dev_b, const char *gid_b,
	    RcSide &a, RcSide &b)
{
	check(a.setup(dev_a, gid_a, kBuf, kAccess) && b.setup(dev_b, gid_b, kBuf, kAccess),
	      std::string("open ") + dev_a + " and " + dev_b + ", an RC QP on each");
}

void first_look(RcSide &a)
{
	const Ece e = query(a.qp);
	check(e.ret == 0 && e.vendor == kVendor && (e.options & kSr),
	      "query_ece of a new QP: vendor " + hex(e.vendor) + ", options " + hex(e.options) +
		      " (ret " + std::to_string(e.ret) + ", want vendor 0x25352 with SR)");
	check_errno(set(a.qp, 0x15b3, kSr), EINVAL, "set_ece with mlx5's vendor id");
	check_errno(set(a.qp, kVendor, kSr, 1), EINVAL, "set_ece with comp_mask 1");
	check_errno(set(a.qp, 0, kSr), EOPNOTSUPP, "set_ece with vendor 0 (libibverbs)");
	const Ece again = query(a.qp);
	check(again.ret == 0 && again.options == e.options,
	      "refused sets change nothing: options " + hex(again.options));
}

void both_sr(const char *dev_a, const char *gid_a, const char *dev_b, const char *gid_b)
{
	RcSide a, b;
	new_qp(dev_a, gid_a, dev_b, gid_b, a, b);
	if (!a.qp || !b.qp)
		return;
	first_look(a);
	// Unknown bits beside SR are dropped: the device's only.
	check_errno(set(a.qp, kVendor, kSr | 0x0ff00000), 0, "A: set_ece SR and unknown bits");
	check_errno(set(b.qp, kVendor, kSr), 0, "B: set_ece SR");
	check(query(a.qp).options == kSr, "A: query_ece before modify gives the set options (SR)");
	check(a.connect(b, 100, 200, kAccess) && b.connect(a, 200, 100, kAccess),
	      "connect A and B (RESET to RTS)");
	const Ece ea = query(a.qp), eb = query(b.qp);
	check(ea.ret == 0 && ea.vendor == kVendor && ea.options == kSr,
	      "A: accepted " + hex(ea.options) + " (want 0x1)");
	check(eb.ret == 0 && eb.vendor == kVendor && eb.options == kSr,
	      "B: accepted " + hex(eb.options) + " (want 0x1)");
	check(retx(dev_a, a.qp->qp_num) == "sr", "A: the kernel says retx sr");
	check(retx(dev_b, b.qp->qp_num) == "sr", "B: the kernel says retx sr");
	check(send_check(a, b, 7), "SEND of 5000 B A to B byte-exact");
	check(send_check(b, a, 9), "SEND of 5000 B B to A byte-exact");

	// After RTS the options stay: a change fails the modify, no change passes.
	ibv_qp_attr attr{};
	attr.min_rnr_timer = 2;
	check_errno(set(a.qp, kVendor, 0), 0, "A in RTS: set_ece 0 (waits for a modify)");
	check_errno(ibv_modify_qp(a.qp, &attr, IBV_QP_MIN_RNR_TIMER), EINVAL,
		    "A: a modify in RTS that would change them");
	check(retx(dev_a, a.qp->qp_num) == "sr", "A: still retx sr");
	check_errno(set(a.qp, kVendor, kSr), 0, "A: set_ece SR again");
	check_errno(ibv_modify_qp(a.qp, &attr, IBV_QP_MIN_RNR_TIMER), 0,
		    "A: a modify in RTS with the same options");
	check(query(a.qp).options == kSr, "A: accepted SR");
	check(send_check(a, b, 11), "SEND A to B byte-exact after it");

	// RESET forgets them: the device's options again, and go-back-N.
	attr = {};
	attr.qp_state = IBV_QPS_RESET;
	check_errno(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0, "A to RESET");
	check(retx(dev_a, a.qp->qp_num) == "gbn", "A in RESET: retx gbn");
	const Ece er = query(a.qp);
	check(er.ret == 0 && (er.options & kSr), "A in RESET: query_ece gives the device's " +
							 hex(er.options));
}

void no_set(const char *dev_a, const char *gid_a, const char *dev_b, const char *gid_b)
{
	RcSide a, b;
	new_qp(dev_a, gid_a, dev_b, gid_b, a, b);
	if (!a.qp || !b.qp)
		return;
	check_errno(set(b.qp, kVendor, 0), 0, "B: set_ece 0 (a peer without ECE)");
	check(a.connect(b, 300, 400, kAccess) && b.connect(a, 400, 300, kAccess),
	      "connect A (no set_ece) and B");
	check(retx(dev_a, a.qp->qp_num) == "gbn", "A, never set: retx gbn");
	check(retx(dev_b, b.qp->qp_num) == "gbn", "B, set 0: retx gbn");
	const Ece eb = query(b.qp);
	check(eb.ret == 0 && eb.vendor == kVendor && eb.options == 0,
	      "B: accepted " + hex(eb.options) + " (want 0)");
	check(send_check(a, b, 13), "SEND of 5000 B A to B byte-exact");
}

void iwarp(const char *dev)
{
	ibv_context *ctx = vmtest::open_by_name(dev);
	ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : nullptr;
	ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, nullptr, nullptr, 0) : nullptr;
	ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, cq, 4, 1);
	ibv_qp *qp = pd && cq ? ibv_create_qp(pd, &ia) : nullptr;
	check(qp != nullptr, std::string("an RC QP on softiwarp ") + dev);
	if (qp) {
		check_errno(query(qp).ret, EOPNOTSUPP, "softiwarp: query_ece");
		check_errno(set(qp, kVendor, kSr), EOPNOTSUPP, "softiwarp: set_ece");
		ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B [IWARP_DEV]\n", argv[0]);
		return 2;
	}
	both_sr(argv[1], argv[2], argv[3], argv[4]);
	no_set(argv[1], argv[2], argv[3], argv[4]);
	if (argc > 5)
		iwarp(argv[5]);
	return vmtest::summary();
}
