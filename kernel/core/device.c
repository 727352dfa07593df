// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma device: creation, registration, device and port queries.
 */
#include <linux/etherdevice.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>

#include "softrdma.h"

static ssize_t softrdma_abi_version_show(struct device *device,
					 struct device_attribute *attr,
					 char *buf)
{
	return sysfs_emit(buf, "%u\n", SOFTRDMA_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(softrdma_abi_version);

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct softrdma_dev *sdev =
		rdma_device_to_drv_device(device, struct softrdma_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->netdev));
}
static DEVICE_ATTR_RO(parent);

static ssize_t transport_show(struct device *device,
			      struct device_attribute *attr, char *buf)
{
	struct softrdma_dev *sdev =
		rdma_device_to_drv_device(device, struct softrdma_dev, ibdev);

	return sysfs_emit(buf, "%s\n", sdev->transport->name);
}
static DEVICE_ATTR_RO(transport);

static struct attribute *softrdma_attrs[] = {
	&dev_attr_softrdma_abi_version.attr,
	&dev_attr_parent.attr,
	&dev_attr_transport.attr,
	NULL,
};

static const struct attribute_group softrdma_attr_group = {
	.attrs = softrdma_attrs,
};

static int softrdma_query_device(struct ib_device *ibdev,
				 struct ib_device_attr *attr,
				 struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = SOFTRDMA_VENDOR_ID;
	attr->vendor_part_id = sdev->transport->abi_id;
	attr->hw_ver = 1;
	attr->fw_ver = SOFTRDMA_FW_VERSION;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = SOFTRDMA_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = SOFTRDMA_MAX_QP;
	attr->max_qp_wr = SOFTRDMA_MAX_QP_WR;
	attr->max_qp_rd_atom = SOFTRDMA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SOFTRDMA_MAX_RD_ATOMIC;
	attr->max_send_sge = SOFTRDMA_MAX_SGE;
	attr->max_recv_sge = SOFTRDMA_MAX_SGE;
	attr->max_sge_rd = SOFTRDMA_MAX_SGE;
	attr->max_cq = SOFTRDMA_MAX_CQ;
	attr->max_cqe = SOFTRDMA_MAX_CQE;
	attr->max_mr = SOFTRDMA_MAX_MR;
	attr->max_pd = SOFTRDMA_MAX_PD;
	attr->max_fast_reg_page_list_len = SOFTRDMA_MAX_FRMR_PAGES;
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	attr->max_pkeys = 1;
	attr->max_srq = SOFTRDMA_MAX_QP;
	attr->max_srq_wr = SOFTRDMA_MAX_QP_WR;
	attr->max_srq_sge = SOFTRDMA_MAX_SGE;
	attr->local_ca_ack_delay = 15;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/*
	 * Atomics are atomic against the CPUs too (softrdma_mr_atomic()), but
	 * IB_ATOMIC_GLOB is not promised; the transport says whether it
	 * carries them.
	 */
	/* Memory windows: mw.c. */
	attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
				  IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->max_mw = SOFTRDMA_MAX_MW;
	softrdma_odp_caps(sdev, attr);
	if (sdev->transport->query_device)
		sdev->transport->query_device(sdev, attr);
	return 0;
}

static int softrdma_query_port(struct ib_device *ibdev, u32 port,
			       struct ib_port_attr *attr)
{
	struct softrdma_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev = sdev->netdev;
	bool up = netif_running(ndev) && netif_carrier_ok(ndev);

	/* The core zeroed *attr. */
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = softrdma_active_mtu(READ_ONCE(ndev->mtu),
					       sdev->transport->overhead);
	attr->max_msg_sz = 1U << 31;
	attr->pkey_tbl_len = 1;
	attr->qkey_viol_cntr = 0;
	attr->gid_tbl_len = sdev->transport->gid_tbl_len;
	attr->port_cap_flags = sdev->transport->port_cap_flags;
	attr->ip_gids = sdev->transport->ip_gids;
	/* The netdev may be on its way out: report it slow, not an error. */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int softrdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			       u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer softrdma_get_link_layer(struct ib_device *ibdev,
						    u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static void softrdma_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", SOFTRDMA_FW_MAJOR,
		 SOFTRDMA_FW_MINOR, SOFTRDMA_FW_SUB);
}

