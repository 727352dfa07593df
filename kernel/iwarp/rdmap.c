// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMAP over DDP over MPA (RFC 5040, 5041, 5044) on a connected TCP socket:
 * the requester, which takes WQEs off the SQ ring and sends them as FPDUs,
 * and the receiver, which places what arrives after checking every STag,
 * offset and length.
 *
 * Both run in process context, one work item each per QP (the socket
 * callbacks only queue them): the sender blocks in the socket while the
 * peer is slow to read, the receiver reads one FPDU at a time without
 * blocking. Both hold qp->lock only to look at or change the QP's state,
 * never across a socket call. A Send or RDMA Write completes once all of it
 * is in the socket; an RDMA Read once its response has arrived.
 */
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

static void softrdma_iw_timer_noop(struct timer_list *t)
{
}

static void softrdma_iw_tx_work(struct work_struct *work);
static void softrdma_iw_rx_work(struct work_struct *work);

int softrdma_iw_qp_init(struct softrdma_qp *qp)
{
	size_t n = qp->sq.num_slots;
	struct softrdma_iw_qp *iw;

	/* The core stops the RoCE timer on ERR and RESET: give it one. */
	timer_setup(&qp->req.timer, softrdma_iw_timer_noop, 0);
	iw = kzalloc(sizeof(*iw), GFP_KERNEL);
	if (!iw)
		return -ENOMEM;
	qp->iw = iw;
	iw->qp = qp;
	INIT_WORK(&iw->tx_work, softrdma_iw_tx_work);
	INIT_WORK(&iw->rx_work, softrdma_iw_rx_work);
	qp->swqe = kvcalloc(n, sizeof(*qp->swqe), GFP_KERNEL);
	qp->ssge = kvcalloc(n * qp->sq_max_sge, sizeof(*qp->ssge), GFP_KERNEL);
	qp->sinline = kvzalloc(n * qp->max_inline, GFP_KERNEL);
	iw->irq_size = SOFTRDMA_MAX_RD_ATOMIC;
	iw->orq_size = SOFTRDMA_MAX_RD_ATOMIC;
	iw->irq = kvcalloc(iw->irq_size, sizeof(*iw->irq), GFP_KERNEL);
	iw->orq = kvcalloc(iw->orq_size, sizeof(*iw->orq), GFP_KERNEL);
	iw->rxbuf = kvmalloc(SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	iw->txbuf = kvmalloc(SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	if (!qp->swqe || !qp->ssge || !qp->sinline || !iw->irq || !iw->orq ||
	    !iw->rxbuf || !iw->txbuf) {
		softrdma_iw_qp_cleanup(qp);
		return -ENOMEM;
	}
	return 0;
}

void softrdma_iw_qp_cleanup(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;

	del_timer_sync(&qp->req.timer);
	kvfree(qp->swqe);
	kvfree(qp->ssge);
	kvfree(qp->sinline);
	qp->swqe = NULL;
	qp->ssge = NULL;
	qp->sinline = NULL;
	if (!iw)
		return;
	kvfree(iw->irq);
	kvfree(iw->orq);
	kvfree(iw->rxbuf);
	kvfree(iw->txbuf);
	kfree(iw);
	qp->iw = NULL;
}

static u8 softrdma_ddp_ctl(bool tagged, bool last)
{
	return (tagged ? SOFTRDMA_DDP_T : 0) | (last ? SOFTRDMA_DDP_L : 0) |
	       SOFTRDMA_DDP_DV;
}

static u8 softrdma_rdmap_ctl(u8 op)
{
	return SOFTRDMA_RDMAP_RV << SOFTRDMA_RDMAP_RV_SHIFT | op;
}

/* Complete, in order, every WQE done from the oldest on. */
static void softrdma_iw_advance(struct softrdma_qp *qp)
{
	while (qp->req.comp_idx != qp->req.send_idx) {
		struct softrdma_swqe *s =
			&qp->swqe[qp->req.comp_idx & (qp->sq.num_slots - 1)];

		if (!s->done)
			break;
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_SUCCESS);
		qp->req.comp_idx++;
	}
}

/*
 * Move the QP to the error state and flush both queues. Caller holds
 * qp->lock. The connection is closed by whoever called (cm.c).
 */
void softrdma_iw_qp_fail(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;

	WRITE_ONCE(qp->state, IB_QPS_ERR);
	softrdma_qp_need_wakeup(qp);
	softrdma_ring_set_flag(&qp->rq, SOFTRDMA_RING_NEED_WAKEUP);
	softrdma_qp_flush(qp);
	qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
	qp->req.comp_idx = qp->req.send_idx;
	qp->resp.in_recv = false;
	iw->orq_head = iw->orq_tail;
	iw->irq_head = iw->irq_tail;
	iw->rresp_off = 0;
}

/* Ask cm.c to close the connection (from any context). */
static void softrdma_iw_conn_lost(struct softrdma_qp *qp, bool graceful)
{
	struct softrdma_iw_qp *iw = qp->iw;

	spin_lock_bh(&qp->lock);
	if (iw->cep)
		softrdma_cep_close(iw->cep, graceful);
	spin_unlock_bh(&qp->lock);
}

/*
 * Fail the QP and send a Terminate (RFC 5040 4.8) with @layer, @etype and
 * @code, then close. Caller holds qp->lock.
 */
static void softrdma_iw_terminate(struct softrdma_qp *qp, u8 layer, u8 etype,
				  u8 code)
{
	struct softrdma_iw_qp *iw = qp->iw;

	ibdev_info_ratelimited(&qp->sdev->ibdev,
			       "QP %u: terminate layer %u type %u code 0x%x\n",
			       qp->ibqp.qp_num, layer, etype, code);
	if (qp->state != IB_QPS_ERR)
		softrdma_iw_qp_fail(qp);
	if (iw->term_due || !iw->sock)
		return;
	iw->term_due = true;
	iw->term_layer_type = layer << 4 | etype;
	iw->term_code = code;
	queue_work(softrdma_iw_wq, &iw->tx_work);
}

/* Take the WQE at @idx into the kernel's copy. Return: WC status. */
static u32 softrdma_iw_take(struct softrdma_qp *qp, u32 idx)
{
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	u8 *body = (u8 *)softrdma_ring_slot(&qp->sq, idx) +
		   SOFTRDMA_SEND_WQE_HDR_SIZE;
	u32 status;
	u64 len;

	memcpy(&s->wqe, softrdma_ring_slot(&qp->sq, idx), sizeof(s->wqe));
	s->len = 0;
	s->done = false;
	switch (s->wqe.opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		break;
	default:
		/* Immediate data and atomics (RFC 7306) are not offered yet. */
		return IB_WC_LOC_QP_OP_ERR;
	}
	status = softrdma_swqe_copy_body(qp, slot, body, &len);
	if (status != IB_WC_SUCCESS)
		return status;
	/* A DDP message's offsets and an RDMA Read's size are 32 bits. */
	if (len > U32_MAX)
		return IB_WC_LOC_LEN_ERR;
	s->len = len;
	return IB_WC_SUCCESS;
}

/*
 * Send the FPDU whose ULPDU (@ulen bytes) is in iw->txbuf + 2; @more: more
 * FPDUs of the same message follow (TCP need not push this one alone).
 */
static int softrdma_iw_xmit_more(struct softrdma_iw_qp *iw,
				 struct socket *sock, u32 ulen, bool more)
{
	u32 len = softrdma_fpdu_close(iw->txbuf, ulen, iw->crc);

	return softrdma_iw_sendmore(sock, iw->txbuf, len, more);
}

static int softrdma_iw_xmit(struct softrdma_iw_qp *iw, struct socket *sock,
			    u32 ulen)
{
	return softrdma_iw_xmit_more(iw, sock, ulen, false);
}

/* Payload bytes of a segment after a DDP header of @hlen bytes. */
static u32 softrdma_iw_seg_max(struct softrdma_iw_qp *iw, u32 hlen)
{
	return iw->mulpdu - hlen;
}

/* Send the WQE at @idx (its kernel copy). Return: 0 or -errno. */
static int softrdma_iw_send_wqe(struct softrdma_qp *qp, struct socket *sock,
				u32 idx, u32 msn)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	struct softrdma_sge *sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	bool tagged = s->wqe.opcode == IB_WR_RDMA_WRITE;
	u32 hlen = tagged ? SOFTRDMA_TAGGED_LEN : SOFTRDMA_UNTAGGED_LEN;
	u8 *u = iw->txbuf + 2;
	u32 off = 0, op;
	int err;

	if (s->wqe.opcode == IB_WR_RDMA_READ) {
		struct softrdma_ddp_untagged *h = (void *)u;
		struct softrdma_rdmap_rreq *r = (void *)(u + hlen);

		h->ddp = softrdma_ddp_ctl(false, true);
		h->rdmap = softrdma_rdmap_ctl(RDMAP_READ_REQ);
		h->inv_stag = 0;
		h->qn = htonl(SOFTRDMA_QN_READ);
		h->msn = htonl(msn);
		h->mo = 0;
		/* The sink is the first SGE; the response lands by offset. */
		r->sink_stag = htonl(s->wqe.num_sge ? sge[0].lkey : 0);
		r->sink_to = cpu_to_be64(s->wqe.num_sge ? sge[0].addr : 0);
		r->len = htonl(s->len);
		r->src_stag = htonl(s->wqe.rkey);
		r->src_to = cpu_to_be64(s->wqe.remote_addr);
		return softrdma_iw_xmit(iw, sock, hlen + SOFTRDMA_RREQ_LEN);
	}

	if (tagged) {
		op = RDMAP_WRITE;
	} else {
		bool se = s->wqe.flags & SOFTRDMA_WQE_SOLICITED;

		if (s->wqe.opcode == IB_WR_SEND_WITH_INV)
			op = se ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV;
		else
			op = se ? RDMAP_SEND_SE : RDMAP_SEND;
	}
	do {
		u32 n = min(s->len - off, softrdma_iw_seg_max(iw, hlen));
		bool last = off + n == s->len;

		if (tagged) {
			struct softrdma_ddp_tagged *h = (void *)u;

			h->ddp = softrdma_ddp_ctl(true, last);
			h->rdmap = softrdma_rdmap_ctl(op);
			h->stag = htonl(s->wqe.rkey);
			h->to = cpu_to_be64(s->wqe.remote_addr + off);
		} else {
			struct softrdma_ddp_untagged *h = (void *)u;

			h->ddp = softrdma_ddp_ctl(false, last);
			h->rdmap = softrdma_rdmap_ctl(op);
			h->inv_stag = op == RDMAP_SEND_INV ||
				      op == RDMAP_SEND_SE_INV ?
				      htonl(s->wqe.imm_data) : 0;
			h->qn = htonl(SOFTRDMA_QN_SEND);
			h->msn = htonl(msn);
			h->mo = htonl(off);
		}
		if (n && (s->wqe.flags & SOFTRDMA_WQE_INLINE)) {
			memcpy(u + hlen, qp->sinline +
			       (size_t)slot * qp->max_inline + off, n);
		} else if (n) {
			err = softrdma_sge_copy(qp, sge, s->wqe.num_sge, off,
						u + hlen, n, false, 0);
			if (err)
				return err;
		}
		err = softrdma_iw_xmit_more(iw, sock, hlen + n, !last);
		if (err)
			return -EPIPE;
		off += n;
	} while (off < s->len);
	return 0;
}

