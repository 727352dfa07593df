// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation with their rings, the state machine, flushing.
 *
 * The send and receive queues are rings mapped into the process; the
 * provider writes work requests and publishes the producer index. The kernel
 * copies each WQE out of the ring before it looks at it and trusts none of
 * its fields. A kernel consumer's QP has the same rings, unmapped, which
 * the post verbs fill (kpost.c).
 */
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/uverbs_ioctl.h>

#include "softrdma.h"

/*
 * QP numbers are drawn at random from [SOFTRDMA_QPN_MIN, SOFTRDMA_QPN_MAX):
 * a peer that learns one cannot tell the next from it. QP 0 and 1 are the
 * SMI's and the GSI's, the rest below 16 are kept free as rdma_rxe keeps
 * them, and 0xffffff names multicast groups.
 */
#define SOFTRDMA_QPN_MIN	16
#define SOFTRDMA_QPN_MAX	0xffffff
/*
 * A destroyed QP's number stays out of the draws until this many more QPs
 * of the device were destroyed: packets still on their way to the old QP
 * (a peer's retries, a queue on the wire) must find no QP, not a new one
 * that took its number. A destroy waits out an RCU grace period
 * (milliseconds), so QPs destroyed one after another take seconds at the
 * very least to push a number out; after that, it comes back with a
 * chance of one in 16.7 million per creation. Counting, not timing, keeps
 * the quarantine at 16 KiB a device: numbers held for a time would pile up
 * without bound under a loop of creates and destroys.
 */
#define SOFTRDMA_QPN_QUARANTINE	4096

/*
 * The access flags a QP takes. FLUSH_GLOBAL and FLUSH_PERSISTENT let RDMA
 * FLUSH requests of each placement type in (softroce); no MR can grant
 * FLUSH_PERSISTENT (softrdma has no persistent memory), and on softiwarp,
 * which has no FLUSH, they are accepted as rdma_rxe accepts them, so
 * programs that set them run. IB_ACCESS_ON_DEMAND is an MR's, which
 * programs (rdma-core's ODP tests) pass to QPs too: mlx5 and rdma_rxe
 * ignore it there, and so does softrdma.
 */
#define SOFTRDMA_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_FLUSH_GLOBAL | \
				 IB_ACCESS_FLUSH_PERSISTENT | IB_ACCESS_ON_DEMAND)

int softrdma_qpns_init(struct softrdma_dev *sdev)
{
	xa_init_flags(&sdev->qps, XA_FLAGS_LOCK_BH);
	mutex_init(&sdev->qpn_lock);
	/* Zeros: QP 0 is never drawn, so an empty slot holds nothing back. */
	sdev->qpn_quarantine = kvcalloc(SOFTRDMA_QPN_QUARANTINE,
					sizeof(*sdev->qpn_quarantine),
					GFP_KERNEL);
	return sdev->qpn_quarantine ? 0 : -ENOMEM;
}

void softrdma_qpns_destroy(struct softrdma_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->qps));
	xa_destroy(&sdev->qps);
	kvfree(sdev->qpn_quarantine);
	mutex_destroy(&sdev->qpn_lock);
}

/* Number @qp: at random, with a number no QP has, nor had lately. */
static int softrdma_qpn_alloc(struct softrdma_dev *sdev,
			      struct softrdma_qp *qp, u32 *qpn)
{
	int ret;

	mutex_lock(&sdev->qpn_lock);
	ret = softrdma_xa_alloc_random(&sdev->qps, qpn, qp,
				       XA_LIMIT(SOFTRDMA_QPN_MIN,
						SOFTRDMA_QPN_MAX - 1),
				       sdev->qpn_quarantine,
				       SOFTRDMA_QPN_QUARANTINE);
	mutex_unlock(&sdev->qpn_lock);
	return ret;
}

/*
 * Take @qpn from the device's QPs; with @quarantine (it was given out),
 * hold it back from the next draws.
 */
static void softrdma_qpn_free(struct softrdma_dev *sdev, u32 qpn,
			      bool quarantine)
{
	mutex_lock(&sdev->qpn_lock);
	if (quarantine && qpn >= SOFTRDMA_QPN_MIN) {
		sdev->qpn_quarantine[sdev->qpn_quarantine_next] = qpn;
		sdev->qpn_quarantine_next = (sdev->qpn_quarantine_next + 1) %
					    SOFTRDMA_QPN_QUARANTINE;
	}
	xa_erase_bh(&sdev->qps, qpn);
	mutex_unlock(&sdev->qpn_lock);
}

