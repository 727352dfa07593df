// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC responder over RoCEv2 (IBTA Vol. 1 9.7.4, 9.7.5.2, 9.8): checks
 * the PSN of each request, places SENDs in receive WQEs and WRITEs in
 * memory, answers READs, atomics, RDMA FLUSHes and ATOMIC WRITEs, replays
 * what a duplicate asks for, and sends ACKs and NAKs. Runs from receive dispatch (recv.c) and from
 * its tasklet, which paces long READ answers, under qp->lock.
 *
 * An XRC TGT QP's responder is this one (recv.c made its requests RC
 * ones): each request uses the XRC SRQ its XRCETH named, which must be of
 * the QP's XRC domain (else NAK Remote Access Error), for its receive
 * WQE, its completion (the SRQ's CQ) and the PD of its memory accesses;
 * what it sends carries the XRC transport bits.
 */
#include "softrdma.h"
#include "roce.h"

/*
 * The responder sends a long READ answer SOFTRDMA_RESP_BATCH packets at a
 * time, one batch per run of its tasklet, so that the receive path (of the
 * peer, or of this very host) runs between batches. Requests that arrive
 * meanwhile wait, in order, up to SOFTRDMA_RESP_BACKLOG (roce.h) of them.
 */
#define SOFTRDMA_RESP_BATCH	64

/* Send an ACK (or NAK, per @synd) for @psn, now. */
static void softrdma_resp_send_ack(struct softrdma_qp *qp, u32 psn, u8 synd)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_aeth *aeth;
	struct sk_buff *skb;

	skb = softrdma_roce_alloc_skb(qp, SOFTRDMA_BTH_LEN + SOFTRDMA_AETH_LEN);
	if (!skb)
		return;
	softrdma_bth_fill((struct softrdma_bth *)skb->data,
			  softrdma_wire_op(qp, RC_ACK), 0,
			  qp->attrs.dest_qp_num, psn, false);
	aeth = (struct softrdma_aeth *)(skb->data + SOFTRDMA_BTH_LEN);
	aeth->smsn = htonl((u32)synd << 24 | (rqp->resp.msn & SOFTRDMA_PSN_MASK));
	softrdma_roce_xmit(qp, skb);
}

/**
 * softrdma_resp_flush_ack - send the coalesced ACK still due, now
 * @qp: the QP; qp->lock held
 *
 * Before any other ACK (PSNs go in order), from the tasklet once a receive
 * batch is through, and from a modify that takes the QP out of the
 * receiving states: what was received and completed here gets its ACK as
 * if the tasklet had run first, or a peer that moves its QP to ERR right
 * after a receive completion (the RDMA CM's disconnect does) would leave
 * the requester's last SEND unacknowledged, to be flushed there.
 */
void softrdma_resp_flush_ack(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (!rqp->resp.ack_pending)
		return;
	rqp->resp.ack_pending = false;
	softrdma_resp_send_ack(qp, rqp->resp.ack_psn,
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
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	rqp->resp.ack_psn = psn;
	if (rqp->resp.ack_pending) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_ACKS_COALESCED);
		return;
	}
	rqp->resp.ack_pending = true;
	tasklet_schedule(&rqp->resp.tasklet);
}

/*
 * NAK the gap at epsn (PSN sequence error): its PSN is the one expected,
 * the next for the requester to send again. Once per gap, but again for
 * selective repeat (softrdma_resp_one()).
 */
static void softrdma_resp_nak_gap(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	rqp->resp.nak_sent = true;
	rqp->resp.nak_rnr = false;
	rqp->resp.nak_behind = 0;
	rqp->resp.sr_lossy = true;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_SEQ_NAKS);
	softrdma_resp_ack(qp, rqp->resp.epsn, SOFTRDMA_NAK_PSN_SEQ);
}

/*
 * RNR NAK the message at @psn (no receive WQE, or ODP pages being
 * faulted in): the requester asks again after the delay, and the rest
 * of the message is dropped, not NAKed. Nor is the gap behind it NAKed
 * again by selective repeat: the requester waits, and a sequence NAK
 * would end the wait early, to meet the same RNR NAK (and spend one of
 * its rnr_retry on it).
 */
static void softrdma_resp_nak_rnr(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	softrdma_count(qp->sdev, SOFTRDMA_CNT_RNR_NAKS);
	softrdma_resp_ack(qp, psn, 0x20 | (qp->attrs.min_rnr_timer & 0x1f));
	rqp->resp.nak_sent = true;
	rqp->resp.nak_rnr = true;
}

