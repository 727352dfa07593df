// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC requester over RoCEv2 (IBTA Vol. 1 9.7.1-9.7.3, 9.7.6): takes
 * the WQEs the provider published off the send queue, cuts them into
 * packets and sends them within its window, and sends them again (go back
 * N) when the retransmission timer fires or the completer asks; with
 * selective repeat agreed, only the packet a NAK names.
 *
 * A UC QP's requester is the same without ACKs (9.8.2): SENDs and RDMA
 * WRITEs only, no window, no retransmission, and a WQE completes once
 * its last packet is sent.
 *
 * An XRC INI QP's requester is the RC one, its opcodes with the XRC
 * transport bits, an XRCETH after each request's BTH naming the XRC SRQ
 * the WQE gives (Annex A14); no RDMA FLUSH or ATOMIC WRITE.
 *
 * The requester runs when the provider kicks, from the
 * poller and after every acknowledgment, always under qp->lock. Every WQE
 * is copied out of the shared ring once, when it is first taken, and only
 * the kernel's copy is used from then on (retransmissions included).
 */
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
 * Go-back-N's loss window after a timeout. Two packets, each asking for
 * an ACK: a path that lost a window's burst takes a small one, and ACKs
 * open it again by what they acknowledge, doubling it a round trip.
 */
#define SOFTRDMA_REQ_CWND_MIN	2
/*
 * The shortest measured retransmission timeout (selective repeat): a few
 * round trips of a host's stack and the peer's ACK coalescing (one receive
 * batch, or SOFTRDMA_REQ_ACK_EVERY packets of a long message, which the
 * round trip measured includes).
 */
#define SOFTRDMA_RTO_MIN_US	250
/* The responder keeps, for selective repeat, whatever the window sends. */
static_assert(SOFTRDMA_REQ_WINDOW <= SOFTRDMA_SR_WIN);

/*
 * Packets of a message between requests for an ACK: SOFTRDMA_REQ_ACK_EVERY,
 * or fewer in a window cut smaller, so that ACKs open it again before it
 * is full.
 */
static u32 softrdma_req_ack_every(const struct softrdma_roce_qp *rqp)
{
	if (likely(rqp->req.cwnd >= 2 * SOFTRDMA_REQ_ACK_EVERY))
		return SOFTRDMA_REQ_ACK_EVERY;
	return max(rqp->req.cwnd / 2, 1U);
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
	case IB_WR_FLUSH:
		return RC_FLUSH;
	case IB_WR_ATOMIC_WRITE:
		return RC_ATOMIC_WRITE;
	default:
		return RC_READ_REQUEST;
	}
}

