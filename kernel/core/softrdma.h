/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrdma: a software RDMA NIC (RoCEv2 and iWARP) over any Ethernet netdev.
 */
#ifndef SOFTRDMA_H
#define SOFTRDMA_H

#include <linux/bvec.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "softrdma-abi.h"
#include "transport.h"
#include "util.h"

#define SOFTRDMA_VENDOR_ID	0xffffff	/* no IEEE OUI of our own */
#define SOFTRDMA_MAX_PD		0x10000
#define SOFTRDMA_MAX_CQ		0x10000
#define SOFTRDMA_MAX_MR		0x100000
#define SOFTRDMA_MAX_MR_SIZE	BIT_ULL(40)
#define SOFTRDMA_MAX_MW		0x10000
/*
 * A key (lkey, rkey, STag) is a 24-bit index, drawn at random from one
 * space for MRs and memory windows (sdev->keys), and an 8-bit key the
 * consumer may change (fast registration, window binds). Index 0 is never
 * given: no key is 0.
 */
#define SOFTRDMA_KEY_INDICES	XA_LIMIT(1, 0xffffff)
#define SOFTRDMA_MAX_SGE	32
#define SOFTRDMA_MAX_QP_WR	16384
#define SOFTRDMA_GID_TABLE_LEN	32
#define SOFTRDMA_MAX_QP		0x10000
#define SOFTRDMA_MAX_INLINE	512
#define SOFTRDMA_MAX_RD_ATOMIC	128
#define SOFTRDMA_PSN_MASK	0xffffff
#define SOFTRDMA_MAX_FRMR_PAGES	4096	/* per fast-registration MR */
#define SOFTRDMA_MAX_AH		0x10000
#define SOFTRDMA_MAX_XRCD	0x10000
/* XRC SRQ numbers are drawn at random from this range (xrc.c). */
#define SOFTRDMA_SRQN_LIMIT	XA_LIMIT(1, 0xffffff)
/* The GSI QP's number and Q_Key (IBTA 13.5.1 and 10.2.5). */
#define SOFTRDMA_GSI_QPN	1
#define SOFTRDMA_GSI_QKEY	0x80010000U

