// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iWARP receiver: FPDUs assembled from the TCP stream, checked (MPA
 * CRC and markers, DDP header, MSN and offsets) and placed after checking
 * every STag, offset and length: RDMA Writes and Read Responses into
 * tagged buffers, Sends into the RQ's receives, RFC 7306 Immediate Data;
 * Read and Atomic Requests queued for the sender to answer (IRD); the
 * peer's Terminate.
 *
 * Each FPDU is placed as soon as it is whole, in the softirq that brought
 * its last bytes (tcp_read_sock() from the socket callback); an RDMA Write
 * or a Send without markers is placed as its bytes come, straight from the
 * skbs into the target buffer or the receive (one copy, the CRC computed
 * on the way and checked at its end). A work item sees the end of the stream. It holds qp->lock
 * while it places, never across a socket call. An RDMA Read completes
 * once its response has arrived.
 *
 * Not here: sending, the answers to requests too (tx.c), the QP's state
 * and SQ bookkeeping (qp.c), MPA framing and DDP header checks (mpa.c,
 * ddp.c).
 */
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

/* Where in iw->rxbuf the trailer of a placed FPDU goes: after its header. */
#define SOFTRDMA_IW_RX_TRAILER	32

/* Map softrdma_mr_get()'s error on a tagged buffer to a Terminate. */
static void softrdma_iw_tagged_error(struct softrdma_qp *qp, int err)
{
	if (err == -EACCES)
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_PROTECTION, TERM_RDMAP_ACCESS);
	else if (err == -ERANGE)
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

static void softrdma_iw_rx_write(struct softrdma_qp *qp, u32 stag, u64 to,
				 u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
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

static void softrdma_iw_rx_rresp(struct softrdma_qp *qp, u32 stag, u64 to,
				 bool last, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_swqe *s;
	struct softrdma_sge *sge;
	u32 idx, slot;
	u64 off;

	if (iw->orq_head == iw->orq_tail) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	idx = iw->orq[iw->orq_head % iw->orq_size];
	slot = idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	if (s->wqe.opcode != IB_WR_RDMA_READ) {
		/* An atomic is answered first. */
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	off = to - (s->wqe.num_sge ? sge[0].addr : 0);
	if (stag != (s->wqe.num_sge ? sge[0].lkey : 0)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
					 TERM_DDP_T_INVALID_STAG);
		return;
	}
	if (off != iw->rresp_off || n > s->len - off ||
	    (last && off + n != s->len)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
					 TERM_DDP_T_BOUNDS);
		return;
	}
	if (n && softrdma_sge_copy(qp, sge, s->wqe.num_sge, off, p, n, true,
				   IB_ACCESS_LOCAL_WRITE)) {
		softrdma_iw_rx_resp_fail(qp, idx, IB_WC_LOC_PROT_ERR);
		return;
	}
	iw->rresp_off += n;
	if (!last)
		return;
	/* All of it placed: a Read with Invalidate invalidates its sink. */
	if (iw->swqe[slot].read_inv &&
	    softrdma_frmr_invalidate(qp->sdev, qp->pd,
				     iw->swqe[slot].inv_key)) {
		ibdev_dbg(&qp->sdev->ibdev,
			  "QP %u: read with invalidate: key 0x%x is no FRMR\n",
			  qp->ibqp.qp_num, iw->swqe[slot].inv_key);
		softrdma_iw_rx_resp_fail(qp, idx, IB_WC_LOC_PROT_ERR);
		return;
	}
	iw->rresp_off = 0;
	iw->orq_head++;
	iw->swqe[slot].done = true;
	softrdma_iw_qp_advance(qp);
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
static void softrdma_iw_rx_send_fail(struct softrdma_qp *qp, int err)
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
static void softrdma_iw_rx_send_end(struct softrdma_qp *qp, u8 op, bool last,
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

static void softrdma_iw_rx_send(struct softrdma_qp *qp, u8 op, bool last,
				u32 inv_stag, u32 msn, u32 mo, u8 *p, u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	bool inv = op == RDMAP_SEND_INV || op == RDMAP_SEND_SE_INV;
	struct softrdma_term_cause tc;
	int err;

	if (op == RDMAP_IMM || op == RDMAP_IMM_SE) {
		softrdma_iw_rx_imm(qp, op, last, msn, mo, p, n);
		return;
	}
	if (op != RDMAP_SEND && op != RDMAP_SEND_SE && !inv) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	if (msn != iw->rx_msn[SOFTRDMA_QN_SEND]) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_MSN_RANGE);
		return;
	}
	if (!qp->resp.in_recv && !softrdma_recv_take(qp)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_NO_BUFFER);
		return;
	}
	/* Segments of a message arrive in order on the stream. */
	if (!softrdma_ddp_seq_check(msn, mo, msn, qp->resp.roff, &tc)) {
		softrdma_iw_complete_recv(qp, IB_WC_REM_INV_REQ_ERR, 0, false);
		softrdma_iw_qp_terminate(qp, tc.layer, tc.etype, tc.code);
		return;
	}
	err = n ? softrdma_sge_copy(qp, qp->resp.rsge, qp->resp.rwqe.num_sge,
				    mo, p, n, true, IB_ACCESS_LOCAL_WRITE) : 0;
	if (err) {
		softrdma_iw_rx_send_fail(qp, err);
		return;
	}
	softrdma_iw_rx_send_end(qp, op, last, inv_stag, mo + n);
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

