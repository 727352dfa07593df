/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernels softrdma builds for (6.1 to 7.3) name differently.
 *
 * The driver is written for the newest kernel's interfaces; on an older
 * kernel this header maps them onto what it has. Which kernel offers what
 * is decided at build time by the probes in compat.mk (they grep the
 * headers built against and set -DSOFTRDMA_HAVE_*), never by a version
 * number: a distribution kernel with a backport gets it right as well.
 * Every difference lives here, and nowhere else.
 */
#ifndef SOFTRDMA_COMPAT_H
#define SOFTRDMA_COMPAT_H

#include <linux/crc32.h>
#include <linux/hrtimer.h>
#include <linux/socket.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* Timers: from_timer() became timer_container_of() (after 6.12). */
#ifndef SOFTRDMA_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

/* hrtimers: hrtimer_setup() names the callback (6.13); before, init. */
#ifndef SOFTRDMA_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/* CRC32C: crc32c() in <linux/crc32.h>; before it, __crc32c_le(). */
#ifndef SOFTRDMA_HAVE_CRC32C
static inline u32 crc32c(u32 crc, const void *p, size_t len)
{
	return __crc32c_le(crc, p, len);
}
#endif

/*
 * The MPA CRC's CRC32c by the fastest code the kernel has:
 * softrdma_crc32c() is crc32c() (seeded with @crc, the result neither
 * inverted nor swapped). Where the library dispatches to the CPU's CRC
 * instructions itself (SOFTRDMA_HAVE_CRC_ARCH: 6.14 on), it is the
 * library's. Before, that is table-driven C, and compat.c takes the
 * crypto API's driver (crc32c-intel) where it has it and it is the faster
 * here, chosen at module load by softrdma_crc32c_init(); else the
 * library. (The ICRC's CRC32 is crc.c's on every kernel.)
 */
#ifdef SOFTRDMA_HAVE_CRC_ARCH
static inline u32 softrdma_crc32c(u32 crc, const void *p, size_t len)
{
	return crc32c(crc, p, len);
}

static inline void softrdma_crc32c_init(void)
{
}

static inline void softrdma_crc32c_exit(void)
{
}
#else
struct crypto_shash;

u32 softrdma_crc32c(u32 crc, const void *p, size_t len);
void softrdma_crc32c_init(void);
void softrdma_crc32c_exit(void);
/* One pass of a crypto driver, seeded like the library (KUnit's too). */
u32 softrdma_crc_shash(struct crypto_shash *tfm, u32 crc, const void *p,
		       size_t len);
#endif

/*
 * Sockets: kernel_bind(), kernel_connect() and the protocols' bind and
 * connect take a struct sockaddr_unsized; before, the same bytes as a
 * struct sockaddr.
 */
#ifndef SOFTRDMA_HAVE_SOCKADDR_UNSIZED
#define sockaddr_unsized sockaddr
#endif

/* User memory: ib_umem_get() of a virtual range became ib_umem_get_va(). */
#ifndef SOFTRDMA_HAVE_IB_UMEM_GET_VA
static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

/*
 * The ODP caps for RDMA FLUSH and ATOMIC WRITE have their names from 6.15
 * on; before, query_device_ex passes the transport caps' bits on as they
 * are, and the bits are the uverbs ABI's (IB_UVERBS_ODP_SUPPORT_*).
 */
#ifndef SOFTRDMA_HAVE_ODP_FLUSH
#define IB_ODP_SUPPORT_FLUSH		BIT(6)
#define IB_ODP_SUPPORT_ATOMIC_WRITE	BIT(7)
#endif

/*
 * On-demand paging (odp.c), with CONFIG_INFINIBAND_ON_DEMAND_PAGING:
 * SOFTRDMA_ODP is 1. ib_umem_odp keeps the pages it mapped in an
 * hmm_dma_map (SOFTRDMA_HAVE_HMM_DMA_MAP: 6.16 on), whose pfn_list holds
 * HMM pfns with HMM_PFN_VALID and HMM_PFN_WRITE (a device without DMA, as
 * softrdma is, gets that list alone), and ib_umem_odp_map_dma_and_lock()
 * maps writable for HMM_PFN_WRITE in its access mask. Before (6.1 to
 * 6.15), the pages are in a pfn_list and a dma_list whose low bits say
 * read and write, and the access mask is in those bits.
 */
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#define SOFTRDMA_ODP	1
#include <linux/hmm.h>

#ifdef SOFTRDMA_HAVE_HMM_DMA_MAP
/* The access mask ib_umem_odp_map_dma_and_lock() takes. */
static inline u64 compat_odp_access(bool write)
{
	return HMM_PFN_VALID | (write ? HMM_PFN_WRITE : 0);
}

/*
 * What @umem has mapped of its page of index @idx (PAGE_SIZE pages): an
 * HMM pfn with HMM_PFN_VALID (and HMM_PFN_WRITE if writable), or 0. Only
 * under umem_mutex, for a range ib_umem_odp_map_dma_and_lock() has just
 * mapped: hmm_range_fault() writes the list with no lock held.
 */
