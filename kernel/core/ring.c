// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with userspace: allocation and mapping.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "softrdma.h"

/**
 * softrdma_ring_init - allocate a zeroed ring of @num_slots slots
 * @ring: the ring to fill in
 * @num_slots: a power of two (see softrdma_ring_slots())
 * @slot_size: bytes per slot, a multiple of 8
 *
 * The memory is vmalloc_user() memory so it can be mapped into a process.
 */
int softrdma_ring_init(struct softrdma_ring *ring, u32 num_slots,
		       u32 slot_size)
{
	if (!is_power_of_2(num_slots))
		return -EINVAL;
	ring->num_slots = num_slots;
	ring->slot_size = slot_size;
	ring->size = PAGE_ALIGN(SOFTRDMA_RING_HDR_SIZE +
				(size_t)num_slots * slot_size);
	ring->hdr = vmalloc_user(ring->size);
	if (!ring->hdr)
		return -ENOMEM;
	ring->slots = (u8 *)ring->hdr + SOFTRDMA_RING_HDR_SIZE;
	ring->mmap_entry = NULL;
	return 0;
}

/**
 * softrdma_ring_map - make @ring mappable by the process owning @uctx
 * @ring: an initialised ring
 * @uctx: the user context
 * @offset: where to mmap() it on the uverbs file
 *
 * From here on the ring's memory belongs to the mmap entry and is freed by
 * softrdma_mmap_free() once the ring is unmapped everywhere.
 */
int softrdma_ring_map(struct softrdma_ring *ring, struct ib_ucontext *uctx,
		      u64 *offset)
{
	struct softrdma_mmap_entry *entry;
	int ret;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->vaddr = ring->hdr;
	ret = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry, ring->size);
	if (ret) {
		kfree(entry);
		return ret;
	}
	ring->mmap_entry = &entry->rdma_entry;
	*offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return 0;
}

/**
 * softrdma_ring_free - release @ring
 * @ring: the ring
 *
 * A mapped ring's memory stays until the last mapping goes away.
 */
void softrdma_ring_free(struct softrdma_ring *ring)
{
	if (ring->mmap_entry)
		rdma_user_mmap_entry_remove(ring->mmap_entry);
	else
		vfree(ring->hdr);
	ring->mmap_entry = NULL;
	ring->hdr = NULL;
	ring->slots = NULL;
}

int softrdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct softrdma_mmap_entry *entry;
	int ret;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct softrdma_mmap_entry,
			     rdma_entry);
	if (vma->vm_end - vma->vm_start != rdma_entry->npages * PAGE_SIZE)
		ret = -EINVAL;
	else
		ret = remap_vmalloc_range(vma, entry->vaddr, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return ret;
}

void softrdma_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct softrdma_mmap_entry *entry =
		container_of(rdma_entry, struct softrdma_mmap_entry,
			     rdma_entry);

	vfree(entry->vaddr);
	kfree(entry);
}