/* Answer an RDMA Read Request: tagged Read Response segments. */
static int softrdma_iw_send_rresp(struct softrdma_qp *qp, struct socket *sock,
				  const struct softrdma_iw_rresp *rr)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u32 hlen = SOFTRDMA_TAGGED_LEN, off = 0;
	struct softrdma_mr *mr = NULL;
	u8 *u = iw->txbuf + 2;
	int err;

	if (rr->len) {
		/* Checked on arrival; held now for the copy. */
		mr = softrdma_mr_get(qp->sdev, qp->ibqp.pd, rr->src_stag,
				     rr->src_to, rr->len, IB_ACCESS_REMOTE_READ,
				     &err);
		if (!mr)
			return err;
	}
	do {
		struct softrdma_ddp_tagged *h = (void *)u;
		u32 n = min(rr->len - off, softrdma_iw_seg_max(iw, hlen));

		h->ddp = softrdma_ddp_ctl(true, off + n == rr->len);
		h->rdmap = softrdma_rdmap_ctl(RDMAP_READ_RESP);
		h->stag = htonl(rr->sink_stag);
		h->to = cpu_to_be64(rr->sink_to + off);
		if (n)
			softrdma_mr_copy(mr, rr->src_to + off, u + hlen, n,
					 false);
		err = softrdma_iw_xmit_more(iw, sock, hlen + n,
					    off + n != rr->len);
		if (err) {
			err = -EPIPE;
			break;
		}
		off += n;
	} while (off < rr->len);
	if (mr)
		softrdma_mr_put(mr);
	return err;
}

