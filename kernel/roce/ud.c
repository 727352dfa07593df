// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The UD service over RoCEv2 (IBTA Vol. 1 9.8, 10.2.5, 11.4.1.2), for UD
 * QPs and the GSI QP (QP 1, which the MAD layer and the IB CM talk
 * through).
 *
 * Sending: each WQE is one SEND ONLY packet with a DETH, to the address
 * handle and QP it names, at most the port's active MTU long; it completes
 * as soon as it is sent. Receiving (recv.c dispatches here by QP number):
 * the Q_Key is checked, the packet's network header goes into the first
 * 40 bytes of the receive buffer as the GRH (an IPv6 header, or 20 zero
 * bytes and the IPv4 header), the payload after it. What cannot be taken
 * is dropped and counted; nothing is acknowledged.
 *
 * ODP MRs (odp.c): where the pages of a WQE's buffers are not all present,
 * nothing sleeps for them here (softirq, or under qp->lock). A send waits
 * at the head of the send queue, taken again at the requester's next tick,
 * after the worker faulted its pages in. A datagram waits in the QP's
 * ud_held queue, the receive WQE it took in hand, and the datagrams that
 * come after it wait behind it (a receive queue is consumed in order);
 * the tick places them. A datagram finds no room there (too many waiting,
 * or no memory for its clone) only under a real shortage: it is dropped
 * and counted (rx_ud_odp_drops). A fault that fails completes the WQE
 * with a local protection error, as a bad key does.
 */
#include <linux/hash.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "softrdma.h"
#include "roce.h"

static_assert(sizeof(struct ipv6hdr) == SOFTRDMA_GRH_SIZE);
static_assert(sizeof(struct iphdr) + 20 == SOFTRDMA_GRH_SIZE);
static_assert((int)SOFTRDMA_NETWORK_IPV4 == (int)RDMA_NETWORK_IPV4);
static_assert((int)SOFTRDMA_NETWORK_IPV6 == (int)RDMA_NETWORK_IPV6);

/* The largest UD message: the port's active MTU. */
static u32 softrdma_ud_mtu(struct softrdma_qp *qp)
{
	return ib_mtu_enum_to_int(softrdma_active_mtu(READ_ONCE(qp->sdev->netdev->mtu),
						      SOFTRDMA_ROCE_OVERHEAD));
}

/*
 * The route of a WQE: its address handle's, which must be of the QP's PD,
 * and a UDP source port for the destination QP.
 */
static bool softrdma_ud_route(struct softrdma_qp *qp,
			      const struct softrdma_ud_wqe *ud,
			      struct softrdma_roce_net *net)
{
	struct softrdma_ah *ah;
	unsigned long flags;

	ah = softrdma_ah_lock(qp, ud->ah_num, &flags);
	if (!ah)
		return false;
	*net = to_rah(ah)->net;
	softrdma_ah_unlock(qp, flags);
	net->sport = 0xc000 | hash_32(qp->ibqp.qp_num ^
				      ((ud->remote_qpn & SOFTRDMA_QPN_MASK) << 8),
				      14);
	return true;
}

/*
 * Not an IB_WC_* status: the WQE's ODP pages are being faulted in, it is
 * sent at a later tick.
 */
#define SOFTRDMA_UD_WAIT	U32_MAX

/*
 * Send the WQE at ring index @idx. Return: its completion status, or
 * SOFTRDMA_UD_WAIT (nothing sent, nothing to complete yet).
 */
