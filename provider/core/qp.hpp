// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A QP's posting side: its send and receive queues, the state they may be
// posted in, and the kick.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <infiniband/verbs.h>

#include "kick.hpp"
#include "queue.hpp"

namespace softrdma {

// The one post loop: posts each request of a list in turn, as ibv_post_*
// do. Returns 0, or the errno of the first request that failed, with
// *bad_wr at it (those before it are posted).
template <typename Queue, typename Wr>
int post_list(Queue &q, Wr *wr, Wr **bad_wr) noexcept
{
	for (; wr; wr = wr->next) {
		if (const int err = q.post(*wr)) {
			*bad_wr = wr;
			return err;
		}
	}
	return 0;
}

// Where the kick of a QP goes: the uverbs command file and the QP's handle.
struct KickTarget {
	int cmd_fd;
	std::uint32_t qp_handle;
};

// Every way of posting to a QP: ibv_post_send, the ibv_wr_* batch,
// ibv_bind_mw and ibv_post_recv. Each checks the state, writes through its
// queue (a SendQueue batch on the send side), and kicks the kernel if the
// ring asks for it. The send queue takes one poster at a time, the receive
// queue another. Errors are errnos, as the verbs return them.
class Qp {
public:
	// iwarp: the QP's device is an iWARP one (see sq_postable()); such a
	// QP is made in INIT (an RNIC's Idle), as the kernel made it.
	// has_rq: receives may be posted (not to an XRC INI QP, which has
	// none: its peer's XRC SRQs take them).
	Qp(SendQueue sq, RecvQueue rq, KickTarget kick, bool iwarp, bool has_rq = true) noexcept
		: sq_(sq), rq_(rq), kick_(kick), iwarp_(iwarp), has_rq_(has_rq),
		  state_(iwarp ? IBV_QPS_INIT : IBV_QPS_RESET)
	{
	}

	// The state our modify_qp calls left the QP in; the kernel may move it
	// to ERR on its own (then it asks for a kick of new work).
	void set_state(ibv_qp_state s) noexcept { state_.store(s); }

	int post_send(ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
	int post_recv(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;
	// ibv_bind_mw (a type 1 window; libibverbs checked the type and the
	// PD): a bind WQE under a new 8-bit key, which mw takes once it is
	// posted. A failed bind completes in error and the caller puts the old
	// key back.
	int bind_mw(ibv_mw &mw, const ibv_mw_bind &bind) noexcept;

	// The ibv_wr_* batch: wr_start() takes the send queue until
	// wr_complete() (which publishes and kicks) or wr_abort().
	void wr_start() noexcept;
	void wr_begin(const softrdma_wr_hdr &wr) noexcept { sq_.begin(wr); }
	void wr_set_sges(std::span<const ibv_sge> sges) noexcept { sq_.set_sges(sges); }
	void wr_set_inline(std::span<const ibv_data_buf> bufs) noexcept { sq_.set_inline(bufs); }
	void wr_set_ud(const ibv_ah *ah, std::uint32_t remote_qpn, std::uint32_t remote_qkey) noexcept
	{
		sq_.set_ud(ah, remote_qpn, remote_qkey);
	}
	void wr_set_xrc_srqn(std::uint32_t remote_srqn) noexcept { sq_.set_xrc_srqn(remote_srqn); }
	int wr_complete() noexcept;
	void wr_abort() noexcept;

private:
	[[nodiscard]] bool sq_postable() const noexcept;
	int kick_sq_if_asked() noexcept;

	SendQueue sq_;
	RecvQueue rq_;
	KickTarget kick_;
	bool iwarp_;
	bool has_rq_;
	std::atomic<int> state_;
	std::mutex sq_lock_; // verbs let several threads post to one QP
	std::mutex rq_lock_;
	std::unique_lock<std::mutex> batch_; // sq_lock_, from wr_start()
};

} // namespace softrdma