/* Send a Terminate: layer/type/code only (no copy of the bad header). */
static int softrdma_iw_send_term(struct softrdma_qp *qp, struct socket *sock,
				 u8 layer_type, u8 code, u32 msn)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_rdmap_term *t = (void *)(h + 1);

	h->ddp = softrdma_ddp_ctl(false, true);
	h->rdmap = softrdma_rdmap_ctl(RDMAP_TERMINATE);
	h->inv_stag = 0;
	h->qn = htonl(SOFTRDMA_QN_TERM);
	h->msn = htonl(msn);
	h->mo = 0;
	t->layer_type = layer_type;
	t->code = code;
	t->hdrct = 0;
	return softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*t));
}

/*
 * The RTR of RFC 6581 (peer to peer mode), sent by the initiator before
 * anything else: a zero-length RDMA Write (STag 0) or RDMA Read Request.
 */
int softrdma_iw_send_rtr(struct softrdma_qp *qp, struct socket *sock, u16 rtr)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u8 *u = iw->txbuf + 2;

	if (rtr & SOFTRDMA_MPA_V2_WRITE0) {
		struct softrdma_ddp_tagged *h = (void *)u;

		h->ddp = softrdma_ddp_ctl(true, true);
		h->rdmap = softrdma_rdmap_ctl(RDMAP_WRITE);
		h->stag = 0;
		h->to = 0;
		return softrdma_iw_xmit(iw, sock, SOFTRDMA_TAGGED_LEN);
	}
	return -EOPNOTSUPP;
}

