// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast over RoCEv2 (IBTA Vol. 1 10.5, Annex A17.4.5): UD QPs attach
 * to groups named by a multicast GID, an IPv4 group as ::ffff:224.x.y.z
 * (what the RDMA CM makes of an IPv4 group on RoCEv2) or an IPv6 one
 * (ff..). Each device keeps its groups, each group its attached QPs.
 *
 * The first QP to attach joins the group at the IP level on the netdev
 * (ip_mc_inc_group() or ipv6_dev_mc_inc(), which also add the group's
 * MAC address, 01:00:5e:.. or 33:33:.., to the netdev's filter with
 * dev_mc_add()): the IP stack only takes a datagram to a group the host
 * is a member of on the interface it arrived on, and only then does it
 * loop a copy of what we send to the group back to this host, so the
 * device's own attached QPs get it too. The last QP to detach leaves.
 * The destination MAC of what we send follows from the group address in
 * the IP output path, as for any multicast datagram.
 *
 * A datagram for a group carries destination QP 0xFFFFFF; it is handed
 * to every QP attached to the group its destination address names, each
 * its own copy (ud.c checks each QP's Q_Key and takes a receive WQE of
 * it). A QP created with IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK does not
 * get the datagrams it sent itself. The receive path walks the lists
 * under RCU; attach and detach serialise on the device's mutex, which is
 * taken before the RTNL. A QP destroyed while attached is detached from
 * everything first.
 */
#include <linux/if_packet.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "softrdma.h"
#include "roce.h"

/* One group and the QPs attached to it. */
struct softrdma_mcg {
	struct list_head node;		/* in the device's mcgs (RCU) */
	union ib_gid mgid;
	struct list_head qps;		/* softrdma_mca (RCU) */
	u32 num_qps;
	struct rcu_head rcu;
};

/* One QP attached to one group. */
struct softrdma_mca {
	struct list_head node;		/* in its group's qps (RCU) */
	struct softrdma_qp *qp;
	struct rcu_head rcu;
};

void softrdma_mcast_init(struct softrdma_roce_dev *rdev)
{
	mutex_init(&rdev->mc_lock);
	INIT_LIST_HEAD(&rdev->mcgs);
}

/* The device's group of @mgid; mc_lock or rcu_read_lock held. */
static struct softrdma_mcg *softrdma_mcg_find(struct softrdma_roce_dev *rdev,
					      const union ib_gid *mgid)
{
	struct softrdma_mcg *mcg;

	list_for_each_entry_rcu(mcg, &rdev->mcgs, node,
				lockdep_is_held(&rdev->mc_lock))
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

/* Join the IP multicast group of @mgid on the netdev. */
static int softrdma_mcast_ip_join(struct softrdma_dev *sdev,
				  const union ib_gid *mgid)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct net_device *ndev = sdev->netdev;
	struct in_device *in_dev;
	int ret = -ENODEV;

	if (!ipv6_addr_v4mapped(a6))
		return ipv6_dev_mc_inc(ndev, a6);
	rtnl_lock();
	in_dev = __in_dev_get_rtnl(ndev);
	if (in_dev) {
		ip_mc_inc_group(in_dev, a6->s6_addr32[3]);
		ret = 0;
	}
	rtnl_unlock();
	return ret;
}

/* Leave it again (the netdev may have lost its IP state meanwhile). */
static void softrdma_mcast_ip_leave(struct softrdma_dev *sdev,
				    const union ib_gid *mgid)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct net_device *ndev = sdev->netdev;
	struct in_device *in_dev;

	if (!ipv6_addr_v4mapped(a6)) {
		ipv6_dev_mc_dec(ndev, a6);
		return;
	}
	rtnl_lock();
	in_dev = __in_dev_get_rtnl(ndev);
	if (in_dev)
		ip_mc_dec_group(in_dev, a6->s6_addr32[3]);
	rtnl_unlock();
}

