// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMAP over DDP over MPA (RFC 5040, 5041, 5044) on a connected TCP socket:
 * the requester, which takes WQEs off the SQ ring and sends them as FPDUs,
 * and the receiver, which places what arrives after checking every STag,
 * offset and length.
 *
 * The sender runs in the kick of the process that posted, while the
 * socket takes its output at once, and otherwise in a work item, which
 * blocks in the socket while the peer is slow to read; one at a time
 * (iw->tx_mutex). The receiver places each FPDU as soon as it is whole, in
 * the softirq that brought its last bytes (tcp_read_sock() from the socket
 * callback); a work item sees the end of the stream. Both hold qp->lock
 * only to look at or change the QP's state, never across a socket call. A
 * Send or RDMA Write completes once all of it is in the socket (over veth,
 * the peer's answer may have arrived and completed by then); an RDMA Read
 * once its response has arrived.
 */
#include <linux/crc32.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

static void softrdma_iw_timer_noop(struct timer_list *t)
{
}

static void softrdma_iw_tx_work(struct work_struct *work);
static void softrdma_iw_rx_work(struct work_struct *work);

/*
 * A poster's kick in progress on a CPU (softrdma_iw_req_kick()), and a
 * QP whose sender a softirq run in that kick left to it.
 */
struct softrdma_iw_kicker {
	struct task_struct *task;
	struct softrdma_qp *qp;		/* held with a reference */
};

static DEFINE_PER_CPU(struct softrdma_iw_kicker, softrdma_iw_kicker);

/*
 * The sender of @qp has work: a Read or Atomic Response to send (caller
 * holds qp->lock; softirq). Over veth, the request arrived in the softirq
 * that the requester's own kick ran on its way out of the socket: then
 * that kick sends the response on its way back, and no worker has to
 * be woken (a scheduler round trip, often a whole idle CPU's).
 */
static void softrdma_iw_tx_soon(struct softrdma_qp *qp)
{
	if (in_serving_softirq()) {
		struct softrdma_iw_kicker *k = this_cpu_ptr(&softrdma_iw_kicker);

		if (k->task == current && !k->qp &&
		    refcount_inc_not_zero(&qp->refs)) {
			k->qp = qp;
			return;
		}
	}
	queue_work(softrdma_iw_wq, &qp->iw->tx_work);
}

/* Give back the page the FPDU heads and tails came from. */
static void softrdma_iw_zc_drain(struct softrdma_iw_qp *iw)
{
#if SOFTRDMA_IW_ZC
	page_frag_cache_drain(&iw->zc_frag);
#endif
}

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
	mutex_init(&iw->tx_mutex);
	qp->swqe = kvcalloc(n, sizeof(*qp->swqe), GFP_KERNEL);
	qp->ssge = kvcalloc(n * qp->sq_max_sge, sizeof(*qp->ssge), GFP_KERNEL);
	qp->sinline = kvzalloc(n * qp->max_inline, GFP_KERNEL);
	iw->irq_size = SOFTRDMA_MAX_RD_ATOMIC;
	iw->orq_size = SOFTRDMA_MAX_RD_ATOMIC;
	iw->irq = kvcalloc(iw->irq_size, sizeof(*iw->irq), GFP_KERNEL);
	iw->orq = kvcalloc(iw->orq_size, sizeof(*iw->orq), GFP_KERNEL);
	iw->rxbuf = kvmalloc(SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	iw->txbuf = kvmalloc(SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	iw->zc_bv = kcalloc(SOFTRDMA_IW_ZC_PAGES + 2, sizeof(*iw->zc_bv),
			    GFP_KERNEL);
	if (!qp->swqe || !qp->ssge || !qp->sinline || !iw->irq || !iw->orq ||
	    !iw->rxbuf || !iw->txbuf || !iw->zc_bv) {
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
	kfree(iw->zc_bv);
	softrdma_iw_zc_drain(iw);
	kfree(iw);
	qp->iw = NULL;
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
	softrdma_qp_need_kick(qp);
	softrdma_ring_set_flag(&qp->rq, SOFTRDMA_RING_NEED_KICK);
	softrdma_qp_flush(qp);
	qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
	qp->req.comp_idx = qp->req.send_idx;
	qp->resp.in_recv = false;
	iw->orq_head = iw->orq_tail;
	iw->irq_head = iw->irq_tail;
	iw->rresp_off = 0;
	iw->zc_unacked = 0;
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
 * A Terminate ends the QP's stream (RFC 5040 5.3): the consumer hears of
 * it as an affiliated asynchronous error, as well as by the completions.
 * Caller holds qp->lock.
 */
static void softrdma_iw_fatal(struct softrdma_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
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
	if (qp->state != IB_QPS_ERR) {
		softrdma_iw_qp_fail(qp);
		softrdma_iw_fatal(qp);
	}
	if (iw->term_due || !iw->sock)
		return;
	iw->term_due = true;
	iw->term_layer_type = layer << 4 | etype;
	iw->term_code = code;
	/* An error in what arrived: the Terminate copies its headers. */
	iw->term_has_hdr = iw->rx_ulpdu;
	if (iw->rx_ulpdu) {
		iw->term_ulen = iw->rx_ulen;
		memcpy(iw->term_hdr, iw->rx_ulpdu,
		       min_t(u32, iw->rx_ulen, sizeof(iw->term_hdr)));
	}
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
	s->ack_wait = false;
	switch (s->wqe.opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		break;
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
	case IB_WR_BIND_MW:
		return IB_WC_SUCCESS;
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		/* RFC 7306: only with a peer that agreed (cm.c). */
		if (!qp->iw->ext)
			return IB_WC_LOC_QP_OP_ERR;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (!qp->iw->ext)
			return IB_WC_LOC_QP_OP_ERR;
		return softrdma_swqe_copy_atomic(qp, slot, body);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
	status = softrdma_swqe_copy_body(qp, slot, body, &len);
	if (status != IB_WC_SUCCESS)
		return status;
	/* A DDP message's offsets and an RDMA Read's size are 32 bits. */
	if (len > U32_MAX)
		return IB_WC_LOC_LEN_ERR;
	/* The Immediate Data message carries a Write's length in 31 bits. */
	if (s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM && len >= SOFTRDMA_IMM_SEND)
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
	u32 len = softrdma_fpdu_close_at(iw->txbuf, ulen, iw->crc,
					 iw->tx_markers, iw->tx_soff);

	iw->tx_soff += len;
	return softrdma_iw_sendmore(sock, iw->txbuf, len, more);
}

static int softrdma_iw_xmit(struct softrdma_iw_qp *iw, struct socket *sock,
			    u32 ulen)
{
	return softrdma_iw_xmit_more(iw, sock, ulen, false);
}

/*
 * Send an FPDU whose ULPDU is the DDP header (@hlen bytes) in iw->txbuf + 2
 * and @n bytes of @mr at @iova, the latter by reference: TCP takes the MR's
 * pages, not a copy, so the WQE completes only once TCP has them acked
 * (softrdma_iw_write_space()); until then a retransmission reads the user's
 * buffer again. Only without markers, and only when the socket takes all
 * of it at once: a sender never waits in the socket with the MR held.
 *
 * Return: 0, -EAGAIN if the caller has to copy instead (nothing sent), or
 * the socket's error.
 */
static int softrdma_iw_xmit_zc(struct softrdma_iw_qp *iw, struct socket *sock,
			       struct softrdma_mr *mr, u64 iova, u32 hlen,
			       u32 n, bool more)
{
#if SOFTRDMA_IW_ZC
	u32 ulen = hlen + n, pad = -(2 + ulen) & 3, len = 2 + ulen + pad + 4;
	struct msghdr msg = {
		.msg_flags = MSG_SPLICE_PAGES | MSG_NOSIGNAL | MSG_EOR,
	};
	struct bio_vec *bv = iw->zc_bv;
	u32 nbv, i, crc = 0;
	u8 *head, *tail;
	int ret = 0;

	if (iw->tx_markers || sk_stream_wspace(sock->sk) < (int)len)
		return -EAGAIN;
	nbv = softrdma_mr_pages(mr, iova, n, bv + 1, SOFTRDMA_IW_ZC_PAGES);
	if (!nbv)
		return -EAGAIN;
	/* Spliced too, so from a page of our own, never reused in flight. */
	head = page_frag_alloc(&iw->zc_frag, 2 + hlen + pad + 4, GFP_KERNEL);
	if (!head)
		return -EAGAIN;
	put_unaligned_be16(ulen, head);
	memcpy(head + 2, iw->txbuf + 2, hlen);
	tail = head + 2 + hlen;
	memset(tail, 0, pad);
	if (iw->crc) {
		crc = __crc32c_le(~0U, head, 2 + hlen);
		for (i = 1; i <= nbv; i++) {
			u8 *va = kmap_local_page(bv[i].bv_page);

			crc = __crc32c_le(crc, va + bv[i].bv_offset,
					  bv[i].bv_len);
			kunmap_local(va);
		}
		crc = ~__crc32c_le(crc, tail, pad);
	}
	put_unaligned_le32(crc, tail + pad);
	bvec_set_virt(&bv[0], head, 2 + hlen);
	bvec_set_virt(&bv[nbv + 1], tail, pad + 4);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nbv + 2, len);
	if (more)
		msg.msg_flags |= MSG_MORE;
	while (msg_data_left(&msg)) {
		int k = sock_sendmsg(sock, &msg);

		if (k <= 0) {
			ret = k ? k : -EPIPE;
			break;
		}
	}
	/* The socket holds its own references to the pages it keeps. */
	page_frag_free(head);
	iw->tx_soff += len;
	if (!ret)
		softrdma_count(iw->qp->sdev, SOFTRDMA_CNT_TX_ZCOPY);
	return ret;
#else
	return -EAGAIN;
#endif
}

/*
 * Send an FPDU whose ULPDU is the DDP header (@hlen bytes) in iw->txbuf + 2
 * and @n bytes of @mr at @iova: by reference if @zc and the socket allows
 * (softrdma_iw_xmit_zc()), copied otherwise; @more as for xmit_more.
 * Return: 1 if sent by reference, 0 if copied, or the socket's error.
 */
static int softrdma_iw_xmit_mr(struct softrdma_iw_qp *iw, struct socket *sock,
			       struct softrdma_mr *mr, u64 iova, u32 hlen,
			       u32 n, bool more, bool zc)
{
	int err = zc && n ? softrdma_iw_xmit_zc(iw, sock, mr, iova, hlen, n,
					       more) : -EAGAIN;

	if (err != -EAGAIN)
		return err ? err : 1;
	if (n)
		softrdma_mr_copy(mr, iova, iw->txbuf + 2 + hlen, n, false);
	return softrdma_iw_xmit_more(iw, sock, hlen + n, more);
}

/* Payload bytes of a segment after a DDP header of @hlen bytes. */
static u32 softrdma_iw_seg_max(struct softrdma_iw_qp *iw, u32 hlen)
{
	return iw->mulpdu - hlen;
}

/* An RFC 7306 Immediate Data message on the Send queue. */
static int softrdma_iw_send_imm(struct softrdma_iw_qp *iw, struct socket *sock,
				u8 op, u32 imm, u32 info, u32 msn)
{
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_rdmap_imm *m = (void *)(h + 1);

	softrdma_ddp_untagged_fill(h, op, true, SOFTRDMA_QN_SEND, msn, 0, 0);
	/* The WQE holds the immediate in network order already. */
	memcpy(&m->imm, &imm, sizeof(m->imm));
	m->info = htonl(info);
	if (softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*m)))
		return -EPIPE;
	return 0;
}

/* An RFC 7306 Atomic Request for the WQE at @idx; its SQ index names it. */
static int softrdma_iw_send_areq(struct softrdma_qp *qp, struct socket *sock,
				 u32 idx, u32 msn)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_swqe *s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_rdmap_areq *a = (void *)(h + 1);

	softrdma_ddp_untagged_fill(h, RDMAP_ATOMIC_REQ, true, SOFTRDMA_QN_AREQ,
				   msn, 0, 0);
	a->req_id = htonl(idx);
	a->stag = htonl(s->wqe.rkey);
	a->to = cpu_to_be64(s->wqe.remote_addr);
	if (s->wqe.opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
		/* Every bit compared, every bit swapped. */
		a->opcode = htonl(SOFTRDMA_ATOMIC_CMP_SWAP);
		a->swap_add = cpu_to_be64(s->wqe.swap);
		a->swap_add_mask = cpu_to_be64(U64_MAX);
		a->compare = cpu_to_be64(s->wqe.compare_add);
		a->compare_mask = cpu_to_be64(U64_MAX);
	} else {
		/* A plain add: no field boundaries in the mask. */
		a->opcode = htonl(SOFTRDMA_ATOMIC_FETCH_ADD);
		a->swap_add = cpu_to_be64(s->wqe.compare_add);
		a->swap_add_mask = 0;
		a->compare = 0;
		a->compare_mask = 0;
	}
	if (softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*a)))
		return -EPIPE;
	return 0;
}

