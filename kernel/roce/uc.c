// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The UC responder over RoCEv2 (IBTA Vol. 1 9.8.3, 9.9.3): SENDs into
 * receive WQEs and RDMA WRITEs into memory, as on RC, but nothing is
 * acknowledged and nothing is sent again. A packet out of sequence (a PSN
 * gap, or an opcode that does not continue the message in progress) drops
 * the message in progress; the receive WQE it had taken is not completed
 * but kept for the next message, and the responder starts again at the
 * next First or Only packet, whatever its PSN. What cannot be taken (no
 * receive WQE, a bad R_Key, a message longer than its receive WQE) drops
 * the message silently. Every drop is counted. Runs from receive dispatch
 * (recv.c) under qp->lock.
 */
#include "softrdma.h"
#include "roce.h"

/* Drop the message in progress, if any; its receive WQE stays taken. */
static void softrdma_uc_abort(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (rqp->resp.in_send || rqp->resp.in_write)
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_UC_DROPS);
	rqp->resp.in_send = false;
	rqp->resp.in_write = false;
}

static void softrdma_uc_complete(struct softrdma_qp *qp, u32 opcode,
				 u32 byte_len, const u8 *immdt, bool solicited)
{
	struct softrdma_cqe cqe = {};

	cqe.status = IB_WC_SUCCESS;
	cqe.opcode = opcode;
	cqe.byte_len = byte_len;
	if (immdt) {
		cqe.flags |= SOFTRDMA_CQE_WITH_IMM;
		memcpy(&cqe.imm_data, immdt, SOFTRDMA_IMMDT_LEN);
	}
	softrdma_recv_complete(qp, &cqe, solicited);
}

/* A packet of a SEND; false: drop the message. */
static bool softrdma_uc_send(struct softrdma_qp *qp, bool first, bool last,
			     u8 *p, u32 paylen, const u8 *immdt,
			     bool solicited)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (first) {
		/* A receive WQE a dropped message left is used again. */
		if (!qp->resp.in_recv && !softrdma_recv_take(qp))
			return false;
		qp->resp.roff = 0;
		rqp->resp.in_send = true;
	}
	if (paylen && softrdma_resp_recv_copy(qp, p, paylen, NULL))
		return false;	/* longer than the receive WQE */
	qp->resp.roff += paylen;
	if (last) {
		rqp->resp.in_send = false;
		softrdma_uc_complete(qp, IB_WC_RECV, qp->resp.roff, immdt,
				     solicited);
	}
	return true;
}

/* A packet of an RDMA WRITE; false: drop the message. */
static bool softrdma_uc_write(struct softrdma_qp *qp, bool first, bool last,
			      const struct softrdma_reth *reth, u8 *p,
			      u32 paylen, const u8 *immdt, bool solicited)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (first) {
		if (!(qp->attrs.access & IB_ACCESS_REMOTE_WRITE))
			return false;
		softrdma_resp_write_start(qp, reth);
	}
	if (paylen > rqp->resp.wlen - rqp->resp.woff)
		return false;
	/* With immediate data it consumes a receive WQE, or is dropped. */
	if (immdt && !qp->resp.in_recv && !softrdma_recv_take(qp))
		return false;
	if (!softrdma_resp_write_place(qp, p, paylen))
		return false;
	if (last) {
		rqp->resp.in_write = false;
		if (immdt)
			softrdma_uc_complete(qp, IB_WC_RECV_RDMA_WITH_IMM,
					     rqp->resp.wlen, immdt, solicited);
	}
	return true;
}

/**
 * softrdma_uc_rcv - a packet for a UC QP
 * @qp: the QP, in RTR, RTS or SQD; qp->lock held
 * @op: the BTH opcode
 * @flags: the BTH flags (SE, PadCnt)
 * @psn: the packet's PSN
 * @p: the bytes after the BTH
 * @len: their number, without the ICRC
 */
void softrdma_uc_rcv(struct softrdma_qp *qp, u8 op, u8 flags, u32 psn,
		     u8 *p, u32 len)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u8 rc = op & ~SOFTRDMA_UC_TRANSPORT;
	bool send = rc <= RC_SEND_ONLY_IMM;
	bool first = rc == RC_SEND_FIRST || rc == RC_SEND_ONLY ||
		     rc == RC_SEND_ONLY_IMM || rc == RC_WRITE_FIRST ||
		     rc == RC_WRITE_ONLY || rc == RC_WRITE_ONLY_IMM;
	bool last = rc == RC_SEND_LAST || rc == RC_SEND_LAST_IMM ||
		    rc == RC_SEND_ONLY || rc == RC_SEND_ONLY_IMM ||
		    rc == RC_WRITE_LAST || rc == RC_WRITE_LAST_IMM ||
		    rc == RC_WRITE_ONLY || rc == RC_WRITE_ONLY_IMM;
	bool imm = rc == RC_SEND_LAST_IMM || rc == RC_SEND_ONLY_IMM ||
		   rc == RC_WRITE_LAST_IMM || rc == RC_WRITE_ONLY_IMM;
	bool reth = rc == RC_WRITE_FIRST || rc == RC_WRITE_ONLY ||
		    rc == RC_WRITE_ONLY_IMM;
	u32 pad = (flags & SOFTRDMA_BTH_PAD_MASK) >> SOFTRDMA_BTH_PAD_SHIFT;
	u32 hlen = (reth ? SOFTRDMA_RETH_LEN : 0) +
		   (imm ? SOFTRDMA_IMMDT_LEN : 0);
	struct softrdma_reth r = {};
	const u8 *immdt = NULL;
	bool ok;

	/* Not a UC request (RC, UD, responses): not for this QP. */
	if (op < SOFTRDMA_UC_TRANSPORT || op > SOFTRDMA_UC_LAST_OP ||
	    len < hlen + pad) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_MALFORMED);
		return;
	}
	if (psn != rqp->resp.epsn) {
		/* A gap (or an old packet): the message in progress is lost. */
		softrdma_uc_abort(qp);
	} else if (!first && (send ? !rqp->resp.in_send :
				     !rqp->resp.in_write)) {
		/* Continues no message: the message in progress is lost. */
		softrdma_uc_abort(qp);
	} else if (first) {
		/* A new message: one in progress missed its last packet. */
		softrdma_uc_abort(qp);
	}
	rqp->resp.epsn = softrdma_psn_add(psn, 1);
	if (!first && !rqp->resp.in_send && !rqp->resp.in_write) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_UC_DROPS);
		return;		/* resynchronise at the next First or Only */
	}
	if (reth) {
		memcpy(&r, p, sizeof(r));
		p += SOFTRDMA_RETH_LEN;
	}
	if (imm) {
		immdt = p;
		p += SOFTRDMA_IMMDT_LEN;
	}
	len -= hlen + pad;
	if (send)
		ok = softrdma_uc_send(qp, first, last, p, len, immdt,
				      flags & SOFTRDMA_BTH_SE);
	else
		ok = softrdma_uc_write(qp, first, last, &r, p, len, immdt,
				       flags & SOFTRDMA_BTH_SE);
	if (!ok) {
		if (rqp->resp.in_send || rqp->resp.in_write)
			softrdma_uc_abort(qp);	/* counts it */
		else
			softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_UC_DROPS);
	}
}
