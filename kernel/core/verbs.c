// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Verbs shared by both transports: user contexts, PDs, CQs and MRs (the QPs
 * are in qp.c, posting and kicks in kpost.c, fast registration in
 * frmr.c).
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "softrdma.h"

static int softrdma_alloc_ucontext(struct ib_ucontext *ibuc,
				   struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibuc->device);
	const struct softrdma_transport *t = sdev->transport;
	struct softrdma_alloc_ucontext_resp resp = {
		.abi_version = SOFTRDMA_UVERBS_ABI_VERSION,
		.transport = t->abi_id,
		.ring_hdr_size = SOFTRDMA_RING_HDR_SIZE,
		.cqe_size = SOFTRDMA_CQE_SIZE,
		.ece_caps = t->ece_caps_now ? t->ece_caps_now() : t->ece_caps,
	};

	/* A provider older than ece_caps asks for less: what it knows. */
	if (udata->outlen < SOFTRDMA_UCONTEXT_RESP_MIN)
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp,
				min_t(size_t, udata->outlen, sizeof(resp)));
}

static void softrdma_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

static int softrdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibpd->device);

	if (atomic_inc_return(&sdev->num_pds) > SOFTRDMA_MAX_PD) {
		atomic_dec(&sdev->num_pds);
		return -ENOMEM;
	}
	return 0;
}

static int softrdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pds);
	return 0;
}

static int softrdma_create_cq(struct ib_cq *ibcq,
			      const struct ib_cq_init_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct softrdma_dev *sdev = to_sdev(ibcq->device);
	struct softrdma_cq *cq = to_scq(ibcq);
	struct softrdma_create_cq_resp resp = {};
	u32 num_slots;
	int ret;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	num_slots = softrdma_ring_slots(attr->cqe, SOFTRDMA_MAX_CQE);
	if (!num_slots)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_cqs) > SOFTRDMA_MAX_CQ) {
		ret = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	cq->sdev = sdev;
	cq->user = !!udata;
	ret = softrdma_ring_init(&cq->ring, num_slots, SOFTRDMA_CQE_SIZE);
	if (ret)
		goto err_count;
	ibcq->cqe = num_slots;

	if (udata) {
		struct softrdma_ucontext *suc =
			rdma_udata_to_drv_context(udata,
						  struct softrdma_ucontext,
						  ibuc);

		ret = softrdma_ring_map(&cq->ring, &suc->ibuc,
					&resp.mmap_offset);
		if (ret)
			goto err_ring;
		resp.mmap_size = cq->ring.size;
		resp.num_slots = num_slots;
		resp.flags = SOFTRDMA_CQ_ARM_MAPPED;
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_ring;
	}
	return 0;

err_ring:
	softrdma_ring_free(&cq->ring);
err_count:
	atomic_dec(&sdev->num_cqs);
	return ret;
}

COMPAT_ADAPT_CREATE_CQ(softrdma_create_cq);

static int softrdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softrdma_cq *cq = to_scq(ibcq);

	softrdma_ring_free(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->num_cqs);
	return 0;
}

static void softrdma_cqe_to_wc(const struct softrdma_cqe *cqe,
			       struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->network_hdr_type = cqe->network_hdr_type;
	wc->port_num = 1;
	if (cqe->flags & SOFTRDMA_CQE_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = (__force __be32)cqe->imm_data;
	} else if (cqe->flags & SOFTRDMA_CQE_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->imm_data;
	}
	if (cqe->flags & SOFTRDMA_CQE_GRH) {
		/* A datagram: what ib_init_ah_attr_from_wc() reads. */
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_SMAC;
		memcpy(wc->smac, cqe->smac, ETH_ALEN);
		if (cqe->network_hdr_type)
			wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	}
}