/*
 * Send the WQE at @idx (its kernel copy); @zc: set if some of it went by
 * reference (it completes when TCP has it acked). Return: 0 or -errno.
 */
static int softrdma_iw_send_wqe(struct softrdma_qp *qp, struct socket *sock,
				u32 idx, u32 msn, bool *zc)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	struct softrdma_sge *sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	bool tagged = s->wqe.opcode == IB_WR_RDMA_WRITE ||
		      s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	u32 hlen = tagged ? SOFTRDMA_TAGGED_LEN : SOFTRDMA_UNTAGGED_LEN;
	bool se = s->wqe.flags & SOFTRDMA_WQE_SOLICITED;
	struct softrdma_mr *zmr = NULL;
	u8 *u = iw->txbuf + 2;
	u32 off = 0, op;
	int err = 0;

	if (softrdma_wr_is_atomic(s->wqe.opcode))
		return softrdma_iw_send_areq(qp, sock, idx, msn);
	if (s->wqe.opcode == IB_WR_SEND_WITH_IMM) {
		/* The immediate goes first, then the Send it belongs to. */
		err = softrdma_iw_send_imm(iw, sock, RDMAP_IMM,
					   s->wqe.imm_data, SOFTRDMA_IMM_SEND,
					   msn++);
		if (err)
			return err;
	}

	if (s->wqe.opcode == IB_WR_RDMA_READ) {
		struct softrdma_ddp_untagged *h = (void *)u;
		struct softrdma_rdmap_rreq *r = (void *)(u + hlen);

		softrdma_ddp_untagged_fill(h, RDMAP_READ_REQ, true,
					   SOFTRDMA_QN_READ, msn, 0, 0);
		/* The sink is the first SGE; the response lands by offset. */
		r->sink_stag = htonl(s->wqe.num_sge ? sge[0].lkey : 0);
		r->sink_to = cpu_to_be64(s->wqe.num_sge ? sge[0].addr : 0);
		r->len = htonl(s->len);
		r->src_stag = htonl(s->wqe.rkey);
		r->src_to = cpu_to_be64(s->wqe.remote_addr);
		return softrdma_iw_xmit(iw, sock, hlen + SOFTRDMA_RREQ_LEN);
	}

	/* A large payload in one SGE may go by reference. */
	if (SOFTRDMA_IW_ZC && s->len >= SOFTRDMA_IW_ZC_MIN &&
	    s->wqe.num_sge == 1 && !(s->wqe.flags & SOFTRDMA_WQE_INLINE) &&
	    !iw->tx_markers) {
		zmr = softrdma_mr_get(qp->sdev, qp->ibqp.pd, sge[0].lkey,
				      sge[0].addr, s->len, 0, &err);
		if (!zmr)
			return err;
	}
	if (tagged) {
		op = RDMAP_WRITE;
	} else {
		if (s->wqe.opcode == IB_WR_SEND_WITH_INV)
			op = se ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV;
		else
			op = se ? RDMAP_SEND_SE : RDMAP_SEND;
	}
	do {
		bool last;
		u32 n = softrdma_ddp_seg(s->len, off,
					 softrdma_iw_seg_max(iw, hlen), &last);

		if (tagged)
			softrdma_ddp_tagged_fill((void *)u, op, last,
						 s->wqe.rkey,
						 s->wqe.remote_addr + off);
		else
			softrdma_ddp_untagged_fill((void *)u, op, last,
						   SOFTRDMA_QN_SEND, msn, off,
						   op == RDMAP_SEND_INV ||
						   op == RDMAP_SEND_SE_INV ?
						   s->wqe.imm_data : 0);
		if (n && zmr) {
			err = softrdma_iw_xmit_mr(iw, sock, zmr,
						  sge[0].addr + off, hlen, n,
						  !last, true);
			if (err < 0)
				break;
			if (err)
				*zc = true;
			err = 0;
			off += n;
			continue;
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
			break;
		off += n;
	} while (off < s->len);
	if (zmr)
		softrdma_mr_put(zmr);
	if (err)
		return -EPIPE;
	if (s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		/* After the data it announces, with the Write's length. */
		return softrdma_iw_send_imm(iw, sock, se ? RDMAP_IMM_SE : RDMAP_IMM,
					    s->wqe.imm_data, s->len, msn);
	}
	return 0;
}

