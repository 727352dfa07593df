// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 ICRC (IBTA Annex A17.3.3): of a packet, of every packet of a
 * train before GSO cuts it, and the check of a received packet whose
 * payload may be in pieces. The CRC itself is softrdma_crc32()'s, a
 * packet's pieces (or a train's packets) in one hold of the FPU
 * (softrdma_crc32_begin()).
 */
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <kunit/visibility.h>

#include "softrdma.h"
#include "roce.h"

/* The CRC of the LRH's ones, from the seed ~0: crc32_le(~0U, ones, 8). */
#define SOFTRDMA_ICRC_LRH	0xdebb20e3U

/*
 * ICRC (IBTA Annex A17.3.3): CRC32 over the packet from the IP header on,
 * with the fields routers may change masked to ones, the LRH it replaces
 * counting as 8 bytes of ones. These give the CRC (not yet inverted) up
 * to the end of the BTH, from a masked copy of the IP and UDP headers and
 * the BTH, and on over the @len bytes at @p that follow the BTH. From the
 * seed ~0, the LRH's 8 bytes of ones are what 4 bytes of ones are from 0,
 * and zeros change nothing from 0: the copy starts with as many zeros
 * and the 4 bytes of ones as make it whole 16-byte lanes, so that the
 * fold (@held) takes it and the payload in one run
 * (softrdma_crc32_in2()); the library starts after them, from the LRH's
 * CRC.
 */
#define SOFTRDMA_ICRC4_PRE	8	/* 4 zeros, 4 ones */
#define SOFTRDMA_ICRC6_PRE	4	/* 4 ones */
#define SOFTRDMA_ICRC4_HEAD	(SOFTRDMA_ICRC4_PRE + sizeof(struct iphdr) + \
				 sizeof(struct udphdr) + SOFTRDMA_BTH_LEN)
#define SOFTRDMA_ICRC6_HEAD	(SOFTRDMA_ICRC6_PRE + sizeof(struct ipv6hdr) + \
				 sizeof(struct udphdr) + SOFTRDMA_BTH_LEN)

static u32 softrdma_icrc_start(bool held, const u8 *ph, unsigned int hlen,
			       unsigned int pre, const u8 *p, unsigned int len)
{
	if (held)
		return softrdma_crc32_in2(held, 0, ph, hlen, p, len);
	return softrdma_crc32_in2(held, SOFTRDMA_ICRC_LRH, ph + pre, hlen - pre,
				  p, len);
}

/* Copy UDP header and BTH behind the IP header; mask UDP checksum, resv8a. */
static void softrdma_icrc_mask_udp_bth(u8 *p, const struct udphdr *udph,
				       const u8 *bth)
{
	struct udphdr *udp = (struct udphdr *)p;
	u8 *b = p + sizeof(*udp);

	memcpy(udp, udph, sizeof(*udp));
	memcpy(b, bth, SOFTRDMA_BTH_LEN);
	udp->check = htons(0xffff);
	b[4] = 0xff;
}

/* Over IPv4: TOS, TTL and header checksum masked. */
static u32 softrdma_icrc4_start(bool held, const struct iphdr *iph,
				const struct udphdr *udph, const u8 *bth,
				const u8 *p, unsigned int len)
{
	u8 ph[SOFTRDMA_ICRC4_HEAD];
	struct iphdr *ip = (struct iphdr *)(ph + SOFTRDMA_ICRC4_PRE);

	memset(ph, 0, 4);
	memset(ph + 4, 0xff, 4);
	memcpy(ip, iph, sizeof(*ip));
	ip->tos = 0xff;
	ip->ttl = 0xff;
	ip->check = htons(0xffff);
	softrdma_icrc_mask_udp_bth((u8 *)(ip + 1), udph, bth);
	return softrdma_icrc_start(held, ph, sizeof(ph), SOFTRDMA_ICRC4_PRE, p,
				   len);
}

/* Over IPv6: traffic class, flow label and hop limit masked (not the
 * version nibble).
 */