/* May the WQE at @idx go now (ORD, fences)? Caller holds qp->lock. */
static bool softrdma_iw_may_send(struct softrdma_qp *qp, u32 idx)
{
	const struct softrdma_send_wqe *w = softrdma_ring_slot(&qp->sq, idx);
	struct softrdma_iw_qp *iw = qp->iw;
	u32 reads = iw->orq_tail - iw->orq_head;

	if (!reads)
		return true;
	if (READ_ONCE(w->flags) & SOFTRDMA_WQE_FENCE)
		return false;
	return READ_ONCE(w->opcode) != IB_WR_RDMA_READ ||
	       reads < clamp_t(u32, qp->attrs.max_rd_atomic, 1, iw->orq_size);
}

static void softrdma_iw_tx_work(struct work_struct *work)
{
	struct softrdma_iw_qp *iw = container_of(work, struct softrdma_iw_qp,
						 tx_work);
	struct softrdma_qp *qp = iw->qp;

	for (;;) {
		struct softrdma_iw_rresp rr;
		struct socket *sock;
		u32 idx, prod, status, msn = 0;
		bool read;
		int err;

		spin_lock_bh(&qp->lock);
		sock = iw->sock;
		if (!sock) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		if (iw->term_due) {
			u8 lt = iw->term_layer_type, code = iw->term_code;

			iw->term_due = false;
			msn = iw->tx_msn[SOFTRDMA_QN_TERM]++;
			spin_unlock_bh(&qp->lock);
			softrdma_iw_send_term(qp, sock, lt, code, msn);
			softrdma_iw_conn_lost(qp, true);
			return;
		}
		if (iw->irq_head != iw->irq_tail) {
			rr = iw->irq[iw->irq_head % iw->irq_size];
			iw->irq_head++;
			spin_unlock_bh(&qp->lock);
			err = softrdma_iw_send_rresp(qp, sock, &rr);
			if (err == -EPIPE) {
				softrdma_iw_conn_lost(qp, false);
				return;
			}
			if (err) {
				/* The MR went away since the request came. */
				spin_lock_bh(&qp->lock);
				softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
						      TERM_RDMAP_PROTECTION,
						      TERM_RDMAP_INVALID_STAG);
				spin_unlock_bh(&qp->lock);
			}
			continue;
		}
		if (READ_ONCE(qp->state) != IB_QPS_RTS) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		idx = qp->req.send_idx;
		/* Acquire pairs with the provider's release of its WQEs. */
		prod = smp_load_acquire(&qp->sq.hdr->producer);
		if (softrdma_ring_used(prod, qp->req.comp_idx,
				       qp->sq.num_slots) < 0) {
			softrdma_iw_qp_fail(qp);
			spin_unlock_bh(&qp->lock);
			softrdma_iw_conn_lost(qp, false);
			return;
		}
		if (idx == prod || !softrdma_iw_may_send(qp, idx)) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		status = softrdma_iw_take(qp, idx);
		qp->req.send_idx++;
		if (status != IB_WC_SUCCESS) {
			softrdma_sq_complete(qp, idx, status);
			qp->req.comp_idx = idx + 1;
			softrdma_iw_qp_fail(qp);
			spin_unlock_bh(&qp->lock);
			softrdma_iw_conn_lost(qp, false);
			return;
		}
		read = qp->swqe[idx & (qp->sq.num_slots - 1)].wqe.opcode ==
		       IB_WR_RDMA_READ;
		if (read) {
			iw->orq[iw->orq_tail % iw->orq_size] = idx;
			iw->orq_tail++;
			msn = iw->tx_msn[SOFTRDMA_QN_READ]++;
		} else if (qp->swqe[idx & (qp->sq.num_slots - 1)].wqe.opcode !=
			   IB_WR_RDMA_WRITE) {
			msn = iw->tx_msn[SOFTRDMA_QN_SEND]++;
		}
		spin_unlock_bh(&qp->lock);

		err = softrdma_iw_send_wqe(qp, sock, idx, msn);

		spin_lock_bh(&qp->lock);
		if (READ_ONCE(qp->state) != IB_QPS_RTS || iw->sock != sock ||
		    (s32)(idx - qp->req.comp_idx) < 0) {
			/* Flushed meanwhile. */
			spin_unlock_bh(&qp->lock);
			continue;
		}
		if (err == -EPIPE) {
			spin_unlock_bh(&qp->lock);
			softrdma_iw_conn_lost(qp, false);
			return;
		}
		if (err) {
			softrdma_sq_complete(qp, idx, IB_WC_LOC_PROT_ERR);
			qp->req.comp_idx = idx + 1;
			softrdma_iw_qp_fail(qp);
			spin_unlock_bh(&qp->lock);
			softrdma_iw_conn_lost(qp, false);
			return;
		}
		if (!read) {
			qp->swqe[idx & (qp->sq.num_slots - 1)].done = true;
			softrdma_iw_advance(qp);
		}
		spin_unlock_bh(&qp->lock);
	}
}