/* Send an atomic acknowledge of @psn carrying @orig. */
static void softrdma_resp_atomic_ack(struct softrdma_qp *qp, u32 psn, u64 orig)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_atomic_ack_eth *ack;
	struct softrdma_aeth *aeth;
	struct sk_buff *skb;

	softrdma_resp_flush_ack(qp);
	skb = softrdma_roce_alloc_skb(qp, SOFTRDMA_BTH_LEN + SOFTRDMA_AETH_LEN +
				      SOFTRDMA_ATOMIC_ACK_ETH_LEN);
	if (!skb)
		return;
	softrdma_bth_fill((struct softrdma_bth *)skb->data,
			  softrdma_wire_op(qp, RC_ATOMIC_ACK), 0,
			  qp->attrs.dest_qp_num, psn, false);
	aeth = (struct softrdma_aeth *)(skb->data + SOFTRDMA_BTH_LEN);
	aeth->smsn = htonl((u32)SOFTRDMA_AETH_ACK_NO_CREDIT << 24 |
			   (rqp->resp.msn & SOFTRDMA_PSN_MASK));
	ack = (struct softrdma_atomic_ack_eth *)(aeth + 1);
	ack->orig = cpu_to_be64(orig);
	softrdma_roce_xmit(qp, skb);
}

/* Remember the answer to the request at @psn, for its duplicates. */
static void softrdma_resp_remember(struct softrdma_qp *qp, u8 op, u32 psn,
				   u64 orig)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_atomic_res *res;

	res = &rqp->resp.atomics[rqp->resp.atomic_next++ %
				ARRAY_SIZE(rqp->resp.atomics)];
	res->psn = psn;
	res->op = op;
	res->orig = orig;
	res->valid = true;
}

/*
 * What the helpers below return, beside NAK syndromes, for an ODP MR whose
 * pages are being faulted in (-EBUSY of softrdma_rkey_get(), odp.c): the
 * responder answers an RNR NAK, the requester asks again after the delay.
 */
#define SOFTRDMA_RESP_FAULT	0x20

/*
 * A new atomic request at @psn: execute it once, remember its result for
 * duplicates, acknowledge it. Return: 0, the NAK syndrome to send, or
 * SOFTRDMA_RESP_FAULT.
 */
static u8 softrdma_resp_atomic(struct softrdma_qp *qp, u8 op, u32 psn, u8 *p,
			       u32 len)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_atomic_eth ae;
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
		return err == -EBUSY ? SOFTRDMA_RESP_FAULT :
				       SOFTRDMA_NAK_REMOTE_ACCESS;
	err = softrdma_mr_atomic(mr, va, op == RC_CMP_SWAP ?
				 SOFTRDMA_MR_CMP_SWAP :
				 SOFTRDMA_MR_FETCH_ADD,
				 be64_to_cpu(ae.compare),
				 be64_to_cpu(ae.swap_add), &orig);
	softrdma_mr_put(mr);
	if (err)
		return SOFTRDMA_NAK_INVALID_REQ;
	softrdma_resp_remember(qp, op, psn, orig);
	softrdma_resp_flush_ack(qp);
	rqp->resp.msn++;
	softrdma_resp_atomic_ack(qp, psn, orig);
	return 0;
}

/*
 * Send the next batch of the READ answer in progress; at its end, let go of
 * its MR. An answer cut short (no memory for a packet) ends there: the
 * requester asks again for what it misses.
 */
