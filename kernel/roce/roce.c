// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 device specifics and the transport descriptor the core reaches
 * softroce through. GIDs are derived by the RDMA core from the
 * netdev's IPv4 and IPv6 addresses (RoCE GID management) and kept in step
 * as addresses come and go; the device only declares RoCEv2 encapsulation.
 */
#include <linux/hash.h>
#include <linux/moduleparam.h>
#include <net/ipv6.h>
#include <net/netlink.h>
#include <rdma/ib_mad.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "softrdma.h"
#include "roce.h"

bool softrdma_roce_gso = true;
module_param_named(roce_gso, softrdma_roce_gso, bool, 0644);
MODULE_PARM_DESC(roce_gso,
		 "send a message's packets to a wire in UDP GSO skbs (default on)");

static bool softrdma_roce_sr_offer = true;
module_param_named(roce_sr, softrdma_roce_sr_offer, bool, 0644);
MODULE_PARM_DESC(roce_sr,
		 "offer selective repeat to RC peers through ECE (default on; off: go-back-N with every peer, for QPs connected from then on)");

static bool softrdma_roce_ecn_offer = true;
module_param_named(roce_ecn, softrdma_roce_ecn_offer, bool, 0644);
MODULE_PARM_DESC(roce_ecn,
		 "offer ECN to RC peers through ECE: ECN-capable requests, CNPs, DCQCN's pacing (default on; for QPs connected from then on)");

/* What softroce offers through ECE now. */
static u32 softrdma_roce_ece_caps(void)
{
	return (READ_ONCE(softrdma_roce_sr_offer) ? SOFTRDMA_ECE_SR : 0) |
	       (READ_ONCE(softrdma_roce_ecn_offer) ? SOFTRDMA_ECE_ECN : 0);
}

/*
 * Options from the process for its QP (ibv_set_ece, by itself or through
 * librdmacm: kernel/core/qp.c). The QP runs with those it has too: none
 * but on a connected QP. They can change in RESET and INIT and on the
 * move to RTR only, while neither end sends yet; RESET forgets them.
 */
static int softrdma_roce_set_ece(struct softrdma_qp *qp, u32 options,
				 enum ib_qp_state cur, enum ib_qp_state next)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u32 accepted = options & softrdma_roce_ece_caps();

	if (softrdma_qp_is_ud(qp) || qp->ibqp.qp_type == IB_QPT_UC)
		accepted = 0;
	if (accepted == rqp->ece)
		return accepted;
	if (cur != IB_QPS_RESET && cur != IB_QPS_INIT && next != IB_QPS_RTR)
		return -EINVAL;
	WRITE_ONCE(rqp->ece, accepted);
	return accepted;
}

/*
 * rdma -dd res show qp: how the QP retransmits, and the options agreed
 * (driver attributes, in the nest of their own the tools look for).
 */