/* Per-device packet and event counters (rdma statistic show link). */
enum softrdma_counter {
	SOFTRDMA_CNT_TX_PKTS,
	SOFTRDMA_CNT_RX_PKTS,
	SOFTRDMA_CNT_RX_ICRC_ERR,
	SOFTRDMA_CNT_RX_MALFORMED,
	SOFTRDMA_CNT_RX_NOQP,
	SOFTRDMA_CNT_RX_QP_STATE,
	SOFTRDMA_CNT_RETRANSMITS,
	SOFTRDMA_CNT_SEQ_NAKS,
	SOFTRDMA_CNT_RNR_NAKS,
	SOFTRDMA_CNT_DUPLICATES,
	SOFTRDMA_CNT_RX_BACKLOG_DROPS,
	SOFTRDMA_CNT_ACKS_COALESCED,
	SOFTRDMA_CNT_TX_ZCOPY,		/* iWARP FPDUs sent by reference */
	SOFTRDMA_CNT_RX_QKEY_DROPS,	/* UD: the Q_Key did not match */
	SOFTRDMA_CNT_RX_UD_NO_RECV,	/* UD: no receive WQE posted */
	SOFTRDMA_CNT_RX_UC_DROPS,	/* UC: packets and messages dropped */
	SOFTRDMA_CNT_RX_MCAST_DROPS,	/* UD: to no group attached here */
	SOFTRDMA_CNT_TX_ERRORS,		/* packets not sent: no memory, route */
	SOFTRDMA_CNT_SQ_KICKS,		/* a process's system call for its SQ */
	SOFTRDMA_CNT_POLLER_SENDS,	/* the poller found WQEs and sent */
	SOFTRDMA_CNT_LOOP_MERGED,	/* RoCE loop: packets sent in another's skb */
	SOFTRDMA_CNT_GSO_MERGED,	/* RoCE wire: packets sent in another's GSO skb */
	SOFTRDMA_CNT_RX_TRAIN_PKTS,	/* RoCE: packets placed from a train taken whole */
	SOFTRDMA_CNT_TX_ZCOPY_PKTS,	/* RoCE: packets sent with the MR's pages */
	SOFTRDMA_CNT_RP_CNP_IGNORED,	/* RoCE: CNPs received, not acted on */
	SOFTRDMA_CNT_SR_OOO_HELD,	/* RoCE SR: packets kept out of order */
	SOFTRDMA_CNT_SR_OOO_DROPS,	/* RoCE SR: out of order, not kept */
	SOFTRDMA_CNT_SR_RETRANSMITS,	/* RoCE SR: packets a NAK sent again */
	SOFTRDMA_CNT_GBN_CUTS,		/* RoCE go-back-N: loss window cuts */
	SOFTRDMA_CNT_NP_ECN_MARKED,	/* RoCE: packets received marked CE */
	SOFTRDMA_CNT_NP_CNP_SENT,	/* RoCE: CNPs sent for them */
	SOFTRDMA_CNT_RP_CNP_HANDLED,	/* RoCE: CNPs that slowed a QP */
	SOFTRDMA_CNT_RX_UD_ODP_DROPS,	/* UD: no room to wait for ODP pages */
	SOFTRDMA_CNT_ODP_FAULTS,	/* ODP: ranges the worker faulted in */
	SOFTRDMA_CNT_ODP_INVALIDATIONS,	/* ODP: ranges the MMU notifier took */
	SOFTRDMA_CNT_RX_ODP_WAITS,	/* iWARP: the stream held for ODP pages */
	SOFTRDMA_NUM_COUNTERS
};

/* One softrdma device: an ib_device bound to one netdev, one port. */
struct softrdma_dev {
	struct ib_device ibdev;
	struct net_device *netdev;	/* reference held while we exist */
	netdevice_tracker netdev_tracker;
	const struct softrdma_transport *transport;
	void *transport_priv;		/* the transport's, per device */
	struct list_head list;		/* in softrdma_devices (RCU) */
	bool unregistering;

	struct xarray keys;		/* key index -> MR or window (mem.c) */
	atomic_t num_mws;
	struct xarray qps;		/* QP number -> softrdma_qp */
	struct mutex qpn_lock;		/* numbering QPs, the quarantine */
	u32 *qpn_quarantine;		/* QP numbers held back (qp.c) */
	u32 qpn_quarantine_next;
	atomic_t num_qps;
	atomic_t num_pds;
	atomic_t num_cqs;
	atomic_t num_mrs;
	struct xarray ahs;		/* AH number -> softrdma_ah (ah.c) */
	u32 next_ah_num;
	atomic_t num_ahs;
	struct xarray srqs;		/* XRC SRQ number -> softrdma_srq (xrc.c) */
	atomic_t num_xrcds;
	atomic64_t counters[SOFTRDMA_NUM_COUNTERS];
};

static inline void softrdma_count(struct softrdma_dev *sdev,
				  enum softrdma_counter c)
{
	atomic64_inc(&sdev->counters[c]);
}

static inline void softrdma_count_add(struct softrdma_dev *sdev,
				      enum softrdma_counter c, u32 n)
{
	atomic64_add(n, &sdev->counters[c]);
}

struct softrdma_ucontext {
	struct ib_ucontext ibuc;
};

struct softrdma_pd {
	struct ib_pd ibpd;
};

/* An XRC domain (xrc.c): ib_core keeps its TGT QPs and the file it is of. */
struct softrdma_xrcd {
	struct ib_xrcd ibxrcd;
};

/*
 * An address handle (ah.c): numbered per device, UD WQEs name it by
 * ah_num. The transport's route follows it (its ops' object size).
 */
