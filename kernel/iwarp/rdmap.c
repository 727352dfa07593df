// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iWARP receiver's RDMAP side: what each arriving message does, once
 * its DDP segment is checked (rx.c). RDMA Writes and Read Responses are
 * placed in tagged buffers after checking every STag, offset and length;
 * Sends go into the RQ's receives, with RFC 7306 Immediate Data; Read and
 * Atomic Requests are queued for the sender to answer (IRD); a Terminate
 * from the peer ends the QP. Caller holds qp->lock.
 *
 * A message whose pages are in an ODP MR and not present is not taken:
 * its handler returns -EBUSY having changed nothing, the fault is queued,
 * and rx.c hands it the same message again once the fault is done.
 */
#include "iwarp.h"

/* Map softrdma_mr_get()'s error on a tagged buffer to a Terminate. */
void softrdma_iw_tagged_error(struct softrdma_qp *qp, int err)
{
	if (err == -EACCES)
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
	else if (err == -ERANGE || err == -EFAULT)
		/* -EFAULT: ODP pages the process does not have there. */
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
					 TERM_DDP_T_BOUNDS);
	else
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
					 TERM_DDP_T_INVALID_STAG);
}

/* An untagged request's remote key failed softrdma_rkey_get() with @err. */
static void softrdma_iw_rkey_error(struct softrdma_qp *qp, int err)
{
	softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP, TERM_RDMAP_PROTECTION,
				 err == -EACCES ? TERM_RDMAP_ACCESS :
				 err == -ERANGE ? TERM_RDMAP_BOUNDS :
				 TERM_RDMAP_INVALID_STAG);
}

int softrdma_iw_rx_write(struct softrdma_qp *qp, u32 stag, u64 to, u8 *p,
			 u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_mr *mr;
	int err;

	if (iw->rtr_due && !n) {
		/* The peer's zero-length RTR: the connection is up. */
		iw->rtr_due = false;
		if (iw->cep)
			softrdma_cep_established(iw->cep);
		return 0;
	}
	if (!n)
		return 0;
	if (!(qp->attrs.access & IB_ACCESS_REMOTE_WRITE)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
		return 0;
	}
	mr = softrdma_rkey_get(qp, stag, to, n, IB_ACCESS_REMOTE_WRITE, &err);
	if (!mr && err == -EBUSY)
		return err;
	if (!mr) {
		softrdma_iw_tagged_error(qp, err);
		return 0;
	}
	softrdma_mr_copy(mr, to, p, n, true);
	softrdma_mr_put(mr);
	return 0;
}

/*
 * Our Read or atomic at SQ index @idx failed locally with @status as its
 * response arrived: it completes so, the QP fails and the connection is
 * aborted. Every WQE before it went out ahead of its request on the stream,
 * which the peer answered: those reached the peer and complete first.
 */
static void softrdma_iw_rx_resp_fail(struct softrdma_qp *qp, u32 idx,
				     u32 status)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	for (; qp->req.comp_idx != idx; qp->req.comp_idx++)
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_SUCCESS);
	softrdma_sq_complete(qp, idx, status);
	qp->req.comp_idx = idx + 1;
	softrdma_iw_qp_fail(qp);
	if (iw->cep)
		softrdma_cep_close(iw->cep, false);
}