/* A SEND or RDMA WRITE: may its packets share an skb (burst or train)? */
static bool softrdma_req_merges(const struct softrdma_swqe *s)
{
	switch (s->wqe.opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

/* Packets the window still takes from packet @pkt of @s on (it is open). */
static u32 softrdma_req_room(struct softrdma_qp *qp,
			     const struct softrdma_swqe *s, u32 pkt)
{
	return to_rqp(qp)->req.cwnd -
	       softrdma_psn_diff(softrdma_psn_add(s->first_psn, pkt),
				 softrdma_req_una(qp));
}

/*
 * How many packets, from packet @pkt of @s on, the next skb may stand for:
 * one, but for a SEND or RDMA WRITE of an RC QP whose last packet took the
 * loop (struct softrdma_roce_cb): as many as SOFTRDMA_LOOP_MAX_BYTES and
 * the window leave room for (fewer when it cannot go by reference:
 * softrdma_req_xmit()'s -E2BIG).
 */
static u32 softrdma_req_burst(struct softrdma_qp *qp,
			      const struct softrdma_swqe *s, u32 pkt)
{
	u32 n = s->npkts - pkt;

	if (n < 2 || !to_rqp(qp)->req.looped ||
	    qp->ibqp.qp_type != IB_QPT_RC || !softrdma_req_merges(s))
		return 1;
	n = min(n, SOFTRDMA_LOOP_MAX_BYTES / softrdma_mtu(qp));
	return max(min(n, softrdma_req_room(qp, s, pkt)), 1U);
}

/*
 * Pieces of a burst's payload by reference at most (64 KiB of whole
 * pages): with its pad and ICRC room (one more piece), within any
 * kernel's MAX_SKB_FRAGS.
 */
#define SOFTRDMA_REQ_REF_FRAGS	16
static_assert(SOFTRDMA_REQ_REF_FRAGS < MAX_SKB_FRAGS);

/*
 * A burst for the loop whose payload stays in the sender's pages: @hlen
 * bytes of headers in the skb, then @paylen bytes at byte @off of the
 * scatter list of the WQE in @slot by reference, then @pad zeroes. The
 * receive side copies them once, straight where they go; the WQE does not
 * complete before that, so the application leaves them alone meanwhile,
 * and the page references keep them in memory whatever it does.
 *
 * Return: the skb; NULL to copy instead (too many pieces, a page that must
 * not go by reference, no memory); or an ERR_PTR of softrdma_mr_get()'s
 * error, or -EINVAL past the list's end (as softrdma_sge_copy()).
 */
static struct sk_buff *softrdma_req_ref_skb(struct softrdma_qp *qp, u32 slot,
					    u32 off, u32 hlen, u32 paylen,
					    u32 pad)
{
	const struct softrdma_sge *sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	u32 nsge = qp->swqe[slot].wqe.num_sge, nbv = 0, left = paylen, i;
	struct bio_vec bv[SOFTRDMA_REQ_REF_FRAGS];
	struct sk_buff *skb;
	int err = 0;

	for (i = 0; i < nsge && left; i++) {
		struct softrdma_mr *mr;
		u32 n, got, j;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min_t(u64, left, sge[i].length - off);
		mr = softrdma_mr_get(qp->sdev, qp->pd, sge[i].lkey,
				     sge[i].addr + off, n, 0, &err);
		if (!mr)
			goto put;
		got = softrdma_mr_pages(mr, sge[i].addr + off, n, bv + nbv,
					SOFTRDMA_REQ_REF_FRAGS - nbv);
		for (j = 0; j < got; j++)
			get_page(bv[nbv + j].bv_page);
		softrdma_mr_put(mr);
		if (!got)
			goto put;
		nbv += got;
		left -= n;
		off = 0;
	}
	if (left) {
		err = -EINVAL;
		goto put;
	}
	skb = softrdma_roce_alloc_skb(qp, hlen);
	if (!skb)
		goto put;
	for (i = 0; i < nbv; i++)
		skb_add_rx_frag(skb, i, bv[i].bv_page, bv[i].bv_offset,
				bv[i].bv_len, bv[i].bv_len);
	if (pad)
		softrdma_roce_add_zeroes(skb, pad);
	return skb;
put:
	for (i = 0; i < nbv; i++)
		put_page(bv[i].bv_page);
	return err ? ERR_PTR(err) : NULL;
}

/* Where a packet's parts go: headers, then payload and pad. */
struct softrdma_req_pkt {
	u32 op;
	u32 off;	/* of the payload in the message */
	u32 paylen;
	u32 pad;
	u32 hlen;	/* BTH and extended headers */
};

/*
 * Lay out the skb for packets @pkt to @pkt + @n - 1 of @s: opcode, headers
 * and payload. Return: its length on a wire, ICRC included.
 */
static u32 softrdma_req_layout(struct softrdma_qp *qp,
			       const struct softrdma_swqe *s, u32 pkt, u32 n,
			       struct softrdma_req_pkt *l)
{
	u32 mtu = softrdma_mtu(qp);
	u32 op = softrdma_rc_opcode(s->wqe.opcode, pkt == 0,
				    pkt + n == s->npkts);

	l->op = op;
	if (op == RC_READ_REQUEST) {
		l->off = pkt * mtu;	/* a re-request asks from @pkt on */
		l->paylen = 0;
	} else if (op == RC_CMP_SWAP || op == RC_FETCH_ADD || op == RC_FLUSH) {
		l->off = 0;
		l->paylen = 0;
	} else if (op == RC_ATOMIC_WRITE) {
		l->off = 0;
		l->paylen = SOFTRDMA_ATOMIC_WRITE_LEN;
	} else {
		l->off = pkt * mtu;
		l->paylen = min(s->len - l->off, n * mtu);
	}
	l->pad = -l->paylen & 3;
	l->hlen = SOFTRDMA_BTH_LEN;
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		l->hlen += SOFTRDMA_XRCETH_LEN;
	if (op == RC_WRITE_FIRST || op == RC_WRITE_ONLY ||
	    op == RC_WRITE_ONLY_IMM || op == RC_READ_REQUEST ||
	    op == RC_ATOMIC_WRITE)
		l->hlen += SOFTRDMA_RETH_LEN;
	if (op == RC_FLUSH)
		l->hlen += SOFTRDMA_FETH_LEN + SOFTRDMA_RETH_LEN;
	if (op == RC_SEND_LAST_IMM || op == RC_SEND_ONLY_IMM ||
	    op == RC_WRITE_LAST_IMM || op == RC_WRITE_ONLY_IMM ||
	    op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV)
		l->hlen += SOFTRDMA_IMMDT_LEN;	/* ImmDt or IETH: same size */
	if (op == RC_CMP_SWAP || op == RC_FETCH_ADD)
		l->hlen += SOFTRDMA_ATOMIC_ETH_LEN;
	return l->hlen + l->paylen + l->pad + SOFTRDMA_ICRC_LEN;
}

/*
 * Write the BTH and extended headers of packets @pkt to @pkt + @n - 1 of
 * @s, laid out as @l, at @p. Return: where the payload goes.
 */
static u8 *softrdma_req_headers(struct softrdma_qp *qp,
				const struct softrdma_swqe *s, u32 pkt, u32 n,
				const struct softrdma_req_pkt *l, u8 *p)
{
	bool uc = qp->ibqp.qp_type == IB_QPT_UC, last = pkt + n == s->npkts;
	u8 *end = p + l->hlen, flags = l->pad << SOFTRDMA_BTH_PAD_SHIFT;
	u32 every = softrdma_req_ack_every(to_rqp(qp));
	u32 op = l->op;

	if (last && (s->wqe.flags & SOFTRDMA_WQE_SOLICITED))
		flags |= SOFTRDMA_BTH_SE;
	/*
	 * UC: the RC opcode with the UC transport bits, never an AckReq;
	 * XRC: with the XRC ones, and the XRC SRQ in an XRCETH.
	 */
	softrdma_bth_fill((struct softrdma_bth *)p,
			  uc ? op | SOFTRDMA_UC_TRANSPORT :
			       softrdma_wire_op(qp, op),
			  flags, qp->attrs.dest_qp_num,
			  softrdma_psn_add(s->first_psn, pkt),
			  !uc && (last || (pkt + n) / every != pkt / every));
	p += SOFTRDMA_BTH_LEN;
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI) {
		softrdma_xrceth_fill((struct softrdma_xrceth *)p,
				     s->wqe.remote_srqn);
		p += SOFTRDMA_XRCETH_LEN;
	}
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
	} else if (op == RC_FLUSH) {
		const struct softrdma_flush_wqe *f = &s->wqe.flush;
		struct softrdma_feth *feth = (struct softrdma_feth *)p;
		struct softrdma_reth *reth = (struct softrdma_reth *)(feth + 1);

		feth->bits = htonl((f->level << SOFTRDMA_FETH_SEL_SHIFT &
				    SOFTRDMA_FETH_SEL_MASK) |
				   (f->type & SOFTRDMA_FETH_PLT_MASK));
		reth->va = cpu_to_be64(f->remote_addr);
		reth->rkey = htonl(f->rkey);
		reth->len = htonl(s->len);
		p += SOFTRDMA_FETH_LEN + SOFTRDMA_RETH_LEN;
	} else if (op == RC_ATOMIC_WRITE) {
		const struct softrdma_atomic_write_wqe *a = &s->wqe.atomic_write;
		struct softrdma_reth *reth = (struct softrdma_reth *)p;

		reth->va = cpu_to_be64(a->remote_addr);
		reth->rkey = htonl(a->rkey);
		reth->len = htonl(SOFTRDMA_ATOMIC_WRITE_LEN);
		p += SOFTRDMA_RETH_LEN;
	} else if (end - p >= SOFTRDMA_RETH_LEN) {
		struct softrdma_reth *reth = (struct softrdma_reth *)p;

		reth->va = cpu_to_be64(s->wqe.remote_addr + l->off);
		reth->rkey = htonl(s->wqe.rkey);
		reth->len = htonl(s->len - l->off);
		p += SOFTRDMA_RETH_LEN;
	}
	if (p < end) {
		if (op == RC_SEND_LAST_INV || op == RC_SEND_ONLY_INV) {
			__be32 rkey = htonl(s->wqe.imm_data);

			memcpy(p, &rkey, SOFTRDMA_IETH_LEN);
		} else {
			/* Immediate data travels as the application wrote it. */
			memcpy(p, &s->wqe.imm_data, SOFTRDMA_IMMDT_LEN);
		}
		p += SOFTRDMA_IMMDT_LEN;
	}
	return p;
}

