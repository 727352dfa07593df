// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC32, the RoCEv2 ICRC's: softrdma_crc32(), and softrdma_crc32_copy(),
 * which also copies what it sums, so that a received payload is checked
 * in the pass that places it. On x86-64 with PCLMULQDQ, by folding
 * (crc_x86.S) where that beats the library's crc32_le() here, timed once
 * at module load; else by crc32_le() (a table before 6.14, the CPU's
 * instructions after). On hardware the fold is the faster by far; an
 * emulator may carry PCLMULQDQ out bit by bit, as the lab's QEMU (TCG)
 * does, and there the table is (Documentation/performance.rst).
 *
 * The fold is ours on every kernel, not the crypto API's crc32-pclmul:
 * that wants its blocks 16-byte aligned and hands the rest of every call
 * to the table (a packet's payload starts 12 bytes into a line), and each
 * call goes through the crypto API.
 */
#include <kunit/visibility.h>
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/printk.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "softrdma.h"

#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>

/* The fold's least: a lane. Below it, the library (and memcpy()). */
#define SOFTRDMA_CRC_FOLD_MIN	16

/* Set at module load, before any device exists. */
static bool softrdma_crc_fold_on __read_mostly;

static bool softrdma_crc_fold_cpu(void)
{
	return boot_cpu_has(X86_FEATURE_PCLMULQDQ) &&
	       boot_cpu_has(X86_FEATURE_XMM2) &&
	       boot_cpu_has(X86_FEATURE_SSSE3);
}

/*
 * softrdma_crc32_by_fold - CRC32 by the fold, copying with @dst
 * @crc: the seed, as crc32_le() takes it
 * @dst: where to copy @src's bytes, or NULL
 * @src: the bytes
 * @len: how many, at least SOFTRDMA_CRC_FOLD_MIN
 *
 * Context: any in which may_use_simd() holds.
 * Return: what crc32_le(@crc, @src, @len) returns.
 */
u32 softrdma_crc32_by_fold(u32 crc, void *dst, const void *src, size_t len)
{
	kernel_fpu_begin();
	if (dst)
		crc = softrdma_crc32_fold_copy(crc, dst, src, len);
	else
		crc = softrdma_crc32_fold(crc, NULL, src, len);
	kernel_fpu_end();
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_by_fold);

/* Whether the fold is there at all (KUnit's question too). */
bool softrdma_crc32_fold_there(void)
{
	return softrdma_crc_fold_cpu();
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_fold_there);

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit's: use the fold (if the CPU has it) or not, whatever the trial
 * chose, so that both ways are tried. Return: the way before.
 */
bool softrdma_crc32_fold_use(bool on)
{
	bool was = softrdma_crc_fold_on;

	WRITE_ONCE(softrdma_crc_fold_on, on && softrdma_crc_fold_cpu());
	return was;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_fold_use);
#endif

static bool softrdma_crc_fold_now(size_t len)
{
	return softrdma_crc_fold_on && len >= SOFTRDMA_CRC_FOLD_MIN &&
	       may_use_simd();
}

/**
 * softrdma_crc32_begin - hold the FPU for a run of CRCs
 *
 * A packet's ICRC is a few pieces (its masked headers, its payload, the
 * payloads of a train's every packet): one kernel_fpu_begin() for them
 * all rather than one a piece. No sleeping, and no softirq, until
 * softrdma_crc32_end().
 *
 * Return: whether the fold is in use here and now, the FPU held: what
 * softrdma_crc32_in() and softrdma_crc32_end() are then given.
 */
bool softrdma_crc32_begin(void)
{
	if (!softrdma_crc_fold_on || !may_use_simd())
		return false;
	kernel_fpu_begin();
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_begin);

/**
 * softrdma_crc32_in - softrdma_crc32() inside softrdma_crc32_begin()
 * @held: what softrdma_crc32_begin() returned
 * @crc: the seed
 * @p: the bytes
 * @len: how many
 */
u32 softrdma_crc32_in(bool held, u32 crc, const void *p, size_t len)
{
	if (held && len >= SOFTRDMA_CRC_FOLD_MIN)
		return softrdma_crc32_fold(crc, NULL, p, len);
	return crc32_le(crc, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_in);

/**
 * softrdma_crc32_copy_in - softrdma_crc32_copy() inside softrdma_crc32_begin()
 * @held: what softrdma_crc32_begin() returned
 * @crc: the seed
 * @dst: where to, @len bytes not overlapping @src
 * @src: the bytes
 * @len: how many
 */
u32 softrdma_crc32_copy_in(bool held, u32 crc, void *dst, const void *src,
			   size_t len)
{
	if (held && len >= SOFTRDMA_CRC_FOLD_MIN)
		return softrdma_crc32_fold_copy(crc, dst, src, len);
	memcpy(dst, src, len);
	return crc32_le(crc, src, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_copy_in);

/* softrdma_crc32_end - let go of what softrdma_crc32_begin() held */
void softrdma_crc32_end(bool held)
{
	if (held)
		kernel_fpu_end();
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_end);

static u32 softrdma_crc32_fold_trial(const void *ctx, u32 crc, const void *p,
				     size_t len)
{
	return softrdma_crc32_by_fold(crc, NULL, p, len);
}

static u32 softrdma_crc32_lib(u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}

/* The fold, if the CPU has it and it passes softrdma_crc_trial(). */
static void softrdma_crc32_choose(void)
{
	if (softrdma_crc_fold_cpu())
		softrdma_crc_fold_on =
			softrdma_crc_trial("PCLMULQDQ", "CRC32",
					   softrdma_crc32_fold_trial, NULL,
					   softrdma_crc32_lib) > 0;
}
#else
static bool softrdma_crc_fold_now(size_t len)
{
	return false;
}

static u32 softrdma_crc32_by_fold(u32 crc, void *dst, const void *src,
				  size_t len)
{
	return 0;
}

static void softrdma_crc32_choose(void)
{
}

bool softrdma_crc32_begin(void)
{
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_begin);

u32 softrdma_crc32_in(bool held, u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_in);

u32 softrdma_crc32_copy_in(bool held, u32 crc, void *dst, const void *src,
			   size_t len)
{
	memcpy(dst, src, len);
	return crc32_le(crc, src, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_copy_in);

void softrdma_crc32_end(bool held)
{
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_end);
#endif

/*
 * Nanoseconds @fast (or, if NULL, @lib) takes over @len bytes at @buf, the
 * best of a few passes, each seeded with the CRC of the one before: the
 * last CRC in @crc.
 */
static u64 softrdma_crc_time(softrdma_crc_fast_fn fast, const void *ctx,
			     softrdma_crc_fn lib, const u8 *buf, size_t len,
			     u32 *crc)
{
	u64 best = U64_MAX, t;
	int i;

	for (i = 0; i < 5; i++) {
		t = ktime_get_ns();
		*crc = fast ? fast(ctx, *crc, buf, len) : lib(*crc, buf, len);
		best = min(best, ktime_get_ns() - t);
	}
	return best;
}

/**
 * softrdma_crc_trial - may a faster CRC stand in for the library's?
 * @what: the candidate, for the messages (a driver's name, "PCLMULQDQ")
 * @name: the CRC, for the messages
 * @fast: the candidate, called with @ctx
 * @ctx: what @fast is called with
 * @lib: the library's CRC it must equal
 *
 * Yes if @fast gives what @lib gives from a seed that is neither 0 nor ~0
 * (a code that started from its key or inverted would differ) over a
 * buffer off its alignment that ends in a partial word and line, and does
 * so faster over 4 KiB (the largest path MTU's payload). On hardware the
 * CPU's instructions are the faster by far, but an emulator may carry out
 * PCLMULQDQ and CRC32 bit by bit, as the lab's QEMU (TCG) does: there the
 * table is (Documentation/performance.rst).
 *
 * Return: 1 (yes), 0 (no, said why), -ENOMEM (not tried).
 */
int softrdma_crc_trial(const char *what, const char *name,
		       softrdma_crc_fast_fn fast, const void *ctx,
		       softrdma_crc_fn lib)
{
	u32 by_lib = 0x5eed1234, by_fast = by_lib;
	u64 t_lib, t_fast;
	size_t i;
	u8 *buf;

	buf = kmalloc(SZ_4K + 4, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < SZ_4K + 4; i++)
		buf[i] = i * 7 + 3;
	t_lib = softrdma_crc_time(NULL, NULL, lib, buf + 1, SZ_4K + 3, &by_lib);
	t_fast = softrdma_crc_time(fast, ctx, lib, buf + 1, SZ_4K + 3,
				   &by_fast);
	kfree(buf);
	if (by_fast != by_lib) {
		pr_warn("softrdma: %s does not match the library: %s by the library\n",
			what, name);
		return 0;
	}
	if (t_fast >= t_lib) {
		pr_info("softrdma: %s is slower than the library here (%llu ns against %llu per 4 KiB): %s by the library\n",
			what, t_fast, t_lib, name);
		return 0;
	}
	pr_debug("softrdma: %s by %s (%llu ns against the library's %llu per 4 KiB)\n",
		 name, what, t_fast, t_lib);
	return 1;
}

/*
 * softrdma_crc32 - CRC32 as crc32_le(), by the faster code here
 * @crc: the seed (not inverted before or after)
 * @p: the bytes
 * @len: how many
 */
u32 softrdma_crc32(u32 crc, const void *p, size_t len)
{
	if (softrdma_crc_fold_now(len))
		return softrdma_crc32_by_fold(crc, NULL, p, len);
	return crc32_le(crc, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32);

/*
 * softrdma_crc32_copy - softrdma_crc32() over @src, copying it to @dst
 * @crc: the seed
 * @dst: where to, @len bytes not overlapping @src
 * @src: the bytes
 * @len: how many
 */
u32 softrdma_crc32_copy(u32 crc, void *dst, const void *src, size_t len)
{
	if (softrdma_crc_fold_now(len))
		return softrdma_crc32_by_fold(crc, dst, src, len);
	memcpy(dst, src, len);
	return crc32_le(crc, src, len);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_copy);

#if IS_ENABLED(CONFIG_KUNIT)
/* KUnit's softrdma_crc32_in2(): the inline, out of line. */
u32 softrdma_crc32_in2_kunit(bool held, u32 crc, const void *a, size_t alen,
			     const void *b, size_t blen)
{
	return softrdma_crc32_in2(held, crc, a, alen, b, blen);
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_crc32_in2_kunit);
#endif

/* Module load: never fails, the library is always there. */
void softrdma_crc_init(void)
{
	softrdma_crc32_choose();
	softrdma_crc32c_init();
}

void softrdma_crc_exit(void)
{
	softrdma_crc32c_exit();
}