/* Are there WQEs the sender has not taken? */
bool softrdma_iw_req_pending(struct softrdma_qp *qp)
{
	if (!qp->iw->sock)
		return false;
	/* Acquire pairs with the provider's release of its WQEs. */
	return smp_load_acquire(&qp->sq.hdr->producer) != qp->req.send_idx;
}

/* The doorbell: the sender runs in its work item. Caller holds qp->lock. */
void softrdma_iw_req_run(struct softrdma_qp *qp)
{
	if (qp->iw->sock)
		queue_work(softrdma_iw_wq, &qp->iw->tx_work);
}

/* Map softrdma_mr_get()'s error on a tagged buffer to a Terminate. */
static void softrdma_iw_tagged_error(struct softrdma_qp *qp, int err)
{
	if (err == -EACCES)
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
	else if (err == -ERANGE)
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
				      TERM_DDP_T_BOUNDS);
	else
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
				      TERM_DDP_T_INVALID_STAG);
}

static void softrdma_iw_rx_write(struct softrdma_qp *qp, u32 stag, u64 to,
				 u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_mr *mr;
	int err;

	if (iw->rtr_due && !n) {
		/* The peer's zero-length RTR: the connection is up. */
		iw->rtr_due = false;
		if (iw->cep)
			softrdma_cep_established(iw->cep);
		return;
	}
	if (!n)
		return;
	if (!(qp->attrs.access & IB_ACCESS_REMOTE_WRITE)) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
		return;
	}
	mr = softrdma_mr_get(qp->sdev, qp->ibqp.pd, stag, to, n,
			     IB_ACCESS_REMOTE_WRITE, &err);
	if (!mr) {
		softrdma_iw_tagged_error(qp, err);
		return;
	}
	softrdma_mr_copy(mr, to, p, n, true);
	softrdma_mr_put(mr);
}

static void softrdma_iw_rx_rresp(struct softrdma_qp *qp, u32 stag, u64 to,
				 bool last, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_swqe *s;
	struct softrdma_sge *sge;
	u32 idx, slot;
	u64 off;

	if (iw->orq_head == iw->orq_tail) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	idx = iw->orq[iw->orq_head % iw->orq_size];
	slot = idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	off = to - (s->wqe.num_sge ? sge[0].addr : 0);
	if (stag != (s->wqe.num_sge ? sge[0].lkey : 0)) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
				      TERM_DDP_T_INVALID_STAG);
		return;
	}
	if (off != iw->rresp_off || n > s->len - off ||
	    (last && off + n != s->len)) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
				      TERM_DDP_T_BOUNDS);
		return;
	}
	if (n && softrdma_sge_copy(qp, sge, s->wqe.num_sge, off, p, n, true,
				   IB_ACCESS_LOCAL_WRITE)) {
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_LOC_PROT_ERR);
		qp->req.comp_idx++;
		softrdma_iw_qp_fail(qp);
		if (iw->cep)
			softrdma_cep_close(iw->cep, false);
		return;
	}
	iw->rresp_off += n;
	if (!last)
		return;
	iw->rresp_off = 0;
	iw->orq_head++;
	s->done = true;
	softrdma_iw_advance(qp);
	/* A read slot is free: what waited for it may go. */
	queue_work(softrdma_iw_wq, &iw->tx_work);
}

/* Take the next receive WQE. Return: false if there is none. */
static bool softrdma_iw_take_recv(struct softrdma_qp *qp)
{
	struct softrdma_ring_hdr *hdr = qp->rq.hdr;
	u32 prod, cons;
	u8 *slot;

	if (qp->ibqp.srq) {
		if (!softrdma_srq_take(to_ssrq(qp->ibqp.srq), &qp->resp.rwqe,
				       qp->resp.rsge))
			return false;
		goto taken;
	}
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	cons = hdr->consumer;
	if (softrdma_ring_used(prod, cons, qp->rq.num_slots) <= 0)
		return false;
	slot = softrdma_ring_slot(&qp->rq, cons);
	memcpy(&qp->resp.rwqe, slot, sizeof(qp->resp.rwqe));
	if (qp->resp.rwqe.num_sge > qp->rq_max_sge)
		qp->resp.rwqe.num_sge = 0;	/* completes with a length error */
	memcpy(qp->resp.rsge, slot + SOFTRDMA_RECV_WQE_HDR_SIZE,
	       qp->resp.rwqe.num_sge * sizeof(struct softrdma_sge));
taken:
	qp->resp.roff = 0;
	qp->resp.in_recv = true;
	return true;
}