static void softrdma_resp_read_more(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 mtu = softrdma_mtu(qp), len = rqp->resp.rd_len;
	u32 npkts = len ? DIV_ROUND_UP(len, mtu) : 1;
	u32 end = min(npkts, rqp->resp.rd_sent + SOFTRDMA_RESP_BATCH), i;

	for (i = rqp->resp.rd_sent; i < end; i++) {
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
		softrdma_bth_fill((struct softrdma_bth *)skb->data,
				  softrdma_wire_op(qp, op),
				  pad << SOFTRDMA_BTH_PAD_SHIFT,
				  qp->attrs.dest_qp_num,
				  softrdma_psn_add(rqp->resp.rd_psn, i), false);
		if (aeth) {
			struct softrdma_aeth *a = (struct softrdma_aeth *)
				(skb->data + SOFTRDMA_BTH_LEN);

			a->smsn = htonl((u32)SOFTRDMA_AETH_ACK_NO_CREDIT << 24 |
					(rqp->resp.msn & SOFTRDMA_PSN_MASK));
		}
		if (paylen)
			softrdma_mr_copy(rqp->resp.rd_mr,
					 rqp->resp.rd_va + (u64)i * mtu,
					 skb->data + hlen, paylen, false);
		memset(skb->data + hlen + paylen, 0, pad);
		softrdma_roce_xmit(qp, skb);
	}
	rqp->resp.rd_sent = end;
	if (end == npkts) {
		rqp->resp.rd_active = false;
		if (rqp->resp.rd_mr)
			softrdma_mr_put(rqp->resp.rd_mr);
		rqp->resp.rd_mr = NULL;
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
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	softrdma_resp_flush_ack(qp);
	rqp->resp.rd_mr = mr;
	rqp->resp.rd_va = va;
	rqp->resp.rd_len = len;
	rqp->resp.rd_psn = psn;
	rqp->resp.rd_sent = 0;
	rqp->resp.rd_active = true;
	softrdma_resp_read_more(qp);
	if (rqp->resp.rd_active)
		tasklet_schedule(&rqp->resp.tasklet);
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

/*
 * A new RDMA FLUSH or ATOMIC WRITE (IBTA 1.5) at @psn, @p and @len what
 * follows its BTH: check it, carry it out once, remember it for
 * duplicates, and answer it with a READ response of no data. A FLUSH of
 * the whole MR (level IB_FLUSH_MR) needs its key and rights, not its range.
 * Return: 0, the NAK syndrome to send, or SOFTRDMA_RESP_FAULT.
 */
static u8 softrdma_resp_ext(struct softrdma_qp *qp, u8 op, u32 psn, u8 *p,
			    u32 len, u32 pad)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 type = 0, level = IB_FLUSH_RANGE, rlen;
	int access = IB_ACCESS_REMOTE_WRITE, err;
	struct softrdma_reth reth;
	struct softrdma_mr *mr;
	u64 va, value, orig;

	if (op == RC_FLUSH) {
		struct softrdma_feth feth;

		/* oA19-2: no payload. */
		if (len != SOFTRDMA_FETH_LEN + SOFTRDMA_RETH_LEN || pad)
			return SOFTRDMA_NAK_INVALID_REQ;
		memcpy(&feth, p, sizeof(feth));
		type = ntohl(feth.bits) & SOFTRDMA_FETH_PLT_MASK;
		level = (ntohl(feth.bits) & SOFTRDMA_FETH_SEL_MASK) >>
			SOFTRDMA_FETH_SEL_SHIFT;
		if (!type || (type & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT)) ||
		    level > IB_FLUSH_MR)
			return SOFTRDMA_NAK_INVALID_REQ;
		access = (type & IB_FLUSH_GLOBAL ? IB_ACCESS_FLUSH_GLOBAL : 0) |
			 (type & IB_FLUSH_PERSISTENT ?
			  IB_ACCESS_FLUSH_PERSISTENT : 0);
		p += SOFTRDMA_FETH_LEN;
	} else if (len != SOFTRDMA_RETH_LEN + SOFTRDMA_ATOMIC_WRITE_LEN || pad) {
		return SOFTRDMA_NAK_INVALID_REQ;	/* oA19-28: 8 bytes */
	}
	memcpy(&reth, p, sizeof(reth));
	va = be64_to_cpu(reth.va);
	rlen = ntohl(reth.len);
	if ((qp->attrs.access & access) != access)
		return SOFTRDMA_NAK_REMOTE_ACCESS;
	if (op == RC_ATOMIC_WRITE &&
	    (rlen != SOFTRDMA_ATOMIC_WRITE_LEN || (va & 7)))
		return SOFTRDMA_NAK_INVALID_REQ;
	mr = softrdma_rkey_get(qp, ntohl(reth.rkey), va,
			       level == IB_FLUSH_MR ? 0 : rlen, access, &err);
	if (!mr && err == -EBUSY)
		return SOFTRDMA_RESP_FAULT;
	if (!mr && !(level == IB_FLUSH_MR && err == -ERANGE))
		return SOFTRDMA_NAK_REMOTE_ACCESS;
	err = 0;
	if (op == RC_ATOMIC_WRITE) {
		/* The 8 bytes as they came, in one store. */
		memcpy(&value, p + SOFTRDMA_RETH_LEN, sizeof(value));
		err = softrdma_mr_atomic(mr, va, SOFTRDMA_MR_ATOMIC_WRITE, 0, value,
					 &orig);
	} else {
		/*
		 * What was placed before is in memory the CPUs share; order it
		 * before the answer. (No MR is persistent: see roce.c.)
		 */
		wmb();
	}
	if (mr)
		softrdma_mr_put(mr);
	if (err)
		return SOFTRDMA_NAK_INVALID_REQ;
	softrdma_resp_remember(qp, op, psn, 0);
	rqp->resp.msn++;
	softrdma_resp_read(qp, NULL, 0, 0, psn);
	return 0;
}

/*
 * The first packet of an RDMA WRITE (RC or UC): where the message goes.
 */
void softrdma_resp_write_start(struct softrdma_qp *qp,
			       const struct softrdma_reth *reth)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	rqp->resp.wva = be64_to_cpu(reth->va);
	rqp->resp.wrkey = ntohl(reth->rkey);
	rqp->resp.wlen = ntohl(reth->len);
	rqp->resp.woff = 0;
	rqp->resp.in_write = true;
}

/*
 * Place @paylen bytes of an RDMA WRITE (RC or UC) where the message has
 * got to; with @crc, summing them (softrdma_mr_copy_crc()). Return: 0, or
 * softrdma_rkey_get()'s error.
 */
