// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 device specifics and the transport descriptor the core reaches
 * softroce through. GIDs are derived by the RDMA core from the
 * netdev's IPv4 and IPv6 addresses (RoCE GID management) and kept in step
 * as addresses come and go; the device only declares RoCEv2 encapsulation.
 */
#include <linux/hash.h>
#include <net/ipv6.h>
#include <rdma/ib_mad.h>

#include "softrdma.h"
#include "roce.h"

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

	INIT_RDMA_OBJ_SIZE(ib_mw, softrdma_mw, ibmw),
	/* The QP's RoCE state follows the core's: see roce.h. */
	INIT_RDMA_OBJ_SIZE(ib_qp, softrdma_roce_qp, qp.ibqp),
};

static void softrdma_roce_query_device(struct softrdma_dev *sdev,
				       struct ib_device_attr *attr)
{
	attr->atomic_cap = IB_ATOMIC_HCA;
}

/* Source and destination of a QP's packets, from its address vector. */
static int softrdma_qp_set_route(struct softrdma_qp *qp,
				 const struct rdma_ah_attr *ah)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	const struct ib_gid_attr *sgid = ah->grh.sgid_attr;
	const union ib_gid *dgid = &ah->grh.dgid;
	bool s4 = ipv6_addr_v4mapped((const struct in6_addr *)sgid->gid.raw);
	bool d4 = ipv6_addr_v4mapped((const struct in6_addr *)dgid->raw);

	if (sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	/* Both IPv4 (v4-mapped GIDs) or both IPv6. */
	if (s4 != d4)
		return -EINVAL;
	rqp->net.ipv6 = !s4;
	if (s4) {
		memcpy(&rqp->net.saddr4, &sgid->gid.raw[12], 4);
		memcpy(&rqp->net.daddr4, &dgid->raw[12], 4);
	} else {
		memcpy(&rqp->net.saddr6, sgid->gid.raw, sizeof(rqp->net.saddr6));
		memcpy(&rqp->net.daddr6, dgid->raw, sizeof(rqp->net.daddr6));
	}
	return 0;
}

static int softrdma_roce_modify_attrs(struct softrdma_qp *qp,
				      struct ib_qp_attr *attr, int mask)
{
	if (mask & IB_QP_AV)
		return softrdma_qp_set_route(qp, &attr->ah_attr);
	return 0;
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
		rqp->resp.nak_sent = false;
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
	}
}

/* Out of RTS: the retransmission and RNR timer stops too. */
static void softrdma_roce_qp_stop_sync(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	del_timer_sync(&rqp->req.timer);
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
	timer_setup(&rqp->req.timer, softrdma_req_timeout, 0);
	ret = softrdma_qp_shadow_alloc(qp);
	if (ret)
		softrdma_roce_qp_cleanup(qp);
	return ret;
}

static void softrdma_roce_qp_cleanup(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	del_timer_sync(&rqp->req.timer);
	tasklet_kill(&rqp->resp.tasklet);
	softrdma_resp_stop(qp);
	softrdma_qp_shadow_free(qp);
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

	.init = softrdma_roce_init,
	.exit = softrdma_roce_exit,
	.dev_init = softrdma_roce_dev_init,
	.dev_exit = softrdma_roce_dev_exit,
	.query_device = softrdma_roce_query_device,

	.qp_init = softrdma_roce_qp_init,
	.qp_cleanup = softrdma_roce_qp_cleanup,
	.req_run = softrdma_req_run,
	.req_pending = softrdma_req_pending,
	.sqd_check = softrdma_req_sqd_check,
	.qp_stop = softrdma_resp_stop,
	.qp_stop_sync = softrdma_roce_qp_stop_sync,
	.modify_attrs = softrdma_roce_modify_attrs,
	.modify_locked = softrdma_roce_modify_locked,
};
