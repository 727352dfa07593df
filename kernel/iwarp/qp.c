// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iWARP side of a QP: its transport state (struct softrdma_iw_qp) set
 * up and freed, the QP hooks of the transport's own state machine
 * (modify_qp, teardown), started on a connection made by cm.c (to RTS) and
 * stopped when it goes, moved to ERR and flushed, and failed with a
 * Terminate. The send queue's bookkeeping shared by sender and receiver
 * lives here too: a WQE taken into the kernel's copy (the core's
 * softrdma_sq_take()) and the in-order completion of what is done; whether
 * a WQE may go yet is softrdma_iw_qp_may_send() in iwarp.h.
 *
 * Not the wire: tx.c builds and sends the FPDUs, rx.c receives and places
 * them, cm.c makes and closes the connection.
 */
#include <linux/gfp.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

/* Give back the page the FPDU heads and tails came from. */
static void softrdma_iw_zc_drain(struct softrdma_iw_qp *iw)
{
#if SOFTRDMA_IW_ZC
	page_frag_cache_drain(&iw->zc_frag);
#endif
}

int softrdma_iw_qp_init(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	/*
	 * An RNIC's QP is made Idle, which verbs call INIT (siw's QPs report
	 * it, rdma-core's tests expect it): receives may be posted at once.
	 * A modify to RESET still empties the queues and reports RESET.
	 */
	qp->state = IB_QPS_INIT;
	INIT_WORK(&iw->tx_work, softrdma_iw_tx_work);
	INIT_WORK(&iw->rx_work, softrdma_iw_rx_work);
	mutex_init(&iw->tx_mutex);
	iw->irq_size = SOFTRDMA_MAX_RD_ATOMIC;
	iw->orq_size = SOFTRDMA_MAX_RD_ATOMIC;
	iw->swqe = kvcalloc(qp->sq.num_slots, sizeof(*iw->swqe), GFP_KERNEL);
	iw->irq = kvcalloc(iw->irq_size, sizeof(*iw->irq), GFP_KERNEL);
	iw->orq = kvcalloc(iw->orq_size, sizeof(*iw->orq), GFP_KERNEL);
	iw->rxbuf = kvmalloc(SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	iw->txbuf = kvmalloc(SOFTRDMA_FPDU_MAX, GFP_KERNEL);
	iw->zc_bv = kcalloc(SOFTRDMA_IW_ZC_PAGES + 2, sizeof(*iw->zc_bv),
			    GFP_KERNEL);
	iw->gbv = kcalloc(SOFTRDMA_IW_GROUP_BV, sizeof(*iw->gbv), GFP_KERNEL);
	if (softrdma_qp_shadow_alloc(qp) || !iw->swqe || !iw->irq ||
	    !iw->orq || !iw->rxbuf || !iw->txbuf || !iw->zc_bv || !iw->gbv) {
		softrdma_iw_qp_cleanup(qp);
		return -ENOMEM;
	}
	return 0;
}

/* Also after a failed softrdma_iw_qp_init(), and more than once. */
void softrdma_iw_qp_cleanup(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	softrdma_qp_shadow_free(qp);
	kvfree(iw->swqe);
	kvfree(iw->irq);
	kvfree(iw->orq);
	kvfree(iw->rxbuf);
	kvfree(iw->txbuf);
	kfree(iw->zc_bv);
	kfree(iw->gbv);
	iw->swqe = NULL;
	iw->irq = NULL;
	iw->orq = NULL;
	iw->rxbuf = NULL;
	iw->txbuf = NULL;
	iw->zc_bv = NULL;
	iw->gbv = NULL;
	softrdma_iw_zc_drain(iw);
}

/* The QP's connection, with a reference, or NULL. */
static struct softrdma_cep *softrdma_iw_qp_cep(struct softrdma_qp *qp)
{
	struct softrdma_cep *cep;

	spin_lock_bh(&qp->lock);
	cep = to_iwqp(qp)->cep;
	if (cep)
		kref_get(&cep->ref);
	spin_unlock_bh(&qp->lock);
	return cep;
}

/*
 * Destroying a connected QP aborts its connection first, unless the
 * consumer has closed it gracefully (rdma_disconnect(), then at once
 * rdma_destroy_qp()): a reset would drop the last Sends, complete but
 * still in the socket, which the peer waits for.
 */
void softrdma_iw_qp_teardown(struct softrdma_qp *qp)
{
	struct softrdma_cep *cep = softrdma_iw_qp_cep(qp);

	if (!cep)
		return;
	softrdma_cep_close(cep, test_bit(CEP_F_CLOSE, &cep->flags));
	flush_work(&cep->work);
	softrdma_cep_put(cep);
}

/*
 * Never in SQD: softrdma_iw_modify_qp() closes the connection instead,
 * and the QP leaves RTS through cm.c, so there is no drain to announce.
 */
void softrdma_iw_sqd_check(struct softrdma_qp *qp)
{
}

/*
 * iWARP states (RFC 5040 and the verbs of RDMAC): RTR is a waypoint the
 * RDMA CM asks for; RTS comes with the connection; SQD (what iw_cm asks
 * for on a graceful disconnect) closes it, ERR aborts it.
 */
int softrdma_iw_modify_qp(struct softrdma_qp *qp, struct ib_qp_attr *attr,
			  int mask, enum ib_qp_state cur,
			  enum ib_qp_state next)
{
	struct softrdma_cep *cep;

	if (next == cur && next != IB_QPS_RESET && next != IB_QPS_INIT)
		return 0;
	switch (next) {
	case IB_QPS_INIT:
		/*
		 * An iWARP QP has one port and no P_Key: INIT needs neither
		 * (the iw_cm asks for the state and access flags; siw too).
		 */
		if (cur == IB_QPS_RESET)
			return 0;
		break;
	case IB_QPS_RTR:
		return cur == IB_QPS_INIT ? 0 : -EINVAL;
	case IB_QPS_RTS:
		/* Only the connection manager moves a QP to RTS. */
		return -EINVAL;
	case IB_QPS_SQD:
		if (cur != IB_QPS_RTS)
			return -EINVAL;
		cep = softrdma_iw_qp_cep(qp);
		if (cep) {
			softrdma_cep_close(cep, true);
			softrdma_cep_put(cep);
		}
		return 1;
	case IB_QPS_ERR:
	case IB_QPS_RESET:
		cep = softrdma_iw_qp_cep(qp);
		if (cep) {
			softrdma_cep_close(cep, false);
			softrdma_cep_put(cep);
		}
		break;
	default:
		break;
	}
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;
	return 0;
}

/* Complete, in order, every WQE done from the oldest on. */
void softrdma_iw_qp_advance(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	while (qp->req.comp_idx != qp->req.send_idx) {
		if (!softrdma_iw_swqe(iw, qp->req.comp_idx)->done)
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
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	softrdma_qp_enter_err(qp);
	iw->orq_head = iw->orq_tail;
	iw->irq_head = iw->irq_tail;
	iw->rresp_off = 0;
	iw->zc_unacked = 0;
}

/* Ask cm.c to close the connection (from any context). */
void softrdma_iw_qp_conn_lost(struct softrdma_qp *qp, bool graceful)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

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
void softrdma_iw_qp_fatal(struct softrdma_qp *qp)
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
void softrdma_iw_qp_terminate(struct softrdma_qp *qp, u8 layer, u8 etype,
			      u8 code)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	ibdev_info_ratelimited(&qp->sdev->ibdev,
			       "QP %u: terminate layer %u type %u code 0x%x\n",
			       qp->ibqp.qp_num, layer, etype, code);
	if (qp->state != IB_QPS_ERR) {
		softrdma_iw_qp_fail(qp);
		softrdma_iw_qp_fatal(qp);
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
u32 softrdma_iw_qp_take(struct softrdma_qp *qp, u32 idx)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_iw_swqe *is = &iw->swqe[slot];
	struct softrdma_swqe *s;
	u32 status;
	u8 *body;
	u64 len;

	s = softrdma_sq_take(qp, idx, &body);
	is->done = false;
	is->ack_wait = false;
	is->read_inv = false;
	switch (s->wqe.opcode) {
	case IB_WR_RDMA_READ_WITH_INV:
		/*
		 * A kernel consumer's Read whose sink MR is invalidated once
		 * the data is placed (rx.c): a Read from here on, completed
		 * as one. A process's opcode 11 is not this.
		 */
		if (qp->user)
			return IB_WC_LOC_QP_OP_ERR;
		s->wqe.opcode = IB_WR_RDMA_READ;
		is->read_inv = true;
		break;
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
		if (!iw->ext)
			return IB_WC_LOC_QP_OP_ERR;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (!iw->ext)
			return IB_WC_LOC_QP_OP_ERR;
		return softrdma_swqe_copy_atomic(qp, slot, body);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
	status = softrdma_swqe_copy_body(qp, slot, body, &len);
	if (status != IB_WC_SUCCESS)
		return status;
	if (is->read_inv) {
		/*
		 * The key is the sink's own, as the Read carries it: rdma_rw
		 * sets ex.invalidate_rkey before it bumps the MR's key.
		 */
		if (s->wqe.num_sge != 1)
			return IB_WC_LOC_QP_OP_ERR;
		is->inv_key = qp->ssge[(size_t)slot * qp->sq_max_sge].lkey;
	}
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
 * Start the transport on @cep's socket (process context, cep->mutex held):
 * the QP, in INIT or RTR, moves to RTS.
 */
int softrdma_iw_qp_start(struct softrdma_qp *qp, struct softrdma_cep *cep)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
	iw->rx_state = IW_RX_HDR;
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
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