static u32 softrdma_ud_send(struct softrdma_qp *qp, u32 idx)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_roce_net net;
	struct softrdma_deth *deth;
	struct softrdma_swqe *s;
	struct sk_buff *skb;
	u32 status, pad, hlen;
	bool imm;
	u8 *body, *p, flags;
	u64 len;
	int err;

	s = softrdma_sq_take(qp, idx, &body);
	if (s->wqe.opcode != IB_WR_SEND && s->wqe.opcode != IB_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	imm = s->wqe.opcode == IB_WR_SEND_WITH_IMM;
	status = softrdma_swqe_copy_body(qp, slot, body, &len);
	if (status != IB_WC_SUCCESS)
		return status;
	if (len > softrdma_ud_mtu(qp))
		return IB_WC_LOC_LEN_ERR;
	s->len = len;
	if (!softrdma_ud_route(qp, &s->wqe.ud, &net))
		return IB_WC_LOC_QP_OP_ERR;

	pad = -s->len & 3;
	hlen = SOFTRDMA_BTH_LEN + SOFTRDMA_DETH_LEN +
	       (imm ? SOFTRDMA_IMMDT_LEN : 0);
	skb = softrdma_roce_alloc_skb(qp, hlen + s->len + pad);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	flags = pad << SOFTRDMA_BTH_PAD_SHIFT;
	if (s->wqe.flags & SOFTRDMA_WQE_SOLICITED)
		flags |= SOFTRDMA_BTH_SE;
	softrdma_bth_fill((struct softrdma_bth *)skb->data,
			  imm ? UD_SEND_ONLY_IMM : UD_SEND_ONLY, flags,
			  s->wqe.ud.remote_qpn, rqp->req.psn, false);
	deth = (struct softrdma_deth *)(skb->data + SOFTRDMA_BTH_LEN);
	softrdma_deth_fill(deth, softrdma_ud_qkey(s->wqe.ud.remote_qkey,
						  qp->attrs.qkey),
			   qp->ibqp.qp_num);
	p = skb->data + SOFTRDMA_BTH_LEN + SOFTRDMA_DETH_LEN;
	if (imm) {
		/* Immediate data travels as the application wrote it. */
		memcpy(p, &s->wqe.imm_data, SOFTRDMA_IMMDT_LEN);
		p += SOFTRDMA_IMMDT_LEN;
	}
	if (s->wqe.flags & SOFTRDMA_WQE_INLINE) {
		memcpy(p, qp->sinline + (size_t)slot * qp->max_inline, s->len);
	} else if (s->len) {
		err = softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge,
					s->wqe.num_sge, 0, p, s->len, false, 0);
		if (err) {
			/* Never sent, so no PSN used: all of it later. */
			kfree_skb(skb);
			return err == -EBUSY ? SOFTRDMA_UD_WAIT :
					       IB_WC_LOC_PROT_ERR;
		}
	}
	rqp->req.psn = softrdma_psn_add(rqp->req.psn, 1);
	memset(p + s->len, 0, pad);
	/* A datagram lost on the way is lost: the send still completes. */
	softrdma_roce_xmit_to(qp, skb, &net);
	return IB_WC_SUCCESS;
}

/* Has the provider published WQEs not sent yet? */
bool softrdma_ud_req_pending(struct softrdma_qp *qp)
{
	/* Acquire pairs with the provider's release of its WQEs. */
	return smp_load_acquire(&qp->sq.hdr->producer) != qp->req.send_idx;
}

/*
 * The UD requester: send and complete every WQE published. A WQE in
 * error completes so and moves the QP to the send queue error state
 * (IBTA 10.3.1: the WQEs after it are flushed, receives go on) until the
 * consumer moves it back to RTS. Nothing stays in flight, so once done
 * the provider must kick again (see softrdma_req_run() for the protocol);
 * a WQE whose ODP pages are being faulted in waits for the tick instead,
 * and so do those after it. Caller holds qp->lock.
 */