struct softrdma_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct rdma_ah_attr attr;	/* for query_ah; no sgid_attr */
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
	struct softrdma_dev *sdev;
	spinlock_t lock;		/* serialises producers */
	struct softrdma_ring ring;
	u8 notify;			/* IB_CQ_SOLICITED / IB_CQ_NEXT_COMP */
	bool user;
	u32 arm_seen;			/* the ring header's arm word, last read */
};

/* The attributes modify_qp sets, as the transports will read them. */
struct softrdma_qp_attrs {
	enum ib_mtu path_mtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	u32 dest_qp_num;
	u32 sq_psn;
	u32 rq_psn;
	u32 qkey;
	int access;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
};

/* The kernel's copy of a send WQE it has taken off the ring. */
struct softrdma_swqe {
	struct softrdma_send_wqe wqe;
	u32 len;
	u32 npkts;
	u32 first_psn;
	u32 last_psn;
};

struct softrdma_qp {
	struct ib_qp ibqp;
	struct softrdma_dev *sdev;
	/*
	 * The PD its memory accesses are checked against: ibqp.pd; on an XRC
	 * TGT QP (which has none), the PD of the XRC SRQ the request in hand
	 * names, and NULL between requests (qp->lock).
	 */
	struct ib_pd *pd;
	/*
	 * XRC TGT QPs: the XRC domain, and the XRC SRQ of the request in hand
	 * (under qp->lock and RCU, NULL between requests; xrc.c).
	 */
	struct ib_xrcd *xrcd;
	struct softrdma_srq *xrc_srq;
	const struct softrdma_transport *transport;
	struct mutex state_lock;	/* modify_qp against modify_qp */
	spinlock_t lock;		/* state and transport state */
	refcount_t refs;		/* packets being handled */
	struct completion released;
	enum ib_qp_state state;
	struct softrdma_swqe *swqe;	/* one per SQ slot */
	struct softrdma_sge *ssge;	/* sq_max_sge per SQ slot */
	u8 *sinline;			/* max_inline bytes per SQ slot */
	/* Send queue progress, kept by the transport's requester. */
	struct {
		u32 send_idx;		/* next WQE to send */
		u32 comp_idx;		/* oldest WQE not completed */
	} req;
	/* The receive WQE an arriving message is placed in. */
	struct {
		bool in_recv;		/* rwqe holds a SEND in progress */
		u32 roff;		/* bytes of it placed */
		struct softrdma_recv_wqe rwqe;
		struct softrdma_sge rsge[SOFTRDMA_MAX_SGE];
		/*
		 * The MR the last request placed in went through, kept
		 * with a reference: the packets and messages after it
		 * that name its key skip the key table
		 * (softrdma_resp_mr_get()).
		 */
		struct softrdma_mr *mr;
		/*
		 * The iovas [kept_lo, kept_hi) of mr an access may reach
		 * with only its key and rights checked: a user MR's whole
		 * range; an ODP MR's pages found present (and writable, if
		 * it is), until an invalidation (softrdma_odp_hold_kept());
		 * none of other MRs.
		 */
		u64 kept_lo, kept_hi;
	} resp;
	struct softrdma_qp_attrs attrs;
	struct list_head poll_node;	/* on the poller's list */
	ktime_t poll_last;		/* when the poller last found work */
	bool poll_dead;			/* never to be polled again */
	/*
	 * The poller has this QP (on its list or in its round): the
	 * requester leaves NEED_KICK clear, the poller looks. qp->lock.
	 */
	bool polled;
	struct softrdma_ring sq;
	struct softrdma_ring rq;
	struct softrdma_cq *scq;
	struct softrdma_cq *rcq;
	u32 sq_max_sge;
	u32 rq_max_sge;
	u32 max_inline;
	bool sq_sig_all;
	u32 create_flags;		/* IB_QP_CREATE_* it was made with */
	bool sqd_notify;		/* SQ_DRAINED event still to send */
	bool user;			/* rings mapped into a process */
	/* Kernel QPs: the verbs write the rings under these locks. */
	spinlock_t sq_lock;		/* producer of sq */
	spinlock_t rq_lock;		/* producer of rq */
	struct work_struct kick_work;	/* a kick from atomic context */
};