static u32 softrdma_sq_slot_size(u32 max_sge, u32 max_inline)
{
	u32 data = max(max_sge * (u32)sizeof(struct softrdma_sge),
		       ALIGN(max_inline, sizeof(struct softrdma_sge)));

	return ALIGN(SOFTRDMA_SEND_WQE_HDR_SIZE + data, SOFTRDMA_CACHELINE);
}

static u32 softrdma_rq_slot_size(u32 max_sge)
{
	return ALIGN(SOFTRDMA_RECV_WQE_HDR_SIZE +
		     max_sge * (u32)sizeof(struct softrdma_sge), 16);
}

static int softrdma_qp_check_cap(struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > SOFTRDMA_MAX_QP_WR ||
	    cap->max_recv_wr > SOFTRDMA_MAX_QP_WR ||
	    cap->max_send_sge > SOFTRDMA_MAX_SGE ||
	    cap->max_recv_sge > SOFTRDMA_MAX_SGE ||
	    cap->max_inline_data > SOFTRDMA_MAX_INLINE)
		return -EINVAL;
	return 0;
}

int softrdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibqp->device);
	struct softrdma_qp *qp = to_sqp(ibqp);
	struct softrdma_create_qp_resp resp = {};
	struct softrdma_ucontext *suc;
	struct ib_qp_cap *cap = &init->cap;
	u32 sq_slots, rq_slots;
	u32 qpn;
	int ret;

	/*
	 * RC, and what else the transport takes; GSI is the kernel's. An XRC
	 * INI QP's WQEs name their XRC SRQ, which only user WQEs can; ib_core
	 * makes every XRC TGT QP as a kernel one, in an XRC domain.
	 */
	if ((init->qp_type != IB_QPT_RC &&
	     (init->qp_type >= 32 ||
	      !(BIT(init->qp_type) & sdev->transport->qp_types))) ||
	    (init->qp_type == IB_QPT_GSI && (udata || init->port_num != 1)) ||
	    (init->qp_type == IB_QPT_XRC_INI && !udata) ||
	    (init->qp_type == IB_QPT_XRC_TGT && (udata || !init->xrcd)))
		return -EOPNOTSUPP;
	/* Creation flags: those the transport takes, for UD QPs only. */
	if (init->create_flags &&
	    ((init->create_flags & ~sdev->transport->ud_create_flags) ||
	     init->qp_type != IB_QPT_UD))
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	ret = softrdma_qp_check_cap(cap);
	if (ret)
		return ret;
	if (atomic_inc_return(&sdev->num_qps) > SOFTRDMA_MAX_QP) {
		ret = -ENOMEM;
		goto err_count;
	}

	cap->max_send_sge = max(cap->max_send_sge, 1U);
	cap->max_recv_sge = max(cap->max_recv_sge, 1U);
	sq_slots = softrdma_ring_slots(max(cap->max_send_wr, 1U),
				       SOFTRDMA_MAX_QP_WR);
	rq_slots = softrdma_ring_slots(max(cap->max_recv_wr, 1U),
				       SOFTRDMA_MAX_QP_WR);
	/* The rings hold what they can; report the real capacities. */
	cap->max_send_wr = sq_slots;
	cap->max_recv_wr = rq_slots;
	cap->max_inline_data = max(cap->max_inline_data,
				   cap->max_send_sge *
				   (u32)sizeof(struct softrdma_sge));

	qp->sdev = sdev;
	qp->pd = ibqp->pd;
	if (init->qp_type == IB_QPT_XRC_TGT)
		qp->xrcd = init->xrcd;
	qp->transport = sdev->transport;
	qp->state = IB_QPS_RESET;
	qp->sq_max_sge = cap->max_send_sge;
	qp->rq_max_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	/* An XRC INI QP has no receive CQ, an XRC TGT QP neither CQ. */
	qp->scq = init->send_cq ? to_scq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_scq(init->recv_cq) : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->create_flags = init->create_flags;
	qp->user = !!udata;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_WORK(&qp->kick_work, softrdma_kick_work);
	mutex_init(&qp->state_lock);
	spin_lock_init(&qp->lock);
	refcount_set(&qp->refs, 1);
	init_completion(&qp->released);
	INIT_LIST_HEAD(&qp->poll_node);

	ret = softrdma_ring_init(&qp->sq, sq_slots,
				 softrdma_sq_slot_size(qp->sq_max_sge,
						       qp->max_inline));
	if (ret)
		goto err_count;
	ret = softrdma_ring_init(&qp->rq, rq_slots,
				 softrdma_rq_slot_size(qp->rq_max_sge));
	if (ret)
		goto err_sq;
	ret = qp->transport->qp_init(qp);
	if (ret)
		goto err_rq;
	/* Nobody polls the new SQ: the provider kicks. */
	qp->sq.hdr->flags = SOFTRDMA_RING_NEED_KICK;

	/* The GSI QP is QP 1 of its port (IBTA 10.2.1). */
	qpn = SOFTRDMA_GSI_QPN;
	if (init->qp_type == IB_QPT_GSI)
		ret = xa_insert_bh(&sdev->qps, qpn, qp, GFP_KERNEL);
	else
		ret = softrdma_qpn_alloc(sdev, qp, &qpn);
	if (ret < 0)
		goto err_rq;
	ibqp->qp_num = qpn;
	if (!udata)
		return 0;

	suc = rdma_udata_to_drv_context(udata, struct softrdma_ucontext, ibuc);
	ret = softrdma_ring_map(&qp->sq, &suc->ibuc, &resp.sq_mmap_offset);
	if (ret)
		goto err_qpn;
	ret = softrdma_ring_map(&qp->rq, &suc->ibuc, &resp.rq_mmap_offset);
	if (ret)
		goto err_qpn;
	resp.sq_mmap_size = qp->sq.size;
	resp.rq_mmap_size = qp->rq.size;
	resp.qpn = qpn;
	resp.sq_slots = sq_slots;
	resp.sq_slot_size = qp->sq.slot_size;
	resp.rq_slots = rq_slots;
	resp.rq_slot_size = qp->rq.slot_size;
	resp.max_inline = qp->max_inline;
	ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (ret)
		goto err_qpn;
	return 0;

