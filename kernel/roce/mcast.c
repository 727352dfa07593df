// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast over RoCEv2 (IBTA Vol. 1 10.5, Annex A17.4.5): UD QPs attach
 * to groups named by a multicast GID, an IPv4 group as ::ffff:224.x.y.z
 * or an IPv6 one (ff..). Each device keeps its groups, each group its
 * attached QPs. The first QP to attach joins the group on the netdev at
 * the IP level (which also programs the NIC's multicast MAC filter), so
 * the group's datagrams reach our UDP socket, and the IP stack loops a
 * copy of what we send to a group back to this host; the last QP to
 * detach leaves it.
 *
 * A datagram for a group carries destination QP 0xFFFFFF; it is handed
 * to every QP attached to the group its destination address names, and
 * each QP checks its own Q_Key (ud.c). The receive path walks the lists
 * under RCU; attach and detach serialise on the device's mutex. A QP
 * destroyed while attached is detached from everything first.
 */
#include <linux/inetdevice.h>
#include <linux/igmp.h>
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

/* Join (@join) or leave the IP multicast group of @mgid on the netdev. */
static void softrdma_mcast_ip(struct softrdma_dev *sdev,
			      const union ib_gid *mgid, bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct net_device *ndev = sdev->netdev;
	struct in_device *in_dev;
	__be32 a4;

	if (!ipv6_addr_v4mapped(a6)) {
		if (join)
			ipv6_dev_mc_inc(ndev, a6);
		else
			ipv6_dev_mc_dec(ndev, a6);
		return;
	}
	a4 = a6->s6_addr32[3];
	rtnl_lock();
	in_dev = __in_dev_get_rtnl(ndev);
	if (in_dev) {
		if (join)
			ip_mc_inc_group(in_dev, a4);
		else
			ip_mc_dec_group(in_dev, a4);
	}
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
	softrdma_mcast_ip(sdev, &mcg->mgid, false);
	kfree_rcu(mcg, rcu);
}

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
	if (mcg) {
		struct softrdma_mca *m;

		/* Attached already: nothing to do (as other HCAs answer). */
		list_for_each_entry(m, &mcg->qps, node)
			if (m->qp == qp)
				goto out;
		if (mcg->num_qps >= SOFTRDMA_MAX_MCAST_QP_ATTACH) {
			ret = -ENOMEM;
			goto out;
		}
	} else {
		if (rdev->num_mcgs >= SOFTRDMA_MAX_MCAST_GRP) {
			ret = -ENOMEM;
			goto out;
		}
		mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
		if (!mcg) {
			ret = -ENOMEM;
			goto out;
		}
		mcg->mgid = *gid;
		INIT_LIST_HEAD(&mcg->qps);
		softrdma_mcast_ip(sdev, gid, true);
		list_add_tail_rcu(&mcg->node, &rdev->mcgs);
		rdev->num_mcgs++;
	}
	list_add_tail_rcu(&mca->node, &mcg->qps);
	mcg->num_qps++;
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
	struct softrdma_mca *mca;

	list_for_each_entry(mca, &mcg->qps, node) {
		if (mca->qp != qp)
			continue;
		list_del_rcu(&mca->node);
		kfree_rcu(mca, rcu);
		mcg->num_qps--;
		softrdma_mcg_put(sdev, mcg);
		return true;
	}
	return false;
}

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
 * for an RCU grace period before the QP goes, so no packet still finds
 * it on a list.
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

/* The device goes: every group left (its QPs are gone already). */
void softrdma_mcast_exit(struct softrdma_dev *sdev)
{
	struct softrdma_roce_dev *rdev = to_rdev(sdev);
	struct softrdma_mcg *mcg, *next;
	struct softrdma_mca *mca, *mnext;

	mutex_lock(&rdev->mc_lock);
	WARN_ON(!list_empty(&rdev->mcgs));
	list_for_each_entry_safe(mcg, next, &rdev->mcgs, node) {
		list_for_each_entry_safe(mca, mnext, &mcg->qps, node) {
			list_del_rcu(&mca->node);
			kfree_rcu(mca, rcu);
		}
		mcg->num_qps = 0;
		softrdma_mcg_put(sdev, mcg);
	}
	mutex_unlock(&rdev->mc_lock);
	mutex_destroy(&rdev->mc_lock);
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
	struct softrdma_mcg *mcg;
	struct softrdma_mca *mca;
	union ib_gid dgid;
	bool any = false;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid.raw);
	else
		memcpy(dgid.raw, &ipv6_hdr(skb)->daddr, sizeof(dgid));
	mcg = rdma_is_multicast_addr((struct in6_addr *)dgid.raw) ?
	      softrdma_mcg_find(rdev, &dgid) : NULL;
	if (mcg) {
		list_for_each_entry_rcu(mca, &mcg->qps, node) {
			struct softrdma_qp *qp = mca->qp;

			if (!refcount_inc_not_zero(&qp->refs))
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