void softrdma_ud_req_run(struct softrdma_qp *qp)
{
	u32 prod, idx, status;

again:
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&qp->sq.hdr->producer);
	if (softrdma_ring_used(prod, qp->req.comp_idx, qp->sq.num_slots) < 0) {
		softrdma_roce_qp_fail(qp);
		return;
	}
	while (qp->req.send_idx != prod) {
		idx = qp->req.send_idx;
		status = softrdma_ud_send(qp, idx);
		if (status == SOFTRDMA_UD_WAIT) {
			/*
			 * Its pages are being faulted in: it and all after it
			 * wait for the tick (softrdma_ud_tick()).
			 */
			to_rqp(qp)->req.tx_tick = true;
			softrdma_req_timer_set(qp, SOFTRDMA_REQ_TICK_NS);
			return;
		}
		qp->req.send_idx++;
		softrdma_sq_complete(qp, idx, status);
		qp->req.comp_idx = idx + 1;
		if (status != IB_WC_SUCCESS) {
			softrdma_qp_enter_sqe(qp);
			return;
		}
	}
	softrdma_qp_need_kick(qp);
	if (softrdma_ud_req_pending(qp))
		goto again;
}

/* The GRH a receive buffer starts with, from @skb's network header. */
static u8 softrdma_ud_grh(struct sk_buff *skb, u8 *grh)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		memset(grh, 0, SOFTRDMA_GRH_SIZE - sizeof(struct iphdr));
		memcpy(grh + SOFTRDMA_GRH_SIZE - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
		return RDMA_NETWORK_IPV4;
	}
	memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	return RDMA_NETWORK_IPV6;
}

/*
 * Place the datagram @skb for @qp in its receive WQE and complete it, or
 * drop it (counted). Return: -EBUSY if the WQE's ODP pages are being
 * faulted in: the WQE stays in hand (qp->resp.in_recv) and the datagram
 * is to be placed again; else 0. Caller holds qp->lock.
 */
static int softrdma_ud_place(struct softrdma_qp *qp, struct sk_buff *skb)
{
	const struct softrdma_bth *bth = (struct softrdma_bth *)skb->data;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct softrdma_cqe cqe = {};
	struct softrdma_deth deth;
	u8 grh[SOFTRDMA_GRH_SIZE];
	u32 hlen, tail, paylen, want;
	bool imm;
	int err;

	if (bth->opcode != UD_SEND_ONLY && bth->opcode != UD_SEND_ONLY_IMM)
		goto malformed;
	imm = bth->opcode == UD_SEND_ONLY_IMM;
	hlen = SOFTRDMA_BTH_LEN + SOFTRDMA_DETH_LEN +
	       (imm ? SOFTRDMA_IMMDT_LEN : 0);
	tail = softrdma_bth_pad(bth) + SOFTRDMA_ICRC_LEN;
	if (skb->len < hlen + tail)
		goto malformed;
	/* The default partition only, full or limited member. */
	if ((ntohs(bth->pkey) & 0x7fff) != 0x7fff)
		goto malformed;
	paylen = skb->len - hlen - tail;
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD &&
	    state != IB_QPS_SQE) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_QP_STATE);
		return 0;
	}
	memcpy(&deth, skb->data + SOFTRDMA_BTH_LEN, sizeof(deth));
	want = qp->ibqp.qp_type == IB_QPT_GSI ? SOFTRDMA_GSI_QKEY :
						qp->attrs.qkey;
	if (softrdma_deth_qkey(&deth) != want) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_QKEY_DROPS);
		return 0;
	}
	/* In hand: this datagram took it before and found pages absent. */
	if (!qp->resp.in_recv && !softrdma_recv_take(qp)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_UD_NO_RECV);
		return 0;
	}

	cqe.network_hdr_type = softrdma_ud_grh(skb, grh);
	err = softrdma_sge_copy(qp, qp->resp.rsge, qp->resp.rwqe.num_sge, 0,
				grh, sizeof(grh), true, IB_ACCESS_LOCAL_WRITE);
	if (!err && paylen)
		err = softrdma_sge_copy(qp, qp->resp.rsge,
					qp->resp.rwqe.num_sge, sizeof(grh),
					skb->data + hlen, paylen, true,
					IB_ACCESS_LOCAL_WRITE);
	/* What was placed is placed again: nothing is completed yet. */
	if (err == -EBUSY)
		return err;
	cqe.opcode = IB_WC_RECV;
	if (err) {
		cqe.status = err == -EINVAL ? IB_WC_LOC_LEN_ERR :
					      IB_WC_LOC_PROT_ERR;
		softrdma_recv_complete(qp, &cqe, false);
		return 0;
	}
	cqe.status = IB_WC_SUCCESS;
	cqe.byte_len = sizeof(grh) + paylen;
	cqe.flags = SOFTRDMA_CQE_GRH;
	if (imm) {
		cqe.flags |= SOFTRDMA_CQE_WITH_IMM;
		memcpy(&cqe.imm_data, skb->data + SOFTRDMA_BTH_LEN +
		       SOFTRDMA_DETH_LEN, SOFTRDMA_IMMDT_LEN);
	}
	cqe.src_qp = softrdma_deth_sqpn(&deth);
	cqe.pkey_index = 0;
	if (skb_mac_header_was_set(skb) && skb_mac_header_len(skb) >= ETH_HLEN)
		memcpy(cqe.smac, eth_hdr(skb)->h_source, ETH_ALEN);
	softrdma_recv_complete(qp, &cqe, softrdma_bth_se(bth));
	return 0;