struct softrdma_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* consumers and the limit */
	struct softrdma_ring ring;
	u32 max_sge;
	u32 limit;
	bool armed;
	spinlock_t prod_lock;		/* kernel SRQs: producer of ring */
};

enum softrdma_mr_type {
	SOFTRDMA_MR_USER,		/* pinned user pages (umem) */
	SOFTRDMA_MR_DMA,		/* all kernel memory: iova = kernel VA */
	SOFTRDMA_MR_FRMR,		/* fast registration (frmr.c) */
	SOFTRDMA_MR_ODP,		/* user pages, on demand (odp.c) */
};

struct softrdma_odp;

/* A fast-registration MR's own state; see frmr.c. */
struct softrdma_frmr {
	u64 *pages;			/* page addresses (kernel VAs) */
	u32 max_pages;
	u32 npages;			/* set by map_mr_sg */
	u32 page_shift;
	u32 off0;			/* of ibmr.iova in pages[0] */
	u32 key;			/* the key accesses must name */
	bool valid;			/* registered, not invalidated */
};

struct softrdma_mr {
	struct ib_mr ibmr;
	enum softrdma_mr_type type;
	struct softrdma_frmr fr;
	struct ib_umem *umem;
	struct softrdma_odp *odp;	/* SOFTRDMA_MR_ODP: odp.c */
	/*
	 * The pinned pages of umem; of an ODP MR that is not implicit, its
	 * page table (odp.c): NULL where not mapped.
	 */
	struct page **pages;
	size_t npages;
	unsigned int page_offset;	/* of iova in pages[0] */
	refcount_t refs;		/* accesses in flight + 1 */
	struct completion released;
	struct rcu_head rcu;
	u64 iova;
	u64 length;
	int access;
	atomic_t num_mws;		/* memory windows bound to it */
	/* QPs that keep it for their responder (qp->resp.mr), and whether
	 * deregistration has begun (none may keep it from then on).
	 */
	atomic_t resp_kept;
	bool dying;
};

/*
 * A memory window (mw.c). A bound window holds a reference to its MR; a
 * type 2 window is usable only through the QP it was bound through.
 */
struct softrdma_mw {
	struct ib_mw ibmw;
	spinlock_t lock;		/* the binding below, and ibmw.rkey */
	bool valid;			/* type 1 always, type 2 while bound */
	struct softrdma_mr *mr;		/* NULL while unbound or zero length */
	const struct softrdma_qp *qp;	/* type 2: compared, never used */
	u64 addr;
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

/* The slot of @ring that holds free-running index @idx. */
static inline void *softrdma_ring_slot(const struct softrdma_ring *ring,
				       u32 idx)
{
	return (u8 *)ring->slots +
	       (size_t)(idx & (ring->num_slots - 1)) * ring->slot_size;
}

/* Ring flags are the kernel's to write; callers serialise per ring. */
static inline void softrdma_ring_set_flag(struct softrdma_ring *ring, u32 flag)
{
	WRITE_ONCE(ring->hdr->flags, READ_ONCE(ring->hdr->flags) | flag);
}

static inline void softrdma_ring_clear_flag(struct softrdma_ring *ring,
					    u32 flag)
{
	WRITE_ONCE(ring->hdr->flags, READ_ONCE(ring->hdr->flags) & ~flag);
}

static inline struct softrdma_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct softrdma_pd, ibpd);
}

static inline struct softrdma_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softrdma_cq, ibcq);
}

static inline struct softrdma_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softrdma_qp, ibqp);
}

static inline struct softrdma_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softrdma_ah, ibah);
}