/* Copy the payload laid out in @l of the WQE in @slot to @p; zero its pad. */
static int softrdma_req_payload(struct softrdma_qp *qp, u32 slot,
				const struct softrdma_req_pkt *l, u8 *p)
{
	const struct softrdma_swqe *s = &qp->swqe[slot];
	int err;

	if (!l->paylen) {
		/* nothing */
	} else if (l->op == RC_ATOMIC_WRITE) {
		/* The 8 bytes as the application gave them. */
		memcpy(p, s->wqe.atomic_write.data, l->paylen);
	} else if (s->wqe.flags & SOFTRDMA_WQE_INLINE) {
		memcpy(p, qp->sinline + (size_t)slot * qp->max_inline + l->off,
		       l->paylen);
	} else {
		err = softrdma_sge_copy(qp, qp->ssge +
					(size_t)slot * qp->sq_max_sge,
					s->wqe.num_sge, l->off, p, l->paylen,
					false, 0);
		if (err)
			return err;
	}
	memset(p + l->paylen, 0, l->pad);
	return 0;
}

/*
 * Transmit packets @pkt to @pkt + @n - 1 of the WQE at index @idx in one
 * skb (@n is 1 but on the loop: softrdma_req_burst()). A burst's payload
 * goes by reference where it can (softrdma_req_ref_skb()); -E2BIG: it
 * cannot, and is larger than SOFTRDMA_LOOP_COPY_MAX_BYTES.
 */
static int softrdma_req_xmit(struct softrdma_qp *qp, u32 idx, u32 pkt, u32 n)
{
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	struct sk_buff *skb = NULL;
	struct softrdma_req_pkt l;
	int err;
	u8 *p;

	softrdma_req_layout(qp, s, pkt, n, &l);
	if (n > 1 && l.paylen && !(s->wqe.flags & SOFTRDMA_WQE_INLINE)) {
		skb = softrdma_req_ref_skb(qp, slot, l.off, l.hlen, l.paylen,
					   l.pad);
		if (IS_ERR(skb))
			return PTR_ERR(skb);
		/* To be copied: not into one skb this large. */
		if (!skb && l.paylen > SOFTRDMA_LOOP_COPY_MAX_BYTES)
			return -E2BIG;
	}
	if (!skb)
		skb = softrdma_roce_alloc_skb(qp, l.hlen + l.paylen + l.pad);
	if (!skb)
		return -ENOMEM;
	p = softrdma_req_headers(qp, s, pkt, n, &l, skb->data);
	/* A burst by reference has its payload and pad in place. */
	if (!skb_is_nonlinear(skb)) {
		err = softrdma_req_payload(qp, slot, &l, p);
		if (err) {
			kfree_skb(skb);
			return err;
		}
	}
	SOFTRDMA_ROCE_CB(skb)->npkts = n;
	if (softrdma_roce_xmit(qp, skb) == -EAGAIN && n > 1)
		return -EAGAIN;
	return 0;
}

/*
 * How many packets, from packet @pkt of @s on, go to a wire in one train
 * (struct softrdma_roce_cb): SEND and RDMA WRITE packets of one length,
 * *@seg bytes, the message's last maybe shorter, within
 * SOFTRDMA_TRAIN_MAX_BYTES and the window. 1: none goes with it.
 */
static u32 softrdma_req_train(struct softrdma_qp *qp,
			      const struct softrdma_swqe *s, u32 pkt, u32 *seg)
{
	struct softrdma_req_pkt l;
	u32 n, max, len;

	if (s->npkts - pkt < 2 || to_rqp(qp)->req.looped || !softrdma_roce_gso ||
	    (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC) ||
	    !softrdma_req_merges(s))
		return 1;
	*seg = softrdma_req_layout(qp, s, pkt, 1, &l);
	max = min(s->npkts - pkt, SOFTRDMA_TRAIN_MAX_BYTES / *seg);
	if (qp->ibqp.qp_type == IB_QPT_RC)
		max = min(max, softrdma_req_room(qp, s, pkt));
	for (n = 1; n < max; n++) {
		len = softrdma_req_layout(qp, s, pkt + n, 1, &l);
		if (len > *seg || (len < *seg && pkt + n + 1 != s->npkts))
			break;
		if (len < *seg) {
			n++;
			break;
		}
	}
	return n;
}

/*
 * The MR of the one SGE of the WQE in @slot that holds bytes [@off, @end)
 * of its message, with a reference, and in *@addr the address of byte
 * @off: a train's payload found once, not once a packet. NULL if no one
 * SGE holds them or its key does not grant them all: then each packet
 * goes its own way (softrdma_req_payload(), which says why). An ERR_PTR
 * if they are an ODP MR's whose pages are not all present (-EBUSY: their
 * fault is queued) or whose fault failed (-EFAULT, said once only, odp.c):
 * then the train does not go.
 */
static struct softrdma_mr *softrdma_req_train_mr(struct softrdma_qp *qp,
						 u32 slot, u32 off, u32 end,
						 u64 *addr)
{
	const struct softrdma_sge *sge = qp->ssge +
					 (size_t)slot * qp->sq_max_sge;
	const struct softrdma_swqe *s = &qp->swqe[slot];
	u32 i, len = end - off;
	struct softrdma_mr *mr;
	int err;

	if (s->wqe.flags & SOFTRDMA_WQE_INLINE)
		return NULL;
	for (i = 0; i < s->wqe.num_sge && off >= sge[i].length; i++)
		off -= sge[i].length;
	if (i == s->wqe.num_sge || len > sge[i].length - off)
		return NULL;
	*addr = sge[i].addr + off;
	mr = softrdma_mr_get(qp->sdev, qp->pd, sge[i].lkey, *addr, len, 0,
			     &err);
	if (!mr && (err == -EBUSY || err == -EFAULT))
		return ERR_PTR(err);
	return mr;
}

/*
 * Pieces of @len bytes of payload in @nbv pages @bv once cut into
 * packets of @mtu bytes each (a page's run split where a packet ends).
 */
static u32 softrdma_req_ref_pieces(const struct bio_vec *bv, u32 nbv,
				   u32 mtu)
{
	u32 i, pos = 0, n = 0;

	for (i = 0; i < nbv; i++) {
		n += (pos + bv[i].bv_len - 1) / mtu - pos / mtu + 1;
		pos += bv[i].bv_len;
	}
	return n;
}

