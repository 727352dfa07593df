// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 encapsulation: one UDP port 4791 socket per network namespace
 * that has a softroce device and address family, IPv4 and IPv6 transmit
 * and receive, and the loop for packets to the namespace's own addresses.
 * The ICRC is icrc.c's.
 */
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "softrdma.h"
#include "roce.h"

struct softrdma_net {
	struct mutex lock;		/* socks and users */
	struct socket *sock4;
	struct socket *sock6;
	int users;
	struct sk_buff_head loop;	/* to our own addresses: loop_bh */
	struct tasklet_struct loop_bh;
};

/* Our sockets' receive buffer: trains queue there only while read. */
#define SOFTRDMA_ROCE_RCVBUF	(4 << 20)
/* Looped packets waiting for their tasklet; more are dropped. */
#define SOFTRDMA_LOOP_QLEN	1024
/* Looped packets one run of the tasklet delivers (an skb's npkts each). */
#define SOFTRDMA_LOOP_BUDGET	64

static unsigned int softrdma_net_id;

/**
 * softrdma_roce_rx_dev - the softroce device a received packet is for
 * @skb: a packet from our UDP sockets
 *
 * That of the netdev it came in on, except for loopback to one of our
 * own addresses, which arrives on lo: then that of the owner of the
 * destination address. Call under rcu_read_lock(). Return: the device,
 * or NULL.
 */
struct softrdma_dev *softrdma_roce_rx_dev(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;

	if (ndev && (ndev->flags & IFF_LOOPBACK)) {
		if (skb->protocol == htons(ETH_P_IPV6))
			ndev = ipv6_dev_find(dev_net(ndev),
					     &ipv6_hdr(skb)->daddr, NULL);
		else
			ndev = __ip_dev_find(dev_net(ndev), ip_hdr(skb)->daddr,
					     false);
	}
	return ndev ? softrdma_dev_by_netdev(ndev, &softrdma_roce_transport) :
		      NULL;
}

/* Count a packet dropped before its QP is known against its device. */
void softrdma_roce_count_drop(struct sk_buff *skb, enum softrdma_counter c)
{
	struct softrdma_dev *sdev;

	rcu_read_lock();
	sdev = softrdma_roce_rx_dev(skb);
	if (sdev)
		softrdma_count(sdev, c);
	rcu_read_unlock();
}

/*
 * A datagram from our socket's queue: UDP has checked its length, pulled
 * its header and kept its own notes where the device was (dev_scratch).
 */
static void softrdma_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	skb->dev = dev_get_by_index_rcu(sock_net(sk), skb->skb_iif);
	if (!skb->dev) {
		kfree_skb(skb);
		return;
	}
	/* UDP leaves the checksum to whoever reads the datagram. */
	if (!skb_csum_unnecessary(skb) && __skb_checksum_complete(skb)) {
		softrdma_roce_count_drop(skb, SOFTRDMA_CNT_RX_MALFORMED);
		kfree_skb(skb);
		return;
	}
	__skb_push(skb, sizeof(struct udphdr));
	/* Too short for a BTH and an ICRC: not RoCE. */
	if (skb->len < sizeof(struct udphdr) + SOFTRDMA_BTH_LEN +
	    SOFTRDMA_ICRC_LEN) {
		softrdma_roce_count_drop(skb, SOFTRDMA_CNT_RX_MALFORMED);
		kfree_skb(skb);
		return;
	}
	if (skb_is_gso(skb))
		softrdma_rx_train(sk, skb);
	else
		softrdma_rx_dispatch(skb, false);
}

/*
 * Our socket's data_ready, as UDP queues a datagram (softirq): take what
 * is queued, a peer's train whole (a UDP GSO skb no one cut on its way,
 * as over a veth) or a packet.
 */
static void softrdma_udp_data_ready(struct sock *sk)
{
	struct sk_buff *skb;
	int err;

	rcu_read_lock();
	while ((skb = skb_recv_udp(sk, MSG_DONTWAIT, &err)))
		softrdma_udp_rcv(sk, skb);
	rcu_read_unlock();
}

