// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 device specifics and the transport descriptor the core reaches
 * softroce through. GIDs are derived by the RDMA core from the
 * netdev's IPv4 and IPv6 addresses (RoCE GID management) and kept in step
 * as addresses come and go; the device only declares RoCEv2 encapsulation.
 */
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
};

static void softrdma_roce_query_device(struct softrdma_dev *sdev,
				       struct ib_device_attr *attr)
{
	attr->atomic_cap = IB_ATOMIC_HCA;
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

	.qp_init = softrdma_rc_qp_init,
	.qp_cleanup = softrdma_rc_qp_cleanup,
	.req_run = softrdma_req_run,
	.req_pending = softrdma_req_pending,
	.sqd_check = softrdma_sqd_check,
	.qp_stop = softrdma_resp_stop,
};
