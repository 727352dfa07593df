// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iWARP receiver: FPDUs assembled from the TCP stream and checked
 * (MPA CRC and markers, DDP header, MSN and offsets), then handed to
 * RDMAP (rdmap.c), which places and answers them.
 *
 * Each FPDU is handled as soon as it is whole, in the softirq that brought
 * its last bytes (tcp_read_sock() from the socket callback); an RDMA Write
 * or a Send without markers is placed as its bytes come, straight from the
 * skbs into the target buffer or the receive (one copy, the CRC computed
 * on the way and checked at its end). A work item sees the end of the
 * stream. It holds qp->lock while it places, never across a socket call.
 *
 * Pages of an ODP MR that are not present (-EBUSY) stop the receiver where
 * it is, before the bytes that need them: the rest stays in the socket
 * (TCP's window closes on the peer), the fault is queued, and the work
 * item waits for it (softrdma_odp_flush()) and goes on from there. An
 * assembled FPDU that waits is checked once and handed to RDMAP again.
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

/*
 * The ULPDU of the checked FPDU in iw->rxbuf, to RDMAP. Caller holds
 * qp->lock. Return: -EBUSY if it waits for ODP pages (nothing done: it is
 * handed here again), else 0.
 */
static int softrdma_iw_rx_ulpdu(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u8 *u = iw->rxbuf + 2;
	u32 ulen = get_unaligned_be16(iw->rxbuf), n;
	struct softrdma_term_cause tc;
	u8 op = u[1] & SOFTRDMA_RDMAP_OP_MASK;
	bool last = u[0] & SOFTRDMA_DDP_L;
	int ret = 0;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return 0;
	iw->rx_ulpdu = u;
	iw->rx_ulen = ulen;
	if (!softrdma_ddp_hdr_check(u, ulen, iw->ext ? SOFTRDMA_QN_NUM :
				    SOFTRDMA_QN_AREQ, &tc)) {
		softrdma_iw_qp_terminate(qp, tc.layer, tc.etype, tc.code);
		iw->rx_ulpdu = NULL;
		return 0;
	}
	/* RFC 7306 opcodes from a peer that did not agree to them. */
	if (op >= RDMAP_FIRST_EXT && !iw->ext) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION, TERM_RDMAP_OPCODE);
		iw->rx_ulpdu = NULL;
		return 0;
	}
	if (u[0] & SOFTRDMA_DDP_T) {
		struct softrdma_ddp_tagged h;

		memcpy(&h, u, sizeof(h));
		n = ulen - SOFTRDMA_TAGGED_LEN;
		if (op == RDMAP_WRITE)
			ret = softrdma_iw_rx_write(qp, ntohl(h.stag),
						   be64_to_cpu(h.to),
						   u + SOFTRDMA_TAGGED_LEN, n);
		else if (op == RDMAP_READ_RESP)
			ret = softrdma_iw_rx_rresp(qp, ntohl(h.stag),
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
			ret = softrdma_iw_rx_send(qp, op, last,
						  ntohl(h.inv_stag),
						  ntohl(h.msn), ntohl(h.mo),
						  p, n);
			break;
		case SOFTRDMA_QN_AREQ:
			if (!iw->ext)
				goto bad_qn;
			ret = softrdma_iw_rx_areq(qp, op, last, ntohl(h.msn),
						  p, n);
			break;
		case SOFTRDMA_QN_ARESP:
			if (!iw->ext)
				goto bad_qn;
			ret = softrdma_iw_rx_aresp(qp, op, last, ntohl(h.msn),
						   p, n);
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
	return ret;
}

/*
 * One whole FPDU in iw->rxbuf: its CRC and markers checked (the markers
 * leave), then its ULPDU handled. Caller holds qp->lock. Return: as
 * softrdma_iw_rx_ulpdu().
 */
static int softrdma_iw_rx_fpdu(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	int err;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return 0;
	err = softrdma_fpdu_check(iw->rxbuf, iw->rx_need, iw->rx_soff, iw->crc,
				  iw->rx_markers);
	if (err == -EBADMSG)
		softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ICRC_ERR);
	if (err) {
		softrdma_iw_qp_terminate(qp, TERM_LAYER_LLP, 0,
					 err == -EBADMSG ? TERM_LLP_CRC :
					 TERM_LLP_MARKER);
		return 0;
	}
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_PKTS);
	return softrdma_iw_rx_ulpdu(qp);
}

/*
 * ODP pages are being faulted in for what comes next: stop taking the
 * stream; the work item goes on once the fault is done.
 */
