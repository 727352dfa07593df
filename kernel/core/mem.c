// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions as the transports use them: key lookup with every check
 * the verbs ask for (key, PD, access, bounds to the byte) and copies to and
 * from the pinned pages of a user MR, the pages of an ODP MR present while
 * the access holds them (odp.c), or the kernel memory of a DMA MR or a
 * fast-registration MR (softrdma has no DMA device: kernel consumers' DMA
 * addresses are kernel virtual addresses), from any context.
 */
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "softrdma.h"

/*
 * The keys' xarray. Window lookups take its lock in softirq, under
 * qp->lock: it is taken with softirqs disabled (XA_FLAGS_LOCK_BH), in a
 * class of its own, not the one every xarray initialised in device.c
 * shares.
 */
static struct lock_class_key softrdma_keys_lock_key;

void softrdma_keys_init(struct softrdma_dev *sdev)
{
	xa_init_flags(&sdev->keys, XA_FLAGS_LOCK_BH);
	lockdep_set_class(&sdev->keys.xa_lock, &softrdma_keys_lock_key);
}

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

/* Does @key name @mr as it stands? */
static bool softrdma_mr_key_ok(struct softrdma_mr *mr, u32 key)
{
	if (mr->type == SOFTRDMA_MR_FRMR)
		return softrdma_frmr_key_ok(mr, key);
	return mr->ibmr.lkey == key;
}

/* The page of the kernel virtual address @addr (direct map or vmalloc). */
struct page *softrdma_kva_page(u64 addr, size_t *off)
{
	const void *va = (const void *)(uintptr_t)addr;

	*off = offset_in_page(addr);
	if (is_vmalloc_addr(va))
		return vmalloc_to_page(va);
	return virt_to_page(va);
}

/* Is every byte of [@addr, @addr + @len) kernel memory with a page? */
bool softrdma_kva_ok(u64 addr, u64 len)
{
	u64 end = addr + len, p;

	if (end < addr)
		return false;
	if (!len)
		return true;
	for (p = addr & PAGE_MASK; p < end; p += PAGE_SIZE) {
		const void *va = (const void *)(uintptr_t)p;

		if (is_vmalloc_addr(va) ? !vmalloc_to_page(va) :
		    !virt_addr_valid(va))
			return false;
	}
	return true;
}

/*
 * The page holding byte @iova of @mr, the offset of that byte in it and
 * how many bytes from there on are contiguous in it (@room). An ODP MR's
 * page is present where an access may reach it (softrdma_mr_get()).
 */
static struct page *softrdma_mr_page(struct softrdma_mr *mr, u64 iova,
				     size_t *off, size_t *room)
{
	struct page *page;
	u64 pos;

	if (mr->type == SOFTRDMA_MR_FRMR)
		return softrdma_frmr_page(mr, iova, off, room);
	if (mr->type == SOFTRDMA_MR_DMA) {
		page = softrdma_kva_page(iova, off);
	} else {
		/* A user MR's pinned pages, or an ODP MR's page table. */
		pos = iova - mr->iova + mr->page_offset;
		*off = offset_in_page(pos);
		if (likely(mr->pages))
			page = mr->pages[pos >> PAGE_SHIFT];
		else
			page = softrdma_odp_implicit_page(mr, pos >> PAGE_SHIFT);
	}
	*room = PAGE_SIZE - *off;
	return page;
}

/* Drop the registration's own reference and wait out every user. */
void softrdma_mr_quiesce(struct softrdma_mr *mr)
{
	if (!refcount_dec_and_test(&mr->refs))
		wait_for_completion(&mr->released);
}

/* Drop a reference softrdma_mr_lookup() (or a window's bind) took. */
void softrdma_mr_unref(struct softrdma_mr *mr)
{
	if (refcount_dec_and_test(&mr->refs))
		complete(&mr->released);
}

/* The end of an access softrdma_mr_get() allowed. */
void softrdma_mr_put(struct softrdma_mr *mr)
{
	if (mr->type == SOFTRDMA_MR_ODP)
		softrdma_odp_release(mr);
	softrdma_mr_unref(mr);
}

/*
 * May @key (which found @mr) give @pd an access to @len bytes of it at
 * @iova with @access? 0, or -ENOENT (wrong PD, or the key is not the MR's
 * now), -EACCES or -ERANGE as softrdma_mr_lookup() says.
 */
static int softrdma_mr_rights(struct softrdma_mr *mr, struct ib_pd *pd,
			      u32 key, int access)
{
	if (mr->ibmr.pd != pd || !softrdma_mr_key_ok(mr, key))
		return -ENOENT;
	if ((mr->access & access) != access)
		return -EACCES;
	return 0;
}