static int softrdma_resp_write_put(struct softrdma_qp *qp, u8 *p, u32 paylen,
				   u32 *crc)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u64 va = rqp->resp.wva + rqp->resp.woff;
	struct softrdma_mr *mr;
	int err;

	if (paylen) {
		mr = softrdma_resp_mr_get(qp, rqp->resp.wrkey, va, paylen,
					  IB_ACCESS_REMOTE_WRITE, true, &err);
		if (!mr)
			return err;
		if (crc)
			softrdma_mr_copy_crc(mr, va, p, paylen, crc);
		else
			softrdma_mr_copy(mr, va, p, paylen, true);
		softrdma_resp_mr_put(qp, mr);
	}
	rqp->resp.woff += paylen;
	return 0;
}

/* As softrdma_resp_write_put(); false if its rkey does not grant them. */
bool softrdma_resp_write_place(struct softrdma_qp *qp, u8 *p, u32 paylen)
{
	return !softrdma_resp_write_put(qp, p, paylen, NULL);
}

/*
 * A repeated atomic, FLUSH or ATOMIC WRITE: answer as the first time,
 * never execute again.
 */
static void softrdma_resp_reatomic(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 i;

	for (i = 0; i < ARRAY_SIZE(rqp->resp.atomics); i++) {
		struct softrdma_atomic_res *res = &rqp->resp.atomics[i];

		if (!res->valid || res->psn != psn)
			continue;
		if (res->op == RC_FLUSH || res->op == RC_ATOMIC_WRITE)
			softrdma_resp_read(qp, NULL, 0, 0, psn);
		else
			softrdma_resp_atomic_ack(qp, psn, res->orig);
		return;
	}
	/* Too old to remember: the requester gave up on it long ago. */
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

/*
 * Place @len bytes of @skb's payload, from @p (in its linear part) on:
 * into the receive WQE (@send) or where the RDMA WRITE has got to. A
 * burst by reference (req.c) has them in pieces after its headers.
 * Return: 0; -EINVAL if the receive WQE cannot hold them, another error
 * of softrdma_sge_copy() if its own keys do not grant them (a local
 * protection error), -EACCES if the WRITE's rkey does not grant them;
 * -EBUSY if an ODP MR's pages are being faulted in (odp.c): what was
 * placed is placed again when the request comes again. With @crc, the
 * ICRC goes on over the bytes as they are copied (icrc.c).
 */
static int softrdma_resp_place(struct softrdma_qp *qp, struct sk_buff *skb,
			       u8 *p, u32 len, bool send, u32 *crc)
{
	u32 n = min_t(u32, len, skb_tail_pointer(skb) - p);
	struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int i = 0;
	int err = 0;

	for (;;) {
		if (send && n) {
			err = softrdma_resp_recv_copy(qp, p, n, crc);
			if (!err)
				qp->resp.roff += n;
		} else if (n) {
			err = softrdma_resp_write_put(qp, p, n, crc);
			if (err && err != -EBUSY)
				err = -EACCES;
		}
		if (i)
			kunmap_local(p);
		len -= n;
		if (err || !len)
			return err;
		if (i == sh->nr_frags)
			return send ? -EINVAL : -EACCES;
		n = min_t(u32, len, skb_frag_size(&sh->frags[i]));
		p = kmap_local_page(skb_frag_page(&sh->frags[i])) +
		    skb_frag_off(&sh->frags[i]);
		i++;
	}
}

/*
 * A request whose ICRC is due (icrc.c) is checked before anything comes
 * of it. False: bad, counted; it is dropped as if it had never come.
 */
static bool softrdma_resp_icrc_settle(struct softrdma_qp *qp,
				      struct sk_buff *skb)
{
	if (softrdma_roce_icrc_settle(skb))
		return true;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
	return false;
}

/*
 * After a due request's payload went into place (@err: how that went),
 * its ICRC: summed up to its payload's end, byte @end of @skb, in @crc;
 * after an error, checked over again. False: bad (counted), what was
 * placed goes back to where it was, a good copy of it overwrites it.
 */
static bool softrdma_resp_icrc_placed(struct softrdma_qp *qp,
				      struct sk_buff *skb, int err, u32 crc,
				      u32 end)
{
	if (err ? softrdma_roce_icrc_settle(skb) :
		  softrdma_roce_icrc_end(skb, crc, end))
		return true;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
	return false;
}

/*
 * A request for @qp; @skb->data is its BTH. It stands for npkts packets
 * (struct softrdma_roce_cb; more than one only on the loop: a SEND's or
 * RDMA WRITE's). Caller holds qp->lock; for an XRC TGT QP, also
 * rcu_read_lock(), with the XRC SRQ the request names in qp->xrc_srq
 * (NULL: none of the QP's domain).
 */
static void softrdma_resp_request(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_bth *bth = (struct softrdma_bth *)skb->data;
	u32 apsn = ntohl(bth->apsn), psn = apsn & SOFTRDMA_PSN_MASK;
	u32 npkts = SOFTRDMA_ROCE_CB(skb)->npkts;
	bool ackreq = apsn & SOFTRDMA_BTH_ACKREQ;
	u8 op = bth->opcode, flags = bth->flags;
	u8 *p = skb->data + SOFTRDMA_BTH_LEN;
	u32 len = skb->len - SOFTRDMA_BTH_LEN - SOFTRDMA_ICRC_LEN;
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	s32 d = softrdma_psn_diff(psn, rqp->resp.epsn);
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
	bool due = SOFTRDMA_ROCE_CB(skb)->icrc_due;
	struct softrdma_reth reth = {};
	struct softrdma_mr *mr;
	const u8 *immdt = NULL;
	u32 paylen, off0, crc = 0;
	int err;

	if (d > 0) {
		if (!rqp->resp.nak_sent)
			softrdma_resp_nak_gap(qp);
		return;
	}
	if (d < 0 && op == RC_READ_REQUEST) {
		/* A repeated READ: its responses were lost; send them again. */
		softrdma_count(qp->sdev, SOFTRDMA_CNT_DUPLICATES);
		softrdma_resp_reread(qp, p, len, psn);
		return;
	}
	if (d < 0 && (op == RC_CMP_SWAP || op == RC_FETCH_ADD ||
		      op == RC_FLUSH || op == RC_ATOMIC_WRITE)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_DUPLICATES);
		softrdma_resp_reatomic(qp, psn);
		return;
	}
	if (d < 0) {
		/* A duplicate: acknowledge again what we have. */
		softrdma_count(qp->sdev, SOFTRDMA_CNT_DUPLICATES);
		softrdma_resp_ack(qp, softrdma_psn_add(rqp->resp.epsn,
						       SOFTRDMA_PSN_MASK),
				  SOFTRDMA_AETH_ACK_NO_CREDIT);
		return;
	}
	rqp->resp.nak_sent = false;
	rqp->resp.nak_rnr = false;
	rqp->resp.nak_behind = 0;
	if (npkts > 1 && !send && !(op >= RC_WRITE_FIRST &&
				    op <= RC_WRITE_ONLY_IMM))
		goto nak_invalid;
	/*
	 * XRC: an XRC SRQ of the QP's domain, or an XRC domain violation,
	 * which the responder answers as the access violation it is.
	 */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT && !qp->xrc_srq)
		goto nak_access;

	/*
	 * max_dest_rd_atomic 0: no resources for READs, atomics, FLUSHes or
	 * ATOMIC WRITEs at all.
	 */
	if ((op == RC_READ_REQUEST || op == RC_CMP_SWAP ||
	     op == RC_FETCH_ADD || op == RC_FLUSH || op == RC_ATOMIC_WRITE) &&
	    !qp->attrs.max_dest_rd_atomic)
		goto nak_invalid;

	if (op == RC_CMP_SWAP || op == RC_FETCH_ADD || op == RC_FLUSH ||
	    op == RC_ATOMIC_WRITE) {
		u8 synd = op == RC_FLUSH || op == RC_ATOMIC_WRITE ?
			  softrdma_resp_ext(qp, op, psn, p, len,
					    (flags >> SOFTRDMA_BTH_PAD_SHIFT) & 3) :
			  softrdma_resp_atomic(qp, op, psn, p, len);

		if (synd == SOFTRDMA_RESP_FAULT)
			goto rnr_fault;
		if (synd == SOFTRDMA_NAK_REMOTE_ACCESS)
			goto nak_access;
		if (synd)
			goto nak_invalid;
		rqp->resp.epsn = softrdma_psn_add(psn, 1);
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
	if (due)
		crc = softrdma_roce_icrc_head(skb, p);

	if (op == RC_READ_REQUEST) {
		u32 rlen = ntohl(reth.len);
		u32 npkts = rlen ? DIV_ROUND_UP(rlen, softrdma_mtu(qp)) : 1;

		if (!(qp->attrs.access & IB_ACCESS_REMOTE_READ))
			goto nak_access;
		mr = softrdma_rkey_get(qp, ntohl(reth.rkey),
				       be64_to_cpu(reth.va), rlen,
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mr && rlen && err == -EBUSY)
			goto rnr_fault;
		if (!mr && rlen)
			goto nak_access;
		softrdma_resp_flush_ack(qp);
		rqp->resp.msn++;
		softrdma_resp_read(qp, mr, be64_to_cpu(reth.va), rlen, psn);
		rqp->resp.epsn = softrdma_psn_add(psn, npkts);
		return;
	}

	if (send) {
		/*
		 * A receive WQE in hand at a first packet: taken for it when
		 * it came before and found ODP pages absent (rnr_fault).
		 */
		if (first && !qp->resp.in_recv && !softrdma_recv_take(qp)) {
			softrdma_resp_nak_rnr(qp, psn);
			return;
		}
		if (!qp->resp.in_recv)
			goto nak_invalid;
		off0 = qp->resp.roff;
		err = softrdma_resp_place(qp, skb, p, paylen, true,
					  due ? &crc : NULL);
		if (due && !softrdma_resp_icrc_placed(qp, skb, err, crc,
						      p - skb->data + paylen)) {
			qp->resp.roff = off0;
			return;
		}
		if (err == -EBUSY) {
			qp->resp.roff = off0;
			goto rnr_fault;
		}
		if (err == -EINVAL) {
			/* Longer than the receive WQE: the sender's fault. */
			softrdma_resp_complete_recv(qp, IB_WC_LOC_LEN_ERR,
						    IB_WC_RECV, 0, false, NULL,
						    false);
			goto nak_invalid;
		}
		if (err) {
			/*
			 * The receive WQE's own keys do not grant its buffers
			 * (an MR deregistered, or moved to another PD or range
			 * since): a local protection error here, a Remote
			 * Operational Error NAK for the sender, as IBTA has it.
			 */
			softrdma_resp_complete_recv(qp, IB_WC_LOC_PROT_ERR,
						    IB_WC_RECV, 0, false, NULL,
						    false);
			goto nak_op;
		}
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
			if (softrdma_key_invalidate(qp, rkey, true)) {
				softrdma_resp_complete_recv(qp,
							    IB_WC_REM_INV_REQ_ERR,
							    IB_WC_RECV,
							    qp->resp.roff,
							    false, NULL, false);
				goto nak_invalid;
			}
			softrdma_resp_complete_inv(qp, qp->resp.roff, rkey,
						   flags & SOFTRDMA_BTH_SE);
			rqp->resp.msn++;
		} else if (last) {
			softrdma_resp_complete_recv(qp, IB_WC_SUCCESS,
						    IB_WC_RECV,
						    qp->resp.roff, imm, immdt,
						    flags & SOFTRDMA_BTH_SE);
			rqp->resp.msn++;
		}
	} else if (op >= RC_WRITE_FIRST && op <= RC_WRITE_ONLY_IMM) {
		if (first) {
			if (!(qp->attrs.access & IB_ACCESS_REMOTE_WRITE))
				goto nak_access;
			softrdma_resp_write_start(qp, &reth);
		}
		if (!rqp->resp.in_write ||
		    rqp->resp.woff + paylen > rqp->resp.wlen)
			goto nak_invalid;
		if (imm && !qp->resp.in_recv && !softrdma_recv_take(qp)) {
			softrdma_resp_nak_rnr(qp, psn);
			return;
		}
		off0 = rqp->resp.woff;
		err = softrdma_resp_place(qp, skb, p, paylen, false,
					  due ? &crc : NULL);
		if (due && !softrdma_resp_icrc_placed(qp, skb, err, crc,
						      p - skb->data + paylen)) {
			rqp->resp.woff = off0;
			return;
		}
		if (err == -EBUSY) {
			rqp->resp.woff = off0;
			goto rnr_fault;
		}
		if (err)
			goto nak_access;
		if (last) {
			rqp->resp.in_write = false;
			if (imm)
				softrdma_resp_complete_recv(qp, IB_WC_SUCCESS,
							    IB_WC_RECV_RDMA_WITH_IMM,
							    rqp->resp.wlen, true,
							    immdt,
							    flags & SOFTRDMA_BTH_SE);
			rqp->resp.msn++;
		}
	} else {
		goto nak_invalid;
	}
	rqp->resp.epsn = softrdma_psn_add(psn, npkts);
	if (ackreq)
		softrdma_resp_ack_later(qp, softrdma_psn_add(psn, npkts - 1));
	return;