int softrdma_iw_rx_rresp(struct softrdma_qp *qp, u32 stag, u64 to, bool last,
			 u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_swqe *s;
	struct softrdma_sge *sge;
	u32 idx, slot;
	u64 off;
	int err;

	if (iw->orq_head == iw->orq_tail) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return 0;
	}
	idx = iw->orq[iw->orq_head % iw->orq_size];
	slot = idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	if (s->wqe.opcode != IB_WR_RDMA_READ) {
		/* An atomic is answered first. */
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return 0;
	}
	sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	off = to - (s->wqe.num_sge ? sge[0].addr : 0);
	if (stag != (s->wqe.num_sge ? sge[0].lkey : 0)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
					 TERM_DDP_T_INVALID_STAG);
		return 0;
	}
	if (off != iw->rresp_off || n > s->len - off ||
	    (last && off + n != s->len)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
					 TERM_DDP_T_BOUNDS);
		return 0;
	}
	err = n ? softrdma_sge_copy(qp, sge, s->wqe.num_sge, off, p, n, true,
				    IB_ACCESS_LOCAL_WRITE) : 0;
	if (err == -EBUSY)
		return err;
	if (err) {
		softrdma_iw_rx_resp_fail(qp, idx, IB_WC_LOC_PROT_ERR);
		return 0;
	}
	iw->rresp_off += n;
	if (!last)
		return 0;
	/* All of it placed: a Read with Invalidate invalidates its sink. */
	if (iw->swqe[slot].read_inv &&
	    softrdma_frmr_invalidate(qp->sdev, qp->pd,
				     iw->swqe[slot].inv_key)) {
		ibdev_dbg(&qp->sdev->ibdev,
			  "QP %u: read with invalidate: key 0x%x is no FRMR\n",
			  qp->ibqp.qp_num, iw->swqe[slot].inv_key);
		softrdma_iw_rx_resp_fail(qp, idx, IB_WC_LOC_PROT_ERR);
		return 0;
	}
	iw->rresp_off = 0;
	iw->orq_head++;
	iw->swqe[slot].done = true;
	softrdma_iw_qp_advance(qp);
	/* A read slot is free: what waited for it may go. */
	if (softrdma_iw_req_pending(qp))
		queue_work(softrdma_iw_wq, &iw->tx_work);
	return 0;
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
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_rdmap_imm m;
	struct softrdma_cqe cqe = {};
	u32 info;

	if (msn != iw->rx_msn[SOFTRDMA_QN_SEND] || qp->resp.in_recv) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_MSN_RANGE);
		return;
	}
	if (!last || mo || n != sizeof(m)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_TOO_LONG);
		return;
	}
	memcpy(&m, p, sizeof(m));
	info = ntohl(m.info);
	if (info & SOFTRDMA_IMM_SEND) {
		if (iw->imm_due) {
			softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
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

/* A Send's bytes do not go into its receive (softrdma_sge_copy()'s @err). */
void softrdma_iw_rx_send_fail(struct softrdma_qp *qp, int err)
{
	if (err == -EINVAL) {
		/* Past the receive's end: the message is too long. */
		softrdma_iw_complete_recv(qp, IB_WC_LOC_LEN_ERR, 0, false);
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_TOO_LONG);
		return;
	}
	/* The receive's own keys are bad: not the sender's fault. */
	softrdma_iw_complete_recv(qp, IB_WC_LOC_PROT_ERR, 0, false);
	softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_CATASTROPHIC, 0);
}

/*
 * A segment of a Send (opcode @op, @last of its message) is placed up to
 * offset @end of the receive: the receive completes with the last.
 */
void softrdma_iw_rx_send_end(struct softrdma_qp *qp, u8 op, bool last,
			     u32 inv_stag, u32 end)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	bool inv = op == RDMAP_SEND_INV || op == RDMAP_SEND_SE_INV;
	bool se = op == RDMAP_SEND_SE || op == RDMAP_SEND_SE_INV;
	struct softrdma_cqe cqe = {};

	qp->resp.roff = end;
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
		if (softrdma_key_invalidate(qp, inv_stag, true)) {
			softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR,
						  qp->resp.roff, false);
			softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
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

int softrdma_iw_rx_send(struct softrdma_qp *qp, u8 op, bool last, u32 inv_stag,
			u32 msn, u32 mo, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	bool inv = op == RDMAP_SEND_INV || op == RDMAP_SEND_SE_INV;
	struct softrdma_term_cause tc;
	int err;

	if (op == RDMAP_IMM || op == RDMAP_IMM_SE) {
		softrdma_iw_rx_imm(qp, op, last, msn, mo, p, n);
		return 0;
	}
	if (op != RDMAP_SEND && op != RDMAP_SEND_SE && !inv) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return 0;
	}
	if (msn != iw->rx_msn[SOFTRDMA_QN_SEND]) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_MSN_RANGE);
		return 0;
	}
	if (!qp->resp.in_recv && !softrdma_recv_take(qp)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_NO_BUFFER);
		return 0;
	}
	/* Segments of a message arrive in order on the stream. */
	if (!softrdma_ddp_seq_check(msn, mo, msn, qp->resp.roff, &tc)) {
		softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR, 0, false);
		softrdma_iw_qp_terminate(qp, tc.layer, tc.etype, tc.code);
		return 0;
	}
	err = n ? softrdma_sge_copy(qp, qp->resp.rsge, qp->resp.rwqe.num_sge,
				    mo, p, n, true, IB_ACCESS_LOCAL_WRITE) : 0;
	if (err == -EBUSY)
		return err;
	if (err) {
		softrdma_iw_rx_send_fail(qp, err);
		return 0;
	}
	softrdma_iw_rx_send_end(qp, op, last, inv_stag, mo + n);
	return 0;
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
	else if (msn != to_iwqp(qp)->rx_msn[qn])
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_MSN_RANGE);
	else if (!last || n != size)
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_TOO_LONG);
	else
		return true;
	return false;
}