static void softrdma_iw_rx_rreq(struct softrdma_qp *qp, u8 op, bool last,
				u32 msn, u8 *p, u32 n)
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
		return;
	/* Atomics and READs share the IRD. */
	ird = clamp_t(u32, qp->attrs.max_dest_rd_atomic, 1, iw->irq_size);
	if (iw->irq_tail - iw->irq_head >= ird) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	if (!(qp->attrs.access & IB_ACCESS_REMOTE_ATOMIC)) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
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
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		return;
	}
	iw->rx_msn[SOFTRDMA_QN_ARESP]++;
	orig = be64_to_cpu(a.orig);
	if (softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge, 1,
			      0, &orig, sizeof(orig), true,
			      IB_ACCESS_LOCAL_WRITE)) {
		softrdma_iw_rx_resp_fail(qp, idx, IB_WC_LOC_PROT_ERR);
		return;
	}
	iw->orq_head++;
	iw->swqe[slot].done = true;
	softrdma_iw_qp_advance(qp);
	/* An ORD slot is free: what waited for it may go. */
	if (softrdma_iw_req_pending(qp))
		queue_work(softrdma_iw_wq, &iw->tx_work);
}

/* The peer's Terminate: fail what it was about, then the QP. */
static void softrdma_iw_rx_term(struct softrdma_qp *qp, u8 *p, u32 n)
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

/* One whole FPDU in iw->rxbuf. Caller holds qp->lock. */
static void softrdma_iw_rx_fpdu(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
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
		softrdma_iw_qp_terminate(qp, TERM_LAYER_LLP, 0,
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
		softrdma_iw_qp_terminate(qp, tc.layer, tc.etype, tc.code);
		iw->rx_ulpdu = NULL;
		return;
	}
	/* RFC 7306 opcodes from a peer that did not agree to them. */
	if (op >= RDMAP_FIRST_EXT && !iw->ext) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
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
			softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
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
			softrdma_iw_qp_terminate(qp, TERM_LAYER_DDP,
						 TERM_DDP_UNTAGGED, TERM_DDP_U_QN);
			break;
		}
	}
	iw->rx_ulpdu = NULL;
}

/* The FPDU is done with: the next one's header comes. */
static void softrdma_iw_rx_next(struct softrdma_iw_qp *iw)
{
	iw->rx_soff += iw->rx_flen;
	iw->rx_have = 0;
	iw->rx_state = IW_RX_HDR;
	iw->rx_need = softrdma_mpa_hdr_len(iw->rx_soff, iw->rx_markers);
}

/*
 * The first bytes of an FPDU without markers are in: its length and a
 * tagged DDP header. An RDMA Write with payload that passes every check
 * is placed straight from the socket's skbs into its buffer as they come
 * (one copy, the CRC computed on the way); everything else is assembled
 * whole in iw->rxbuf first. Return: true if it is placed so.
 */
