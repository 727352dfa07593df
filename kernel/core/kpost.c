// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests: the kicks of user QPs, and the post verbs of
 * kernel consumers.
 *
 * A process posts by writing its rings and makes a POST_SEND or POST_RECV
 * command without work requests when the kernel must be woken. A kernel
 * consumer's QP has the same rings, unmapped: post_send, post_recv and
 * post_srq_recv encode each work request into the ring in the very format
 * the provider writes, publish the producer index and kick, so
 * the transports take kernel and user WQEs the same way.
 *
 * The post verbs may be called from any context, hard interrupts and
 * IRQs-off sections included: the rings are written under spinlocks taken
 * with irqsave, and the kick runs the requester right away only where
 * it can take qp->lock (bottom halves off); otherwise a work item does.
 */
#include <linux/workqueue.h>

#include "softrdma.h"

static u32 softrdma_wqe_flags(int send_flags)
{
	u32 f = 0;

	if (send_flags & IB_SEND_SIGNALED)
		f |= SOFTRDMA_WQE_SIGNALED;
	if (send_flags & IB_SEND_SOLICITED)
		f |= SOFTRDMA_WQE_SOLICITED;
	if (send_flags & IB_SEND_INLINE)
		f |= SOFTRDMA_WQE_INLINE;
	if (send_flags & IB_SEND_FENCE)
		f |= SOFTRDMA_WQE_FENCE;
	return f;
}

/* Encode @wr into the SQ slot @slot. Return: 0 or -EINVAL. */
static int softrdma_encode_send(struct softrdma_qp *qp,
				const struct ib_send_wr *wr, u8 *slot)
{
	struct softrdma_send_wqe *w = (struct softrdma_send_wqe *)slot;
	struct softrdma_sge *sge =
		(struct softrdma_sge *)(slot + SOFTRDMA_SEND_WQE_HDR_SIZE);
	u8 *data = slot + SOFTRDMA_SEND_WQE_HDR_SIZE;
	bool local = false;
	u32 len = 0;
	int i;

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = softrdma_wqe_flags(wr->send_flags);
	switch (wr->opcode) {
	case IB_WR_SEND:
		break;
	case IB_WR_SEND_WITH_IMM:
		/* Immediate data stays in network order, as on the wire. */
		w->imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		w->imm_data = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_READ_WITH_INV:
		/*
		 * iWARP only (RoCE has no such operation): a Read into one
		 * sink MR, which is invalidated once the data is placed. The
		 * key is the sink's own lkey, not ex.invalidate_rkey, which
		 * rdma_rw sets before it bumps the MR's key.
		 */
		if (!rdma_cap_read_inv(qp->ibqp.device, 1) ||
		    wr->num_sge != 1 || (wr->send_flags & IB_SEND_INLINE))
			return -EINVAL;
		w->remote_addr = rdma_wr(wr)->remote_addr;
		w->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->imm_data = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		w->remote_addr = rdma_wr(wr)->remote_addr;
		w->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = atomic_wr(wr)->remote_addr;
		w->rkey = atomic_wr(wr)->rkey;
		w->compare_add = atomic_wr(wr)->compare_add;
		w->swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_LOCAL_INV:
		w->imm_data = wr->ex.invalidate_rkey;
		local = true;
		break;
	case IB_WR_REG_MR:
		if (reg_wr(wr)->mr->device != qp->ibqp.device)
			return -EINVAL;
		w->rkey = reg_wr(wr)->key;
		w->imm_data = reg_wr(wr)->access;
		local = true;
		break;
	default:
		return -EINVAL;
	}
	if (local) {
		w->flags &= ~SOFTRDMA_WQE_INLINE;
		return 0;
	}
	if (softrdma_qp_is_ud(qp)) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		/* A datagram: a SEND to an address handle of the device. */
		if ((wr->opcode != IB_WR_SEND &&
		     wr->opcode != IB_WR_SEND_WITH_IMM) ||
		    !ud->ah || ud->ah->device != qp->ibqp.device)
			return -EINVAL;
		w->ud.ah_num = to_sah(ud->ah)->ah_num;
		w->ud.remote_qpn = ud->remote_qpn;
		w->ud.remote_qkey = ud->remote_qkey;
		w->ud.pkey_index = ud->pkey_index;
	}
	if (wr->num_sge < 0)
		return -EINVAL;
	if (w->flags & SOFTRDMA_WQE_INLINE) {
		/* Inline data is read now, from kernel virtual addresses. */
		for (i = 0; i < wr->num_sge; i++) {
			u32 n = wr->sg_list[i].length;

			if (n > qp->max_inline - len)
				return -EINVAL;
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr, n);
			len += n;
		}
		w->inline_len = len;
		return 0;
	}
	if ((u32)wr->num_sge > qp->sq_max_sge)
		return -EINVAL;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* Encode a receive @wr into a slot of a ring of @max_sge SGEs. */
