// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC service over RoCEv2 (IBTA Vol. 1 ch. 9): requester, responder and
 * completer.
 *
 * The requester runs when the provider kicks; the responder
 * and the completer run as packets arrive. Both hold qp->lock. Every WQE is
 * copied out of the shared ring once, when it is first taken, and only the
 * kernel's copy is used from then on (retransmissions included).
 */
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>

#include "softrdma.h"
#include "roce.h"

/*
 * Packets the requester has in flight at most. A burst longer than the
 * path's queues (a veth peer's backlog holds netdev_max_backlog, 1000
 * packets) loses its tail every time it is sent again. Long messages ask
 * for an ACK every SOFTRDMA_REQ_ACK_EVERY packets, and each ACK opens the
 * window again.
 */
#define SOFTRDMA_REQ_WINDOW	256
#define SOFTRDMA_REQ_ACK_EVERY	64

/*
 * The responder sends a long READ answer SOFTRDMA_RESP_BATCH packets at a
 * time, one batch per run of its tasklet, so that the receive path (of the
 * peer, or of this very host) runs between batches. Requests that arrive
 * meanwhile wait, in order, up to SOFTRDMA_RESP_BACKLOG of them.
 */
#define SOFTRDMA_RESP_BATCH	64
#define SOFTRDMA_RESP_BACKLOG	4096

static u32 softrdma_mtu(struct softrdma_qp *qp)
{
	return ib_mtu_enum_to_int(qp->attrs.path_mtu);
}

/* Move the QP to the error state from the data path; flush it. */
static void softrdma_resp_stop(struct softrdma_qp *qp);

static void softrdma_qp_fail(struct softrdma_qp *qp)
{
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	softrdma_qp_need_kick(qp);
	softrdma_ring_set_flag(&qp->rq, SOFTRDMA_RING_NEED_KICK);
	softrdma_qp_flush(qp);
	qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
	qp->req.comp_idx = qp->req.send_idx;
	qp->req.rd_atomic = 0;
	qp->req.rnr_wait = false;
	qp->resp.in_recv = false;
	softrdma_resp_stop(qp);
}

static u32 softrdma_rc_opcode(u32 wr_opcode, bool first, bool last)
{
	switch (wr_opcode) {
	case IB_WR_SEND:
		return first ? (last ? RC_SEND_ONLY : RC_SEND_FIRST) :
			       (last ? RC_SEND_LAST : RC_SEND_MIDDLE);
	case IB_WR_SEND_WITH_IMM:
		return first ? (last ? RC_SEND_ONLY_IMM : RC_SEND_FIRST) :
			       (last ? RC_SEND_LAST_IMM : RC_SEND_MIDDLE);
	case IB_WR_RDMA_WRITE:
		return first ? (last ? RC_WRITE_ONLY : RC_WRITE_FIRST) :
			       (last ? RC_WRITE_LAST : RC_WRITE_MIDDLE);
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return first ? (last ? RC_WRITE_ONLY_IMM : RC_WRITE_FIRST) :
			       (last ? RC_WRITE_LAST_IMM : RC_WRITE_MIDDLE);
	case IB_WR_SEND_WITH_INV:
		return first ? (last ? RC_SEND_ONLY_INV : RC_SEND_FIRST) :
			       (last ? RC_SEND_LAST_INV : RC_SEND_MIDDLE);
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return RC_CMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return RC_FETCH_ADD;
	default:
		return RC_READ_REQUEST;
	}
}

/* Transmit packet @pkt of the WQE at index @idx. */
static int softrdma_req_xmit(struct softrdma_qp *qp, u32 idx, u32 pkt)
{
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	u32 mtu = softrdma_mtu(qp), off, paylen, pad, hlen;
	bool first = pkt == 0, last = pkt + 1 == s->npkts;
	u32 op = softrdma_rc_opcode(s->wqe.opcode, first, last);
	struct softrdma_bth *bth;
	struct sk_buff *skb;
	u8 *p, flags = 0;
	int err;

	if (op == RC_READ_REQUEST) {
		off = pkt * mtu;	/* a re-request asks from packet @pkt on */
		paylen = 0;
	} else if (op == RC_CMP_SWAP || op == RC_FETCH_ADD) {
		off = 0;
		paylen = 0;
	} else {
		off = pkt * mtu;
		paylen = min(s->len - off, mtu);
	}
	pad = -paylen & 3;
	hlen = SOFTRDMA_BTH_LEN;
	if (op == RC_WRITE_FIRST || op == RC_WRITE_ONLY ||
	    op == RC_WRITE_ONLY_IMM || op == RC_READ_REQUEST)
		hlen += SOFTRDMA_RETH_LEN;
	if (op == RC_SEND_LAST_IMM || op == RC_SEND_ONLY_IMM ||
	    op == RC_WRITE_LAST_IMM || op == RC_WRITE_ONLY_IMM ||
	    op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV)
		hlen += SOFTRDMA_IMMDT_LEN;	/* ImmDt or IETH: same size */
	if (op == RC_CMP_SWAP || op == RC_FETCH_ADD)
		hlen += SOFTRDMA_ATOMIC_ETH_LEN;

	skb = softrdma_roce_alloc_skb(qp, hlen + paylen + pad);
	if (!skb)
		return -ENOMEM;
	if (last && (s->wqe.flags & SOFTRDMA_WQE_SOLICITED))
		flags |= SOFTRDMA_BTH_SE;
	flags |= pad << SOFTRDMA_BTH_PAD_SHIFT;
	bth = (struct softrdma_bth *)skb->data;
	softrdma_bth_fill(bth, op, flags, qp->attrs.dest_qp_num,
			  softrdma_psn_add(s->first_psn, pkt),
			  last || pkt % SOFTRDMA_REQ_ACK_EVERY ==
				  SOFTRDMA_REQ_ACK_EVERY - 1);
	p = skb->data + SOFTRDMA_BTH_LEN;
	if (op == RC_CMP_SWAP || op == RC_FETCH_ADD) {
		struct softrdma_atomic_eth *ae = (struct softrdma_atomic_eth *)p;

		ae->va = cpu_to_be64(s->wqe.remote_addr);
		ae->rkey = htonl(s->wqe.rkey);
		if (op == RC_CMP_SWAP) {
			ae->swap_add = cpu_to_be64(s->wqe.swap);
			ae->compare = cpu_to_be64(s->wqe.compare_add);
		} else {
			ae->swap_add = cpu_to_be64(s->wqe.compare_add);
			ae->compare = 0;
		}
		p += SOFTRDMA_ATOMIC_ETH_LEN;
	} else if (hlen - SOFTRDMA_BTH_LEN >= SOFTRDMA_RETH_LEN) {
		struct softrdma_reth *reth = (struct softrdma_reth *)p;

		reth->va = cpu_to_be64(s->wqe.remote_addr + off);
		reth->rkey = htonl(s->wqe.rkey);
		reth->len = htonl(s->len - off);
		p += SOFTRDMA_RETH_LEN;
	}
	if (p < skb->data + hlen) {
		if (op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV) {
			__be32 rkey = htonl(s->wqe.imm_data);

			memcpy(p, &rkey, SOFTRDMA_IETH_LEN);
		} else {
			/* Immediate data travels as the application wrote it. */
			memcpy(p, &s->wqe.imm_data, SOFTRDMA_IMMDT_LEN);
		}
		p += SOFTRDMA_IMMDT_LEN;
	}
	if (paylen) {
		if (s->wqe.flags & SOFTRDMA_WQE_INLINE) {
			memcpy(p, qp->sinline + (size_t)slot * qp->max_inline +
			       off, paylen);
		} else {
			err = softrdma_sge_copy(qp, qp->ssge +
						(size_t)slot * qp->sq_max_sge,
						s->wqe.num_sge, off, p, paylen,
						false, 0);
			if (err) {
				kfree_skb(skb);
				return err;
			}
		}
	}
	memset(p + paylen, 0, pad);
	softrdma_roce_xmit(qp, skb);
	return 0;
}

