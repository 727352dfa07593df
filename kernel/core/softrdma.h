/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrdma: a software RDMA NIC (RoCEv2 and iWARP) over any Ethernet netdev.
 */
#ifndef SOFTRDMA_H
#define SOFTRDMA_H

#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include "softrdma-abi.h"
#include "util.h"

#define SOFTRDMA_VENDOR_ID	0xffffff	/* no IEEE OUI of our own */
#define SOFTRDMA_MAX_PD		0x10000
#define SOFTRDMA_MAX_CQ		0x10000
#define SOFTRDMA_MAX_MR		0x100000
#define SOFTRDMA_MAX_MR_SIZE	BIT_ULL(40)
#define SOFTRDMA_MAX_SGE	32
#define SOFTRDMA_MAX_QP_WR	16384
#define SOFTRDMA_GID_TABLE_LEN	32

/* One softrdma device: an ib_device bound to one netdev, one port. */
struct softrdma_dev {
	struct ib_device ibdev;
	struct net_device *netdev;	/* reference held while we exist */
	netdevice_tracker netdev_tracker;
	enum softrdma_transport transport;
	struct list_head list;		/* in softrdma_devices */
	bool unregistering;

	struct xarray mrs;		/* key index -> softrdma_mr */
	u32 next_mr_index;
	atomic_t num_pds;
	atomic_t num_cqs;
	atomic_t num_mrs;
};

struct softrdma_ucontext {
	struct ib_ucontext ibuc;
};

struct softrdma_pd {
	struct ib_pd ibpd;
};

/* A ring of fixed-size slots, mapped into the process when user-owned. */
struct softrdma_ring {
	struct softrdma_ring_hdr *hdr;	/* vmalloc_user memory */
	void *slots;
	u32 num_slots;
	u32 slot_size;
	size_t size;
	struct rdma_user_mmap_entry *mmap_entry;
};

struct softrdma_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* serialises producers */
	struct softrdma_ring ring;
	u8 notify;			/* IB_CQ_SOLICITED / IB_CQ_NEXT_COMP */
	bool user;
};

struct softrdma_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	u64 iova;
	u64 length;
	int access;
};

struct softrdma_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *vaddr;			/* vmalloc_user memory to map */
};

static inline struct softrdma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softrdma_dev, ibdev);
}

static inline struct softrdma_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct softrdma_pd, ibpd);
}

static inline struct softrdma_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softrdma_cq, ibcq);
}

static inline struct softrdma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrdma_mr, ibmr);
}

static inline struct softrdma_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct softrdma_ucontext, ibuc);
}

/* main.c */
extern const char *const softrdma_transport_names[];
int softrdma_devlist_add(struct softrdma_dev *sdev, const char *name);
void softrdma_devlist_del(struct softrdma_dev *sdev);

/* device.c */
int softrdma_register(const char *name, struct net_device *ndev,
		      enum softrdma_transport transport);
void softrdma_port_event(struct softrdma_dev *sdev, enum ib_event_type type);

/* verbs.c */
extern const struct ib_device_ops softrdma_common_ops;

/* ring.c */
int softrdma_ring_init(struct softrdma_ring *ring, u32 num_slots,
		       u32 slot_size);
void softrdma_ring_free(struct softrdma_ring *ring);
int softrdma_ring_map(struct softrdma_ring *ring, struct ib_ucontext *uctx,
		      u64 *offset);
int softrdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void softrdma_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

/* roce/roce.c */
extern const struct ib_device_ops softrdma_roce_ops;

/* iwarp/iwarp.c */
extern const struct ib_device_ops softrdma_iwarp_ops;

#endif /* SOFTRDMA_H */