/* Deliver what softrdma_roce_loop() queued, in order. */
static void softrdma_roce_loop_bh(struct tasklet_struct *t)
{
	struct softrdma_net *sn = from_tasklet(sn, t, loop_bh);
	struct sk_buff *skb;
	int budget = SOFTRDMA_LOOP_BUDGET;

	while (budget > 0 && (skb = skb_dequeue(&sn->loop))) {
		budget -= SOFTRDMA_ROCE_CB(skb)->npkts;
		softrdma_rx_dispatch(skb, true);
	}
	if (!skb_queue_empty(&sn->loop))
		tasklet_schedule(&sn->loop_bh);
}

/*
 * Our UDP port 4791 socket of @family in @net, or an error pointer. A
 * plain socket read from its data_ready, not a tunnel's encap_rcv: since
 * 6.8 UDP cuts every GSO skb bound for an encap_rcv (udp_unexpected_gso())
 * that does not say it is a tunnel's, and this one takes trains whole
 * (udp_allow_gso()). With no checksum conversion (a tunnel's inner
 * packets want it; RoCE has none), a train keeps its CHECKSUM_PARTIAL.
 */
static struct socket *softrdma_roce_sock_create(struct net *net, int family)
{
	/*
	 * IPv6 only, so IPv4 packets keep coming to the IPv4 socket. The
	 * UDP checksum is optional for tunnels over IPv6 (RFC 6935):
	 * packets without one are accepted, ours carry one.
	 */
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(SOFTRDMA_ROCE_PORT),
		.ipv6_v6only = 1,
	};
	struct socket *sock;
	struct sock *sk;
	int ret;

	ret = udp_sock_create(net, &cfg, &sock);
	if (ret) {
		if (ret == -EADDRINUSE)
			pr_warn("softrdma: UDP port %u is taken in this network namespace (is rdma_rxe loaded here?)\n",
				SOFTRDMA_ROCE_PORT);
		return ERR_PTR(ret);
	}
	sk = sock->sk;
	udp_allow_gso(sk);
	/* Read as it comes; room for trains from every CPU meanwhile. */
	sock_set_rcvbuf(sk, SOFTRDMA_ROCE_RCVBUF);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = softrdma_udp_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	return sock;
}

/*
 * Close one of our sockets. Its data_ready may still run where UDP found
 * it before (RCU): softrdma_roce_exit() waits for those.
 */
static void softrdma_roce_sock_close(struct socket *sock)
{
	kernel_sock_shutdown(sock, SHUT_RDWR);
	sock_release(sock);
}

/**
 * softrdma_roce_sock_get - make sure @net has our UDP sockets
 * @net: the network namespace of a new softroce device
 *
 * One socket for IPv4 and one for IPv6, both on port 4791.
 *
 * Return: 0, or -EADDRINUSE if another owner (rdma_rxe) holds the port.
 */
static int softrdma_roce_sock_get(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);
	struct socket *sock4, *sock6;
	int ret = 0;

	mutex_lock(&sn->lock);
	if (sn->users)
		goto out;
	sock4 = softrdma_roce_sock_create(net, AF_INET);
	if (IS_ERR(sock4)) {
		ret = PTR_ERR(sock4);
		goto out;
	}
	sock6 = softrdma_roce_sock_create(net, AF_INET6);
	if (IS_ERR(sock6)) {
		softrdma_roce_sock_close(sock4);
		ret = PTR_ERR(sock6);
		goto out;
	}
	sn->sock4 = sock4;
	sn->sock6 = sock6;
out:
	if (!ret)
		sn->users++;
	mutex_unlock(&sn->lock);
	return ret;
}

/* Close @sn's sockets; sn->lock held. */
static void softrdma_roce_sock_release(struct softrdma_net *sn)
{
	struct socket *sock4 = sn->sock4, *sock6 = sn->sock6;

	sn->sock4 = NULL;
	sn->sock6 = NULL;
	if (sock4)
		softrdma_roce_sock_close(sock4);
	if (sock6)
		softrdma_roce_sock_close(sock6);
}