/* The oldest PSN not acknowledged yet; call with WQEs in flight. */
static u32 softrdma_req_una(struct softrdma_qp *qp)
{
	struct softrdma_swqe *s =
		&qp->swqe[qp->req.comp_idx & (qp->sq.num_slots - 1)];

	if (softrdma_psn_diff(qp->req.una_psn, s->first_psn) > 0 &&
	    softrdma_psn_diff(qp->req.una_psn, s->last_psn) <= 0)
		return qp->req.una_psn;
	return s->first_psn;
}

/* May the packet of PSN @psn go, or is the window full? */
static bool softrdma_req_window_open(struct softrdma_qp *qp, u32 psn)
{
	return softrdma_psn_diff(psn, softrdma_req_una(qp)) <
	       SOFTRDMA_REQ_WINDOW;
}

/* Is the WQE at send_idx - 1 only partly sent (the window was full)? */
static bool softrdma_req_partial(struct softrdma_qp *qp)
{
	u32 last = qp->req.send_idx - 1;

	return qp->req.comp_idx != qp->req.send_idx &&
	       qp->req.tx_pkt < qp->swqe[last & (qp->sq.num_slots - 1)].npkts;
}

/* The RNR NAK timer field's delay (IBTA Vol. 1, table 45) in microseconds. */
static u32 softrdma_rnr_usecs(u8 synd)
{
	static const u32 usecs[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return usecs[synd & 0x1f];
}

static void softrdma_req_arm_timer(struct softrdma_qp *qp)
{
	/* 4.096 us * 2^timeout; 0 means infinite. */
	u8 t = qp->attrs.timeout;

	if (!t || qp->req.rnr_wait)
		return;
	mod_timer(&qp->req.timer, jiffies +
		  max_t(unsigned long, 1,
			nsecs_to_jiffies(4096ULL << min_t(u8, t, 31))));
}

/*
 * Send every packet of the WQEs from @from on again (go back N), starting
 * at @psn if it falls inside the first of them.
 */
static void softrdma_req_resend(struct softrdma_qp *qp, u32 from, u32 psn)
{
	u32 idx, pkt;

	for (idx = from; idx != qp->req.send_idx; idx++) {
		struct softrdma_swqe *s =
			&qp->swqe[idx & (qp->sq.num_slots - 1)];

		pkt = 0;
		if (idx == from && softrdma_psn_diff(psn, s->first_psn) > 0 &&
		    softrdma_psn_diff(psn, s->last_psn) <= 0)
			pkt = softrdma_psn_diff(psn, s->first_psn);
		for (; pkt < s->npkts; pkt++) {
			if (idx + 1 == qp->req.send_idx &&
			    pkt >= qp->req.tx_pkt)
				break;	/* not sent yet: req_run sends it */
			if (s->wqe.opcode == IB_WR_RDMA_READ) {
				/* Ask only for the responses still missing. */
				if (idx == qp->req.comp_idx)
					pkt = qp->req.read_off / softrdma_mtu(qp);
				softrdma_req_xmit(qp, idx, pkt);
				break;
			}
			softrdma_req_xmit(qp, idx, pkt);
		}
	}
	if (qp->req.comp_idx != qp->req.send_idx)
		softrdma_req_arm_timer(qp);
}

static void softrdma_req_timeout(struct timer_list *t)
{
	struct softrdma_qp *qp = from_timer(qp, t, req.timer);

	spin_lock_bh(&qp->lock);
	if ((READ_ONCE(qp->state) != IB_QPS_RTS &&
	     READ_ONCE(qp->state) != IB_QPS_SQD) ||
	    qp->req.comp_idx == qp->req.send_idx)
		goto out;
	if (qp->req.rnr_wait) {
		/* The RNR delay is over: not a retry of retry_cnt's. */
		qp->req.rnr_wait = false;
		softrdma_req_resend(qp, qp->req.comp_idx, qp->req.rnr_psn);
		goto out;
	}
	if (qp->req.retries >= qp->attrs.retry_cnt) {
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     IB_WC_RETRY_EXC_ERR);
		qp->req.comp_idx++;
		softrdma_qp_fail(qp);
		goto out;
	}
	qp->req.retries++;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RETRANSMITS);
	softrdma_req_resend(qp, qp->req.comp_idx, softrdma_req_una(qp));
out:
	spin_unlock_bh(&qp->lock);
}

/*
 * May the WQE at @idx go now? Not while max_rd_atomic READs and atomics
 * are in flight if it is one more, nor past a fence while any is.
 */
static bool softrdma_req_may_send(struct softrdma_qp *qp, u32 idx)
{
	const struct softrdma_send_wqe *w = softrdma_ring_slot(&qp->sq, idx);
	u32 op = READ_ONCE(w->opcode), flags = READ_ONCE(w->flags);

	/* A local operation waits for everything before it to complete. */
	if (softrdma_wr_is_local(op))
		return qp->req.comp_idx == idx;
	if (!qp->req.rd_atomic)
		return true;
	if (flags & SOFTRDMA_WQE_FENCE)
		return false;
	return !softrdma_wr_is_rd_atomic(op) ||
	       qp->req.rd_atomic < max_t(u32, qp->attrs.max_rd_atomic, 1);
}

