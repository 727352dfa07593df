// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (IBTA Vol. 1 10.6.7): allocation, binding and
 * invalidation, and the lookup of an rkey that names a window.
 *
 * A window's key index is drawn from the one space MRs' are (sdev->keys,
 * where its entry is tagged SOFTRDMA_KEY_MW). A lookup holds the xarray's
 * lock until it holds the window's lock, and deallocation erases the
 * window before it takes that lock: whoever holds mw->lock may use the
 * window. Binds and invalidations run in the requester or the responder
 * under qp->lock, so mw->lock nests inside it.
 *
 * Type 1 windows are bound with ibv_bind_mw (the provider marks the WQE
 * SOFTRDMA_WQE_BIND_TYPE1) and are always valid; a zero-length bind leaves
 * them unusable. Type 2 (2B) windows are bound with a bind WQE, only while
 * free, to a non-empty range, and then serve only the QP they were bound
 * through, until a local or remote invalidation frees them.
 */
#include <linux/random.h>

#include "softrdma.h"

#define SOFTRDMA_MW_ACCESS	(IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)
/*
 * A bind may also name IB_ACCESS_LOCAL_WRITE, as programs written for
 * rdma_rxe do: a window grants remote access only, so it means nothing
 * and is dropped.
 */
#define SOFTRDMA_MW_BIND_ACCESS	(SOFTRDMA_MW_ACCESS | IB_ACCESS_LOCAL_WRITE)

int softrdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibmw->device);
	struct softrdma_mw *mw = to_smw(ibmw);
	u32 index;
	int ret;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_mws) > SOFTRDMA_MAX_MW) {
		atomic_dec(&sdev->num_mws);
		return -ENOMEM;
	}
	spin_lock_init(&mw->lock);
	mw->valid = ibmw->type == IB_MW_TYPE_1;
	/* Stored last: lookups may find it from here on. */
	ibmw->rkey = get_random_u8();
	ret = softrdma_xa_alloc_random(&sdev->keys, &index,
				       xa_tag_pointer(mw, SOFTRDMA_KEY_MW),
				       SOFTRDMA_KEY_INDICES, NULL, 0);
	if (ret < 0) {
		atomic_dec(&sdev->num_mws);
		return ret;
	}
	spin_lock_bh(&mw->lock);
	ibmw->rkey |= index << 8;
	spin_unlock_bh(&mw->lock);
	return 0;
}

/* Drop the window's MR, if any. Caller holds mw->lock. */
static void softrdma_mw_unbind(struct softrdma_mw *mw)
{
	if (mw->mr) {
		atomic_dec(&mw->mr->num_mws);
		softrdma_mr_unref(mw->mr);
		mw->mr = NULL;
	}
	mw->qp = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
}

int softrdma_dealloc_mw(struct ib_mw *ibmw)
{
	struct softrdma_dev *sdev = to_sdev(ibmw->device);
	struct softrdma_mw *mw = to_smw(ibmw);

	xa_erase_bh(&sdev->keys, softrdma_key_index(ibmw->rkey));
	/* Waits out a lookup that found it before the erase. */
	spin_lock_bh(&mw->lock);
	softrdma_mw_unbind(mw);
	mw->valid = false;
	spin_unlock_bh(&mw->lock);
	atomic_dec(&sdev->num_mws);
	return 0;
}

/*
 * The window @key names, locked (spin_unlock_bh(&mw->lock)), or NULL. With
 * @any_tag, the key's index alone names it (a bind's handle on the window,
 * which the consumer need not keep up to date with its binds).
 */
static struct softrdma_mw *softrdma_mw_lock(struct softrdma_dev *sdev,
					    u32 key, bool any_tag)
{
	struct softrdma_mw *mw;

	local_bh_disable();
	xa_lock(&sdev->keys);
	mw = softrdma_key_mw(softrdma_key_load(sdev, key));
	if (mw)
		spin_lock(&mw->lock);
	xa_unlock(&sdev->keys);
	if (!mw) {
		local_bh_enable();
		return NULL;
	}
	if (!any_tag && mw->ibmw.rkey != key) {
		spin_unlock_bh(&mw->lock);
		return NULL;
	}
	return mw;
}

/*
 * The checks of a bind (IBTA Vol. 1 10.6.7.2 and 10.6.7.3), under mw->lock.
 * @mr is the MR of a non-empty bind, found and checked for PD, bounds and
 * bind access already. Return: 0 or -EINVAL.
 */