static int softrdma_roce_fill_res_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct softrdma_roce_qp *rqp = to_rqp(to_sqp(ibqp));
	u32 ece = READ_ONCE(rqp->ece);
	struct nlattr *nest;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "retx",
				      ece & SOFTRDMA_ECE_SR ? "sr" : "gbn") ||
	    rdma_nl_put_driver_u32_hex(msg, "ece", ece) ||
	    /* DCQCN's paced rate, Mb/s; 0: not paced. */
	    rdma_nl_put_driver_u32(msg, "rate_mbps",
				   READ_ONCE(rqp->cc.rp.paced) ?
				   READ_ONCE(rqp->cc.rp.rate) : 0)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int softrdma_roce_port_immutable(struct ib_device *ibdev, u32 port,
					struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = SOFTRDMA_GID_TABLE_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static const struct ib_device_ops softrdma_roce_ops = {
	.get_port_immutable = softrdma_roce_port_immutable,
	.alloc_mw = softrdma_alloc_mw,
	.dealloc_mw = softrdma_dealloc_mw,
	.create_ah = softrdma_create_ah,
	.create_user_ah = softrdma_create_ah,
	.destroy_ah = softrdma_destroy_ah,
	.query_ah = softrdma_query_ah,
	.attach_mcast = softrdma_attach_mcast,
	.detach_mcast = softrdma_detach_mcast,
	.alloc_xrcd = softrdma_alloc_xrcd,
	.dealloc_xrcd = softrdma_dealloc_xrcd,
	.fill_res_qp_entry = softrdma_roce_fill_res_qp,

	INIT_RDMA_OBJ_SIZE(ib_mw, softrdma_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, softrdma_xrcd, ibxrcd),
	/* An AH's route follows the core's AH: see roce.h. */
	INIT_RDMA_OBJ_SIZE(ib_ah, softrdma_roce_ah, ah.ibah),
	/* The QP's RoCE state follows the core's: see roce.h. */
	INIT_RDMA_OBJ_SIZE(ib_qp, softrdma_roce_qp, qp.ibqp),
};

static void softrdma_roce_query_device(struct softrdma_dev *sdev,
				       struct ib_device_attr *attr)
{
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SOFTRDMA_MAX_AH;
	/* IBTA 1.5 (resp.c); no persistent memory, so no FLUSH_PERSISTENT. */
	attr->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL |
				  IB_DEVICE_ATOMIC_WRITE;
	/* XRC domains, SRQs and QPs (kernel/core/xrc.c, recv.c, resp.c). */
	attr->device_cap_flags |= IB_DEVICE_XRC;
	attr->max_mcast_grp = SOFTRDMA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SOFTRDMA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SOFTRDMA_MAX_MCAST_TOTAL_ATTACH;
}

/*
 * Source and destination of packets, from an address vector: a connected
 * QP's or an address handle's. The UDP source port is left as it is.
 */
static int softrdma_roce_route(struct softrdma_roce_net *net,
			       const struct rdma_ah_attr *ah)
{
	const struct ib_gid_attr *sgid = ah->grh.sgid_attr;
	const union ib_gid *dgid = &ah->grh.dgid;
	bool s4 = ipv6_addr_v4mapped((const struct in6_addr *)sgid->gid.raw);
	bool d4 = ipv6_addr_v4mapped((const struct in6_addr *)dgid->raw);

	if (sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	/* Both IPv4 (v4-mapped GIDs) or both IPv6. */
	if (s4 != d4)
		return -EINVAL;
	net->ipv6 = !s4;
	if (s4) {
		memcpy(&net->saddr4, &sgid->gid.raw[12], 4);
		memcpy(&net->daddr4, &dgid->raw[12], 4);
	} else {
		memcpy(&net->saddr6, sgid->gid.raw, sizeof(net->saddr6));
		memcpy(&net->daddr6, dgid->raw, sizeof(net->daddr6));
	}
	net->tclass = ah->grh.traffic_class;
	net->hop_limit = ah->grh.hop_limit;
	net->flow_label = ah->grh.flow_label;
	return 0;
}

/* An address handle's route; UD sends set the UDP source port each. */
static int softrdma_roce_ah_init(struct softrdma_ah *ah,
				 const struct rdma_ah_attr *attr)
{
	struct softrdma_roce_ah *rah = to_rah(ah);

	memset(&rah->net, 0, sizeof(rah->net));
	return softrdma_roce_route(&rah->net, attr);
}

static int softrdma_roce_modify_attrs(struct softrdma_qp *qp,
				      struct ib_qp_attr *attr, int mask)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	int ret;

	if (!(mask & IB_QP_AV))
		return 0;
	ret = softrdma_roce_route(&rqp->net, &attr->ah_attr);
	/* Forget the old route (a store of a time stamp: safe beside use). */
	dst_cache_reset(&rqp->dst_cache);
	return ret;
}

/*
 * The QP's RoCE state as modify_qp moves it on, qp->lock held and
 * qp->attrs up to date: the UDP source port for its destination QP, the
 * responder's PSN and replay state on RTR, the requester's on RTS.
 */
static void softrdma_roce_modify_locked(struct softrdma_qp *qp, int mask,
					enum ib_qp_state cur,
					enum ib_qp_state next)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (mask & IB_QP_DEST_QPN) {
		/* Per-QP UDP source port: entropy for ECMP, from 0xc000. */
		u32 h = qp->ibqp.qp_num ^ (qp->attrs.dest_qp_num << 8);

		rqp->net.sport = 0xc000 | hash_32(h, 14);
	}
	if (next == IB_QPS_RTR && cur == IB_QPS_INIT) {
		rqp->resp.epsn = qp->attrs.rq_psn;
		rqp->resp.msn = 0;
		rqp->resp.in_write = false;
		rqp->resp.in_send = false;
		rqp->resp.nak_sent = false;
		rqp->resp.nak_rnr = false;
		rqp->resp.nak_behind = 0;
		rqp->resp.sr_high = rqp->resp.epsn;
		rqp->resp.sr_lossy = false;
		memset(rqp->resp.atomics, 0, sizeof(rqp->resp.atomics));
		rqp->resp.atomic_next = 0;
	}
	if (next == IB_QPS_RTS && cur == IB_QPS_RTR) {
		rqp->req.psn = qp->attrs.sq_psn;
		rqp->req.retries = 0;
		rqp->req.rnr_retries = 0;
		rqp->req.read_off = 0;
		rqp->req.rd_atomic = 0;
		rqp->req.rnr_wait = false;
		rqp->req.rtt_open = false;
		rqp->req.rto_shift = 0;
		rqp->req.srtt_us = 0;
		rqp->req.rttvar_us = 0;
		rqp->req.sr_recovery = false;
		softrdma_req_window_reset(rqp);
		softrdma_cc_reset(qp);
	}
	if ((next == IB_QPS_ERR || next == IB_QPS_RESET) &&
	    (cur == IB_QPS_RTR || cur == IB_QPS_RTS || cur == IB_QPS_SQD))
		softrdma_resp_flush_ack(qp);
	/* A QP made anew agrees anew: go-back-N until then. */
	if (next == IB_QPS_RESET)
		WRITE_ONCE(rqp->ece, 0);
}