/* Take a new WQE off the ring into the kernel's copy. Return: WC status. */
static u32 softrdma_req_take(struct softrdma_qp *qp, u32 idx)
{
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	u8 *body = (u8 *)softrdma_ring_slot(&qp->sq, idx) + SOFTRDMA_SEND_WQE_HDR_SIZE;
	u32 mtu = softrdma_mtu(qp), status;
	u64 len;

	memcpy(&s->wqe, softrdma_ring_slot(&qp->sq, idx), sizeof(s->wqe));
	s->len = 0;
	switch (s->wqe.opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_SEND_WITH_INV:
		break;
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
	case IB_WR_BIND_MW:
		/* Nothing goes on the wire: no PSN, no packet. */
		s->npkts = 0;
		return IB_WC_SUCCESS;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		status = softrdma_swqe_copy_atomic(qp, slot, body);
		if (status != IB_WC_SUCCESS)
			return status;
		goto sized;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
	status = softrdma_swqe_copy_body(qp, slot, body, &len);
	if (status != IB_WC_SUCCESS)
		return status;
	if (len > qp->sdev->ibdev.attrs.max_mr_size || len > U32_MAX)
		return IB_WC_LOC_LEN_ERR;
	s->len = len;
sized:
	if (softrdma_wr_is_rd_atomic(s->wqe.opcode))
		qp->req.rd_atomic++;
	/* An atomic's 8 bytes, like a zero-length message, take one packet. */
	s->npkts = max_t(u32, DIV_ROUND_UP(s->len, mtu), 1);
	s->first_psn = qp->req.psn;
	if (qp->req.comp_idx == idx)
		qp->req.una_psn = s->first_psn;
	s->last_psn = softrdma_psn_add(qp->req.psn, s->npkts - 1);
	qp->req.psn = softrdma_psn_add(qp->req.psn, s->npkts);
	return IB_WC_SUCCESS;
}

/* Has the provider published WQEs the requester has not taken yet? */
static bool softrdma_req_pending(struct softrdma_qp *qp)
{
	/* Acquire pairs with the provider's release of its WQEs. */
	return smp_load_acquire(&qp->sq.hdr->producer) != qp->req.send_idx &&
	       softrdma_req_may_send(qp, qp->req.send_idx);
}

/*
 * The kernel side of the kick (DESIGN.md, "Data path"). While WQEs are
 * in flight, an ACK, a response or the retransmit timer brings the
 * requester back, and it reads the producer index then: the provider need
 * not kick, and NEED_KICK is clear. Once everything is acknowledged the
 * flag is set, and the producer index read once more after a full barrier,
 * against the provider's publish-barrier-read: no kick is lost.
 *
 * Return: true if WQEs were published meanwhile (run again).
 */
static bool softrdma_req_set_need_kick(struct softrdma_qp *qp)
{
	if (qp->req.comp_idx != qp->req.send_idx) {
		softrdma_ring_clear_flag(&qp->sq, SOFTRDMA_RING_NEED_KICK);
		return false;
	}
	softrdma_qp_need_kick(qp);
	return softrdma_req_pending(qp);
}

/*
 * The requester: send the WQEs the provider has published. Runs on a kick,
 * from the poller, and after every acknowledgment. Caller holds qp->lock.
 */
static void softrdma_req_run(struct softrdma_qp *qp)
{
	struct softrdma_ring_hdr *hdr = qp->sq.hdr;
	bool sent = false;
	u32 prod, pkt;

again:
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	if (softrdma_ring_used(prod, qp->req.comp_idx, qp->sq.num_slots) < 0) {
		softrdma_qp_fail(qp);
		return;
	}
	for (;;) {
		u32 idx;
		struct softrdma_swqe *s;
		u32 status;

		if (!softrdma_req_partial(qp)) {
			idx = qp->req.send_idx;
			if (idx == prod)
				break;
			/* The provider's fields are only a hint here; the
			 * copy taken below is what counts.
			 */
			if (!softrdma_req_may_send(qp, idx))
				break;
			status = softrdma_req_take(qp, idx);
			qp->req.send_idx++;
			qp->req.tx_pkt = 0;
			s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
			if (status == IB_WC_SUCCESS &&
			    softrdma_wr_is_local(s->wqe.opcode)) {
				status = softrdma_local_op(qp, s);
				if (status == IB_WC_SUCCESS) {
					softrdma_sq_complete(qp, idx, status);
					qp->req.comp_idx = idx + 1;
					continue;
				}
			}
			if (status != IB_WC_SUCCESS) {
				/* Complete what went before it first? They
				 * are in flight; the spec lets the QP fail
				 * with this one.
				 */
				softrdma_sq_complete(qp, idx, status);
				qp->req.comp_idx = idx + 1;
				softrdma_qp_fail(qp);
				return;
			}
		}
		idx = qp->req.send_idx - 1;
		s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
		for (pkt = qp->req.tx_pkt; pkt < s->npkts; pkt++) {
			int err;

			if (!softrdma_req_window_open(qp,
						      softrdma_psn_add(s->first_psn,
								       pkt)))
				goto window_full;
			err = softrdma_req_xmit(qp, idx, pkt);
			if (err == -ENOENT || err == -EACCES ||
			    err == -ERANGE || err == -EINVAL) {
				softrdma_sq_complete(qp, idx,
						     IB_WC_LOC_PROT_ERR);
				qp->req.comp_idx = idx + 1;
				softrdma_qp_fail(qp);
				return;
			}
			sent = true;
			qp->req.tx_pkt = pkt + 1;
			if (s->wqe.opcode == IB_WR_RDMA_READ) {
				qp->req.tx_pkt = s->npkts;
				break;
			}
		}
	}
window_full:
	if (softrdma_req_set_need_kick(qp))
		goto again;
	/* New packets need the timer; an idle pass must not push it back. */
	if (qp->req.comp_idx != qp->req.send_idx &&
	    (sent || !timer_pending(&qp->req.timer)))
		softrdma_req_arm_timer(qp);
}

/*
 * A QP draining its send queue (SQD) sends nothing new; once everything in
 * flight is acknowledged, the consumer asked for it, the SQ_DRAINED event.
 * Caller holds qp->lock.
 */
static void softrdma_sqd_check(struct softrdma_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_SQ_DRAINED,
	};

	if (READ_ONCE(qp->state) != IB_QPS_SQD || !qp->sqd_notify ||
	    qp->req.comp_idx != qp->req.send_idx)
		return;
	qp->sqd_notify = false;
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Complete in order every WQE an ACK of @psn covers; stop at a READ. */
static void softrdma_comp_ack(struct softrdma_qp *qp, u32 psn)
{
	u32 next = softrdma_psn_add(psn, 1);

	if (qp->req.comp_idx != qp->req.send_idx &&
	    softrdma_psn_diff(next, softrdma_req_una(qp)) > 0) {
		/* Progress inside a long message. */
		qp->req.una_psn = next;
		qp->req.retries = 0;
	}
	while (qp->req.comp_idx != qp->req.send_idx) {
		struct softrdma_swqe *s =
			&qp->swqe[qp->req.comp_idx & (qp->sq.num_slots - 1)];

		if (softrdma_psn_diff(s->last_psn, psn) > 0 ||
		    softrdma_wr_is_rd_atomic(s->wqe.opcode))
			break;
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_SUCCESS);
		qp->req.comp_idx++;
		qp->req.retries = 0;
		qp->req.rnr_retries = 0;
	}
	if (qp->req.comp_idx == qp->req.send_idx)
		del_timer(&qp->req.timer);
	else
		softrdma_req_arm_timer(qp);
}