static int softrdma_encode_recv(const struct ib_recv_wr *wr, u8 *slot,
				u32 max_sge)
{
	struct softrdma_recv_wqe *w = (struct softrdma_recv_wqe *)slot;
	struct softrdma_sge *sge =
		(struct softrdma_sge *)(slot + SOFTRDMA_RECV_WQE_HDR_SIZE);
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* The kick, from process context with qp->lock unavailable. */
void softrdma_kick_work(struct work_struct *work)
{
	struct softrdma_qp *qp = container_of(work, struct softrdma_qp,
					      kick_work);

	spin_lock_bh(&qp->lock);
	softrdma_qp_kick_locked(qp);
	spin_unlock_bh(&qp->lock);
}

/*
 * Kick a kernel QP. With IRQs off, or qp->lock held (by us: a
 * completion handler that posts; or by a packet being handled on another
 * CPU), the work item kicks it: nothing published is ever left behind.
 */
static void softrdma_kernel_kick(struct softrdma_qp *qp)
{
	if (!irqs_disabled() && !in_hardirq() && spin_trylock_bh(&qp->lock)) {
		softrdma_qp_kick_locked(qp);
		spin_unlock_bh(&qp->lock);
		return;
	}
	queue_work(system_highpri_wq, &qp->kick_work);
}

int softrdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	struct softrdma_qp *qp = to_sqp(ibqp);
	struct softrdma_ring *ring = &qp->sq;
	enum ib_qp_state state;
	unsigned long flags;
	u32 prod;
	int ret = 0;

	if (!softrdma_qp_postable(qp)) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	/* A process's kick: the WQEs are in the ring already. */
	if (!wr) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_SQ_KICKS);
		return qp->transport->req_kick ?
		       qp->transport->req_kick(qp) : softrdma_qp_kick(qp);
	}
	if (qp->user) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	prod = ring->hdr->producer;
	for (; wr; wr = wr->next) {
		/* Acquire: the requester is done with the slot it freed. */
		if (prod - smp_load_acquire(&ring->hdr->consumer) >=
		    ring->num_slots) {
			ret = -ENOMEM;
			break;
		}
		ret = softrdma_encode_send(qp, wr,
					   softrdma_ring_slot(ring, prod));
		if (ret)
			break;
		prod++;
	}
	/* Release: the WQEs before the index that publishes them. */
	smp_store_release(&ring->hdr->producer, prod);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (ret)
		*bad_wr = wr;
	softrdma_kernel_kick(qp);
	return ret;
}

/*
 * Write receive WQEs @wr into @ring (the producer side serialised by @lock)
 * and publish them. Return: 0, or the error of the first WR not posted,
 * which *@bad_wr then names (those before it are posted).
 */
static int softrdma_post_recv_ring(struct softrdma_ring *ring,
				   spinlock_t *lock,
				   const struct ib_recv_wr *wr, u32 max_sge,
				   const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	u32 prod;
	int ret = 0;

	spin_lock_irqsave(lock, flags);
	prod = ring->hdr->producer;
	for (; wr; wr = wr->next) {
		/* Acquire: the responder is done with the slot it freed. */
		if (prod - smp_load_acquire(&ring->hdr->consumer) >=
		    ring->num_slots) {
			ret = -ENOMEM;
			break;
		}
		ret = softrdma_encode_recv(wr, softrdma_ring_slot(ring, prod),
					   max_sge);
		if (ret)
			break;
		prod++;
	}
	/* Release: the WQEs before the index that publishes them. */
	smp_store_release(&ring->hdr->producer, prod);
	spin_unlock_irqrestore(lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int softrdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct softrdma_qp *qp = to_sqp(ibqp);
	int ret;

	if (!softrdma_qp_postable(qp)) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	if (!wr)
		return softrdma_qp_kick(qp);
	if (qp->user || ibqp->srq || !qp->rcq) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	ret = softrdma_post_recv_ring(&qp->rq, &qp->rq_lock, wr,
				      qp->rq_max_sge, bad_wr);
	/* The responder takes receives as messages come; flushing is ours. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		softrdma_kernel_kick(qp);
	return ret;
}

int softrdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	struct softrdma_srq *srq = to_ssrq(ibsrq);

	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return softrdma_post_recv_ring(&srq->ring, &srq->prod_lock, wr,
				       srq->max_sge, bad_wr);
}