/*
 * A train of an RC QP whose payload stays in the MR's pages, not copied:
 * packets @pkt to @pkt + @n - 1 of the WQE in @slot, their payload the
 * @end - @off0 bytes at @addr of @mr. Headers, pads and ICRCs go in a
 * page of the train's own, those between two packets' payloads one
 * piece, so that the train has n + 1 pieces of them and the payload's.
 * Each packet's ICRC is summed over its cut headers
 * (softrdma_roce_train_head()) and its payload read in place, in one hold
 * of the FPU. The WQE completes only once the peer has the packets (RC:
 * acknowledged), and the page references keep them in memory whatever
 * the application does meanwhile (as softrdma_req_ref_skb()'s).
 *
 * Return: the train, its last ICRC room outside its length (as
 * softrdma_roce_alloc_train()'s); NULL to copy instead (more pieces than
 * an skb takes, a page that must not go by reference, no memory).
 */
static struct sk_buff *softrdma_req_ref_train(struct softrdma_qp *qp,
					      u32 slot, u32 pkt, u32 n,
					      struct softrdma_mr *mr, u64 addr,
					      u32 len)
{
	struct softrdma_swqe *s = &qp->swqe[slot];
	u32 mtu = softrdma_mtu(qp), nbv, i, j, h = 0, hstart = 0, boff = 0;
	u32 plen, left, take, crc, nfrag = 0;
	struct bio_vec bv[MAX_SKB_FRAGS];
	struct softrdma_req_pkt l;
	struct sk_buff *skb;
	struct page *hpage;
	bool held;
	__le32 icrc;
	u8 *hdr, *va;

	if (qp->ibqp.qp_type != IB_QPT_RC || n + 1 >= MAX_SKB_FRAGS)
		return NULL;
	nbv = softrdma_mr_pages(mr, addr, len, bv, MAX_SKB_FRAGS - n - 1);
	if (!nbv || softrdma_req_ref_pieces(bv, nbv, mtu) + n + 1 >
		    MAX_SKB_FRAGS)
		return NULL;
	hpage = softrdma_roce_train_page(0);
	if (!hpage)
		return NULL;
	skb = softrdma_roce_alloc_skb(qp, 0);
	if (!skb) {
		put_page(hpage);
		return NULL;
	}
	hdr = page_address(hpage);
	held = softrdma_crc32_begin();
	for (i = 0, j = 0; i < n; i++) {
		plen = softrdma_req_layout(qp, s, pkt + i, 1, &l);
		softrdma_req_headers(qp, s, pkt + i, 1, &l, hdr + h);
		crc = softrdma_roce_train_head(held, &to_rqp(qp)->net, i, plen,
					       hdr + h, l.hlen);
		h += l.hlen;
		get_page(hpage);
		skb_add_rx_frag(skb, nfrag++, hpage, hstart, h - hstart,
				h - hstart);
		for (left = l.paylen; left; left -= take) {
			take = min(left, bv[j].bv_len - boff);
			get_page(bv[j].bv_page);
			skb_add_rx_frag(skb, nfrag++, bv[j].bv_page,
					bv[j].bv_offset + boff, take, take);
			va = kmap_local_page(bv[j].bv_page);
			crc = softrdma_crc32_in(held, crc,
						va + bv[j].bv_offset + boff,
						take);
			kunmap_local(va);
			boff += take;
			if (boff == bv[j].bv_len) {
				j++;
				boff = 0;
			}
		}
		memset(hdr + h, 0, l.pad);
		crc = softrdma_crc32_in(held, crc, hdr + h, l.pad);
		icrc = cpu_to_le32(~crc);
		hstart = h;
		h += l.pad;
		/* The last one's goes in at softrdma_roce_train_close(). */
		memcpy(hdr + h, &icrc, sizeof(icrc));
		if (i + 1 < n)
			h += sizeof(icrc);
	}
	softrdma_crc32_end(held);
	/* The last pad, maybe none: the piece the last ICRC extends. */
	skb_add_rx_frag(skb, nfrag, hpage, hstart, h - hstart, h - hstart);
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	softrdma_count_add(qp->sdev, SOFTRDMA_CNT_TX_ZCOPY_PKTS, n);
	return skb;
}

/*
 * Transmit packets @pkt to @pkt + @n - 1 (softrdma_req_train(), @seg bytes
 * each) of the WQE at index @idx in one skb: each with its own headers,
 * payload, pad and room for its ICRC (net.c writes it, or we do), the
 * last one's but its ICRC; an RC QP's payload by reference where it can
 * be (softrdma_req_ref_train()), else copied in. -E2BIG: no memory for
 * so large an skb; send them alone. Other errors are
 * softrdma_req_payload()'s (-EBUSY: an ODP MR's pages are being faulted
 * in).
 */
static int softrdma_req_xmit_train(struct softrdma_qp *qp, u32 idx, u32 pkt,
				   u32 n, u32 seg)
{
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	struct softrdma_req_pkt l;
	struct softrdma_mr *mr;
	struct sk_buff *skb = NULL;
	u32 i, len, off0, end, plen, crc;
	bool held = false;
	__le32 icrc;
	u64 addr = 0;
	int err = 0;
	u8 *p, *d;

	len = (n - 1) * seg + softrdma_req_layout(qp, s, pkt + n - 1, 1, &l);
	end = l.off + l.paylen;
	softrdma_req_layout(qp, s, pkt, 1, &l);
	off0 = l.off;
	mr = softrdma_req_train_mr(qp, slot, off0, end, &addr);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	if (mr)
		skb = softrdma_req_ref_train(qp, slot, pkt, n, mr, addr,
					     end - off0);
	if (skb)
		goto built;
	skb = softrdma_roce_alloc_train(qp, len - SOFTRDMA_ICRC_LEN);
	if (!skb) {
		if (mr)
			softrdma_mr_put(mr);
		return -E2BIG;
	}
	p = softrdma_roce_train_data(skb);
	/*
	 * From one MR: each packet's ICRC summed as its payload is copied
	 * in (softrdma_roce_train_head()), one hold of the FPU for the
	 * train; else net.c sums them once the train is built.
	 */
	held = mr && softrdma_crc32_begin();
	for (i = 0; i < n; i++, p += seg) {
		plen = softrdma_req_layout(qp, s, pkt + i, 1, &l);
		d = softrdma_req_headers(qp, s, pkt + i, 1, &l, p);
		if (!mr) {
			err = softrdma_req_payload(qp, slot, &l, d);
			if (err)
				break;
			continue;
		}
		crc = softrdma_roce_train_head(held, &to_rqp(qp)->net, i, plen,
					       p, l.hlen);
		softrdma_mr_read_crc(mr, addr + l.off - off0, d, l.paylen, held,
				     &crc);
		memset(d + l.paylen, 0, l.pad);
		crc = softrdma_crc32_in(held, crc, d + l.paylen, l.pad);
		icrc = cpu_to_le32(~crc);
		memcpy(d + l.paylen + l.pad, &icrc, sizeof(icrc));
	}
	softrdma_crc32_end(held);
	if (err) {
		kfree_skb(skb);
		return err;
	}
built:
	SOFTRDMA_ROCE_CB(skb)->icrc_done = !!mr;
	if (mr)
		softrdma_mr_put(mr);
	SOFTRDMA_ROCE_CB(skb)->npkts = n;
	SOFTRDMA_ROCE_CB(skb)->seg = seg;
	if (softrdma_roce_xmit(qp, skb) == -EAGAIN)
		return -EAGAIN;
	return 0;
}

