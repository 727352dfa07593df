// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The C entry points of the core (softrdma_core.h): each maps what the
// kernel described and hands the rest to the C++ classes.
#include <cerrno>
#include <memory>
#include <new>

#include "handles.hpp"

namespace {

// The object, or NULL with errno ENOMEM.
template <typename T, typename... Args>
T *make(Args &&...args) noexcept
{
	auto *p = new (std::nothrow) T(std::forward<Args>(args)...);
	if (!p)
		errno = ENOMEM;
	return p;
}

} // namespace

extern "C" struct softrdma_cq *softrdma_cq_open(int cmd_fd,
						const struct softrdma_create_cq_resp *resp)
{
	softrdma::Mapping map(cmd_fd, resp->mmap_offset, resp->mmap_size);
	if (!map.valid())
		return nullptr; // errno from mmap
	auto view = softrdma::RingView::make(map.bytes(), resp->num_slots, SOFTRDMA_CQE_SIZE);
	if (!view) {
		errno = EPROTO;
		return nullptr;
	}
	return make<softrdma_cq>(std::move(map), *view,
				 (resp->flags & SOFTRDMA_CQ_ARM_MAPPED) != 0);
}

extern "C" bool softrdma_cq_arm(struct softrdma_cq *cq, int solicited_only)
{
	if (!cq->arm_mapped)
		return false;
	cq->cq.arm(solicited_only != 0);
	return true;
}

extern "C" void softrdma_cq_close(struct softrdma_cq *cq)
{
	delete cq;
}

extern "C" int softrdma_cq_poll(struct softrdma_cq *cq, int n, struct ibv_wc *wc)
{
	if (n < 0)
		return -EINVAL;
	const std::lock_guard guard(cq->lock);
	return cq->cq.poll({wc, static_cast<std::size_t>(n)});
}

extern "C" void softrdma_cq_purge(struct softrdma_cq *cq, std::uint32_t qp_num)
{
	const std::lock_guard guard(cq->lock);
	// -EIO: the kernel wrote a producer index that cannot be; polling
	// reports that, nothing to add here.
	(void)cq->cq.purge(qp_num);
}

extern "C" int softrdma_qp_type_check(enum ibv_qp_type type, bool iwarp)
{
	switch (type) {
	case IBV_QPT_RC:
		return 0;
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		// iWARP has connections only, and no XRC (IBTA's Annex A14)
		return iwarp ? EOPNOTSUPP : 0;
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_DRIVER:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
}

extern "C" struct softrdma_qp *softrdma_qp_open(struct ibv_qp *ibqp,
						const struct softrdma_create_qp_resp *resp)
{
	const int cmd_fd = ibqp->context->cmd_fd;
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
	const bool iwarp = ibqp->context->device->transport_type == IBV_TRANSPORT_IWARP;
	return make<softrdma_qp>(
		std::move(sqm), std::move(rqm),
		softrdma::SendQueue(*sq, sq_room / sizeof(softrdma_sge), resp->max_inline,
				    ibqp->qp_type),
		softrdma::RecvQueue(*rq, rq_room / sizeof(softrdma_sge)),
		softrdma::KickTarget{cmd_fd, ibqp->handle}, iwarp,
		ibqp->qp_type != IBV_QPT_XRC_SEND);
}

extern "C" void softrdma_qp_close(struct softrdma_qp *qp)
{
	delete qp;
}

extern "C" void softrdma_qp_set_state(struct softrdma_qp *qp, enum ibv_qp_state state)
{
	qp->qp.set_state(state);
}

extern "C" int softrdma_qp_post_send(struct softrdma_qp *qp, struct ibv_send_wr *wr,
				     struct ibv_send_wr **bad_wr)
{
	return qp->qp.post_send(wr, bad_wr);
}

extern "C" int softrdma_qp_post_recv(struct softrdma_qp *qp, struct ibv_recv_wr *wr,
				     struct ibv_recv_wr **bad_wr)
{
	return qp->qp.post_recv(wr, bad_wr);
}

extern "C" int softrdma_qp_bind_mw(struct softrdma_qp *qp, struct ibv_mw *mw,
				   const struct ibv_mw_bind *bind)
{
	return qp->qp.bind_mw(*mw, *bind);
}

extern "C" struct softrdma_srq *softrdma_srq_open(int cmd_fd,
						  const struct softrdma_create_srq_resp *resp)
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
	return make<softrdma_srq>(std::move(map),
				  softrdma::RecvQueue(*view, room / sizeof(softrdma_sge)));
}

extern "C" int softrdma_srq_resize(struct softrdma_srq *srq, int cmd_fd,
				   int (*cmd)(void *arg, struct softrdma_create_srq_resp *resp),
				   void *arg)
{
	const std::lock_guard guard(srq->lock);
	softrdma_create_srq_resp resp{};
	if (const int ret = cmd(arg, &resp))
		return ret;
	// The kernel takes only from the new ring now: map it, or the SRQ
	// cannot be posted to again.
	softrdma::Mapping map(cmd_fd, resp.mmap_offset, resp.mmap_size);
	if (!map.valid())
		return errno;
	auto view = softrdma::RingView::make(map.bytes(), resp.num_slots, resp.slot_size);
	if (!view || resp.slot_size < SOFTRDMA_RECV_WQE_HDR_SIZE)
		return EPROTO;
	const std::uint32_t room = resp.slot_size - SOFTRDMA_RECV_WQE_HDR_SIZE;
	srq->rq = softrdma::RecvQueue(*view, room / sizeof(softrdma_sge));
	srq->map = std::move(map);
	return 0;
}

extern "C" void softrdma_srq_close(struct softrdma_srq *srq)
{
	delete srq;
}

extern "C" int softrdma_srq_post_recv(struct softrdma_srq *srq, struct ibv_recv_wr *wr,
				      struct ibv_recv_wr **bad_wr)
{
	const std::lock_guard guard(srq->lock);
	return softrdma::post_list(srq->rq, wr, bad_wr);
}