static void softrdma_roce_sock_put(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	mutex_lock(&sn->lock);
	if (sn->users && !--sn->users)
		softrdma_roce_sock_release(sn);
	mutex_unlock(&sn->lock);
}

/*
 * A new softroce device holds the UDP sockets of its netdev's namespace,
 * remembered in its transport_priv (the netdev may move on), and keeps
 * its multicast groups there.
 */
int softrdma_roce_dev_init(struct softrdma_dev *sdev)
{
	struct net *net = dev_net(sdev->netdev);
	struct softrdma_roce_dev *rdev;
	int ret;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	ret = softrdma_roce_sock_get(net);
	if (ret) {
		kfree(rdev);
		return ret;
	}
	rdev->net = net;
	softrdma_mcast_init(rdev);
	sdev->transport_priv = rdev;
	return 0;
}

void softrdma_roce_dev_exit(struct softrdma_dev *sdev)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);

	if (!rdev)
		return;
	softrdma_mcast_exit(sdev);
	softrdma_roce_sock_put(rdev->net);
	kfree(rdev);
	sdev->transport_priv = NULL;
}

static int __net_init softrdma_net_init(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	mutex_init(&sn->lock);
	skb_queue_head_init(&sn->loop);
	tasklet_setup(&sn->loop_bh, softrdma_roce_loop_bh);
	return 0;
}

static void __net_exit softrdma_net_exit(struct net *net)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	/* Devices here were unregistered with their netdevs. */
	mutex_lock(&sn->lock);
	softrdma_roce_sock_release(sn);
	mutex_unlock(&sn->lock);
	mutex_destroy(&sn->lock);
	tasklet_kill(&sn->loop_bh);
	skb_queue_purge(&sn->loop);
}

static struct pernet_operations softrdma_net_ops = {
	.init = softrdma_net_init,
	.exit = softrdma_net_exit,
	.id = &softrdma_net_id,
	.size = sizeof(struct softrdma_net),
};

/* A page of zeroes for the pad and ICRC room of bursts by reference. */
static struct page *softrdma_roce_zeroes;

/*
 * Pages for trains, kept for the next train once the skbs of the last one
 * are gone (the page's count is our reference alone): no allocation and
 * no zeroing (init_on_alloc) a train. Eight a CPU of each size: [0] one
 * page (a train by reference's headers, a short train), [1] one that
 * takes SOFTRDMA_TRAIN_MAX_BYTES.
 */
#define SOFTRDMA_TRAIN_PAGES	8
#define SOFTRDMA_TRAIN_ORDER	get_order(SOFTRDMA_TRAIN_MAX_BYTES)

struct softrdma_train_pages {
	struct page *page[SOFTRDMA_TRAIN_PAGES];
};

static DEFINE_PER_CPU(struct softrdma_train_pages[2], softrdma_train_pages);

/**
 * softrdma_roce_train_page - a page for a train, with a reference
 * @order: 0, or at most SOFTRDMA_TRAIN_ORDER (given that order)
 *
 * Its content is what its last train left there.
 *
 * Return: the page, or NULL (no memory now).
 */
struct page *softrdma_roce_train_page(unsigned int order)
{
	struct softrdma_train_pages *tp;
	struct page *page, **empty = NULL;
	unsigned int i;

	if (order)
		order = SOFTRDMA_TRAIN_ORDER;
	local_bh_disable();
	tp = this_cpu_ptr(&softrdma_train_pages[!!order]);
	for (i = 0; i < SOFTRDMA_TRAIN_PAGES; i++) {
		page = tp->page[i];
		if (!page) {
			empty = empty ?: &tp->page[i];
		} else if (page_ref_count(page) == 1) {
			get_page(page);
			goto out;
		}
	}
	page = alloc_pages(GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN, order);
	if (page && empty) {
		get_page(page);
		*empty = page;
	}
out:
	local_bh_enable();
	return page;
}

static void softrdma_roce_train_pages_free(void)
{
	struct softrdma_train_pages *tp;
	unsigned int cpu, i, j;

	for_each_possible_cpu(cpu) {
		tp = per_cpu(softrdma_train_pages, cpu);
		for (i = 0; i < 2; i++)
			for (j = 0; j < SOFTRDMA_TRAIN_PAGES; j++)
				if (tp[i].page[j])
					put_page(tp[i].page[j]);
	}
}

