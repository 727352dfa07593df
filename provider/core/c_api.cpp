// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The C entry points of the core (softrdma_core.h).
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <new>

#include "mapping.hpp"
#include "queue.hpp"
#include "ring.hpp"
#include "softrdma_core.h"

struct softrdma_cq_ring {
	softrdma_cq_ring(softrdma::Mapping m, softrdma::RingView v) noexcept
		: map(std::move(m)), cq(v)
	{
	}
	softrdma::Mapping map;
	softrdma::CqRing cq;
	std::mutex lock; // verbs lets several threads poll one CQ
};

extern "C" struct softrdma_cq_ring *softrdma_cq_ring_open(int cmd_fd, uint64_t offset,
							  uint64_t size,
							  uint32_t num_slots)
{
	softrdma::Mapping map(cmd_fd, offset, size);
	if (!map.valid())
		return nullptr; // errno from mmap
	auto view = softrdma::RingView::make(map.bytes(), num_slots, SOFTRDMA_CQE_SIZE);
	if (!view) {
		errno = EPROTO;
		return nullptr;
	}
	auto *cq = new (std::nothrow) softrdma_cq_ring(std::move(map), *view);
	if (!cq)
		errno = ENOMEM;
	return cq;
}

extern "C" void softrdma_cq_ring_close(struct softrdma_cq_ring *cq)
{
	delete cq;
}

extern "C" int softrdma_cq_ring_poll(struct softrdma_cq_ring *cq, int n, struct ibv_wc *wc)
{
	if (n < 0)
		return -EINVAL;
	const std::lock_guard guard(cq->lock);
	return cq->cq.poll({wc, static_cast<std::size_t>(n)});
}

// The lock taken here is released by softrdma_cq_ring_end_poll.
extern "C" int softrdma_cq_ring_start_poll(struct softrdma_cq_ring *cq, const struct ibv_wc **wc)
{
	cq->lock.lock(); // NOLINT(cppcoreguidelines-*)
	const int ret = cq->cq.start_poll();
	if (ret) {
		cq->lock.unlock();
		return ret;
	}
	*wc = &cq->cq.current();
	return 0;
}

extern "C" int softrdma_cq_ring_next_poll(struct softrdma_cq_ring *cq, const struct ibv_wc **wc)
{
	const int ret = cq->cq.next_poll();
	if (!ret)
		*wc = &cq->cq.current();
	return ret;
}

extern "C" void softrdma_cq_ring_end_poll(struct softrdma_cq_ring *cq)
{
	cq->cq.end_poll();
	cq->lock.unlock();
}

struct softrdma_qp_rings {
	softrdma_qp_rings(softrdma::Mapping sqm, softrdma::Mapping rqm, softrdma::SendQueue s,
			  softrdma::RecvQueue r) noexcept
		: sq_map(std::move(sqm)), rq_map(std::move(rqm)), sq(s), rq(r)
	{
	}
	softrdma::Mapping sq_map;
	softrdma::Mapping rq_map;
	softrdma::SendQueue sq;
	softrdma::RecvQueue rq;
	std::mutex sq_lock; // verbs lets several threads post to one QP
	std::mutex rq_lock;
};

extern "C" struct softrdma_qp_rings *
softrdma_qp_rings_open(int cmd_fd, const struct softrdma_create_qp_resp *resp)
{
	softrdma::Mapping sqm(cmd_fd, resp->sq_mmap_offset, resp->sq_mmap_size);
	softrdma::Mapping rqm(cmd_fd, resp->rq_mmap_offset, resp->rq_mmap_size);
	if (!sqm.valid() || !rqm.valid())
		return nullptr; // errno from mmap
	auto sq = softrdma::RingView::make(sqm.bytes(), resp->sq_slots, resp->sq_slot_size);
	auto rq = softrdma::RingView::make(rqm.bytes(), resp->rq_slots, resp->rq_slot_size);
	const std::uint32_t sq_room = resp->sq_slot_size - SOFTRDMA_SEND_WQE_HDR_SIZE;
	const std::uint32_t rq_room = resp->rq_slot_size - SOFTRDMA_RECV_WQE_HDR_SIZE;
	if (!sq || !rq || resp->sq_slot_size < SOFTRDMA_SEND_WQE_HDR_SIZE ||
	    resp->rq_slot_size < SOFTRDMA_RECV_WQE_HDR_SIZE || resp->max_inline > sq_room) {
		errno = EPROTO;
		return nullptr;
	}
	auto *r = new (std::nothrow) softrdma_qp_rings(
		std::move(sqm), std::move(rqm),
		softrdma::SendQueue(*sq, sq_room / sizeof(softrdma_sge), resp->max_inline),
		softrdma::RecvQueue(*rq, rq_room / sizeof(softrdma_sge)));
	if (!r)
		errno = ENOMEM;
	return r;
}

