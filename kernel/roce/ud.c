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

/* Send the WQE at ring index @idx. Return: its completion status. */
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
	rqp->req.psn = softrdma_psn_add(rqp->req.psn, 1);
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
	} else if (s->len &&
		   softrdma_sge_copy(qp, qp->ssge + (size_t)slot * qp->sq_max_sge,
				     s->wqe.num_sge, 0, p, s->len, false, 0)) {
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
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
 * consumer moves it back to RTS. Nothing stays
 * in flight, so once done the provider must kick again (see
 * softrdma_req_run() for the protocol). Caller holds qp->lock.
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
		idx = qp->req.send_idx++;
		status = softrdma_ud_send(qp, idx);
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

/**
 * softrdma_ud_rcv - a packet for a UD or the GSI QP
 * @qp: the QP its BTH names; qp->lock held
 * @skb: the packet, checked (ICRC), data at the BTH, ICRC included;
 *	 the caller frees it
 */
void softrdma_ud_rcv(struct softrdma_qp *qp, struct sk_buff *skb)
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
		return;
	}
	memcpy(&deth, skb->data + SOFTRDMA_BTH_LEN, sizeof(deth));
	want = qp->ibqp.qp_type == IB_QPT_GSI ? SOFTRDMA_GSI_QKEY :
						qp->attrs.qkey;
	if (softrdma_deth_qkey(&deth) != want) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_QKEY_DROPS);
		return;
	}
	if (!softrdma_recv_take(qp)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_UD_NO_RECV);
		return;
	}

	cqe.network_hdr_type = softrdma_ud_grh(skb, grh);
	err = softrdma_sge_copy(qp, qp->resp.rsge, qp->resp.rwqe.num_sge, 0,
				grh, sizeof(grh), true, IB_ACCESS_LOCAL_WRITE);
	if (!err && paylen)
		err = softrdma_sge_copy(qp, qp->resp.rsge,
					qp->resp.rwqe.num_sge, sizeof(grh),
					skb->data + hlen, paylen, true,
					IB_ACCESS_LOCAL_WRITE);
	cqe.opcode = IB_WC_RECV;
	if (err) {
		cqe.status = err == -EINVAL ? IB_WC_LOC_LEN_ERR :
					      IB_WC_LOC_PROT_ERR;
		softrdma_recv_complete(qp, &cqe, false);
		return;
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
	return;

malformed:
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_MALFORMED);
}