/* Free @mcg once the last QP left it; mc_lock held. */
static void softrdma_mcg_put(struct softrdma_dev *sdev,
			     struct softrdma_mcg *mcg)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);

	if (mcg->num_qps)
		return;
	list_del_rcu(&mcg->node);
	rdev->num_mcgs--;
	softrdma_mcast_ip_leave(sdev, &mcg->mgid);
	kfree_rcu(mcg, rcu);
}

/* @qp's attachment to @mcg, if any; mc_lock held. */
static struct softrdma_mca *softrdma_mca_find(struct softrdma_roce_dev *rdev,
					      struct softrdma_mcg *mcg,
					      struct softrdma_qp *qp)
{
	struct softrdma_mca *mca;

	list_for_each_entry(mca, &mcg->qps, node)
		if (mca->qp == qp)
			return mca;
	return NULL;
}

/* A new group of @mgid, joined at the IP level; mc_lock held. */
static struct softrdma_mcg *softrdma_mcg_new(struct softrdma_dev *sdev,
					     const union ib_gid *mgid)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);
	struct softrdma_mcg *mcg;
	int ret;

	if (rdev->num_mcgs >= SOFTRDMA_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	INIT_LIST_HEAD(&mcg->qps);
	ret = softrdma_mcast_ip_join(sdev, mgid);
	if (ret) {
		kfree(mcg);
		return ERR_PTR(ret);
	}
	list_add_tail_rcu(&mcg->node, &rdev->mcgs);
	rdev->num_mcgs++;
	return mcg;
}

/**
 * softrdma_attach_mcast - the attach_mcast verb
 * @ibqp: a UD QP
 * @gid: the group, a multicast GID
 * @lid: unused on RoCE
 *
 * Return: 0 (also if the QP is attached already), -EINVAL for a QP that
 * is not UD or a GID that is not multicast, -ENOMEM past a limit
 * (max_mcast_grp, max_mcast_qp_attach, max_total_mcast_qp_attach).
 */
int softrdma_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softrdma_qp *qp = to_sqp(ibqp);
	struct softrdma_dev *sdev = qp->sdev;
	struct softrdma_roce_dev *rdev = to_rdev(sdev);
	struct softrdma_mcg *mcg;
	struct softrdma_mca *mca;
	int ret = 0;

	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	mca = kzalloc(sizeof(*mca), GFP_KERNEL);
	if (!mca)
		return -ENOMEM;
	mca->qp = qp;

	mutex_lock(&rdev->mc_lock);
	mcg = softrdma_mcg_find(rdev, gid);
	if (mcg && softrdma_mca_find(rdev, mcg, qp))
		goto out;
	if ((mcg && mcg->num_qps >= SOFTRDMA_MAX_MCAST_QP_ATTACH) ||
	    rdev->num_attached >= SOFTRDMA_MAX_MCAST_TOTAL_ATTACH) {
		ret = -ENOMEM;
		goto out;
	}
	if (!mcg) {
		mcg = softrdma_mcg_new(sdev, gid);
		if (IS_ERR(mcg)) {
			ret = PTR_ERR(mcg);
			goto out;
		}
	}
	list_add_tail_rcu(&mca->node, &mcg->qps);
	mcg->num_qps++;
	rdev->num_attached++;
	mca = NULL;
out:
	mutex_unlock(&rdev->mc_lock);
	kfree(mca);
	return ret;
}

/* Take @qp off @mcg if it is attached; mc_lock held. Return: was it? */
static bool softrdma_mcg_detach(struct softrdma_dev *sdev,
				struct softrdma_mcg *mcg,
				struct softrdma_qp *qp)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);
	struct softrdma_mca *mca = softrdma_mca_find(rdev, mcg, qp);

	if (!mca)
		return false;
	list_del_rcu(&mca->node);
	kfree_rcu(mca, rcu);
	mcg->num_qps--;
	rdev->num_attached--;
	softrdma_mcg_put(sdev, mcg);
	return true;
}