static u32 softrdma_icrc6_start(bool held, const struct ipv6hdr *ip6h,
				const struct udphdr *udph, const u8 *bth,
				const u8 *p, unsigned int len)
{
	u8 ph[SOFTRDMA_ICRC6_HEAD];
	u8 *h = ph + SOFTRDMA_ICRC6_PRE;
	struct ipv6hdr *ip6 = (struct ipv6hdr *)h;

	memset(ph, 0xff, SOFTRDMA_ICRC6_PRE);
	memcpy(ip6, ip6h, sizeof(*ip6));
	h[0] |= 0x0f;
	h[1] = 0xff;
	h[2] = 0xff;
	h[3] = 0xff;
	ip6->hop_limit = 0xff;
	softrdma_icrc_mask_udp_bth((u8 *)(ip6 + 1), udph, bth);
	return softrdma_icrc_start(held, ph, sizeof(ph), SOFTRDMA_ICRC6_PRE, p,
				   len);
}

/* A packet's ICRC, headers and payload, inside softrdma_crc32_begin(). */
static u32 softrdma_icrc4_in(bool held, const struct iphdr *iph,
			     const struct udphdr *udph, const u8 *bth,
			     unsigned int len)
{
	return ~softrdma_icrc4_start(held, iph, udph, bth,
				     bth + SOFTRDMA_BTH_LEN,
				     len - SOFTRDMA_BTH_LEN);
}

static u32 softrdma_icrc6_in(bool held, const struct ipv6hdr *ip6h,
			     const struct udphdr *udph, const u8 *bth,
			     unsigned int len)
{
	return ~softrdma_icrc6_start(held, ip6h, udph, bth,
				     bth + SOFTRDMA_BTH_LEN,
				     len - SOFTRDMA_BTH_LEN);
}

/* The ICRC of a packet over IPv4; @bth is @len bytes up to the ICRC. */
u32 softrdma_icrc(const struct iphdr *iph, const struct udphdr *udph,
		  const u8 *bth, unsigned int len)
{
	bool held = softrdma_crc32_begin();
	u32 icrc = softrdma_icrc4_in(held, iph, udph, bth, len);

	softrdma_crc32_end(held);
	return icrc;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_icrc);

/* The ICRC of a packet over IPv6. */
u32 softrdma_icrc6(const struct ipv6hdr *ip6h, const struct udphdr *udph,
		   const u8 *bth, unsigned int len)
{
	bool held = softrdma_crc32_begin();
	u32 icrc = softrdma_icrc6_in(held, ip6h, udph, bth, len);

	softrdma_crc32_end(held);
	return icrc;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_icrc6);

/*
 * The ICRC of every packet of a train: over the headers the packet will
 * have once cut from it (inet_gso_segment(): its own lengths, and over
 * IPv4 an IP ID one more than the packet's before it), written at its
 * end. @iph or @ip6h is the train's IP header, @tlen the bytes after the
 * UDP header, without the last ICRC.
 */