int softrdma_roce_init(void)
{
	int err;

	softrdma_roce_zeroes = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!softrdma_roce_zeroes)
		return -ENOMEM;
	err = register_pernet_subsys(&softrdma_net_ops);
	if (err)
		put_page(softrdma_roce_zeroes);
	return err;
}

void softrdma_roce_exit(void)
{
	unregister_pernet_subsys(&softrdma_net_ops);
	/* Our sockets' data_ready calls that had begun are over. */
	synchronize_net();
	put_page(softrdma_roce_zeroes);
	softrdma_roce_train_pages_free();
}

/**
 * softrdma_roce_add_zeroes - @len zero bytes after @skb's last piece
 * @skb: a burst whose payload is in pieces (req.c), with a piece to spare
 * @len: a pad, an ICRC's room, or both (less than a page)
 */
void softrdma_roce_add_zeroes(struct sk_buff *skb, u32 len)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	skb_frag_t *last = sh->nr_frags ? &sh->frags[sh->nr_frags - 1] : NULL;

	if (last && skb_frag_page(last) == softrdma_roce_zeroes &&
	    skb_frag_off(last) + skb_frag_size(last) + len <= PAGE_SIZE) {
		skb_frag_size_add(last, len);
		skb->len += len;
		skb->data_len += len;
		skb->truesize += len;
		return;
	}
	get_page(softrdma_roce_zeroes);
	skb_add_rx_frag(skb, sh->nr_frags, softrdma_roce_zeroes, 0, len, len);
}

static struct sk_buff *softrdma_roce_alloc(struct softrdma_qp *qp,
					   unsigned int len, gfp_t gfp)
{
	struct net_device *ndev = qp->sdev->netdev;
	/* Room for either IP version: a UD QP's packets may take both. */
	unsigned int hdr = LL_RESERVED_SPACE(ndev) + sizeof(struct udphdr) +
			   sizeof(struct ipv6hdr);
	struct sk_buff *skb;

	skb = alloc_skb(hdr + len + SOFTRDMA_ICRC_LEN, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, hdr);
	skb_put(skb, len);
	SOFTRDMA_ROCE_CB(skb)->npkts = 1;
	SOFTRDMA_ROCE_CB(skb)->seg = 0;
	SOFTRDMA_ROCE_CB(skb)->icrc_done = false;
	return skb;
}

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
	struct sk_buff *skb = softrdma_roce_alloc(qp, len, GFP_ATOMIC);

	if (!skb)
		softrdma_count(qp->sdev, SOFTRDMA_CNT_TX_ERRORS);
	return skb;
}

/**
 * softrdma_roce_alloc_train - an skb for a train (struct softrdma_roce_cb)
 * @qp: the sending QP
 * @len: its packets from the first BTH on, but the last one's ICRC
 *
 * They go in one piece of contiguous memory (softrdma_roce_train_data()),
 * with room for that ICRC: cut from the train, each packet then takes
 * its part of it by reference, not copied.
 *
 * Return: the skb, or NULL: no memory for one this large now (its
 * packets go alone).
 */
struct sk_buff *softrdma_roce_alloc_train(struct softrdma_qp *qp,
					  unsigned int len)
{
	struct sk_buff *skb;
	struct page *page;

	page = softrdma_roce_train_page(get_order(len + SOFTRDMA_ICRC_LEN));
	if (!page)
		return NULL;
	skb = softrdma_roce_alloc(qp, 0, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb) {
		put_page(page);
		return NULL;
	}
	skb_add_rx_frag(skb, 0, page, 0, len, page_size(page));
	return skb;
}

/* The first BTH of a train from softrdma_roce_alloc_train(). */
u8 *softrdma_roce_train_data(struct sk_buff *skb)
{
	return skb_frag_address(&skb_shinfo(skb)->frags[0]);
}