extern "C" void softrdma_qp_rings_close(struct softrdma_qp_rings *rings)
{
	delete rings;
}

extern "C" int softrdma_qp_post_send(struct softrdma_qp_rings *rings, struct ibv_send_wr *wr,
				     struct ibv_send_wr **bad_wr)
{
	const std::lock_guard guard(rings->sq_lock);
	for (; wr; wr = wr->next) {
		const int ret = rings->sq.post(*wr);
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
	}
	return 0;
}

extern "C" int softrdma_qp_post_recv(struct softrdma_qp_rings *rings, struct ibv_recv_wr *wr,
				     struct ibv_recv_wr **bad_wr)
{
	const std::lock_guard guard(rings->rq_lock);
	for (; wr; wr = wr->next) {
		const int ret = rings->rq.post(*wr);
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
	}
	return 0;
}

extern "C" void softrdma_bind_mw_hdr(struct softrdma_wr_hdr *h, uint32_t mw_rkey,
				     uint32_t new_rkey, const struct ibv_mw_bind_info *info,
				     bool type1)
{
	const softrdma_wr_hdr b = softrdma::bind_mw_hdr(mw_rkey, new_rkey, *info, type1);
	h->opcode = b.opcode;
	h->wqe_flags = b.wqe_flags;
	h->bind_mw = b.bind_mw;
}

// The lock taken here is released by softrdma_qp_wr_complete or _abort.
extern "C" void softrdma_qp_wr_start(struct softrdma_qp_rings *rings)
{
	rings->sq_lock.lock(); // NOLINT(cppcoreguidelines-*)
	rings->sq.start();
}

extern "C" void softrdma_qp_wr_begin(struct softrdma_qp_rings *rings,
				     const struct softrdma_wr_hdr *wr)
{
	rings->sq.begin(*wr);
}

extern "C" void softrdma_qp_wr_set_sge_list(struct softrdma_qp_rings *rings, size_t n,
					    const struct ibv_sge *sges)
{
	rings->sq.set_sges({sges, n});
}

extern "C" void softrdma_qp_wr_set_inline_list(struct softrdma_qp_rings *rings, size_t n,
					       const struct ibv_data_buf *bufs)
{
	rings->sq.set_inline({bufs, n});
}

extern "C" int softrdma_qp_wr_complete(struct softrdma_qp_rings *rings)
{
	const int ret = rings->sq.complete();
	rings->sq_lock.unlock();
	return ret;
}

extern "C" void softrdma_qp_wr_abort(struct softrdma_qp_rings *rings)
{
	rings->sq.abort();
	rings->sq_lock.unlock();
}

extern "C" bool softrdma_qp_sq_need_wakeup(struct softrdma_qp_rings *rings)
{
	// Publish, full barrier, read the flag: the kernel does the mirror
	// image (set the flag, full barrier, read the producer index), so one
	// side always sees the other's write.
	std::atomic_thread_fence(std::memory_order_seq_cst);
	return rings->sq.need_wakeup();
}

extern "C" bool softrdma_qp_rq_need_wakeup(struct softrdma_qp_rings *rings)
{
	std::atomic_thread_fence(std::memory_order_seq_cst);
	return rings->rq.need_wakeup();
}

struct softrdma_srq_ring {
	softrdma_srq_ring(softrdma::Mapping m, softrdma::RecvQueue q) noexcept
		: map(std::move(m)), rq(q)
	{
	}
	softrdma::Mapping map;
	softrdma::RecvQueue rq;
	std::mutex lock; // verbs lets several threads post to one SRQ
};

extern "C" struct softrdma_srq_ring *
softrdma_srq_ring_open(int cmd_fd, const struct softrdma_create_srq_resp *resp)
{
	softrdma::Mapping map(cmd_fd, resp->mmap_offset, resp->mmap_size);
	if (!map.valid())
		return nullptr; // errno from mmap
	auto view = softrdma::RingView::make(map.bytes(), resp->num_slots, resp->slot_size);
	if (!view || resp->slot_size < SOFTRDMA_RECV_WQE_HDR_SIZE) {
		errno = EPROTO;
		return nullptr;
	}
	const std::uint32_t room = resp->slot_size - SOFTRDMA_RECV_WQE_HDR_SIZE;
	auto *srq = new (std::nothrow) softrdma_srq_ring(
		std::move(map), softrdma::RecvQueue(*view, room / sizeof(softrdma_sge)));
	if (!srq)
		errno = ENOMEM;
	return srq;
}

extern "C" void softrdma_srq_ring_close(struct softrdma_srq_ring *srq)
{
	delete srq;
}

extern "C" int softrdma_srq_post_recv(struct softrdma_srq_ring *srq, struct ibv_recv_wr *wr,
				      struct ibv_recv_wr **bad_wr)
{
	const std::lock_guard guard(srq->lock);
	for (; wr; wr = wr->next) {
		const int ret = srq->rq.post(*wr);
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
	}
	return 0;
}