rnr_fault:
	/* ODP pages being faulted in (odp.c): the requester asks again. */
	softrdma_resp_nak_rnr(qp, psn);
	return;
nak_access:
	if (!softrdma_resp_icrc_settle(qp, skb))
		return;
	softrdma_resp_ack(qp, psn, SOFTRDMA_NAK_REMOTE_ACCESS);
	softrdma_roce_qp_fail(qp);
	return;
nak_invalid:
	if (!softrdma_resp_icrc_settle(qp, skb))
		return;
	softrdma_resp_ack(qp, psn, SOFTRDMA_NAK_INVALID_REQ);
	softrdma_roce_qp_fail(qp);
	return;
nak_op:
	softrdma_resp_ack(qp, psn, SOFTRDMA_NAK_REMOTE_OP);
	softrdma_roce_qp_fail(qp);
}

/*
 * Selective repeat: keep @skb, a request for PSN @psn past the gap at
 * epsn, until the gap fills. False: not kept (a duplicate of one kept, or
 * no memory); the caller drops it. Nothing kept is dropped later but by a
 * QP that stops: the requester may count on what a later ACK covers.
 */
static bool softrdma_resp_sr_hold(struct softrdma_roce_qp *rqp,
				  struct sk_buff *skb, u32 psn)
{
	struct sk_buff **slot;