/* Answer an RDMA Read Request: tagged Read Response segments. */
static int softrdma_iw_send_rresp(struct softrdma_qp *qp, struct socket *sock,
				  const struct softrdma_iw_rresp *rr, u32 msn)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u32 hlen = SOFTRDMA_TAGGED_LEN, off = 0;
	struct softrdma_mr *mr = NULL;
	u8 *u = iw->txbuf + 2;
	int err;

	if (rr->atomic) {
		struct softrdma_ddp_untagged *h = (void *)u;
		struct softrdma_rdmap_aresp *a = (void *)(h + 1);

		softrdma_ddp_untagged_fill(h, RDMAP_ATOMIC_RESP, true,
					   SOFTRDMA_QN_ARESP, msn, 0, 0);
		a->req_id = htonl(rr->req_id);
		a->orig = cpu_to_be64(rr->orig);
		if (softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*a)))
			return -EPIPE;
		return 0;
	}
	if (rr->len) {
		/* Checked on arrival; held now for the copy. */
		mr = softrdma_rkey_get(qp, rr->src_stag, rr->src_to, rr->len,
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mr)
			return err;
	}
	do {
		bool last;
		u32 n = softrdma_ddp_seg(rr->len, off,
					 softrdma_iw_seg_max(iw, hlen), &last);

		softrdma_ddp_tagged_fill((void *)u, RDMAP_READ_RESP, last,
					 rr->sink_stag, rr->sink_to + off);
		/*
		 * By reference too, with no wait for the ack: the requester
		 * completes (and may let the buffer change) only once all of
		 * it has arrived, and TCP drops a retransmission of what did.
		 */
		err = softrdma_iw_xmit_mr(iw, sock, mr, rr->src_to + off, hlen,
					  n, !last, rr->len >= SOFTRDMA_IW_ZC_MIN);
		if (err < 0) {
			err = -EPIPE;
			break;
		}
		err = 0;
		off += n;
	} while (off < rr->len);
	if (mr)
		softrdma_mr_put(mr);
	return err;
}

