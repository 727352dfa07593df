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
#include <net/udp.h>

#include "softrdma.h"
#include "roce.h"

/* Is @skb addressed to an IP multicast group? */
static bool softrdma_rx_to_group(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ipv4_is_multicast(ip_hdr(skb)->daddr);
	return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/* An RC SEND or RDMA WRITE: a request the responder places from pieces. */
static bool softrdma_rx_op_pieces(u8 op)
{
	return op <= RC_WRITE_ONLY_IMM || op == RC_SEND_LAST_INV ||
	       op == RC_SEND_ONLY_INV;
}

/* The headers such a request of @op has after its BTH: RETH, ImmDt, IETH. */
static u32 softrdma_rx_ext_len(u8 op)
{
	u32 len = 0;

	if (op == RC_WRITE_FIRST || op == RC_WRITE_ONLY ||
	    op == RC_WRITE_ONLY_IMM)
		len += SOFTRDMA_RETH_LEN;
	if (op == RC_SEND_LAST_IMM || op == RC_SEND_ONLY_IMM ||
	    op == RC_WRITE_LAST_IMM || op == RC_WRITE_ONLY_IMM ||
	    op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV)
		len += SOFTRDMA_IMMDT_LEN;
	return len;
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

	if (!pskb_may_pull(skb, min(skb->len, hlen)))
		return false;
	if (skb->len < hlen)
		return true;
	hlen += softrdma_rx_ext_len(skb->data[sizeof(struct udphdr)]);
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
	    (qpn == SOFTRDMA_MCAST_QPN || !softrdma_rx_op_pieces(op))) {
		if (skb_linearize(skb))
			goto drop;
		bth = (struct softrdma_bth *)skb->data;
	}

	rcu_read_lock();
	sdev = softrdma_roce_rx_dev(skb);
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

/*
 * Trains taken whole. A peer's requester sends a SEND's or RDMA WRITE's
 * packets as one UDP GSO skb (req.c); where nothing cut it on the way (a
 * veth), our socket takes it whole (net.c), and its packets are placed
 * straight from it, one after the other: @skb made in turn the packet it
 * would have been once cut (a view: its headers copied into the linear
 * part, its IP and UDP lengths and IPv4 ID as GSO gives them, its
 * payload the train's fragment at its offset), with no new skb, one QP
 * lookup and one UDP delivery a train. A packet the responder cannot
 * take now (out of order, behind a READ answer, not a SEND or WRITE) is
 * copied out as an skb of its own; a train in another layout, or to a
 * QP that is not RC, is cut as UDP would have cut it.
 */
struct softrdma_rx_train {
	skb_frag_t frags[MAX_SKB_FRAGS];	/* the packets, as they came */
	u32 nr_frags;
	u32 seg;		/* bytes from one BTH to the next */
	u32 tot;		/* bytes of all the packets */
	u32 nhlen;		/* the IP header's */
	u16 id0;		/* the first packet's IPv4 ID */
};

/*
 * The piece of @t that holds byte @*off of its packets; @*off becomes the
 * byte's offset in it.
 */
static const skb_frag_t *softrdma_rx_train_at(const struct softrdma_rx_train *t,
					      u32 *off)
{
	const skb_frag_t *f = t->frags;

	while (*off >= skb_frag_size(f))
		*off -= skb_frag_size(f++);
	return f;
}

/* Copy @len bytes of @t's packets, from byte @off on, to @to. */
static void softrdma_rx_train_read(const struct softrdma_rx_train *t,
				   u32 off, u8 *to, u32 len)
{
	const skb_frag_t *f = softrdma_rx_train_at(t, &off);
	u32 n;

	for (; len; f++, off = 0, to += n, len -= n) {
		n = min(len, skb_frag_size(f) - off);
		memcpy(to, skb_frag_address(f) + off, n);
	}
}

/* The most a view takes into the linear part: BTH, RETH, ImmDt. */
#define SOFTRDMA_RX_VIEW_HDR	(SOFTRDMA_BTH_LEN + SOFTRDMA_RETH_LEN + \
				 SOFTRDMA_IMMDT_LEN)

/*
 * The IP and UDP headers at @nh as GSO gives them to packet @i of @t,
 * @slen bytes after its UDP header: its own lengths and, over IPv4, an
 * ID one more than the packet's before it (inet_gso_segment()). The IPv4
 * header checksum is left as it is: the ICRC masks it, nothing after
 * this reads it.
 */
static void softrdma_rx_cut_headers(const struct sk_buff *skb,
				    const struct softrdma_rx_train *t, u8 *nh,
				    u32 i, u32 slen)
{
	struct udphdr *uh = (struct udphdr *)(nh + t->nhlen);

	uh->len = htons(sizeof(*uh) + slen);
	if (skb->protocol == htons(ETH_P_IP)) {
		struct iphdr *iph = (struct iphdr *)nh;

		iph->tot_len = htons(t->nhlen + sizeof(*uh) + slen);
		iph->id = htons(t->id0 + i);
	} else {
		((struct ipv6hdr *)nh)->payload_len =
			htons(t->nhlen - sizeof(struct ipv6hdr) + sizeof(*uh) +
			      slen);
	}
}