	if (!rqp->resp.ooo) {
		rqp->resp.ooo = kcalloc(SOFTRDMA_SR_WIN, sizeof(*rqp->resp.ooo),
					GFP_ATOMIC);
		if (!rqp->resp.ooo)
			return false;
	}
	slot = &rqp->resp.ooo[psn % SOFTRDMA_SR_WIN];
	if (*slot) {
		if (softrdma_bth_psn((struct softrdma_bth *)(*slot)->data) ==
		    psn)
			return false;
		/* One from before epsn that nothing took: stale. */
		kfree_skb(*slot);
		rqp->resp.ooo_held--;
	}
	*slot = skb;
	rqp->resp.ooo_held++;
	return true;
}

/*
 * The request kept for @psn, if any. (2^24 PSNs are a multiple of the
 * window, so a slot's PSN is the same one across the wrap; another PSN
 * in the slot is behind epsn, stale, and freed.)
 */
static struct sk_buff *softrdma_resp_sr_take(struct softrdma_roce_qp *rqp,
					     u32 psn)
{
	struct sk_buff **slot = &rqp->resp.ooo[psn % SOFTRDMA_SR_WIN];
	struct sk_buff *skb = *slot;

	if (!skb)
		return NULL;
	*slot = NULL;
	rqp->resp.ooo_held--;
	if (softrdma_bth_psn((struct softrdma_bth *)skb->data) == psn)
		return skb;
	kfree_skb(skb);
	return NULL;
}

