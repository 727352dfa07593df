// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA framing (RFC 5044 4): an FPDU is the ULPDU's length, the ULPDU, a pad
 * to a multiple of 4 bytes and the CRC field: a CRC32c of all of that if
 * negotiated, else zero.
 *
 * Markers (RFC 5044 5) go in one direction when its receiver asked for them
 * (the M flag of its MPA request or reply): a 4-byte marker at every 512th
 * octet of that direction's FPDU stream, counted from the first FPDU, which
 * a marker precedes. A marker's FPDUPTR is the distance back to the ULPDU
 * Length field of the FPDU it sits in; a marker between two FPDUs sits just
 * before the second one's length field, points to it with 0, and belongs to
 * it (its CRC covers it). The ULPDU length and the pad ignore markers; they
 * keep the stream 4-aligned, so a marker never splits a field.
 *
 * The framing helpers are pure (a stream offset in, bytes out) for KUnit.
 * At the end: the socket sends, and the MPA request and reply frames (RFC
 * 5044 7.1, RFC 6581 5) read, written and parsed for a connection endpoint;
 * what is offered and agreed is decided in cm.c.
 */
#include <kunit/visibility.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "iwarp.h"

/*
 * The MPA CRC of @len bytes: CRC32c, sent as its little-endian bytes.
 * compat.h's, so the module needs no libcrc32c (before 6.14 a module).
 */