static void softrdma_iw_complete_recv(struct softrdma_qp *qp, u32 status,
				      u32 byte_len, bool solicited)
{
	struct softrdma_cqe cqe = {};

	cqe.wr_id = qp->resp.rwqe.wr_id;
	cqe.status = status;
	cqe.opcode = IB_WC_RECV;
	cqe.byte_len = byte_len;
	cqe.qp_num = qp->ibqp.qp_num;
	softrdma_cq_post(qp->rcq, &cqe, solicited);
	if (!qp->ibqp.srq) {
		/* Release: the provider may reuse the slot. */
		smp_store_release(&qp->rq.hdr->consumer,
				  qp->rq.hdr->consumer + 1);
	}
	qp->resp.in_recv = false;
}

static void softrdma_iw_rx_send(struct softrdma_qp *qp, u8 op, bool last,
				u32 msn, u32 mo, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	bool inv = op == RDMAP_SEND_INV || op == RDMAP_SEND_SE_INV;
	bool se = op == RDMAP_SEND_SE || op == RDMAP_SEND_SE_INV;

	if (op != RDMAP_SEND && op != RDMAP_SEND_SE && !inv) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	if (msn != iw->rx_msn[SOFTRDMA_QN_SEND]) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_MSN_RANGE);
		return;
	}
	if (!qp->resp.in_recv && !softrdma_iw_take_recv(qp)) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_NO_BUFFER);
		return;
	}
	/* Segments of a message arrive in order on the stream. */
	if (mo != qp->resp.roff) {
		softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR, 0, false);
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_MO);
		return;
	}
	if (n && softrdma_sge_copy(qp, qp->resp.rsge, qp->resp.rwqe.num_sge,
				   mo, p, n, true, IB_ACCESS_LOCAL_WRITE)) {
		softrdma_iw_complete_recv(qp, IB_WC_LOC_LEN_ERR, 0, false);
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_TOO_LONG);
		return;
	}
	qp->resp.roff = mo + n;
	if (!last)
		return;
	iw->rx_msn[SOFTRDMA_QN_SEND]++;
	if (inv) {
		/*
		 * Only memory windows and fast-registration MRs may be
		 * invalidated remotely, and this device has neither yet.
		 */
		softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR,
					  qp->resp.roff, false);
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_PROTECTION,
				      TERM_RDMAP_CANT_INVALIDATE);
		return;
	}
	softrdma_iw_complete_recv(qp, IB_WC_SUCCESS, qp->resp.roff, se);
}

static void softrdma_iw_rx_rreq(struct softrdma_qp *qp, u8 op, bool last,
				u32 msn, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_rdmap_rreq req;
	struct softrdma_iw_rresp *rr;
	struct softrdma_mr *mr;
	u32 ird;
	int err;

	if (op != RDMAP_READ_REQ) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	if (msn != iw->rx_msn[SOFTRDMA_QN_READ]) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_MSN_RANGE);
		return;
	}
	if (!last || n != SOFTRDMA_RREQ_LEN) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_TOO_LONG);
		return;
	}
	ird = clamp_t(u32, qp->attrs.max_dest_rd_atomic, 1, iw->irq_size);
	if (iw->irq_tail - iw->irq_head >= ird) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_NO_BUFFER);
		return;
	}
	memcpy(&req, p, sizeof(req));
	iw->rx_msn[SOFTRDMA_QN_READ]++;
	if (iw->rtr_due && !req.len) {
		iw->rtr_due = false;
		if (iw->cep)
			softrdma_cep_established(iw->cep);
	}
	if (req.len) {
		if (!(qp->attrs.access & IB_ACCESS_REMOTE_READ)) {
			softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
					      TERM_RDMAP_PROTECTION,
					      TERM_RDMAP_ACCESS);
			return;
		}
		mr = softrdma_mr_get(qp->sdev, qp->ibqp.pd,
				     ntohl(req.src_stag),
				     be64_to_cpu(req.src_to), ntohl(req.len),
				     IB_ACCESS_REMOTE_READ, &err);
		if (!mr) {
			softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
					      TERM_RDMAP_PROTECTION,
					      err == -EACCES ?
					      TERM_RDMAP_ACCESS :
					      err == -ERANGE ?
					      TERM_RDMAP_BOUNDS :
					      TERM_RDMAP_INVALID_STAG);
			return;
		}
		softrdma_mr_put(mr);
	}
	rr = &iw->irq[iw->irq_tail % iw->irq_size];
	rr->sink_stag = ntohl(req.sink_stag);
	rr->sink_to = be64_to_cpu(req.sink_to);
	rr->len = ntohl(req.len);
	rr->src_stag = ntohl(req.src_stag);
	rr->src_to = be64_to_cpu(req.src_to);
	iw->irq_tail++;
	queue_work(softrdma_iw_wq, &iw->tx_work);
}

