// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The iWARP sender: RDMAP over DDP over MPA (RFC 5040, 5041, 5044) on a
 * connected TCP socket. It takes WQEs off the SQ ring and sends them as
 * FPDUs (Send, RDMA Write, RDMA Read Request, RFC 7306 Atomic Request and
 * Immediate Data), answers the peer's requests (Read and Atomic Responses),
 * and sends a Terminate; large payloads go to TCP by reference, as the
 * pages of their MR.
 *
 * The sender runs in the kick of the process that posted, while the
 * socket takes its output at once, and otherwise in a work item, which
 * blocks in the socket while the peer is slow to read; one at a time
 * (iw->tx_mutex). It holds qp->lock only to look at or change the QP's
 * state, never across a socket call. A Send or RDMA Write completes once
 * all of it is in the socket (over veth, the peer's answer may have arrived
 * and completed by then); one sent by reference once TCP has it acked.
 *
 * Not here: what arrives (rx.c), the QP's state and SQ bookkeeping (qp.c),
 * MPA framing and DDP headers (mpa.c, ddp.c).
 */
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

/*
 * A poster's kick in progress on a CPU (softrdma_iw_req_kick()), and a
 * QP whose sender a softirq run in that kick left to it.
 */
struct softrdma_iw_kicker {
	struct task_struct *task;
	struct softrdma_qp *qp;		/* held with a reference */
};

static DEFINE_PER_CPU(struct softrdma_iw_kicker, softrdma_iw_kicker);

/*
 * The sender of @qp has work: a Read or Atomic Response to send (caller
 * holds qp->lock; softirq). Over veth, the request arrived in the softirq
 * that the requester's own kick ran on its way out of the socket: then
 * that kick sends the response on its way back, and no worker has to
 * be woken (a scheduler round trip, often a whole idle CPU's).
 */
void softrdma_iw_tx_soon(struct softrdma_qp *qp)
{
	if (in_serving_softirq()) {
		struct softrdma_iw_kicker *k = this_cpu_ptr(&softrdma_iw_kicker);

		if (k->task == current && !k->qp &&
		    refcount_inc_not_zero(&qp->refs)) {
			k->qp = qp;
			return;
		}
	}
	queue_work(softrdma_iw_wq, &to_iwqp(qp)->tx_work);
}

/*
 * Send the FPDU whose ULPDU (@ulen bytes) is in iw->txbuf + 2; @more: more
 * FPDUs of the same message follow (TCP need not push this one alone).
 */
static int softrdma_iw_xmit_more(struct softrdma_iw_qp *iw,
				 struct socket *sock, u32 ulen, bool more)
{
	u32 len = softrdma_fpdu_close_at(iw->txbuf, ulen, iw->crc,
					 iw->tx_markers, iw->tx_soff);

	iw->tx_soff += len;
	return softrdma_iw_sendmore(sock, iw->txbuf, len, more);
}

static int softrdma_iw_xmit(struct softrdma_iw_qp *iw, struct socket *sock,
			    u32 ulen)
{
	return softrdma_iw_xmit_more(iw, sock, ulen, false);
}

#if SOFTRDMA_IW_ZC
/*
 * Frame an FPDU whose payload goes by reference as the @nbv pieces @bv:
 * at @head its MPA length (@ulen) and the DDP header (@hlen bytes, from
 * iw->txbuf + 2), behind them the tail: @pad zeroes and the CRC (0 when
 * not negotiated), over head, payload and pad. Return: the tail.
 */
static u8 *softrdma_iw_frame_ref(struct softrdma_iw_qp *iw, u8 *head,
				 u32 ulen, u32 hlen, u32 pad,
				 const struct bio_vec *bv, u32 nbv)
{
	u8 *tail = head + 2 + hlen;
	u32 crc = 0, i;

	put_unaligned_be16(ulen, head);
	memcpy(head + 2, iw->txbuf + 2, hlen);
	memset(tail, 0, pad);
	if (iw->crc) {
		crc = softrdma_crc32c(~0U, head, 2 + hlen);
		for (i = 0; i < nbv; i++) {
			u8 *va = kmap_local_page(bv[i].bv_page);

			crc = softrdma_crc32c(crc, va + bv[i].bv_offset,
					      bv[i].bv_len);
			kunmap_local(va);
		}
		crc = ~softrdma_crc32c(crc, tail, pad);
	}
	put_unaligned_le32(crc, tail + pad);
	return tail;
}
#endif

/*
 * Send an FPDU whose ULPDU is the DDP header (@hlen bytes) in iw->txbuf + 2
 * and @n bytes of @mr at @iova, the latter by reference: TCP takes the MR's
 * pages, not a copy, so the WQE completes only once TCP has them acked
 * (softrdma_iw_write_space()); until then a retransmission reads the user's
 * buffer again. Only without markers, and only when the socket takes all
 * of it at once: a sender never waits in the socket with the MR held.
 *
 * Return: 0, -EAGAIN if the caller has to copy instead (nothing sent), or
 * the socket's error.
 */