/* A QP of a datagram service (UD, or the GSI QP which is one too). */
static inline bool softrdma_qp_is_ud(const struct softrdma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct softrdma_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softrdma_srq, ibsrq);
}

static inline struct softrdma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrdma_mr, ibmr);
}

static inline struct softrdma_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct softrdma_mw, ibmw);
}

static inline u32 softrdma_key_index(u32 key)
{
	return key >> 8;
}

/* The entry of sdev->keys for @key's index: an MR, a window, or NULL. */
static inline void *softrdma_key_load(struct softrdma_dev *sdev, u32 key)
{
	return xa_load(&sdev->keys, softrdma_key_index(key));
}

/* What an entry of sdev->keys names: its xarray pointer tag. */
enum softrdma_key_kind {
	SOFTRDMA_KEY_MR = 0,
	SOFTRDMA_KEY_MW = 1,
};

/* The MR @entry of sdev->keys names, or NULL. */
static inline struct softrdma_mr *softrdma_key_mr(void *entry)
{
	return xa_pointer_tag(entry) == SOFTRDMA_KEY_MR ? entry : NULL;
}

/* The window @entry of sdev->keys names, or NULL. */
static inline struct softrdma_mw *softrdma_key_mw(void *entry)
{
	return xa_pointer_tag(entry) == SOFTRDMA_KEY_MW ?
	       xa_untag_pointer(entry) : NULL;
}

/*
 * The SRQ a QP's receives come from: an XRC TGT QP's is the XRC SRQ of the
 * request in hand; NULL for a QP with a receive queue of its own.
 */
static inline struct softrdma_srq *softrdma_qp_srq(struct softrdma_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return qp->xrc_srq;
	return qp->ibqp.srq ? to_ssrq(qp->ibqp.srq) : NULL;
}

/* Does a process (or the kernel) post to the QP's queues? XRC TGT: no. */
static inline bool softrdma_qp_postable(const struct softrdma_qp *qp)
{
	return qp->ibqp.qp_type != IB_QPT_XRC_TGT;
}

static inline struct softrdma_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct softrdma_ucontext, ibuc);
}

/* main.c */
int softrdma_devlist_add(struct softrdma_dev *sdev);
void softrdma_devlist_del(struct softrdma_dev *sdev);
struct softrdma_dev *
softrdma_dev_by_netdev(struct net_device *ndev,
		       const struct softrdma_transport *transport);

/* device.c */
int softrdma_register(const char *name, struct net_device *ndev,
		      const struct softrdma_transport *transport);
void softrdma_port_event(struct softrdma_dev *sdev, enum ib_event_type type);

/* verbs.c */
extern const struct ib_device_ops softrdma_common_ops;
int softrdma_cq_post(struct softrdma_cq *cq, const struct softrdma_cqe *cqe,
		     bool solicited);

/* qp.c */
int softrdma_qpns_init(struct softrdma_dev *sdev);
void softrdma_qpns_destroy(struct softrdma_dev *sdev);
int softrdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata);
int softrdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int softrdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		       struct ib_udata *udata);
int softrdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_qp_init_attr *init);
int softrdma_qp_kick(struct softrdma_qp *qp);
void softrdma_qp_put(struct softrdma_qp *qp);
void softrdma_qp_flush(struct softrdma_qp *qp);
static inline bool softrdma_wr_is_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Work requests answered with data, counted against max_rd_atomic: READs,
 * atomics, and RDMA FLUSH and ATOMIC WRITE (RoCE only), which take a
 * responder resource and are answered with a READ response.
 */
static inline bool softrdma_wr_is_rd_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_WR_RDMA_READ ||
	       wr_opcode == IB_WR_RDMA_READ_WITH_INV ||
	       wr_opcode == IB_WR_FLUSH || wr_opcode == IB_WR_ATOMIC_WRITE ||
	       softrdma_wr_is_atomic(wr_opcode);
}