/* Send a Terminate, with the header of the ULPDU at fault if known. */
static int softrdma_iw_send_term(struct softrdma_qp *qp, struct socket *sock,
				 u8 layer_type, u8 code, const u8 *hdr,
				 u32 ulen, u32 msn)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_term_cause tc = {
		.layer = layer_type >> 4,
		.etype = layer_type & 15,
		.code = code,
	};

	softrdma_ddp_untagged_fill(h, RDMAP_TERMINATE, true, SOFTRDMA_QN_TERM,
				   msn, 0, 0);
	return softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN +
				softrdma_term_fill((u8 *)(h + 1), &tc, hdr,
						   ulen));
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
		softrdma_ddp_tagged_fill((void *)u, RDMAP_WRITE, true, 0, 0);
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
	u32 op = READ_ONCE(w->opcode);

	/* A local operation waits for everything before it to complete. */
	if (softrdma_wr_is_local(op))
		return qp->req.comp_idx == idx;
	if (!reads)
		return true;
	if (READ_ONCE(w->flags) & SOFTRDMA_WQE_FENCE)
		return false;
	return !softrdma_wr_is_rd_atomic(op) ||
	       reads < clamp_t(u32, qp->attrs.max_rd_atomic, 1, iw->orq_size);
}

/*
 * May a poster's kick send @len more bytes in its own context? Only
 * while the socket takes them without waiting, and only so much: the rest
 * is the work item's.
 */
static bool softrdma_iw_direct_ok(struct socket *sock, u64 len)
{
	int room = sk_stream_wspace(sock->sk);

	/* The FPDUs' headers, pads, CRCs and markers: well under 1/8. */
	return len <= SOFTRDMA_IW_DIRECT_MAX && room > 0 &&
	       len + len / 8 + 512 <= room;
}

/*
 * The sender (iw->tx_mutex held): Terminate, Read Responses, then the SQ.
 * @direct: in a poster's kick, which hands large or blocked output to
 * the work item.
 */