static int softrdma_iw_xmit_zc(struct softrdma_iw_qp *iw, struct socket *sock,
			       struct softrdma_mr *mr, u64 iova, u32 hlen,
			       u32 n, bool more)
{
#if SOFTRDMA_IW_ZC
	u32 ulen = hlen + n, pad = -(2 + ulen) & 3, len = 2 + ulen + pad + 4;
	struct msghdr msg = {
		.msg_flags = MSG_SPLICE_PAGES | MSG_NOSIGNAL | MSG_EOR,
	};
	struct bio_vec *bv = iw->zc_bv;
	u32 nbv;
	u8 *head, *tail;
	int ret = 0;

	if (iw->tx_markers || sk_stream_wspace(sock->sk) < (int)len)
		return -EAGAIN;
	nbv = softrdma_mr_pages(mr, iova, n, bv + 1, SOFTRDMA_IW_ZC_PAGES);
	if (!nbv)
		return -EAGAIN;
	/* Spliced too, so from a page of our own, never reused in flight. */
	head = page_frag_alloc(&iw->zc_frag, 2 + hlen + pad + 4, GFP_KERNEL);
	if (!head)
		return -EAGAIN;
	tail = softrdma_iw_frame_ref(iw, head, ulen, hlen, pad, bv + 1, nbv);
	bvec_set_virt(&bv[0], head, 2 + hlen);
	bvec_set_virt(&bv[nbv + 1], tail, pad + 4);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nbv + 2, len);
	if (more)
		msg.msg_flags |= MSG_MORE;
	while (msg_data_left(&msg)) {
		int k = sock_sendmsg(sock, &msg);

		if (k <= 0) {
			ret = k ? k : -EPIPE;
			break;
		}
	}
	/* The socket holds its own references to the pages it keeps. */
	page_frag_free(head);
	iw->tx_soff += len;
	if (!ret)
		softrdma_count(iw->qp.sdev, SOFTRDMA_CNT_TX_ZCOPY);
	return ret;
#else
	return -EAGAIN;
#endif
}

#if SOFTRDMA_IW_ZC
/*
 * Send the group of FPDUs by reference (softrdma_iw_group_add()) in one
 * socket call; @more: more FPDUs of the message follow. MSG_EOR ends TCP's
 * skb with the group, so the next one starts a segment, as the FPDUs in it
 * do. Return: 0 or the socket's error (the group is gone either way).
 */
static int softrdma_iw_group_send(struct softrdma_iw_qp *iw,
				  struct socket *sock, bool more)
{
	struct msghdr msg = {
		.msg_flags = MSG_SPLICE_PAGES | MSG_NOSIGNAL | MSG_EOR |
			     (more ? MSG_MORE : 0),
	};
	int ret = 0;

	if (!iw->gnbv)
		return 0;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, iw->gbv, iw->gnbv, iw->glen);
	while (msg_data_left(&msg)) {
		int k = sock_sendmsg(sock, &msg);

		if (k <= 0) {
			ret = k ? k : -EPIPE;
			break;
		}
	}
	/* The socket holds its own references to the pages it keeps. */
	page_frag_free(iw->gstage);
	if (!ret)
		softrdma_count_add(iw->qp.sdev, SOFTRDMA_CNT_TX_ZCOPY,
				   iw->gfpdus);
	iw->gnbv = 0;
	iw->glen = 0;
	iw->gfpdus = 0;
	iw->gstage = NULL;
	return ret;
}

/*
 * Add to the group an FPDU whose ULPDU is the DDP header (@hlen bytes) in
 * iw->txbuf + 2 and @n bytes of @mr at @iova, by reference. A group holds
 * as many pieces as an skb has fragments: heads and tails from a page
 * fragment of our own (a tail and the next head are one piece), payloads
 * as the MR's pages. It is sent first when this FPDU would not fit, or
 * would straddle a segment of the MSS the FPDUs were cut for (RFC 5044 8:
 * a segment starts with an FPDU), or when the socket has no room for it.
 *
 * Return: 0, -EAGAIN if the caller has to copy it instead (the group was
 * sent), or the socket's error.
 */