/*
 * Work requests the requester carries out itself, with nothing to send:
 * fast registration, window binds and local invalidation. Both transports
 * run them in send queue order, once every WQE before them has completed
 * (a retransmission must still find the memory it reads as it was).
 */
static inline bool softrdma_wr_is_local(u32 wr_opcode)
{
	return wr_opcode == IB_WR_LOCAL_INV || wr_opcode == IB_WR_REG_MR ||
	       wr_opcode == IB_WR_BIND_MW;
}

/*
 * May the send WQE at ring index @idx go now? A local operation waits for
 * everything before it to complete; with @in_flight READs and atomics out
 * (of at most @limit), a fenced WQE waits and one more waits at the limit.
 * The ring's fields are only a hint here: the copy taken decides. Caller
 * holds qp->lock.
 */
static inline bool softrdma_sq_may_send(struct softrdma_qp *qp, u32 idx,
					u32 in_flight, u32 limit)
{
	const struct softrdma_send_wqe *w = softrdma_ring_slot(&qp->sq, idx);
	u32 op = READ_ONCE(w->opcode), flags = READ_ONCE(w->flags);

	if (softrdma_wr_is_local(op))
		return qp->req.comp_idx == idx;
	if (!in_flight)
		return true;
	if (flags & SOFTRDMA_WQE_FENCE)
		return false;
	return !softrdma_wr_is_rd_atomic(op) || in_flight < limit;
}

/*
 * Take the send WQE at ring index @idx off the ring: its header into the
 * kernel's copy, which is returned, its length zero. @body is set to the
 * slot's bytes after the header, still in the shared ring, for
 * softrdma_swqe_copy_body() or softrdma_swqe_copy_atomic().
 */
static inline struct softrdma_swqe *softrdma_sq_take(struct softrdma_qp *qp,
						     u32 idx, u8 **body)
{
	u8 *slot = softrdma_ring_slot(&qp->sq, idx);
	struct softrdma_swqe *s = &qp->swqe[idx & (qp->sq.num_slots - 1)];

	memcpy(&s->wqe, slot, sizeof(s->wqe));
	s->len = 0;
	*body = slot + SOFTRDMA_SEND_WQE_HDR_SIZE;
	return s;
}

int softrdma_qp_shadow_alloc(struct softrdma_qp *qp);
void softrdma_qp_shadow_free(struct softrdma_qp *qp);
void softrdma_qp_enter_err(struct softrdma_qp *qp);
void softrdma_qp_enter_sqe(struct softrdma_qp *qp);
void softrdma_qp_flush_sq(struct softrdma_qp *qp);
void softrdma_sq_complete(struct softrdma_qp *qp, u32 idx, u32 status);
u32 softrdma_local_op(struct softrdma_qp *qp, struct softrdma_swqe *s);
bool softrdma_recv_take(struct softrdma_qp *qp);

/* The bytes the receive WQE softrdma_recv_take() took can hold. */
static inline u64 softrdma_recv_room(const struct softrdma_qp *qp)
{
	u64 room = 0;
	u32 i;

	for (i = 0; i < qp->resp.rwqe.num_sge; i++)
		room += qp->resp.rsge[i].length;
	return room;
}

void softrdma_recv_complete(struct softrdma_qp *qp, struct softrdma_cqe *cqe,
			    bool solicited);
u32 softrdma_swqe_copy_atomic(struct softrdma_qp *qp, u32 slot, const u8 *body);
u32 softrdma_swqe_copy_body(struct softrdma_qp *qp, u32 slot, const u8 *body,
			    u64 *len);
void softrdma_qp_kick_locked(struct softrdma_qp *qp);
#if IS_ENABLED(CONFIG_KUNIT)
/* Static without KUnit; the KUnit suite checks it. */
int softrdma_check_qp_attr(struct softrdma_qp *qp, struct ib_qp_attr *attr,
			   int mask);