/*
 * The oldest WQE, a READ or an atomic, has its whole response: complete it,
 * then what an ACK of @psn covers. (What waited for it goes next: see
 * softrdma_roce_rcv().)
 */
static void softrdma_comp_rd_atomic_done(struct softrdma_qp *qp, u32 psn)
{
	softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_SUCCESS);
	qp->req.comp_idx++;
	qp->req.retries = 0;
	qp->req.rd_atomic--;
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
	if (softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge, 1,
			      0, &orig, sizeof(orig), true,
			      IB_ACCESS_LOCAL_WRITE)) {
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     IB_WC_LOC_PROT_ERR);
		qp->req.comp_idx++;
		softrdma_qp_fail(qp);
		return;
	}
	softrdma_comp_rd_atomic_done(qp, psn);
}

static void softrdma_comp_rcv(struct softrdma_qp *qp, u8 op, u8 flags,
			      u32 psn, u8 *p, u32 paylen)
{
	u32 pad = (flags >> SOFTRDMA_BTH_PAD_SHIFT) & 3;

	struct softrdma_swqe *s;
	u32 synd = 0, slot, off;

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
			softrdma_comp_ack(qp, psn);
			return;
		}
		/* A NAK acknowledges everything before @psn. */
		softrdma_comp_ack(qp, softrdma_psn_add(psn, SOFTRDMA_PSN_MASK));
		if (qp->req.comp_idx == qp->req.send_idx)
			return;
		if ((synd & 0x60) == 0x20 || synd == SOFTRDMA_NAK_PSN_SEQ) {
			/* RNR or sequence error: send again (timer paced). */
			if ((synd & 0x60) == 0x20 && qp->attrs.rnr_retry != 7 &&
			    qp->req.rnr_retries++ >= qp->attrs.rnr_retry) {
				softrdma_sq_complete(qp, qp->req.comp_idx,
						     IB_WC_RNR_RETRY_EXC_ERR);
				qp->req.comp_idx++;
				softrdma_qp_fail(qp);
				return;
			}
			if ((synd & 0x60) == 0x20) {
				/* Wait as long as the responder asked. */
				qp->req.rnr_wait = true;
				qp->req.rnr_psn = psn;
				mod_timer(&qp->req.timer, jiffies +
					  max(1UL, usecs_to_jiffies(softrdma_rnr_usecs(synd))));
				return;
			}
			/*
			 * The responder NAKs once until the gap fills, so a
			 * new NAK means progress: restart at its PSN.
			 */
			qp->req.retries = 0;
			softrdma_req_resend(qp, qp->req.comp_idx, psn);
			return;
		}
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     synd == SOFTRDMA_NAK_REMOTE_ACCESS ?
				     IB_WC_REM_ACCESS_ERR :
				     synd == SOFTRDMA_NAK_INVALID_REQ ?
				     IB_WC_REM_INV_REQ_ERR : IB_WC_REM_OP_ERR);
		qp->req.comp_idx++;
		softrdma_qp_fail(qp);
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
	if (s->wqe.opcode != IB_WR_RDMA_READ ||
	    softrdma_psn_diff(psn, s->first_psn) < 0 ||
	    softrdma_psn_diff(psn, s->last_psn) > 0)
		return;
	off = softrdma_psn_diff(psn, s->first_psn) * softrdma_mtu(qp);
	if (off != qp->req.read_off || off + paylen > s->len)
		return;		/* out of order: the timer asks again */
	if (softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge,
			      s->wqe.num_sge, off, p, paylen, true,
			      IB_ACCESS_LOCAL_WRITE)) {
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     IB_WC_LOC_PROT_ERR);
		qp->req.comp_idx++;
		softrdma_qp_fail(qp);
		return;
	}
	qp->req.read_off += paylen;
	qp->req.retries = 0;	/* progress */
	if (op == RC_READ_RESP_LAST || op == RC_READ_RESP_ONLY) {
		qp->req.read_off = 0;
		softrdma_comp_rd_atomic_done(qp, psn);
	}
}

/* Send an ACK (or NAK, per @synd) for @psn, now. */
static void softrdma_resp_send_ack(struct softrdma_qp *qp, u32 psn, u8 synd)
{
	struct softrdma_aeth *aeth;
	struct sk_buff *skb;

	skb = softrdma_roce_alloc_skb(qp, SOFTRDMA_BTH_LEN + SOFTRDMA_AETH_LEN);
	if (!skb)
		return;
	softrdma_bth_fill((struct softrdma_bth *)skb->data, RC_ACK, 0,
			  qp->attrs.dest_qp_num, psn, false);
	aeth = (struct softrdma_aeth *)(skb->data + SOFTRDMA_BTH_LEN);
	aeth->smsn = htonl((u32)synd << 24 | (qp->resp.msn & SOFTRDMA_PSN_MASK));
	softrdma_roce_xmit(qp, skb);
}

/* Send the ACK requests of the last receive batch asked for, if due. */
static void softrdma_resp_flush_ack(struct softrdma_qp *qp)
{
	if (!qp->resp.ack_pending)
		return;
	qp->resp.ack_pending = false;
	softrdma_resp_send_ack(qp, qp->resp.ack_psn,
			       SOFTRDMA_AETH_ACK_NO_CREDIT);
}

/* Send an ACK or NAK for @psn after the ACK still due: PSNs go in order. */
static void softrdma_resp_ack(struct softrdma_qp *qp, u32 psn, u8 synd)
{
	softrdma_resp_flush_ack(qp);
	softrdma_resp_send_ack(qp, psn, synd);
}