void softrdma_roce_train_icrc(struct sk_buff *skb, const struct iphdr *iph,
			      const struct ipv6hdr *ip6h,
			      const struct udphdr *udph, u32 tlen)
{
	u32 seg = SOFTRDMA_ROCE_CB(skb)->seg, n = SOFTRDMA_ROCE_CB(skb)->npkts;
	u32 off = skb_transport_offset(skb) + sizeof(*udph);
	bool pieces = skb_shinfo(skb)->nr_frags > 1;
	struct udphdr udp = *udph;
	u8 *bth = NULL, *buf;
	__le32 icrc;
	struct ipv6hdr ip6;
	struct iphdr ip;
	u32 i, len, crc;
	bool held;

	if (iph)
		ip = *iph;
	else
		ip6 = *ip6h;
	/*
	 * A train by reference (req.c), summed for another source address
	 * than its route took: each packet read into a buffer of its own.
	 */
	if (pieces) {
		softrdma_roce_train_close(skb);
		bth = kmalloc(seg, GFP_ATOMIC);
		if (!bth)
			return;		/* lost to its ICRC, as on a wire */
	}
	buf = bth ? bth : softrdma_roce_train_data(skb);
	/* One hold of the FPU for the train (SOFTRDMA_TRAIN_MAX_BYTES). */
	held = softrdma_crc32_begin();
	for (i = 0; i < n; i++, off += seg) {
		/* From BTH to ICRC. */
		len = i + 1 < n ? seg : tlen + SOFTRDMA_ICRC_LEN - i * seg;
		if (pieces)
			skb_copy_bits(skb, off, bth, len - SOFTRDMA_ICRC_LEN);
		else
			bth = buf + i * seg;
		udp.len = htons(sizeof(udp) + len);
		if (iph) {
			ip.id = htons(ntohs(iph->id) + i);
			ip.tot_len = htons(sizeof(ip) + sizeof(udp) + len);
			crc = softrdma_icrc4_in(held, &ip, &udp, bth,
						len - SOFTRDMA_ICRC_LEN);
		} else {
			ip6.payload_len = udp.len;
			crc = softrdma_icrc6_in(held, &ip6, &udp, bth,
						len - SOFTRDMA_ICRC_LEN);
		}
		icrc = cpu_to_le32(crc);
		if (pieces)	/* in the train's own page, not the MR's */
			skb_store_bits(skb, off + len - SOFTRDMA_ICRC_LEN,
				       &icrc, sizeof(icrc));
		else
			memcpy(bth + len - SOFTRDMA_ICRC_LEN, &icrc,
			       sizeof(icrc));
	}
	softrdma_crc32_end(held);
	if (pieces)
		kfree(buf);
	else
		softrdma_roce_train_close(skb);
}

/*
 * A train whose ICRCs are written: its length takes in the last one's,
 * at the end of its last piece.
 */
void softrdma_roce_train_close(struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);

	skb_frag_size_add(&sh->frags[sh->nr_frags - 1], SOFTRDMA_ICRC_LEN);
	skb->len += SOFTRDMA_ICRC_LEN;
	skb->data_len += SOFTRDMA_ICRC_LEN;
}

/**
 * softrdma_roce_train_head - a train's packet's ICRC up to its payload
 * @held: what softrdma_crc32_begin() returned
 * @qn: the route of the QP whose train it is (softrdma_roce_xmit()'s)
 * @i: the packet's place in the train
 * @len: its bytes from BTH to ICRC
 * @bth: its BTH, @hlen bytes of headers from there (BTH and extended)
 * @hlen: at least the BTH's
 *
 * Over the IP and UDP headers it will have once cut from the train, as
 * softrdma_roce_xmit() builds them and GSO cuts them (see
 * softrdma_roce_train_icrc()): the requester sums the payload on from
 * there as it copies it into the train. Return: the CRC (not yet
 * inverted) to go on with.
 */
u32 softrdma_roce_train_head(bool held, const struct softrdma_roce_net *qn,
			     u32 i, u32 len, const u8 *bth, u32 hlen)
{
	struct udphdr udp = {
		.source = htons(qn->sport),
		.dest = htons(SOFTRDMA_ROCE_PORT),
		.len = htons(sizeof(udp) + len),
	};
	const u8 *p = bth + SOFTRDMA_BTH_LEN;
	struct ipv6hdr ip6 = {};
	struct iphdr ip = {};

	if (qn->ipv6) {
		ip6.version = 6;
		ip6.payload_len = udp.len;
		ip6.nexthdr = IPPROTO_UDP;
		ip6.saddr = qn->saddr6;
		ip6.daddr = qn->daddr6;
		return softrdma_icrc6_start(held, &ip6, &udp, bth, p,
					    hlen - SOFTRDMA_BTH_LEN);
	}
	ip.version = 4;
	ip.ihl = sizeof(ip) >> 2;
	ip.tot_len = htons(sizeof(ip) + sizeof(udp) + len);
	ip.id = htons(i);
	ip.frag_off = htons(IP_DF);
	ip.protocol = IPPROTO_UDP;
	ip.saddr = qn->saddr4;
	ip.daddr = qn->daddr4;
	return softrdma_icrc4_start(held, &ip, &udp, bth, p,
				    hlen - SOFTRDMA_BTH_LEN);
}