static int softrdma_iw_group_add(struct softrdma_iw_qp *iw,
				 struct socket *sock, struct softrdma_mr *mr,
				 u64 iova, u32 hlen, u32 n)
{
	u32 ulen = hlen + n, pad = -(2 + ulen) & 3, len = 2 + ulen + pad + 4;
	u32 seg = iw->mulpdu + 9, np;
	struct bio_vec pv[SOFTRDMA_IW_GROUP_PIECES];
	u8 *head, *tail;
	int err;

	np = iw->tx_markers ? 0 :
	     softrdma_mr_pages(mr, iova, n, pv, ARRAY_SIZE(pv));
	if (!np) {
		err = softrdma_iw_group_send(iw, sock, true);
		return err ? err : -EAGAIN;
	}
	/* A head, the payload, a tail; a head after a tail joins it. */
	if (iw->gnbv + np + (iw->gnbv ? 1 : 2) > SOFTRDMA_IW_GROUP_BV ||
	    (iw->glen % seg && iw->glen % seg + len > seg) ||
	    sk_stream_wspace(sock->sk) < (int)(iw->glen + len)) {
		err = softrdma_iw_group_send(iw, sock, true);
		if (err)
			return err;
		if (sk_stream_wspace(sock->sk) < (int)len)
			return -EAGAIN;
	}
	if (!iw->gstage) {
		iw->gstage = page_frag_alloc_align(&iw->zc_frag,
						   SOFTRDMA_IW_GROUP_STAGE,
						   GFP_KERNEL,
						   SOFTRDMA_IW_GROUP_STAGE);
		if (!iw->gstage)
			return -EAGAIN;
		iw->gstaged = 0;
	}
	head = iw->gstage + iw->gstaged;
	tail = softrdma_iw_frame_ref(iw, head, ulen, hlen, pad, pv, np);
	if (iw->gnbv)
		iw->gbv[iw->gnbv - 1].bv_len += 2 + hlen;
	else
		bvec_set_virt(&iw->gbv[iw->gnbv++], head, 2 + hlen);
	memcpy(&iw->gbv[iw->gnbv], pv, np * sizeof(*pv));
	iw->gnbv += np;
	bvec_set_virt(&iw->gbv[iw->gnbv++], tail, pad + 4);
	iw->gstaged += 2 + hlen + pad + 4;
	iw->glen += len;
	iw->gfpdus++;
	iw->tx_soff += len;
	return 0;
}
#else
static int softrdma_iw_group_send(struct softrdma_iw_qp *iw,
				  struct socket *sock, bool more)
{
	return 0;
}

static int softrdma_iw_group_add(struct softrdma_iw_qp *iw,
				 struct socket *sock, struct softrdma_mr *mr,
				 u64 iova, u32 hlen, u32 n)
{
	return -EAGAIN;
}
#endif

/* Are this QP's FPDUs small enough to go by reference in groups? */
static bool softrdma_iw_grouped(struct softrdma_iw_qp *iw)
{
	return iw->mulpdu <= SOFTRDMA_IW_GROUP_MULPDU;
}

/*
 * Send an FPDU whose ULPDU is the DDP header (@hlen bytes) in iw->txbuf + 2
 * and @n bytes of @mr at @iova: by reference if @zc and the socket allows
 * (softrdma_iw_xmit_zc()), copied otherwise; @more as for xmit_more.
 * Return: 1 if sent by reference, 0 if copied, or the socket's error.
 */
static int softrdma_iw_xmit_mr(struct softrdma_iw_qp *iw, struct socket *sock,
			       struct softrdma_mr *mr, u64 iova, u32 hlen,
			       u32 n, bool more, bool zc)
{
	int err = -EAGAIN;

	if (zc && n && softrdma_iw_grouped(iw)) {
		err = softrdma_iw_group_add(iw, sock, mr, iova, hlen, n);
		if (!err && !more)
			err = softrdma_iw_group_send(iw, sock, false);
	} else if (zc && n) {
		err = softrdma_iw_xmit_zc(iw, sock, mr, iova, hlen, n, more);
	}
	if (err != -EAGAIN)
		return err ? err : 1;
	if (n)
		softrdma_mr_copy(mr, iova, iw->txbuf + 2 + hlen, n, false);
	return softrdma_iw_xmit_more(iw, sock, hlen + n, more);
}

/*
 * softrdma_sge_copy() out of the WQE's SGEs, in process context: the pages
 * of ODP MRs that are not present are faulted in and waited for. An ODP
 * MR's pages are held for the copy only, never across a socket call: TCP
 * may wait there for the peer, and an invalidation for the hold.
 */
static int softrdma_iw_sge_read(struct softrdma_qp *qp,
				struct softrdma_sge *sge, u32 num_sge, u64 off,
				void *dst, u32 n)
{
	int err;

	while ((err = softrdma_sge_copy(qp, sge, num_sge, off, dst, n, false,
					0)) == -EBUSY &&
	       READ_ONCE(qp->state) == IB_QPS_RTS)
		softrdma_odp_flush();
	return err;
}

/* softrdma_rkey_get(), waiting for ODP pages as softrdma_iw_sge_read(). */
static struct softrdma_mr *softrdma_iw_rkey_wait(struct softrdma_qp *qp,
						 u32 key, u64 iova, u64 len,
						 int access, int *err)
{
	struct softrdma_mr *mr;

	while (!(mr = softrdma_rkey_get(qp, key, iova, len, access, err)) &&
	       *err == -EBUSY && READ_ONCE(qp->state) == IB_QPS_RTS)
		softrdma_odp_flush();
	return mr;
}