/*
 * Selective repeat: a request kept at @psn. Past the highest one kept
 * before, with PSNs between them missing, once the gap at epsn was NAKed
 * (a loss, not reordering): a NAK of that hole too, so the requester sends
 * every hole again in one round trip, not one gap a round trip.
 */
static void softrdma_resp_sr_hole(struct softrdma_qp *qp, u32 psn)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 high = rqp->resp.sr_high;
	/* At or behind epsn: no longer kept; @psn is the first past it. */
	bool first = softrdma_psn_diff(high, rqp->resp.epsn) <= 0;

	if (first || softrdma_psn_diff(psn, high) > 0)
		rqp->resp.sr_high = psn;
	if (first || softrdma_psn_diff(psn, high) <= 1 ||
	    !rqp->resp.nak_sent || rqp->resp.nak_rnr)
		return;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_SEQ_NAKS);
	softrdma_resp_ack(qp, softrdma_psn_add(high, 1), SOFTRDMA_NAK_SR_HOLE);
}

/*
 * A request, in order or not; @skb->data is its BTH (an XRC request's
 * XRCETH taken off, its XRC SRQ number in the skb's cb: recv.c). True:
 * kept out of order (selective repeat), no longer the caller's.
 */
static bool softrdma_resp_one(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 psn = softrdma_bth_psn((struct softrdma_bth *)skb->data);
	s32 d = softrdma_psn_diff(psn, rqp->resp.epsn);
	u8 op = skb->data[0];
	u32 n;

	/*
	 * A request whose ICRC is due is summed as its payload is placed
	 * (icrc.c) only if that goes on a message in progress now: a
	 * receive WQE or RDMA WRITE in hand (so nothing is taken for it
	 * before its check). Any other is checked first.
	 */
	if (SOFTRDMA_ROCE_CB(skb)->icrc_due &&
	    (d || !(op == RC_WRITE_MIDDLE || op == RC_WRITE_LAST ?
		    rqp->resp.in_write : qp->resp.in_recv)) &&
	    !softrdma_resp_icrc_settle(qp, skb))
		return false;
	if (d > 0 && softrdma_roce_sr(rqp)) {
		bool kept = d < SOFTRDMA_SR_WIN &&
			    softrdma_resp_sr_hold(rqp, skb, psn);

		softrdma_count(qp->sdev, kept ? SOFTRDMA_CNT_SR_OOO_HELD :
						SOFTRDMA_CNT_SR_OOO_DROPS);
		/*
		 * A gap is a loss once SOFTRDMA_SR_DUPTHRESH requests came
		 * past it in a row (as TCP's duplicate ACKs count), or one
		 * that asks for an ACK (the last of a message: nothing may
		 * follow it); requests ahead of the rest between others in
		 * order are reordering, and the gap fills by itself. A NAK,
		 * or the packet it asked for, may be lost too: NAK the
		 * same gap again after SOFTRDMA_SR_RENAK more came past it,
		 * not a retransmission timeout later.
		 */
		rqp->resp.nak_behind++;
		if (!rqp->resp.nak_sent) {
			if (rqp->resp.nak_behind >= SOFTRDMA_SR_DUPTHRESH ||
			    softrdma_bth_ackreq((struct softrdma_bth *)skb->data))
				softrdma_resp_nak_gap(qp);
		} else if (!rqp->resp.nak_rnr &&
			   rqp->resp.nak_behind >= SOFTRDMA_SR_RENAK) {
			softrdma_resp_nak_gap(qp);
		}
		if (kept)
			softrdma_resp_sr_hole(qp, psn);
		return kept;
	}
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT) {
		softrdma_resp_request(qp, skb);
	} else {
		/* The SRQ is used under RCU only: see softrdma_xrc_srq_del(). */
		rcu_read_lock();
		softrdma_xrc_srq_get(qp, SOFTRDMA_ROCE_CB(skb)->xrc_srqn);
		softrdma_resp_request(qp, skb);
		softrdma_xrc_srq_put(qp);
		rcu_read_unlock();
	}
	/*
	 * What a request of several PSNs (a READ's) covered cannot come
	 * as a request of its own: anything kept there is stale.
	 */
	if (d || !rqp->resp.ooo_held)
		return false;
	n = min_t(u32, softrdma_psn_diff(rqp->resp.epsn, psn), SOFTRDMA_SR_WIN);
	while (n-- > 1) {
		psn = softrdma_psn_add(psn, 1);
		kfree_skb(softrdma_resp_sr_take(rqp, psn));
	}
	return false;
}