/* Push the UDP header in front of the transport part (@tlen bytes). */
static struct udphdr *softrdma_roce_push_udp(const struct softrdma_roce_net *qn,
					     struct sk_buff *skb,
					     unsigned int tlen)
{
	struct udphdr *udph = skb_push(skb, sizeof(*udph));

	skb_reset_transport_header(skb);
	udph->source = htons(qn->sport);
	udph->dest = htons(SOFTRDMA_ROCE_PORT);
	udph->len = htons(sizeof(*udph) + tlen + SOFTRDMA_ICRC_LEN);
	udph->check = 0;
	return udph;
}

static void softrdma_roce_put_icrc(struct sk_buff *skb, u32 crc)
{
	__le32 icrc = cpu_to_le32(crc);

	/* A burst by reference, on the loop only: the room, no CRC. */
	if (skb_is_nonlinear(skb))
		softrdma_roce_add_zeroes(skb, sizeof(icrc));
	else
		skb_put_data(skb, &icrc, sizeof(icrc));
}

/*
 * The route of @fl4 (or @fl6 below): from @cache when it holds one still
 * valid, else looked up and kept there. @cache is the QP's own, for its
 * address vector, or NULL (a UD WQE's address handle). BHs are off.
 */
static struct rtable *softrdma_roce_route4(struct net *net,
					   struct dst_cache *cache,
					   struct flowi4 *fl4)
{
	struct rtable *rt;
	__be32 saddr;

	if (cache) {
		rt = dst_cache_get_ip4(cache, &saddr);
		if (rt)
			return rt;
	}
	rt = ip_route_output_key(net, fl4);
	if (cache && !IS_ERR(rt))
		dst_cache_set_ip4(cache, &rt->dst, fl4->saddr);
	return rt;
}

static struct dst_entry *softrdma_roce_route6(struct net *net,
					      struct dst_cache *cache,
					      struct flowi6 *fl6)
{
	struct dst_entry *dst;

	if (cache) {
		dst = dst_cache_get(cache);
		if (dst)
			return dst;
	}
	dst = ip6_route_output(net, NULL, fl6);
	if (cache && !dst->error)
		dst_cache_set_ip6(cache, dst, &fl6->saddr);
	return dst;
}

/*
 * Does a packet to @net's own address take the loop? Only while our socket
 * of the family is there, which is where IP would deliver it anyway.
 */
static bool softrdma_roce_may_loop(struct net *net, bool ipv6)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	return ipv6 ? READ_ONCE(sn->sock6) : READ_ONCE(sn->sock4);
}

/*
 * A packet to one of @net's own addresses, headers built: rather than
 * through IP, lo and UDP to our own socket, straight to the receive side,
 * from a tasklet (the sender holds its QP's lock, which the answer may
 * need). It is on no wire, so it carries no ICRC (nor UDP checksum), and
 * it may stand for several packets of a message (struct softrdma_roce_cb):
 * the QP's next one may, once this one took the loop.
 * Consumes @skb. Return: 0, or -ENOBUFS when too many wait (lost).
 */
static int softrdma_roce_loop(struct softrdma_qp *qp, struct net *net,
			      struct sk_buff *skb)
{
	struct softrdma_net *sn = net_generic(net, softrdma_net_id);

	/* Built for a wire: the requester builds its packets again. */
	if (SOFTRDMA_ROCE_CB(skb)->seg) {
		to_rqp(qp)->req.looped = true;
		kfree_skb(skb);
		return -EAGAIN;
	}
	softrdma_roce_put_icrc(skb, 0);	/* the room it takes, no CRC */
	if (skb_queue_len_lockless(&sn->loop) >= SOFTRDMA_LOOP_QLEN) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_TX_ERRORS);
		kfree_skb(skb);
		return -ENOBUFS;
	}
	skb_dst_drop(skb);
	/* As lo delivers it: the owner of the address is the device. */
	skb->dev = net->loopback_dev;
	__skb_pull(skb, skb_transport_offset(skb));
	softrdma_count_add(qp->sdev, SOFTRDMA_CNT_TX_PKTS,
			   SOFTRDMA_ROCE_CB(skb)->npkts);
	softrdma_count_add(qp->sdev, SOFTRDMA_CNT_LOOP_MERGED,
			   SOFTRDMA_ROCE_CB(skb)->npkts - 1);
	to_rqp(qp)->req.looped = true;
	skb_queue_tail(&sn->loop, skb);
	tasklet_schedule(&sn->loop_bh);
	return 0;
}