/* The detach_mcast verb. Return: 0, or -EINVAL if @ibqp is not attached. */
int softrdma_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softrdma_qp *qp = to_sqp(ibqp);
	struct softrdma_roce_dev *rdev = to_rdev(qp->sdev);
	struct softrdma_mcg *mcg;
	int ret = -EINVAL;

	mutex_lock(&rdev->mc_lock);
	mcg = softrdma_mcg_find(rdev, gid);
	if (mcg && softrdma_mcg_detach(qp->sdev, mcg, qp))
		ret = 0;
	mutex_unlock(&rdev->mc_lock);
	return ret;
}

/*
 * @qp is being destroyed: detach it from every group. The caller waits
 * for an RCU grace period before it drops its reference, so a packet
 * that found the QP on a list holds a reference or is gone by then.
 */
void softrdma_mcast_qp_gone(struct softrdma_qp *qp)
{
	struct softrdma_roce_dev *rdev = to_rdev(qp->sdev);
	struct softrdma_mcg *mcg, *next;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&rdev->mc_lock);
	list_for_each_entry_safe(mcg, next, &rdev->mcgs, node)
		softrdma_mcg_detach(qp->sdev, mcg, qp);
	mutex_unlock(&rdev->mc_lock);
}

/* The device goes: its QPs, and so its groups, are gone already. */
void softrdma_mcast_exit(struct softrdma_dev *sdev)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);

	WARN_ON(!list_empty(&rdev->mcgs));
	mutex_destroy(&rdev->mc_lock);
}

/*
 * Does @qp refuse @skb? A QP created with BLOCK_MULTICAST_LOOPBACK does
 * not take what it sent itself: a datagram the IP stack looped back on
 * this device (QP numbers are the device's) from its own QP number.
 */
static bool softrdma_mcast_blocked(struct softrdma_qp *qp, struct sk_buff *skb)
{
	struct softrdma_deth deth;

	if (!(qp->create_flags & IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) ||
	    skb->pkt_type != PACKET_LOOPBACK ||
	    skb->len < SOFTRDMA_BTH_LEN + SOFTRDMA_DETH_LEN)
		return false;
	memcpy(&deth, skb->data + SOFTRDMA_BTH_LEN, sizeof(deth));
	return softrdma_deth_sqpn(&deth) == qp->ibqp.qp_num;
}

/**
 * softrdma_mcast_rcv - a datagram for a multicast group
 * @sdev: the device it arrived on
 * @skb: the packet, checked (ICRC), data at the BTH; the caller frees it
 *
 * Handed to every QP attached to the group its destination address names;
 * each takes it or drops it as ud.c decides. Call under rcu_read_lock().
 */
void softrdma_mcast_rcv(struct softrdma_dev *sdev, struct sk_buff *skb)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);
	struct softrdma_mcg *mcg = NULL;
	struct softrdma_mca *mca;
	union ib_gid dgid;
	bool any = false;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid.raw);
	else
		memcpy(dgid.raw, &ipv6_hdr(skb)->daddr, sizeof(dgid));
	if (rdma_is_multicast_addr((struct in6_addr *)dgid.raw))
		mcg = softrdma_mcg_find(rdev, &dgid);
	if (mcg) {
		list_for_each_entry_rcu(mca, &mcg->qps, node) {
			struct softrdma_qp *qp = mca->qp;

			if (softrdma_mcast_blocked(qp, skb) ||
			    !refcount_inc_not_zero(&qp->refs))
				continue;
			spin_lock_bh(&qp->lock);
			softrdma_ud_rcv(qp, skb);
			spin_unlock_bh(&qp->lock);
			softrdma_qp_put(qp);
			any = true;
		}
	}
	softrdma_count(sdev, any ? SOFTRDMA_CNT_RX_PKTS :
				   SOFTRDMA_CNT_RX_MCAST_DROPS);
}