/* Payload bytes of a segment after a DDP header of @hlen bytes. */
static u32 softrdma_iw_seg_max(struct softrdma_iw_qp *iw, u32 hlen)
{
	return iw->mulpdu - hlen;
}

/* An RFC 7306 Immediate Data message on the Send queue. */
static int softrdma_iw_send_imm(struct softrdma_iw_qp *iw, struct socket *sock,
				u8 op, u32 imm, u32 info, u32 msn)
{
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_rdmap_imm *m = (void *)(h + 1);

	softrdma_ddp_untagged_fill(h, op, true, SOFTRDMA_QN_SEND, msn, 0, 0);
	/* The WQE holds the immediate in network order already. */
	memcpy(&m->imm, &imm, sizeof(m->imm));
	m->info = htonl(info);
	if (softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*m)))
		return -EPIPE;
	return 0;
}

/* An RFC 7306 Atomic Request for the WQE at @idx; its SQ index names it. */
static int softrdma_iw_send_areq(struct softrdma_qp *qp, struct socket *sock,
				 u32 idx, u32 msn)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_swqe *s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_rdmap_areq *a = (void *)(h + 1);

	softrdma_ddp_untagged_fill(h, RDMAP_ATOMIC_REQ, true, SOFTRDMA_QN_AREQ,
				   msn, 0, 0);
	a->req_id = htonl(idx);
	a->stag = htonl(s->wqe.rkey);
	a->to = cpu_to_be64(s->wqe.remote_addr);
	if (s->wqe.opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
		/* Every bit compared, every bit swapped. */
		a->opcode = htonl(SOFTRDMA_ATOMIC_CMP_SWAP);
		a->swap_add = cpu_to_be64(s->wqe.swap);
		a->swap_add_mask = cpu_to_be64(U64_MAX);
		a->compare = cpu_to_be64(s->wqe.compare_add);
		a->compare_mask = cpu_to_be64(U64_MAX);
	} else {
		/* A plain add: no field boundaries in the mask. */
		a->opcode = htonl(SOFTRDMA_ATOMIC_FETCH_ADD);
		a->swap_add = cpu_to_be64(s->wqe.compare_add);
		a->swap_add_mask = 0;
		a->compare = 0;
		a->compare_mask = 0;
	}
	if (softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*a)))
		return -EPIPE;
	return 0;
}

/*
 * Send the WQE at @idx (its kernel copy); @zc: set if some of it went by
 * reference (it completes when TCP has it acked). Return: 0 or -errno.
 */
