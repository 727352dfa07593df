// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC completer over RoCEv2 (IBTA Vol. 1 9.7.5.1, 9.9): ACKs, NAKs,
 * READ responses (which also answer RDMA FLUSH and ATOMIC WRITE) and
 * atomic acknowledges for the requester's WQEs, which
 * it completes in order, failing the QP on an error NAK or a local fault.
 * Runs from receive dispatch (recv.c) under qp->lock.
 */
#include "softrdma.h"
#include "roce.h"

/* The RNR NAK timer field's delay (IBTA Vol. 1, table 45) in microseconds. */
static u32 softrdma_comp_rnr_usecs(u8 synd)
{
	static const u32 usecs[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return usecs[synd & 0x1f];
}

/* Complete in order every WQE an ACK of @psn covers; stop at a READ. */
static void softrdma_comp_ack(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 next = softrdma_psn_add(psn, 1);
	s32 acked = 0;

	if (qp->req.comp_idx != qp->req.send_idx)
		acked = softrdma_psn_diff(next, softrdma_req_una(qp));
	if (acked > 0) {
		/* Progress inside a long message. */
		softrdma_req_acked(qp, acked);
		rqp->req.una_psn = next;
		rqp->req.retries = 0;
		/*
		 * The path delivers again: the timeout backed off for
		 * losses in a row starts over from the estimate.
		 */
		rqp->req.rto_shift = 0;
	}
	while (qp->req.comp_idx != qp->req.send_idx) {
		struct softrdma_swqe *s =
			&qp->swqe[qp->req.comp_idx & (qp->sq.num_slots - 1)];

		if (softrdma_psn_diff(s->last_psn, psn) > 0 ||
		    softrdma_wr_is_rd_atomic(s->wqe.opcode))
			break;
		softrdma_req_rtt_done(qp, qp->req.comp_idx);
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_SUCCESS);
		qp->req.comp_idx++;
		rqp->req.retries = 0;
		rqp->req.rnr_retries = 0;
	}
	if (qp->req.comp_idx == qp->req.send_idx)
		softrdma_req_timer_stop(rqp);
	else
		softrdma_req_arm_timer(qp);
}

/*
 * The oldest WQE, a READ or an atomic, has its whole response: complete it,
 * then what an ACK of @psn covers. (What waited for it goes next: see
 * softrdma_rx_dispatch().)
 */
static void softrdma_comp_rd_atomic_done(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	softrdma_req_rtt_done(qp, qp->req.comp_idx);
	softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_SUCCESS);
	qp->req.comp_idx++;
	rqp->req.retries = 0;
	rqp->req.rd_atomic--;
	softrdma_comp_ack(qp, psn);
}

/* An atomic acknowledge: the original value for the oldest WQE. */
static void softrdma_comp_atomic(struct softrdma_qp *qp, u32 psn, u8 *p,
				 u32 len)
{
	struct softrdma_atomic_ack_eth ack;
	struct softrdma_swqe *s;
	u32 slot;
	u64 orig;
	int err;

	if (len < SOFTRDMA_ATOMIC_ACK_ETH_LEN)
		return;
	memcpy(&ack, p, sizeof(ack));
	softrdma_comp_ack(qp, softrdma_psn_add(psn, SOFTRDMA_PSN_MASK));
	if (qp->req.comp_idx == qp->req.send_idx)
		return;
	slot = qp->req.comp_idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	if (!softrdma_wr_is_atomic(s->wqe.opcode) || s->first_psn != psn)
		return;		/* stale or foreign: the timer asks again */
	orig = be64_to_cpu(ack.orig);
	err = softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge, 1,
				0, &orig, sizeof(orig), true,
				IB_ACCESS_LOCAL_WRITE);
	/* An ODP page being faulted in (odp.c): the timer asks again. */
	if (err == -EBUSY)
		return;
	if (err) {
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     IB_WC_LOC_PROT_ERR);
		qp->req.comp_idx++;
		softrdma_roce_qp_fail(qp);
		return;
	}
	softrdma_comp_rd_atomic_done(qp, psn);
}

/*
 * Selective repeat recovering from a timeout: an ACK moved una (from
 * @una) but not past what was sent when the timer fired: the responder
 * kept too little behind the packet at una to call it lost (or it would
 * have NAKed it), so send it again now, not a timeout later.
 */
static void softrdma_comp_sr_partial(struct softrdma_qp *qp, u32 una)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 now = softrdma_req_una(qp);

	if (qp->req.comp_idx == qp->req.send_idx ||
	    softrdma_psn_diff(now, rqp->req.sr_recover) >= 0) {
		rqp->req.sr_recovery = false;
		return;
	}
	if (softrdma_psn_diff(now, una) > 0)
		softrdma_req_resend_one(qp, now);
}

