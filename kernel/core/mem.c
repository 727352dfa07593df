// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions as the transports use them: key lookup with every check
 * the verbs ask for (key, PD, access, bounds to the byte) and copies to and
 * from the pinned pages of a user MR, from any context.
 */
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "softrdma.h"

/* Record the pages of a freshly pinned user MR. */
int softrdma_mr_init_pages(struct softrdma_mr *mr)
{
	struct sg_page_iter iter;
	size_t n = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (n == mr->npages)
			break;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	mr->page_offset = ib_umem_offset(mr->umem);
	return 0;
}

/* Drop the registration's own reference and wait out every user. */
void softrdma_mr_quiesce(struct softrdma_mr *mr)
{
	if (!refcount_dec_and_test(&mr->refs))
		wait_for_completion(&mr->released);
}

void softrdma_mr_put(struct softrdma_mr *mr)
{
	if (refcount_dec_and_test(&mr->refs))
		complete(&mr->released);
}

/**
 * softrdma_mr_get - find the MR a key names and check an access to it
 * @sdev: the device
 * @pd: the PD the access is made on behalf of
 * @key: lkey or rkey
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: IB_ACCESS_* flags the access needs (0 for a local read)
 * @err: set to why, when NULL is returned: -ENOENT (no such key or wrong
 *	 PD), -EACCES (access not granted), -ERANGE (out of bounds)
 *
 * Return: the MR with a reference held (softrdma_mr_put()), or NULL.
 */
struct softrdma_mr *softrdma_mr_get(struct softrdma_dev *sdev,
				    struct ib_pd *pd, u32 key, u64 iova,
				    u64 len, int access, int *err)
{
	struct softrdma_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mrs, key >> 8);
	if (!mr || mr->ibmr.lkey != key || mr->ibmr.pd != pd || !mr->umem ||
	    !refcount_inc_not_zero(&mr->refs)) {
		rcu_read_unlock();
		*err = -ENOENT;
		return NULL;
	}
	rcu_read_unlock();
	if ((mr->access & access) != access) {
		*err = -EACCES;
		goto out_put;
	}
	if (iova < mr->iova || len > mr->length ||
	    iova - mr->iova > mr->length - len) {
		*err = -ERANGE;
		goto out_put;
	}
	return mr;

out_put:
	softrdma_mr_put(mr);
	return NULL;
}

/**
 * softrdma_rkey_get - find the MR an rkey gives a remote access to
 * @qp: the QP the access came through
 * @key: the rkey: an MR's, or a memory window's (mw.c)
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: IB_ACCESS_REMOTE_* flags the access needs
 * @err: as softrdma_mr_get() sets it
 *
 * A window's rkey resolves to its MR, the access checked against the
 * window's bounds and access instead of the MR's.
 *
 * Return: the MR with a reference held (softrdma_mr_put()), or NULL.
 */
struct softrdma_mr *softrdma_rkey_get(struct softrdma_qp *qp, u32 key,
				      u64 iova, u64 len, int access, int *err)
{
	if (softrdma_key_is_mw(key))
		return softrdma_mw_get_mr(qp, key, iova, len, access, err);
	return softrdma_mr_get(qp->sdev, qp->ibqp.pd, key, iova, len, access,
			       err);
}

/**
 * softrdma_local_inv - carry out a local invalidate WQE
 * @qp: the QP it was posted to
 * @key: the key to invalidate
 *
 * Only type 2 memory windows are invalidated yet; any other key is not.
 *
 * Return: 0, or -EINVAL.
 */
int softrdma_local_inv(struct softrdma_qp *qp, u32 key)
{
	if (softrdma_key_is_mw(key))
		return softrdma_mw_invalidate(qp, key, false);
	return -EINVAL;
}

/**
 * softrdma_mr_copy - copy between an MR and a kernel buffer
 * @mr: an MR obtained with softrdma_mr_get() for this very range
 * @iova: first byte in the MR
 * @buf: the kernel buffer
 * @len: bytes
 * @to_mr: true to write the MR, false to read it
 */
void softrdma_mr_copy(struct softrdma_mr *mr, u64 iova, void *buf, u64 len,
		      bool to_mr)
{
	u64 pos = iova - mr->iova + mr->page_offset;
	u8 *p = buf;

	while (len) {
		struct page *page = mr->pages[pos >> PAGE_SHIFT];
		size_t off = offset_in_page(pos);
		size_t n = min_t(u64, len, PAGE_SIZE - off);
		u8 *va = kmap_local_page(page);

		if (to_mr)
			memcpy(va + off, p, n);
		else
			memcpy(p, va + off, n);
		kunmap_local(va);
		p += n;
		pos += n;
		len -= n;
	}
}

/**
 * softrdma_mr_atomic - an 8-byte atomic operation on an MR
 * @mr: an MR obtained with softrdma_mr_get() for 8 bytes at @iova
 * @iova: the operand's address; naturally aligned
 * @cmp_swap: compare and swap (else fetch and add)
 * @compare: the value compared with (compare and swap)
 * @swap_add: the value swapped in, or added
 * @orig: set to the operand's value before the operation
 *
 * The operation is atomic against the CPUs (the process may use atomics of
 * its own on the same word) and against every other responder.
 *
 * Return: 0, or -EINVAL if the operand is not naturally aligned in memory.
 */
int softrdma_mr_atomic(struct softrdma_mr *mr, u64 iova, bool cmp_swap,
		       u64 compare, u64 swap_add, u64 *orig)
{
	u64 pos = iova - mr->iova + mr->page_offset;
	u8 *va;
	u64 *p, old;

	if (pos & 7)
		return -EINVAL;
	va = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);
	p = (u64 *)(va + offset_in_page(pos));
	if (cmp_swap) {
		old = cmpxchg64(p, compare, swap_add);
	} else {
		old = READ_ONCE(*p);
		while (!try_cmpxchg64(p, &old, old + swap_add))
			;
	}
	kunmap_local(va);
	*orig = old;
	return 0;
}