/* softrdma_mr_rights(), and the bounds of the access: -ERANGE. */
static int softrdma_mr_check(struct softrdma_mr *mr, struct ib_pd *pd,
			     u32 key, u64 iova, u64 len, int access)
{
	int err = softrdma_mr_rights(mr, pd, key, access);

	if (err)
		return err;
	if (iova < mr->iova || len > mr->length ||
	    iova - mr->iova > mr->length - len)
		return -ERANGE;
	/* A DMA MR spans all addresses: only real kernel memory will do. */
	if (mr->type == SOFTRDMA_MR_DMA && !softrdma_kva_ok(iova, len))
		return -ERANGE;
	return 0;
}

/**
 * softrdma_mr_lookup - find the MR a key names and check an access to it
 * @sdev: the device
 * @pd: the PD the access is made on behalf of
 * @key: lkey or rkey
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: IB_ACCESS_* flags the access needs (0 for a local read)
 * @err: set to why, when NULL is returned: -ENOENT (no such key or wrong
 *	 PD), -EACCES (access not granted), -ERANGE (out of bounds)
 *
 * The pages of an ODP MR are not looked at: softrdma_mr_get() does that.
 *
 * Return: the MR with a reference held (softrdma_mr_unref()), or NULL.
 */
struct softrdma_mr *softrdma_mr_lookup(struct softrdma_dev *sdev,
				       struct ib_pd *pd, u32 key, u64 iova,
				       u64 len, int access, int *err)
{
	struct softrdma_mr *mr;

	rcu_read_lock();
	mr = softrdma_key_mr(softrdma_key_load(sdev, key));
	if (!mr || !refcount_inc_not_zero(&mr->refs)) {
		rcu_read_unlock();
		*err = -ENOENT;
		return NULL;
	}
	rcu_read_unlock();
	*err = softrdma_mr_check(mr, pd, key, iova, len, access);
	if (*err) {
		softrdma_mr_unref(mr);
		return NULL;
	}
	return mr;
}

/*
 * Hold the pages of an access to @mr (found, a reference held) if it is
 * an ODP MR: by the lock of @qp if it is the MR @qp's responder keeps
 * (softrdma_odp_hold_kept(); @qp NULL: no responder), else by a count.
 * Return: @mr, or NULL with *@err set and the reference let go.
 */
static struct softrdma_mr *softrdma_mr_hold(struct softrdma_qp *qp,
					    struct softrdma_mr *mr, u64 iova,
					    u64 len, int access, int *err)
{
	if (mr->type != SOFTRDMA_MR_ODP)
		return mr;
	*err = qp && mr == qp->resp.mr ?
	       softrdma_odp_hold_kept(qp, mr, iova, len, access) :
	       softrdma_odp_hold(mr, iova, len, access);
	if (*err) {
		softrdma_mr_unref(mr);
		return NULL;
	}
	return mr;
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
 *	 PD), -EACCES (access not granted), -ERANGE (out of bounds); for an
 *	 ODP MR also -EBUSY (pages not present: they are being faulted in,
 *	 try again later) or -EFAULT (faulting them in failed)
 *
 * An ODP MR's pages in the range stay present until softrdma_mr_put():
 * an invalidation waits for the access to end.
 *
 * Return: the MR with a reference held (softrdma_mr_put()), or NULL.
 */
struct softrdma_mr *softrdma_mr_get(struct softrdma_dev *sdev,
				    struct ib_pd *pd, u32 key, u64 iova,
				    u64 len, int access, int *err)
{
	struct softrdma_mr *mr = softrdma_mr_lookup(sdev, pd, key, iova, len,
						    access, err);

	return mr ? softrdma_mr_hold(NULL, mr, iova, len, access, err) : NULL;
}

/* Let the MR the responder keeps go. qp->lock held (or the QP is gone). */
void softrdma_resp_mr_drop(struct softrdma_qp *qp)
{
	struct softrdma_mr *mr = qp->resp.mr;

	if (!mr)
		return;
	qp->resp.mr = NULL;
	qp->resp.kept_lo = 0;
	qp->resp.kept_hi = 0;
	atomic_dec(&mr->resp_kept);
	softrdma_mr_unref(mr);
}

/*
 * Keep @mr, which @key found (the caller holds a reference), for the
 * responder's requests to come. A window's key finds its MR: that is not
 * kept (the window's own checks would be skipped). qp->lock held.
 */
static void softrdma_resp_mr_keep(struct softrdma_qp *qp,
				  struct softrdma_mr *mr, u32 key)
{
	u64 end;

