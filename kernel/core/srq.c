// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a ring of receive WQEs mapped into the process (a
 * kernel consumer's is filled by post_srq_recv, kpost.c), which every QP
 * attached to the SRQ takes from. The limit event fires once
 * per arming, when fewer WQEs than the limit are left. A user SRQ resizes
 * into a new ring, which the provider maps in place of the old one.
 * An XRC SRQ (a transport with XRC QPs) is one too, numbered for the XRC
 * TGT QPs of its domain (xrc.c); its completions go to its own CQ.
 */
#include <linux/uaccess.h>
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
	struct softrdma_dev *sdev = to_sdev(ibsrq->device);
	struct softrdma_srq *srq = to_ssrq(ibsrq);
	struct softrdma_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	bool xrc = init->srq_type == IB_SRQT_XRC;
	struct softrdma_ucontext *suc;
	u32 slots;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC &&
	    !(xrc && (sdev->transport->qp_types & BIT(IB_QPT_XRC_TGT))))
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
	if (udata) {
		suc = rdma_udata_to_drv_context(udata, struct softrdma_ucontext,
						ibuc);
		ret = softrdma_ring_map(&srq->ring, &suc->ibuc,
					&resp.mmap_offset);
		if (ret)
			goto err;
		resp.mmap_size = srq->ring.size;
		resp.num_slots = slots;
		resp.slot_size = srq->ring.slot_size;
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err;
	}
	/* Numbered last: from then on, requests may find it. */
	if (xrc) {
		ret = softrdma_xrc_srq_add(sdev, srq);
		if (ret)
			goto err;
	}
	attr->max_wr = slots;
	attr->max_sge = srq->max_sge;
	return 0;

err:
	softrdma_ring_free(&srq->ring);
	return ret;
}

/*
 * Move the WQEs of @srq's ring not yet taken into @ring, at the same
 * indices, and make @ring the SRQ's; @ring gets the old ring back, for the
 * caller to free. Fails with -EINVAL if more than @max_wr are outstanding
 * (or the process left indices that make no sense) or @max_wr is below an
 * armed limit.
 */
static int softrdma_srq_swap_ring(struct softrdma_srq *srq,
				  struct softrdma_ring *ring, u32 max_wr)
{
	struct softrdma_ring *old = &srq->ring;
	struct softrdma_ring tmp;
	u32 prod, cons;
	int used;

	spin_lock_bh(&srq->lock);
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&old->hdr->producer);
	cons = old->hdr->consumer;
	used = softrdma_ring_used(prod, cons, old->num_slots);
	if (used < 0 || (u32)used > max_wr || (srq->armed && max_wr < srq->limit)) {
		spin_unlock_bh(&srq->lock);
		return -EINVAL;
	}
	for (; cons != prod; cons++)
		memcpy(softrdma_ring_slot(ring, cons),
		       softrdma_ring_slot(old, cons), old->slot_size);
	ring->hdr->consumer = old->hdr->consumer;
	ring->hdr->producer = prod;
	tmp = *old;
	*old = *ring;
	*ring = tmp;
	spin_unlock_bh(&srq->lock);
	return 0;
}

/*
 * ibv_modify_srq with IBV_SRQ_MAX_WR: a new ring of the size asked for
 * (larger or smaller), mapped for the process, which the provider maps in
 * place of the old one (struct softrdma_modify_srq_cmd). Only user SRQs
 * resize: a kernel consumer's posts take no lock the swap could take.
 */
static int softrdma_srq_resize(struct softrdma_srq *srq, u32 max_wr,
			       struct ib_udata *udata)
{
	struct softrdma_create_srq_resp resp = {};
	struct softrdma_modify_srq_cmd cmd;
	struct softrdma_ucontext *suc;
	struct softrdma_ring ring;
	u32 slots;
	int ret;

	if (!udata || !srq->ibsrq.uobject)
		return -EOPNOTSUPP;
	if (udata->inlen < sizeof(cmd))
		return -EOPNOTSUPP;	/* a provider that cannot remap */
	ret = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
	if (ret)
		return ret;
	if (!max_wr || max_wr > SOFTRDMA_MAX_QP_WR)
		return -EINVAL;
	slots = softrdma_ring_slots(max_wr, SOFTRDMA_MAX_QP_WR);
	ret = softrdma_ring_init(&ring, slots, srq->ring.slot_size);
	if (ret)
		return ret;
	suc = rdma_udata_to_drv_context(udata, struct softrdma_ucontext, ibuc);
	ret = softrdma_ring_map(&ring, &suc->ibuc, &resp.mmap_offset);
	if (ret)
		goto err;
	resp.mmap_size = ring.size;
	resp.num_slots = slots;
	resp.slot_size = ring.slot_size;
	/* Told before the swap: a failure after it could not be undone. */
	if (copy_to_user(u64_to_user_ptr(cmd.resp_addr), &resp,
			 sizeof(resp))) {
		ret = -EFAULT;
		goto err;
	}
	ret = softrdma_srq_swap_ring(srq, &ring, max_wr);
err:
	/* The ring not in use: unmapped, the process never mapped it. */
	softrdma_ring_free(&ring);
	return ret;
}

int softrdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softrdma_srq *srq = to_ssrq(ibsrq);
	int ret;

	if ((mask & IB_SRQ_MAX_WR) && attr->max_wr != srq->ring.num_slots) {
		ret = softrdma_srq_resize(srq, attr->max_wr, udata);
		if (ret)
			return ret;
	}
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
	struct softrdma_srq *srq = to_ssrq(ibsrq);

	/*
	 * The core refuses while QPs use it: nothing takes from it now. XRC
	 * TGT QPs find an XRC SRQ by its number: not once it is taken away.
	 */
	if (ibsrq->srq_type == IB_SRQT_XRC)
		softrdma_xrc_srq_del(to_sdev(ibsrq->device), srq);
	softrdma_ring_free(&srq->ring);
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