/* The peer's Terminate: fail what it was about, then the QP. */
static void softrdma_iw_rx_term(struct softrdma_qp *qp, u8 *p, u32 n)
{
	struct softrdma_rdmap_term t = {};
	u32 status;

	if (n >= sizeof(t))
		memcpy(&t, p, sizeof(t));
	ibdev_info_ratelimited(&qp->sdev->ibdev,
			       "QP %u: peer terminated: layer %u type %u code 0x%x\n",
			       qp->ibqp.qp_num, t.layer_type >> 4,
			       t.layer_type & 15, t.code);
	status = (t.layer_type >> 4 == TERM_LAYER_RDMAP &&
		  (t.layer_type & 15) == TERM_RDMAP_PROTECTION) ||
		 (t.layer_type >> 4 == TERM_LAYER_DDP &&
		  (t.layer_type & 15) == TERM_DDP_TAGGED) ?
		 IB_WC_REM_ACCESS_ERR : IB_WC_REM_OP_ERR;
	if (qp->req.comp_idx != qp->req.send_idx) {
		softrdma_sq_complete(qp, qp->req.comp_idx, status);
		qp->req.comp_idx++;
	}
	softrdma_iw_qp_fail(qp);
	if (qp->iw->cep)
		softrdma_cep_close(qp->iw->cep, true);
}

/* One whole FPDU in iw->rxbuf. Caller holds qp->lock. */
static void softrdma_iw_rx_fpdu(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u8 *f = iw->rxbuf, *u = f + 2;
	u32 ulen = get_unaligned_be16(f), n;
	bool last;
	u8 op;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return;
	if (iw->crc &&
	    get_unaligned_le32(f + iw->rx_need - 4) !=
	    softrdma_mpa_crc(f, iw->rx_need - 4)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
		softrdma_iw_terminate(qp, TERM_LAYER_LLP, 0, TERM_LLP_CRC);
		return;
	}
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_PKTS);
	op = u[1] & SOFTRDMA_RDMAP_OP_MASK;
	last = u[0] & SOFTRDMA_DDP_L;
	if ((u[0] & SOFTRDMA_DDP_DV_MASK) != SOFTRDMA_DDP_DV) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP,
				      u[0] & SOFTRDMA_DDP_T ? TERM_DDP_TAGGED :
				      TERM_DDP_UNTAGGED,
				      u[0] & SOFTRDMA_DDP_T ? TERM_DDP_T_VERSION :
				      TERM_DDP_U_VERSION);
		return;
	}
	if (u[1] >> SOFTRDMA_RDMAP_RV_SHIFT != SOFTRDMA_RDMAP_RV) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_VERSION);
		return;
	}
	if (u[0] & SOFTRDMA_DDP_T) {
		struct softrdma_ddp_tagged h;

		memcpy(&h, u, sizeof(h));
		n = ulen - SOFTRDMA_TAGGED_LEN;
		if (op == RDMAP_WRITE)
			softrdma_iw_rx_write(qp, ntohl(h.stag),
					     be64_to_cpu(h.to),
					     u + SOFTRDMA_TAGGED_LEN, n);
		else if (op == RDMAP_READ_RESP)
			softrdma_iw_rx_rresp(qp, ntohl(h.stag),
					     be64_to_cpu(h.to), last,
					     u + SOFTRDMA_TAGGED_LEN, n);
		else
			softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
					      TERM_RDMAP_OPERATION,
					      TERM_RDMAP_OPCODE);
	} else {
		struct softrdma_ddp_untagged h;
		u8 *p = u + SOFTRDMA_UNTAGGED_LEN;

		if (ulen < SOFTRDMA_UNTAGGED_LEN) {
			softrdma_iw_terminate(qp, TERM_LAYER_LLP, 0,
					      TERM_LLP_LEN);
			return;
		}
		memcpy(&h, u, sizeof(h));
		n = ulen - SOFTRDMA_UNTAGGED_LEN;
		switch (ntohl(h.qn)) {
		case SOFTRDMA_QN_SEND:
			softrdma_iw_rx_send(qp, op, last, ntohl(h.msn),
					    ntohl(h.mo), p, n);
			break;
		case SOFTRDMA_QN_READ:
			softrdma_iw_rx_rreq(qp, op, last, ntohl(h.msn), p, n);
			break;
		case SOFTRDMA_QN_TERM:
			softrdma_iw_rx_term(qp, p, n);
			break;
		default:
			softrdma_iw_terminate(qp, TERM_LAYER_DDP,
					      TERM_DDP_UNTAGGED, TERM_DDP_U_QN);
			break;
		}
	}
}