	if (!softrdma_mr_key_ok(mr, key) || qp->resp.mr == mr)
		return;
	softrdma_resp_mr_drop(qp);
	atomic_inc(&mr->resp_kept);
	/*
	 * Pairs with softrdma_mr_evict(): either it sees the count and looks
	 * at this QP (under qp->lock, after us), or we see the MR dying.
	 */
	smp_mb__after_atomic();
	if (READ_ONCE(mr->dying)) {
		atomic_dec(&mr->resp_kept);
		return;
	}
	refcount_inc(&mr->refs);
	qp->resp.mr = mr;
	/*
	 * A user MR's range never changes (a new range is a new MR); an ODP
	 * MR's is what softrdma_odp_hold_kept() finds present; other MRs have
	 * none (softrdma_resp_mr_drop() left it empty).
	 */
	if (mr->type == SOFTRDMA_MR_USER &&
	    !check_add_overflow(mr->iova, mr->length, &end)) {
		qp->resp.kept_lo = mr->iova;
		qp->resp.kept_hi = end;
	}
}

/**
 * softrdma_resp_mr_get - softrdma_mr_get() (@remote: softrdma_rkey_get())
 *	for a responder placing a request's payload
 * @qp: the QP; qp->lock held
 * @key: lkey of the receive's SGE, or the request's rkey
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: IB_ACCESS_* flags the access needs
 * @remote: @key is an rkey (a window's too)
 * @err: as softrdma_mr_get() sets it
 *
 * The MR a key finds is kept (qp->resp.mr) until another key is named,
 * the QP leaves the receiving states or it is deregistered
 * (softrdma_mr_evict()): a message's later packets, and the messages
 * after it into the same MR, are checked against it without the key
 * table, and within its kept range (qp->resp.kept_lo, kept_hi) for key,
 * PD and rights only. The pages of a kept ODP MR are held by qp->lock
 * (softrdma_odp_hold_kept()).
 *
 * Return: the MR with a reference held (softrdma_resp_mr_put()), or NULL.
 */
struct softrdma_mr *softrdma_resp_mr_get(struct softrdma_qp *qp, u32 key,
					 u64 iova, u64 len, int access,
					 bool remote, int *err)
{
	struct softrdma_mr *mr = qp->resp.mr;

	/* In the kept range: its pages present if it is an ODP MR. */
	if (likely(mr && !softrdma_mr_rights(mr, qp->pd, key, access) &&
		   iova >= qp->resp.kept_lo && iova <= qp->resp.kept_hi &&
		   len <= qp->resp.kept_hi - iova)) {
		refcount_inc(&mr->refs);
		return mr;
	}
	/* -ENOENT from the kept MR: @key is another's, for the table. */
	*err = mr ? softrdma_mr_check(mr, qp->pd, key, iova, len, access) :
		    -ENOENT;
	if (!*err) {
		refcount_inc(&mr->refs);
	} else if (*err == -ENOENT) {
		mr = softrdma_mr_lookup(qp->sdev, qp->pd, key, iova, len,
					access, err);
		if (!mr && remote && *err == -ENOENT)
			mr = softrdma_mw_get_mr(qp, key, iova, len, access,
						err);
		else if (mr)
			softrdma_resp_mr_keep(qp, mr, key);
		if (!mr)
			return NULL;
	} else {
		return NULL;
	}
	return softrdma_mr_hold(qp, mr, iova, len, access, err);
}

/* The end of an access softrdma_resp_mr_get() allowed. qp->lock held. */
void softrdma_resp_mr_put(struct softrdma_qp *qp, struct softrdma_mr *mr)
{
	/* As softrdma_mr_hold(): a kept ODP MR's pages are held by qp->lock. */
	if (mr->type == SOFTRDMA_MR_ODP && mr == qp->resp.mr)
		softrdma_mr_unref(mr);
	else
		softrdma_mr_put(mr);
}

/**
 * softrdma_mr_evict - no responder may keep @mr from now on
 * @sdev: its device
 * @mr: an MR being deregistered, its key gone from the key table
 *
 * Those that keep it (softrdma_resp_mr_keep()) let it go, so that its
 * deregistration does not wait for their next request.
 */
