// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 encapsulation: one UDP port 4791 socket per network namespace
 * that has a softroce device, IPv4 transmit and receive, and the ICRC.
 */
#include <linux/crc32.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <kunit/visibility.h>

#include "softrdma.h"
#include "roce.h"

struct softrdma_net {
	struct mutex lock;		/* sock and users */
	struct socket *sock4;
	int users;
};

static unsigned int softrdma_net_id;

/* Count a packet dropped before its QP is known against its device. */
static void softrdma_roce_count_drop(struct sk_buff *skb,
				     enum softrdma_counter c)
{
	struct softrdma_dev *sdev = NULL;
	struct net_device *ndev;

	rcu_read_lock();
	ndev = skb->dev;
	/* Loopback to our own address arrives on lo: find its owner. */
	if (ndev && (ndev->flags & IFF_LOOPBACK))
		ndev = __ip_dev_find(dev_net(ndev), ip_hdr(skb)->daddr, false);
	if (ndev)
		sdev = softrdma_roce_dev_by_netdev(ndev);
	if (sdev)
		softrdma_count(sdev, c);
	rcu_read_unlock();
}

static int softrdma_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	/* Too short for a BTH and an ICRC: not RoCE. */
	if (skb->len < sizeof(struct udphdr) + SOFTRDMA_BTH_LEN +
	    SOFTRDMA_ICRC_LEN) {
		softrdma_roce_count_drop(skb, SOFTRDMA_CNT_RX_MALFORMED);
		kfree_skb(skb);
		return 0;
	}
	softrdma_roce_rcv(skb);
	return 0;
}

/**
 * softrdma_roce_sock_get - make sure @net has our UDP socket
 * @net: the network namespace of a new softroce device
 *
 * Return: 0, or -EADDRINUSE if another owner (rdma_rxe) holds the port.
 */
int softrdma_roce_sock_get(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = softrdma_udp_rcv,
	};
	struct udp_port_cfg cfg = {
		.family = AF_INET,
		.local_udp_port = htons(SOFTRDMA_ROCE_PORT),
	};
	struct socket *sock;
	int ret = 0;

	mutex_lock(&sn->lock);
	if (sn->users++)
		goto out;
	ret = udp_sock_create(net, &cfg, &sock);
	if (ret) {
		sn->users--;
		if (ret == -EADDRINUSE)
			pr_warn("softrdma: UDP port %u is taken in this network namespace (is rdma_rxe loaded here?)\n",
				SOFTRDMA_ROCE_PORT);
		goto out;
	}
	setup_udp_tunnel_sock(net, sock, &tnl);
	sn->sock4 = sock;
out:
	mutex_unlock(&sn->lock);
	return ret;
}

void softrdma_roce_sock_put(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);
	struct socket *sock = NULL;

	mutex_lock(&sn->lock);
	if (sn->users && !--sn->users) {
		sock = sn->sock4;
		sn->sock4 = NULL;
	}
	mutex_unlock(&sn->lock);
	if (sock)
		udp_tunnel_sock_release(sock);
}

static int __net_init softrdma_net_init(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	mutex_init(&sn->lock);
	return 0;
}

static void __net_exit softrdma_net_exit(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	/* Devices here were unregistered with their netdevs. */
	if (sn->sock4)
		udp_tunnel_sock_release(sn->sock4);
	sn->sock4 = NULL;
}

static struct pernet_operations softrdma_net_ops = {
	.init = softrdma_net_init,
	.exit = softrdma_net_exit,
	.id = &softrdma_net_id,
	.size = sizeof(struct softrdma_net),
};

int softrdma_roce_init(void)
{
	return register_pernet_subsys(&softrdma_net_ops);
}

void softrdma_roce_exit(void)
{
	unregister_pernet_subsys(&softrdma_net_ops);
}

/*
 * ICRC (IBTA Annex A17.3.3): CRC32 over the packet from the IP header on,
 * with the fields routers may change masked to ones: IPv4 TOS, TTL and
 * checksum, the UDP checksum and BTH resv8a; the LRH it replaces counts as
 * 8 bytes of ones.
 */
