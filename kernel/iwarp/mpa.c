// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA framing (RFC 5044 4): an FPDU is the ULPDU's length, the ULPDU, a pad
 * to a multiple of 4 bytes and the CRC field: a CRC32c of all of that if
 * negotiated, else zero.
 * Markers are not offered: a peer that requires them is refused at
 * connection time (cm.c).
 */
#include <linux/crc32.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "iwarp.h"

/*
 * The MPA CRC of @len bytes: CRC32c, sent as its little-endian bytes. The
 * library's built-in CRC32c, so the module needs no libcrc32c.
 */
u32 softrdma_mpa_crc(const void *buf, u32 len)
{
	return ~__crc32c_le(~0U, buf, len);
}

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

/*
 * Send all of @buf on @sock, blocking (process context only). With @more,
 * more is to follow at once: TCP may hold the bytes back to fill whole
 * (GSO) segments instead of pushing a packet per call, until a call
 * without @more (or a full send buffer) pushes them.
 */
int softrdma_iw_sendmore(struct socket *sock, const void *buf, size_t len,
			 bool more)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
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