static int softrdma_iw_send_wqe(struct softrdma_qp *qp, struct socket *sock,
				u32 idx, u32 msn, bool *zc)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 slot = idx & (qp->sq.num_slots - 1);
	struct softrdma_swqe *s = &qp->swqe[slot];
	struct softrdma_sge *sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	bool tagged = s->wqe.opcode == IB_WR_RDMA_WRITE ||
		      s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	u32 hlen = tagged ? SOFTRDMA_TAGGED_LEN : SOFTRDMA_UNTAGGED_LEN;
	bool se = s->wqe.flags & SOFTRDMA_WQE_SOLICITED;
	struct softrdma_mr *zmr = NULL;
	u8 *u = iw->txbuf + 2;
	u32 off = 0, op;
	int err = 0;

	if (softrdma_wr_is_atomic(s->wqe.opcode))
		return softrdma_iw_send_areq(qp, sock, idx, msn);
	if (s->wqe.opcode == IB_WR_SEND_WITH_IMM) {
		/* The immediate goes first, then the Send it belongs to. */
		err = softrdma_iw_send_imm(iw, sock, RDMAP_IMM,
					   s->wqe.imm_data, SOFTRDMA_IMM_SEND,
					   msn++);
		if (err)
			return err;
	}

	if (s->wqe.opcode == IB_WR_RDMA_READ) {
		struct softrdma_ddp_untagged *h = (void *)u;
		struct softrdma_rdmap_rreq *r = (void *)(u + hlen);

		softrdma_ddp_untagged_fill(h, RDMAP_READ_REQ, true,
					   SOFTRDMA_QN_READ, msn, 0, 0);
		/* The sink is the first SGE; the response lands by offset. */
		r->sink_stag = htonl(s->wqe.num_sge ? sge[0].lkey : 0);
		r->sink_to = cpu_to_be64(s->wqe.num_sge ? sge[0].addr : 0);
		r->len = htonl(s->len);
		r->src_stag = htonl(s->wqe.rkey);
		r->src_to = cpu_to_be64(s->wqe.remote_addr);
		return softrdma_iw_xmit(iw, sock, hlen + SOFTRDMA_RREQ_LEN);
	}

	/* A large payload in one SGE may go by reference. */
	if (SOFTRDMA_IW_ZC && s->len >= SOFTRDMA_IW_ZC_MIN &&
	    s->wqe.num_sge == 1 && !(s->wqe.flags & SOFTRDMA_WQE_INLINE) &&
	    !iw->tx_markers) {
		zmr = softrdma_mr_get(qp->sdev, qp->pd, sge[0].lkey,
				      sge[0].addr, s->len, 0, &err);
		/* ODP pages are copied, a segment at a time (below). */
		if (zmr && zmr->type == SOFTRDMA_MR_ODP) {
			softrdma_mr_put(zmr);
			zmr = NULL;
		} else if (!zmr && err != -EBUSY) {
			return err;
		}
	}
	if (tagged) {
		op = RDMAP_WRITE;
	} else {
		if (s->wqe.opcode == IB_WR_SEND_WITH_INV)
			op = se ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV;
		else
			op = se ? RDMAP_SEND_SE : RDMAP_SEND;
	}
	do {
		bool last;
		u32 n = softrdma_ddp_seg(s->len, off,
					 softrdma_iw_seg_max(iw, hlen), &last);

		if (tagged)
			softrdma_ddp_tagged_fill((void *)u, op, last,
						 s->wqe.rkey,
						 s->wqe.remote_addr + off);
		else
			softrdma_ddp_untagged_fill((void *)u, op, last,
						   SOFTRDMA_QN_SEND, msn, off,
						   op == RDMAP_SEND_INV ||
						   op == RDMAP_SEND_SE_INV ?
						   s->wqe.imm_data : 0);
		if (n && zmr) {
			err = softrdma_iw_xmit_mr(iw, sock, zmr,
						  sge[0].addr + off, hlen, n,
						  !last, true);
			if (err < 0)
				break;
			if (err)
				*zc = true;
			err = 0;
			off += n;
			continue;
		}
		if (n && (s->wqe.flags & SOFTRDMA_WQE_INLINE)) {
			memcpy(u + hlen, qp->sinline +
			       (size_t)slot * qp->max_inline + off, n);
		} else if (n) {
			err = softrdma_iw_sge_read(qp, sge, s->wqe.num_sge, off,
						   u + hlen, n);
			if (err)
				return err;
		}
		err = softrdma_iw_xmit_more(iw, sock, hlen + n, !last);
		if (err)
			break;
		off += n;
	} while (off < s->len);
	if (zmr)
		softrdma_mr_put(zmr);
	if (err)
		return -EPIPE;
	if (s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		/* After the data it announces, with the Write's length. */
		return softrdma_iw_send_imm(iw, sock, se ? RDMAP_IMM_SE : RDMAP_IMM,
					    s->wqe.imm_data, s->len, msn);
	}
	return 0;
}

/* Answer an RDMA Read Request: tagged Read Response segments. */
static int softrdma_iw_send_rresp(struct softrdma_qp *qp, struct socket *sock,
				  const struct softrdma_iw_rresp *rr, u32 msn)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 hlen = SOFTRDMA_TAGGED_LEN, off = 0;
	struct softrdma_mr *mr = NULL;
	u8 *u = iw->txbuf + 2;
	bool odp = false;
	int err;

	if (rr->atomic) {
		struct softrdma_ddp_untagged *h = (void *)u;
		struct softrdma_rdmap_aresp *a = (void *)(h + 1);

		softrdma_ddp_untagged_fill(h, RDMAP_ATOMIC_RESP, true,
					   SOFTRDMA_QN_ARESP, msn, 0, 0);
		a->req_id = htonl(rr->req_id);
		a->orig = cpu_to_be64(rr->orig);
		if (softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN + sizeof(*a)))
			return -EPIPE;
		return 0;
	}
	if (rr->len) {
		/* Checked on arrival; held now for the copy. */
		mr = softrdma_iw_rkey_wait(qp, rr->src_stag, rr->src_to,
					   rr->len, IB_ACCESS_REMOTE_READ, &err);
		if (!mr)
			return err;
		/* An ODP MR's pages: held a segment at a time (below). */
		odp = mr->type == SOFTRDMA_MR_ODP;
		if (odp) {
			softrdma_mr_put(mr);
			mr = NULL;
		}
	}
	do {
		bool last;
		u32 n = softrdma_ddp_seg(rr->len, off,
					 softrdma_iw_seg_max(iw, hlen), &last);

		softrdma_ddp_tagged_fill((void *)u, RDMAP_READ_RESP, last,
					 rr->sink_stag, rr->sink_to + off);
		if (odp) {
			mr = softrdma_iw_rkey_wait(qp, rr->src_stag,
						   rr->src_to + off, n,
						   IB_ACCESS_REMOTE_READ, &err);
			if (!mr)
				break;
			softrdma_mr_copy(mr, rr->src_to + off, u + hlen, n,
					 false);
			softrdma_mr_put(mr);
			mr = NULL;
			if (softrdma_iw_xmit_more(iw, sock, hlen + n, !last)) {
				err = -EPIPE;
				break;
			}
			off += n;
			continue;
		}
		/*
		 * By reference too, with no wait for the ack: the requester
		 * completes (and may let the buffer change) only once all of
		 * it has arrived, and TCP drops a retransmission of what did.
		 */
		err = softrdma_iw_xmit_mr(iw, sock, mr, rr->src_to + off, hlen,
					  n, !last, rr->len >= SOFTRDMA_IW_ZC_MIN);
		if (err < 0) {
			err = -EPIPE;
			break;
		}
		err = 0;
		off += n;
	} while (off < rr->len);
	if (mr)
		softrdma_mr_put(mr);
	return err;
}

