// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP (RFC 5041) and RDMAP (RFC 5040) headers as the data path (tx.c, rx.c)
 * writes and checks them, and the Terminate message: pure helpers, so that
 * KUnit tests what goes on the wire.
 */
#include <kunit/visibility.h>

#include "iwarp.h"

/**
 * softrdma_ddp_seg - the next segment of a DDP message
 * @len: the message's length
 * @off: its bytes sent so far (the segment's MO or tagged offset)
 * @max: payload bytes a segment carries (MULPDU less the header)
 * @last: set if this segment is the message's last (DDP L flag)
 *
 * Return: the segment's payload length. A zero-length message is one
 * zero-length segment.
 */
u32 softrdma_ddp_seg(u32 len, u32 off, u32 max, bool *last)
{
	u32 n = min(len - off, max);

	*last = off + n == len;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_ddp_seg);

void softrdma_ddp_tagged_fill(struct softrdma_ddp_tagged *h, u8 op,
			      bool last, u32 stag, u64 to)
{
	h->ddp = SOFTRDMA_DDP_T | (last ? SOFTRDMA_DDP_L : 0) | SOFTRDMA_DDP_DV;
	h->rdmap = SOFTRDMA_RDMAP_RV << SOFTRDMA_RDMAP_RV_SHIFT | op;
	h->stag = htonl(stag);
	h->to = cpu_to_be64(to);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_ddp_tagged_fill);

void softrdma_ddp_untagged_fill(struct softrdma_ddp_untagged *h, u8 op,
				bool last, u32 qn, u32 msn, u32 mo,
				u32 inv_stag)
{
	h->ddp = (last ? SOFTRDMA_DDP_L : 0) | SOFTRDMA_DDP_DV;
	h->rdmap = SOFTRDMA_RDMAP_RV << SOFTRDMA_RDMAP_RV_SHIFT | op;
	h->inv_stag = htonl(inv_stag);
	h->qn = htonl(qn);
	h->msn = htonl(msn);
	h->mo = htonl(mo);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_ddp_untagged_fill);

static bool softrdma_term_set(struct softrdma_term_cause *t, u8 layer,
			      u8 etype, u8 code)
{
	t->layer = layer;
	t->etype = etype;
	t->code = code;
	return false;
}

/**
 * softrdma_ddp_hdr_check - check a received ULPDU's DDP and RDMAP headers
 * @u: the ULPDU
 * @ulen: its length
 * @qn_num: the untagged queues in use: 3 (RFC 5040), 5 with RFC 7306
 * @t: the Terminate's cause, when it fails
 *
 * The versions, the header's length and an untagged segment's queue number.
 *
 * Return: true if the ULPDU may go on to its queue or buffer.
 */
bool softrdma_ddp_hdr_check(const u8 *u, u32 ulen, u32 qn_num,
			    struct softrdma_term_cause *t)
{
	bool tagged = u[0] & SOFTRDMA_DDP_T;

	if (ulen < (tagged ? SOFTRDMA_TAGGED_LEN : SOFTRDMA_UNTAGGED_LEN))
		return softrdma_term_set(t, TERM_LAYER_LLP, 0, TERM_LLP_LEN);
	if ((u[0] & SOFTRDMA_DDP_DV_MASK) != SOFTRDMA_DDP_DV)
		return softrdma_term_set(t, TERM_LAYER_DDP,
					 tagged ? TERM_DDP_TAGGED :
					 TERM_DDP_UNTAGGED,
					 tagged ? TERM_DDP_T_VERSION :
					 TERM_DDP_U_VERSION);
	if (u[1] >> SOFTRDMA_RDMAP_RV_SHIFT != SOFTRDMA_RDMAP_RV)
		return softrdma_term_set(t, TERM_LAYER_RDMAP,
					 TERM_RDMAP_OPERATION,
					 TERM_RDMAP_VERSION);
	if (!tagged &&
	    get_unaligned_be32(u + offsetof(struct softrdma_ddp_untagged, qn)) >=
	    qn_num)
		return softrdma_term_set(t, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_QN);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_ddp_hdr_check);

/**
 * softrdma_ddp_seq_check - an untagged segment's place in its queue
 * @msn: its MSN
 * @mo: its MO
 * @want_msn: the MSN the queue expects
 * @want_mo: the MO the message expects (bytes of it placed so far)
 * @t: the Terminate's cause, when it fails
 *
 * Segments arrive in order on the stream: the queue's current message, at
 * the end of what has arrived of it.
 *
 * Return: true if the segment is the next one.
 */
bool softrdma_ddp_seq_check(u32 msn, u32 mo, u32 want_msn, u32 want_mo,
			    struct softrdma_term_cause *t)
{
	if (msn != want_msn)
		return softrdma_term_set(t, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_MSN_RANGE);
	if (mo != want_mo)
		return softrdma_term_set(t, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
					 TERM_DDP_U_MO);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_ddp_seq_check);

/**
 * softrdma_term_fill - the Terminate's own part of its ULPDU (RFC 5040 4.8)
 * @p: where it goes, after the untagged DDP header
 * @t: layer, error type, code
 * @hdr: the ULPDU that caused it, or NULL
 * @ulen: that ULPDU's length (its DDP segment length)
 *
 * With @hdr, the DDP segment length (M), the DDP header (D) and, for an
 * RDMA Read Request, the request (R) are copied after the control field.
 *
 * Return: the bytes written.
 */
u32 softrdma_term_fill(u8 *p, const struct softrdma_term_cause *t,
		       const u8 *hdr, u32 ulen)
{
	struct softrdma_rdmap_term *term = (void *)p;
	u32 len = sizeof(*term), hlen;
	u16 hdrct = 0;

	term->layer_type = t->layer << 4 | (t->etype & 15);
	term->code = t->code;
	if (hdr) {
		hlen = hdr[0] & SOFTRDMA_DDP_T ? SOFTRDMA_TAGGED_LEN :
		       SOFTRDMA_UNTAGGED_LEN;
		if (!(hdr[0] & SOFTRDMA_DDP_T) &&
		    (hdr[1] & SOFTRDMA_RDMAP_OP_MASK) == RDMAP_READ_REQ &&
		    ulen >= hlen + SOFTRDMA_RREQ_LEN) {
			hlen += SOFTRDMA_RREQ_LEN;
			hdrct |= SOFTRDMA_TERM_HDR_R;
		}
		hlen = min(hlen, ulen);
		hdrct |= SOFTRDMA_TERM_HDR_M | SOFTRDMA_TERM_HDR_D;
		put_unaligned_be16(ulen, p + len);
		memcpy(p + len + 2, hdr, hlen);
		len += 2 + hlen;
	}
	term->hdrct = htons(hdrct);
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_term_fill);
