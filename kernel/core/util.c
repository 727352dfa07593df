// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pure helpers: MTU, ring index arithmetic, GID derivation.
 */
#include <linux/log2.h>
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
