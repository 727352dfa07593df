// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles: the destinations of UD sends, kernel and user.
 *
 * An AH gets a number in its device's table, which a UD WQE names it by
 * (struct softrdma_ud_wqe's ah_num; a process learns it from
 * struct softrdma_create_ah_resp). The requester looks the number up
 * under the table's lock and takes the AH only if it belongs to the
 * QP's PD. What the address vector means on the wire is the
 * transport's: its ah_init hook turns it into its route, kept behind
 * the core's AH. A transport without AHs (iWARP) lacks these verbs.
 *
 * The verbs may be called in atomic context (the IB CM creates and
 * destroys AHs under spinlocks with interrupts off): nothing here
 * sleeps, and the table's lock is taken with interrupts saved.
 */
#include <rdma/uverbs_ioctl.h>

#include "softrdma.h"

void softrdma_ahs_init(struct softrdma_dev *sdev)
{
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
}

void softrdma_ahs_destroy(struct softrdma_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->ahs));
	xa_destroy(&sdev->ahs);
}

int softrdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibah->device);
	const struct softrdma_transport *t = sdev->transport;
	struct softrdma_create_ah_resp resp = {};
	struct softrdma_ah *ah = to_sah(ibah);
	struct rdma_ah_attr *attr = init->ah_attr;
	gfp_t gfp = (init->flags & RDMA_CREATE_AH_SLEEPABLE) ?
		    GFP_KERNEL : GFP_ATOMIC;
	unsigned long flags;
	u32 num;
	int ret;

	if (!t->ah_init)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	/* RoCE addresses are GIDs: a GRH, with its source GID resolved. */
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    !attr->grh.sgid_attr || rdma_ah_get_port_num(attr) != 1)
		return -EINVAL;
	ret = t->ah_init(ah, attr);
	if (ret)
		return ret;
	ah->attr = *attr;
	ah->attr.grh.sgid_attr = NULL;

	if (atomic_inc_return(&sdev->num_ahs) > SOFTRDMA_MAX_AH) {
		ret = -ENOMEM;
		goto err_count;
	}
	xa_lock_irqsave(&sdev->ahs, flags);
	ret = __xa_alloc_cyclic(&sdev->ahs, &num, ah,
				XA_LIMIT(1, SOFTRDMA_MAX_AH), &sdev->next_ah_num,
				gfp);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (ret < 0)
		goto err_count;
	ah->ah_num = num;
	if (!udata)
		return 0;
	resp.ah_num = num;
	ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (ret)
		goto err_num;
	return 0;

err_num:
	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_erase(&sdev->ahs, num);
	xa_unlock_irqrestore(&sdev->ahs, flags);
err_count:
	atomic_dec(&sdev->num_ahs);
	return ret;
}

int softrdma_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct softrdma_dev *sdev = to_sdev(ibah->device);
	struct softrdma_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	/* Once out of the table under its lock, no requester holds it. */
	xa_lock_irqsave(&sdev->ahs, irqflags);
	__xa_erase(&sdev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ahs, irqflags);
	atomic_dec(&sdev->num_ahs);
	return 0;
}

int softrdma_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_sah(ibah)->attr;
	return 0;
}

/**
 * softrdma_ah_lock - find the AH a UD WQE names
 * @qp: the sending QP
 * @ah_num: the WQE's ah_num (any value)
 * @flags: for softrdma_ah_unlock()
 *
 * Return: the AH, with the device's AH table locked (copy what is needed,
 * then softrdma_ah_unlock()), or NULL, unlocked, if @ah_num names no AH of
 * @qp's PD.
 */
struct softrdma_ah *softrdma_ah_lock(struct softrdma_qp *qp, u32 ah_num,
				     unsigned long *flags)
{
	struct softrdma_dev *sdev = qp->sdev;
	struct softrdma_ah *ah;

	xa_lock_irqsave(&sdev->ahs, *flags);
	ah = xa_load(&sdev->ahs, ah_num);
	if (ah && ah->ibah.pd == qp->pd)
		return ah;
	xa_unlock_irqrestore(&sdev->ahs, *flags);
	return NULL;
}

void softrdma_ah_unlock(struct softrdma_qp *qp, unsigned long flags)
{
	xa_unlock_irqrestore(&qp->sdev->ahs, flags);
}
