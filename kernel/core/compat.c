// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC32c (the MPA CRC) on a kernel whose library crc32c() is
 * table-driven C (before 6.14): the crypto API's "crc32c" driver (on x86
 * crc32c-intel) where it has it and it beats the library on this
 * machine, else the library; chosen once, at module load. Built only for
 * such a kernel (Kbuild); on a newer one compat.h calls the library,
 * which is accelerated there.
 */
#include <crypto/hash.h>
#include <kunit/visibility.h>
#include <linux/crc32.h>
#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/printk.h>
#include <linux/sizes.h>

#include "compat.h"
#include "util.h"

/*
 * Below this many bytes the library's table goes first: the driver's
 * call through the crypto API would only add to it.
 */
#define SOFTRDMA_CRC_SHASH_MIN	64

/* Set at module load, before any device exists; dropped at unload. */
static struct crypto_shash *softrdma_crc32c_tfm;

/**
 * softrdma_crc_shash - a CRC by a "crc32c" (or "crc32") crypto driver
 * @tfm: the driver's transform
 * @crc: the seed, as the library takes it
 * @p: the bytes
 * @len: how many
 *
 * The state of both algorithms is the running CRC itself: the u32 the
 * library passes from call to call, neither inverted nor byte swapped.
 * So the seed goes in by import and the CRC comes out by export. The
 * transform's key (what init would start from) is never set, so calls
 * on any CPU may share @tfm, and final's conventions (crc32c inverts) do
 * not apply. softrdma_crc_keep() checks it against the library before a
 * driver is used.
 *
 * Return: what the library's crc32_le() or crc32c() returns.
 */
u32 softrdma_crc_shash(struct crypto_shash *tfm, u32 crc, const void *p,
		       size_t len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	unsigned int n;

	desc->tfm = tfm;
	crypto_shash_import(desc, &crc);
	/* update() takes an unsigned int length. */
	for (; len; len -= n, p += n) {
		n = min_t(size_t, len, SZ_1G);
		crypto_shash_update(desc, p, n);
	}
	crypto_shash_export(desc, &crc);
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc_shash);

static u32 softrdma_crc32c_lib(u32 crc, const void *p, size_t len)
{
	return crc32c(crc, p, len);
}

u32 softrdma_crc32c(u32 crc, const void *p, size_t len)
{
	if (softrdma_crc32c_tfm && len >= SOFTRDMA_CRC_SHASH_MIN)
		return softrdma_crc_shash(softrdma_crc32c_tfm, crc, p, len);
	return crc32c(crc, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32c);

static u32 softrdma_crc_shash_trial(const void *tfm, u32 crc, const void *p,
				    size_t len)
{
	return softrdma_crc_shash((struct crypto_shash *)tfm, crc, p, len);
}

/*
 * Keep @tfm for @name only if it keeps the CRC itself as its state and
 * passes softrdma_crc_trial() against @lib (without memory to try it, the
 * crypto API's choice stands, untimed).
 */
static bool softrdma_crc_keep(struct crypto_shash *tfm, const char *name,
			      softrdma_crc_fn lib)
{
	const char *drv = crypto_shash_driver_name(tfm);

	if (crypto_shash_statesize(tfm) != sizeof(u32)) {
		pr_info("softrdma: %s keeps no plain CRC state: %s by the library\n",
			drv, name);
		return false;
	}
	return softrdma_crc_trial(drv, name, softrdma_crc_shash_trial, tfm,
				  lib) != 0;
}

/*
 * The driver the crypto API has for @name (its best by priority; this
 * may load its module), or NULL to use the library.
 */
static struct crypto_shash *
softrdma_crc_alloc(const char *name, softrdma_crc_fn lib)
{
	struct crypto_shash *tfm = crypto_alloc_shash(name, 0, 0);

	if (IS_ERR(tfm)) {
		pr_info("softrdma: no %s crypto driver (%ld): %s by the library\n",
			name, PTR_ERR(tfm), name);
		return NULL;
	}
	if (!softrdma_crc_keep(tfm, name, lib)) {
		crypto_free_shash(tfm);
		return NULL;
	}
	return tfm;
}

/* Module load: never fails, the library is always there. */
void softrdma_crc32c_init(void)
{
	softrdma_crc32c_tfm = softrdma_crc_alloc("crc32c",
						 softrdma_crc32c_lib);
}

void softrdma_crc32c_exit(void)
{
	crypto_free_shash(softrdma_crc32c_tfm);
	softrdma_crc32c_tfm = NULL;
}