/* Send a Terminate, with the header of the ULPDU at fault if known. */
static int softrdma_iw_send_term(struct softrdma_qp *qp, struct socket *sock,
				 u8 layer_type, u8 code, const u8 *hdr,
				 u32 ulen, u32 msn)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct softrdma_ddp_untagged *h = (void *)(iw->txbuf + 2);
	struct softrdma_term_cause tc = {
		.layer = layer_type >> 4,
		.etype = layer_type & 15,
		.code = code,
	};

	softrdma_ddp_untagged_fill(h, RDMAP_TERMINATE, true, SOFTRDMA_QN_TERM,
				   msn, 0, 0);
	return softrdma_iw_xmit(iw, sock, SOFTRDMA_UNTAGGED_LEN +
				softrdma_term_fill((u8 *)(h + 1), &tc, hdr,
						   ulen));
}

/*
 * The RTR of RFC 6581 (peer to peer mode), sent by the initiator before
 * anything else: a zero-length RDMA Write (STag 0) or RDMA Read Request.
 */
int softrdma_iw_send_rtr(struct softrdma_qp *qp, struct socket *sock, u16 rtr)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u8 *u = iw->txbuf + 2;

	if (rtr & SOFTRDMA_MPA_V2_WRITE0) {
		softrdma_ddp_tagged_fill((void *)u, RDMAP_WRITE, true, 0, 0);
		return softrdma_iw_xmit(iw, sock, SOFTRDMA_TAGGED_LEN);
	}
	return -EOPNOTSUPP;
}

/*
 * May a poster's kick send @len more bytes in its own context? Only
 * while the socket takes them without waiting, and only so much: the rest
 * is the work item's.
 */
static bool softrdma_iw_direct_ok(struct socket *sock, u64 len)
{
	int room = sk_stream_wspace(sock->sk);

	/* The FPDUs' headers, pads, CRCs and markers: well under 1/8. */
	return len <= SOFTRDMA_IW_DIRECT_MAX && room > 0 &&
	       len + len / 8 + 512 <= room;
}

/*
 * The sender (iw->tx_mutex held): Terminate, Read Responses, then the SQ.
 * @direct: in a poster's kick, which hands large or blocked output to
 * the work item.
 */