static bool softrdma_iw_rx_peek(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u8 *u = iw->rxbuf + 2;
	struct softrdma_term_cause tc;
	struct softrdma_ddp_tagged h;
	struct softrdma_mr *mr;
	u32 ulen = get_unaligned_be16(iw->rxbuf), n;
	bool ok = false;
	int err;

	if (!(u[0] & SOFTRDMA_DDP_T) ||
	    (u[1] & SOFTRDMA_RDMAP_OP_MASK) != RDMAP_WRITE ||
	    !softrdma_ddp_hdr_check(u, ulen, SOFTRDMA_QN_NUM, &tc))
		return false;
	memcpy(&h, u, sizeof(h));
	n = ulen - SOFTRDMA_TAGGED_LEN;
	spin_lock_bh(&qp->lock);
	if ((qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
	    (qp->attrs.access & IB_ACCESS_REMOTE_WRITE) && !iw->rtr_due) {
		mr = softrdma_rkey_get(qp, ntohl(h.stag), be64_to_cpu(h.to), n,
				       IB_ACCESS_REMOTE_WRITE, &err);
		if (mr) {
			iw->rx_mr = mr;
			ok = true;
		}
	}
	spin_unlock_bh(&qp->lock);
	if (!ok)
		return false;
	iw->rx_skip = false;
	iw->rx_send = false;
	iw->rx_stag = ntohl(h.stag);
	iw->rx_to = be64_to_cpu(h.to);
	iw->rx_left = n;
	if (iw->crc)
		iw->rx_crc = softrdma_crc32c(~0U, iw->rxbuf, iw->rx_have);
	iw->rx_state = IW_RX_PLACE;
	return true;
}

/* Does the receive taken hold @n bytes at offset @mo? */
static bool softrdma_iw_rx_fits(const struct softrdma_qp *qp, u32 mo, u32 n)
{
	u64 room = 0;
	u32 i;

	for (i = 0; i < qp->resp.rwqe.num_sge; i++)
		room += qp->resp.rsge[i].length;
	return (u64)mo + n <= room;
}

/*
 * As softrdma_iw_rx_peek(), for a Send, once its untagged DDP header is
 * in: placed straight into its receive as its bytes come, if every check
 * that the assembled path makes before it places passes here (the
 * receive is taken here, as there). Return: true if it is placed so.
 */
static bool softrdma_iw_rx_peek_send(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 ulen = get_unaligned_be16(iw->rxbuf), n, mo, msn;
	struct softrdma_ddp_untagged h;
	struct softrdma_term_cause tc;
	u8 *u = iw->rxbuf + 2;
	u8 op = u[1] & SOFTRDMA_RDMAP_OP_MASK;
	bool ok;

	if ((op != RDMAP_SEND && op != RDMAP_SEND_SE && op != RDMAP_SEND_INV &&
	     op != RDMAP_SEND_SE_INV) ||
	    !softrdma_ddp_hdr_check(u, ulen, iw->ext ? SOFTRDMA_QN_NUM :
				    SOFTRDMA_QN_AREQ, &tc))
		return false;
	memcpy(&h, u, sizeof(h));
	if (ntohl(h.qn) != SOFTRDMA_QN_SEND)
		return false;
	n = ulen - SOFTRDMA_UNTAGGED_LEN;
	msn = ntohl(h.msn);
	mo = ntohl(h.mo);
	spin_lock_bh(&qp->lock);
	ok = (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
	     msn == iw->rx_msn[SOFTRDMA_QN_SEND] &&
	     (qp->resp.in_recv || softrdma_recv_take(qp)) &&
	     softrdma_ddp_seq_check(msn, mo, msn, qp->resp.roff, &tc) &&
	     softrdma_iw_rx_fits(qp, mo, n);
	spin_unlock_bh(&qp->lock);
	if (!ok)
		return false;
	iw->rx_skip = false;
	iw->rx_send = true;
	iw->rx_err = 0;
	iw->rx_to = mo;
	iw->rx_left = n;
	if (iw->crc)
		iw->rx_crc = softrdma_crc32c(~0U, iw->rxbuf, iw->rx_have);
	iw->rx_state = IW_RX_PLACE;
	return true;
}

/*
 * Place the @n bytes at @data, the next of the RDMA Write or Send being
 * placed. A Write's MR is held within one skb (softrdma_iw_rx_actor() lets
 * go of it), so a peer that stops mid-FPDU holds up no deregistration; for
 * the next skb it is looked up again, and if it is gone or the QP stopped,
 * the rest of the FPDU is dropped. A Send's receive looks up its keys at
 * each copy (softrdma_sge_copy()); the first that fails is kept for the
 * end of the FPDU.
 */
static void softrdma_iw_rx_place(struct softrdma_qp *qp, const u8 *data,
				 u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	int err;

	/* As every placement, under qp->lock: no invalidation meanwhile. */
	spin_lock_bh(&qp->lock);
	if (iw->rx_send && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD)
		iw->rx_skip = true;
	if (!iw->rx_send && !iw->rx_mr && !iw->rx_skip) {
		if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) {
			iw->rx_mr = softrdma_rkey_get(qp, iw->rx_stag,
						      iw->rx_to, iw->rx_left,
						      IB_ACCESS_REMOTE_WRITE,
						      &err);
			if (!iw->rx_mr) {
				iw->rx_ulpdu = iw->rxbuf + 2;
				iw->rx_ulen = get_unaligned_be16(iw->rxbuf);
				softrdma_iw_tagged_error(qp, err);
				iw->rx_ulpdu = NULL;
			}
		}
		iw->rx_skip = !iw->rx_mr;
	}
	if (iw->rx_mr)
		softrdma_mr_copy(iw->rx_mr, iw->rx_to, (void *)data, n, true);
	else if (iw->rx_send && !iw->rx_skip && !iw->rx_err)
		iw->rx_err = softrdma_sge_copy(qp, qp->resp.rsge,
					       qp->resp.rwqe.num_sge,
					       iw->rx_to, (void *)data, n, true,
					       IB_ACCESS_LOCAL_WRITE);
	if (iw->crc)
		iw->rx_crc = softrdma_crc32c(iw->rx_crc, data, n);
	spin_unlock_bh(&qp->lock);
	iw->rx_to += n;
	iw->rx_left -= n;
	if (!iw->rx_left) {
		if (iw->rx_mr)
			softrdma_mr_put(iw->rx_mr);
		iw->rx_mr = NULL;
		/* The pad and the CRC field, after the header in rxbuf. */
		iw->rx_state = IW_RX_TRAILER;
		iw->rx_have = 0;
		iw->rx_need = iw->rx_flen - 2 -
			      get_unaligned_be16(iw->rxbuf);
	}
}

/* A placed Send is whole: its receive completes if it was the last. */
static void softrdma_iw_rx_send_placed(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u8 *u = iw->rxbuf + 2;
	struct softrdma_ddp_untagged h;

	memcpy(&h, u, sizeof(h));
	spin_lock_bh(&qp->lock);
	if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) {
		iw->rx_ulpdu = u;
		iw->rx_ulen = get_unaligned_be16(iw->rxbuf);
		if (iw->rx_err)
			softrdma_iw_rx_send_fail(qp, iw->rx_err);
		else
			softrdma_iw_rx_send_end(qp,
						u[1] & SOFTRDMA_RDMAP_OP_MASK,
						u[0] & SOFTRDMA_DDP_L,
						ntohl(h.inv_stag), iw->rx_to);
		iw->rx_ulpdu = NULL;
	}
	spin_unlock_bh(&qp->lock);
}