malformed:
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_MALFORMED);
	return 0;
}

/*
 * Keep @skb (the caller's: a clone is kept) at the tail of the QP's
 * ud_held queue, for the tick to place, or drop it, counted, if the queue
 * is full or there is no memory. Caller holds qp->lock.
 */
static void softrdma_ud_hold(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct sk_buff *held = NULL;

	if (skb_queue_len(&rqp->ud_held) < SOFTRDMA_UD_HELD_MAX)
		held = skb_clone(skb, GFP_ATOMIC);
	if (!held) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_UD_ODP_DROPS);
		return;
	}
	__skb_queue_tail(&rqp->ud_held, held);
	softrdma_req_timer_set(qp, SOFTRDMA_REQ_TICK_NS);
}

/**
 * softrdma_ud_rcv - a packet for a UD or the GSI QP
 * @qp: the QP its BTH names; qp->lock held
 * @skb: the packet, checked (ICRC), data at the BTH, ICRC included;
 *	 the caller frees it
 */
void softrdma_ud_rcv(struct softrdma_qp *qp, struct sk_buff *skb)
{
	/* Behind datagrams that wait for their pages, in order. */
	if (!skb_queue_empty(&to_rqp(qp)->ud_held) ||
	    softrdma_ud_place(qp, skb) == -EBUSY)
		softrdma_ud_hold(qp, skb);
}

/*
 * The tick of a UD QP's timer (req.c's softrdma_req_timeout()): place the
 * datagrams held for their pages, in order, and send what waited for its
 * pages. Caller holds qp->lock.
 */
void softrdma_ud_tick(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct sk_buff *skb;

	while ((skb = skb_peek(&rqp->ud_held))) {
		if (softrdma_ud_place(qp, skb) == -EBUSY) {
			softrdma_req_timer_set(qp, SOFTRDMA_REQ_TICK_NS);
			break;
		}
		__skb_unlink(skb, &rqp->ud_held);
		consume_skb(skb);
	}
	if (!rqp->req.tx_tick)
		return;
	rqp->req.tx_tick = false;
	/* SQD: none starts; the move back to RTS sends it. */
	if (READ_ONCE(qp->state) == IB_QPS_RTS)
		softrdma_ud_req_run(qp);
}

/*
 * Out of the states that receive (RESET, ERR) or destroyed: the datagrams
 * held go, and the WQE in hand with them (it is flushed, or the rings are
 * reset). Caller holds qp->lock.
 */
void softrdma_ud_stop(struct softrdma_qp *qp)
{
	__skb_queue_purge(&to_rqp(qp)->ud_held);
	to_rqp(qp)->req.tx_tick = false;
}
