// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a ring of receive WQEs mapped into the process (a
 * kernel consumer's is filled by post_srq_recv, kpost.c), which every QP
 * attached to the SRQ takes from. The limit event fires once
 * per arming, when fewer WQEs than the limit are left.
 */
#include <rdma/uverbs_ioctl.h>

#include "softrdma.h"

static u32 softrdma_srq_slot_size(u32 max_sge)
{
	return ALIGN(SOFTRDMA_RECV_WQE_HDR_SIZE +
		     max_sge * (u32)sizeof(struct softrdma_sge), 16);
}

int softrdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			struct ib_udata *udata)
{
	struct softrdma_srq *srq = to_ssrq(ibsrq);
	struct softrdma_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct softrdma_ucontext *suc;
	u32 slots;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (attr->max_wr > SOFTRDMA_MAX_QP_WR || attr->max_sge > SOFTRDMA_MAX_SGE)
		return -EINVAL;
	slots = softrdma_ring_slots(max(attr->max_wr, 1U), SOFTRDMA_MAX_QP_WR);
	srq->max_sge = max(attr->max_sge, 1U);
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->prod_lock);
	ret = softrdma_ring_init(&srq->ring, slots,
				 softrdma_srq_slot_size(srq->max_sge));
	if (ret)
		return ret;
	if (!udata)
		goto done;
	suc = rdma_udata_to_drv_context(udata, struct softrdma_ucontext, ibuc);
	ret = softrdma_ring_map(&srq->ring, &suc->ibuc, &resp.mmap_offset);
	if (ret)
		goto err;
	resp.mmap_size = srq->ring.size;
	resp.num_slots = slots;
	resp.slot_size = srq->ring.slot_size;
	ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (ret)
		goto err;
done:
	attr->max_wr = slots;
	attr->max_sge = srq->max_sge;
	return 0;

err:
	softrdma_ring_free(&srq->ring);
	return ret;
}

int softrdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softrdma_srq *srq = to_ssrq(ibsrq);

	/* The ring does not grow: only its own size is accepted. */
	if ((mask & IB_SRQ_MAX_WR) && attr->max_wr != srq->ring.num_slots)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->ring.num_slots)
			return -EINVAL;
		spin_lock_bh(&srq->lock);
		srq->limit = attr->srq_limit;
		srq->armed = attr->srq_limit > 0;
		spin_unlock_bh(&srq->lock);
	}
	return 0;
}

int softrdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softrdma_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->ring.num_slots;
	attr->max_sge = srq->max_sge;
	spin_lock_bh(&srq->lock);
	attr->srq_limit = srq->armed ? srq->limit : 0;
	spin_unlock_bh(&srq->lock);
	return 0;
}

int softrdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	/* The core refuses while QPs use it: nothing takes from it now. */
	softrdma_ring_free(&to_ssrq(ibsrq)->ring);
	return 0;
}

/**
 * softrdma_srq_take - take the next receive WQE off an SRQ
 * @srq: the SRQ
 * @wqe: the kernel's copy of the WQE header
 * @sge: room for the SRQ's max_sge SGEs
 *
 * The slot is free for the process again as soon as it is copied. Fires the
 * limit event when that leaves fewer WQEs than an armed limit.
 *
 * Return: true if there was one; false if the SRQ is empty (or its indices
 * are corrupt).
 */
bool softrdma_srq_take(struct softrdma_srq *srq, struct softrdma_recv_wqe *wqe,
		       struct softrdma_sge *sge)
{
	struct softrdma_ring_hdr *hdr = srq->ring.hdr;
	bool event = false;
	u32 prod, cons;
	int used;
	u8 *slot;

	spin_lock_bh(&srq->lock);
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	cons = hdr->consumer;
	used = softrdma_ring_used(prod, cons, srq->ring.num_slots);
	if (used <= 0) {
		spin_unlock_bh(&srq->lock);
		return false;
	}
	slot = softrdma_ring_slot(&srq->ring, cons);
	memcpy(wqe, slot, sizeof(*wqe));
	if (wqe->num_sge > srq->max_sge)
		wqe->num_sge = 0;	/* completes with a length error */
	memcpy(sge, slot + SOFTRDMA_RECV_WQE_HDR_SIZE,
	       wqe->num_sge * sizeof(*sge));
	/* Release: the provider may reuse the slot. */
	smp_store_release(&hdr->consumer, cons + 1);
	if (srq->armed && used - 1 < srq->limit) {
		srq->armed = false;
		event = true;
	}
	spin_unlock_bh(&srq->lock);

	if (event && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return true;
}