/*
 * A packet about to go on a wire: the QP's next ones are built one packet
 * each. One built for the loop (several packets) cannot go: the route
 * changed under it. Return: false if @skb was such a one (freed: the
 * requester builds its packets again).
 */
static bool softrdma_roce_wire_ok(struct softrdma_qp *qp, struct sk_buff *skb)
{
	to_rqp(qp)->req.looped = false;
	if (SOFTRDMA_ROCE_CB(skb)->npkts == 1 || SOFTRDMA_ROCE_CB(skb)->seg)
		return true;
	kfree_skb(skb);
	return false;
}

/*
 * Hand a train to GSO: cut at every @seg bytes of UDP payload, each piece
 * a datagram with its own UDP and IP headers and checksum.
 */
static void softrdma_roce_gso_set(struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);

	sh->gso_size = SOFTRDMA_ROCE_CB(skb)->seg;
	sh->gso_segs = SOFTRDMA_ROCE_CB(skb)->npkts;
	sh->gso_type = SKB_GSO_UDP_L4;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
}

/* Count the packets @skb carries to a wire (a train's in one skb). */
static void softrdma_roce_count_tx(struct softrdma_qp *qp, struct sk_buff *skb)
{
	u32 n = SOFTRDMA_ROCE_CB(skb)->npkts;

	softrdma_count_add(qp->sdev, SOFTRDMA_CNT_TX_PKTS, n);
	softrdma_count_add(qp->sdev, SOFTRDMA_CNT_GSO_MERGED, n - 1);
}

static int softrdma_roce_xmit4(struct softrdma_qp *qp, struct sk_buff *skb,
			       const struct softrdma_roce_net *qn,
			       struct dst_cache *cache)
{
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
	bool loop;

	rt = softrdma_roce_route4(net, cache, &fl4);
	if (IS_ERR(rt)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_TX_ERRORS);
		kfree_skb(skb);
		return PTR_ERR(rt);
	}
	loop = rt->rt_type == RTN_LOCAL && softrdma_roce_may_loop(net, false);
	skb_dst_set(skb, &rt->dst);

	udph = softrdma_roce_push_udp(qn, skb, tlen);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = softrdma_cc_tos(qp, qn, (struct softrdma_bth *)(udph + 1));
	iph->tot_len = htons(skb->len + SOFTRDMA_ICRC_LEN);
	iph->id = 0;
	iph->frag_off = htons(IP_DF);
	iph->ttl = qn->hop_limit ? qn->hop_limit : 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl4.saddr;
	iph->daddr = fl4.daddr;
	iph->check = 0;

	skb->protocol = htons(ETH_P_IP);
	if (loop)
		return softrdma_roce_loop(qp, net, skb);
	if (!softrdma_roce_wire_ok(qp, skb))
		return -EAGAIN;
	if (SOFTRDMA_ROCE_CB(skb)->seg) {
		/* Summed for the source address the route was to keep. */
		if (SOFTRDMA_ROCE_CB(skb)->icrc_done && fl4.saddr == qn->saddr4)
			softrdma_roce_train_close(skb);
		else
			softrdma_roce_train_icrc(skb, iph, NULL, udph, tlen);
		udph->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr,
						 ntohs(udph->len),
						 IPPROTO_UDP, 0);
		softrdma_roce_gso_set(skb);
	} else {
		softrdma_roce_put_icrc(skb, softrdma_icrc(iph, udph,
							  (u8 *)(udph + 1),
							  tlen));
		skb->ip_summed = CHECKSUM_NONE;
	}
	softrdma_roce_count_tx(qp, skb);	/* the cb is IP's from here */
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return ip_local_out(net, NULL, skb);
}