void softrdma_mr_evict(struct softrdma_dev *sdev, struct softrdma_mr *mr)
{
	struct softrdma_qp *qp;
	unsigned long idx;

	WRITE_ONCE(mr->dying, true);
	/* Pairs with the barrier in softrdma_resp_mr_keep(). */
	smp_mb();
	if (!atomic_read(&mr->resp_kept))
		return;
	rcu_read_lock();
	xa_for_each(&sdev->qps, idx, qp) {
		if (!refcount_inc_not_zero(&qp->refs))
			continue;	/* being destroyed: it lets go itself */
		spin_lock_bh(&qp->lock);
		if (qp->resp.mr == mr)
			softrdma_resp_mr_drop(qp);
		spin_unlock_bh(&qp->lock);
		softrdma_qp_put(qp);
	}
	rcu_read_unlock();
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
	struct softrdma_mr *mr = softrdma_mr_get(qp->sdev, qp->pd, key,
						 iova, len, access, err);

	/* No MR of the PD by that key: a window's, perhaps. */
	if (!mr && *err == -ENOENT) {
		mr = softrdma_mw_get_mr(qp, key, iova, len, access, err);
		if (mr)
			mr = softrdma_mr_hold(NULL, mr, iova, len, access, err);
	}
	return mr;
}

/**
 * softrdma_key_invalidate - invalidate a key, locally or for a peer
 * @qp: the QP the invalidation came through
 * @key: the key
 * @remote: a SEND with Invalidate, else a local invalidate WQE
 *
 * Only a fast-registration MR of @qp's PD and a type 2 window (remotely:
 * one bound through @qp) are invalidated.
 *
 * Return: 0, or -errno.
 */
int softrdma_key_invalidate(struct softrdma_qp *qp, u32 key, bool remote)
{
	int ret = softrdma_frmr_invalidate(qp->sdev, qp->pd, key);

	if (ret == -ENOENT)
		ret = softrdma_mw_invalidate(qp, key, remote);
	return ret;
}

/*
 * Copy @len bytes between @mr at @iova and @buf (into the MR if @to_mr);
 * with @crc (into the MR only), go on with *@crc over them as
 * softrdma_crc32_copy() does.
 */
static void softrdma_mr_xfer(struct softrdma_mr *mr, u64 iova, void *buf,
			     u64 len, bool to_mr, u32 *crc, bool held)
{
	u8 *p = buf;

	while (len) {
		size_t off, room, n;
		struct page *page = softrdma_mr_page(mr, iova, &off, &room);
		u8 *va;

		n = min_t(u64, len, room);
		va = kmap_local_page(page);
		if (crc && to_mr)
			*crc = softrdma_crc32_copy(*crc, va + off, p, n);
		else if (crc)
			*crc = softrdma_crc32_copy_in(held, *crc, p, va + off,
						      n);
		else if (to_mr)
			memcpy(va + off, p, n);
		else
			memcpy(p, va + off, n);
		kunmap_local(va);
		p += n;
		iova += n;
		len -= n;
	}
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
	softrdma_mr_xfer(mr, iova, buf, len, to_mr, NULL, false);
}

/**
 * softrdma_mr_copy_crc - write an MR from a kernel buffer, summing it
 * @mr: an MR obtained with softrdma_mr_get() for this very range
 * @iova: first byte in the MR
 * @buf: the kernel buffer
 * @len: bytes
 * @crc: the CRC32 (softrdma_crc32()'s) to go on with over them
 */
void softrdma_mr_copy_crc(struct softrdma_mr *mr, u64 iova, const void *buf,
			  u64 len, u32 *crc)
{
	softrdma_mr_xfer(mr, iova, (void *)buf, len, true, crc, false);
}

/**
 * softrdma_mr_read_crc - read an MR into a kernel buffer, summing it
 * @mr: an MR obtained with softrdma_mr_get() for this very range
 * @iova: first byte in the MR
 * @buf: the kernel buffer
 * @len: bytes
 * @held: what softrdma_crc32_begin() returned (the caller's hold)
 * @crc: the CRC32 (softrdma_crc32()'s) to go on with over them
 */
void softrdma_mr_read_crc(struct softrdma_mr *mr, u64 iova, void *buf,
			  u64 len, bool held, u32 *crc)
{
	softrdma_mr_xfer(mr, iova, buf, len, false, crc, held);
}

/**
 * softrdma_mr_pages - describe a range of an MR as pages, to send them
 * @mr: an MR obtained with softrdma_mr_get() for this very range; held
 *	until the pages are in the socket (which takes page references)
 * @iova: first byte in the MR
 * @len: bytes
 * @bv: filled with (page, offset, length) in order
 * @max: entries @bv has
 *
 * Return: the entries filled, or 0 if the range needs more than @max or a
 * page must not be sent by reference (slab memory: sendpage_ok()); the
 * caller then copies.
 */
u32 softrdma_mr_pages(struct softrdma_mr *mr, u64 iova, u32 len,
		      struct bio_vec *bv, u32 max)
{
	u32 i = 0;

