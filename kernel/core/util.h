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

/* CRC32 as crc32_le(), by the fastest code here (crc.c). */
typedef u32 (*softrdma_crc_fn)(u32 crc, const void *p, size_t len);
typedef u32 (*softrdma_crc_fast_fn)(const void *ctx, u32 crc, const void *p,
				    size_t len);
int softrdma_crc_trial(const char *what, const char *name,
		       softrdma_crc_fast_fn fast, const void *ctx,
		       softrdma_crc_fn lib);
u32 softrdma_crc32(u32 crc, const void *p, size_t len);
u32 softrdma_crc32_copy(u32 crc, void *dst, const void *src, size_t len);
bool softrdma_crc32_begin(void);
u32 softrdma_crc32_in(bool held, u32 crc, const void *p, size_t len);
u32 softrdma_crc32_copy_in(bool held, u32 crc, void *dst, const void *src,
			   size_t len);
void softrdma_crc32_end(bool held);
void softrdma_crc_init(void);
void softrdma_crc_exit(void);
#ifdef CONFIG_X86_64
/* crc_x86.S: the caller holds the FPU, @len >= 16 (see there). */
u32 softrdma_crc32_fold(u32 crc, u8 *dst, const u8 *src, size_t len);
u32 softrdma_crc32_fold_copy(u32 crc, u8 *dst, const u8 *src, size_t len);
u32 softrdma_crc32_fold_head(u32 crc, const u8 *head, size_t hlen,
			     const u8 *src, size_t len);
bool softrdma_crc32_fold_there(void);
bool softrdma_crc32_fold_use(bool on);
u32 softrdma_crc32_by_fold(u32 crc, void *dst, const void *src, size_t len);
#endif

/**
 * softrdma_crc32_in2 - softrdma_crc32_in() over @a, then @b
 * @held: what softrdma_crc32_begin() returned
 * @crc: the seed
 * @a: the first bytes
 * @alen: how many; whole lanes (a multiple of 16) make the two one run
 *	  of the fold, with one reduction
 * @b: the bytes after them
 * @blen: how many
 *
 * Inline: a caller's constant @alen leaves one call.
 */
static inline u32 softrdma_crc32_in2(bool held, u32 crc, const void *a,
				     size_t alen, const void *b, size_t blen)
{
#ifdef CONFIG_X86_64
	if (held && alen >= 16 && !(alen & 15)) {
		if (blen >= 16)
			return softrdma_crc32_fold_head(crc, a, alen, b, blen);
		crc = softrdma_crc32_fold(crc, NULL, a, alen);
		return blen ? softrdma_crc32_in(held, crc, b, blen) : crc;
	}
#endif
	crc = softrdma_crc32_in(held, crc, a, alen);
	return blen ? softrdma_crc32_in(held, crc, b, blen) : crc;
}

u32 softrdma_crc32_in2_kunit(bool held, u32 crc, const void *a, size_t alen,
			     const void *b, size_t blen);

#endif /* SOFTRDMA_UTIL_H */