/* The requester of the QP's service. */
static void softrdma_roce_req_run(struct softrdma_qp *qp)
{
	if (softrdma_qp_is_ud(qp))
		softrdma_ud_req_run(qp);
	else
		softrdma_req_run(qp);
}

static bool softrdma_roce_req_pending(struct softrdma_qp *qp)
{
	if (softrdma_qp_is_ud(qp))
		return softrdma_ud_req_pending(qp);
	return softrdma_req_pending(qp);
}

/* Into RESET or ERR, qp->lock held: the responder's state, UD's held. */
static void softrdma_roce_qp_stop(struct softrdma_qp *qp)
{
	softrdma_resp_stop(qp);
	softrdma_ud_stop(qp);
}

/* Out of RTS: the retransmission and RNR timer stops too. */
static void softrdma_roce_qp_stop_sync(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	hrtimer_cancel(&rqp->req.timer);
	WRITE_ONCE(rqp->req.timer_at, 0);
}

/* Move the QP to the error state from the data path; flush it. */
void softrdma_roce_qp_fail(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	softrdma_qp_enter_err(qp);
	rqp->req.rd_atomic = 0;
	rqp->req.rnr_wait = false;
	softrdma_resp_stop(qp);
}

static void softrdma_roce_qp_cleanup(struct softrdma_qp *qp);