/* The oldest PSN not acknowledged yet; call with WQEs in flight. */
u32 softrdma_req_una(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_swqe *s =
		&qp->swqe[qp->req.comp_idx & (qp->sq.num_slots - 1)];

	if (softrdma_psn_diff(rqp->req.una_psn, s->first_psn) > 0 &&
	    softrdma_psn_diff(rqp->req.una_psn, s->last_psn) <= 0)
		return rqp->req.una_psn;
	return s->first_psn;
}

/* May the packet of PSN @psn go, or is the window full? */
static bool softrdma_req_window_open(struct softrdma_qp *qp, u32 psn)
{
	return softrdma_psn_diff(psn, softrdma_req_una(qp)) <
	       to_rqp(qp)->req.cwnd;
}

/* A QP's window, whole, as it enters RTS. */
void softrdma_req_window_reset(struct softrdma_roce_qp *rqp)
{
	rqp->req.cwnd = SOFTRDMA_REQ_WINDOW;
	rqp->req.ssthresh = SOFTRDMA_REQ_WINDOW;
	rqp->req.cwnd_acked = 0;
	rqp->req.gbn_recover = rqp->req.psn;
	rqp->req.gbn_resend = false;
}

/*
 * ACKs acknowledged @n more packets: go-back-N's window grows, by @n below
 * ssthresh, then by one for each window's worth acknowledged.
 */
void softrdma_req_acked(struct softrdma_qp *qp, u32 n)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (rqp->req.cwnd >= SOFTRDMA_REQ_WINDOW)
		return;
	if (rqp->req.cwnd < rqp->req.ssthresh) {
		rqp->req.cwnd = min(rqp->req.cwnd + n, SOFTRDMA_REQ_WINDOW);
		return;
	}
	rqp->req.cwnd_acked += n;
	while (rqp->req.cwnd_acked >= rqp->req.cwnd &&
	       rqp->req.cwnd < SOFTRDMA_REQ_WINDOW) {
		rqp->req.cwnd_acked -= rqp->req.cwnd;
		rqp->req.cwnd++;
	}
}

/* Is the WQE at send_idx - 1 only partly sent (the window was full)? */
static bool softrdma_req_partial(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 last = qp->req.send_idx - 1;

	return qp->req.comp_idx != qp->req.send_idx &&
	       rqp->req.tx_pkt < qp->swqe[last & (qp->sq.num_slots - 1)].npkts;
}

/* The IBTA's local ACK timeout, 4.096 us * 2^timeout, in ns. */
static u64 softrdma_req_ibta_ns(struct softrdma_qp *qp)
{
	return 4096ULL << min_t(u8, qp->attrs.timeout, 31);
}

/*
 * The retransmission timeout, in ns: the IBTA's; with selective repeat,
 * once a round trip was measured, srtt + 4 rttvar (RFC 6298), at least
 * SOFTRDMA_RTO_MIN_US, doubled per timeout since the last sample, never
 * above the IBTA's.
 */
static u64 softrdma_req_rto_ns(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u64 ibta = softrdma_req_ibta_ns(qp), rto;

	if (!softrdma_roce_sr(rqp) || !rqp->req.srtt_us)
		return ibta;
	rto = rqp->req.srtt_us + 4ULL * rqp->req.rttvar_us;
	rto = max_t(u64, rto, SOFTRDMA_RTO_MIN_US) * NSEC_PER_USEC;
	return min(rto << rqp->req.rto_shift, ibta);
}

/*
 * WQE @idx completed: if it was the one timed, a round trip measured
 * (srtt and rttvar as RFC 6298 has them, in us).
 */
void softrdma_req_rtt_done(struct softrdma_qp *qp, u32 idx)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 rtt, err;

	if (!rqp->req.rtt_open || idx != rqp->req.rtt_idx)
		return;
	rqp->req.rtt_open = false;
	rtt = max_t(u64, 1, div_u64(ktime_get_ns() - rqp->req.rtt_t0,
				    NSEC_PER_USEC));
	rqp->req.rto_shift = 0;
	if (!rqp->req.srtt_us) {
		rqp->req.srtt_us = rtt;
		rqp->req.rttvar_us = rtt / 2;
		return;
	}
	err = abs((s32)(rqp->req.srtt_us - rtt));
	rqp->req.rttvar_us = rqp->req.rttvar_us - rqp->req.rttvar_us / 4 +
			     err / 4;
	rqp->req.srtt_us = rqp->req.srtt_us - rqp->req.srtt_us / 8 + rtt / 8;
}

/**
 * softrdma_req_timer_set - (re)set the requester's timer
 * @qp: the QP; qp->lock held
 * @ns: when it is due, from now
 *
 * Lazily: a stream of sends moves timer_at with each, and the hrtimer,
 * queued for an earlier time, finds it moved when it fires and goes on
 * to it (softrdma_req_timeout()). A send costs a clock read and a store,
 * not a restart of the hrtimer; only an earlier time restarts it.
 */
void softrdma_req_timer_set(struct softrdma_qp *qp, u64 ns)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	ktime_t at = ktime_add_ns(ktime_get(), ns);

	rqp->req.timer_at = at;
	if (!hrtimer_is_queued(&rqp->req.timer) ||
	    ktime_before(at, hrtimer_get_expires(&rqp->req.timer)))
		hrtimer_start(&rqp->req.timer, at, HRTIMER_MODE_ABS_SOFT);
}

void softrdma_req_arm_timer(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	/* timeout 0 means infinite. */
	if (!qp->attrs.timeout || rqp->req.rnr_wait)
		return;
	softrdma_req_timer_set(qp, softrdma_req_rto_ns(qp));
}

/*
 * Go back N: send again, from gbn_next on, what was sent before and the
 * window takes now; the rest as ACKs open it (softrdma_req_run()).
 */
