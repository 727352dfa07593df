// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 receive dispatch: a packet from the UDP socket (net.c) is checked
 * (ICRC), matched to its device and QP, and handed, under qp->lock, to the
 * completer (responses and acknowledgments) or the responder (requests),
 * if the QP's state lets it take the packet; a UD or the GSI QP's to ud.c,
 * a multicast group's to mcast.c. An XRC QP's packet is made an RC one
 * first (softrdma_rx_xrc()).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ipv6.h>

#include "softrdma.h"
#include "roce.h"

/* Is @skb addressed to an IP multicast group? */
static bool softrdma_rx_to_group(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ipv4_is_multicast(ip_hdr(skb)->daddr);
	return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/*
 * Make the headers of a packet in pieces linear: UDP, BTH and what an RC
 * SEND or RDMA WRITE of its opcode has after the BTH (RETH, ImmDt or
 * IETH), as far as the packet goes; no payload, so that the responder
 * places it from the pieces alone (anything else is made linear later).
 */
static bool softrdma_rx_pull_headers(struct sk_buff *skb)
{
	u32 hlen = sizeof(struct udphdr) + SOFTRDMA_BTH_LEN;
	u8 op;

	if (!pskb_may_pull(skb, min(skb->len, hlen)))
		return false;
	if (skb->len < hlen)
		return true;
	op = skb->data[sizeof(struct udphdr)];
	if (op == RC_WRITE_FIRST || op == RC_WRITE_ONLY ||
	    op == RC_WRITE_ONLY_IMM)
		hlen += SOFTRDMA_RETH_LEN;
	if (op == RC_SEND_LAST_IMM || op == RC_SEND_ONLY_IMM ||
	    op == RC_WRITE_LAST_IMM || op == RC_WRITE_ONLY_IMM ||
	    op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV)
		hlen += SOFTRDMA_IMMDT_LEN;
	return pskb_may_pull(skb, min(skb->len, hlen));
}

/*
 * A packet for an XRC QP, @skb->data its BTH: the XRC transport bits come
 * off its opcode, and a request (for an XRC TGT QP) loses its XRCETH,
 * whose XRC SRQ number the responder finds in the skb's cb: from here on
 * it is an RC packet. An XRC INI QP takes responses only, an XRC TGT QP
 * requests only. Return: false to drop it.
 */
static bool softrdma_rx_xrc(struct softrdma_qp *qp, struct sk_buff *skb)
{
	bool tgt = qp->ibqp.qp_type == IB_QPT_XRC_TGT;
	u32 hlen = SOFTRDMA_BTH_LEN + (tgt ? SOFTRDMA_XRCETH_LEN : 0);
	struct softrdma_xrceth xrceth;
	struct softrdma_bth *bth;
	u8 op;

	if (skb->len < hlen + SOFTRDMA_ICRC_LEN ||
	    skb_ensure_writable(skb, hlen))
		return false;
	bth = (struct softrdma_bth *)skb->data;
	op = bth->opcode & ~SOFTRDMA_TRANSPORT_MASK;
	if ((bth->opcode & SOFTRDMA_TRANSPORT_MASK) != SOFTRDMA_XRC_TRANSPORT ||
	    (op >= RC_READ_RESP_FIRST && op <= RC_ATOMIC_ACK) == tgt)
		return false;
	bth->opcode = op;
	if (!tgt)
		return true;
	memcpy(&xrceth, skb->data + SOFTRDMA_BTH_LEN, sizeof(xrceth));
	SOFTRDMA_ROCE_CB(skb)->xrc_srqn = softrdma_xrceth_srqn(&xrceth);
	memmove(skb->data + SOFTRDMA_XRCETH_LEN, skb->data, SOFTRDMA_BTH_LEN);
	__skb_pull(skb, SOFTRDMA_XRCETH_LEN);
	return true;
}

/*
 * A RoCEv2 packet for us: @skb->data is the UDP header; @looped if it came
 * through net.c's loop, not from a wire (it has no ICRC then). A packet
 * in pieces (a looped burst by reference, a peer's train cut by our
 * socket) keeps its payload there for the RC responder; everything else
 * is made linear first. Consumes @skb.
 */
void softrdma_rx_dispatch(struct sk_buff *skb, bool looped)
{
	struct softrdma_roce_qp *rqp;
	struct softrdma_bth *bth;
	struct softrdma_dev *sdev;
	struct softrdma_qp *qp = NULL;
	struct net_device *ndev;
	enum ib_qp_state state;
	u32 qpn, psn, apsn, len, npkts;
	u8 op;

	if (skb_is_nonlinear(skb) && !skb_has_frag_list(skb)) {
		if (!softrdma_rx_pull_headers(skb))
			goto drop;
	} else if (skb_linearize(skb)) {
		goto drop;
	}
	if (!pskb_may_pull(skb, sizeof(struct udphdr)))
		goto drop;
	__skb_pull(skb, sizeof(struct udphdr));
	if (skb->len < SOFTRDMA_BTH_LEN + SOFTRDMA_ICRC_LEN)
		goto drop;
	bth = (struct softrdma_bth *)skb->data;
	qpn = ntohl(bth->qpn) & SOFTRDMA_QPN_MASK;
	/* Checked now, or due as the payload is placed (icrc.c). */
	if (!looped && !softrdma_roce_icrc_rcv(skb, qpn))
		goto drop;
	/* Several packets only on the loop (struct softrdma_roce_cb). */
	if (!looped)
		SOFTRDMA_ROCE_CB(skb)->npkts = 1;
	else
		SOFTRDMA_ROCE_CB(skb)->icrc_due = false;
	npkts = SOFTRDMA_ROCE_CB(skb)->npkts;
	apsn = ntohl(bth->apsn);
	psn = apsn & SOFTRDMA_PSN_MASK;
	op = bth->opcode;

	/* Pieces go to an RC QP's responder only: SENDs and RDMA WRITEs. */
	if (skb_is_nonlinear(skb) &&
	    (qpn == SOFTRDMA_MCAST_QPN ||
	     !(op <= RC_WRITE_ONLY_IMM || op == RC_SEND_LAST_INV ||
	       op == RC_SEND_ONLY_INV))) {
		if (skb_linearize(skb))
			goto drop;
		bth = (struct softrdma_bth *)skb->data;
	}

	rcu_read_lock();
	ndev = softrdma_roce_rx_netdev(skb);
	sdev = ndev ? softrdma_dev_by_netdev(ndev, &softrdma_roce_transport) : NULL;
	if (sdev && (qpn == SOFTRDMA_MCAST_QPN || softrdma_rx_to_group(skb))) {
		/*
		 * To a group: to every QP attached to it (mcast.c). A group
		 * is reached through QP 0xFFFFFF only (IBTA 10.5.1).
		 */
		if (qpn == SOFTRDMA_MCAST_QPN)
			softrdma_mcast_rcv(sdev, skb);
		else
			softrdma_count(sdev, SOFTRDMA_CNT_RX_MCAST_DROPS);
		rcu_read_unlock();
		goto drop;
	}
	if (sdev) {
		qp = xa_load(&sdev->qps, qpn);
		if (qp && !refcount_inc_not_zero(&qp->refs))
			qp = NULL;
		softrdma_count_add(sdev, qp ? SOFTRDMA_CNT_RX_PKTS :
					      SOFTRDMA_CNT_RX_NOQP, npkts);
	}
	rcu_read_unlock();
	/* Only an RC QP's responder places a packet whose ICRC is due. */
	if ((!qp || qp->ibqp.qp_type != IB_QPT_RC) &&
	    !softrdma_roce_icrc_settle(skb)) {
		if (sdev)
			softrdma_count(sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
		if (qp)
			softrdma_qp_put(qp);
		goto drop;
	}
	if (!qp)
		goto drop;
	/*
	 * A CNP is no request and no response: a responder would take it
	 * for a bad request and fail the QP. It slows a QP that sends
	 * ECN-capable packets (cc.c); another counts it and goes on.
	 */
	if (op == SOFTRDMA_OP_CNP) {
		bool handled;

		spin_lock_bh(&qp->lock);
		handled = softrdma_cc_rcv_cnp(qp);
		spin_unlock_bh(&qp->lock);
		if (!handled)
			softrdma_count(sdev, SOFTRDMA_CNT_RP_CNP_IGNORED);
		softrdma_qp_put(qp);
		consume_skb(skb);
		return;
	}
	if (skb_is_nonlinear(skb) && qp->ibqp.qp_type != IB_QPT_RC) {
		if (skb_linearize(skb)) {
			softrdma_qp_put(qp);
			goto drop;
		}
		bth = (struct softrdma_bth *)skb->data;
	}

	if (softrdma_qp_is_ud(qp)) {
		spin_lock_bh(&qp->lock);
		softrdma_ud_rcv(qp, skb);
		spin_unlock_bh(&qp->lock);
		softrdma_qp_put(qp);
		consume_skb(skb);
		return;
	}
	if (softrdma_qp_is_xrc(qp)) {
		if (!softrdma_rx_xrc(qp, skb)) {
			softrdma_count(sdev, SOFTRDMA_CNT_RX_MALFORMED);
			softrdma_qp_put(qp);
			goto drop;
		}
		bth = (struct softrdma_bth *)skb->data;
		op = bth->opcode;
	}
	rqp = to_rqp(qp);
	len = skb->len - SOFTRDMA_BTH_LEN - SOFTRDMA_ICRC_LEN;
	spin_lock_bh(&qp->lock);
	state = READ_ONCE(qp->state);
	if (qp->ibqp.qp_type != IB_QPT_UC)
		softrdma_cc_rcv_ce(qp, skb);
	if (qp->ibqp.qp_type == IB_QPT_UC) {
		/* UC: requests only, nothing to complete or answer. */
		if (state == IB_QPS_RTR || state == IB_QPS_RTS ||
		    state == IB_QPS_SQD)
			softrdma_uc_rcv(qp, op, bth->flags, psn,
					skb->data + SOFTRDMA_BTH_LEN, len);
		else
			softrdma_count(sdev, SOFTRDMA_CNT_RX_QP_STATE);
	} else if ((state == IB_QPS_RTS || state == IB_QPS_SQD) &&
	    op >= RC_READ_RESP_FIRST && op <= RC_ATOMIC_ACK) {
		softrdma_comp_rcv(qp, op, bth->flags, psn,
				  skb->data + SOFTRDMA_BTH_LEN, len);
		/* Send what was posted meanwhile, without a kick; in SQD,
		 * the rest of the message in progress.
		 */
		state = READ_ONCE(qp->state);
		if (state == IB_QPS_RTS || state == IB_QPS_SQD)
			softrdma_req_run(qp);
		if (state == IB_QPS_SQD)
			softrdma_req_sqd_check(qp);
	} else if ((state == IB_QPS_RTR || state == IB_QPS_RTS ||
		    state == IB_QPS_SQD) &&
		   !(op >= RC_READ_RESP_FIRST && op <= RC_ATOMIC_ACK)) {
		if (!rqp->resp.rd_active && skb_queue_empty(&rqp->resp.backlog)) {
			if (softrdma_resp_rcv(qp, skb))
				skb = NULL;	/* kept out of order */
		} else if (skb_queue_len(&rqp->resp.backlog) <
			   SOFTRDMA_RESP_BACKLOG) {
			/* After the READ answer being sent: see the tasklet. */
			__skb_queue_tail(&rqp->resp.backlog, skb);
			skb = NULL;
		} else {
			softrdma_count(sdev, SOFTRDMA_CNT_RX_BACKLOG_DROPS);
		}
	} else {
		softrdma_count(sdev, SOFTRDMA_CNT_RX_QP_STATE);
	}
	spin_unlock_bh(&qp->lock);
	softrdma_qp_put(qp);
	/* Taken (drops in a QP's state are counted, not traced as drops). */
	consume_skb(skb);
	return;
drop:
	kfree_skb(skb);
}