static void softrdma_iw_tx(struct softrdma_qp *qp, bool direct)
{
	struct softrdma_iw_qp *iw = qp->iw;

	for (;;) {
		struct softrdma_iw_rresp rr;
		struct softrdma_swqe *s;
		struct socket *sock;
		u32 idx, prod, status, msn = 0;
		bool read, zc = false;
		int err;

		spin_lock_bh(&qp->lock);
		sock = iw->sock;
		if (!sock) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		if (iw->term_due) {
			u8 lt = iw->term_layer_type, code = iw->term_code;
			bool hdr = iw->term_has_hdr;

			iw->term_due = false;
			msn = iw->tx_msn[SOFTRDMA_QN_TERM]++;
			spin_unlock_bh(&qp->lock);
			/* term_hdr stays: no second Terminate is due. */
			softrdma_iw_send_term(qp, sock, lt, code,
					      hdr ? iw->term_hdr : NULL,
					      iw->term_ulen, msn);
			softrdma_iw_conn_lost(qp, true);
			return;
		}
		if (iw->irq_head != iw->irq_tail) {
			rr = iw->irq[iw->irq_head % iw->irq_size];
			if (direct && !softrdma_iw_direct_ok(sock, rr.len))
				goto hand_over;
			iw->irq_head++;
			if (rr.atomic)
				msn = iw->tx_msn[SOFTRDMA_QN_ARESP]++;
			spin_unlock_bh(&qp->lock);
			err = softrdma_iw_send_rresp(qp, sock, &rr, msn);
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
		s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
		/* A Read Request is small whatever it asks for. */
		if (direct && status == IB_WC_SUCCESS &&
		    !softrdma_iw_direct_ok(sock, s->wqe.opcode ==
					   IB_WR_RDMA_READ ? 0 : s->len))
			goto hand_over;
		qp->req.send_idx++;
		if (status != IB_WC_SUCCESS) {
			softrdma_sq_complete(qp, idx, status);
			qp->req.comp_idx = idx + 1;
			softrdma_iw_qp_fail(qp);
			spin_unlock_bh(&qp->lock);
			softrdma_iw_conn_lost(qp, false);
			return;
		}
		if (softrdma_wr_is_local(s->wqe.opcode)) {
			status = softrdma_local_op(qp, s);
			if (status != IB_WC_SUCCESS) {
				softrdma_sq_complete(qp, idx, status);
				qp->req.comp_idx = idx + 1;
				softrdma_iw_qp_fail(qp);
				spin_unlock_bh(&qp->lock);
				softrdma_iw_conn_lost(qp, false);
				return;
			}
			s->done = true;
			softrdma_iw_advance(qp);
			spin_unlock_bh(&qp->lock);
			continue;
		}
		read = softrdma_wr_is_rd_atomic(s->wqe.opcode);
		if (read) {
			iw->orq[iw->orq_tail % iw->orq_size] = idx;
			iw->orq_tail++;
			msn = s->wqe.opcode == IB_WR_RDMA_READ ?
			      iw->tx_msn[SOFTRDMA_QN_READ]++ :
			      iw->tx_msn[SOFTRDMA_QN_AREQ]++;
		} else if (s->wqe.opcode == IB_WR_SEND_WITH_IMM) {
			/* Immediate Data, then the Send: two messages. */
			msn = iw->tx_msn[SOFTRDMA_QN_SEND];
			iw->tx_msn[SOFTRDMA_QN_SEND] += 2;
		} else if (s->wqe.opcode != IB_WR_RDMA_WRITE) {
			/* A Send, or a Write's Immediate Data message. */
			msn = iw->tx_msn[SOFTRDMA_QN_SEND]++;
		}
		spin_unlock_bh(&qp->lock);

		err = softrdma_iw_send_wqe(qp, sock, idx, msn, &zc);

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
		if (!read && zc) {
			/* We are the socket's only writer. */
			s->ack_seq = READ_ONCE(tcp_sk(sock->sk)->write_seq);
			s->ack_wait = true;
			iw->zc_unacked++;
		} else if (!read) {
			s->done = true;
			softrdma_iw_advance(qp);
		}
		spin_unlock_bh(&qp->lock);
		if (zc)
			softrdma_iw_write_space(qp, sock->sk);
		cond_resched();
	}

hand_over:
	queue_work(softrdma_iw_wq, &iw->tx_work);
	spin_unlock_bh(&qp->lock);
}

static void softrdma_iw_tx_work(struct work_struct *work)
{
	struct softrdma_iw_qp *iw = container_of(work, struct softrdma_iw_qp,
						 tx_work);

	mutex_lock(&iw->tx_mutex);
	softrdma_iw_tx(iw->qp, false);
	mutex_unlock(&iw->tx_mutex);
}

/*
 * Complete the WQEs sent by reference whose last byte TCP has seen acked
 * (process context, or the socket callback when an ACK came). While some
 * wait, SOCK_NOSPACE stays set: TCP calls sk_write_space for every ACK
 * then (tcp_check_space()).
 */
void softrdma_iw_write_space(struct softrdma_qp *qp, struct sock *sk)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct socket *sock = READ_ONCE(sk->sk_socket);

	for (;;) {
		u32 una = READ_ONCE(tcp_sk(sk)->snd_una), i;
		bool wait;

		spin_lock_bh(&qp->lock);
		for (i = qp->req.comp_idx;
		     iw->zc_unacked && i != qp->req.send_idx; i++) {
			struct softrdma_swqe *s =
				&qp->swqe[i & (qp->sq.num_slots - 1)];

			if (!s->ack_wait)
				continue;
			if (after(s->ack_seq, una))
				break;
			s->ack_wait = false;
			s->done = true;
			iw->zc_unacked--;
		}
		softrdma_iw_advance(qp);
		wait = iw->zc_unacked;
		spin_unlock_bh(&qp->lock);
		if (!wait || !sock)
			return;
		set_bit(SOCK_NOSPACE, &sock->flags);
		/* Pairs with tcp_check_space(): it sees the bit, or we its ACK. */
		smp_mb__after_atomic();
		if (READ_ONCE(tcp_sk(sk)->snd_una) == una)
			return;
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

/* The kick: the sender runs in its work item. Caller holds qp->lock. */
void softrdma_iw_req_run(struct softrdma_qp *qp)
{
	if (qp->iw->sock)
		queue_work(softrdma_iw_wq, &qp->iw->tx_work);
}

/* Send what a softirq left to a kick (softrdma_iw_tx_soon()). */
static void softrdma_iw_run_left(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;

	if (mutex_trylock(&iw->tx_mutex)) {
		softrdma_iw_tx(qp, true);
		mutex_unlock(&iw->tx_mutex);
	} else {
		queue_work(softrdma_iw_wq, &iw->tx_work);
	}
	softrdma_qp_put(qp);
}

/*
 * A process's kick (process context, no lock held): a connected QP's
 * WQEs go out in the poster's context, as far as the socket takes them at
 * once. Waking a worker instead costs a scheduler round trip, a whole tick
 * when the poster spins on the CPU the worker wakes on.
 */
int softrdma_iw_req_kick(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;
	bool direct;

	spin_lock_bh(&qp->lock);
	direct = qp->state == IB_QPS_RTS && iw->sock;
	spin_unlock_bh(&qp->lock);
	if (!direct)
		return softrdma_qp_kick(qp);
	if (mutex_trylock(&iw->tx_mutex)) {
		struct softrdma_iw_kicker *k;
		struct softrdma_qp *left = NULL;
		bool owner;

		/* Softirqs run on this CPU in our context: stay on it. */
		migrate_disable();
		local_bh_disable();
		k = this_cpu_ptr(&softrdma_iw_kicker);
		owner = !k->task;
		if (owner)
			k->task = current;
		local_bh_enable();
		softrdma_iw_tx(qp, true);
		mutex_unlock(&iw->tx_mutex);
		if (owner) {
			local_bh_disable();
			k->task = NULL;
			left = k->qp;
			k->qp = NULL;
			local_bh_enable();
		}
		migrate_enable();
		if (left)
			softrdma_iw_run_left(left);
		return 0;
	}
	/* The sender is busy; it may be past its last look at the ring. */
	spin_lock_bh(&qp->lock);
	softrdma_iw_req_run(qp);
	spin_unlock_bh(&qp->lock);
	return 0;
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

/* An untagged request's remote key failed softrdma_rkey_get() with @err. */
static void softrdma_iw_rkey_error(struct softrdma_qp *qp, int err)
{
	softrdma_iw_terminate(qp, TERM_LAYER_RDMAP, TERM_RDMAP_PROTECTION,
			      err == -EACCES ? TERM_RDMAP_ACCESS :
			      err == -ERANGE ? TERM_RDMAP_BOUNDS :
			      TERM_RDMAP_INVALID_STAG);
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
	mr = softrdma_rkey_get(qp, stag, to, n, IB_ACCESS_REMOTE_WRITE, &err);
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
	if (s->wqe.opcode != IB_WR_RDMA_READ) {
		/* An atomic is answered first. */
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
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
	if (softrdma_iw_req_pending(qp))
		queue_work(softrdma_iw_wq, &iw->tx_work);
}

static void softrdma_iw_complete_recv(struct softrdma_qp *qp, u32 status,
				      u32 byte_len, bool solicited)
{
	struct softrdma_cqe cqe = {};

	cqe.status = status;
	cqe.opcode = IB_WC_RECV;
	cqe.byte_len = byte_len;
	softrdma_recv_complete(qp, &cqe, solicited);
}

/*
 * RFC 7306 Immediate Data: either the immediate of the Send that follows,
 * kept for it, or that of the RDMA Write before it, which consumes a
 * receive of its own.
 */
static void softrdma_iw_rx_imm(struct softrdma_qp *qp, u8 op, bool last,
			       u32 msn, u32 mo, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_rdmap_imm m;
	struct softrdma_cqe cqe = {};
	u32 info;

	if (msn != iw->rx_msn[SOFTRDMA_QN_SEND] || qp->resp.in_recv) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_MSN_RANGE);
		return;
	}
	if (!last || mo || n != sizeof(m)) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_TOO_LONG);
		return;
	}
	memcpy(&m, p, sizeof(m));
	info = ntohl(m.info);
	if (info & SOFTRDMA_IMM_SEND) {
		if (iw->imm_due) {
			softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
					      TERM_RDMAP_OPERATION,
					      TERM_RDMAP_OPCODE);
			return;
		}
		iw->rx_msn[SOFTRDMA_QN_SEND]++;
		iw->imm_due = true;
		iw->imm = m.imm;
		return;
	}
	if (!softrdma_recv_take(qp)) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_NO_BUFFER);
		return;
	}
	iw->rx_msn[SOFTRDMA_QN_SEND]++;
	cqe.status = IB_WC_SUCCESS;
	cqe.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	cqe.byte_len = info;
	cqe.flags = SOFTRDMA_CQE_WITH_IMM;
	memcpy(&cqe.imm_data, &m.imm, sizeof(cqe.imm_data));
	softrdma_recv_complete(qp, &cqe, op == RDMAP_IMM_SE);
}