void softrdma_comp_rcv(struct softrdma_qp *qp, u8 op, u8 flags,
		       u32 psn, u8 *p, u32 paylen)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 pad = (flags >> SOFTRDMA_BTH_PAD_SHIFT) & 3;

	struct softrdma_swqe *s;
	u32 synd = 0, slot, off;
	int err;

	if (op == RC_ACK || op == RC_READ_RESP_FIRST ||
	    op == RC_READ_RESP_LAST || op == RC_READ_RESP_ONLY ||
	    op == RC_ATOMIC_ACK) {
		struct softrdma_aeth *aeth = (struct softrdma_aeth *)p;

		if (paylen < SOFTRDMA_AETH_LEN)
			return;
		synd = ntohl(aeth->smsn) >> 24;
		p += SOFTRDMA_AETH_LEN;
		paylen -= SOFTRDMA_AETH_LEN;
	}
	if (op == RC_ACK) {
		if ((synd & 0x60) == 0) {
			u32 una = rqp->req.sr_recovery ?
				  softrdma_req_una(qp) : 0;

			softrdma_comp_ack(qp, psn);
			if (rqp->req.sr_recovery)
				softrdma_comp_sr_partial(qp, una);
			return;
		}
		/* Selective repeat: a hole past the gap, nothing acked. */
		if (synd == SOFTRDMA_NAK_SR_HOLE) {
			if (softrdma_roce_sr(rqp))
				softrdma_req_resend_nak(qp, psn);
			return;
		}
		/* A NAK acknowledges everything before @psn. */
		softrdma_comp_ack(qp, softrdma_psn_add(psn, SOFTRDMA_PSN_MASK));
		if (qp->req.comp_idx == qp->req.send_idx)
			return;
		if ((synd & 0x60) == 0x20 || synd == SOFTRDMA_NAK_PSN_SEQ) {
			/* RNR or sequence error: send again (timer paced). */
			if ((synd & 0x60) == 0x20 && qp->attrs.rnr_retry != 7 &&
			    rqp->req.rnr_retries++ >= qp->attrs.rnr_retry) {
				softrdma_sq_complete(qp, qp->req.comp_idx,
						     IB_WC_RNR_RETRY_EXC_ERR);
				qp->req.comp_idx++;
				softrdma_roce_qp_fail(qp);
				return;
			}
			if ((synd & 0x60) == 0x20) {
				/* Wait as long as the responder asked. */
				u32 us = softrdma_comp_rnr_usecs(synd);

				/*
				 * An answer: retry_cnt counts requests that
				 * got none, rnr_retry the RNR NAKs. Else a
				 * long RNR wait on a lossy link runs out of
				 * retries that no loss in a row used up.
				 */
				rqp->req.retries = 0;
				rqp->req.rnr_wait = true;
				rqp->req.rnr_psn = psn;
				softrdma_req_timer_set(qp,
						       max_t(u64, SOFTRDMA_REQ_TICK_NS,
							     us * NSEC_PER_USEC));
				return;
			}
			/*
			 * The responder NAKs once until the gap fills, so a
			 * new NAK means progress: restart at its PSN, or,
			 * with selective repeat, send just that one again.
			 */
			rqp->req.retries = 0;
			if (softrdma_roce_sr(rqp))
				softrdma_req_resend_nak(qp, psn);
			else
				softrdma_req_gbn_loss(qp, psn, false);
			return;
		}
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     synd == SOFTRDMA_NAK_REMOTE_ACCESS ?
				     IB_WC_REM_ACCESS_ERR :
				     synd == SOFTRDMA_NAK_INVALID_REQ ?
				     IB_WC_REM_INV_REQ_ERR : IB_WC_REM_OP_ERR);
		qp->req.comp_idx++;
		softrdma_roce_qp_fail(qp);
		return;
	}

	if (op == RC_ATOMIC_ACK) {
		softrdma_comp_atomic(qp, psn, p, paylen);
		return;
	}

	/* A read response: for the oldest WQE, which must be that READ. */
	if (op < RC_READ_RESP_FIRST || op > RC_READ_RESP_ONLY || paylen < pad)
		return;
	paylen -= pad;
	softrdma_comp_ack(qp, softrdma_psn_add(psn, SOFTRDMA_PSN_MASK));
	if (qp->req.comp_idx == qp->req.send_idx)
		return;
	slot = qp->req.comp_idx & (qp->sq.num_slots - 1);
	s = &qp->swqe[slot];
	if (s->wqe.opcode == IB_WR_FLUSH ||
	    s->wqe.opcode == IB_WR_ATOMIC_WRITE) {
		/* Done, with a READ response of no data (IBTA 1.5). */
		if (op == RC_READ_RESP_ONLY && !paylen && psn == s->first_psn)
			softrdma_comp_rd_atomic_done(qp, psn);
		return;
	}
	if (s->wqe.opcode != IB_WR_RDMA_READ ||
	    softrdma_psn_diff(psn, s->first_psn) < 0 ||
	    softrdma_psn_diff(psn, s->last_psn) > 0)
		return;
	off = softrdma_psn_diff(psn, s->first_psn) * softrdma_mtu(qp);
	if (off != rqp->req.read_off || off + paylen > s->len)
		return;		/* out of order: the timer asks again */
	err = softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge,
				s->wqe.num_sge, off, p, paylen, true,
				IB_ACCESS_LOCAL_WRITE);
	/* An ODP page being faulted in (odp.c): the timer asks again. */
	if (err == -EBUSY)
		return;
	if (err) {
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     IB_WC_LOC_PROT_ERR);
		qp->req.comp_idx++;
		softrdma_roce_qp_fail(qp);
		return;
	}
	rqp->req.read_off += paylen;
	rqp->req.retries = 0;	/* progress */
	if (op == RC_READ_RESP_LAST || op == RC_READ_RESP_ONLY) {
		rqp->req.read_off = 0;
		softrdma_comp_rd_atomic_done(qp, psn);
	}
}