/*
 * Acknowledge @psn once this receive batch is through (ACK coalescing): the
 * tasklet runs after the softirq that delivers the batch, and one ACK then
 * covers every request the batch held.
 */
static void softrdma_resp_ack_later(struct softrdma_qp *qp, u32 psn)
{
	qp->resp.ack_psn = psn;
	if (qp->resp.ack_pending) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_ACKS_COALESCED);
		return;
	}
	qp->resp.ack_pending = true;
	tasklet_schedule(&qp->resp.tasklet);
}

/* Send an atomic acknowledge of @psn carrying @orig. */
static void softrdma_resp_atomic_ack(struct softrdma_qp *qp, u32 psn, u64 orig)
{
	struct softrdma_atomic_ack_eth *ack;
	struct softrdma_aeth *aeth;
	struct sk_buff *skb;

	softrdma_resp_flush_ack(qp);
	skb = softrdma_roce_alloc_skb(qp, SOFTRDMA_BTH_LEN + SOFTRDMA_AETH_LEN +
				      SOFTRDMA_ATOMIC_ACK_ETH_LEN);
	if (!skb)
		return;
	softrdma_bth_fill((struct softrdma_bth *)skb->data, RC_ATOMIC_ACK, 0,
			  qp->attrs.dest_qp_num, psn, false);
	aeth = (struct softrdma_aeth *)(skb->data + SOFTRDMA_BTH_LEN);
	aeth->smsn = htonl((u32)SOFTRDMA_AETH_ACK_NO_CREDIT << 24 |
			   (qp->resp.msn & SOFTRDMA_PSN_MASK));
	ack = (struct softrdma_atomic_ack_eth *)(aeth + 1);
	ack->orig = cpu_to_be64(orig);
	softrdma_roce_xmit(qp, skb);
}

/*
 * A new atomic request at @psn: execute it once, remember its result for
 * duplicates, acknowledge it. Return: 0 or the NAK syndrome to send.
 */
static u8 softrdma_resp_atomic(struct softrdma_qp *qp, u8 op, u32 psn, u8 *p,
			       u32 len)
{
	struct softrdma_atomic_eth ae;
	struct softrdma_atomic_res *res;
	struct softrdma_mr *mr;
	u64 va, orig;
	int err;

	if (len < SOFTRDMA_ATOMIC_ETH_LEN)
		return SOFTRDMA_NAK_INVALID_REQ;
	memcpy(&ae, p, sizeof(ae));
	va = be64_to_cpu(ae.va);
	if (!(qp->attrs.access & IB_ACCESS_REMOTE_ATOMIC))
		return SOFTRDMA_NAK_REMOTE_ACCESS;
	if (va & 7)
		return SOFTRDMA_NAK_INVALID_REQ;
	mr = softrdma_rkey_get(qp, ntohl(ae.rkey), va, sizeof(u64),
			       IB_ACCESS_REMOTE_ATOMIC, &err);
	if (!mr)
		return SOFTRDMA_NAK_REMOTE_ACCESS;
	err = softrdma_mr_atomic(mr, va, op == RC_CMP_SWAP,
				 be64_to_cpu(ae.compare),
				 be64_to_cpu(ae.swap_add), &orig);
	softrdma_mr_put(mr);
	if (err)
		return SOFTRDMA_NAK_INVALID_REQ;
	res = &qp->resp.atomics[qp->resp.atomic_next++ %
				ARRAY_SIZE(qp->resp.atomics)];
	res->psn = psn;
	res->orig = orig;
	res->valid = true;
	softrdma_resp_flush_ack(qp);
	qp->resp.msn++;
	softrdma_resp_atomic_ack(qp, psn, orig);
	return 0;
}

/* A repeated atomic: answer with the result it had, never execute again. */
static void softrdma_resp_reatomic(struct softrdma_qp *qp, u32 psn)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(qp->resp.atomics); i++) {
		struct softrdma_atomic_res *res = &qp->resp.atomics[i];

		if (res->valid && res->psn == psn) {
			softrdma_resp_atomic_ack(qp, psn, res->orig);
			return;
		}
	}
	/* Too old to remember: the requester gave up on it long ago. */
}

/*
 * Send the next batch of the READ answer in progress; at its end, let go of
 * its MR. An answer cut short (no memory for a packet) ends there: the
 * requester asks again for what it misses.
 */
static void softrdma_resp_read_more(struct softrdma_qp *qp)
{
	u32 mtu = softrdma_mtu(qp), len = qp->resp.rd_len;
	u32 npkts = len ? DIV_ROUND_UP(len, mtu) : 1;
	u32 end = min(npkts, qp->resp.rd_sent + SOFTRDMA_RESP_BATCH), i;

	for (i = qp->resp.rd_sent; i < end; i++) {
		u32 paylen = min(len - i * mtu, mtu), pad = -paylen & 3;
		bool first = i == 0, last = i + 1 == npkts;
		bool aeth = first || last;
		u8 op = first ? (last ? RC_READ_RESP_ONLY : RC_READ_RESP_FIRST) :
				(last ? RC_READ_RESP_LAST : RC_READ_RESP_MIDDLE);
		u32 hlen = SOFTRDMA_BTH_LEN + (aeth ? SOFTRDMA_AETH_LEN : 0);
		struct sk_buff *skb;

		skb = softrdma_roce_alloc_skb(qp, hlen + paylen + pad);
		if (!skb) {
			end = npkts;
			break;
		}
		softrdma_bth_fill((struct softrdma_bth *)skb->data, op,
				  pad << SOFTRDMA_BTH_PAD_SHIFT,
				  qp->attrs.dest_qp_num,
				  softrdma_psn_add(qp->resp.rd_psn, i), false);
		if (aeth) {
			struct softrdma_aeth *a = (struct softrdma_aeth *)
				(skb->data + SOFTRDMA_BTH_LEN);

			a->smsn = htonl((u32)SOFTRDMA_AETH_ACK_NO_CREDIT << 24 |
					(qp->resp.msn & SOFTRDMA_PSN_MASK));
		}
		if (paylen)
			softrdma_mr_copy(qp->resp.rd_mr,
					 qp->resp.rd_va + (u64)i * mtu,
					 skb->data + hlen, paylen, false);
		memset(skb->data + hlen + paylen, 0, pad);
		softrdma_roce_xmit(qp, skb);
	}
	qp->resp.rd_sent = end;
	if (end == npkts) {
		qp->resp.rd_active = false;
		if (qp->resp.rd_mr)
			softrdma_mr_put(qp->resp.rd_mr);
		qp->resp.rd_mr = NULL;
	}
}