err_qpn:
	/* Nobody was told the number: no quarantine. */
	softrdma_qpn_free(sdev, qpn, false);
err_rq:
	qp->transport->qp_cleanup(qp);
	softrdma_ring_free(&qp->rq);
err_sq:
	softrdma_ring_free(&qp->sq);
err_count:
	atomic_dec(&sdev->num_qps);
	return ret;
}

/* Drop a reference taken on @qp; the last one lets destroy go on. */
void softrdma_qp_put(struct softrdma_qp *qp)
{
	if (refcount_dec_and_test(&qp->refs))
		complete(&qp->released);
}

int softrdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softrdma_qp *qp = to_sqp(ibqp);

	softrdma_qpn_free(qp->sdev, ibqp->qp_num, true);
	softrdma_poll_del(qp);
	cancel_work_sync(&qp->kick_work);
	if (qp->transport->qp_teardown)
		qp->transport->qp_teardown(qp);
	/* Packets found the QP under RCU; then they hold a reference. */
	synchronize_rcu();
	softrdma_qp_put(qp);
	wait_for_completion(&qp->released);
	/* Nothing else can reach the QP: no lock to take. */
	softrdma_resp_mr_drop(qp);
	qp->transport->qp_cleanup(qp);
	softrdma_ring_free(&qp->rq);
	softrdma_ring_free(&qp->sq);
	mutex_destroy(&qp->state_lock);
	atomic_dec(&qp->sdev->num_qps);
	return 0;
}

/*
 * Complete every posted receive with IB_WC_WR_FLUSH_ERR. Returns -EIO if
 * the process left indices no peer could have made.
 */
static int softrdma_flush_rq(struct softrdma_qp *qp)
{
	struct softrdma_ring_hdr *hdr = qp->rq.hdr;
	struct softrdma_recv_wqe wqe;
	struct softrdma_cqe cqe;
	u32 prod, cons;
	int used;

	/*
	 * A receive the QP took from an SRQ for a message still arriving is
	 * the QP's now (it is in no ring any more): it completes here,
	 * flushed. The SRQ's other WQEs belong to no QP: they stay for the
	 * others. A QP without a receive CQ (XRC INI) takes no receives.
	 */
	if (qp->resp.in_recv && softrdma_qp_srq(qp)) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.opcode = IB_WC_RECV;
		softrdma_recv_complete(qp, &cqe, false);
	}
	if (softrdma_qp_srq(qp) || !qp->rcq)
		return 0;

	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	cons = hdr->consumer;
	used = softrdma_ring_used(prod, cons, qp->rq.num_slots);
	if (used < 0)
		return -EIO;
	for (; cons != prod; cons++) {
		memcpy(&wqe, softrdma_ring_slot(&qp->rq, cons), sizeof(wqe));
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = wqe.wr_id;
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.opcode = IB_WC_RECV;
		cqe.qp_num = qp->ibqp.qp_num;
		if (softrdma_cq_post(qp->rcq, &cqe, false))
			break;
		/* The slot is free again once the CQE is out. */
		smp_store_release(&hdr->consumer, cons + 1);
	}
	return 0;
}