/* Packet @i of @t as an skb of its own, copied, and dispatched. */
static void softrdma_rx_cut_copy(struct sk_buff *skb,
				 const struct softrdma_rx_train *t, u32 i)
{
	u32 start = i * t->seg, slen = min(t->seg, t->tot - start);
	u32 hlen = t->nhlen + sizeof(struct udphdr);
	struct sk_buff *p;
	u8 *nh;

	p = alloc_skb(hlen + slen, GFP_ATOMIC);
	if (!p)
		return;		/* lost, as on a wire */
	nh = skb_put(p, hlen + slen);
	memcpy(nh, skb_network_header(skb), hlen);
	softrdma_rx_train_read(t, start, nh + hlen, slen);
	softrdma_rx_cut_headers(skb, t, nh, i, slen);
	skb_reset_network_header(p);
	skb_set_transport_header(p, t->nhlen);
	__skb_pull(p, t->nhlen);
	p->protocol = skb->protocol;
	p->dev = skb->dev;
	p->skb_iif = skb->skb_iif;
	p->pkt_type = skb->pkt_type;
	softrdma_rx_dispatch(p, false);
}

/*
 * A train not taken in place: cut by GSO as UDP cuts one for a socket
 * that takes no trains (udp_rcv_segment()), each packet dispatched.
 */
static void softrdma_rx_segment(struct sock *sk, struct sk_buff *skb)
{
	struct sk_buff *segs, *next;

	if (!skb_mac_header_was_set(skb)) {
		softrdma_roce_count_drop(skb, SOFTRDMA_CNT_RX_MALFORMED);
		kfree_skb(skb);
		return;
	}
	__skb_push(skb, -skb_mac_offset(skb));
	segs = udp_rcv_segment(sk, skb, skb->protocol == htons(ETH_P_IP));
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		__skb_pull(skb, skb_transport_offset(skb));
		softrdma_rx_dispatch(skb, false);
	}
}

/*
 * Is @skb a train in the layout a view needs: UDP header alone in the
 * linear part (with room after it for a view's headers), the packets in
 * pieces (one, as a copied train is, or a train by reference's headers
 * and pages)? Fills in @t.
 */
static bool softrdma_rx_train_in_place(struct sk_buff *skb,
				       struct softrdma_rx_train *t)
{
	struct skb_shared_info *sh = skb_shinfo(skb);

	if (IS_ENABLED(CONFIG_HIGHMEM) || !(sh->gso_type & SKB_GSO_UDP_L4) ||
	    t->seg < SOFTRDMA_BTH_LEN + SOFTRDMA_ICRC_LEN ||
	    t->tot < SOFTRDMA_BTH_LEN + SOFTRDMA_ICRC_LEN ||
	    skb_headlen(skb) != sizeof(struct udphdr) ||
	    !sh->nr_frags || skb_has_frag_list(skb))
		return false;
	/* A view writes headers into the linear part: our own copy of it. */
	if ((skb_cloned(skb) || skb_tailroom(skb) < SOFTRDMA_RX_VIEW_HDR) &&
	    pskb_expand_head(skb, 0, SOFTRDMA_RX_VIEW_HDR, GFP_ATOMIC))
		return false;
	sh = skb_shinfo(skb);
	t->nr_frags = sh->nr_frags;
	memcpy(t->frags, sh->frags, t->nr_frags * sizeof(*t->frags));
	t->nhlen = skb_transport_header(skb) - skb_network_header(skb);
	if (skb->protocol == htons(ETH_P_IP))
		t->id0 = ntohs(ip_hdr(skb)->id);
	return true;
}

/* The RC QP a train goes to, with a reference; NULL: none, or not RC. */
static struct softrdma_qp *softrdma_rx_train_qp(struct sk_buff *skb, u32 qpn)
{
	struct softrdma_qp *qp = NULL;
	struct softrdma_dev *sdev;

	if (qpn == SOFTRDMA_MCAST_QPN || softrdma_rx_to_group(skb))
		return NULL;
	rcu_read_lock();
	sdev = softrdma_roce_rx_dev(skb);
	if (sdev)
		qp = xa_load(&sdev->qps, qpn);
	if (qp && (qp->ibqp.qp_type != IB_QPT_RC ||
		   !refcount_inc_not_zero(&qp->refs)))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

/*
 * A view, @skb->data its BTH, to the responder of RC QP @qp, if it takes
 * it now: in a receiving state, in order or behind (a request past a gap
 * would be kept, selective repeat), no READ answer going out and nothing
 * waiting for one; the responder then keeps nothing of it. False: not
 * taken (copied out instead). A bad ICRC is counted and dropped here.
 */
static bool softrdma_rx_view_take(struct softrdma_qp *qp, struct sk_buff *skb,
				  u32 qpn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 psn = softrdma_bth_psn((struct softrdma_bth *)skb->data);
	enum ib_qp_state state;
	bool take;

	SOFTRDMA_ROCE_CB(skb)->npkts = 1;
	if (!softrdma_roce_icrc_rcv(skb, qpn))
		return true;
	spin_lock_bh(&qp->lock);
	state = READ_ONCE(qp->state);
	take = (state == IB_QPS_RTR || state == IB_QPS_RTS ||
		state == IB_QPS_SQD) &&
	       !rqp->resp.rd_active && skb_queue_empty(&rqp->resp.backlog) &&
	       !(softrdma_roce_sr(rqp) &&
		 softrdma_psn_diff(psn, rqp->resp.epsn) > 0);
	if (take) {
		softrdma_cc_rcv_ce(qp, skb);
		/* Kept only out of order: see above. */
		WARN_ON_ONCE(softrdma_resp_rcv(qp, skb));
	}
	spin_unlock_bh(&qp->lock);
	if (take) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_PKTS);
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_TRAIN_PKTS);
	}
	return take;
}

