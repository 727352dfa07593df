// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_srq DEV_A GID_A DEV_B GID_B
//
// A shared receive queue on B serving two QPs connected to two QPs on A:
// every message lands byte-exact in the SRQ's buffers in posting order,
// and the limit event fires once, when fewer WQEs than the limit are left.
#include <infiniband/verbs.h>

#include <poll.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

constexpr std::size_t kBuf = 64 * 1024;
constexpr std::size_t kMsg = 1500;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

bool post_srq(RcSide &b, std::uint64_t id, std::size_t off)
{
	ibv_sge sge{b.addr(off), static_cast<std::uint32_t>(kMsg), b.mr->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_srq_recv(b.srq, &wr, &bad) == 0;
}

bool send(RcSide &a, ibv_qp *qp, std::uint64_t id, std::size_t off)
{
	ibv_sge sge{a.addr(off), static_cast<std::uint32_t>(kMsg), a.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(qp, &wr, &bad) == 0;
}

// The next async event of ctx within ms milliseconds.
bool async_event(ibv_context *ctx, ibv_async_event &ev, int ms)
{
	pollfd p{ctx->async_fd, POLLIN, 0};
	if (poll(&p, 1, ms) != 1)
		return false;
	if (ibv_get_async_event(ctx, &ev))
		return false;
	ibv_ack_async_event(&ev);
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_srq DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	// a1/a2 on A talk to b1/b2 on B; b1 owns the SRQ, b2's QP is attached
	// to it by hand below.
	RcSide a1;
	RcSide a2;
	RcSide b1;
	check(a1.setup(argv[1], argv[2], kBuf, kAccess) && a2.setup(argv[1], argv[2], kBuf, kAccess) &&
		      b1.setup(argv[3], argv[4], kBuf, kAccess, 16),
	      "SRQ of 16 WRs created; QPs set up");
	if (vmtest::failures)
		return vmtest::summary();
	ibv_srq_attr sa{};
	check(ibv_query_srq(b1.srq, &sa) == 0 && sa.max_wr >= 16 && sa.srq_limit == 0,
	      "query_srq: max_wr >= 16, limit 0 (unarmed)");

	// A second QP on B's PD and CQ, taking from the same SRQ.
	ibv_qp_init_attr ia{};
	ia.send_cq = b1.cq;
	ia.recv_cq = b1.cq;
	ia.srq = b1.srq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	ibv_qp *b2qp = ibv_create_qp(b1.pd, &ia);
	check(b2qp != nullptr, "a second QP attached to the SRQ");
	if (!b2qp)
		return vmtest::summary();
	RcSide b2view; // b2's connection parameters, b1's resources
	b2view.qp = b2qp;
	b2view.gid = b1.gid;
	b2view.gid_index = b1.gid_index;
	check(a1.connect(b1, 10, 20, kAccess) && b1.connect(a1, 20, 10, kAccess) &&
		      a2.connect(b2view, 30, 40, kAccess) && b2view.connect(a2, 40, 30, kAccess),
	      "both QP pairs connected");

	bool ok = true;
	for (int i = 0; i < 8; ++i)
		ok &= post_srq(b1, 100 + i, static_cast<std::size_t>(i) * kMsg);
	check(ok, "post 8 receives to the SRQ");
	sa = {};
	sa.srq_limit = 4;
	check(ibv_modify_srq(b1.srq, &sa, IBV_SRQ_LIMIT) == 0, "arm the SRQ limit at 4");
	sa = {};
	check(ibv_query_srq(b1.srq, &sa) == 0 && sa.srq_limit == 4, "query_srq shows limit 4");

	// Three messages: 5 WQEs left, no event yet.
	for (int i = 0; i < 3; ++i) {
		RcSide &a = i % 2 ? a2 : a1;
		std::memset(a.buf.data() + kMsg * i, 0x40 + i, kMsg);
		check(send(a, a.qp, 200 + i, kMsg * i), "send message " + std::to_string(i));
		ibv_wc wc{};
		check(wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS, "its send completes");
		check(wait_wc(b1.cq, wc) && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == static_cast<std::uint64_t>(100 + i) &&
			      wc.byte_len == kMsg && wc.qp_num == (i % 2 ? b2qp : b1.qp)->qp_num,
		      "it takes the SRQ's next WQE, on the QP it came to");
		check(b1.buf[kMsg * i] == 0x40 + i && b1.buf[kMsg * i + kMsg - 1] == 0x40 + i,
		      "its bytes arrived");
	}
	ibv_async_event ev{};
	check(!async_event(b1.ctx, ev, 200), "no limit event while 5 WQEs are left");

	// The fourth leaves 4, the fifth 3 (< 4): the event, once.
	for (int i = 3; i < 5; ++i) {
		check(send(a1, a1.qp, 200 + i, 0), "send message " + std::to_string(i));
		ibv_wc wc{};
		check(wait_wc(a1.cq, wc) && wc.status == IBV_WC_SUCCESS &&
			      wait_wc(b1.cq, wc) && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == static_cast<std::uint64_t>(100 + i),
		      "message " + std::to_string(i) + " received");
	}
	check(async_event(b1.ctx, ev, 5000) && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		      ev.element.srq == b1.srq,
	      "IBV_EVENT_SRQ_LIMIT_REACHED for this SRQ");
	sa = {};
	check(ibv_query_srq(b1.srq, &sa) == 0 && sa.srq_limit == 0, "the limit is disarmed");
	check(!async_event(b1.ctx, ev, 200), "and fires only once");

	sa = {};
	sa.srq_limit = 100000;
	check(ibv_modify_srq(b1.srq, &sa, IBV_SRQ_LIMIT) == EINVAL,
	      "a limit above the SRQ's size is refused with EINVAL");
	check(ibv_destroy_srq(b1.srq) == EBUSY, "an SRQ in use cannot be destroyed (EBUSY)");
	b2view.qp = nullptr;
	ibv_destroy_qp(b2qp);
	return vmtest::summary();
}