static void softrdma_iw_rx_send(struct softrdma_qp *qp, u8 op, bool last,
				u32 inv_stag, u32 msn, u32 mo, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	bool inv = op == RDMAP_SEND_INV || op == RDMAP_SEND_SE_INV;
	bool se = op == RDMAP_SEND_SE || op == RDMAP_SEND_SE_INV;
	struct softrdma_term_cause tc;
	struct softrdma_cqe cqe = {};
	int err;

	if (op == RDMAP_IMM || op == RDMAP_IMM_SE) {
		softrdma_iw_rx_imm(qp, op, last, msn, mo, p, n);
		return;
	}
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
	if (!qp->resp.in_recv && !softrdma_recv_take(qp)) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_NO_BUFFER);
		return;
	}
	/* Segments of a message arrive in order on the stream. */
	if (!softrdma_ddp_seq_check(msn, mo, msn, qp->resp.roff, &tc)) {
		softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR, 0, false);
		softrdma_iw_terminate(qp, tc.layer, tc.etype, tc.code);
		return;
	}
	err = n ? softrdma_sge_copy(qp, qp->resp.rsge, qp->resp.rwqe.num_sge,
				    mo, p, n, true, IB_ACCESS_LOCAL_WRITE) : 0;
	if (err == -EINVAL) {
		/* Past the receive's end: the message is too long. */
		softrdma_iw_complete_recv(qp, IB_WC_LOC_LEN_ERR, 0, false);
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_TOO_LONG);
		return;
	}
	if (err) {
		/* The receive's own keys are bad: not the sender's fault. */
		softrdma_iw_complete_recv(qp, IB_WC_LOC_PROT_ERR, 0, false);
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_CATASTROPHIC,
				      0);
		return;
	}
	qp->resp.roff = mo + n;
	if (!last)
		return;
	iw->rx_msn[SOFTRDMA_QN_SEND]++;
	cqe.status = IB_WC_SUCCESS;
	cqe.opcode = IB_WC_RECV;
	cqe.byte_len = qp->resp.roff;
	if (inv) {
		/*
		 * Only type 2 windows bound through this QP and
		 * fast-registration MRs of its PD may be invalidated remotely
		 * (RFC 5040 6.10).
		 */
		if (softrdma_remote_inv(qp, inv_stag)) {
			softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR,
						  qp->resp.roff, false);
			softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
					      TERM_RDMAP_PROTECTION,
					      TERM_RDMAP_CANT_INVALIDATE);
			return;
		}
		cqe.flags = SOFTRDMA_CQE_WITH_INV;
		cqe.imm_data = inv_stag;
	} else if (iw->imm_due) {
		/* A Send with Immediate Data: its immediate came first. */
		iw->imm_due = false;
		cqe.flags = SOFTRDMA_CQE_WITH_IMM;
		memcpy(&cqe.imm_data, &iw->imm, sizeof(cqe.imm_data));
	}
	softrdma_recv_complete(qp, &cqe, se);
}

/*
 * Checks for a message of one segment on queue @qn (Read Request, Atomic
 * Request or Response): opcode @want, the queue's next MSN, @size bytes.
 * Return: true if it may be taken; else a Terminate is on its way.
 */
static bool softrdma_iw_rx_one(struct softrdma_qp *qp, u8 op, u8 want, u32 qn,
			       u32 msn, bool last, u32 n, u32 size)
{
	if (op != want)
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
	else if (msn != qp->iw->rx_msn[qn])
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_MSN_RANGE);
	else if (!last || n != size)
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_TOO_LONG);
	else
		return true;
	return false;
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

	if (!softrdma_iw_rx_one(qp, op, RDMAP_READ_REQ, SOFTRDMA_QN_READ,
				msn, last, n, SOFTRDMA_RREQ_LEN))
		return;
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
		mr = softrdma_rkey_get(qp, ntohl(req.src_stag),
				       be64_to_cpu(req.src_to), ntohl(req.len),
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mr) {
			softrdma_iw_rkey_error(qp, err);
			return;
		}
		softrdma_mr_put(mr);
	}
	rr = &iw->irq[iw->irq_tail % iw->irq_size];
	rr->atomic = false;
	rr->sink_stag = ntohl(req.sink_stag);
	rr->sink_to = be64_to_cpu(req.sink_to);
	rr->len = ntohl(req.len);
	rr->src_stag = ntohl(req.src_stag);
	rr->src_to = be64_to_cpu(req.src_to);
	iw->irq_tail++;
	softrdma_iw_tx_soon(qp);
}