#endif

/* ah.c */
void softrdma_ahs_init(struct softrdma_dev *sdev);
void softrdma_ahs_destroy(struct softrdma_dev *sdev);
int softrdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata);
int softrdma_destroy_ah(struct ib_ah *ibah, u32 flags);
int softrdma_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
struct softrdma_ah *softrdma_ah_lock(struct softrdma_qp *qp, u32 ah_num,
				     unsigned long *flags);
void softrdma_ah_unlock(struct softrdma_qp *qp, unsigned long flags);

/* srq.c */
int softrdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			struct ib_udata *udata);
int softrdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata);
int softrdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int softrdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
bool softrdma_srq_take(struct softrdma_srq *srq, struct softrdma_recv_wqe *wqe,
		       struct softrdma_sge *sge);

/* xrc.c */
int softrdma_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softrdma_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softrdma_xrc_srq_add(struct softrdma_dev *sdev, struct softrdma_srq *srq);
void softrdma_xrc_srq_del(struct softrdma_dev *sdev, struct softrdma_srq *srq);
bool softrdma_xrc_srq_get(struct softrdma_qp *qp, u32 srqn);
void softrdma_xrc_srq_put(struct softrdma_qp *qp);

/* poll.c */
int softrdma_poll_init(void);
void softrdma_poll_exit(void);
void softrdma_poll_join(struct softrdma_qp *qp);
void softrdma_poll_del(struct softrdma_qp *qp);
void softrdma_qp_need_kick(struct softrdma_qp *qp);

/* mem.c */
int softrdma_mr_init_pages(struct softrdma_mr *mr);
void softrdma_mr_quiesce(struct softrdma_mr *mr);
struct softrdma_mr *softrdma_mr_get(struct softrdma_dev *sdev,
				    struct ib_pd *pd, u32 key, u64 iova,
				    u64 len, int access, int *err);
struct softrdma_mr *softrdma_mr_lookup(struct softrdma_dev *sdev,
				       struct ib_pd *pd, u32 key, u64 iova,
				       u64 len, int access, int *err);
void softrdma_mr_unref(struct softrdma_mr *mr);
void softrdma_mr_put(struct softrdma_mr *mr);
void softrdma_mr_copy(struct softrdma_mr *mr, u64 iova, void *buf, u64 len,
		      bool to_mr);
void softrdma_mr_copy_crc(struct softrdma_mr *mr, u64 iova, const void *buf,
			  u64 len, u32 *crc);
void softrdma_mr_read_crc(struct softrdma_mr *mr, u64 iova, void *buf,
			  u64 len, bool held, u32 *crc);
u32 softrdma_mr_pages(struct softrdma_mr *mr, u64 iova, u32 len,
		      struct bio_vec *bv, u32 max);
int softrdma_sge_copy(struct softrdma_qp *qp, const struct softrdma_sge *sge,
		      u32 nsge, u64 off, void *buf, u32 len, bool to_mr,
		      int access);
int softrdma_resp_recv_copy(struct softrdma_qp *qp, const void *buf, u32 len,
			    u32 *crc);
struct softrdma_mr *softrdma_resp_mr_get(struct softrdma_qp *qp, u32 key,
					 u64 iova, u64 len, int access,
					 bool remote, int *err);
void softrdma_resp_mr_drop(struct softrdma_qp *qp);
void softrdma_resp_mr_put(struct softrdma_qp *qp, struct softrdma_mr *mr);
void softrdma_mr_evict(struct softrdma_dev *sdev, struct softrdma_mr *mr);
/* The 8-byte operations on MR memory (softrdma_mr_atomic()). */
enum softrdma_mr_atomic_op {
	SOFTRDMA_MR_FETCH_ADD,
	SOFTRDMA_MR_CMP_SWAP,
	SOFTRDMA_MR_ATOMIC_WRITE,		/* IBTA 1.5 ATOMIC WRITE: a store */
};

