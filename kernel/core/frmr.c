// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fast-registration MRs for kernel consumers: alloc_mr() makes one without
 * memory, map_mr_sg() gives it a page list, an IB_WR_REG_MR work request
 * makes a key of it valid (with the key's new 8-bit part, access flags, iova
 * and length) and IB_WR_LOCAL_INV or a SEND_WITH_INV from the peer makes it
 * invalid again. Work requests run in send queue order (both requesters).
 *
 * softrdma has no DMA device, so the page addresses ib_sg_to_pages() hands
 * over are kernel virtual addresses.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "softrdma.h"

#define SOFTRDMA_FRMR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			      IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			      IB_ACCESS_RELAXED_ORDERING)

struct ib_mr *softrdma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				u32 max_num_sg)
{
	struct softrdma_dev *sdev = to_sdev(ibpd->device);
	struct softrdma_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SOFTRDMA_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = SOFTRDMA_MR_FRMR;
	mr->fr.max_pages = max_num_sg;
	mr->fr.pages = kvcalloc(max_num_sg, sizeof(*mr->fr.pages), GFP_KERNEL);
	if (!mr->fr.pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = softrdma_mr_keys(sdev, mr);
	if (ret)
		goto err_pages;
	/* Invalid until an IB_WR_REG_MR names it. */
	mr->fr.key = mr->ibmr.lkey;
	return &mr->ibmr;

err_pages:
	kvfree(mr->fr.pages);
err_free:
	kfree(mr);
	return ERR_PTR(ret);
}

void softrdma_frmr_free(struct softrdma_mr *mr)
{
	kvfree(mr->fr.pages);
	mr->fr.pages = NULL;
}

static int softrdma_frmr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct softrdma_mr *mr = to_smr(ibmr);

	if (mr->fr.npages == mr->fr.max_pages)
		return -ENOMEM;
	if (!softrdma_kva_ok(addr, BIT_ULL(mr->fr.page_shift)))
		return -EINVAL;
	mr->fr.pages[mr->fr.npages++] = addr;
	return 0;
}

int softrdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset)
{
	struct softrdma_mr *mr = to_smr(ibmr);
	int n;

	/* The core set ibmr->page_size; smaller than a page is not for us. */
	if (!is_power_of_2(ibmr->page_size) || ibmr->page_size < PAGE_SIZE)
		return -EINVAL;
	mr->fr.npages = 0;
	mr->fr.page_shift = ilog2(ibmr->page_size);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			   softrdma_frmr_set_page);
	mr->fr.off0 = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/* Does @key name @mr, a valid fast-registration MR? */
bool softrdma_frmr_key_ok(struct softrdma_mr *mr, u32 key)
{
	/* Acquire pairs with the release in softrdma_frmr_reg(). */
	return smp_load_acquire(&mr->fr.valid) && READ_ONCE(mr->fr.key) == key;
}

/* softrdma_mr_page() for a fast-registration MR. */
struct page *softrdma_frmr_page(struct softrdma_mr *mr, u64 iova,
				size_t *off, size_t *room)
{
	u64 pos = iova - mr->iova + mr->fr.off0;
	u64 psize = BIT_ULL(mr->fr.page_shift);
	u64 addr = mr->fr.pages[pos >> mr->fr.page_shift] + (pos & (psize - 1));
	struct page *page = softrdma_kva_page(addr, off);

	*room = min_t(u64, PAGE_SIZE - *off, psize - (pos & (psize - 1)));
	return page;
}

/*
 * The fast-registration MR of @pd whose index @key names, with an RCU read
 * lock held (the caller's), or NULL.
 */
static struct softrdma_mr *softrdma_frmr_find(struct softrdma_dev *sdev,
					      struct ib_pd *pd, u32 key)
{
	struct softrdma_mr *mr;

	mr = softrdma_key_mr(softrdma_key_load(sdev, key));

	if (!mr || mr->type != SOFTRDMA_MR_FRMR || mr->ibmr.pd != pd)
		return NULL;
	return mr;
}

/**
 * softrdma_frmr_reg - execute an IB_WR_REG_MR work request
 * @qp: the QP whose send queue holds it
 * @key: the new key (the MR's index, a new 8-bit part)
 * @access: the access flags it grants
 *
 * The MR takes the iova, length and page list map_mr_sg() gave it.
 *
 * Return: the work completion status.
 */
u32 softrdma_frmr_reg(struct softrdma_qp *qp, u32 key, int access)
{
	struct softrdma_mr *mr;
	u32 status = IB_WC_SUCCESS;
	u64 mapped;

	/* A process has no fast-registration MR of its own. */
	if (qp->user || (access & ~SOFTRDMA_FRMR_ACCESS))
		return IB_WC_LOC_QP_OP_ERR;
	rcu_read_lock();
	mr = softrdma_frmr_find(qp->sdev, qp->pd, key);
	if (!mr || READ_ONCE(mr->fr.valid)) {
		status = IB_WC_LOC_PROT_ERR;
		goto out;
	}
	mapped = ((u64)mr->fr.npages << mr->fr.page_shift) - mr->fr.off0;
	if (!mr->fr.npages || mr->ibmr.length > mapped) {
		status = IB_WC_LOC_LEN_ERR;
		goto out;
	}
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->access = access;
	WRITE_ONCE(mr->fr.key, key);
	/* Release: an access that sees it valid sees it whole. */
	smp_store_release(&mr->fr.valid, true);
out:
	rcu_read_unlock();
	return status;
}

/**
 * softrdma_frmr_invalidate - invalidate a fast-registration MR's key
 * @sdev: the device
 * @pd: the PD of the QP asking (local) or receiving the request (remote)
 * @key: the key
 *
 * Accesses already under way finish; new ones through @key fail.
 *
 * Return: 0, or -ENOENT if @key names no fast-registration MR of @pd (a
 * memory window may be what it names).
 */
int softrdma_frmr_invalidate(struct softrdma_dev *sdev, struct ib_pd *pd,
			     u32 key)
{
	struct softrdma_mr *mr;
	int ret = -ENOENT;

	rcu_read_lock();
	mr = softrdma_frmr_find(sdev, pd, key);
	if (mr && READ_ONCE(mr->fr.key) == key) {
		WRITE_ONCE(mr->fr.valid, false);
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}