/* The trailer of a placed RDMA Write or Send is in: check its CRC. */
static void softrdma_iw_rx_placed(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u8 *t = iw->rxbuf + SOFTRDMA_IW_RX_TRAILER;
	u32 pad = iw->rx_need - 4;

	if (iw->crc && !iw->rx_skip &&
	    get_unaligned_le32(t + pad) !=
	    ~softrdma_crc32c(iw->rx_crc, t, pad)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
		spin_lock_bh(&qp->lock);
		if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD)
			softrdma_iw_qp_terminate(qp, TERM_LAYER_LLP, 0,
						 TERM_LLP_CRC);
		spin_unlock_bh(&qp->lock);
	} else if (!iw->rx_skip) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_PKTS);
		if (iw->rx_send)
			softrdma_iw_rx_send_placed(qp);
	}
	iw->rx_send = false;
	softrdma_iw_rx_next(iw);
}

/*
 * The FPDU being assembled has iw->rx_need bytes: its MPA header, after
 * which the whole length is known, its DDP header, or all of it, which is
 * handled (qp->lock taken here). Return: false if the stream cannot be
 * parsed on.
 */
static bool softrdma_iw_rx_step(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 ulen, len;

	switch (iw->rx_state) {
	case IW_RX_HDR:
		len = softrdma_mpa_fpdu_len(iw->rxbuf, iw->rx_soff,
					    iw->rx_markers, &ulen);
		if (ulen < SOFTRDMA_TAGGED_LEN) {
			spin_lock_bh(&qp->lock);
			softrdma_iw_qp_terminate(qp, TERM_LAYER_LLP, 0,
						 TERM_LLP_LEN);
			spin_unlock_bh(&qp->lock);
			return false;
		}
		/* The CRC field is there even without CRC. */
		iw->rx_flen = len;
		if (!iw->rx_markers && ulen > SOFTRDMA_UNTAGGED_LEN) {
			iw->rx_state = IW_RX_PEEK;
			iw->rx_need = 2 + SOFTRDMA_TAGGED_LEN;
		} else {
			iw->rx_state = IW_RX_FPDU;
			iw->rx_need = len;
		}
		return true;
	case IW_RX_PEEK:
		/* A Send's header is longer than a tagged one. */
		if (!(iw->rxbuf[2] & SOFTRDMA_DDP_T) &&
		    iw->rx_need < 2 + SOFTRDMA_UNTAGGED_LEN) {
			iw->rx_need = 2 + SOFTRDMA_UNTAGGED_LEN;
			return true;
		}
		if (!((iw->rxbuf[2] & SOFTRDMA_DDP_T) ?
		      softrdma_iw_rx_peek(qp) : softrdma_iw_rx_peek_send(qp))) {
			iw->rx_state = IW_RX_FPDU;
			iw->rx_need = iw->rx_flen;
		}
		return true;
	case IW_RX_TRAILER:
		softrdma_iw_rx_placed(qp);
		return true;
	default:
		spin_lock_bh(&qp->lock);
		softrdma_iw_rx_fpdu(qp);
		spin_unlock_bh(&qp->lock);
		softrdma_iw_rx_next(iw);
		return true;
	}
}

