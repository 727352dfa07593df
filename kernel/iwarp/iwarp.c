// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * iWARP device specifics: one GID (the MAC address) and the iw_cm entry
 * points. Connections arrive with the MPA/DDP/RDMAP transport; until then
 * the connection manager's calls answer -EOPNOTSUPP.
 */
#include <rdma/iw_cm.h>

#include "softrdma.h"

static int softrdma_iwarp_port_immutable(struct ib_device *ibdev, u32 port,
					 struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = 1;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

static int softrdma_iwarp_query_gid(struct ib_device *ibdev, u32 port,
				    int index, union ib_gid *gid)
{
	if (index)
		return -EINVAL;
	softrdma_gid_from_mac(gid, to_sdev(ibdev)->netdev->dev_addr);
	return 0;
}

static void softrdma_iw_add_ref(struct ib_qp *qp)
{
}

static void softrdma_iw_rem_ref(struct ib_qp *qp)
{
}

static struct ib_qp *softrdma_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	return NULL;
}

static int softrdma_iw_connect(struct iw_cm_id *id,
			       struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

static int softrdma_iw_accept(struct iw_cm_id *id,
			      struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

static int softrdma_iw_reject(struct iw_cm_id *id, const void *pdata,
			      u8 pdata_len)
{
	return -EOPNOTSUPP;
}

static int softrdma_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	return -EOPNOTSUPP;
}

static int softrdma_iw_destroy_listen(struct iw_cm_id *id)
{
	return -EOPNOTSUPP;
}

static int softrdma_iw_qp_init(struct softrdma_qp *qp)
{
	return 0;
}

static void softrdma_iw_qp_cleanup(struct softrdma_qp *qp)
{
}

static void softrdma_iw_req_run(struct softrdma_qp *qp)
{
}

static bool softrdma_iw_req_pending(struct softrdma_qp *qp)
{
	return false;
}

static void softrdma_iw_sqd_check(struct softrdma_qp *qp)
{
}

/* The connected states wait for the MPA/DDP/RDMAP transport. */
static int softrdma_iw_modify_qp(struct softrdma_qp *qp,
				 struct ib_qp_attr *attr, int mask,
				 enum ib_qp_state cur, enum ib_qp_state next)
{
	if (next == IB_QPS_RTR || next == IB_QPS_RTS || next == IB_QPS_SQD)
		return cur == IB_QPS_RESET ? -EINVAL : -EOPNOTSUPP;
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;
	return 0;
}

const struct softrdma_transport_ops softrdma_iwarp_tops = {
	.qp_init = softrdma_iw_qp_init,
	.qp_cleanup = softrdma_iw_qp_cleanup,
	.req_run = softrdma_iw_req_run,
	.req_pending = softrdma_iw_req_pending,
	.sqd_check = softrdma_iw_sqd_check,
	.modify_qp = softrdma_iw_modify_qp,
};

const struct ib_device_ops softrdma_iwarp_ops = {
	.get_port_immutable = softrdma_iwarp_port_immutable,
	.query_gid = softrdma_iwarp_query_gid,
	.iw_add_ref = softrdma_iw_add_ref,
	.iw_rem_ref = softrdma_iw_rem_ref,
	.iw_get_qp = softrdma_iw_get_qp,
	.iw_connect = softrdma_iw_connect,
	.iw_accept = softrdma_iw_accept,
	.iw_reject = softrdma_iw_reject,
	.iw_create_listen = softrdma_iw_create_listen,
	.iw_destroy_listen = softrdma_iw_destroy_listen,
};