static void softrdma_req_resend_more(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 idx, pkt, psn;

	/* What ACKs acknowledged meanwhile is not sent again. */
	if (qp->req.comp_idx != qp->req.send_idx &&
	    softrdma_psn_diff(rqp->req.gbn_next, softrdma_req_una(qp)) < 0)
		rqp->req.gbn_next = softrdma_req_una(qp);
	for (idx = qp->req.comp_idx; idx != qp->req.send_idx; idx++) {
		struct softrdma_swqe *s =
			&qp->swqe[idx & (qp->sq.num_slots - 1)];

		if (softrdma_psn_diff(rqp->req.gbn_next, s->last_psn) > 0)
			continue;
		pkt = 0;
		if (softrdma_psn_diff(rqp->req.gbn_next, s->first_psn) > 0)
			pkt = softrdma_psn_diff(rqp->req.gbn_next,
						s->first_psn);
		for (; pkt < s->npkts; pkt++) {
			if (idx + 1 == qp->req.send_idx &&
			    pkt >= rqp->req.tx_pkt)
				goto done;	/* not sent yet: req_run's */
			psn = softrdma_psn_add(s->first_psn, pkt);
			if (!softrdma_req_window_open(qp, psn))
				return;
			if (s->wqe.opcode == IB_WR_RDMA_READ) {
				/* Ask only for the responses still missing. */
				if (idx == qp->req.comp_idx)
					pkt = rqp->req.read_off /
					      softrdma_mtu(qp);
				softrdma_req_xmit(qp, idx, pkt, 1);
				rqp->req.gbn_next =
					softrdma_psn_add(s->last_psn, 1);
				break;
			}
			softrdma_req_xmit(qp, idx, pkt, 1);
			rqp->req.gbn_next = softrdma_psn_add(psn, 1);
		}
	}
done:
	rqp->req.gbn_resend = false;
}

/*
 * Send every packet from @psn (in the oldest WQE, or past it) on again (go
 * back N), as the window takes them.
 */
void softrdma_req_resend(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	rqp->req.rtt_open = false;	/* Karn: no sample across a resend */
	if (qp->req.comp_idx == qp->req.send_idx)
		return;
	rqp->req.gbn_next = psn;
	rqp->req.gbn_resend = true;
	softrdma_req_resend_more(qp);
	softrdma_req_arm_timer(qp);
}

/*
 * Go back N after a loss at @psn: the responder NAKed it (a sequence
 * error), or, @timeout, nothing came back in time. The window is cut
 * (a NAK's once a loss), and what was sent from @psn on goes again.
 */
void softrdma_req_gbn_loss(struct softrdma_qp *qp, u32 psn, bool timeout)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (timeout ||
	    softrdma_psn_diff(psn, rqp->req.gbn_recover) >= 0) {
		rqp->req.ssthresh = max(rqp->req.cwnd / 2,
					SOFTRDMA_REQ_CWND_MIN);
		rqp->req.cwnd = timeout ? SOFTRDMA_REQ_CWND_MIN :
					  rqp->req.ssthresh;
		rqp->req.cwnd_acked = 0;
		rqp->req.gbn_recover = rqp->req.psn;
		softrdma_count(qp->sdev, SOFTRDMA_CNT_GBN_CUTS);
	}
	softrdma_req_resend(qp, psn);
}

/* A PSN sent again, and when (ktime_get_ns() >> 10, about us). */
struct softrdma_req_resent {
	u32 psn;
	u32 at;
};

static u32 softrdma_req_now_us(void)
{
	return ktime_get_ns() >> 10;
}

/* Note that @psn was sent again now; no memory, no note. */
static void softrdma_req_resent_note(struct softrdma_roce_qp *rqp, u32 psn)
{
	struct softrdma_req_resent *r;

	if (!rqp->req.resent) {
		rqp->req.resent = kcalloc(SOFTRDMA_REQ_WINDOW,
					  sizeof(*rqp->req.resent),
					  GFP_ATOMIC | __GFP_NOWARN);
		if (!rqp->req.resent)
			return;
	}
	r = &rqp->req.resent[psn % SOFTRDMA_REQ_WINDOW];
	r->psn = psn;
	r->at = softrdma_req_now_us();
}

/*
 * Selective repeat: a NAK of @psn, sent again less than a smoothed round
 * trip ago: the responder sent the NAK before that resend could reach
 * it (a re-NAK of a gap, or the hole a fill uncovered), and the resend
 * is still on its way; sent once more, it would come twice. (srtt +
 * rttvar waited too long at 5 % loss: a lost resend then waited for a
 * timeout, the window full.)
 */
static bool softrdma_req_resent_lately(struct softrdma_roce_qp *rqp, u32 psn)
{
	const struct softrdma_req_resent *r;

	if (!rqp->req.resent || !rqp->req.srtt_us)
		return false;
	r = &rqp->req.resent[psn % SOFTRDMA_REQ_WINDOW];
	return r->psn == psn && softrdma_req_now_us() - r->at <
				rqp->req.srtt_us;
}

/*
 * Selective repeat: the responder NAKed @psn (the first of a gap, or a
 * hole past it); send it again unless a resend of it is on its way.
 */
void softrdma_req_resend_nak(struct softrdma_qp *qp, u32 psn)
{
	if (softrdma_req_resent_lately(to_rqp(qp), psn)) {
		softrdma_req_arm_timer(qp);
		return;
	}
	softrdma_req_resend_one(qp, psn);
}

/*
 * Selective repeat: the responder NAKed @psn, the first of a gap, and
 * keeps what came after it; send that one packet again (a READ: its
 * request, for the responses still missing).
 */
void softrdma_req_resend_one(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 idx, pkt;

	rqp->req.rtt_open = false;
	for (idx = qp->req.comp_idx; idx != qp->req.send_idx; idx++) {
		struct softrdma_swqe *s =
			&qp->swqe[idx & (qp->sq.num_slots - 1)];

		if (softrdma_psn_diff(psn, s->first_psn) < 0)
			break;
		if (softrdma_psn_diff(psn, s->last_psn) > 0)
			continue;
		pkt = softrdma_psn_diff(psn, s->first_psn);
		if (s->wqe.opcode == IB_WR_RDMA_READ)
			pkt = idx == qp->req.comp_idx ?
			      rqp->req.read_off / softrdma_mtu(qp) : 0;
		else if (idx + 1 == qp->req.send_idx &&
			 pkt >= rqp->req.tx_pkt)
			break;	/* not sent yet: req_run sends it */
		softrdma_count(qp->sdev, SOFTRDMA_CNT_SR_RETRANSMITS);
		softrdma_req_resent_note(rqp, psn);
		softrdma_req_xmit(qp, idx, pkt, 1);
		break;
	}
	softrdma_req_arm_timer(qp);
}