/*
 * Selective repeat, after a request in order: the requests kept that now
 * follow go where they would have gone; then a NAK of the next gap if it
 * is a loss, else an ACK of what is in order.
 */
static void softrdma_resp_sr_drain(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct sk_buff *skb;
	u32 i;

	while (rqp->resp.ooo_held && !rqp->resp.rd_active &&
	       (skb = softrdma_resp_sr_take(rqp, rqp->resp.epsn))) {
		softrdma_resp_one(qp, skb);
		consume_skb(skb);
	}
	if (!rqp->resp.ooo_held)
		rqp->resp.sr_lossy = false;
	if (rqp->resp.rd_active || rqp->resp.nak_sent ||
	    READ_ONCE(qp->state) == IB_QPS_ERR)
		return;
	/*
	 * After a loss (a gap NAKed, and requests kept since), a gap at
	 * epsn with a request kept just behind it (the requester sent that
	 * one after it) is lost too: NAKed now. Else it may be reordering:
	 * NAKed once more come past it (softrdma_resp_one()); meanwhile an
	 * ACK of what is in order, on which a requester recovering from a
	 * timeout sends the packet at the gap (comp.c).
	 */
	for (i = 1; rqp->resp.sr_lossy && i <= SOFTRDMA_SR_DUPTHRESH; i++) {
		u32 psn = softrdma_psn_add(rqp->resp.epsn, i);
		struct sk_buff *held = rqp->resp.ooo[psn % SOFTRDMA_SR_WIN];

		if (held &&
		    softrdma_bth_psn((struct softrdma_bth *)held->data) == psn) {
			softrdma_resp_nak_gap(qp);
			return;
		}
	}
	softrdma_resp_ack_later(qp, softrdma_psn_add(rqp->resp.epsn,
						     SOFTRDMA_PSN_MASK));
}

/*
 * A request for @qp; @skb->data is its BTH (see softrdma_resp_one()).
 * Caller holds qp->lock. True: @skb was kept, no longer the caller's.
 */
bool softrdma_resp_rcv(struct softrdma_qp *qp, struct sk_buff *skb)
{
	if (softrdma_resp_one(qp, skb))
		return true;
	if (to_rqp(qp)->resp.ooo_held)
		softrdma_resp_sr_drain(qp);
	return false;
}

/*
 * The responder's paced output: the next batch of a long READ answer, then
 * the requests that waited for it, in order, then the ACK they ask for.
 * Running as a tasklet, it lets the receive softirq (which delivers the
 * answer's packets when the peer is this host) run between batches.
 */
void softrdma_resp_tasklet(struct tasklet_struct *t)
{
	struct softrdma_roce_qp *rqp = from_tasklet(rqp, t, resp.tasklet);
	struct softrdma_qp *qp = &rqp->qp;
	enum ib_qp_state state;
	struct sk_buff *skb;

	spin_lock(&qp->lock);
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD) {
		softrdma_resp_stop(qp);
		goto out;
	}
	if (rqp->resp.rd_active)
		softrdma_resp_read_more(qp);
	/* Kept requests next in order came before those waiting here. */
	if (rqp->resp.ooo_held)
		softrdma_resp_sr_drain(qp);
	while (!rqp->resp.rd_active &&
	       (skb = __skb_dequeue(&rqp->resp.backlog))) {
		if (!softrdma_resp_rcv(qp, skb))
			kfree_skb(skb);
	}
	if (rqp->resp.rd_active)
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
 * and those kept out of order are dropped, and no ACK is due any more.
 */
void softrdma_resp_stop(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 i;

	rqp->resp.rd_active = false;
	if (rqp->resp.rd_mr)
		softrdma_mr_put(rqp->resp.rd_mr);
	rqp->resp.rd_mr = NULL;
	__skb_queue_purge(&rqp->resp.backlog);
	rqp->resp.ack_pending = false;
	for (i = 0; rqp->resp.ooo_held && i < SOFTRDMA_SR_WIN; i++) {
		if (!rqp->resp.ooo[i])
			continue;
		kfree_skb(rqp->resp.ooo[i]);
		rqp->resp.ooo[i] = NULL;
		rqp->resp.ooo_held--;
	}
}