/* An RFC 7306 Atomic Request: carried out now, answered in IRD order. */
static void softrdma_iw_rx_areq(struct softrdma_qp *qp, u8 op, bool last,
				u32 msn, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_rdmap_areq a;
	struct softrdma_iw_rresp *rr;
	struct softrdma_mr *mr;
	u32 ird, aop;
	bool cmp;
	u64 to, orig;
	int err;

	if (!softrdma_iw_rx_one(qp, op, RDMAP_ATOMIC_REQ, SOFTRDMA_QN_AREQ,
				msn, last, n, sizeof(a)))
		return;
	/* Atomics and READs share the IRD. */
	ird = clamp_t(u32, qp->attrs.max_dest_rd_atomic, 1, iw->irq_size);
	if (iw->irq_tail - iw->irq_head >= ird) {
		softrdma_iw_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_NO_BUFFER);
		return;
	}
	memcpy(&a, p, sizeof(a));
	iw->rx_msn[SOFTRDMA_QN_AREQ]++;
	aop = ntohl(a.opcode) & 0xf;
	cmp = aop == SOFTRDMA_ATOMIC_CMP_SWAP;
	/* Plain compare-and-swap and fetch-and-add only: no partial masks. */
	if ((!cmp && aop != SOFTRDMA_ATOMIC_FETCH_ADD) ||
	    (cmp && (a.swap_add_mask != cpu_to_be64(U64_MAX) ||
		     a.compare_mask != cpu_to_be64(U64_MAX))) ||
	    (!cmp && a.swap_add_mask)) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	if (!(qp->attrs.access & IB_ACCESS_REMOTE_ATOMIC)) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
		return;
	}
	to = be64_to_cpu(a.to);
	mr = (to & 7) ? NULL :
	     softrdma_rkey_get(qp, ntohl(a.stag), to, sizeof(u64),
			       IB_ACCESS_REMOTE_ATOMIC, &err);
	if (to & 7)
		err = -ERANGE;
	if (mr) {
		err = softrdma_mr_atomic(mr, to, cmp, be64_to_cpu(a.compare),
					 be64_to_cpu(a.swap_add), &orig);
		softrdma_mr_put(mr);
		if (err)
			err = -ERANGE;
	}
	if (!mr || err) {
		softrdma_iw_rkey_error(qp, err);
		return;
	}
	rr = &iw->irq[iw->irq_tail % iw->irq_size];
	rr->atomic = true;
	rr->req_id = ntohl(a.req_id);
	rr->orig = orig;
	iw->irq_tail++;
	softrdma_iw_tx_soon(qp);
}

/* An RFC 7306 Atomic Response: for the oldest of our reads and atomics. */
static void softrdma_iw_rx_aresp(struct softrdma_qp *qp, u8 op, bool last,
				 u32 msn, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = qp->iw;
	struct softrdma_rdmap_aresp a;
	struct softrdma_swqe *s;
	u32 idx, slot;
	u64 orig;

	if (!softrdma_iw_rx_one(qp, op, RDMAP_ATOMIC_RESP, SOFTRDMA_QN_ARESP,
				msn, last, n, sizeof(a)))
		return;
	memcpy(&a, p, sizeof(a));
	idx = iw->orq[iw->orq_head % iw->orq_size];
	slot = idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	if (iw->orq_head == iw->orq_tail ||
	    !softrdma_wr_is_atomic(s->wqe.opcode) || ntohl(a.req_id) != idx) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	iw->rx_msn[SOFTRDMA_QN_ARESP]++;
	orig = be64_to_cpu(a.orig);
	if (softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge, 1,
			      0, &orig, sizeof(orig), true,
			      IB_ACCESS_LOCAL_WRITE)) {
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_LOC_PROT_ERR);
		qp->req.comp_idx++;
		softrdma_iw_qp_fail(qp);
		if (iw->cep)
			softrdma_cep_close(iw->cep, false);
		return;
	}
	iw->orq_head++;
	s->done = true;
	softrdma_iw_advance(qp);
	/* An ORD slot is free: what waited for it may go. */
	if (softrdma_iw_req_pending(qp))
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
	softrdma_iw_fatal(qp);
	if (qp->iw->cep)
		softrdma_cep_close(qp->iw->cep, true);
}

/* One whole FPDU in iw->rxbuf. Caller holds qp->lock. */
static void softrdma_iw_rx_fpdu(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;
	u8 *f = iw->rxbuf, *u = f + 2;
	struct softrdma_term_cause tc;
	u32 ulen, n;
	bool last;
	int err;
	u8 op;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return;
	/* The CRC, then the markers, which leave. */
	err = softrdma_fpdu_check(f, iw->rx_need, iw->rx_soff, iw->crc,
				  iw->rx_markers);
	if (err == -EBADMSG)
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
	if (err) {
		softrdma_iw_terminate(qp, TERM_LAYER_LLP, 0,
				      err == -EBADMSG ? TERM_LLP_CRC :
				      TERM_LLP_MARKER);
		return;
	}
	ulen = get_unaligned_be16(f);
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_PKTS);
	op = u[1] & SOFTRDMA_RDMAP_OP_MASK;
	last = u[0] & SOFTRDMA_DDP_L;
	iw->rx_ulpdu = u;
	iw->rx_ulen = ulen;
	if (!softrdma_ddp_hdr_check(u, ulen, iw->ext ? SOFTRDMA_QN_NUM :
				    SOFTRDMA_QN_AREQ, &tc)) {
		softrdma_iw_terminate(qp, tc.layer, tc.etype, tc.code);
		iw->rx_ulpdu = NULL;
		return;
	}
	/* RFC 7306 opcodes from a peer that did not agree to them. */
	if (op >= RDMAP_FIRST_EXT && !iw->ext) {
		softrdma_iw_terminate(qp, TERM_LAYER_RDMAP,
				      TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		iw->rx_ulpdu = NULL;
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

		memcpy(&h, u, sizeof(h));
		n = ulen - SOFTRDMA_UNTAGGED_LEN;
		switch (ntohl(h.qn)) {
		case SOFTRDMA_QN_SEND:
			softrdma_iw_rx_send(qp, op, last, ntohl(h.inv_stag),
					    ntohl(h.msn), ntohl(h.mo), p, n);
			break;
		case SOFTRDMA_QN_AREQ:
			if (!iw->ext)
				goto bad_qn;
			softrdma_iw_rx_areq(qp, op, last, ntohl(h.msn), p, n);
			break;
		case SOFTRDMA_QN_ARESP:
			if (!iw->ext)
				goto bad_qn;
			softrdma_iw_rx_aresp(qp, op, last, ntohl(h.msn), p, n);
			break;
		case SOFTRDMA_QN_READ:
			softrdma_iw_rx_rreq(qp, op, last, ntohl(h.msn), p, n);
			break;
		case SOFTRDMA_QN_TERM:
			softrdma_iw_rx_term(qp, p, n);
			break;
		default:
bad_qn:
			softrdma_iw_terminate(qp, TERM_LAYER_DDP,
					      TERM_DDP_UNTAGGED, TERM_DDP_U_QN);
			break;
		}
	}
	iw->rx_ulpdu = NULL;
}

/*
 * The FPDU being assembled has iw->rx_need bytes: its MPA header, after
 * which the whole length is known, or all of it, which is handled (qp->lock
 * taken here). Return: false if the stream cannot be parsed on.
 */