static int softrdma_roce_qp_init(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	int ret;

	tasklet_setup(&rqp->resp.tasklet, softrdma_resp_tasklet);
	skb_queue_head_init(&rqp->resp.backlog);
	skb_queue_head_init(&rqp->ud_held);
	hrtimer_setup(&rqp->req.timer, softrdma_req_timeout, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
	ret = dst_cache_init(&rqp->dst_cache, GFP_KERNEL);
	if (ret)
		return ret;
	ret = softrdma_qp_shadow_alloc(qp);
	if (ret)
		softrdma_roce_qp_cleanup(qp);
	return ret;
}

/* Before destroy waits for the QP: off every multicast group. */
static void softrdma_roce_qp_teardown(struct softrdma_qp *qp)
{
	softrdma_mcast_qp_gone(qp);
}

static void softrdma_roce_qp_cleanup(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	hrtimer_cancel(&rqp->req.timer);
	tasklet_kill(&rqp->resp.tasklet);
	softrdma_resp_stop(qp);
	softrdma_ud_stop(qp);
	kfree(rqp->resp.ooo);
	rqp->resp.ooo = NULL;
	kfree(rqp->req.resent);
	rqp->req.resent = NULL;
	softrdma_qp_shadow_free(qp);
	dst_cache_destroy(&rqp->dst_cache);
	/* Cleanup may run twice (after a failed init too): destroy once. */
	memset(&rqp->dst_cache, 0, sizeof(rqp->dst_cache));
}

const struct softrdma_transport softrdma_roce_transport = {
	.name = "softroce",
	.abi_id = SOFTRDMA_TRANSPORT_ROCE,
	.node_type = RDMA_NODE_IB_CA,
	.ops = &softrdma_roce_ops,
	.overhead = SOFTRDMA_ROCE_OVERHEAD,
	.gid_tbl_len = SOFTRDMA_GID_TABLE_LEN,
	.port_cap_flags = IB_PORT_CM_SUP,
	.ip_gids = true,
	.qp_types = BIT(IB_QPT_UC) | BIT(IB_QPT_UD) | BIT(IB_QPT_GSI) |
		    BIT(IB_QPT_XRC_INI) | BIT(IB_QPT_XRC_TGT),
	/* mcast.c keeps a QP's own multicast datagrams from it. */
	.ud_create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK,
	/*
	 * ODP MRs: req.c, comp.c, resp.c and ud.c wait for their pages, for
	 * every operation of RC and XRC; UD's SENDs and receives.
	 */
	.odp_caps = {
		.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT,
		.per_transport_caps = {
			.rc_odp_caps = SOFTRDMA_ODP_RC_CAPS,
			.xrc_odp_caps = SOFTRDMA_ODP_RC_CAPS,
			.ud_odp_caps = IB_ODP_SUPPORT_SEND |
				       IB_ODP_SUPPORT_RECV,
		},
	},
	/* Selective repeat and ECN with peers that have them (roce_sr, _ecn). */
	.ece_caps = SOFTRDMA_ECE_SR | SOFTRDMA_ECE_ECN,

	.init = softrdma_roce_init,
	.exit = softrdma_roce_exit,
	.dev_init = softrdma_roce_dev_init,
	.dev_exit = softrdma_roce_dev_exit,
	.query_device = softrdma_roce_query_device,
	.ah_init = softrdma_roce_ah_init,

	.qp_init = softrdma_roce_qp_init,
	.qp_teardown = softrdma_roce_qp_teardown,
	.qp_cleanup = softrdma_roce_qp_cleanup,
	.req_run = softrdma_roce_req_run,
	.req_pending = softrdma_roce_req_pending,
	.sqd_check = softrdma_req_sqd_check,
	.qp_stop = softrdma_roce_qp_stop,
	.qp_stop_sync = softrdma_roce_qp_stop_sync,
	.modify_attrs = softrdma_roce_modify_attrs,
	.modify_locked = softrdma_roce_modify_locked,
	.set_ece = softrdma_roce_set_ece,
	.ece_caps_now = softrdma_roce_ece_caps,
};