/*
 * Go on with *@crc over @len bytes of @skb from byte @off on and read the
 * ICRC that follows them into *@got, a piece of memory at a time: the
 * linear part, then each fragment (no highmem: a fragment's pages are
 * one run of the direct map). Return: false if @skb has a frag list or
 * ends before (skb_seq_read() then).
 */
static bool softrdma_roce_icrc_walk(bool held, const struct sk_buff *skb,
				    u32 off, u32 len, u32 *crc, __le32 *got)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	u32 dend = off + len, end = dend + SOFTRDMA_ICRC_LEN;
	u32 pos = 0, i = 0, blen = skb_headlen(skb), a, b;
	const u8 *base = skb->data;
	u8 tail[SOFTRDMA_ICRC_LEN];

	if (IS_ENABLED(CONFIG_HIGHMEM) || skb_has_frag_list(skb))
		return false;
	for (;;) {
		a = max(off, pos);
		b = min(dend, pos + blen);
		if (a < b)
			*crc = softrdma_crc32_in(held, *crc, base + a - pos,
						 b - a);
		a = max(dend, pos);
		b = min(end, pos + blen);
		if (a < b)
			memcpy(tail + a - dend, base + a - pos, b - a);
		pos += blen;
		if (pos >= end)
			break;
		if (i == sh->nr_frags)
			return false;
		base = skb_frag_address(&sh->frags[i]);
		blen = skb_frag_size(&sh->frags[i]);
		i++;
	}
	memcpy(got, tail, sizeof(*got));
	return true;
}

/*
 * The ICRC's CRC up to the end of @skb's BTH (@skb->data) and on over the
 * @len bytes after it; false: no IP.
 */
static bool softrdma_roce_icrc_begin(bool held, const struct sk_buff *skb,
				     u32 len, u32 *crc)
{
	const u8 *p = skb->data + SOFTRDMA_BTH_LEN;

	if (skb->protocol == htons(ETH_P_IP))
		*crc = softrdma_icrc4_start(held, ip_hdr(skb), udp_hdr(skb),
					    skb->data, p, len);
	else if (skb->protocol == htons(ETH_P_IPV6))
		*crc = softrdma_icrc6_start(held, ipv6_hdr(skb), udp_hdr(skb),
					    skb->data, p, len);
	else
		return false;
	return true;
}

/*
 * Whether a received packet's ICRC is right. @skb->data is the BTH, in
 * the linear part; what follows may be in pieces (a peer's train, cut by
 * our socket: softrdma_rx_dispatch()).
 */