u32 softrdma_mpa_crc(const void *buf, u32 len)
{
	return ~softrdma_crc32c(~0U, buf, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_crc);

/**
 * softrdma_fpdu_close - finish an FPDU whose ULPDU is in place
 * @fpdu: the FPDU; the ULPDU starts at byte 2
 * @ulpdu_len: its length
 * @crc: fill the CRC field (it is there either way, zero without CRC)
 *
 * Return: the FPDU's length on the wire.
 */
u32 softrdma_fpdu_close(u8 *fpdu, u32 ulpdu_len, bool crc)
{
	u32 len = 2 + ulpdu_len, pad = -len & 3;

	put_unaligned_be16(ulpdu_len, fpdu);
	memset(fpdu + len, 0, pad);
	len += pad;
	put_unaligned_le32(crc ? softrdma_mpa_crc(fpdu, len) : 0, fpdu + len);
	return len + 4;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_fpdu_close);

#define MPA_MI		SOFTRDMA_MPA_MARKER_INTERVAL
#define MPA_ML		SOFTRDMA_MPA_MARKER_LEN

/* Bytes from stream offset @soff (4-aligned) to the next marker. */
static u32 softrdma_mpa_to_marker(u32 soff)
{
	return -soff & (MPA_MI - 1);
}

/**
 * softrdma_mpa_markers - markers inside an FPDU
 * @soff: the stream offset the FPDU starts at (a multiple of 4)
 * @len: its length without markers
 *
 * Return: how many markers go into it, one ahead of it included.
 */
u32 softrdma_mpa_markers(u32 soff, u32 len)
{
	u32 first = softrdma_mpa_to_marker(soff);

	if (first >= len)
		return 0;
	return 1 + (len - 1 - first) / (MPA_MI - MPA_ML);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_markers);

/* The FPDUPTR of a marker @w bytes into an FPDU that starts with @first. */
static u16 softrdma_mpa_fpduptr(u32 first, u32 w)
{
	/* A marker ahead of the length field points to it with 0. */
	if (!first)
		return w ? w - MPA_ML : 0;
	return w;
}

/**
 * softrdma_mpa_mark - insert markers into an FPDU, in place
 * @buf: the FPDU, @len bytes without markers, room for its markers after
 * @len: its length
 * @soff: the stream offset it starts at (a multiple of 4)
 *
 * Return: its length with markers.
 */
u32 softrdma_mpa_mark(u8 *buf, u32 len, u32 soff)
{
	u32 first = softrdma_mpa_to_marker(soff);
	u32 n = softrdma_mpa_markers(soff, len), end = len, j;

	/* Last marker first: each piece moves once, past the markers before. */
	for (j = n; j--;) {
		u32 u = first + j * (MPA_MI - MPA_ML);	/* bytes before it */
		u32 w = u + j * MPA_ML;			/* where it goes */

		memmove(buf + w + MPA_ML, buf + u, end - u);
		put_unaligned_be16(0, buf + w);
		put_unaligned_be16(softrdma_mpa_fpduptr(first, w), buf + w + 2);
		end = u;
	}
	return len + n * MPA_ML;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_mark);

/**
 * softrdma_mpa_unmark - check and remove the markers of an FPDU, in place
 * @buf: the FPDU as received
 * @wire_len: its length with markers
 * @soff: the stream offset it starts at (a multiple of 4)
 *
 * Every marker must point to the FPDU's length field (its reserved field
 * is ignored, and the FPDUPTR's two low bits, RFC 5044 5).
 *
 * Return: the FPDU's length without markers, or -EPROTO.
 */
int softrdma_mpa_unmark(u8 *buf, u32 wire_len, u32 soff)
{
	u32 first = softrdma_mpa_to_marker(soff), out = first, w;

	if (first >= wire_len)
		return wire_len;
	for (w = first; w < wire_len; w += MPA_MI) {
		u32 next = min(w + MPA_MI, wire_len);
		u16 ptr;

		if (w + MPA_ML > wire_len)
			return -EPROTO;
		ptr = get_unaligned_be16(buf + w + 2);
		if ((ptr ^ softrdma_mpa_fpduptr(first, w)) & ~3)
			return -EPROTO;
		memmove(buf + out, buf + w + MPA_ML, next - w - MPA_ML);
		out += next - w - MPA_ML;
	}
	return out;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_unmark);

/**
 * softrdma_fpdu_close_at - finish an FPDU to send at a stream offset
 * @fpdu: the FPDU; the ULPDU starts at byte 2; room for the markers
 * @ulpdu_len: the ULPDU's length
 * @crc: fill the CRC field
 * @markers: insert markers
 * @soff: the stream offset the FPDU goes at
 *
 * Return: the FPDU's length on the wire.
 */
u32 softrdma_fpdu_close_at(u8 *fpdu, u32 ulpdu_len, bool crc, bool markers,
			   u32 soff)
{
	u32 len = 2 + ulpdu_len, pad = -len & 3;

	if (!markers)
		return softrdma_fpdu_close(fpdu, ulpdu_len, crc);
	put_unaligned_be16(ulpdu_len, fpdu);
	memset(fpdu + len, 0, pad);
	/* The CRC field is the last 4 bytes: no marker comes after it. */
	len = softrdma_mpa_mark(fpdu, len + pad + 4, soff);
	put_unaligned_le32(crc ? softrdma_mpa_crc(fpdu, len - 4) : 0,
			   fpdu + len - 4);
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_fpdu_close_at);

/* Bytes to read of an FPDU at @soff before its ULPDU Length is known. */
u32 softrdma_mpa_hdr_len(u32 soff, bool markers)
{
	return markers && !softrdma_mpa_to_marker(soff) ? MPA_ML + 2 : 2;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_hdr_len);

/**
 * softrdma_mpa_fpdu_len - the wire length of an FPDU being received
 * @hdr: its first softrdma_mpa_hdr_len() bytes
 * @soff: the stream offset it starts at
 * @markers: markers are on
 * @ulen: its ULPDU length
 *
 * Return: its length with pad, CRC field and markers.
 */
u32 softrdma_mpa_fpdu_len(const u8 *hdr, u32 soff, bool markers, u32 *ulen)
{
	u32 len;

	*ulen = get_unaligned_be16(hdr + softrdma_mpa_hdr_len(soff, markers) -
				   2);
	len = 2 + *ulen + (-(2 + *ulen) & 3) + 4;
	return markers ? len + MPA_ML * softrdma_mpa_markers(soff, len) : len;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_fpdu_len);

/**
 * softrdma_fpdu_check - check a received FPDU and strip its markers
 * @fpdu: the FPDU as received; on success, the FPDU without markers
 * @wire_len: its length as received
 * @soff: the stream offset it starts at
 * @crc: check the CRC (it covers the markers)
 * @markers: markers are on
 *
 * Return: 0, -EBADMSG on a CRC error, -EPROTO on a misplaced marker.
 */
int softrdma_fpdu_check(u8 *fpdu, u32 wire_len, u32 soff, bool crc,
			bool markers)
{
	int n;

	if (crc && get_unaligned_le32(fpdu + wire_len - 4) !=
	    softrdma_mpa_crc(fpdu, wire_len - 4))
		return -EBADMSG;
	if (!markers)
		return 0;
	n = softrdma_mpa_unmark(fpdu, wire_len, soff);
	return n < 0 ? n : 0;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_fpdu_check);

/*
 * ULPDU bytes per FPDU for a TCP MSS (RFC 5044 8 and 12.1.2): the FPDU with
 * its length, pad, CRC and markers fits a segment of the MSS.
 */
u32 softrdma_mpa_mulpdu(u32 mss, bool markers)
{
	u32 emss = clamp_t(u32, mss, 256, SOFTRDMA_MPA_MAX_ULPDU);

	if (!markers)
		return emss - 9;
	return emss - (6 + MPA_ML * DIV_ROUND_UP(emss, MPA_MI) + emss % 4);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_mpa_mulpdu);

/*
 * Send all of @buf, one FPDU or MPA frame, on @sock, blocking (process
 * context only). MSG_EOR ends TCP's buffer with it: nothing sent later joins
 * its segment, so FPDUs (no larger than the MSS) stay aligned to segments
 * (RFC 5044 8), also when TCP has a backlog. With @more, more is to follow
 * at once: TCP may hold the segments back until a call without @more (or a
 * full send buffer) pushes them.
 */
int softrdma_iw_sendmore(struct socket *sock, const void *buf, size_t len,
			 bool more)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL | MSG_EOR };
	int n;

	might_sleep();
	if (more)
		msg.msg_flags |= MSG_MORE;
	while (iov.iov_len) {
		n = kernel_sendmsg(sock, &msg, &iov, 1, iov.iov_len);
		if (n < 0)
			return n;
		if (!n)
			return -EPIPE;
		iov.iov_base = (u8 *)iov.iov_base + n;
		iov.iov_len -= n;
	}
	return 0;
}