/* Kernel consumers poll here; user CQs are polled in the provider. */
static int softrdma_poll_cq(struct ib_cq *ibcq, int num_entries,
			    struct ib_wc *wc)
{
	struct softrdma_cq *cq = to_scq(ibcq);
	struct softrdma_ring *ring = &cq->ring;
	unsigned long flags;
	u32 prod, cons;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	/* Pairs with the producer's release: CQEs before the index. */
	prod = smp_load_acquire(&ring->hdr->producer);
	cons = ring->hdr->consumer;
	while (n < num_entries && cons != prod) {
		const struct softrdma_cqe *cqe = softrdma_ring_slot(ring, cons);
		struct softrdma_qp *qp;

		softrdma_cqe_to_wc(cqe, &wc[n]);
		/* The consumer destroys a QP only once its CQEs are polled. */
		qp = xa_load(&cq->sdev->qps, cqe->qp_num);
		wc[n].qp = qp ? &qp->ibqp : NULL;
		cons++;
		n++;
	}
	/* Our reads of the slots are done before the producer reuses them. */
	smp_store_release(&ring->hdr->consumer, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/* Arm @cq for the next completion, or the next solicited one (@flags). */
static void softrdma_cq_arm(struct softrdma_cq *cq, u8 flags)
{
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags;
}

/*
 * A user CQ's arming through its ring header (SOFTRDMA_CQ_ARM_MAPPED),
 * after a new producer index: a changed arm word is a request. The full
 * barrier pairs with the consumer's between arming and polling: either
 * it sees this CQE, or this sees its request. Caller holds cq->lock.
 */
static void softrdma_cq_arm_mapped(struct softrdma_cq *cq)
{
	u32 arm;

	/* The new producer index before the arm word: see above. */
	smp_mb();
	arm = READ_ONCE(cq->ring.hdr->arm);
	if (arm == cq->arm_seen)
		return;
	softrdma_cq_arm(cq, (arm ^ cq->arm_seen) & SOFTRDMA_CQ_ARM_NEXT ?
			    IB_CQ_NEXT_COMP : IB_CQ_SOLICITED);
	cq->arm_seen = arm;
}

/**
 * softrdma_cq_post - produce one completion
 * @cq: the CQ
 * @cqe: the completion
 * @solicited: it completes a solicited receive
 *
 * Return: 0, or -ENOSPC if the CQ is full (or its consumer index makes no
 * sense): the CQ is then in error and its owner is told.
 */
int softrdma_cq_post(struct softrdma_cq *cq, const struct softrdma_cqe *cqe,
		     bool solicited)
{
	struct softrdma_ring *ring = &cq->ring;
	struct softrdma_ring_hdr *hdr = ring->hdr;
	struct ib_cq *ibcq = &cq->ibcq;
	unsigned long flags;
	bool notify = false;
	u32 prod;
	int used;

	spin_lock_irqsave(&cq->lock, flags);
	prod = hdr->producer;
	used = softrdma_ring_used(prod, READ_ONCE(hdr->consumer),
				  ring->num_slots);
	if (used < 0 || used == ring->num_slots) {
		WRITE_ONCE(hdr->flags, hdr->flags | SOFTRDMA_RING_ERROR);
		spin_unlock_irqrestore(&cq->lock, flags);
		if (ibcq->event_handler) {
			struct ib_event ev = {
				.device = ibcq->device,
				.element.cq = ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			ibcq->event_handler(&ev, ibcq->cq_context);
		}
		return -ENOSPC;
	}
	memcpy(softrdma_ring_slot(ring, prod), cqe, sizeof(*cqe));
	/* Release: the consumer sees the CQE before the new index. */
	smp_store_release(&hdr->producer, prod + 1);
	if (cq->user)
		softrdma_cq_arm_mapped(cq);
	/* A solicited arming also fires on a completion in error. */
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || cqe->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (notify && ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
	return 0;
}

static int softrdma_req_notify_cq(struct ib_cq *ibcq,
				  enum ib_cq_notify_flags flags)
{
	struct softrdma_cq *cq = to_scq(ibcq);
	struct softrdma_ring_hdr *hdr = cq->ring.hdr;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	softrdma_cq_arm(cq, flags & IB_CQ_SOLICITED_MASK);
	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		/*
		 * Acquire pairs with the producer's release of new CQEs. A
		 * consumer index from userspace that makes no sense counts
		 * as "completions pending": the caller polls and sees why.
		 */
		u32 prod = smp_load_acquire(&hdr->producer);

		ret = softrdma_ring_used(prod, READ_ONCE(hdr->consumer),
					 cq->ring.num_slots) != 0;
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* Allocate the key of @mr: a random index, a random 8-bit key. */
int softrdma_mr_keys(struct softrdma_dev *sdev, struct softrdma_mr *mr)
{
	u32 index;
	int ret;

	if (atomic_inc_return(&sdev->num_mrs) > SOFTRDMA_MAX_MR) {
		atomic_dec(&sdev->num_mrs);
		return -ENOMEM;
	}
	refcount_set(&mr->refs, 1);
	init_completion(&mr->released);
	ret = softrdma_xa_alloc_random(&sdev->keys, &index,
				       xa_tag_pointer(mr, SOFTRDMA_KEY_MR),
				       SOFTRDMA_KEY_INDICES, NULL, 0);
	if (ret < 0) {
		atomic_dec(&sdev->num_mrs);
		return ret;
	}
	mr->ibmr.lkey = index << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	return 0;
}

static void softrdma_mr_drop_keys(struct softrdma_dev *sdev,
				  struct softrdma_mr *mr)
{
	xa_erase_bh(&sdev->keys, softrdma_key_index(mr->ibmr.lkey));
	atomic_dec(&sdev->num_mrs);
	/*
	 * No new access can find it now: take it back from the responders
	 * that keep it, then wait out the accesses in flight.
	 */
	softrdma_mr_evict(sdev, mr);
	softrdma_mr_quiesce(mr);
}

/*
 * FLUSH_GLOBAL reaches us only where the transport advertises RDMA FLUSH
 * (ib_core checks IB_DEVICE_FLUSH_GLOBAL): softroce.
 */
#define SOFTRDMA_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			    IB_ACCESS_RELAXED_ORDERING | IB_ACCESS_MW_BIND | \
			    IB_ACCESS_FLUSH_GLOBAL)

static struct ib_mr *softrdma_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct softrdma_dev *sdev = to_sdev(ibpd->device);
	struct softrdma_mr *mr;
	int ret;

	if (access & ~SOFTRDMA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* Kernel consumers' DMA addresses are kernel virtual addresses. */
	mr->type = SOFTRDMA_MR_DMA;
	mr->access = access;
	mr->length = U64_MAX;
	ret = softrdma_mr_keys(sdev, mr);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

static struct ib_mr *softrdma_reg_user_mr(struct ib_pd *ibpd, u64 start,
					  u64 length, u64 iova, int access,
					  struct ib_dmah *dmah,
					  struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibpd->device);
	struct softrdma_mr *mr;
	int ret;

	/* No DMA, so no DMA handle (TPH steering) to honour. */
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	if (access & IB_ACCESS_ON_DEMAND)
		return softrdma_odp_reg(ibpd, start, length, iova, access);
	if (access & ~SOFTRDMA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > SOFTRDMA_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = SOFTRDMA_MR_USER;
	mr->umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_free;
	}
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	ret = softrdma_mr_init_pages(mr);
	if (ret)
		goto err_umem;
	ret = softrdma_mr_keys(sdev, mr);
	if (ret)
		goto err_pages;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(ret);
}

COMPAT_ADAPT_REG_USER_MR(softrdma_reg_user_mr);

/*
 * ibv_rereg_mr. A new PD or new access rights change the MR in place and
 * keep its keys (the core sets the new PD once this returns NULL). A new
 * range, or write access to pages pinned without it, makes a new MR with
 * new keys over the new (or same) range, which the core puts in the old
 * one's place before it deregisters the old one.
 */
static struct ib_mr *softrdma_rereg_user_mr(struct ib_mr *ibmr, int flags,
					    u64 start, u64 length, u64 iova,
					    int access, struct ib_pd *ibpd,
					    struct ib_udata *udata)
{
	struct softrdma_mr *mr = to_smr(ibmr);
	int new_access = flags & IB_MR_REREG_ACCESS ? access : mr->access;

	if (mr->type != SOFTRDMA_MR_USER)
		return ERR_PTR(-EINVAL);
	if (new_access & ~SOFTRDMA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	/* Bound windows rely on its range and rights. */
	if (atomic_read(&mr->num_mws))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		if (!ib_access_writable(new_access) || mr->umem->writable) {
			WRITE_ONCE(mr->access, new_access);
			return NULL;
		}
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	return softrdma_reg_user_mr(ibpd, start, length, iova, new_access,
				    NULL, udata);
}

static int softrdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softrdma_mr *mr = to_smr(ibmr);

	/* Bound windows hold references: the verbs make this an error. */
	if (atomic_read(&mr->num_mws))
		return -EBUSY;
	softrdma_mr_drop_keys(to_sdev(ibmr->device), mr);
	if (mr->type == SOFTRDMA_MR_FRMR)
		softrdma_frmr_free(mr);
	if (mr->type == SOFTRDMA_MR_ODP)
		softrdma_odp_dereg(mr);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	/* Lookups under RCU may still read the struct. */
	kfree_rcu(mr, rcu);
	return 0;
}

const struct ib_device_ops softrdma_common_ops = {
	.alloc_ucontext = softrdma_alloc_ucontext,
	.dealloc_ucontext = softrdma_dealloc_ucontext,
	.mmap = softrdma_mmap,
	.mmap_free = softrdma_mmap_free,
	.alloc_pd = softrdma_alloc_pd,
	.dealloc_pd = softrdma_dealloc_pd,
	.create_cq = COMPAT_OP_CREATE_CQ(softrdma_create_cq),
	.destroy_cq = softrdma_destroy_cq,
	.poll_cq = softrdma_poll_cq,
	.req_notify_cq = softrdma_req_notify_cq,
	.get_dma_mr = softrdma_get_dma_mr,
	.reg_user_mr = COMPAT_OP_REG_USER_MR(softrdma_reg_user_mr),
	.rereg_user_mr = softrdma_rereg_user_mr,
	.dereg_mr = softrdma_dereg_mr,
	.advise_mr = softrdma_advise_mr,
	.create_qp = softrdma_create_qp,
	.modify_qp = softrdma_modify_qp,
	.destroy_qp = softrdma_destroy_qp,
	.query_qp = softrdma_query_qp,
	.post_send = softrdma_post_send,
	.post_recv = softrdma_post_recv,
	.post_srq_recv = softrdma_post_srq_recv,
	.alloc_mr = softrdma_alloc_mr,
	.map_mr_sg = softrdma_map_mr_sg,
	.create_srq = softrdma_create_srq,
	.modify_srq = softrdma_modify_srq,
	.query_srq = softrdma_query_srq,
	.destroy_srq = softrdma_destroy_srq,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, softrdma_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, softrdma_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, softrdma_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_srq, softrdma_srq, ibsrq),
};