static void softrdma_iw_tx(struct softrdma_qp *qp, bool direct)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	u32 idx, status;

	for (;;) {
		struct softrdma_iw_rresp rr;
		struct softrdma_swqe *s;
		struct socket *sock;
		u32 prod, msn = 0;
		bool read, zc = false;
		int err;

		spin_lock_bh(&qp->lock);
		sock = iw->sock;
		if (!sock) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		if (iw->term_due) {
			u8 lt = iw->term_layer_type, code = iw->term_code;
			bool hdr = iw->term_has_hdr;

			iw->term_due = false;
			msn = iw->tx_msn[SOFTRDMA_QN_TERM]++;
			spin_unlock_bh(&qp->lock);
			/* term_hdr stays: no second Terminate is due. */
			softrdma_iw_send_term(qp, sock, lt, code,
					      hdr ? iw->term_hdr : NULL,
					      iw->term_ulen, msn);
			softrdma_iw_qp_conn_lost(qp, true);
			return;
		}
		if (iw->irq_head != iw->irq_tail) {
			rr = iw->irq[iw->irq_head % iw->irq_size];
			if (direct && !softrdma_iw_direct_ok(sock, rr.len))
				goto hand_over;
			iw->irq_head++;
			if (rr.atomic)
				msn = iw->tx_msn[SOFTRDMA_QN_ARESP]++;
			spin_unlock_bh(&qp->lock);
			err = softrdma_iw_send_rresp(qp, sock, &rr, msn);
			if (err == -EPIPE) {
				softrdma_iw_qp_conn_lost(qp, false);
				return;
			}
			if (err) {
				/* The MR went away since the request came. */
				spin_lock_bh(&qp->lock);
				softrdma_iw_qp_terminate(qp, TERM_LAYER_RDMAP,
							 TERM_RDMAP_PROTECTION,
							 TERM_RDMAP_INVALID_STAG);
				spin_unlock_bh(&qp->lock);
			}
			continue;
		}
		if (READ_ONCE(qp->state) != IB_QPS_RTS) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		idx = qp->req.send_idx;
		/* Acquire pairs with the provider's release of its WQEs. */
		prod = smp_load_acquire(&qp->sq.hdr->producer);
		if (softrdma_ring_used(prod, qp->req.comp_idx,
				       qp->sq.num_slots) < 0) {
			softrdma_iw_qp_fail(qp);
			spin_unlock_bh(&qp->lock);
			softrdma_iw_qp_conn_lost(qp, false);
			return;
		}
		if (idx == prod || !softrdma_iw_qp_may_send(qp, idx)) {
			spin_unlock_bh(&qp->lock);
			return;
		}
		status = softrdma_iw_qp_take(qp, idx);
		s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
		/* A Read Request is small whatever it asks for. */
		if (direct && status == IB_WC_SUCCESS &&
		    !softrdma_iw_direct_ok(sock, s->wqe.opcode ==
					   IB_WR_RDMA_READ ? 0 : s->len))
			goto hand_over;
		qp->req.send_idx++;
		if (status != IB_WC_SUCCESS)
			goto fail_wqe;
		if (softrdma_wr_is_local(s->wqe.opcode)) {
			status = softrdma_local_op(qp, s);
			if (status != IB_WC_SUCCESS)
				goto fail_wqe;
			softrdma_iw_swqe(iw, idx)->done = true;
			softrdma_iw_qp_advance(qp);
			spin_unlock_bh(&qp->lock);
			continue;
		}
		read = softrdma_wr_is_rd_atomic(s->wqe.opcode);
		if (read) {
			iw->orq[iw->orq_tail % iw->orq_size] = idx;
			iw->orq_tail++;
			msn = s->wqe.opcode == IB_WR_RDMA_READ ?
			      iw->tx_msn[SOFTRDMA_QN_READ]++ :
			      iw->tx_msn[SOFTRDMA_QN_AREQ]++;
		} else if (s->wqe.opcode == IB_WR_SEND_WITH_IMM) {
			/* Immediate Data, then the Send: two messages. */
			msn = iw->tx_msn[SOFTRDMA_QN_SEND];
			iw->tx_msn[SOFTRDMA_QN_SEND] += 2;
		} else if (s->wqe.opcode != IB_WR_RDMA_WRITE) {
			/* A Send, or a Write's Immediate Data message. */
			msn = iw->tx_msn[SOFTRDMA_QN_SEND]++;
		}
		spin_unlock_bh(&qp->lock);

		err = softrdma_iw_send_wqe(qp, sock, idx, msn, &zc);

		spin_lock_bh(&qp->lock);
		if (READ_ONCE(qp->state) != IB_QPS_RTS || iw->sock != sock ||
		    (s32)(idx - qp->req.comp_idx) < 0) {
			/* Flushed meanwhile. */
			spin_unlock_bh(&qp->lock);
			continue;
		}
		if (err == -EPIPE) {
			spin_unlock_bh(&qp->lock);
			softrdma_iw_qp_conn_lost(qp, false);
			return;
		}
		if (err) {
			status = IB_WC_LOC_PROT_ERR;
			goto fail_wqe;
		}
		if (!read && zc) {
			struct softrdma_iw_swqe *is = softrdma_iw_swqe(iw, idx);

			/* We are the socket's only writer. */
			is->ack_seq = READ_ONCE(tcp_sk(sock->sk)->write_seq);
			is->ack_wait = true;
			iw->zc_unacked++;
		} else if (!read) {
			softrdma_iw_swqe(iw, idx)->done = true;
			softrdma_iw_qp_advance(qp);
		}
		spin_unlock_bh(&qp->lock);
		if (zc)
			softrdma_iw_write_space(qp, sock->sk);
		cond_resched();
	}

hand_over:
	queue_work(softrdma_iw_wq, &iw->tx_work);
	spin_unlock_bh(&qp->lock);
	return;

fail_wqe:
	/*
	 * WQE @idx failed with @status: the QP goes to ERR. Those before it
	 * complete first, in order: sent and done, or flushed (Reads not
	 * answered, Sends by reference TCP has not seen acked).
	 */
	for (; qp->req.comp_idx != idx; qp->req.comp_idx++)
		softrdma_sq_complete(qp, qp->req.comp_idx,
				     softrdma_iw_swqe(iw, qp->req.comp_idx)->done ?
				     IB_WC_SUCCESS : IB_WC_WR_FLUSH_ERR);
	softrdma_sq_complete(qp, idx, status);
	qp->req.comp_idx = idx + 1;
	softrdma_iw_qp_fail(qp);
	spin_unlock_bh(&qp->lock);
	softrdma_iw_qp_conn_lost(qp, false);
}