/* Send all of @buf on @sock and push it (process context only). */
int softrdma_iw_sendbuf(struct socket *sock, const void *buf, size_t len)
{
	return softrdma_iw_sendmore(sock, buf, len, false);
}

/*
 * Read the MPA request or reply frame without blocking (cep->mutex held).
 * Return: 1 when whole, 0 when more must come, or -errno.
 */
int softrdma_mpa_rr_read(struct softrdma_cep *cep)
{
	struct softrdma_mpa_rr *rr = (void *)cep->mpa;

	for (;;) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		u32 need = sizeof(*rr);
		struct kvec iov;
		int n;

		if (cep->mpa_have >= sizeof(*rr)) {
			if (ntohs(rr->pd_len) > SOFTRDMA_MPA_MAX_PD)
				return -EPROTO;
			need += ntohs(rr->pd_len);
		}
		if (cep->mpa_have == need)
			return 1;
		iov.iov_base = cep->mpa + cep->mpa_have;
		iov.iov_len = need - cep->mpa_have;
		n = kernel_recvmsg(cep->sock, &msg, &iov, 1, iov.iov_len,
				   MSG_DONTWAIT);
		if (n == -EAGAIN)
			return 0;
		if (n <= 0)
			return n ? n : -ECONNRESET;
		cep->mpa_have += n;
	}
}