static int softrdma_mw_bind_check(struct softrdma_qp *qp,
				  struct softrdma_mw *mw,
				  const struct softrdma_send_wqe *wqe,
				  const struct softrdma_mr *mr, u32 access)
{
	bool type1 = mw->ibmw.type == IB_MW_TYPE_1;
	u32 new_rkey = wqe->bind_mw.new_rkey;

	/* Type 1 through ibv_bind_mw only, type 2 through a bind WQE only. */
	if (type1 != !!(wqe->flags & SOFTRDMA_WQE_BIND_TYPE1))
		return -EINVAL;
	/* The window's PD is the QP's (C10-72). */
	if (mw->ibmw.pd != qp->pd)
		return -EINVAL;
	/* The new key keeps the index; its 8-bit key changes. */
	if (softrdma_key_index(new_rkey) != softrdma_key_index(mw->ibmw.rkey) ||
	    (u8)new_rkey == (u8)mw->ibmw.rkey)
		return -EINVAL;
	if (access & ~SOFTRDMA_MW_BIND_ACCESS)
		return -EINVAL;
	/* A type 2 window binds while free, and never to nothing. */
	if (!type1 && (mw->valid || !mr))
		return -EINVAL;
	/* Remote writes need a locally writable MR (C10-74). */
	if (mr && (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/**
 * softrdma_mw_bind - carry out a bind WQE
 * @qp: the QP it was posted to
 * @wqe: the kernel's copy of the WQE (see softrdma-abi.h, IBV_WR_BIND_MW)
 *
 * Return: IB_WC_SUCCESS, or IB_WC_MW_BIND_ERR with the window unchanged.
 */
u32 softrdma_mw_bind(struct softrdma_qp *qp,
		     const struct softrdma_send_wqe *wqe)
{
	const struct softrdma_bind_mw_wqe *b = &wqe->bind_mw;
	struct softrdma_mr *mr = NULL;
	struct softrdma_mw *mw;
	int err;

	if (b->length) {
		/* A reference, no hold of an ODP MR's pages: accesses hold. */
		mr = softrdma_mr_lookup(qp->sdev, qp->pd, b->mr_lkey,
					b->addr, b->length, IB_ACCESS_MW_BIND,
					&err);
		if (!mr)
			return IB_WC_MW_BIND_ERR;
	}
	mw = softrdma_mw_lock(qp->sdev, b->mw_rkey, true);
	if (!mw)
		goto err_mr;
	if (softrdma_mw_bind_check(qp, mw, wqe, mr, b->access)) {
		spin_unlock_bh(&mw->lock);
		goto err_mr;
	}
	softrdma_mw_unbind(mw);
	if (mr) {
		atomic_inc(&mr->num_mws);
		mw->mr = mr;		/* the reference goes with it */
		mw->addr = b->addr;
		mw->length = b->length;
		mw->access = b->access & SOFTRDMA_MW_ACCESS;
	}
	if (mw->ibmw.type == IB_MW_TYPE_2)
		mw->qp = qp;
	mw->valid = true;
	mw->ibmw.rkey = b->new_rkey;
	spin_unlock_bh(&mw->lock);
	return IB_WC_SUCCESS;

err_mr:
	if (mr)
		softrdma_mr_unref(mr);
	return IB_WC_MW_BIND_ERR;
}

/**
 * softrdma_mw_invalidate - invalidate a type 2 window
 * @qp: the QP the invalidation came through
 * @rkey: the window's current rkey
 * @remote: a SEND with Invalidate (the window must be bound through @qp),
 *	    else a local invalidate WQE
 *
 * Type 1 windows, free windows and keys that name no window are not
 * invalidated (o10-37.2.26).
 *
 * Return: 0, or -EINVAL.
 */
int softrdma_mw_invalidate(struct softrdma_qp *qp, u32 rkey, bool remote)
{
	struct softrdma_mw *mw = softrdma_mw_lock(qp->sdev, rkey, false);
	int ret = -EINVAL;

	if (!mw)
		return -EINVAL;
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->valid &&
	    mw->ibmw.pd == qp->pd && (!remote || mw->qp == qp)) {
		softrdma_mw_unbind(mw);
		mw->valid = false;
		ret = 0;
	}
	spin_unlock_bh(&mw->lock);
	return ret;
}

/**
 * softrdma_mw_get_mr - the MR behind a window's rkey, for a remote access
 * @qp: the QP the access came through
 * @key: the rkey, one that names a window
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: IB_ACCESS_REMOTE_* flags the access needs
 * @err: as softrdma_mr_get() sets it
 *
 * Return: the window's MR with a reference held (softrdma_mr_unref()), the
 * access inside the window and allowed by it; or NULL. An ODP MR's pages
 * are not held: the caller holds them (softrdma_rkey_get()).
 */
struct softrdma_mr *softrdma_mw_get_mr(struct softrdma_qp *qp, u32 key,
				       u64 iova, u64 len, int access,
				       int *err)
{
	struct softrdma_mw *mw = softrdma_mw_lock(qp->sdev, key, false);
	struct softrdma_mr *mr = NULL;

	*err = -ENOENT;
	if (!mw)
		return NULL;
	if (!mw->valid || !mw->mr || mw->ibmw.pd != qp->pd ||
	    (mw->ibmw.type == IB_MW_TYPE_2 && mw->qp != qp))
		goto out;
	*err = -EACCES;
	if ((mw->access & access) != access)
		goto out;
	*err = -ERANGE;
	if (iova < mw->addr || len > mw->length ||
	    iova - mw->addr > mw->length - len)
		goto out;
	mr = mw->mr;
	refcount_inc(&mr->refs);	/* the window holds one */
out:
	spin_unlock_bh(&mw->lock);
	return mr;
}