static const u8 softrdma_wr_to_wc[] = {
	[IB_WR_RDMA_WRITE] = IB_WC_RDMA_WRITE,
	[IB_WR_RDMA_WRITE_WITH_IMM] = IB_WC_RDMA_WRITE,
	[IB_WR_SEND] = IB_WC_SEND,
	[IB_WR_SEND_WITH_IMM] = IB_WC_SEND,
	[IB_WR_RDMA_READ] = IB_WC_RDMA_READ,
	[IB_WR_RDMA_READ_WITH_INV] = IB_WC_RDMA_READ,
	[IB_WR_ATOMIC_CMP_AND_SWP] = IB_WC_COMP_SWAP,
	[IB_WR_ATOMIC_FETCH_AND_ADD] = IB_WC_FETCH_ADD,
	[IB_WR_SEND_WITH_INV] = IB_WC_SEND,
	[IB_WR_LOCAL_INV] = IB_WC_LOCAL_INV,
	[IB_WR_REG_MR] = IB_WC_REG_MR,
	[IB_WR_BIND_MW] = IB_WC_BIND_MW,
	[IB_WR_FLUSH] = IB_WC_FLUSH,
	[IB_WR_ATOMIC_WRITE] = IB_WC_ATOMIC_WRITE,
};

/* The completion opcode of a send WQE's opcode (any value). */
u32 softrdma_wc_opcode(u32 wr_opcode)
{
	if (wr_opcode < ARRAY_SIZE(softrdma_wr_to_wc))
		return softrdma_wr_to_wc[wr_opcode];
	return IB_WC_SEND;
}

/* Complete every posted send with IB_WC_WR_FLUSH_ERR, signalled or not. */
static int softrdma_flush_sq(struct softrdma_qp *qp)
{
	struct softrdma_ring_hdr *hdr = qp->sq.hdr;
	struct softrdma_send_wqe wqe;
	struct softrdma_cqe cqe;
	u32 prod, cons;
	int used;

	/* An XRC TGT QP has no send queue anyone posts to. */
	if (!qp->scq)
		return 0;
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	cons = hdr->consumer;
	used = softrdma_ring_used(prod, cons, qp->sq.num_slots);
	if (used < 0)
		return -EIO;
	for (; cons != prod; cons++) {
		memcpy(&wqe, softrdma_ring_slot(&qp->sq, cons), sizeof(wqe));
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = wqe.wr_id;
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.opcode = softrdma_wc_opcode(wqe.opcode);
		cqe.qp_num = qp->ibqp.qp_num;
		if (softrdma_cq_post(qp->scq, &cqe, false))
			break;
		/* The slot is free again once the CQE is out. */
		smp_store_release(&hdr->consumer, cons + 1);
	}
	return 0;
}

/* Flush both queues of a QP in the error state. */
void softrdma_qp_flush(struct softrdma_qp *qp)
{
	if (softrdma_flush_sq(qp) || softrdma_flush_rq(qp))
		ibdev_warn_ratelimited(&qp->sdev->ibdev,
				       "QP %u: ring indices corrupted by the process\n",
				       qp->ibqp.qp_num);
}

/* Flush the send queue of a QP in the send queue error state. */
void softrdma_qp_flush_sq(struct softrdma_qp *qp)
{
	if (softrdma_flush_sq(qp))
		ibdev_warn_ratelimited(&qp->sdev->ibdev,
				       "QP %u: ring indices corrupted by the process\n",
				       qp->ibqp.qp_num);
	qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
	qp->req.comp_idx = qp->req.send_idx;
}

/* Empty both rings, as a QP entering RESET has no work requests. */
static void softrdma_qp_reset_rings(struct softrdma_qp *qp)
{
	/* Release: the provider sees empty rings from here on. */
	smp_store_release(&qp->sq.hdr->consumer,
			  READ_ONCE(qp->sq.hdr->producer));
	/* Likewise for the receive queue. */
	smp_store_release(&qp->rq.hdr->consumer,
			  READ_ONCE(qp->rq.hdr->producer));
}

VISIBLE_IF_KUNIT int softrdma_check_qp_attr(struct softrdma_qp *qp,
					    struct ib_qp_attr *attr, int mask)
{
	struct ib_device_attr *dattr = &qp->sdev->ibdev.attrs;

	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > dattr->max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > dattr->max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SOFTRDMA_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SOFTRDMA_QP_ACCESS))
		return -EINVAL;
	if (mask & IB_QP_AV) {
		/* RoCEv2 addresses are GIDs: a GRH is mandatory. */
		if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH) ||
		    !attr->ah_attr.grh.sgid_attr)
			return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_check_qp_attr);

static void softrdma_apply_qp_attr(struct softrdma_qp *qp,
				   struct ib_qp_attr *attr, int mask)
{
	struct softrdma_qp_attrs *a = &qp->attrs;

	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & SOFTRDMA_PSN_MASK;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & SOFTRDMA_PSN_MASK;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->access = attr->qp_access_flags;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *grh = &attr->ah_attr.grh;