u32 softrdma_icrc(const struct iphdr *iph, const struct udphdr *udph,
		  const u8 *bth, unsigned int len)
{
	u8 ph[sizeof(struct iphdr) + sizeof(struct udphdr) + SOFTRDMA_BTH_LEN];
	static const u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };
	struct iphdr *ip = (struct iphdr *)ph;
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	u8 *b = (u8 *)(udp + 1);
	u32 crc;

	memcpy(ip, iph, sizeof(*ip));
	memcpy(udp, udph, sizeof(*udp));
	memcpy(b, bth, SOFTRDMA_BTH_LEN);
	ip->tos = 0xff;
	ip->ttl = 0xff;
	ip->check = htons(0xffff);
	udp->check = htons(0xffff);
	b[4] = 0xff;

	crc = crc32_le(~0U, lrh, sizeof(lrh));
	crc = crc32_le(crc, ph, sizeof(ph));
	crc = crc32_le(crc, bth + SOFTRDMA_BTH_LEN, len - SOFTRDMA_BTH_LEN);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_icrc);

/**
 * softrdma_roce_alloc_skb - a packet with room for @len bytes of transport
 * @qp: the sending QP (route and device)
 * @len: BTH, extended headers, payload and pad, without the ICRC
 *
 * Return: an skb whose data is the transport part, or NULL.
 */
struct sk_buff *softrdma_roce_alloc_skb(struct softrdma_qp *qp,
					unsigned int len)
{
	struct net_device *ndev = qp->sdev->netdev;
	unsigned int hdr = LL_RESERVED_SPACE(ndev) + sizeof(struct iphdr) +
			   sizeof(struct udphdr);
	struct sk_buff *skb;

	skb = alloc_skb(hdr + len + SOFTRDMA_ICRC_LEN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, hdr);
	skb_put(skb, len);
	return skb;
}

/**
 * softrdma_roce_xmit - add UDP/IPv4 headers and the ICRC, send
 * @qp: the sending QP, whose address vector gives source and destination
 * @skb: from softrdma_roce_alloc_skb(), transport headers and payload in
 *
 * Consumes @skb. Return: 0 or a negative errno (the packet is then lost,
 * which the protocol recovers from like any loss).
 */
int softrdma_roce_xmit(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_qp_net *qn = &qp->net;
	struct net *net = dev_net(qp->sdev->netdev);
	unsigned int tlen = skb->len;
	struct flowi4 fl4 = {
		.daddr = qn->daddr4,
		.saddr = qn->saddr4,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_oif = qp->sdev->netdev->ifindex,
	};
	struct udphdr *udph;
	struct iphdr *iph;
	struct rtable *rt;
	__le32 icrc;
	u32 crc;

	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}
	skb_dst_set(skb, &rt->dst);

	udph = skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph->source = htons(qn->sport);
	udph->dest = htons(SOFTRDMA_ROCE_PORT);
	udph->len = htons(sizeof(*udph) + tlen + SOFTRDMA_ICRC_LEN);
	udph->check = 0;

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = qp->attrs.traffic_class;
	iph->tot_len = htons(skb->len + SOFTRDMA_ICRC_LEN);
	iph->id = 0;
	iph->frag_off = htons(IP_DF);
	iph->ttl = qp->attrs.hop_limit ? qp->attrs.hop_limit : 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl4.saddr;
	iph->daddr = fl4.daddr;
	iph->check = 0;

	crc = softrdma_icrc(iph, udph, (u8 *)(udph + 1), tlen);
	icrc = cpu_to_le32(crc);
	skb_put_data(skb, &icrc, sizeof(icrc));

	skb->protocol = htons(ETH_P_IP);
	skb->ip_summed = CHECKSUM_NONE;
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	softrdma_count(qp->sdev, SOFTRDMA_CNT_TX_PKTS);
	return ip_local_out(net, NULL, skb);
}

/* Check a received packet's ICRC. @skb->data is the BTH; linear. */
bool softrdma_roce_icrc_ok(struct sk_buff *skb)
{
	unsigned int tlen = skb->len - SOFTRDMA_ICRC_LEN;
	__le32 got;

	if (skb->protocol != htons(ETH_P_IP))
		return false;
	memcpy(&got, skb->data + tlen, sizeof(got));
	if (le32_to_cpu(got) != softrdma_icrc(ip_hdr(skb), udp_hdr(skb),
					      skb->data, tlen)) {
		softrdma_roce_count_drop(skb, SOFTRDMA_CNT_RX_ICRC_ERR);
		return false;
	}
	return true;
}