static bool softrdma_iw_rx_step(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = qp->iw;

	if (iw->rx_need == softrdma_mpa_hdr_len(iw->rx_soff, iw->rx_markers)) {
		u32 ulen, len;

		len = softrdma_mpa_fpdu_len(iw->rxbuf, iw->rx_soff,
					    iw->rx_markers, &ulen);
		if (ulen < SOFTRDMA_TAGGED_LEN) {
			spin_lock_bh(&qp->lock);
			softrdma_iw_terminate(qp, TERM_LAYER_LLP, 0,
					      TERM_LLP_LEN);
			spin_unlock_bh(&qp->lock);
			return false;
		}
		/* The CRC field is there even without CRC. */
		iw->rx_need = len;
		return true;
	}
	spin_lock_bh(&qp->lock);
	softrdma_iw_rx_fpdu(qp);
	spin_unlock_bh(&qp->lock);
	iw->rx_soff += iw->rx_need;
	iw->rx_have = 0;
	iw->rx_need = softrdma_mpa_hdr_len(iw->rx_soff, iw->rx_markers);
	return true;
}

/* tcp_read_sock() actor: assemble FPDUs from @skb, handle each one whole. */
static int softrdma_iw_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
				unsigned int off, size_t len)
{
	struct softrdma_qp *qp = desc->arg.data;
	struct softrdma_iw_qp *iw = qp->iw;
	size_t done = 0;

	/* After a framing error only the close is awaited: drop the rest. */
	while (done < len && !iw->rx_stop) {
		u32 n = min_t(size_t, len - done, iw->rx_need - iw->rx_have);

		if (skb_copy_bits(skb, off + done, iw->rxbuf + iw->rx_have, n))
			break;
		iw->rx_have += n;
		done += n;
		if (iw->rx_have == iw->rx_need && !softrdma_iw_rx_step(qp))
			iw->rx_stop = true;
	}
	return len;
}

/*
 * Receive what the socket holds; its lock is held (owned, or bh-locked in
 * the softirq that brought the data). Each FPDU is placed as soon as it
 * is whole, in that softirq when there is one: no worker is woken.
 */
static void softrdma_iw_rx_read(struct softrdma_qp *qp, struct sock *sk)
{
	read_descriptor_t desc = {
		.arg.data = qp,
		.count = 1,
	};

	tcp_read_sock(sk, &desc, softrdma_iw_rx_actor);
}

/*
 * The receiver's work item: what arrived before the QP started, and the
 * end of the stream (EOF: the peer closed; an error: it reset).
 */
static void softrdma_iw_rx_work(struct work_struct *work)
{
	struct softrdma_iw_qp *iw = container_of(work, struct softrdma_iw_qp,
						 rx_work);
	struct softrdma_qp *qp = iw->qp;
	bool eof = false, reset = false;
	struct socket *sock;
	struct sock *sk;

	spin_lock_bh(&qp->lock);
	sock = iw->sock;
	spin_unlock_bh(&qp->lock);
	if (!sock)
		return;
	sk = sock->sk;
	lock_sock(sk);
	softrdma_iw_rx_read(qp, sk);
	if (skb_queue_empty(&sk->sk_receive_queue)) {
		reset = sk->sk_err;
		eof = sk->sk_shutdown & RCV_SHUTDOWN;
	}
	release_sock(sk);
	if (reset || eof)
		softrdma_iw_conn_lost(qp, !reset);
}

/* Socket callback: FPDUs arrived (softirq, or the socket's owner). */
void softrdma_iw_data_ready(struct softrdma_qp *qp, struct sock *sk)
{
	softrdma_iw_rx_read(qp, sk);
}

/* Socket callback: the connection's state changed (any context). */
void softrdma_iw_rx_kick(struct softrdma_qp *qp)
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
	int ret = 0, i;

	mutex_lock(&qp->state_lock);
	spin_lock_bh(&qp->lock);
	/*
	 * Being destroyed: the teardown, which looks for a connection under
	 * qp->lock after taking the QP out of the table, found none.
	 */
	if ((qp->state != IB_QPS_INIT && qp->state != IB_QPS_RTR) ||
	    xa_load(&qp->sdev->qps, qp->ibqp.qp_num) != qp) {
		ret = -EINVAL;
		goto out;
	}
	iw->crc = cep->crc;
	/* Our stream starts here, or at the initiator's RTR (cm.c). */
	if (!cep->p2p || cep->state != CEP_AWAIT_REP)
		iw->tx_soff = 0;
	iw->tx_markers = cep->tx_markers;
	iw->rx_markers = cep->rx_markers;
	/* FPDUs as large as a segment (RFC 5044 8): length, pad, CRC. */
	iw->mulpdu = softrdma_mpa_mulpdu(mss, iw->tx_markers);
	for (i = 0; i < SOFTRDMA_QN_NUM; i++) {
		iw->tx_msn[i] = 1;
		iw->rx_msn[i] = 1;
	}
	iw->ext = cep->ext;
	iw->imm_due = false;
	iw->irq_head = 0;
	iw->irq_tail = 0;
	iw->orq_head = 0;
	iw->orq_tail = 0;
	iw->rresp_off = 0;
	iw->term_due = false;
	iw->rtr_due = cep->p2p && cep->state == CEP_AWAIT_ACCEPT;
	iw->rx_soff = 0;
	iw->rx_stop = false;
	iw->rx_have = 0;
	iw->rx_need = softrdma_mpa_hdr_len(0, iw->rx_markers);
	qp->attrs.max_rd_atomic = min_t(u32, cep->ord, SOFTRDMA_MAX_RD_ATOMIC);
	qp->attrs.max_dest_rd_atomic = min_t(u32, cep->ird,
					     SOFTRDMA_MAX_RD_ATOMIC);
	/*
	 * iw_cm asks for remote reads and writes on every connected QP, but
	 * an initiator's QP reached INIT before its cm_id existed, without.
	 */
	qp->attrs.access |= IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	/* Likewise atomics, when the peer agreed to them (RFC 7306). */
	if (iw->ext)
		qp->attrs.access |= IB_ACCESS_REMOTE_ATOMIC;
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
	/* A poster sending in its kick finds no socket from now on. */
	mutex_lock(&iw->tx_mutex);
	mutex_unlock(&iw->tx_mutex);
	softrdma_cep_put(cep);
}