/*
 * Answer an RDMA READ request: @len bytes at @va of @mr (whose reference
 * passes to the answer; NULL for a zero-length READ), from @psn on. What
 * the first batch leaves, the tasklet sends.
 */
static void softrdma_resp_read(struct softrdma_qp *qp, struct softrdma_mr *mr,
			       u64 va, u32 len, u32 psn)
{
	softrdma_resp_flush_ack(qp);
	qp->resp.rd_mr = mr;
	qp->resp.rd_va = va;
	qp->resp.rd_len = len;
	qp->resp.rd_psn = psn;
	qp->resp.rd_sent = 0;
	qp->resp.rd_active = true;
	softrdma_resp_read_more(qp);
	if (qp->resp.rd_active)
		tasklet_schedule(&qp->resp.tasklet);
}

/* Answer a repeated READ request again (no change to epsn or MSN). */
static void softrdma_resp_reread(struct softrdma_qp *qp, u8 *p, u32 len,
				 u32 psn)
{
	struct softrdma_reth reth;
	struct softrdma_mr *mr;
	u32 rlen;
	int err;

	if (len < SOFTRDMA_RETH_LEN)
		return;
	memcpy(&reth, p, sizeof(reth));
	rlen = ntohl(reth.len);
	mr = softrdma_rkey_get(qp, ntohl(reth.rkey), be64_to_cpu(reth.va),
			       rlen, IB_ACCESS_REMOTE_READ, &err);
	if (!mr && rlen)
		return;
	softrdma_resp_read(qp, mr, be64_to_cpu(reth.va), rlen, psn);
}

static void softrdma_resp_complete_recv(struct softrdma_qp *qp, u32 status,
					u32 opcode, u32 byte_len, bool imm,
					const u8 *immdt, bool solicited)
{
	struct softrdma_cqe cqe = {};

	cqe.status = status;
	cqe.opcode = opcode;
	cqe.byte_len = byte_len;
	if (imm) {
		cqe.flags |= SOFTRDMA_CQE_WITH_IMM;
		memcpy(&cqe.imm_data, immdt, SOFTRDMA_IMMDT_LEN);
	}
	softrdma_recv_complete(qp, &cqe, solicited);
}

/* Complete a SEND with Invalidate whose @rkey was invalidated. */
static void softrdma_resp_complete_inv(struct softrdma_qp *qp, u32 byte_len,
				       u32 rkey, bool solicited)
{
	struct softrdma_cqe cqe = {};

	cqe.status = IB_WC_SUCCESS;
	cqe.opcode = IB_WC_RECV;
	cqe.byte_len = byte_len;
	cqe.flags = SOFTRDMA_CQE_WITH_INV;
	cqe.imm_data = rkey;
	softrdma_recv_complete(qp, &cqe, solicited);
}