static int softrdma_roce_xmit6(struct softrdma_qp *qp, struct sk_buff *skb,
			       const struct softrdma_roce_net *qn,
			       struct dst_cache *cache)
{
	struct net *net = dev_net(qp->sdev->netdev);
	unsigned int tlen = skb->len, ulen;
	struct flowi6 fl6 = {
		.daddr = qn->daddr6,
		.saddr = qn->saddr6,
		.flowi6_proto = IPPROTO_UDP,
		.flowi6_oif = qp->sdev->netdev->ifindex,
	};
	struct ipv6hdr *ip6h;
	struct udphdr *udph;
	struct dst_entry *dst;
	bool loop;
	int ret;

	dst = softrdma_roce_route6(net, cache, &fl6);
	if (dst->error) {
		ret = dst->error;
		dst_release(dst);
		softrdma_count(qp->sdev, SOFTRDMA_CNT_TX_ERRORS);
		kfree_skb(skb);
		return ret;
	}
	loop = (container_of(dst, struct rt6_info, dst)->rt6i_flags &
		RTF_LOCAL) &&
	       softrdma_roce_may_loop(net, true);
	skb_dst_set(skb, dst);

	udph = softrdma_roce_push_udp(qn, skb, tlen);
	ulen = skb->len + SOFTRDMA_ICRC_LEN;
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, softrdma_cc_tos(qp, qn, (struct softrdma_bth *)(udph + 1)),
		     htonl(qn->flow_label & 0xfffff));
	ip6h->payload_len = htons(ulen);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = qn->hop_limit ? qn->hop_limit : 64;
	ip6h->saddr = qn->saddr6;
	ip6h->daddr = qn->daddr6;

	skb->protocol = htons(ETH_P_IPV6);
	if (loop)
		return softrdma_roce_loop(qp, net, skb);
	if (!softrdma_roce_wire_ok(qp, skb))
		return -EAGAIN;
	/* UDP over IPv6 carries a checksum; the ICRC does not cover it. */
	if (SOFTRDMA_ROCE_CB(skb)->seg) {
		if (SOFTRDMA_ROCE_CB(skb)->icrc_done)
			softrdma_roce_train_close(skb);
		else
			softrdma_roce_train_icrc(skb, NULL, ip6h, udph, tlen);
		udph->check = ~csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr,
					       ulen, IPPROTO_UDP, 0);
		softrdma_roce_gso_set(skb);
	} else {
		softrdma_roce_put_icrc(skb, softrdma_icrc6(ip6h, udph,
							   (u8 *)(udph + 1),
							   tlen));
		udph->check = csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, ulen,
					      IPPROTO_UDP,
					      skb_checksum(skb,
							   skb_transport_offset(skb),
							   ulen, 0));
		if (!udph->check)
			udph->check = CSUM_MANGLED_0;
		skb->ip_summed = CHECKSUM_NONE;
	}
	softrdma_roce_count_tx(qp, skb);	/* the cb is IP's from here */
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	return ip6_local_out(net, NULL, skb);
}

/**
 * softrdma_roce_xmit - add UDP/IP headers and the ICRC, send
 * @qp: the sending QP, whose address vector gives source and destination
 * @skb: from softrdma_roce_alloc_skb(), transport headers and payload in
 *
 * Consumes @skb. Return: 0 or a negative errno (the packet is then lost,
 * which the protocol recovers from like any loss); -EAGAIN: nothing was
 * sent, @skb was built for the loop and the route no longer takes it
 * (build its packets again, one each).
 */
int softrdma_roce_xmit(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (rqp->net.ipv6)
		return softrdma_roce_xmit6(qp, skb, &rqp->net, &rqp->dst_cache);
	return softrdma_roce_xmit4(qp, skb, &rqp->net, &rqp->dst_cache);
}

/* As softrdma_roce_xmit(), to the route @qn (a UD WQE's address handle). */
int softrdma_roce_xmit_to(struct softrdma_qp *qp, struct sk_buff *skb,
			  const struct softrdma_roce_net *qn)
{
	if (qn->ipv6)
		return softrdma_roce_xmit6(qp, skb, qn, NULL);
	return softrdma_roce_xmit4(qp, skb, qn, NULL);
}