/*
 * Make @skb's pieces the @len bytes of @t's packets from byte @off on
 * (@len at least 1: a view's payload, pad and ICRC).
 */
static void softrdma_rx_view_frags(struct sk_buff *skb,
				   const struct softrdma_rx_train *t, u32 off,
				   u32 len)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	const skb_frag_t *f = softrdma_rx_train_at(t, &off);
	skb_frag_t *to = sh->frags;
	u32 n;

	skb->data_len = len;
	for (; len; f++, to++, off = 0, len -= n) {
		n = min(len, skb_frag_size(f) - off);
		*to = *f;
		skb_frag_off_add(to, off);
		skb_frag_size_set(to, n);
	}
	sh->nr_frags = to - sh->frags;
}

/* Packet @i of @t to @qp from @skb made its view; false: not taken. */
static bool softrdma_rx_view(struct softrdma_qp *qp, struct sk_buff *skb,
			     const struct softrdma_rx_train *t, u32 i, u32 qpn)
{
	u32 start = i * t->seg, slen = min(t->seg, t->tot - start), hlen;
	/* @skb->data is the UDP header, the linear part's end its own. */
	const struct softrdma_bth *bth = (const void *)(skb->data +
							sizeof(struct udphdr));
	bool taken;

	if (slen < SOFTRDMA_BTH_LEN + SOFTRDMA_ICRC_LEN)
		return false;
	hlen = min_t(u32, SOFTRDMA_RX_VIEW_HDR, slen - SOFTRDMA_ICRC_LEN);
	softrdma_rx_train_read(t, start, (u8 *)bth, hlen);
	if (!softrdma_rx_op_pieces(bth->opcode) ||
	    (ntohl(bth->qpn) & SOFTRDMA_QPN_MASK) != qpn)
		return false;
	hlen = min(SOFTRDMA_BTH_LEN + softrdma_rx_ext_len(bth->opcode), hlen);
	skb_set_tail_pointer(skb, sizeof(struct udphdr) + hlen);
	softrdma_rx_view_frags(skb, t, start + hlen, slen - hlen);
	skb->len = sizeof(struct udphdr) + slen;
	softrdma_rx_cut_headers(skb, t, skb_network_header(skb), i, slen);
	__skb_pull(skb, sizeof(struct udphdr));
	taken = softrdma_rx_view_take(qp, skb, qpn);
	__skb_push(skb, sizeof(struct udphdr));
	return taken;
}

/**
 * softrdma_rx_train - a UDP GSO skb of RoCEv2 packets, taken whole
 * @sk: the socket it came to (net.c)
 * @skb: @skb->data its UDP header; gso_size the bytes of each packet
 *
 * Consumes @skb.
 */
void softrdma_rx_train(struct sock *sk, struct sk_buff *skb)
{
	struct softrdma_rx_train t = {
		.seg = skb_shinfo(skb)->gso_size,
		.tot = skb->len - sizeof(struct udphdr),
	};
	struct softrdma_qp *qp = NULL;
	struct skb_shared_info *sh;
	struct softrdma_bth bth;
	u32 i, n, qpn;

	if (softrdma_rx_train_in_place(skb, &t)) {
		softrdma_rx_train_read(&t, 0, (u8 *)&bth, sizeof(bth));
		qpn = ntohl(bth.qpn) & SOFTRDMA_QPN_MASK;
		qp = softrdma_rx_train_qp(skb, qpn);
	}
	if (!qp) {
		softrdma_rx_segment(sk, skb);
		return;
	}
	n = DIV_ROUND_UP(t.tot, t.seg);
	for (i = 0; i < n; i++) {
		if (!softrdma_rx_view(qp, skb, &t, i, qpn))
			softrdma_rx_cut_copy(skb, &t, i);
	}
	softrdma_qp_put(qp);
	/* The train as it came, for its freeing. */
	sh = skb_shinfo(skb);
	memcpy(sh->frags, t.frags, t.nr_frags * sizeof(*t.frags));
	sh->nr_frags = t.nr_frags;
	skb_set_tail_pointer(skb, sizeof(struct udphdr));
	skb->data_len = t.tot;
	skb->len = sizeof(struct udphdr) + t.tot;
	consume_skb(skb);
}
