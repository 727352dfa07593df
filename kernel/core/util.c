// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Helpers with no device state: MTU, ring index arithmetic, GID
 * derivation, random numbering.
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/errno.h>

#include "util.h"

/**
 * softrdma_active_mtu - the path MTU a port can carry over a netdev MTU
 * @netdev_mtu: the netdev's MTU in bytes
 * @overhead: bytes of the transport's headers around a packet's payload
 *
 * Return: the largest IB MTU whose payload plus headers fits, never less
 * than IB_MTU_256.
 */
enum ib_mtu softrdma_active_mtu(unsigned int netdev_mtu,
				unsigned int overhead)
{
	unsigned int room = netdev_mtu > overhead ? netdev_mtu - overhead : 0;

	if (room >= 4096)
		return IB_MTU_4096;
	if (room >= 2048)
		return IB_MTU_2048;
	if (room >= 1024)
		return IB_MTU_1024;
	if (room >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

/**
 * softrdma_ring_slots - slots of a ring that holds at least @requested
 * @requested: entries the consumer asked for
 * @max_slots: the largest ring allowed, a power of two
 *
 * Return: a power of two >= @requested, or 0 if that exceeds @max_slots.
 */
u32 softrdma_ring_slots(u32 requested, u32 max_slots)
{
	if (requested > max_slots)
		return 0;
	if (requested < 2)
		return 2;
	return roundup_pow_of_two(requested);
}

/**
 * softrdma_ring_used - entries between consumer and producer
 * @producer: free-running producer index
 * @consumer: free-running consumer index (possibly written by userspace)
 * @num_slots: ring size, a power of two
 *
 * Return: the number of used slots, or -EINVAL if the indices cannot come
 * from a well-behaved peer (more used than the ring has slots).
 */
int softrdma_ring_used(u32 producer, u32 consumer, u32 num_slots)
{
	u32 used = producer - consumer;

	if (used > num_slots)
		return -EINVAL;
	return used;
}

/**
 * softrdma_gid_from_mac - the GID of an iWARP port: its MAC, zero-padded
 * @gid: result
 * @mac: the netdev's 6-byte hardware address
 */
void softrdma_gid_from_mac(union ib_gid *gid, const u8 *mac)
{
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, mac, 6);
}

/* Random draws before softrdma_xa_alloc_random() searches in order. */
#define SOFTRDMA_ID_DRAWS	16

static bool softrdma_id_avoided(u32 id, const u32 *avoid,
				unsigned int navoid)
{
	unsigned int i;

	for (i = 0; i < navoid; i++)
		if (avoid[i] == id)
			return true;
	return false;
}

/*
 * Store @entry at index @idx unless it is avoided or taken.
 * Return: 0 (and @id set), -EBUSY, or -ENOMEM.
 */
static int softrdma_xa_try(struct xarray *xa, u32 *id, void *entry, u32 idx,
			   const u32 *avoid, unsigned int navoid)
{
	int ret;

	if (softrdma_id_avoided(idx, avoid, navoid))
		return -EBUSY;
	ret = xa_insert_bh(xa, idx, entry, GFP_KERNEL);
	if (!ret)
		*id = idx;
	return ret;
}

/*
 * Store @entry at the first index of [@from, @to] that is free and not
 * avoided. Return: 0, -EBUSY if there is none, or -ENOMEM.
 */
static int softrdma_xa_insert_first(struct xarray *xa, u32 *id, void *entry,
				    u32 from, u32 to, const u32 *avoid,
				    unsigned int navoid)
{
	u64 i = from;
	int ret;

	while (i <= to) {
		unsigned long used = i;

		/* [i, used) is free; used holds an entry, or lies past @to. */
		if (!xa_find(xa, &used, to, XA_PRESENT))
			used = (unsigned long)to + 1;
		for (; i < used; i++) {
			ret = softrdma_xa_try(xa, id, entry, i, avoid, navoid);
			if (ret != -EBUSY)
				return ret;
		}
		i = (u64)used + 1;
		cond_resched();
	}
	return -EBUSY;
}

/**
 * softrdma_xa_alloc_random - store an entry at a random free index
 * @xa: the xarray; its lock is taken with softirqs disabled
 *	(XA_FLAGS_LOCK_BH)
 * @id: set to the index the entry went to
 * @entry: the entry, not NULL
 * @limit: the indices to choose from (fewer than 2^32)
 * @avoid: indices not to choose even when free, or NULL; the caller keeps
 *	   them from changing meanwhile
 * @navoid: how many @avoid holds
 *
 * Keys and QP numbers are numbered this way, so that one seen tells
 * nothing of the next: each free index of @limit is as likely as another,
 * whatever was chosen before. Only where @limit is so full that
 * SOFTRDMA_ID_DRAWS random indices were all taken does it take the first
 * free index after the last one drawn, so that a nearly full range is
 * filled to the last index all the same.
 *
 * Return: 0, -EBUSY if no index is free, or -ENOMEM.
 */
int softrdma_xa_alloc_random(struct xarray *xa, u32 *id, void *entry,
			     struct xa_limit limit, const u32 *avoid,
			     unsigned int navoid)
{
	u32 draw = limit.min;
	int i, ret;

	for (i = 0; i < SOFTRDMA_ID_DRAWS; i++) {
		draw = get_random_u32_inclusive(limit.min, limit.max);
		ret = softrdma_xa_try(xa, id, entry, draw, avoid, navoid);
		if (ret != -EBUSY)
			return ret;
	}
	ret = softrdma_xa_insert_first(xa, id, entry, draw, limit.max, avoid,
				       navoid);
	if (ret == -EBUSY && draw > limit.min)
		ret = softrdma_xa_insert_first(xa, id, entry, limit.min,
					       draw - 1, avoid, navoid);
	return ret;
}
