// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * iWARP device specifics: one GID (the MAC address), the iw_cm entry points
 * (cm.c) and the transport's QP operations (qp.c, tx.c, rx.c; qp.c keeps
 * its own state machine: only the connection manager moves a QP to RTS,
 * and leaving RTS closes the connection). The transport descriptor the
 * core reaches softiwarp through is at the end.
 */
#include <linux/module.h>
#include <rdma/iw_cm.h>

#include "iwarp.h"

bool softrdma_iw_mpa_crc;
module_param_named(mpa_crc, softrdma_iw_mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc, "iWARP: ask for MPA CRC32c (default: only if the peer does)");

bool softrdma_iw_mpa_markers;
module_param_named(mpa_markers, softrdma_iw_mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers, "iWARP: ask the peer for MPA markers (RFC 5044 5); Linux's siw refuses them");

bool softrdma_iw_p2p;
module_param_named(peer_to_peer, softrdma_iw_p2p, bool, 0644);
MODULE_PARM_DESC(peer_to_peer, "iWARP: ask for RFC 6581 peer-to-peer mode (an RTR) as initiator");

bool softrdma_iw_rdmap_ext = true;
module_param_named(rdmap_ext, softrdma_iw_rdmap_ext, bool, 0644);
MODULE_PARM_DESC(rdmap_ext, "iWARP: offer and accept RFC 7306 atomics and immediate data (default: yes)");

static int softrdma_iw_mpa_rev_set(const char *val,
				   const struct kernel_param *kp)
{
	u8 rev;

	if (kstrtou8(val, 0, &rev) || rev < 1 || rev > 2)
		return -EINVAL;
	*(u8 *)kp->arg = rev;
	return 0;
}

static const struct kernel_param_ops softrdma_iw_mpa_rev_ops = {
	.set = softrdma_iw_mpa_rev_set,
	.get = param_get_byte,
};

u8 softrdma_iw_mpa_rev = 2;
module_param_cb(mpa_rev, &softrdma_iw_mpa_rev_ops, &softrdma_iw_mpa_rev, 0644);
MODULE_PARM_DESC(mpa_rev, "iWARP: highest MPA revision we ask for and answer in, 1 or 2 (default 2: RFC 6581)");

struct workqueue_struct *softrdma_iw_wq;

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

/* iw_cm's references keep the QP from being destroyed under it. */
static void softrdma_iw_add_ref(struct ib_qp *ibqp)
{
	refcount_inc(&to_sqp(ibqp)->refs);
}

static void softrdma_iw_rem_ref(struct ib_qp *ibqp)
{
	softrdma_qp_put(to_sqp(ibqp));
}

static struct ib_qp *softrdma_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct softrdma_qp *qp = xa_load(&to_sdev(ibdev)->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}

/* No address vector: the connection manager's attributes only. */
static int softrdma_iwarp_modify_attrs(struct softrdma_qp *qp,
				       struct ib_qp_attr *attr, int mask)
{
	return mask & IB_QP_AV ? -EINVAL : 0;
}

static const struct ib_device_ops softrdma_iwarp_ops = {
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
	.alloc_mw = softrdma_alloc_mw,
	.dealloc_mw = softrdma_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, softrdma_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_qp, softrdma_iw_qp, qp.ibqp),
};

static int softrdma_iwarp_init(void)
{
	int ret;

	/* Senders block in their sockets: unbound, no concurrency limit. */
	softrdma_iw_wq = alloc_workqueue("softrdma_iw", WQ_UNBOUND, 0);
	if (!softrdma_iw_wq)
		return -ENOMEM;
	ret = softrdma_cep_init();
	if (ret)
		destroy_workqueue(softrdma_iw_wq);
	return ret;
}

static void softrdma_iwarp_exit(void)
{
	/* Their sockets call into this module until they are gone. */
	softrdma_cep_wait_all();
	softrdma_cep_exit();
	destroy_workqueue(softrdma_iw_wq);
}

/* iw_cm finds the device by its netdev's name. */
static int softrdma_iwarp_dev_init(struct softrdma_dev *sdev)
{
	memcpy(sdev->ibdev.iw_ifname, sdev->netdev->name,
	       sizeof(sdev->ibdev.iw_ifname));
	return 0;
}

static void softrdma_iwarp_dev_exit(struct softrdma_dev *sdev)
{
}

/*
 * Atomics (RFC 7306) only while the rdmap_ext parameter offers them to
 * peers, which must agree in MPA (cm.c): elsewhere an atomic WR completes
 * with IB_WC_LOC_QP_OP_ERR.
 */
static void softrdma_iwarp_query_device(struct softrdma_dev *sdev,
					struct ib_device_attr *attr)
{
	if (READ_ONCE(softrdma_iw_rdmap_ext))
		attr->atomic_cap = IB_ATOMIC_HCA;
}

const struct softrdma_transport softrdma_iwarp_transport = {
	.name = "softiwarp",
	.abi_id = SOFTRDMA_TRANSPORT_IWARP,
	.node_type = RDMA_NODE_RNIC,
	.ops = &softrdma_iwarp_ops,
	.overhead = SOFTRDMA_IWARP_OVERHEAD,
	.gid_tbl_len = 1,
	.port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP,
	.ip_gids = false,
	/*
	 * ODP MRs: the receiver stops taking the stream until their pages
	 * are in, the sender waits for them (rx.c, tx.c). No FLUSH or ATOMIC
	 * WRITE on this transport.
	 */
	.odp_caps = {
		.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT,
		.per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
						  IB_ODP_SUPPORT_RECV |
						  IB_ODP_SUPPORT_WRITE |
						  IB_ODP_SUPPORT_READ |
						  IB_ODP_SUPPORT_ATOMIC |
						  IB_ODP_SUPPORT_SRQ_RECV,
	},
	/* iw_cm carries no ECE: QPs run as the verbs say, no options. */
	.ece_caps = 0,

	.init = softrdma_iwarp_init,
	.exit = softrdma_iwarp_exit,
	.dev_init = softrdma_iwarp_dev_init,
	.dev_exit = softrdma_iwarp_dev_exit,
	.query_device = softrdma_iwarp_query_device,

	.qp_init = softrdma_iw_qp_init,
	.qp_teardown = softrdma_iw_qp_teardown,
	.qp_cleanup = softrdma_iw_qp_cleanup,
	.req_run = softrdma_iw_req_run,
	.req_pending = softrdma_iw_req_pending,
	.req_kick = softrdma_iw_req_kick,
	.sqd_check = softrdma_iw_sqd_check,
	.modify_qp = softrdma_iw_modify_qp,
	.modify_attrs = softrdma_iwarp_modify_attrs,
};