enum hrtimer_restart softrdma_req_timeout(struct hrtimer *t)
{
	struct softrdma_roce_qp *rqp = container_of(t, struct softrdma_roce_qp,
						    req.timer);
	struct softrdma_qp *qp = &rqp->qp;
	enum hrtimer_restart ret = HRTIMER_NORESTART;

	spin_lock_bh(&qp->lock);
	if (!rqp->req.timer_at)
		goto out;	/* stopped since it was set */
	if (ktime_before(ktime_get(), rqp->req.timer_at)) {
		/*
		 * Moved on since (softrdma_req_timer_set()): go on to it,
		 * unless a set of it while this ran queued it already.
		 */
		if (!hrtimer_is_queued(t)) {
			hrtimer_set_expires(t, rqp->req.timer_at);
			ret = HRTIMER_RESTART;
		}
		goto out;
	}
	rqp->req.timer_at = 0;
	/* UD: only what waits for ODP pages sets it. */
	if (softrdma_qp_is_ud(qp)) {
		softrdma_ud_tick(qp);
		goto out;
	}
	if ((READ_ONCE(qp->state) != IB_QPS_RTS &&
	     READ_ONCE(qp->state) != IB_QPS_SQD) ||
	    qp->req.comp_idx == qp->req.send_idx)
		goto out;
	if (rqp->req.tx_tick) {
		/* Not a retry: send what found no memory or tokens. */
		softrdma_req_run(qp);
		/*
		 * An RNR NAK that came meanwhile stopped the timer for its
		 * delay (softrdma_req_arm_timer() leaves it): serve it at
		 * the next tick, or nothing ever does.
		 */
		if (rqp->req.rnr_wait && !rqp->req.timer_at)
			softrdma_req_timer_set(qp, SOFTRDMA_REQ_TICK_NS);
		goto out;
	}
	if (rqp->req.rnr_wait) {
		/* The RNR delay is over: not a retry of retry_cnt's. */
		rqp->req.rnr_wait = false;
		softrdma_req_resend(qp, rqp->req.rnr_psn);
		goto out;
	}
	if (softrdma_req_rto_ns(qp) < softrdma_req_ibta_ns(qp)) {
		/*
		 * A measured timeout, shorter than the IBTA's: not one of
		 * retry_cnt's, which still bound the time a QP tries.
		 */
		if (rqp->req.rto_shift < 24)
			rqp->req.rto_shift++;
	} else if (rqp->req.retries >= qp->attrs.retry_cnt) {
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     IB_WC_RETRY_EXC_ERR);
		qp->req.comp_idx++;
		softrdma_roce_qp_fail(qp);
		goto out;
	} else {
		rqp->req.retries++;
	}
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RETRANSMITS);
	if (softrdma_roce_sr(rqp)) {
		/*
		 * The responder keeps what came past a gap: the oldest
		 * packet alone, then (comp.c) the one at each gap an ACK
		 * shows, not the whole window again.
		 */
		rqp->req.sr_recovery = true;
		rqp->req.sr_recover = rqp->req.psn;
		softrdma_req_resend_one(qp, softrdma_req_una(qp));
	} else {
		softrdma_req_gbn_loss(qp, softrdma_req_una(qp), true);
	}
out:
	spin_unlock_bh(&qp->lock);
	return ret;
}

/* May the WQE at @idx go now (max_rd_atomic, fences, local operations)? */
static bool softrdma_req_may_send(struct softrdma_qp *qp, u32 idx)
{
	return softrdma_sq_may_send(qp, idx, to_rqp(qp)->req.rd_atomic,
				    max_t(u32, qp->attrs.max_rd_atomic, 1));
}

/*
 * An RDMA FLUSH: one placement type or both, a level the spec knows, and a
 * length the RETH carries. Return: WC status.
 */
static u32 softrdma_req_take_flush(struct softrdma_swqe *s)
{
	const struct softrdma_flush_wqe *f = &s->wqe.flush;

	if (!f->type ||
	    (f->type & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT)) ||
	    (f->level != IB_FLUSH_RANGE && f->level != IB_FLUSH_MR))
		return IB_WC_LOC_QP_OP_ERR;
	if (f->length > U32_MAX)
		return IB_WC_LOC_LEN_ERR;
	s->len = f->length;
	return IB_WC_SUCCESS;
}

/* Take a new WQE off the ring into the kernel's copy. Return: WC status. */
static u32 softrdma_req_take(struct softrdma_qp *qp, u32 idx)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 slot = idx & (qp->sq.num_slots - 1);
	u32 mtu = softrdma_mtu(qp), status;
	struct softrdma_swqe *s;
	u8 *body;
	u64 len;

	s = softrdma_sq_take(qp, idx, &body);
	/* UC carries SENDs and RDMA WRITEs (with immediate) only. */
	if (qp->ibqp.qp_type == IB_QPT_UC &&
	    !softrdma_wr_is_local(s->wqe.opcode) &&
	    s->wqe.opcode != IB_WR_SEND &&
	    s->wqe.opcode != IB_WR_SEND_WITH_IMM &&
	    s->wqe.opcode != IB_WR_RDMA_WRITE &&
	    s->wqe.opcode != IB_WR_RDMA_WRITE_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	/* XRC: every RC opcode but IBTA 1.5's. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI &&
	    (s->wqe.opcode == IB_WR_FLUSH || s->wqe.opcode == IB_WR_ATOMIC_WRITE))
		return IB_WC_LOC_QP_OP_ERR;
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
	case IB_WR_FLUSH:
		status = softrdma_req_take_flush(s);
		if (status != IB_WC_SUCCESS)
			return status;
		goto sized;
	case IB_WR_ATOMIC_WRITE:
		/* Its 8 bytes are in the WQE: no local buffer. */
		s->len = SOFTRDMA_ATOMIC_WRITE_LEN;
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
		rqp->req.rd_atomic++;
	/*
	 * An atomic's 8 bytes, like a zero-length message, take one packet;
	 * so does a FLUSH of any length.
	 */
	if (s->wqe.opcode == IB_WR_FLUSH)
		s->npkts = 1;
	else
		s->npkts = max_t(u32, DIV_ROUND_UP(s->len, mtu), 1);
	s->first_psn = rqp->req.psn;
	if (qp->req.comp_idx == idx)
		rqp->req.una_psn = s->first_psn;
	s->last_psn = softrdma_psn_add(rqp->req.psn, s->npkts - 1);
	rqp->req.psn = softrdma_psn_add(rqp->req.psn, s->npkts);
	return IB_WC_SUCCESS;
}