static inline unsigned long compat_odp_pfn(struct ib_umem_odp *umem,
					   size_t idx)
{
	unsigned long pfn = umem->map.pfn_list[idx];

	if (!(pfn & HMM_PFN_VALID))
		return 0;
	return (pfn & ~HMM_PFN_FLAGS) | (pfn & (HMM_PFN_VALID | HMM_PFN_WRITE));
}
#else
static inline u64 compat_odp_access(bool write)
{
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
}

static inline unsigned long compat_odp_pfn(struct ib_umem_odp *umem,
					   size_t idx)
{
	dma_addr_t dma = umem->dma_list[idx];

	if (!(dma & ODP_READ_ALLOWED_BIT))
		return 0;
	return (umem->pfn_list[idx] & ~HMM_PFN_FLAGS) | HMM_PFN_VALID |
	       (dma & ODP_WRITE_ALLOWED_BIT ? HMM_PFN_WRITE : 0);
}
#endif
#else
#define SOFTRDMA_ODP	0
#endif

/*
 * Device ops whose arguments changed. The driver writes an op in its newest
 * form, follows it with COMPAT_ADAPT_<OP>(fn); and puts COMPAT_OP_<OP>(fn)
 * in its ops. Where the kernel has the old form, COMPAT_ADAPT_<OP>()
 * defines an adapter with it and COMPAT_OP_<OP>() names the adapter; on
 * every kernel, COMPAT_ADAPT_<OP>() checks the type against the op's.
 */
#define compat_op_type(op)	typeof_member(const struct ib_device_ops, op)

/* reg_user_mr takes a DMA handle (struct ib_dmah); before, it had none. */
#ifdef SOFTRDMA_HAVE_IB_DMAH
#define COMPAT_ADAPT_REG_USER_MR(fn)					\
	static_assert(__same_type(&(fn), compat_op_type(reg_user_mr)))
#define COMPAT_OP_REG_USER_MR(fn)	fn
#else
struct ib_dmah;
#define COMPAT_ADAPT_REG_USER_MR(fn)					\
static struct ib_mr *fn##_compat(struct ib_pd *pd, u64 start, u64 length, \
				 u64 iova, int access,			\
				 struct ib_udata *udata)		\
{									\
	return fn(pd, start, length, iova, access, NULL, udata);	\
}									\
static_assert(__same_type(&fn##_compat, compat_op_type(reg_user_mr)))
#define COMPAT_OP_REG_USER_MR(fn)	fn##_compat
#endif

/*
 * create_cq takes the uverbs attribute bundle (6.10); before, the bundle's
 * driver_udata, from which the adapter finds the bundle (NULL for a
 * kernel CQ either way).
 */
#ifdef SOFTRDMA_HAVE_CREATE_CQ_ATTRS
#define COMPAT_ADAPT_CREATE_CQ(fn)					\
	static_assert(__same_type(&(fn), compat_op_type(create_cq)))
#define COMPAT_OP_CREATE_CQ(fn)		fn
#else
#define COMPAT_ADAPT_CREATE_CQ(fn)					\
static int fn##_compat(struct ib_cq *cq,				\
		       const struct ib_cq_init_attr *attr,		\
		       struct ib_udata *udata)				\
{									\
	return fn(cq, attr,						\
		  udata ? rdma_udata_to_uverbs_attr_bundle(udata) : NULL); \
}									\
static_assert(__same_type(&fn##_compat, compat_op_type(create_cq)))
#define COMPAT_OP_CREATE_CQ(fn)		fn##_compat
#endif

/*
 * IBTA 1.5's RDMA FLUSH and ATOMIC WRITE, which the kernel names from 6.2
 * on; before it (6.1) the uverbs values, which ib_core does not pass on.
 */
#ifndef SOFTRDMA_HAVE_IB_FLUSH
#define IB_WR_FLUSH			14
#define IB_WR_ATOMIC_WRITE		15
#define IB_WC_FLUSH			8
#define IB_WC_ATOMIC_WRITE		9
#define IB_ACCESS_FLUSH_GLOBAL		BIT(8)
#define IB_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define IB_DEVICE_FLUSH_GLOBAL		BIT_ULL(38)
#define IB_DEVICE_ATOMIC_WRITE		BIT_ULL(40)
#define IB_FLUSH_GLOBAL			BIT(0)
#define IB_FLUSH_PERSISTENT		BIT(1)
#define IB_FLUSH_RANGE			0
#define IB_FLUSH_MR			1
#endif

/*
 * Sending pages by reference (MSG_SPLICE_PAGES, bvec_set_virt(),
 * page_frag_cache_drain(); 6.12 has them, 6.1 not): without it, the iWARP
 * sender copies every payload (SOFTRDMA_IW_ZC is 0).
 */
#ifdef SOFTRDMA_HAVE_SPLICE_PAGES
#define SOFTRDMA_IW_ZC	1
#else
#define SOFTRDMA_IW_ZC	0
#endif

#endif /* SOFTRDMA_COMPAT_H */
