/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CRC32 (IEEE 802.3, bit-reflected: the ICRC's) by carry-less multiply
 * (PCLMULQDQ), folding 128-bit lanes forward as in Intel's "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ Instruction"
 * (2009), with an optional copy of every byte read, so that a payload is
 * summed in the pass that places it.
 *
 * u32 softrdma_crc32_fold(u32 crc, u8 *dst, const u8 *src, size_t len);
 * u32 softrdma_crc32_fold_copy(u32 crc, u8 *dst, const u8 *src,
 *				size_t len);
 *
 * Go on with @crc (as crc32_le() takes and returns it) over the @len
 * bytes of @src; the second also copies them to @dst (the first ignores
 * @dst). @len is at least 16; neither pointer need be aligned. The caller
 * holds the FPU (kernel_fpu_begin()). Four lanes from 64 bytes on, one
 * below and for what is left of 64; a last len & 15 bytes are taken with
 * the 16 that end the buffer, shifted into place (SSSE3's PSHUFB).
 *
 * The constants (x^k mod P for the fold distances, bit-reflected and
 * shifted for the reflected product; mu and P for the Barrett reduction)
 * are those of the polynomial 0x04c11db7.
 */
#include <linux/linkage.h>

.section .rodata.cst16, "aM", @progbits, 16
.align 16
/* x^(4*128+32) and x^(4*128-32) mod P: four lanes, 512 bits ahead. */
.Lk4:	.quad 0x0000000154442bd4, 0x00000001c6e41596
/* x^(128+32) and x^(128-32) mod P: one lane, 128 bits ahead. */
.Lk1:	.quad 0x00000001751997d0, 0x00000000ccaa009e
/* x^64 mod P: 64 bits to 32. */
.Lk64:	.quad 0x0000000163cd6124, 0
/* P and mu = x^64 / P, for Barrett. */
.Lpmu:	.quad 0x00000001db710641, 0x00000001f7011641
.Llow32: .quad 0x00000000ffffffff, 0

/*
 * PSHUFB's masks and a byte mask for a tail of r (1 to 15) bytes, read 16
 * bytes at a time from byte r on: at .Lshift + r, the low r bytes to the
 * top (the rest zero); at .Lshift + 16 + r, the top 16 - r bytes to the
 * bottom; at .Lshift + 48 + r, ones over the top r bytes. Not mergeable:
 * one table.
 */
.section .rodata, "a"
.Lshift:
	.fill		16, 1, 0x80
	.byte		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07
	.byte		0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
	.fill		16, 1, 0x80
	.fill		16, 1, 0x00
	.fill		16, 1, 0xff

.text

/* \x = \x.lo * \k.lo ^ \x.hi * \k.hi ^ \d (\t is scratch). */
.macro FOLD x, k, d, t
	movdqa		\x, \t
	pclmulqdq	$0x00, \k, \x
	pclmulqdq	$0x11, \k, \t
	pxor		\t, \x
	pxor		\d, \x
.endm

/* The next 64 bytes at %rdx into %xmm8-11 (and with \copy to %rsi). */
.macro LOAD4 copy
	movdqu		0x00(%rdx), %xmm8
	movdqu		0x10(%rdx), %xmm9
	movdqu		0x20(%rdx), %xmm10
	movdqu		0x30(%rdx), %xmm11
.if \copy
	movdqu		%xmm8, 0x00(%rsi)
	movdqu		%xmm9, 0x10(%rsi)
	movdqu		%xmm10, 0x20(%rsi)
	movdqu		%xmm11, 0x30(%rsi)
	add		$64, %rsi
.endif
	add		$64, %rdx
.endm

/*
 * With \lane, %xmm0 is a lane already (and %xmm7 .Lk1), that the first
 * 16 bytes at %rdx go on from; else the seed in %edi.
 */
.macro CRC32_FOLD copy, lane=0
.if !\lane
	movd		%edi, %xmm0
.endif
	sub		$64, %rcx
	jb		0f
	/* Four lanes from the first 64 bytes, the seed in the first. */
	LOAD4		\copy
.if \lane
	FOLD		%xmm0, %xmm7, %xmm8, %xmm4
.else
	pxor		%xmm8, %xmm0
.endif
	movdqa		%xmm9, %xmm1
	movdqa		%xmm10, %xmm2
	movdqa		%xmm11, %xmm3
	movdqa		.Lk4(%rip), %xmm7
	sub		$64, %rcx
	jb		2f
	/* Each lane 512 bits on, over the next 64 bytes. */
1:	LOAD4		\copy
	FOLD		%xmm0, %xmm7, %xmm8, %xmm4
	FOLD		%xmm1, %xmm7, %xmm9, %xmm5
	FOLD		%xmm2, %xmm7, %xmm10, %xmm6
	FOLD		%xmm3, %xmm7, %xmm11, %xmm12
	sub		$64, %rcx
	jae		1b
2:	add		$64, %rcx
	/* Four lanes into one. */
	movdqa		.Lk1(%rip), %xmm7
	FOLD		%xmm0, %xmm7, %xmm1, %xmm4
	FOLD		%xmm0, %xmm7, %xmm2, %xmm4
	FOLD		%xmm0, %xmm7, %xmm3, %xmm4
	jmp		6f
	/* Under 64 bytes: one lane from the first 16, the seed in it. */
0:	add		$48, %rcx
	movdqu		(%rdx), %xmm1
.if \copy
	movdqu		%xmm1, (%rsi)
	add		$16, %rsi
.endif
	add		$16, %rdx
.if \lane
	FOLD		%xmm0, %xmm7, %xmm1, %xmm4
.else
	pxor		%xmm1, %xmm0
	movdqa		.Lk1(%rip), %xmm7
.endif
	/* Then 16 bytes at a time. */
6:	sub		$16, %rcx
	jb		4f
3:	movdqu		(%rdx), %xmm1
.if \copy
	movdqu		%xmm1, (%rsi)
	add		$16, %rsi
.endif
	add		$16, %rdx
	FOLD		%xmm0, %xmm7, %xmm1, %xmm4
	sub		$16, %rcx
	jae		3b
4:	add		$16, %rcx
	jz		5f
	/*
	 * The last r = %rcx bytes: the lane and they are 16 + r bytes, whose
	 * last 16 are the lane's last 16 - r and the r (read with the 16
	 * that end the buffer), and whose first r, the lane's, go 128 bits
	 * on as a lane of their own.
	 */
	movdqu		-16(%rdx,%rcx), %xmm2
.if \copy
	movdqu		%xmm2, -16(%rsi,%rcx)
.endif
	lea		.Lshift(%rip), %rax
	movdqu		(%rax,%rcx), %xmm3
	movdqu		16(%rax,%rcx), %xmm5
	movdqu		48(%rax,%rcx), %xmm6
	pand		%xmm6, %xmm2
	movdqa		%xmm0, %xmm1
	pshufb		%xmm5, %xmm1
	pxor		%xmm2, %xmm1
	pshufb		%xmm3, %xmm0
	FOLD		%xmm0, %xmm7, %xmm1, %xmm4
5:	/* 128 bits to 64: the low half times x^96 on the high half. */
	movdqa		%xmm0, %xmm1
	pclmulqdq	$0x10, %xmm7, %xmm0
	psrldq		$8, %xmm1
	pxor		%xmm1, %xmm0
	/* 64 bits to 32, the upper 32 bits and the lower times x^64. */
	movdqa		%xmm0, %xmm1
	psrldq		$4, %xmm1
	pand		.Llow32(%rip), %xmm0
	pclmulqdq	$0x00, .Lk64(%rip), %xmm0
	pxor		%xmm1, %xmm0
	/* Barrett: crc = (r ^ ((r.lo32 * mu).lo32 * P)) >> 32. */
	movdqa		.Lpmu(%rip), %xmm7
	movdqa		%xmm0, %xmm1
	pand		.Llow32(%rip), %xmm0
	pclmulqdq	$0x10, %xmm7, %xmm0
	pand		.Llow32(%rip), %xmm0
	pclmulqdq	$0x00, %xmm7, %xmm0
	pxor		%xmm1, %xmm0
	psrldq		$4, %xmm0
	movd		%xmm0, %eax
	RET
.endm

SYM_FUNC_START(softrdma_crc32_fold)
	CRC32_FOLD	0
SYM_FUNC_END(softrdma_crc32_fold)

SYM_FUNC_START(softrdma_crc32_fold_copy)
	CRC32_FOLD	1
SYM_FUNC_END(softrdma_crc32_fold_copy)

/*
 * u32 softrdma_crc32_fold_head(u32 crc, const u8 *head, size_t hlen,
 *				const u8 *src, size_t len);
 *
 * Go on with @crc over the @hlen bytes at @head (whole lanes: a multiple
 * of 16, at least 16), then over the @len at @src (at least 16), as one
 * run: one reduction for both.
 */
SYM_FUNC_START(softrdma_crc32_fold_head)
	movd		%edi, %xmm0
	movdqu		(%rsi), %xmm1
	pxor		%xmm1, %xmm0
	movdqa		.Lk1(%rip), %xmm7
	jmp		8f
7:	movdqu		(%rsi), %xmm1
	FOLD		%xmm0, %xmm7, %xmm1, %xmm4
8:	add		$16, %rsi
	sub		$16, %rdx
	jnz		7b
	mov		%rcx, %rdx
	mov		%r8, %rcx
	CRC32_FOLD	0, 1
SYM_FUNC_END(softrdma_crc32_fold_head)