/* Called by the core once the device is unregistered and unused. */
static void softrdma_dealloc_driver(struct ib_device *ibdev)
{
	struct softrdma_dev *sdev = to_sdev(ibdev);

	WARN_ON(!xa_empty(&sdev->keys));
	xa_destroy(&sdev->keys);
	WARN_ON(!xa_empty(&sdev->srqs));
	xa_destroy(&sdev->srqs);
	softrdma_qpns_destroy(sdev);
	softrdma_ahs_destroy(sdev);
	sdev->transport->dev_exit(sdev);
	netdev_put(sdev->netdev, &sdev->netdev_tracker);
	/* Last: module unload waits for it, then takes the sockets away. */
	softrdma_devlist_del(sdev);
}

void softrdma_port_event(struct softrdma_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

static const struct rdma_stat_desc softrdma_counter_descs[] = {
	[SOFTRDMA_CNT_TX_PKTS] = { .name = "tx_packets" },
	[SOFTRDMA_CNT_RX_PKTS] = { .name = "rx_packets" },
	[SOFTRDMA_CNT_RX_ICRC_ERR] = { .name = "rx_icrc_errors" },
	[SOFTRDMA_CNT_RX_MALFORMED] = { .name = "rx_malformed" },
	[SOFTRDMA_CNT_RX_NOQP] = { .name = "rx_unknown_qp" },
	[SOFTRDMA_CNT_RX_QP_STATE] = { .name = "rx_qp_state_drops" },
	[SOFTRDMA_CNT_RETRANSMITS] = { .name = "retransmits" },
	[SOFTRDMA_CNT_SEQ_NAKS] = { .name = "seq_naks_sent" },
	[SOFTRDMA_CNT_RNR_NAKS] = { .name = "rnr_naks_sent" },
	[SOFTRDMA_CNT_DUPLICATES] = { .name = "duplicate_requests" },
	[SOFTRDMA_CNT_RX_BACKLOG_DROPS] = { .name = "rx_backlog_drops" },
	[SOFTRDMA_CNT_ACKS_COALESCED] = { .name = "acks_coalesced" },
	[SOFTRDMA_CNT_TX_ZCOPY] = { .name = "tx_zcopy_fpdus" },
	[SOFTRDMA_CNT_RX_QKEY_DROPS] = { .name = "rx_qkey_drops" },
	[SOFTRDMA_CNT_RX_UD_NO_RECV] = { .name = "rx_ud_no_recv_drops" },
	[SOFTRDMA_CNT_RX_UC_DROPS] = { .name = "rx_uc_drops" },
	[SOFTRDMA_CNT_RX_MCAST_DROPS] = { .name = "rx_mcast_drops" },
	[SOFTRDMA_CNT_TX_ERRORS] = { .name = "tx_errors" },
	[SOFTRDMA_CNT_SQ_KICKS] = { .name = "sq_kicks" },
	[SOFTRDMA_CNT_POLLER_SENDS] = { .name = "poller_sends" },
	[SOFTRDMA_CNT_LOOP_MERGED] = { .name = "loop_merged_packets" },
	[SOFTRDMA_CNT_GSO_MERGED] = { .name = "gso_merged_packets" },
	[SOFTRDMA_CNT_RX_TRAIN_PKTS] = { .name = "rx_train_packets" },
	[SOFTRDMA_CNT_TX_ZCOPY_PKTS] = { .name = "tx_zcopy_packets" },
	[SOFTRDMA_CNT_RP_CNP_IGNORED] = { .name = "rp_cnp_ignored" },
	[SOFTRDMA_CNT_SR_OOO_HELD] = { .name = "sr_ooo_held" },
	[SOFTRDMA_CNT_SR_OOO_DROPS] = { .name = "sr_ooo_drops" },
	[SOFTRDMA_CNT_SR_RETRANSMITS] = { .name = "sr_retransmits" },
	[SOFTRDMA_CNT_GBN_CUTS] = { .name = "gbn_window_cuts" },
	/* mlx5's names for the same events (DCQCN's NP and RP). */
	[SOFTRDMA_CNT_NP_ECN_MARKED] = { .name = "np_ecn_marked_roce_packets" },
	[SOFTRDMA_CNT_NP_CNP_SENT] = { .name = "np_cnp_sent" },
	[SOFTRDMA_CNT_RP_CNP_HANDLED] = { .name = "rp_cnp_handled" },
	[SOFTRDMA_CNT_RX_UD_ODP_DROPS] = { .name = "rx_ud_odp_drops" },
	[SOFTRDMA_CNT_ODP_FAULTS] = { .name = "odp_faults" },
	[SOFTRDMA_CNT_ODP_INVALIDATIONS] = { .name = "odp_invalidations" },
	[SOFTRDMA_CNT_RX_ODP_WAITS] = { .name = "rx_odp_waits" },
};

static_assert(ARRAY_SIZE(softrdma_counter_descs) == SOFTRDMA_NUM_COUNTERS);

static struct rdma_hw_stats *softrdma_alloc_hw_port_stats(struct ib_device *ibdev,
							  u32 port_num)
{
	return rdma_alloc_hw_stats_struct(softrdma_counter_descs,
					  SOFTRDMA_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int softrdma_get_hw_stats(struct ib_device *ibdev,
				 struct rdma_hw_stats *stats, u32 port,
				 int index)
{
	struct softrdma_dev *sdev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SOFTRDMA_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&sdev->counters[i]);
	return SOFTRDMA_NUM_COUNTERS;
}

static const struct ib_device_ops softrdma_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SOFTRDMA_UVERBS_ABI_VERSION,
	.uverbs_no_driver_id_binding = 1,
	.device_group = &softrdma_attr_group,

	.alloc_hw_port_stats = softrdma_alloc_hw_port_stats,
	.dealloc_driver = softrdma_dealloc_driver,
	.get_dev_fw_str = softrdma_get_dev_fw_str,
	.get_hw_stats = softrdma_get_hw_stats,
	.get_link_layer = softrdma_get_link_layer,
	.query_device = softrdma_query_device,
	.query_port = softrdma_query_port,
	.query_pkey = softrdma_query_pkey,
};

/**
 * softrdma_register - create and register a device on @ndev
 * @name: the ib_device name the user chose
 * @ndev: an Ethernet netdev
 * @transport: the transport's descriptor (main.c's table)
 *
 * Return: 0, or a negative errno with nothing left behind.
 */
int softrdma_register(const char *name, struct net_device *ndev,
		      const struct softrdma_transport *transport)
{
	struct softrdma_dev *sdev;
	struct ib_device *ibdev;
	int ret;

	sdev = ib_alloc_device(softrdma_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	ibdev = &sdev->ibdev;
	sdev->transport = transport;
	sdev->netdev = ndev;
	netdev_hold(ndev, &sdev->netdev_tracker, GFP_KERNEL);
	softrdma_keys_init(sdev);
	softrdma_ahs_init(sdev);
	xa_init_flags(&sdev->srqs, XA_FLAGS_LOCK_BH);
	INIT_LIST_HEAD(&sdev->list);

	/* Arming a CQ is a system call; polling it is not. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	strscpy(ibdev->node_desc, "softrdma", sizeof(ibdev->node_desc));

	ib_set_device_ops(ibdev, &softrdma_dev_ops);
	ib_set_device_ops(ibdev, &softrdma_common_ops);
	ibdev->node_type = transport->node_type;
	ib_set_device_ops(ibdev, transport->ops);
	/* From here on, ib_dealloc_device() calls softrdma_dealloc_driver(). */
	ret = softrdma_qpns_init(sdev);
	if (ret)
		goto err;

	ret = ib_device_set_netdev(ibdev, ndev, 1);
	if (ret)
		goto err;

	ret = softrdma_devlist_add(sdev);
	if (ret)
		goto err;

	ret = transport->dev_init(sdev);
	if (ret)
		goto err;

	ret = ib_register_device(ibdev, name, NULL);
	if (ret == -ENFILE) {
		/* The RDMA core's word for a name that is taken. */
		pr_warn("softrdma: an RDMA device named %s exists already\n",
			name);
		ret = -EEXIST;
		goto err;
	}
	if (ret) {
		pr_warn("softrdma: cannot register %s on %s: %d\n", name,
			netdev_name(ndev), ret);
		goto err;
	}
	dev_info(&ibdev->dev, "%s device on %s\n",
		 transport->name, netdev_name(ndev));
	return 0;

err:
	/* Calls softrdma_dealloc_driver(), which undoes all of the above. */
	ib_dealloc_device(ibdev);
	return ret;
}