static bool softrdma_roce_icrc_verify(struct sk_buff *skb)
{
	unsigned int tlen = skb->len - SOFTRDMA_ICRC_LEN, done = 0, n;
	unsigned int len = tlen - SOFTRDMA_BTH_LEN;
	struct skb_seq_state st;
	const u8 *data;
	__le32 got;
	u32 crc, start;
	bool held, ok;

	held = softrdma_crc32_begin();
	if (!softrdma_roce_icrc_begin(held, skb, 0, &start)) {
		softrdma_crc32_end(held);
		return false;
	}
	crc = start;
	ok = softrdma_roce_icrc_walk(held, skb, SOFTRDMA_BTH_LEN, len, &crc,
				     &got);
	softrdma_crc32_end(held);
	if (ok)
		return le32_to_cpu(got) == ~crc;
	/* A block may go on past @tlen: the CRC stops there. */
	crc = start;
	skb_prepare_seq_read(skb, SOFTRDMA_BTH_LEN, tlen, &st);
	while (done < len && (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min(n, len - done);
		crc = softrdma_crc32(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	if (skb_copy_bits(skb, tlen, &got, sizeof(got)))
		return false;
	return le32_to_cpu(got) == ~crc;
}

/* Check a received packet's ICRC (see above); a bad one is counted. */
bool softrdma_roce_icrc_ok(struct sk_buff *skb)
{
	if (softrdma_roce_icrc_verify(skb))
		return true;
	softrdma_roce_count_drop(skb, SOFTRDMA_CNT_RX_ICRC_ERR);
	return false;
}

/*
 * A received packet's ICRC, now or with its payload: an RC SEND's or RDMA
 * WRITE's middle or last packet of SOFTRDMA_ICRC_FUSE_MIN payload bytes
 * or more, to one QP, gets its ICRC summed as the responder copies the
 * payload into place (softrdma_crc32_copy()), and checked before
 * anything else comes of it: marked due in its cb. Such packets carry no
 * RETH, so a bad one cannot be placed but where its message was going,
 * which the good one sent again overwrites. Whoever takes a due packet
 * another way settles it first (softrdma_roce_icrc_settle()).
 * Return: false if the ICRC was checked and is bad (counted).
 */
bool softrdma_roce_icrc_rcv(struct sk_buff *skb, u32 qpn)
{
	u8 op = skb->data[0];
	bool fuse = (op == RC_SEND_MIDDLE || op == RC_SEND_LAST ||
		     op == RC_SEND_LAST_IMM || op == RC_SEND_LAST_INV ||
		     op == RC_WRITE_MIDDLE || op == RC_WRITE_LAST) &&
		    skb->len >= SOFTRDMA_BTH_LEN + SOFTRDMA_IMMDT_LEN +
				SOFTRDMA_ICRC_FUSE_MIN + SOFTRDMA_ICRC_LEN &&
		    qpn != SOFTRDMA_MCAST_QPN && !skb_has_frag_list(skb) &&
		    (skb->protocol == htons(ETH_P_IP) ?
		     !ipv4_is_multicast(ip_hdr(skb)->daddr) :
		     !ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr));

	SOFTRDMA_ROCE_CB(skb)->icrc_due = fuse;
	return fuse || softrdma_roce_icrc_ok(skb);
}

/*
 * A packet whose ICRC is due (softrdma_roce_icrc_rcv()) taken another
 * way than its payload's placement: checked now. False: bad (the caller
 * counts it, and drops the packet).
 */
bool softrdma_roce_icrc_settle(struct sk_buff *skb)
{
	if (!SOFTRDMA_ROCE_CB(skb)->icrc_due)
		return true;
	SOFTRDMA_ROCE_CB(skb)->icrc_due = false;
	return softrdma_roce_icrc_verify(skb);
}

/*
 * The ICRC of a due packet up to @p, its payload's first byte (in the
 * linear part): what the payload's copy goes on from.
 */
u32 softrdma_roce_icrc_head(const struct sk_buff *skb, const u8 *p)
{
	const u8 *after = skb->data + SOFTRDMA_BTH_LEN;
	bool held = softrdma_crc32_begin();
	u32 crc = 0;

	softrdma_roce_icrc_begin(held, skb, p > after ? p - after : 0, &crc);
	softrdma_crc32_end(held);
	return crc;
}

/*
 * The end of a due packet's ICRC: *@crc went on over its bytes up to byte
 * @off; sum the rest (the pad) and compare with the ICRC. False: bad (the
 * caller counts it).
 */
bool softrdma_roce_icrc_end(struct sk_buff *skb, u32 crc, u32 off)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	u32 tlen = skb->len - SOFTRDMA_ICRC_LEN, n = tlen - off, fstart;
	u8 b[3 + SOFTRDMA_ICRC_LEN];
	const u8 *p = b;
	__le32 got;

	SOFTRDMA_ROCE_CB(skb)->icrc_due = false;
	if (off > tlen || n + SOFTRDMA_ICRC_LEN > sizeof(b))
		return false;
	/* Mostly in the last piece (no frag list: icrc_rcv()), else copied. */
	fstart = sh->nr_frags ?
		 skb->len - skb_frag_size(&sh->frags[sh->nr_frags - 1]) : 0;
	if (!sh->nr_frags && !IS_ENABLED(CONFIG_HIGHMEM))
		p = skb->data + off;
	else if (sh->nr_frags && off >= fstart && !IS_ENABLED(CONFIG_HIGHMEM))
		p = (u8 *)skb_frag_address(&sh->frags[sh->nr_frags - 1]) +
		    off - fstart;
	else if (skb_copy_bits(skb, off, b, n + SOFTRDMA_ICRC_LEN))
		return false;
	if (n)
		crc = softrdma_crc32(crc, p, n);
	memcpy(&got, p + n, sizeof(got));
	return le32_to_cpu(got) == ~crc;
}