/* Send an MPA request or reply (process context, cep->mutex held). */
int softrdma_mpa_rr_send(struct softrdma_cep *cep, bool reply,
			 bool reject, const void *pdata, u8 pdlen)
{
	size_t v2len = cep->enhanced ? sizeof(struct softrdma_mpa_v2) : 0;
	struct softrdma_mpa_rr *rr;
	size_t len = sizeof(*rr) + v2len + pdlen;
	int ret;

	rr = kzalloc(len, GFP_KERNEL);
	if (!rr)
		return -ENOMEM;
	memcpy(rr->key, reply ? SOFTRDMA_MPA_KEY_REP : SOFTRDMA_MPA_KEY_REQ,
	       SOFTRDMA_MPA_KEY_LEN);
	rr->flags = (cep->rx_markers ? SOFTRDMA_MPA_FLAG_M : 0) |
		    (cep->crc ? SOFTRDMA_MPA_FLAG_C : 0) |
		    (reject ? SOFTRDMA_MPA_FLAG_R : 0) |
		    (cep->enhanced ? SOFTRDMA_MPA_FLAG_E : 0);
	if (cep->ext && !reject)
		rr->flags |= reply ? SOFTRDMA_MPA_FLAG_EXT_ACCEPT :
			     SOFTRDMA_MPA_FLAG_EXT_OFFER;
	rr->rev = cep->mpa_rev;
	rr->pd_len = htons(v2len + pdlen);
	if (cep->enhanced) {
		struct softrdma_mpa_v2 *v2 = (void *)(rr + 1);
		u16 ird = min_t(u16, cep->ird, SOFTRDMA_MPA_V2_MASK);
		u16 ord = min_t(u16, cep->ord, SOFTRDMA_MPA_V2_MASK);

		if (cep->p2p) {
			ird |= SOFTRDMA_MPA_V2_P2P;
			/* We offer, and can answer, a zero-length Write. */
			ord |= reply ? cep->rtr : SOFTRDMA_MPA_V2_WRITE0;
		}
		v2->ird = htons(ird);
		v2->ord = htons(ord);
	}
	if (pdlen)
		memcpy((u8 *)(rr + 1) + v2len, pdata, pdlen);
	ret = softrdma_iw_sendbuf(cep->sock, rr, len);
	kfree(rr);
	return ret;
}

/* The revision 2 data at the start of the private data, if any. */
void softrdma_mpa_rr_parse_v2(struct softrdma_cep *cep, u8 **pd,
			      u16 *pdlen, u16 *peer_ird, u16 *peer_ord,
			      u16 *ctl_ird, u16 *ctl_ord)
{
	struct softrdma_mpa_rr *rr = (void *)cep->mpa;
	struct softrdma_mpa_v2 v2;

	*pd = cep->mpa + sizeof(*rr);
	*pdlen = ntohs(rr->pd_len);
	*peer_ird = SOFTRDMA_MAX_RD_ATOMIC;
	*peer_ord = SOFTRDMA_MAX_RD_ATOMIC;
	*ctl_ird = 0;
	*ctl_ord = 0;
	if (rr->rev < 2 || !(rr->flags & SOFTRDMA_MPA_FLAG_E) ||
	    *pdlen < sizeof(v2))
		return;
	memcpy(&v2, *pd, sizeof(v2));
	*pd += sizeof(v2);
	*pdlen -= sizeof(v2);
	*peer_ird = ntohs(v2.ird) & SOFTRDMA_MPA_V2_MASK;
	*peer_ord = ntohs(v2.ord) & SOFTRDMA_MPA_V2_MASK;
	*ctl_ird = ntohs(v2.ird) & ~SOFTRDMA_MPA_V2_MASK;
	*ctl_ord = ntohs(v2.ord) & ~SOFTRDMA_MPA_V2_MASK;
}
