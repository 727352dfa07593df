// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging: user MRs whose pages are not pinned (IB_ACCESS_ON_DEMAND).
 *
 * ib_umem_odp tracks the range through an MMU interval notifier, faults
 * pages in with hmm_range_fault() and keeps, per page, whether it is
 * mapped and writable. softrdma has no DMA device: a mapped page is used
 * by the CPU, copied to and from in whatever context the transport runs.
 *
 * The accesses read a page table of the MR's own (its ranges' pages), as a
 * NIC reads its MTT: a fault copies what the umem mapped into it under the
 * umem's mutex, an invalidation clears it. The umem's own list is not
 * for them: hmm_range_fault() writes it with no lock held, possibly what
 * it read before an invalidation that has since run.
 *
 * An access (softrdma_mr_get() .. softrdma_mr_put()) holds the MR's pages:
 * it counts itself in odp->users, then keeps the hold only if no
 * invalidation runs and every page of its range is present with the
 * rights it needs; it takes no lock and never sleeps. An invalidation
 * (munmap, madvise, fork's copy on write, migration, reclaim) bars new
 * holds (odp->blocked), waits for the users to go, then unmaps its range:
 * no byte is ever copied to or from a page the process no longer has
 * there. A full barrier stands between each side's write and its read of
 * the other's word: either the access sees the invalidation and lets go,
 * or the invalidation sees the access and waits for it.
 *
 * A responder's access through the MR its QP keeps (softrdma_resp_mr_get())
 * is held by qp->lock alone, with no count, and the QP remembers the range
 * it found present, up to SOFTRDMA_ODP_KEPT_AHEAD pages at a time
 * (softrdma_odp_hold_kept()): the packets after it are checked against
 * that range as a pinned MR's are against its bounds, and look at no
 * page. An invalidation of an MR some QP keeps bars holds, then takes the
 * lock of each QP of the device and clears the range of those that keep
 * it (softrdma_odp_fence_kept()): such an access either ended before, or
 * finds no range and sees the bar.
 *
 * A page not present is never faulted in where the access runs (softirq,
 * or under the QP's spinlock): the access fails with -EBUSY and the fault
 * is queued to a worker, which faults the range in with the process's mm
 * (ib_umem_odp_map_dma_and_lock()). The transport tries again later: the
 * RoCE responder answers an RNR NAK, the requester sends at the next tick,
 * the completer drops the READ response (the retry timer asks again), a UD
 * QP keeps the datagram for its next tick (roce/ud.c); the iWARP receiver
 * stops taking the stream until the fault is done (iwarp/rx.c), and its
 * sender, in process context, waits for it (softrdma_odp_flush()). A
 * fault that fails (the range is not mapped any more) makes the next
 * access of that range fail with -EFAULT: an error completion, or a NAK.
 *
 * ibv_advise_mr's prefetch faults in the process's context, at once.
 */
#include <linux/bitmap.h>
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>

#include "softrdma.h"

#if SOFTRDMA_ODP

/* The faults of every ODP MR: softrdma_odp_flush() waits for them. */
static struct workqueue_struct *softrdma_odp_wq;

/*
 * A fault brings in up to this much past the access that asked for it
 * (within the MR): a message's later packets then find their pages, not
 * one RNR NAK or one requester tick per page.
 */
#define SOFTRDMA_ODP_AHEAD	SZ_256K

/*
 * An implicit MR (the whole address space) maps it in children of this
 * size, aligned, each with its own umem and MMU notifier, made by the
 * first fault or prefetch that touches it and kept until deregistration.
 */
#define SOFTRDMA_ODP_CHILD_SHIFT	24
#define SOFTRDMA_ODP_CHILD_SIZE		BIT_ULL(SOFTRDMA_ODP_CHILD_SHIFT)
#define SOFTRDMA_ODP_CHILD_PAGES	(SOFTRDMA_ODP_CHILD_SIZE >> PAGE_SHIFT)

/* Pages a kept MR's responder finds present at a time, ahead of it. */
#define SOFTRDMA_ODP_KEPT_AHEAD	64

/* A range of the address space an ODP MR maps: the MR's, or a child's. */
struct softrdma_odp_range {
	struct ib_umem_odp *umem;
	struct softrdma_odp *odp;
	u64 start, end;			/* the umem's, in whole pages */
	/*
	 * The pages accesses may use, per PAGE_SIZE page from
	 * ib_umem_start(), NULL where not mapped (a not implicit MR's is
	 * its mr->pages, read as a pinned MR's is), and which of them are
	 * mapped writable. Set under umem_mutex (the bit before the page),
	 * cleared under it with no users.
	 */
	struct page **pages;
	unsigned long *writable;
};

/* The ODP state of an MR. */
struct softrdma_odp {
	struct ib_umem_odp *umem;	/* the MR's; an implicit one's root */
	struct softrdma_mr *mr;
	struct softrdma_dev *sdev;
	bool implicit;			/* the whole address space */
	struct softrdma_odp_range whole;	/* not implicit: all of it */
	/* Implicit: the children, by address >> SOFTRDMA_ODP_CHILD_SHIFT. */
	struct xarray children;
	/*
	 * One fault (or prefetch) of the MR at a time: no other walk writes
	 * the umem's list while a fault copies what it mapped from there,
	 * and children are made one at a time.
	 */
	struct mutex map_lock;
	atomic_t users;			/* accesses holding pages */
	atomic_t blocked;		/* invalidations running */
	wait_queue_head_t wait;		/* invalidations wait here */
	spinlock_t lock;		/* the fields below */
	/*
	 * The range the worker is to fault in ([start, end) user VAs), what
	 * the accesses asked for ending at need_end, the rest ahead of them.
	 */
	struct work_struct fault_work;
	bool fault_queued;
	u64 fault_start;
	u64 fault_need_end;
	u64 fault_end;
	/* The range whose fault failed, until an access is told so. */
	u64 bad_start;
	u64 bad_end;
};

/* The range that maps user virtual address @va, or NULL (no child yet). */
static struct softrdma_odp_range *softrdma_odp_range(struct softrdma_odp *odp,
						     u64 va)
{
	if (!odp->implicit)
		return &odp->whole;
	return xa_load(&odp->children, va >> SOFTRDMA_ODP_CHILD_SHIFT);
}

/* The process's virtual address of byte @iova of @mr. */
static u64 softrdma_odp_va(struct softrdma_mr *mr, u64 iova)
{
	return mr->umem->address + (iova - mr->iova);
}

/* The index in @r of the page of the user virtual address @va. */
static size_t softrdma_odp_idx(struct softrdma_odp_range *r, u64 va)
{
	return (va - r->start) >> PAGE_SHIFT;
}

/*
 * The first of pages [@i, @last] of @r that is not present (or not
 * writable, with @write), or @last + 1.
 */
static size_t softrdma_odp_lacking(const struct softrdma_odp_range *r,
				   size_t i, size_t last, bool write)
{
	if (!write) {
		while (i <= last && READ_ONCE(r->pages[i]))
			i++;
		return i;
	}
	for (; i <= last; i++) {
		if (!READ_ONCE(r->pages[i]))
			break;
		/* Pairs with softrdma_odp_map_range()'s barrier. */
		smp_rmb();
		if (!test_bit(i, r->writable))
			break;
	}
	return i;
}

/* Are the pages of [@start, @end) present (writable, with @write)? */
static bool softrdma_odp_present(struct softrdma_odp *odp, u64 start,
				 u64 end, bool write)
{
	struct softrdma_odp_range *r;
	size_t last;
	u64 stop;

	for (; start < end; start = stop) {
		r = softrdma_odp_range(odp, start);
		if (!r)
			return false;
		stop = min(end, r->end);
		last = softrdma_odp_idx(r, stop - 1);
		if (softrdma_odp_lacking(r, softrdma_odp_idx(r, start), last,
					 write) <= last)
			return false;
	}
	return true;
}

/* Fault [@start, @end) of @r in (or map what is there): map_lock held. */
static int softrdma_odp_map_range(struct softrdma_odp_range *r, u64 start,
				  u64 end, bool fault)
{
	struct ib_umem_odp *umem = r->umem;
	unsigned long pfn;
	size_t i, last;
	int ret;

	ret = ib_umem_odp_map_dma_and_lock(umem, start, end - start,
					   compat_odp_access(umem->umem.writable),
					   fault);
	if (ret < 0)
		return ret;
	/* No invalidation has run since the walk: its pages stand. */
	last = softrdma_odp_idx(r, end - 1);
	for (i = softrdma_odp_idx(r, start); i <= last; i++) {
		pfn = compat_odp_pfn(umem, i);
		if (!(pfn & HMM_PFN_VALID))
			continue;
		__assign_bit(i, r->writable, pfn & HMM_PFN_WRITE);
		/* A page found present is found with its right to write. */
		smp_wmb();
		WRITE_ONCE(r->pages[i], hmm_pfn_to_page(pfn));
	}
	mutex_unlock(&umem->umem_mutex);
	return 0;
}

static const struct mmu_interval_notifier_ops softrdma_odp_ops;

static void softrdma_odp_range_tables_free(struct softrdma_odp_range *r)
{
	bitmap_free(r->writable);
	kvfree(r->pages);
}

/* Set up @r over @umem; an invalidation may find it from here on. */
static int softrdma_odp_range_init(struct softrdma_odp *odp,
				   struct softrdma_odp_range *r,
				   struct ib_umem_odp *umem)
{
	size_t n = ib_umem_odp_num_pages(umem);

	r->pages = kvcalloc(n, sizeof(*r->pages), GFP_KERNEL | __GFP_NOWARN);
	if (!r->pages)
		return -ENOMEM;
	r->writable = bitmap_zalloc(n, GFP_KERNEL | __GFP_NOWARN);
	if (!r->writable) {
		kvfree(r->pages);
		return -ENOMEM;
	}
	r->umem = umem;
	r->odp = odp;
	r->start = ib_umem_start(umem);
	r->end = ib_umem_end(umem);
	/*
	 * The notifier runs from the umem's making on: under umem_mutex, it
	 * finds either no private (and nothing mapped) or the whole range.
	 */
	mutex_lock(&umem->umem_mutex);
	umem->private = r;
	mutex_unlock(&umem->umem_mutex);
	return 0;
}

/* The child of an implicit MR that maps @va, made if need be: map_lock. */
static struct softrdma_odp_range *
softrdma_odp_child(struct softrdma_odp *odp, u64 va)
{
	unsigned long idx = va >> SOFTRDMA_ODP_CHILD_SHIFT;
	struct softrdma_odp_range *r = xa_load(&odp->children, idx);
	struct ib_umem_odp *umem;
	int ret;

	if (r)
		return r;
	if (va >= TASK_SIZE)
		return ERR_PTR(-EFAULT);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	umem = ib_umem_odp_alloc_child(odp->umem,
				       va & ~(SOFTRDMA_ODP_CHILD_SIZE - 1),
				       SOFTRDMA_ODP_CHILD_SIZE,
				       &softrdma_odp_ops);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto err_free;
	}
	ret = softrdma_odp_range_init(odp, r, umem);
	if (ret)
		goto err_umem;
	ret = xa_err(xa_store(&odp->children, idx, r, GFP_KERNEL));
	if (ret)
		goto err_pages;
	return r;

err_pages:
	softrdma_odp_range_tables_free(r);
err_umem:
	ib_umem_odp_release(umem);
err_free:
	kfree(r);
	return ERR_PTR(ret);
}

/*
 * Fault [@start, @end) in; with @fault false, map only the pages already
 * present. A writable MR's pages are faulted in writable (as mlx5 does):
 * one fault serves reads and writes. Process context.
 */
static int softrdma_odp_map(struct softrdma_odp *odp, u64 start, u64 end,
			    bool fault)
{
	struct softrdma_odp_range *r;
	int ret = 0;
	u64 stop;

	mutex_lock(&odp->map_lock);
	for (; start < end; start = stop) {
		r = odp->implicit ? softrdma_odp_child(odp, start) :
				    &odp->whole;
		if (IS_ERR(r)) {
			ret = PTR_ERR(r);
			break;
		}
		stop = min(end, r->end);
		ret = softrdma_odp_map_range(r, start, stop, fault);
		if (ret)
			break;
	}
	mutex_unlock(&odp->map_lock);
	return ret;
}

/*
 * Unmap [@start, @end) (within the MR), under umem_mutex, with no users.
 * A page mapped writable is marked dirty: the CPU wrote it through the
 * kernel's mapping, which leaves the process's PTE clean. (ib_umem_odp
 * does so only for pages mapped for DMA from 6.16 on, not for a device
 * without DMA.)
 */
static void softrdma_odp_unmap(struct softrdma_odp_range *r, u64 start,
			       u64 end)
{
	size_t i, last = softrdma_odp_idx(r, end - 1);

	for (i = softrdma_odp_idx(r, start); i <= last; i++) {
		if (!r->pages[i])
			continue;
		if (__test_and_clear_bit(i, r->writable))
			folio_mark_dirty(page_folio(r->pages[i]));
		WRITE_ONCE(r->pages[i], NULL);
	}
	ib_umem_odp_unmap_dma_pages(r->umem, start, end);
}

/* Unmap all of @r and let its umem go (no notifier runs after it). */
static void softrdma_odp_range_free(struct softrdma_odp_range *r)
{
	struct ib_umem_odp *umem = r->umem;

	mutex_lock(&umem->umem_mutex);
	softrdma_odp_unmap(r, ib_umem_start(umem), ib_umem_end(umem));
	mutex_unlock(&umem->umem_mutex);
	ib_umem_odp_release(umem);
	softrdma_odp_range_tables_free(r);
}

static void softrdma_odp_fault_work(struct work_struct *work)
{
	struct softrdma_odp *odp = container_of(work, struct softrdma_odp,
						fault_work);
	u64 start, end, need_end;
	int ret;

	spin_lock_irq(&odp->lock);
	start = odp->fault_start;
	end = odp->fault_end;
	need_end = odp->fault_need_end;
	odp->fault_queued = false;
	spin_unlock_irq(&odp->lock);

	ret = softrdma_odp_map(odp, start, end, true);
	/* What lies ahead may not be mapped: what was asked for may be. */
	if (ret && need_end < end) {
		end = need_end;
		ret = softrdma_odp_map(odp, start, end, true);
	}
	spin_lock_irq(&odp->lock);
	if (ret) {
		odp->bad_start = start;
		odp->bad_end = end;
	} else if (odp->bad_start < end && start < odp->bad_end) {
		odp->bad_start = 0;
		odp->bad_end = 0;
	}
	spin_unlock_irq(&odp->lock);
	softrdma_count(odp->sdev, SOFTRDMA_CNT_ODP_FAULTS);
	if (ret)
		ibdev_dbg(&odp->sdev->ibdev,
			  "ODP fault of [%#llx, %#llx) failed: %d\n", start, end,
			  ret);
}

/*
 * softrdma_odp_hold() found pages of [@start, @end) absent: -EFAULT if
 * their last fault failed, else queue their fault (and what lies ahead)
 * and return -EBUSY.
 */
static noinline int softrdma_odp_hold_slow(struct softrdma_mr *mr, u64 start,
					   u64 end)
{
	struct softrdma_odp *odp = mr->odp;
	u64 room = mr->umem->address + mr->length - start, ahead;
	unsigned long flags;
	int ret = -EBUSY;

	spin_lock_irqsave(&odp->lock, flags);
	if (odp->bad_start < end && start < odp->bad_end) {
		/* Told once; the next access tries again. */
		odp->bad_start = 0;
		odp->bad_end = 0;
		ret = -EFAULT;
		goto out;
	}
	ahead = max(end, start + min_t(u64, room, SOFTRDMA_ODP_AHEAD));
	/* An implicit MR's look ahead makes no child of its own. */
	if (odp->implicit)
		ahead = max(end, min(ahead, round_up(end,
						     SOFTRDMA_ODP_CHILD_SIZE)));
	if (odp->fault_queued) {
		odp->fault_start = min(odp->fault_start, start);
		odp->fault_need_end = max(odp->fault_need_end, end);
		odp->fault_end = max(odp->fault_end, ahead);
	} else {
		odp->fault_start = start;
		odp->fault_need_end = end;
		odp->fault_end = ahead;
		odp->fault_queued = true;
		queue_work(softrdma_odp_wq, &odp->fault_work);
	}
out:
	spin_unlock_irqrestore(&odp->lock, flags);
	return ret;
}

/**
 * softrdma_odp_hold - hold the pages of an access to an ODP MR
 * @mr: an ODP MR, found by softrdma_mr_lookup() for this very range
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: the IB_ACCESS_* flags the access needs
 *
 * Any context. Return: 0 (softrdma_odp_release() ends the hold), -EBUSY
 * (not all present: the fault is queued, try again later) or -EFAULT (the
 * last fault of the range failed).
 */
int softrdma_odp_hold(struct softrdma_mr *mr, u64 iova, u64 len, int access)
{
	struct softrdma_odp *odp = mr->odp;
	bool write = softrdma_access_writes(access);
	u64 start = softrdma_odp_va(mr, iova);

	atomic_inc(&odp->users);
	/* Pairs with the barrier after softrdma_odp_invalidate()'s block. */
	smp_mb__after_atomic();
	if (likely(!atomic_read_acquire(&odp->blocked) &&
		   softrdma_odp_present(odp, start, start + len, write)))
		return 0;
	softrdma_odp_release(mr);
	return softrdma_odp_hold_slow(mr, start, start + len);
}

/*
 * Wait for the faults queued so far (process context): an access that
 * found its pages absent (-EBUSY) then finds them present, unless an
 * invalidation took them since, or -EFAULT if its fault failed.
 */
void softrdma_odp_flush(void)
{
	flush_workqueue(softrdma_odp_wq);
}

int softrdma_odp_init(void)
{
	softrdma_odp_wq = alloc_workqueue("softrdma_odp", WQ_UNBOUND, 0);
	return softrdma_odp_wq ? 0 : -ENOMEM;
}

void softrdma_odp_exit(void)
{
	destroy_workqueue(softrdma_odp_wq);
}

/**
 * softrdma_odp_hold_kept - softrdma_odp_hold() by a responder, through the
 *	MR its QP keeps
 * @qp: the QP; qp->lock held
 * @mr: an ODP MR, qp->resp.mr
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: the IB_ACCESS_* flags the access needs
 *
 * For an access outside the range the QP found present before: the pages
 * are checked, and the range present (and writable, if the MR is) from
 * there on in the same range, SOFTRDMA_ODP_KEPT_AHEAD pages at most,
 * remembered in qp->resp (the fence of softrdma_odp_invalidate() clears
 * it). The hold is qp->lock: nothing to release.
 *
 * Return: as softrdma_odp_hold().
 */
int softrdma_odp_hold_kept(struct softrdma_qp *qp, struct softrdma_mr *mr,
			   u64 iova, u64 len, int access)
{
	struct softrdma_odp *odp = mr->odp;
	bool write = softrdma_access_writes(access);
	u64 addr = mr->umem->address, start = softrdma_odp_va(mr, iova);
	u64 end = start + len, lo, hi;
	struct softrdma_odp_range *r;
	size_t i, last;

	/* Pairs with the release of an invalidation's end. */
	if (atomic_read_acquire(&odp->blocked) ||
	    !softrdma_odp_present(odp, start, end, write))
		return softrdma_odp_hold_slow(mr, start, end);
	/* Present: remember it, and what follows it in the same range. */
	r = softrdma_odp_range(odp, start);
	if (end > r->end)
		return 0;
	/*
	 * A writable MR's range is one a write may use too: a read of pages
	 * mapped read-only is held, and no range kept.
	 */
	last = softrdma_odp_idx(r, end - 1);
	if (!write && mr->umem->writable &&
	    softrdma_odp_lacking(r, softrdma_odp_idx(r, start), last,
				 true) <= last)
		return 0;
	i = softrdma_odp_lacking(r, last + 1,
				 min(softrdma_odp_idx(r, r->end - 1),
				     last + SOFTRDMA_ODP_KEPT_AHEAD),
				 mr->umem->writable);
	lo = max(round_down(start, PAGE_SIZE), addr);
	hi = min3(r->start + ((u64)i << PAGE_SHIFT), r->end, addr + mr->length);
	qp->resp.kept_lo = mr->iova + (lo - addr);
	qp->resp.kept_hi = mr->iova + (hi - addr);
	return 0;
}

/*
 * An invalidation, holds barred: wait out the accesses held by the lock of
 * a QP that keeps the MR, and clear the range it found present
 * (softrdma_odp_hold_kept()).
 */
static void softrdma_odp_fence_kept(struct softrdma_odp *odp)
{
	struct softrdma_qp *qp;
	unsigned long idx;

	/* Pairs with the barrier in softrdma_resp_mr_keep(). */
	if (!atomic_read(&odp->mr->resp_kept))
		return;
	rcu_read_lock();
	xa_for_each(&odp->sdev->qps, idx, qp) {
		if (!refcount_inc_not_zero(&qp->refs))
			continue;	/* being destroyed: it holds nothing */
		spin_lock_bh(&qp->lock);
		if (qp->resp.mr == odp->mr) {
			qp->resp.kept_lo = 0;
			qp->resp.kept_hi = 0;
		}
		spin_unlock_bh(&qp->lock);
		softrdma_qp_put(qp);
	}
	rcu_read_unlock();
}

/* The end of a softrdma_odp_hold(). Any context. */
void softrdma_odp_release(struct softrdma_mr *mr)
{
	struct softrdma_odp *odp = mr->odp;

	/* Fully ordered: the access's copies are done before it counts. */
	if (atomic_dec_and_test(&odp->users) && atomic_read(&odp->blocked))
		wake_up(&odp->wait);
}

/*
 * The page of index @idx (from address 0) of an implicit MR, in a range a
 * hold holds: present, since an invalidation waits for the access to end.
 */
struct page *softrdma_odp_implicit_page(struct softrdma_mr *mr, size_t idx)
{
	struct softrdma_odp_range *r;

	/* A hold found the child: children live as long as the MR. */
	r = xa_load(&mr->odp->children,
		    idx >> (SOFTRDMA_ODP_CHILD_SHIFT - PAGE_SHIFT));
	if (WARN_ON_ONCE(!r))
		return NULL;
	return READ_ONCE(r->pages[idx & (SOFTRDMA_ODP_CHILD_PAGES - 1)]);
}

/*
 * The MMU notifier: the process's mapping of [range->start, range->end)
 * changes. Bar new holds, wait for the accesses holding pages, unmap.
 */
static bool softrdma_odp_invalidate(struct mmu_interval_notifier *mni,
				    const struct mmu_notifier_range *range,
				    unsigned long cur_seq)
{
	struct ib_umem_odp *umem = container_of(mni, struct ib_umem_odp,
						notifier);
	struct softrdma_odp_range *r;
	struct softrdma_odp *odp;
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&umem->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	/*
	 * The notifier runs from the umem's making on, before the range is
	 * set up (softrdma_odp_range_init()): nothing is mapped yet.
	 */
	r = umem->private;
	if (!r) {
		mutex_unlock(&umem->umem_mutex);
		return true;
	}
	/* Any range of the MR bars the holds of all of it. */
	odp = r->odp;
	atomic_inc(&odp->blocked);
	/* Pairs with the barrier after softrdma_odp_hold()'s count. */
	smp_mb__after_atomic();
	softrdma_odp_fence_kept(odp);
	wait_event(odp->wait, !atomic_read(&odp->users));
	/* The last access's copies happened before its count went. */
	smp_mb();
	start = max_t(u64, ib_umem_start(umem), range->start);
	end = min_t(u64, ib_umem_end(umem), range->end);
	if (start < end) {
		softrdma_odp_unmap(r, start, end);
		softrdma_count(odp->sdev, SOFTRDMA_CNT_ODP_INVALIDATIONS);
	}
	/* A hold that sees the bar gone sees the pages gone. */
	atomic_dec_return_release(&odp->blocked);
	mutex_unlock(&umem->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops softrdma_odp_ops = {
	.invalidate = softrdma_odp_invalidate,
};

/* Unmap and free all an ODP MR has mapped, its umem(s), and @odp. */
static void softrdma_odp_free(struct softrdma_odp *odp)
{
	struct softrdma_odp_range *r;
	struct mm_struct *mm;
	unsigned long idx;

	if (!odp->implicit) {
		softrdma_odp_range_free(&odp->whole);
		kfree(odp);
		return;
	}
	xa_for_each(&odp->children, idx, r) {
		softrdma_odp_range_free(r);
		kfree(r);
	}
	xa_destroy(&odp->children);
	mm = odp->umem->umem.owning_mm;
	ib_umem_odp_release(odp->umem);
	mmdrop(mm);
	kfree(odp);
}

/*
 * Rights an ODP MR may have. A window bound to it holds a reference, no
 * page: the accesses through it hold theirs (softrdma_rkey_get()).
 * IB_ACCESS_HUGETLB (the range is in huge pages) is taken and not passed
 * on: the umem keeps PAGE_SIZE pages, each a piece of its huge page.
 */
#define SOFTRDMA_ODP_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			     IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			     IB_ACCESS_RELAXED_ORDERING | IB_ACCESS_ON_DEMAND | \
			     IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_MW_BIND | \
			     IB_ACCESS_HUGETLB)

/**
 * softrdma_odp_reg - register an ODP MR (reg_user_mr with ON_DEMAND)
 * @ibpd: its PD
 * @start: the process's address of its first byte
 * @length: its length
 * @iova: the address accesses name its first byte by
 * @access: IB_ACCESS_* flags, IB_ACCESS_ON_DEMAND among them
 *
 * An implicit MR (@start 0, @length U64_MAX, @iova 0) maps the whole
 * address space, a child at a time (softrdma_odp_child()).
 *
 * Return: the MR, or an ERR_PTR: -EOPNOTSUPP for a transport without ODP
 * or rights ODP MRs do not take, -EINVAL for a range no MR can have.
 */
struct ib_mr *softrdma_odp_reg(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access)
{
	struct softrdma_dev *sdev = to_sdev(ibpd->device);
	bool implicit = !start && length == U64_MAX;
	struct ib_umem_odp *umem;
	struct softrdma_odp *odp;
	struct softrdma_mr *mr;
	int ret;

	if (!(sdev->transport->odp_caps.general_caps & IB_ODP_SUPPORT) ||
	    (access & ~SOFTRDMA_ODP_ACCESS))
		return ERR_PTR(-EOPNOTSUPP);
	if (implicit ? iova : !length || length > SOFTRDMA_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	odp = kzalloc(sizeof(*odp), GFP_KERNEL);
	if (!odp) {
		ret = -ENOMEM;
		goto err_mr;
	}
	spin_lock_init(&odp->lock);
	init_waitqueue_head(&odp->wait);
	mutex_init(&odp->map_lock);
	xa_init(&odp->children);
	INIT_WORK(&odp->fault_work, softrdma_odp_fault_work);
	odp->mr = mr;
	odp->sdev = sdev;
	odp->implicit = implicit;
	mr->odp = odp;
	mr->type = SOFTRDMA_MR_ODP;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;

	if (implicit)
		umem = ib_umem_odp_alloc_implicit(ibpd->device,
						  access & ~IB_ACCESS_HUGETLB);
	else
		umem = ib_umem_odp_get(ibpd->device, start, length,
				       access & ~IB_ACCESS_HUGETLB,
				       &softrdma_odp_ops);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto err_odp;
	}
	odp->umem = umem;
	if (implicit) {
		/* The children's notifiers need the mm: keep it till the end. */
		mmgrab(umem->umem.owning_mm);
	} else {
		ret = softrdma_odp_range_init(odp, &odp->whole, umem);
		if (ret) {
			ib_umem_odp_release(umem);
			goto err_odp;
		}
	}
	mr->umem = &umem->umem;
	if (!implicit)
		mr->pages = odp->whole.pages;
	mr->page_offset = ib_umem_offset(mr->umem);
	ret = softrdma_mr_keys(sdev, mr);
	if (ret) {
		softrdma_odp_free(odp);
		goto err_mr;
	}
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return &mr->ibmr;

err_odp:
	kfree(odp);
err_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

/* Free an ODP MR's own state; every access to it has ended. */
void softrdma_odp_dereg(struct softrdma_mr *mr)
{
	cancel_work_sync(&mr->odp->fault_work);
	softrdma_odp_free(mr->odp);
	mr->odp = NULL;
	mr->pages = NULL;
	mr->umem = NULL;
}

/* ODP capabilities, as mlx5 reports what it does: the transport's. */
void softrdma_odp_caps(struct softrdma_dev *sdev, struct ib_device_attr *attr)
{
	const struct ib_odp_caps *caps = &sdev->transport->odp_caps;

	if (!(caps->general_caps & IB_ODP_SUPPORT))
		return;
	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps = *caps;
}

/**
 * softrdma_advise_mr - ibv_advise_mr: prefetch ranges of ODP MRs
 * @ibpd: the PD the MRs must be of
 * @advice: PREFETCH (to read), PREFETCH_WRITE, or PREFETCH_NO_FAULT (map
 *	    what is present, fault nothing in)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done when this returns (it always
 *	   is: the faults happen here, in the caller's context)
 * @sg_list: the ranges: lkey, address, length
 * @num_sge: how many
 * @attrs: unused
 *
 * Return: 0, -EINVAL for a key that names no ODP MR of @ibpd or a range out
 * of it, -EPERM for PREFETCH_WRITE on an MR without local write, or the
 * fault's error.
 */
int softrdma_advise_mr(struct ib_pd *ibpd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct softrdma_dev *sdev = to_sdev(ibpd->device);
	u32 i;

	if (advice > IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge; i++) {
		struct softrdma_mr *mr;
		u64 start;
		int ret;

		mr = softrdma_mr_lookup(sdev, ibpd, sg_list[i].lkey,
					sg_list[i].addr, sg_list[i].length,
					write ? IB_ACCESS_LOCAL_WRITE : 0, &ret);
		if (!mr)
			return ret == -EACCES ? -EPERM : -EINVAL;
		ret = -EINVAL;
		if (mr->type == SOFTRDMA_MR_ODP && sg_list[i].length) {
			start = softrdma_odp_va(mr, sg_list[i].addr);
			ret = softrdma_odp_map(mr->odp, start,
					       start + sg_list[i].length, fault);
		} else if (mr->type == SOFTRDMA_MR_ODP) {
			ret = 0;
		}
		softrdma_mr_unref(mr);
		if (ret)
			return ret;
	}
	return 0;
}

#else /* !SOFTRDMA_ODP */

void softrdma_odp_flush(void)
{
}

int softrdma_odp_init(void)
{
	return 0;
}

void softrdma_odp_exit(void)
{
}

struct ib_mr *softrdma_odp_reg(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

void softrdma_odp_dereg(struct softrdma_mr *mr)
{
}

int softrdma_odp_hold(struct softrdma_mr *mr, u64 iova, u64 len, int access)
{
	return -EFAULT;
}

int softrdma_odp_hold_kept(struct softrdma_qp *qp, struct softrdma_mr *mr,
			   u64 iova, u64 len, int access)
{
	return -EFAULT;
}

void softrdma_odp_release(struct softrdma_mr *mr)
{
}

struct page *softrdma_odp_implicit_page(struct softrdma_mr *mr, size_t idx)
{
	return NULL;
}

void softrdma_odp_caps(struct softrdma_dev *sdev, struct ib_device_attr *attr)
{
}

int softrdma_advise_mr(struct ib_pd *ibpd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs)
{
	return -EOPNOTSUPP;
}

#endif /* SOFTRDMA_ODP */