/*
 * Take @n bytes of the stream at @data: into the FPDU being assembled, or
 * the buffer of the one being placed; each step handled as it completes.
 */
static void softrdma_iw_rx_bytes(struct softrdma_qp *qp, const u8 *data,
				 u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 k;

	/* After a framing error only the close is awaited: drop the rest. */
	while (n && !iw->rx_stop) {
		u8 *buf = iw->rxbuf;

		if (iw->rx_state == IW_RX_PLACE) {
			k = min(n, iw->rx_left);
			softrdma_iw_rx_place(qp, data, k);
		} else {
			if (iw->rx_state == IW_RX_TRAILER)
				buf += SOFTRDMA_IW_RX_TRAILER;
			k = min(n, iw->rx_need - iw->rx_have);
			memcpy(buf + iw->rx_have, data, k);
			iw->rx_have += k;
			if (iw->rx_have == iw->rx_need &&
			    !softrdma_iw_rx_step(qp))
				iw->rx_stop = true;
		}
		data += k;
		n -= k;
	}
}

/*
 * tcp_read_sock() actor: the stream's bytes in @skb, a piece of memory at
 * a time, in one pass (skb_seq_read() keeps its place: no walk from the
 * skb's start for each FPDU).
 */
static int softrdma_iw_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
				unsigned int off, size_t len)
{
	struct softrdma_qp *qp = desc->arg.data;
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0, n;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len && !iw->rx_stop &&
	       (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min_t(u32, n, len - done);
		softrdma_iw_rx_bytes(qp, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	/* No MR is held between skbs (softrdma_iw_rx_place()). */
	if (iw->rx_mr) {
		softrdma_mr_put(iw->rx_mr);
		iw->rx_mr = NULL;
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
void softrdma_iw_rx_work(struct work_struct *work)
{
	struct softrdma_iw_qp *iw = container_of(work, struct softrdma_iw_qp,
						 rx_work);
	struct softrdma_qp *qp = &iw->qp;
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
		softrdma_iw_qp_conn_lost(qp, !reset);
}

/* Socket callback: FPDUs arrived (softirq, or the socket's owner). */
void softrdma_iw_data_ready(struct softrdma_qp *qp, struct sock *sk)
{
	softrdma_iw_rx_read(qp, sk);
}

/* Socket callback: the connection's state changed (any context). */
void softrdma_iw_rx_kick(struct softrdma_qp *qp)
{
	queue_work(softrdma_iw_wq, &to_iwqp(qp)->rx_work);
}