static void softrdma_resp_rcv(struct softrdma_qp *qp, u8 op, u8 flags,
			      u32 psn, bool ackreq, u8 *p, u32 len)
{
	s32 d = softrdma_psn_diff(psn, qp->resp.epsn);
	bool send = op <= RC_SEND_ONLY_IMM || op == RC_SEND_LAST_INV ||
		    op == RC_SEND_ONLY_INV;
	bool inv = op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV;
	bool first = op == RC_SEND_FIRST || op == RC_SEND_ONLY ||
		     op == RC_SEND_ONLY_IMM || op == RC_WRITE_FIRST ||
		     op == RC_WRITE_ONLY || op == RC_WRITE_ONLY_IMM ||
		     op == RC_SEND_ONLY_INV;
	bool last = op == RC_SEND_LAST || op == RC_SEND_LAST_IMM ||
		    op == RC_SEND_ONLY || op == RC_SEND_ONLY_IMM || inv ||
		    op == RC_WRITE_LAST || op == RC_WRITE_LAST_IMM ||
		    op == RC_WRITE_ONLY || op == RC_WRITE_ONLY_IMM;
	bool imm = op == RC_SEND_LAST_IMM || op == RC_SEND_ONLY_IMM ||
		   op == RC_WRITE_LAST_IMM || op == RC_WRITE_ONLY_IMM;
	u32 pad = (flags >> SOFTRDMA_BTH_PAD_SHIFT) & 3;
	struct softrdma_reth reth = {};
	struct softrdma_mr *mr;
	const u8 *immdt = NULL;
	u32 paylen;
	int err;

	if (d > 0) {
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			softrdma_count(qp->sdev, SOFTRDMA_CNT_SEQ_NAKS);
			/* Its PSN is the one expected: the next to resend. */
			softrdma_resp_ack(qp, qp->resp.epsn,
					  SOFTRDMA_NAK_PSN_SEQ);
		}
		return;
	}
	if (d < 0 && op == RC_READ_REQUEST) {
		/* A repeated READ: its responses were lost; send them again. */
		softrdma_count(qp->sdev, SOFTRDMA_CNT_DUPLICATES);
		softrdma_resp_reread(qp, p, len, psn);
		return;
	}
	if (d < 0 && (op == RC_CMP_SWAP || op == RC_FETCH_ADD)) {
		softrdma_resp_reatomic(qp, psn);
		return;
	}
	if (d < 0) {
		/* A duplicate: acknowledge again what we have. */
		softrdma_count(qp->sdev, SOFTRDMA_CNT_DUPLICATES);
		softrdma_resp_ack(qp, softrdma_psn_add(qp->resp.epsn,
						       SOFTRDMA_PSN_MASK),
				  SOFTRDMA_AETH_ACK_NO_CREDIT);
		return;
	}
	qp->resp.nak_sent = false;

	/* max_dest_rd_atomic 0: no resources for READs or atomics at all. */
	if ((op == RC_READ_REQUEST || op == RC_CMP_SWAP ||
	     op == RC_FETCH_ADD) && !qp->attrs.max_dest_rd_atomic)
		goto nak_invalid;

	if (op == RC_CMP_SWAP || op == RC_FETCH_ADD) {
		u8 synd = softrdma_resp_atomic(qp, op, psn, p, len);

		if (synd == SOFTRDMA_NAK_REMOTE_ACCESS)
			goto nak_access;
		if (synd)
			goto nak_invalid;
		qp->resp.epsn = softrdma_psn_add(psn, 1);
		return;
	}

	if (op == RC_WRITE_FIRST || op == RC_WRITE_ONLY ||
	    op == RC_WRITE_ONLY_IMM || op == RC_READ_REQUEST) {
		if (len < SOFTRDMA_RETH_LEN)
			goto nak_invalid;
		memcpy(&reth, p, sizeof(reth));
		p += SOFTRDMA_RETH_LEN;
		len -= SOFTRDMA_RETH_LEN;
	}
	if (imm || inv) {
		if (len < SOFTRDMA_IMMDT_LEN)
			goto nak_invalid;
		immdt = p;
		p += SOFTRDMA_IMMDT_LEN;
		len -= SOFTRDMA_IMMDT_LEN;
	}
	if (len < pad)
		goto nak_invalid;
	paylen = len - pad;

	if (op == RC_READ_REQUEST) {
		u32 rlen = ntohl(reth.len);
		u32 npkts = rlen ? DIV_ROUND_UP(rlen, softrdma_mtu(qp)) : 1;

		if (!(qp->attrs.access & IB_ACCESS_REMOTE_READ))
			goto nak_access;
		mr = softrdma_rkey_get(qp, ntohl(reth.rkey),
				       be64_to_cpu(reth.va), rlen,
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mr && rlen)
			goto nak_access;
		softrdma_resp_flush_ack(qp);
		qp->resp.msn++;
		softrdma_resp_read(qp, mr, be64_to_cpu(reth.va), rlen, psn);
		qp->resp.epsn = softrdma_psn_add(psn, npkts);
		return;
	}

	if (send) {
		if (first && !softrdma_recv_take(qp)) {
			softrdma_count(qp->sdev, SOFTRDMA_CNT_RNR_NAKS);
			softrdma_resp_ack(qp, psn, 0x20 |
					  (qp->attrs.min_rnr_timer & 0x1f));
			/* The rest of the message is dropped, not NAKed. */
			qp->resp.nak_sent = true;
			return;
		}
		if (!qp->resp.in_recv)
			goto nak_invalid;
		if (paylen && softrdma_sge_copy(qp, qp->resp.rsge,
						qp->resp.rwqe.num_sge,
						qp->resp.roff, p, paylen, true,
						IB_ACCESS_LOCAL_WRITE)) {
			softrdma_resp_complete_recv(qp, IB_WC_LOC_LEN_ERR,
						    IB_WC_RECV, 0, false, NULL,
						    false);
			goto nak_invalid;
		}
		qp->resp.roff += paylen;
		if (inv) {
			__be32 ieth;
			u32 rkey;

			memcpy(&ieth, immdt, sizeof(ieth));
			rkey = be32_to_cpu(ieth);

			/*
			 * Only fast-registration MRs of the QP's PD and type 2
			 * windows bound through the QP may be invalidated
			 * remotely.
			 */
			if (softrdma_remote_inv(qp, rkey)) {
				softrdma_resp_complete_recv(qp,
							    IB_WC_REM_INV_REQ_ERR,
							    IB_WC_RECV,
							    qp->resp.roff,
							    false, NULL, false);
				goto nak_invalid;
			}
			softrdma_resp_complete_inv(qp, qp->resp.roff, rkey,
						   flags & SOFTRDMA_BTH_SE);
			qp->resp.msn++;
		} else if (last) {
			softrdma_resp_complete_recv(qp, IB_WC_SUCCESS,
						    IB_WC_RECV,
						    qp->resp.roff, imm, immdt,
						    flags & SOFTRDMA_BTH_SE);
			qp->resp.msn++;
		}
	} else if (op >= RC_WRITE_FIRST && op <= RC_WRITE_ONLY_IMM) {
		if (first) {
			if (!(qp->attrs.access & IB_ACCESS_REMOTE_WRITE))
				goto nak_access;
			qp->resp.wva = be64_to_cpu(reth.va);
			qp->resp.wrkey = ntohl(reth.rkey);
			qp->resp.wlen = ntohl(reth.len);
			qp->resp.woff = 0;
			qp->resp.in_write = true;
		}
		if (!qp->resp.in_write ||
		    qp->resp.woff + paylen > qp->resp.wlen)
			goto nak_invalid;
		if (imm && !softrdma_recv_take(qp)) {
			softrdma_count(qp->sdev, SOFTRDMA_CNT_RNR_NAKS);
			softrdma_resp_ack(qp, psn, 0x20 |
					  (qp->attrs.min_rnr_timer & 0x1f));
			/* The rest of the message is dropped, not NAKed. */
			qp->resp.nak_sent = true;
			return;
		}
		if (paylen) {
			mr = softrdma_rkey_get(qp, qp->resp.wrkey,
					       qp->resp.wva + qp->resp.woff,
					       paylen, IB_ACCESS_REMOTE_WRITE,
					       &err);
			if (!mr)
				goto nak_access;
			softrdma_mr_copy(mr, qp->resp.wva + qp->resp.woff, p,
					 paylen, true);
			softrdma_mr_put(mr);
		}
		qp->resp.woff += paylen;
		if (last) {
			qp->resp.in_write = false;
			if (imm)
				softrdma_resp_complete_recv(qp, IB_WC_SUCCESS,
							    IB_WC_RECV_RDMA_WITH_IMM,
							    qp->resp.wlen, true,
							    immdt,
							    flags & SOFTRDMA_BTH_SE);
			qp->resp.msn++;
		}
	} else {
		goto nak_invalid;
	}
	qp->resp.epsn = softrdma_psn_add(psn, 1);
	if (ackreq)
		softrdma_resp_ack_later(qp, psn);
	return;

nak_access:
	softrdma_resp_ack(qp, psn, SOFTRDMA_NAK_REMOTE_ACCESS);
	softrdma_qp_fail(qp);
	return;
nak_invalid:
	softrdma_resp_ack(qp, psn, SOFTRDMA_NAK_INVALID_REQ);
	softrdma_qp_fail(qp);
}

