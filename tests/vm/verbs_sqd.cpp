// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_sqd DEV_A GID_A DEV_B GID_B
//
// Send queue drain: RTS -> SQD lets the messages in progress finish (even
// one a full window had stopped halfway), starts no new one, reports
// IBV_EVENT_SQ_DRAINED; SQD -> RTS sends what waited.
#include <infiniband/verbs.h>

#include <poll.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "rc_pair.hpp"

using vmtest::check;
using vmtest::RcSide;
using vmtest::wait_wc;

namespace {

constexpr std::size_t kBuf = 1024 * 1024;
// The first WRITE is larger than the requester's 256-packet window, so
// that with the ACKs late it is stopped halfway; the others are 64 KiB.
constexpr std::size_t kFirst = 512 * 1024;
constexpr std::size_t kMsg = 64 * 1024;
constexpr int kBurst = 8;

// Where WRITE i (0..kBurst; kBurst: the one posted in SQD) starts.
constexpr std::size_t offset(int i)
{
	return i == 0 ? 0 : kFirst + kMsg * static_cast<std::size_t>(i - 1);
}
static_assert(offset(kBurst + 1) == kBuf);
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

bool write(RcSide &a, const RcSide &b, std::uint64_t id, int i)
{
	const std::size_t off = offset(i);
	ibv_sge sge{a.addr(off), static_cast<std::uint32_t>(offset(i + 1) - off), a.mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = id;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = b.addr(off);
	wr.wr.rdma.rkey = b.mr->rkey;
	return ibv_post_send(a.qp, &wr, &bad) == 0;
}

bool async_event(ibv_context *ctx, ibv_async_event &ev, int ms)
{
	pollfd p{ctx->async_fd, POLLIN, 0};
	if (poll(&p, 1, ms) != 1 || ibv_get_async_event(ctx, &ev))
		return false;
	ibv_ack_async_event(&ev);
	return true;
}

ibv_qp_state state_of(ibv_qp *qp, bool *draining = nullptr)
{
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	if (ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi))
		return IBV_QPS_UNKNOWN;
	if (draining)
		*draining = qa.sq_draining;
	return qa.qp_state;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: verbs_sqd DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	RcSide a;
	RcSide b;
	check(a.setup(argv[1], argv[2], kBuf, kAccess) && b.setup(argv[3], argv[4], kBuf, kAccess) &&
		      a.connect(b, 1, 2, kAccess) && b.connect(a, 2, 1, kAccess),
	      "QPs connected");
	if (vmtest::failures)
		return vmtest::summary();
	for (std::size_t i = 0; i < kBuf; ++i)
		a.buf[i] = static_cast<std::uint8_t>(i * 13 + (i >> 9));

	bool ok = true;
	for (int i = 0; i < kBurst; ++i)
		ok &= write(a, b, i, i);
	check(ok, std::to_string(kBurst) + " WRITEs posted (512 KiB, then 64 KiB each)");

	ibv_qp_attr qa{};
	qa.qp_state = IBV_QPS_SQD;
	qa.en_sqd_async_notify = 1;
	check(ibv_modify_qp(a.qp, &qa, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) == 0,
	      "RTS -> SQD with the drained event asked for");
	check(state_of(a.qp) == IBV_QPS_SQD, "query_qp says SQD");
	// Posted while draining: waits.
	check(write(a, b, 100, kBurst), "a WRITE posted in SQD is accepted");

	ibv_async_event ev{};
	check(async_event(a.ctx, ev, 20000) && ev.event_type == IBV_EVENT_SQ_DRAINED &&
		      ev.element.qp == a.qp,
	      "IBV_EVENT_SQ_DRAINED arrives");
	bool draining = true;
	check(state_of(a.qp, &draining) == IBV_QPS_SQD && !draining,
	      "query_qp: SQD, no longer draining");
	// The messages in progress at the modify have completed, in order; the
	// ones the SQ had not started yet wait (IBTA 10.3.1, SQ drain). How many
	// had started depends on when the ACKs came back.
	int done = 0;
	ibv_wc wc{};
	while (done < kBurst && ibv_poll_cq(a.cq, 1, &wc) == 1 &&
	       wc.status == IBV_WC_SUCCESS && wc.wr_id == static_cast<std::uint64_t>(done))
		++done;
	check(done >= 1, "the WRITEs in progress completed, in order (" + std::to_string(done) +
				 " of " + std::to_string(kBurst) + ")");
	check(std::memcmp(a.buf.data(), b.buf.data(), offset(done)) == 0,
	      "their bytes arrived");
	usleep(100 * 1000);
	check(ibv_poll_cq(a.cq, 1, &wc) == 0, "nothing else completes in SQD");
	bool untouched = true;
	for (std::size_t i = offset(done); i < kBuf; ++i)
		untouched &= b.buf[i] == 0;
	check(untouched, "... nor touches remote memory");

	qa = {};
	qa.qp_state = IBV_QPS_RTS;
	check(ibv_modify_qp(a.qp, &qa, IBV_QP_STATE) == 0, "SQD -> RTS");
	bool in_order = true;
	for (int i = done; i <= kBurst && in_order; ++i) {
		const auto want = static_cast<std::uint64_t>(i < kBurst ? i : 100);
		in_order = wait_wc(a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == want;
	}
	check(in_order, "the waiting WRITEs complete, in order, the one posted in SQD last");
	check(std::memcmp(a.buf.data(), b.buf.data(), kBuf) == 0,
	      "all their bytes arrived");
	return vmtest::summary();
}