	/* Held by the socket, they would outlive an invalidation. */
	if (mr->type == SOFTRDMA_MR_ODP)
		return 0;
	while (len) {
		size_t off, room;
		struct page *page = softrdma_mr_page(mr, iova, &off, &room);
		u32 n = min_t(u64, len, room);

		if (i == max || !sendpage_ok(page))
			return 0;
		bv[i].bv_page = page;
		bv[i].bv_offset = off;
		bv[i].bv_len = n;
		i++;
		iova += n;
		len -= n;
	}
	return i;
}

/**
 * softrdma_mr_atomic - an 8-byte atomic operation on an MR
 * @mr: an MR obtained with softrdma_mr_get() for 8 bytes at @iova
 * @iova: the operand's address; naturally aligned
 * @op: compare and swap, fetch and add, or write
 * @compare: the value compared with (compare and swap)
 * @swap_add: the value swapped in, added, or written
 * @orig: set to the operand's value before the operation
 *
 * The operation is atomic against the CPUs (the process may use atomics of
 * its own on the same word) and against every other responder.
 *
 * Return: 0, or -EINVAL if the operand is not naturally aligned in memory.
 */
int softrdma_mr_atomic(struct softrdma_mr *mr, u64 iova,
		       enum softrdma_mr_atomic_op op, u64 compare, u64 swap_add,
		       u64 *orig)
{
	size_t off, room;
	struct page *page = softrdma_mr_page(mr, iova, &off, &room);
	u8 *va;
	u64 *p, old;

	if ((off & 7) || room < sizeof(u64))
		return -EINVAL;
	va = kmap_local_page(page);
	p = (u64 *)(va + off);
	if (op == SOFTRDMA_MR_CMP_SWAP) {
		old = cmpxchg64(p, compare, swap_add);
	} else {
		old = READ_ONCE(*p);
		while (!try_cmpxchg64(p, &old, op == SOFTRDMA_MR_ATOMIC_WRITE ?
				      swap_add : old + swap_add))
			;
	}
	kunmap_local(va);
	*orig = old;
	return 0;
}

/*
 * Copy @len bytes at byte @off of the scatter list @sge to or from @buf,
 * checking each MR for @access (@keep: through the responder's kept MR,
 * softrdma_resp_mr_get()); with @crc, summing them as
 * softrdma_mr_copy_crc(). Return: 0, -EINVAL past the list's end, or
 * softrdma_mr_get()'s error.
 */
static int softrdma_sge_xfer(struct softrdma_qp *qp,
			     const struct softrdma_sge *sge, u32 nsge, u64 off,
			     void *buf, u32 len, bool to_mr, int access,
			     u32 *crc, bool keep)
{
	u8 *p = buf;
	u32 i;

	for (i = 0; i < nsge && len; i++) {
		struct softrdma_mr *mr;
		u32 n;
		int err;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min_t(u64, len, sge[i].length - off);
		if (keep)
			mr = softrdma_resp_mr_get(qp, sge[i].lkey,
						  sge[i].addr + off, n, access,
						  false, &err);
		else
			mr = softrdma_mr_get(qp->sdev, qp->pd, sge[i].lkey,
					     sge[i].addr + off, n, access, &err);
		if (!mr)
			return err;
		softrdma_mr_xfer(mr, sge[i].addr + off, p, n, to_mr, crc,
				 false);
		if (keep)
			softrdma_resp_mr_put(qp, mr);
		else
			softrdma_mr_put(mr);
		p += n;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

int softrdma_sge_copy(struct softrdma_qp *qp, const struct softrdma_sge *sge,
		      u32 nsge, u64 off, void *buf, u32 len, bool to_mr,
		      int access)
{
	return softrdma_sge_xfer(qp, sge, nsge, off, buf, len, to_mr, access,
				 NULL, false);
}

/**
 * softrdma_resp_recv_copy - place a SEND's bytes in the receive in hand
 * @qp: the QP (qp->resp: its WQE, and how far it is filled); qp->lock held
 * @buf: the bytes
 * @len: how many, from qp->resp.roff on
 * @crc: NULL, or the ICRC to go on with over them (softrdma_mr_copy_crc())
 *
 * Through the responder's kept MR (softrdma_resp_mr_get()).
 * Return: as softrdma_sge_copy().
 */
int softrdma_resp_recv_copy(struct softrdma_qp *qp, const void *buf, u32 len,
			    u32 *crc)
{
	return softrdma_sge_xfer(qp, qp->resp.rsge, qp->resp.rwqe.num_sge,
				 qp->resp.roff, (void *)buf, len, true,
				 IB_ACCESS_LOCAL_WRITE, crc, true);
}