static void softrdma_iw_rx_work(struct work_struct *work)
{
	struct softrdma_iw_qp *iw = container_of(work, struct softrdma_iw_qp,
						 rx_work);
	struct softrdma_qp *qp = iw->qp;

	for (;;) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		struct socket *sock;
		struct kvec iov;
		int n;

		spin_lock_bh(&qp->lock);
		sock = iw->sock;
		spin_unlock_bh(&qp->lock);
		if (!sock)
			return;
		iov.iov_base = iw->rxbuf + iw->rx_have;
		iov.iov_len = iw->rx_need - iw->rx_have;
		n = kernel_recvmsg(sock, &msg, &iov, 1, iov.iov_len,
				   MSG_DONTWAIT);
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			/* EOF: the peer closed; an error: it reset. */
			softrdma_iw_conn_lost(qp, n == 0);
			return;
		}
		iw->rx_have += n;
		if (iw->rx_have < iw->rx_need)
			continue;
		if (iw->rx_need == 2) {
			u32 ulen = get_unaligned_be16(iw->rxbuf);

			if (ulen < SOFTRDMA_TAGGED_LEN) {
				spin_lock_bh(&qp->lock);
				softrdma_iw_terminate(qp, TERM_LAYER_LLP, 0,
						      TERM_LLP_LEN);
				spin_unlock_bh(&qp->lock);
				return;
			}
			/* The CRC field is there even without CRC. */
			iw->rx_need = 2 + ulen + (-(2 + ulen) & 3) + 4;
			continue;
		}
		spin_lock_bh(&qp->lock);
		softrdma_iw_rx_fpdu(qp);
		spin_unlock_bh(&qp->lock);
		iw->rx_have = 0;
		iw->rx_need = 2;
		cond_resched();
	}
}

/* Socket callback: FPDUs arrived (softirq: only queue the receiver). */
void softrdma_iw_data_ready(struct softrdma_qp *qp)
{
	queue_work(softrdma_iw_wq, &qp->iw->rx_work);
}

/*
 * Start the transport on @cep's socket (process context, cep->mutex held):
 * the QP, in INIT or RTR, moves to RTS.
 */
int softrdma_iw_qp_start(struct softrdma_qp *qp, struct softrdma_cep *cep)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u32 mss = tcp_sk(cep->sock->sk)->mss_cache;
	int ret = 0;

	mutex_lock(&qp->state_lock);
	spin_lock_bh(&qp->lock);
	if (qp->state != IB_QPS_INIT && qp->state != IB_QPS_RTR) {
		ret = -EINVAL;
		goto out;
	}
	iw->crc = cep->crc;
	/* FPDUs as large as a segment (RFC 5044 8): length, pad, CRC. */
	iw->mulpdu = clamp_t(u32, mss, 256, SOFTRDMA_MPA_MAX_ULPDU) - 9;
	iw->tx_msn[SOFTRDMA_QN_SEND] = 1;
	iw->tx_msn[SOFTRDMA_QN_READ] = 1;
	iw->tx_msn[SOFTRDMA_QN_TERM] = 1;
	iw->rx_msn[SOFTRDMA_QN_SEND] = 1;
	iw->rx_msn[SOFTRDMA_QN_READ] = 1;
	iw->rx_msn[SOFTRDMA_QN_TERM] = 1;
	iw->irq_head = 0;
	iw->irq_tail = 0;
	iw->orq_head = 0;
	iw->orq_tail = 0;
	iw->rresp_off = 0;
	iw->term_due = false;
	iw->rtr_due = cep->p2p && cep->state == CEP_AWAIT_ACCEPT;
	iw->rx_have = 0;
	iw->rx_need = 2;
	qp->attrs.max_rd_atomic = min_t(u32, cep->ord, SOFTRDMA_MAX_RD_ATOMIC);
	qp->attrs.max_dest_rd_atomic = min_t(u32, cep->ird,
					     SOFTRDMA_MAX_RD_ATOMIC);
	/*
	 * iw_cm asks for remote reads and writes on every connected QP, but
	 * an initiator's QP reached INIT before its cm_id existed, without.
	 */
	qp->attrs.access |= IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
	qp->req.comp_idx = qp->req.send_idx;
	qp->resp.in_recv = false;
	kref_get(&cep->ref);
	iw->cep = cep;
	iw->sock = cep->sock;
	WRITE_ONCE(qp->state, IB_QPS_RTS);
	/* Work posted before RTS goes now. */
	queue_work(softrdma_iw_wq, &iw->tx_work);
	queue_work(softrdma_iw_wq, &iw->rx_work);
out:
	spin_unlock_bh(&qp->lock);
	mutex_unlock(&qp->state_lock);
	return ret;
}

/*
 * Detach the QP from its connection (process context; the socket is shut
 * down already, so the sender does not block): it enters ERR, flushed.
 */
void softrdma_iw_qp_stop(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_cep *cep;

	spin_lock_bh(&qp->lock);
	cep = iw->cep;
	iw->cep = NULL;
	iw->sock = NULL;
	if (qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET &&
	    qp->state != IB_QPS_INIT)
		softrdma_iw_qp_fail(qp);
	spin_unlock_bh(&qp->lock);
	if (!cep)
		return;
	cancel_work_sync(&iw->tx_work);
	cancel_work_sync(&iw->rx_work);
	softrdma_cep_put(cep);
}
