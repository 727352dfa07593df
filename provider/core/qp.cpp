// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "qp.hpp"

#include <cerrno>

namespace softrdma {

namespace {

// The first error of two steps.
int first_error(int a, int b) noexcept
{
	return a ? a : b;
}

} // namespace

// Sends may be posted in RTS, SQD, SQE and ERR only. An iWARP QP enters RTS
// in the kernel, with its connection, while the RDMA CM left it in INIT
// (initiator) or RTR (responder) here: the kernel holds what is posted
// before the connection is up and sends it then.
bool Qp::sq_postable() const noexcept
{
	const int state = state_.load();
	if (iwarp_)
		return state != IBV_QPS_RESET;
	return state != IBV_QPS_RESET && state != IBV_QPS_INIT && state != IBV_QPS_RTR;
}

// After publishing: kick, unless the kernel polls the queue, when
// publishing was enough. The one kick site of the send queue. The fence
// orders the publish before the read of the flag: the kernel does the
// mirror image (set the flag, full barrier, read the producer index), so
// one side always sees the other's write.
int Qp::kick_sq_if_asked() noexcept
{
	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (!sq_.need_kick())
		return 0;
	return kick(kick_.cmd_fd, kick_.qp_handle, KickQueue::send);
}

int Qp::post_send(ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	if (!sq_postable()) {
		*bad_wr = wr;
		return EINVAL;
	}
	int ret = 0;
	{
		const std::lock_guard guard(sq_lock_);
		ret = post_list(sq_, wr, bad_wr);
	}
	if (ret && *bad_wr == wr)
		return ret; // nothing new to kick for
	return first_error(ret, kick_sq_if_asked());
}

int Qp::bind_mw(ibv_mw &mw, const ibv_mw_bind &bind) noexcept
{
	if (!sq_postable())
		return EINVAL;
	const std::uint32_t rkey = ibv_inc_rkey(mw.rkey);
	softrdma_wr_hdr h = bind_mw_hdr(mw.rkey, rkey, bind.bind_info, true);
	h.wr_id = bind.wr_id;
	h.send_flags = bind.send_flags;
	int ret = 0;
	{
		const std::lock_guard guard(sq_lock_);
		sq_.start();
		sq_.begin(h);
		ret = sq_.complete();
	}
	if (ret)
		return ret;
	mw.rkey = rkey;
	return kick_sq_if_asked();
}

void Qp::wr_start() noexcept
{
	batch_ = std::unique_lock(sq_lock_);
	sq_.start();
}

int Qp::wr_complete() noexcept
{
	int ret = EINVAL;
	if (sq_postable()) {
		ret = sq_.complete();
	} else {
		sq_.abort();
	}
	batch_.unlock();
	return ret ? ret : kick_sq_if_asked();
}

void Qp::wr_abort() noexcept
{
	sq_.abort();
	batch_.unlock();
}

int Qp::post_recv(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	if (!has_rq_ || state_.load() == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	int ret = 0;
	{
		const std::lock_guard guard(rq_lock_);
		ret = post_list(rq_, wr, bad_wr);
	}
	if (ret && *bad_wr == wr)
		return ret;
	// Receives wait for packets; only a QP in error needs telling (the
	// kernel flags the ring when it moved the QP there on its own).
	std::atomic_thread_fence(std::memory_order_seq_cst);
	int kret = 0;
	if (state_.load() == IBV_QPS_ERR || rq_.need_kick())
		kret = kick(kick_.cmd_fd, kick_.qp_handle, KickQueue::recv);
	return first_error(ret, kret);
}

} // namespace softrdma