void softrdma_iw_tx_work(struct work_struct *work)
{
	struct softrdma_iw_qp *iw = container_of(work, struct softrdma_iw_qp,
						 tx_work);

	mutex_lock(&iw->tx_mutex);
	softrdma_iw_tx(&iw->qp, false);
	mutex_unlock(&iw->tx_mutex);
}

/*
 * Complete the WQEs sent by reference whose last byte TCP has seen acked
 * (process context, or the socket callback when an ACK came). While some
 * wait, SOCK_NOSPACE stays set: TCP calls sk_write_space for every ACK
 * then (tcp_check_space()).
 */
void softrdma_iw_write_space(struct softrdma_qp *qp, struct sock *sk)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	struct socket *sock = READ_ONCE(sk->sk_socket);

	for (;;) {
		u32 una = READ_ONCE(tcp_sk(sk)->snd_una), i;
		bool wait, acked = false;

		spin_lock_bh(&qp->lock);
		for (i = qp->req.comp_idx;
		     iw->zc_unacked && i != qp->req.send_idx; i++) {
			struct softrdma_iw_swqe *is = softrdma_iw_swqe(iw, i);

			if (!is->ack_wait)
				continue;
			if (after(is->ack_seq, una))
				break;
			is->ack_wait = false;
			is->done = true;
			iw->zc_unacked--;
			acked = true;
		}
		softrdma_iw_qp_advance(qp);
		/* A local WQE waits for every one before it: it may go now. */
		if (acked && qp->req.comp_idx == qp->req.send_idx &&
		    softrdma_iw_req_pending(qp))
			softrdma_iw_req_run(qp);
		wait = iw->zc_unacked;
		spin_unlock_bh(&qp->lock);
		if (!wait || !sock)
			return;
		set_bit(SOCK_NOSPACE, &sock->flags);
		/* Pairs with tcp_check_space(): it sees the bit, or we its ACK. */
		smp_mb__after_atomic();
		if (READ_ONCE(tcp_sk(sk)->snd_una) == una)
			return;
	}
}

/* Are there WQEs the sender has not taken? */
bool softrdma_iw_req_pending(struct softrdma_qp *qp)
{
	if (!to_iwqp(qp)->sock)
		return false;
	/* Acquire pairs with the provider's release of its WQEs. */
	return smp_load_acquire(&qp->sq.hdr->producer) != qp->req.send_idx;
}

/* The kick: the sender runs in its work item. Caller holds qp->lock. */
void softrdma_iw_req_run(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	if (iw->sock)
		queue_work(softrdma_iw_wq, &iw->tx_work);
}

/* Send what a softirq left to a kick (softrdma_iw_tx_soon()). */
static void softrdma_iw_run_left(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	if (mutex_trylock(&iw->tx_mutex)) {
		softrdma_iw_tx(qp, true);
		mutex_unlock(&iw->tx_mutex);
	} else {
		queue_work(softrdma_iw_wq, &iw->tx_work);
	}
	softrdma_qp_put(qp);
}

/*
 * A process's kick (process context, no lock held): a connected QP's
 * WQEs go out in the poster's context, as far as the socket takes them at
 * once. Waking a worker instead costs a scheduler round trip, a whole tick
 * when the poster spins on the CPU the worker wakes on.
 */
int softrdma_iw_req_kick(struct softrdma_qp *qp)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);
	bool direct;

	spin_lock_bh(&qp->lock);
	direct = qp->state == IB_QPS_RTS && iw->sock;
	spin_unlock_bh(&qp->lock);
	if (!direct)
		return softrdma_qp_kick(qp);
	if (mutex_trylock(&iw->tx_mutex)) {
		struct softrdma_iw_kicker *k;
		struct softrdma_qp *left = NULL;
		bool owner;

		/* Softirqs run on this CPU in our context: stay on it. */
		migrate_disable();
		local_bh_disable();
		k = this_cpu_ptr(&softrdma_iw_kicker);
		owner = !k->task;
		if (owner)
			k->task = current;
		local_bh_enable();
		softrdma_iw_tx(qp, true);
		mutex_unlock(&iw->tx_mutex);
		if (owner) {
			local_bh_disable();
			k->task = NULL;
			left = k->qp;
			k->qp = NULL;
			local_bh_enable();
		}
		migrate_enable();
		if (left)
			softrdma_iw_run_left(left);
		return 0;
	}
	/* The sender is busy; it may be past its last look at the ring. */
	spin_lock_bh(&qp->lock);
	softrdma_iw_req_run(qp);
	spin_unlock_bh(&qp->lock);
	return 0;
}