/* A RoCEv2 packet for us: @skb->data is the UDP header. Consumes @skb. */
void softrdma_roce_rcv(struct sk_buff *skb)
{
	struct softrdma_bth *bth;
	struct softrdma_dev *sdev;
	struct softrdma_qp *qp = NULL;
	struct net_device *ndev;
	enum ib_qp_state state;
	u32 qpn, psn, apsn, len;
	u8 op;

	if (skb_linearize(skb) || !pskb_may_pull(skb, sizeof(struct udphdr)))
		goto drop;
	__skb_pull(skb, sizeof(struct udphdr));
	if (skb->len < SOFTRDMA_BTH_LEN + SOFTRDMA_ICRC_LEN)
		goto drop;
	if (!softrdma_roce_icrc_ok(skb))
		goto drop;
	bth = (struct softrdma_bth *)skb->data;
	qpn = ntohl(bth->qpn) & SOFTRDMA_QPN_MASK;
	apsn = ntohl(bth->apsn);
	psn = apsn & SOFTRDMA_PSN_MASK;
	op = bth->opcode;

	rcu_read_lock();
	ndev = softrdma_roce_rx_netdev(skb);
	sdev = ndev ? softrdma_roce_dev_by_netdev(ndev) : NULL;
	if (sdev) {
		qp = xa_load(&sdev->qps, qpn);
		if (qp && !refcount_inc_not_zero(&qp->refs))
			qp = NULL;
		softrdma_count(sdev, qp ? SOFTRDMA_CNT_RX_PKTS : SOFTRDMA_CNT_RX_NOQP);
	}
	rcu_read_unlock();
	if (!qp)
		goto drop;

	len = skb->len - SOFTRDMA_BTH_LEN - SOFTRDMA_ICRC_LEN;
	spin_lock_bh(&qp->lock);
	state = READ_ONCE(qp->state);
	if ((state == IB_QPS_RTS || state == IB_QPS_SQD) &&
	    op >= RC_READ_RESP_FIRST && op <= RC_ATOMIC_ACK) {
		softrdma_comp_rcv(qp, op, bth->flags, psn,
				  skb->data + SOFTRDMA_BTH_LEN, len);
		/* Send what was posted meanwhile, without a kick. */
		if (READ_ONCE(qp->state) == IB_QPS_RTS)
			softrdma_req_run(qp);
		else
			softrdma_sqd_check(qp);
	} else if ((state == IB_QPS_RTR || state == IB_QPS_RTS ||
		    state == IB_QPS_SQD) &&
		   !(op >= RC_READ_RESP_FIRST && op <= RC_ATOMIC_ACK)) {
		if (!qp->resp.rd_active && skb_queue_empty(&qp->resp.backlog)) {
			softrdma_resp_rcv(qp, op, bth->flags, psn,
					  apsn & SOFTRDMA_BTH_ACKREQ,
					  skb->data + SOFTRDMA_BTH_LEN, len);
		} else if (skb_queue_len(&qp->resp.backlog) <
			   SOFTRDMA_RESP_BACKLOG) {
			/* After the READ answer being sent: see the tasklet. */
			__skb_queue_tail(&qp->resp.backlog, skb);
			skb = NULL;
		} else {
			softrdma_count(sdev, SOFTRDMA_CNT_RX_BACKLOG_DROPS);
		}
	} else {
		softrdma_count(sdev, SOFTRDMA_CNT_RX_QP_STATE);
	}
	spin_unlock_bh(&qp->lock);
	softrdma_qp_put(qp);
drop:
	kfree_skb(skb);
}

/* A request that waited in the backlog: @skb->data is its BTH. */
static void softrdma_resp_rcv_skb(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_bth *bth = (struct softrdma_bth *)skb->data;
	u32 apsn = ntohl(bth->apsn);

	softrdma_resp_rcv(qp, bth->opcode, bth->flags, apsn & SOFTRDMA_PSN_MASK,
			  apsn & SOFTRDMA_BTH_ACKREQ,
			  skb->data + SOFTRDMA_BTH_LEN,
			  skb->len - SOFTRDMA_BTH_LEN - SOFTRDMA_ICRC_LEN);
}

/*
 * The responder's paced output: the next batch of a long READ answer, then
 * the requests that waited for it, in order, then the ACK they ask for.
 * Running as a tasklet, it lets the receive softirq (which delivers the
 * answer's packets when the peer is this host) run between batches.
 */
static void softrdma_resp_tasklet(struct tasklet_struct *t)
{
	struct softrdma_qp *qp = from_tasklet(qp, t, resp.tasklet);
	enum ib_qp_state state;
	struct sk_buff *skb;

	spin_lock(&qp->lock);
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD) {
		softrdma_resp_stop(qp);
		goto out;
	}
	if (qp->resp.rd_active)
		softrdma_resp_read_more(qp);
	while (!qp->resp.rd_active &&
	       (skb = __skb_dequeue(&qp->resp.backlog))) {
		softrdma_resp_rcv_skb(qp, skb);
		kfree_skb(skb);
	}
	if (qp->resp.rd_active)
		tasklet_schedule(t);
	else
		softrdma_resp_flush_ack(qp);
out:
	spin_unlock(&qp->lock);
}

/**
 * softrdma_resp_stop - forget the responder's output in progress
 * @qp: a QP leaving the receiving states; qp->lock held
 *
 * The READ answer being sent stops (its MR is let go), waiting requests
 * are dropped, and no ACK is due any more.
 */
static void softrdma_resp_stop(struct softrdma_qp *qp)
{
	qp->resp.rd_active = false;
	if (qp->resp.rd_mr)
		softrdma_mr_put(qp->resp.rd_mr);
	qp->resp.rd_mr = NULL;
	__skb_queue_purge(&qp->resp.backlog);
	qp->resp.ack_pending = false;
}

static void softrdma_rc_qp_cleanup(struct softrdma_qp *qp);

static int softrdma_rc_qp_init(struct softrdma_qp *qp)
{
	size_t n = qp->sq.num_slots;

	tasklet_setup(&qp->resp.tasklet, softrdma_resp_tasklet);
	skb_queue_head_init(&qp->resp.backlog);
	timer_setup(&qp->req.timer, softrdma_req_timeout, 0);
	qp->swqe = kvcalloc(n, sizeof(*qp->swqe), GFP_KERNEL);
	qp->ssge = kvcalloc(n * qp->sq_max_sge, sizeof(*qp->ssge), GFP_KERNEL);
	qp->sinline = kvzalloc(n * qp->max_inline, GFP_KERNEL);
	if (!qp->swqe || !qp->ssge || !qp->sinline) {
		softrdma_rc_qp_cleanup(qp);
		return -ENOMEM;
	}
	return 0;
}

static void softrdma_rc_qp_cleanup(struct softrdma_qp *qp)
{
	del_timer_sync(&qp->req.timer);
	tasklet_kill(&qp->resp.tasklet);
	softrdma_resp_stop(qp);
	kvfree(qp->swqe);
	kvfree(qp->ssge);
	kvfree(qp->sinline);
	qp->swqe = NULL;
	qp->ssge = NULL;
	qp->sinline = NULL;
}

void softrdma_qp_put(struct softrdma_qp *qp)
{
	if (refcount_dec_and_test(&qp->refs))
		complete(&qp->released);
}

const struct softrdma_transport_ops softrdma_roce_tops = {
	.qp_init = softrdma_rc_qp_init,
	.qp_cleanup = softrdma_rc_qp_cleanup,
	.req_run = softrdma_req_run,
	.req_pending = softrdma_req_pending,
	.sqd_check = softrdma_sqd_check,
	.qp_stop = softrdma_resp_stop,
};