		a->dgid = grh->dgid;
		a->sgid_index = grh->sgid_index;
		a->hop_limit = grh->hop_limit;
		a->traffic_class = grh->traffic_class;
		a->flow_label = grh->flow_label;
		memcpy(a->dmac, attr->ah_attr.roce.dmac, ETH_ALEN);
	}
}

/*
 * The driver part of a modify_qp command, if the process sent one
 * (zeroes if not); -EOPNOTSUPP for what this module does not know.
 */
static int softrdma_modify_qp_cmd(struct ib_udata *udata,
				  struct softrdma_modify_qp_cmd *cmd)
{
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	if (!udata || udata->inlen < offsetofend(typeof(*cmd), ece_options))
		return 0;
	if (udata->inlen > sizeof(*cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(*cmd),
				 udata->inlen - sizeof(*cmd)))
		return -EOPNOTSUPP;
	ret = ib_copy_from_udata(cmd, udata, sizeof(*cmd));
	if (ret)
		return ret;
	if (cmd->comp_mask & ~SOFTRDMA_MODIFY_QP_ECE)
		return -EOPNOTSUPP;
	return 0;
}

/*
 * ECE options from the process (ibv_set_ece, librdmacm): the QP runs
 * with those its transport has too; -EINVAL for a change after RTR.
 * Returns the options the QP runs with.
 */
static int softrdma_modify_qp_ece(struct softrdma_qp *qp, u32 options,
				  enum ib_qp_state cur, enum ib_qp_state next)
{
	if (!qp->transport->set_ece)
		return 0;
	return qp->transport->set_ece(qp, options, cur, next);
}

int softrdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		       struct ib_udata *udata)
{
	struct softrdma_qp *qp = to_sqp(ibqp);
	struct softrdma_modify_qp_resp resp = {};
	struct softrdma_modify_qp_cmd cmd;
	enum ib_qp_state cur, next;
	int ret;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	ret = softrdma_modify_qp_cmd(udata, &cmd);
	if (ret)
		return ret;

	mutex_lock(&qp->state_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	ret = -EINVAL;
	if (cur != qp->state)
		goto out;
	/* iWARP has no address vector: the connection manager's attributes. */
	if (!qp->transport->modify_qp &&
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	ret = softrdma_check_qp_attr(qp, attr, mask);
	if (ret)
		goto out;
	/*
	 * The send queue error state is the QP's to enter (a UD send in
	 * error), never a consumer's; it leaves it for RTS, ERR or RESET.
	 */
	if (next == IB_QPS_SQE && cur != IB_QPS_SQE) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	/* The transport's own states; 1: it did all there was to do. */
	if (qp->transport->modify_qp) {
		ret = qp->transport->modify_qp(qp, attr, mask, cur, next);
		if (ret) {
			ret = ret > 0 ? 0 : ret;
			goto out;
		}
	}
	if (cmd.comp_mask & SOFTRDMA_MODIFY_QP_ECE) {
		ret = softrdma_modify_qp_ece(qp, cmd.ece_options, cur, next);
		if (ret < 0)
			goto out;
		/* RESET forgets them (modify_locked). */
		resp.ece_options = next == IB_QPS_RESET ? 0 : ret;
	}
	if (qp->transport->modify_attrs) {
		ret = qp->transport->modify_attrs(qp, attr, mask);
		if (ret)
			goto out;
	}
	spin_lock_bh(&qp->lock);
	softrdma_apply_qp_attr(qp, attr, mask);
	/* No message is being received yet, and the SQ starts afresh. */
	if (next == IB_QPS_RTR && cur == IB_QPS_INIT)
		qp->resp.in_recv = false;
	if (next == IB_QPS_RTS && (cur == IB_QPS_RTR || cur == IB_QPS_SQE)) {
		qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
		qp->req.comp_idx = qp->req.send_idx;
	}
	if (qp->transport->modify_locked)
		qp->transport->modify_locked(qp, mask, cur, next);
	if (next == IB_QPS_SQD && cur == IB_QPS_RTS)
		qp->sqd_notify = (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
				 attr->en_sqd_async_notify;
	WRITE_ONCE(qp->state, next);
	if (next != IB_QPS_RTS)
		softrdma_qp_need_kick(qp);
	if (next == IB_QPS_SQD)
		qp->transport->sqd_check(qp);
	else if (next == IB_QPS_RTS && (cur == IB_QPS_SQD || cur == IB_QPS_SQE))
		qp->transport->req_run(qp);	/* what was posted meanwhile */
	if ((next == IB_QPS_RESET || next == IB_QPS_ERR) &&
	    qp->transport->qp_stop)
		qp->transport->qp_stop(qp);
	if (next == IB_QPS_RESET || next == IB_QPS_ERR)
		softrdma_resp_mr_drop(qp);
	if (next == IB_QPS_RESET) {
		softrdma_qp_reset_rings(qp);
		softrdma_ring_clear_flag(&qp->rq, SOFTRDMA_RING_NEED_KICK);
	} else if (next == IB_QPS_ERR) {
		/* Receives posted from now on must be flushed: kick. */
		softrdma_ring_set_flag(&qp->rq, SOFTRDMA_RING_NEED_KICK);
		softrdma_qp_flush(qp);
	}
	spin_unlock_bh(&qp->lock);
	if ((next == IB_QPS_RESET || next == IB_QPS_ERR) &&
	    qp->transport->qp_stop_sync)
		qp->transport->qp_stop_sync(qp);
	ret = 0;
	/* The options the QP took, to a process that has room for them. */
	if ((cmd.comp_mask & SOFTRDMA_MODIFY_QP_ECE) &&
	    udata->outlen >= sizeof(resp))
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
out:
	mutex_unlock(&qp->state_lock);
	return ret;
}

int softrdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_qp_init_attr *init)
{
	struct softrdma_qp *qp = to_sqp(ibqp);
	struct softrdma_qp_attrs *a = &qp->attrs;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->state_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_lock_bh(&qp->lock);
	attr->sq_draining = qp->state == IB_QPS_SQD &&
			    qp->req.comp_idx != qp->req.send_idx;
	spin_unlock_bh(&qp->lock);
	attr->path_mtu = a->path_mtu;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->dest_qp_num = a->dest_qp_num;
	attr->sq_psn = a->sq_psn;
	attr->rq_psn = a->rq_psn;
	attr->qp_access_flags = a->access;
	attr->qkey = a->qkey;
	attr->port_num = 1;
	/*
	 * A connected QP's address vector over RoCE, as modify takes it: a
	 * program may move the QP back to RTR with what query reported.
	 */
	if (rdma_protocol_roce(ibqp->device, 1) &&
	    (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC ||
	     ibqp->qp_type == IB_QPT_XRC_INI ||
	     ibqp->qp_type == IB_QPT_XRC_TGT)) {
		struct rdma_ah_attr *ah = &attr->ah_attr;

		ah->type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(ah, 1);
		rdma_ah_set_grh(ah, &a->dgid, a->flow_label, a->sgid_index,
				a->hop_limit, a->traffic_class);
		memcpy(ah->roce.dmac, a->dmac, ETH_ALEN);
	}
	mutex_unlock(&qp->state_lock);

	attr->cap.max_send_wr = qp->sq.num_slots;
	attr->cap.max_recv_wr = qp->rq.num_slots;
	attr->cap.max_send_sge = qp->sq_max_sge;
	attr->cap.max_recv_sge = qp->rq_max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->create_flags = qp->create_flags;
	return 0;
}

/*
 * Act on WQEs published in the rings: in RTS the requester sends them; in
 * the error state they are flushed, in the send queue error state the
 * sends are. Caller holds qp->lock.
 */
void softrdma_qp_kick_locked(struct softrdma_qp *qp)
{
	switch (qp->state) {
	case IB_QPS_ERR:
		softrdma_qp_flush(qp);
		break;
	case IB_QPS_SQE:
		softrdma_qp_flush_sq(qp);
		break;
	case IB_QPS_RTS:
		qp->transport->req_run(qp);
		break;
	default:
		break;
	}
}

/*
 * The kick of a user QP (a POST_SEND or POST_RECV command with no work
 * requests): the provider has published WQEs. In RTS the requester sends
 * them, and the QP may join the poller; in the error state they are
 * flushed.
 */
int softrdma_qp_kick(struct softrdma_qp *qp)
{
	int ret = 0;

	spin_lock_bh(&qp->lock);
	if (qp->state == IB_QPS_RESET) {
		ret = -EINVAL;
	} else {
		softrdma_qp_kick_locked(qp);
		softrdma_poll_join(qp);
	}
	spin_unlock_bh(&qp->lock);
	return ret;
}

/**
 * softrdma_qp_shadow_alloc - the kernel's copies of the SQ's WQEs
 * @qp: a QP whose rings are set up
 *
 * One softrdma_swqe, sq_max_sge SGEs and max_inline bytes per SQ slot:
 * what a transport's requester takes off the ring and uses from then on.
 * Free with softrdma_qp_shadow_free(), also after a failure here.
 *
 * Return: 0 or -ENOMEM.
 */
int softrdma_qp_shadow_alloc(struct softrdma_qp *qp)
{
	size_t n = qp->sq.num_slots;

	qp->swqe = kvcalloc(n, sizeof(*qp->swqe), GFP_KERNEL);
	qp->ssge = kvcalloc(n * qp->sq_max_sge, sizeof(*qp->ssge), GFP_KERNEL);
	qp->sinline = kvzalloc(n * qp->max_inline, GFP_KERNEL);
	if (!qp->swqe || !qp->ssge || !qp->sinline)
		return -ENOMEM;
	return 0;
}

void softrdma_qp_shadow_free(struct softrdma_qp *qp)
{
	kvfree(qp->swqe);
	kvfree(qp->ssge);
	kvfree(qp->sinline);
	qp->swqe = NULL;
	qp->ssge = NULL;
	qp->sinline = NULL;
}

/*
 * Move @qp to the error state from the data path: flush both queues and
 * forget the send queue's progress and the receive in progress. The
 * transport then drops its own state. Caller holds qp->lock.
 */
void softrdma_qp_enter_err(struct softrdma_qp *qp)
{
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	softrdma_qp_need_kick(qp);
	softrdma_ring_set_flag(&qp->rq, SOFTRDMA_RING_NEED_KICK);
	softrdma_qp_flush(qp);
	qp->req.send_idx = READ_ONCE(qp->sq.hdr->consumer);
	qp->req.comp_idx = qp->req.send_idx;
	qp->resp.in_recv = false;
	softrdma_resp_mr_drop(qp);
}

/*
 * Move a UD (or the GSI) QP to the send queue error state from the data
 * path, after a send completed in error (IBTA 10.3.1): what follows on
 * the send queue, posted or yet to be posted, is flushed until the
 * consumer moves the QP back to RTS; the receive queue goes on working.
 * Caller holds qp->lock.
 */
void softrdma_qp_enter_sqe(struct softrdma_qp *qp)
{
	WRITE_ONCE(qp->state, IB_QPS_SQE);
	softrdma_qp_need_kick(qp);
	softrdma_qp_flush_sq(qp);
}

/* Complete the send WQE at ring index @idx; qp->lock held. */
void softrdma_sq_complete(struct softrdma_qp *qp, u32 idx, u32 status)
{
	struct softrdma_swqe *s = &qp->swqe[idx & (qp->sq.num_slots - 1)];
	struct softrdma_cqe cqe = {};

	/*
	 * Release the slot before the completion is visible: a consumer that
	 * polls it and posts again at once (perftest keeps exactly the SQ's
	 * depth outstanding) must find the room. Only the kernel's copy of
	 * the WQE is read below.
	 */
	smp_store_release(&qp->sq.hdr->consumer, idx + 1);
	if (status == IB_WC_SUCCESS && !qp->sq_sig_all &&
	    !(s->wqe.flags & SOFTRDMA_WQE_SIGNALED))
		return;
	cqe.wr_id = s->wqe.wr_id;
	cqe.status = status;
	cqe.opcode = softrdma_wc_opcode(s->wqe.opcode);
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.byte_len = s->len;
	softrdma_cq_post(qp->scq, &cqe, false);
}

/**
 * softrdma_swqe_copy_body - take a send WQE's data description off the ring
 * @qp: the QP
 * @slot: the WQE's slot; qp->swqe[@slot].wqe holds its copied header
 * @body: the slot's bytes after the header, in the shared ring
 * @len: set to the message length
 *
 * Inline data goes to the slot's kernel inline buffer, an SGE list to its
 * kernel SGE array: the transport uses only these copies from then on.
 *
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_QP_OP_ERR for too much inline data,
 * an inline READ or too many SGEs.
 */
u32 softrdma_swqe_copy_body(struct softrdma_qp *qp, u32 slot, const u8 *body,
			    u64 *len)
{
	const struct softrdma_send_wqe *w = &qp->swqe[slot].wqe;
	struct softrdma_sge *sge = qp->ssge + (size_t)slot * qp->sq_max_sge;
	u32 i;

	*len = 0;
	if (w->flags & SOFTRDMA_WQE_INLINE) {
		if (w->inline_len > qp->max_inline ||
		    w->opcode == IB_WR_RDMA_READ)
			return IB_WC_LOC_QP_OP_ERR;
		memcpy(qp->sinline + (size_t)slot * qp->max_inline, body,
		       w->inline_len);
		*len = w->inline_len;
		return IB_WC_SUCCESS;
	}
	if (w->num_sge > qp->sq_max_sge)
		return IB_WC_LOC_QP_OP_ERR;
	memcpy(sge, body, w->num_sge * sizeof(*sge));
	for (i = 0; i < w->num_sge; i++)
		*len += sge[i].length;
	return IB_WC_SUCCESS;
}

/**
 * softrdma_swqe_copy_atomic - take an atomic WQE's local buffer off the ring
 * @qp: the QP
 * @slot: the WQE's slot; qp->swqe[@slot].wqe holds its copied header
 * @body: the slot's bytes after the header, in the shared ring
 *
 * The original value lands in one local buffer of 8 bytes or more.
 *
 * Return: IB_WC_SUCCESS, IB_WC_LOC_QP_OP_ERR (inline, or not one SGE) or
 * IB_WC_LOC_LEN_ERR (a buffer under 8 bytes).
 */
u32 softrdma_swqe_copy_atomic(struct softrdma_qp *qp, u32 slot, const u8 *body)
{
	struct softrdma_swqe *s = &qp->swqe[slot];
	struct softrdma_sge *sge = qp->ssge + (size_t)slot * qp->sq_max_sge;

	if (s->wqe.flags & SOFTRDMA_WQE_INLINE || s->wqe.num_sge != 1)
		return IB_WC_LOC_QP_OP_ERR;
	memcpy(sge, body, sizeof(*sge));
	if (sge->length < sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	s->len = sizeof(u64);
	return IB_WC_SUCCESS;
}

/**
 * softrdma_recv_take - take the next receive WQE for an arriving message
 * @qp: the QP; qp->lock held
 *
 * From the QP's SRQ if it has one (an XRC TGT QP: the XRC SRQ the request
 * names), else from its receive ring, into qp->resp (header and SGEs
 * copied: the ring slot is not read again).
 *
 * Return: false if there is none.
 */
bool softrdma_recv_take(struct softrdma_qp *qp)
{
	struct softrdma_srq *srq = softrdma_qp_srq(qp);
	struct softrdma_ring_hdr *hdr = qp->rq.hdr;
	u32 prod, cons;
	u8 *slot;

	if (srq) {
		if (!softrdma_srq_take(srq, &qp->resp.rwqe, qp->resp.rsge))
			return false;
		goto taken;
	}
	if (!qp->rcq)
		return false;
	/* Acquire pairs with the provider's release of its WQEs. */
	prod = smp_load_acquire(&hdr->producer);
	cons = hdr->consumer;
	if (softrdma_ring_used(prod, cons, qp->rq.num_slots) <= 0)
		return false;
	slot = softrdma_ring_slot(&qp->rq, cons);
	memcpy(&qp->resp.rwqe, slot, sizeof(qp->resp.rwqe));
	if (qp->resp.rwqe.num_sge > qp->rq_max_sge)
		qp->resp.rwqe.num_sge = 0;	/* completes with a length error */
	memcpy(qp->resp.rsge, slot + SOFTRDMA_RECV_WQE_HDR_SIZE,
	       qp->resp.rwqe.num_sge * sizeof(struct softrdma_sge));
taken:
	qp->resp.roff = 0;
	qp->resp.in_recv = true;
	return true;
}

/**
 * softrdma_recv_complete - complete the receive softrdma_recv_take() took
 * @qp: the QP; qp->lock held
 * @cqe: status, opcode, length and flags filled in; the rest is done here
 * @solicited: the message asked for a solicited event
 */
void softrdma_recv_complete(struct softrdma_qp *qp, struct softrdma_cqe *cqe,
			    bool solicited)
{
	struct softrdma_cq *cq = qp->rcq;

	/* An XRC TGT QP's go to the CQ of the XRC SRQ the request names. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		if (WARN_ON_ONCE(!qp->xrc_srq))
			return;
		cq = to_scq(qp->xrc_srq->ibsrq.ext.cq);
	}
	cqe->wr_id = qp->resp.rwqe.wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	/* A datagram's source is in its packet: the caller's. */
	if (!softrdma_qp_is_ud(qp))
		cqe->src_qp = qp->attrs.dest_qp_num;
	if (!softrdma_qp_srq(qp)) {
		/*
		 * Release the slot (an SRQ's is free already) before the
		 * completion is visible: whoever polls it may post at once.
		 */
		smp_store_release(&qp->rq.hdr->consumer,
				  qp->rq.hdr->consumer + 1);
	}
	softrdma_cq_post(cq, cqe, solicited);
	qp->resp.in_recv = false;
}

/* Carry out the local operation @s. Return: its completion status. */
u32 softrdma_local_op(struct softrdma_qp *qp, struct softrdma_swqe *s)
{
	if (s->wqe.opcode == IB_WR_REG_MR)
		return softrdma_frmr_reg(qp, s->wqe.rkey, s->wqe.imm_data);
	if (s->wqe.opcode == IB_WR_BIND_MW)
		return softrdma_mw_bind(qp, &s->wqe);
	/* A local invalidate: the key is in imm_data. */
	if (softrdma_key_invalidate(qp, s->wqe.imm_data, false))
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}