int softrdma_mr_atomic(struct softrdma_mr *mr, u64 iova,
		       enum softrdma_mr_atomic_op op, u64 compare, u64 swap_add,
		       u64 *orig);
struct page *softrdma_kva_page(u64 addr, size_t *off);
bool softrdma_kva_ok(u64 addr, u64 len);
u32 softrdma_wc_opcode(u32 wr_opcode);
struct softrdma_mr *softrdma_rkey_get(struct softrdma_qp *qp, u32 key,
				      u64 iova, u64 len, int access, int *err);
int softrdma_key_invalidate(struct softrdma_qp *qp, u32 key, bool remote);
void softrdma_keys_init(struct softrdma_dev *sdev);

/* odp.c */
/* ODP of RC QPs: every operation (RoCE's XRC too). */
#define SOFTRDMA_ODP_RC_CAPS (IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | \
			      IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ | \
			      IB_ODP_SUPPORT_ATOMIC | \
			      IB_ODP_SUPPORT_SRQ_RECV | \
			      IB_ODP_SUPPORT_FLUSH | \
			      IB_ODP_SUPPORT_ATOMIC_WRITE)
struct ib_mr *softrdma_odp_reg(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access);
void softrdma_odp_dereg(struct softrdma_mr *mr);
int softrdma_odp_hold(struct softrdma_mr *mr, u64 iova, u64 len, int access);
int softrdma_odp_hold_kept(struct softrdma_qp *qp, struct softrdma_mr *mr,
			   u64 iova, u64 len, int access);
void softrdma_odp_release(struct softrdma_mr *mr);
void softrdma_odp_flush(void);
int softrdma_odp_init(void);
void softrdma_odp_exit(void);
struct page *softrdma_odp_implicit_page(struct softrdma_mr *mr, size_t idx);
void softrdma_odp_caps(struct softrdma_dev *sdev, struct ib_device_attr *attr);
int softrdma_advise_mr(struct ib_pd *ibpd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs);

/* Does an access with the IB_ACCESS_* flags @access write the MR? */
static inline bool softrdma_access_writes(int access)
{
	return access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			 IB_ACCESS_REMOTE_ATOMIC);
}

/* mw.c */
int softrdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int softrdma_dealloc_mw(struct ib_mw *ibmw);
u32 softrdma_mw_bind(struct softrdma_qp *qp,
		     const struct softrdma_send_wqe *wqe);
int softrdma_mw_invalidate(struct softrdma_qp *qp, u32 rkey, bool remote);
struct softrdma_mr *softrdma_mw_get_mr(struct softrdma_qp *qp, u32 key,
				       u64 iova, u64 len, int access,
				       int *err);

/* frmr.c */
struct ib_mr *softrdma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				u32 max_num_sg);
int softrdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset);
void softrdma_frmr_free(struct softrdma_mr *mr);
bool softrdma_frmr_key_ok(struct softrdma_mr *mr, u32 key);
struct page *softrdma_frmr_page(struct softrdma_mr *mr, u64 iova,
				size_t *off, size_t *room);
u32 softrdma_frmr_reg(struct softrdma_qp *qp, u32 key, int access);
int softrdma_frmr_invalidate(struct softrdma_dev *sdev, struct ib_pd *pd,
			     u32 key);
int softrdma_mr_keys(struct softrdma_dev *sdev, struct softrdma_mr *mr);

/* kpost.c */
int softrdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr);
int softrdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int softrdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr);
void softrdma_kick_work(struct work_struct *work);

/* ring.c */
int softrdma_ring_init(struct softrdma_ring *ring, u32 num_slots,
		       u32 slot_size);
void softrdma_ring_free(struct softrdma_ring *ring);
int softrdma_ring_map(struct softrdma_ring *ring, struct ib_ucontext *uctx,
		      u64 *offset);
int softrdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void softrdma_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

#endif /* SOFTRDMA_H */
