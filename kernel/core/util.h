/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers with no device state: shared by the module and its KUnit
 * suite.
 */
#ifndef SOFTRDMA_UTIL_H
#define SOFTRDMA_UTIL_H

#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "softrdma-abi.h"

enum ib_mtu softrdma_active_mtu(unsigned int netdev_mtu,
				unsigned int overhead);
u32 softrdma_ring_slots(u32 requested, u32 max_slots);
int softrdma_ring_used(u32 producer, u32 consumer, u32 num_slots);
void softrdma_gid_from_mac(union ib_gid *gid, const u8 *mac);
int softrdma_xa_alloc_random(struct xarray *xa, u32 *id, void *entry,
			     struct xa_limit limit, const u32 *avoid,
			     unsigned int navoid);

#endif /* SOFTRDMA_UTIL_H */
