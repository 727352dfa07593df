// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 device specifics. GIDs are derived by the RDMA core from the
 * netdev's IPv4 and IPv6 addresses (RoCE GID management) and kept in step
 * as addresses come and go; the device only declares RoCEv2 encapsulation.
 */
#include <rdma/ib_mad.h>

#include "softrdma.h"

static int softrdma_roce_port_immutable(struct ib_device *ibdev, u32 port,
					struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = SOFTRDMA_GID_TABLE_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

const struct ib_device_ops softrdma_roce_ops = {
	.get_port_immutable = softrdma_roce_port_immutable,
	.alloc_mw = softrdma_alloc_mw,
	.dealloc_mw = softrdma_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, softrdma_mw, ibmw),
};