static void softrdma_iw_rx_odp_wait(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	iw->rx_odp_wait = true;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RX_ODP_WAITS);
	queue_work(softrdma_iw_wq, &iw->rx_work);
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
	     (u64)mo + n <= softrdma_recv_room(qp);
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
 * end of the FPDU. Return: false if the bytes wait for ODP pages (not
 * placed, nor taken).
 */
static bool softrdma_iw_rx_place(struct softrdma_qp *qp, const u8 *data,
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
			if (!iw->rx_mr && err == -EBUSY) {
				spin_unlock_bh(&qp->lock);
				return false;
			}
			if (!iw->rx_mr) {
				iw->rx_ulpdu = iw->rxbuf + 2;
				iw->rx_ulen = get_unaligned_be16(iw->rxbuf);
				softrdma_iw_tagged_error(qp, err);
				iw->rx_ulpdu = NULL;
			}
		}
		iw->rx_skip = !iw->rx_mr;
	}
	if (iw->rx_mr) {
		softrdma_mr_copy(iw->rx_mr, iw->rx_to, (void *)data, n, true);
	} else if (iw->rx_send && !iw->rx_skip && !iw->rx_err) {
		err = softrdma_sge_copy(qp, qp->resp.rsge,
					qp->resp.rwqe.num_sge, iw->rx_to,
					(void *)data, n, true,
					IB_ACCESS_LOCAL_WRITE);
		if (err == -EBUSY) {
			spin_unlock_bh(&qp->lock);
			return false;
		}
		iw->rx_err = err;
	}
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
	return true;
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
	int err;

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
		err = softrdma_iw_rx_fpdu(qp);
		spin_unlock_bh(&qp->lock);
		if (err == -EBUSY) {
			iw->rx_state = IW_RX_WAIT;
			softrdma_iw_rx_odp_wait(qp);
		} else {
			softrdma_iw_rx_next(iw);
		}
		return true;
	}
}

/*
 * Take @n bytes of the stream at @data: into the FPDU being assembled, or
 * the buffer of the one being placed; each step handled as it completes.
 * Return: the bytes taken, fewer than @n if ODP pages are awaited.
 */
static u32 softrdma_iw_rx_bytes(struct softrdma_qp *qp, const u8 *data,
				u32 n)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 k, done = 0;

	/* After a framing error only the close is awaited: drop the rest. */
	while (n && !iw->rx_stop && !iw->rx_odp_wait) {
		u8 *buf = iw->rxbuf;

		if (iw->rx_state == IW_RX_PLACE) {
			k = min(n, iw->rx_left);
			if (!softrdma_iw_rx_place(qp, data, k)) {
				softrdma_iw_rx_odp_wait(qp);
				break;
			}
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
		done += k;
	}
	return done;
}

/*
 * Go on after an ODP fault: the assembled FPDU that waited for it first.
 * Return: false if it waits still.
 */
static bool softrdma_iw_rx_resume(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	int err;

	if (!iw->rx_odp_wait)
		return true;
	iw->rx_odp_wait = false;
	if (iw->rx_state != IW_RX_WAIT)
		return true;
	spin_lock_bh(&qp->lock);
	err = softrdma_iw_rx_ulpdu(qp);
	spin_unlock_bh(&qp->lock);
	if (err == -EBUSY) {
		softrdma_iw_rx_odp_wait(qp);
		return false;
	}
	softrdma_iw_rx_next(iw);
	return true;
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
	while (done < len && !iw->rx_stop && !iw->rx_odp_wait &&
	       (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min_t(u32, n, len - done);
		done += softrdma_iw_rx_bytes(qp, data, n);
	}
	skb_abort_seq_read(&st);
	/* No MR is held between skbs (softrdma_iw_rx_place()). */
	if (iw->rx_mr) {
		softrdma_mr_put(iw->rx_mr);
		iw->rx_mr = NULL;
	}
	/* What waits for ODP pages stays in the socket; after rx_stop, none. */
	return iw->rx_stop ? len : done;
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

	if (softrdma_iw_rx_resume(qp))
		tcp_read_sock(sk, &desc, softrdma_iw_rx_actor);
}

/*
 * The receiver's work item: what arrived before the QP started, what
 * waited for ODP pages (once their fault is done), and the end of the
 * stream (EOF: the peer closed; an error: it reset).
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
	/* A hint: what waits is read under the socket's lock. */
	if (READ_ONCE(iw->rx_odp_wait))
		softrdma_odp_flush();
	lock_sock(sk);
	softrdma_iw_rx_read(qp, sk);
	/* An FPDU that waits for ODP pages comes before the end. */
	if (!iw->rx_odp_wait && skb_queue_empty(&sk->sk_receive_queue)) {
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