void softrdma_iw_rx_rreq(struct softrdma_qp *qp, u8 op, bool last, u32 msn,
			 u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
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
			softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
						 TERM_RDMAP_PROTECTION,
						 TERM_RDMAP_ACCESS);
			return;
		}
		/*
		 * ODP pages not present (-EBUSY) passed every check: their
		 * fault, queued now, is the sender's prefetch.
		 */
		mr = softrdma_rkey_get(qp, ntohl(req.src_stag),
				       be64_to_cpu(req.src_to), ntohl(req.len),
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mr && err != -EBUSY) {
			softrdma_iw_rkey_error(qp, err);
			return;
		}
		if (mr)
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
int softrdma_iw_rx_areq(struct softrdma_qp *qp, u8 op, bool last, u32 msn,
			u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_rdmap_areq a;
	struct softrdma_iw_rresp *rr;
	struct softrdma_mr *mr;
	u32 ird, aop;
	bool cmp;
	u64 to, orig;
	int err;

	if (!softrdma_iw_rx_one(qp, op, RDMAP_ATOMIC_REQ, SOFTRDMA_QN_AREQ,
				msn, last, n, sizeof(a)))
		return 0;
	/* Atomics and READs share the IRD. */
	ird = clamp_t(u32, qp->attrs.max_dest_rd_atomic, 1, iw->irq_size);
	if (iw->irq_tail - iw->irq_head >= ird) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_NO_BUFFER);
		return 0;
	}
	memcpy(&a, p, sizeof(a));
	aop = ntohl(a.opcode) & 0xf;
	cmp = aop == SOFTRDMA_ATOMIC_CMP_SWAP;
	/* Plain compare-and-swap and fetch-and-add only: no partial masks. */
	if ((!cmp && aop != SOFTRDMA_ATOMIC_FETCH_ADD) ||
	    (cmp && (a.swap_add_mask != cpu_to_be64(U64_MAX) ||
		     a.compare_mask != cpu_to_be64(U64_MAX))) ||
	    (!cmp && a.swap_add_mask)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return 0;
	}
	if (!(qp->attrs.access & IB_ACCESS_REMOTE_ATOMIC)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
		return 0;
	}
	to = be64_to_cpu(a.to);
	mr = (to & 7) ? NULL :
	     softrdma_rkey_get(qp, ntohl(a.stag), to, sizeof(u64),
			       IB_ACCESS_REMOTE_ATOMIC, &err);
	if (to & 7)
		err = -ERANGE;
	if (!mr && err == -EBUSY)
		return err;
	if (mr) {
		err = softrdma_mr_atomic(mr, to, cmp ? SOFTRDMA_MR_CMP_SWAP :
					 SOFTRDMA_MR_FETCH_ADD,
					 be64_to_cpu(a.compare),
					 be64_to_cpu(a.swap_add), &orig);
		softrdma_mr_put(mr);
		if (err)
			err = -ERANGE;
	}
	if (!mr || err) {
		softrdma_iw_rkey_error(qp, err);
		return 0;
	}
	iw->rx_msn[SOFTRDMA_QN_AREQ]++;
	rr = &iw->irq[iw->irq_tail % iw->irq_size];
	rr->atomic = true;
	rr->req_id = ntohl(a.req_id);
	rr->orig = orig;
	iw->irq_tail++;
	softrdma_iw_tx_soon(qp);
	return 0;
}

/* An RFC 7306 Atomic Response: for the oldest of our reads and atomics. */
int softrdma_iw_rx_aresp(struct softrdma_qp *qp, u8 op, bool last, u32 msn,
			 u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_rdmap_aresp a;
	struct softrdma_swqe *s;
	u32 idx, slot;
	u64 orig;
	int err;

	if (!softrdma_iw_rx_one(qp, op, RDMAP_ATOMIC_RESP, SOFTRDMA_QN_ARESP,
				msn, last, n, sizeof(a)))
		return 0;
	memcpy(&a, p, sizeof(a));
	idx = iw->orq[iw->orq_head % iw->orq_size];
	slot = idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	if (iw->orq_head == iw->orq_tail ||
	    !softrdma_wr_is_atomic(s->wqe.opcode) || ntohl(a.req_id) != idx) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return 0;
	}
	orig = be64_to_cpu(a.orig);
	err = softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge,
				1, 0, &orig, sizeof(orig), true,
				IB_ACCESS_LOCAL_WRITE);
	if (err == -EBUSY)
		return err;
	iw->rx_msn[SOFTRDMA_QN_ARESP]++;
	if (err) {
		softrdma_iw_rx_resp_fail(qp, idx, IB_WC_LOC_PROT_ERR);
		return 0;
	}
	iw->orq_head++;
	iw->swqe[slot].done = true;
	softrdma_iw_qp_advance(qp);
	/* An ORD slot is free: what waited for it may go. */
	if (softrdma_iw_req_pending(qp))
		queue_work(softrdma_iw_wq, &iw->tx_work);
	return 0;
}

/* The peer's Terminate: fail what it was about, then the QP. */
void softrdma_iw_rx_term(struct softrdma_qp *qp, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
	softrdma_iw_qp_fatal(qp);
	if (iw->cep)
		softrdma_cep_close(iw->cep, true);
}