/* Has the provider published WQEs the requester has not taken yet? */
bool softrdma_req_pending(struct softrdma_qp *qp)
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
	/* The poller looks at a QP it has, as ACKs do at a busy one. */
	if (qp->req.comp_idx != qp->req.send_idx || qp->polled) {
		softrdma_ring_clear_flag(&qp->sq, SOFTRDMA_RING_NEED_KICK);
		return false;
	}
	softrdma_qp_need_kick(qp);
	return softrdma_req_pending(qp);
}

/*
 * WQE @idx failed locally with @status: the QP goes to ERR. Those before
 * it, in flight and not acknowledged, complete first, flushed, in order.
 * Caller holds qp->lock.
 */
static void softrdma_req_fail_wqe(struct softrdma_qp *qp, u32 idx, u32 status)
{
	for (; qp->req.comp_idx != idx; qp->req.comp_idx++)
		softrdma_sq_complete(qp, qp->req.comp_idx, IB_WC_WR_FLUSH_ERR);
	softrdma_sq_complete(qp, idx, status);
	qp->req.comp_idx = idx + 1;
	softrdma_roce_qp_fail(qp);
}

/*
 * The requester: send the WQEs the provider has published. Runs on a kick,
 * from the poller, and after every acknowledgment; in SQD only to finish
 * the message a full window stopped. Caller holds qp->lock.
 */
void softrdma_req_run(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_ring_hdr *hdr = qp->sq.hdr;
	bool sent = false, tick = rqp->req.tx_tick;
	u32 prod, pkt, n, seg;

	rqp->req.tx_tick = false;
	/* Go back N: what is sent again goes before anything new. */
	if (rqp->req.gbn_resend)
		softrdma_req_resend_more(qp);

again:
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	if (softrdma_ring_used(prod, qp->req.comp_idx, qp->sq.num_slots) < 0) {
		softrdma_roce_qp_fail(qp);
		return;
	}
	for (;;) {
		u32 idx;
		struct softrdma_swqe *s;
		u32 status;

		if (!softrdma_req_partial(qp)) {
			/* SQD: the message in progress ends, none starts. */
			if (READ_ONCE(qp->state) != IB_QPS_RTS)
				break;
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
			rqp->req.tx_pkt = 0;
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
				softrdma_req_fail_wqe(qp, idx, status);
				return;
			}
		}
		idx = qp->req.send_idx - 1;
		s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
		for (pkt = rqp->req.tx_pkt; pkt < s->npkts; pkt += n) {
			int err;

			/* UC: nothing opens a window again; no window. */
			if (qp->ibqp.qp_type != IB_QPT_UC &&
			    (rqp->req.gbn_resend ||
			     !softrdma_req_window_open(qp,
						       softrdma_psn_add(s->first_psn,
									pkt))))
				goto window_full;
			/*
			 * Out of DCQCN's tokens (cc.c): on the next ACK, or
			 * at the next tick, as a packet that found no memory.
			 */
			if (!softrdma_cc_may_send(qp)) {
				rqp->req.tx_tick = true;
				goto window_full;
			}
			n = softrdma_req_train(qp, s, pkt, &seg);
			if (n > 1) {
				err = softrdma_req_xmit_train(qp, idx, pkt, n,
							      seg);
				if (err == -E2BIG)
					n = 1;
			}
			if (n == 1) {
				n = softrdma_req_burst(qp, s, pkt);
				err = softrdma_req_xmit(qp, idx, pkt, n);
			}
			if (err == -E2BIG) {
				/* Its pages go copied: a smaller burst. */
				n = SOFTRDMA_LOOP_COPY_MAX_BYTES /
				    softrdma_mtu(qp);
				err = softrdma_req_xmit(qp, idx, pkt, n);
			}
			if (err == -EAGAIN && n > 1) {
				/* Off the loop now: one packet each. */
				n = 0;
				continue;
			}
			if (err == -ENOMEM || err == -EBUSY) {
				/*
				 * Not sent (counted in tx_errors), or an ODP
				 * MR's pages are being faulted in (odp.c):
				 * the timer tries again at the next tick,
				 * rather than a retransmission timeout later.
				 */
				rqp->req.tx_tick = true;
				goto window_full;
			}
			if (err == -ENOENT || err == -EACCES ||
			    err == -ERANGE || err == -EINVAL ||
			    err == -EFAULT) {
				softrdma_req_fail_wqe(qp, idx,
						      IB_WC_LOC_PROT_ERR);
				return;
			}
			sent = true;
			softrdma_cc_sent(qp, n * softrdma_mtu(qp));
			rqp->req.tx_pkt = pkt + n;
			if (s->wqe.opcode == IB_WR_RDMA_READ)
				rqp->req.tx_pkt = s->npkts;
			if (rqp->req.tx_pkt == s->npkts &&
			    !rqp->req.rtt_open && softrdma_roce_sr(rqp)) {
				/* Time it, from its last packet on. */
				rqp->req.rtt_open = true;
				rqp->req.rtt_idx = idx;
				rqp->req.rtt_t0 = ktime_get_ns();
			}
			if (s->wqe.opcode == IB_WR_RDMA_READ)
				break;
		}
		/* UC: sent is done (9.8.2); in order, as all before it are. */
		if (qp->ibqp.qp_type == IB_QPT_UC &&
		    rqp->req.tx_pkt == s->npkts) {
			softrdma_sq_complete(qp, idx, IB_WC_SUCCESS);
			qp->req.comp_idx = idx + 1;
		}
	}
window_full:
	if (READ_ONCE(qp->state) == IB_QPS_RTS && softrdma_req_set_need_kick(qp))
		goto again;
	if (rqp->req.tx_tick) {
		softrdma_req_timer_set(qp, SOFTRDMA_REQ_TICK_NS);
		return;
	}
	/*
	 * New packets need the timer; an idle pass must not push it back,
	 * unless it is the tick set for a packet that found no memory or
	 * no tokens.
	 */
	if (qp->req.comp_idx != qp->req.send_idx &&
	    (sent || tick || !rqp->req.timer_at))
		softrdma_req_arm_timer(qp);
}

/*
 * A QP draining its send queue (SQD) sends nothing new; once everything in
 * flight is acknowledged, the consumer asked for it, the SQ_DRAINED event.
 * Caller holds qp->lock.
 */
void softrdma_req_sqd_check(struct softrdma_qp *qp)
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
