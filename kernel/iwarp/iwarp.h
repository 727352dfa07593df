/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iWARP over TCP: MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and RDMAP
 * (RFC 5040) wire formats, and the transport's state per QP and per
 * connection.
 */
#ifndef SOFTRDMA_IWARP_H
#define SOFTRDMA_IWARP_H

#include <linux/build_bug.h>
#include <linux/bvec.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/mm_types.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/iw_cm.h>

#include "softrdma.h"

/* iWARP over TCP/IPv6: IPv6 (40) + TCP (20) + MPA/DDP/RDMAP (2+18+4). */
#define SOFTRDMA_IWARP_OVERHEAD	(40 + 20 + 2 + 18 + 4)

/* MPA request and reply frames (RFC 5044 7.1, RFC 6581 5). */
#define SOFTRDMA_MPA_KEY_REQ	"MPA ID Req Frame"
#define SOFTRDMA_MPA_KEY_REP	"MPA ID Rep Frame"
#define SOFTRDMA_MPA_KEY_LEN	16
#define SOFTRDMA_MPA_FLAG_M	0x80	/* markers */
#define SOFTRDMA_MPA_FLAG_C	0x40	/* CRC */
#define SOFTRDMA_MPA_FLAG_R	0x20	/* reject */
#define SOFTRDMA_MPA_FLAG_E	0x10	/* enhanced (revision 2) */
/*
 * RFC 7306 extensions (atomics, immediate data), negotiated in two of the
 * flags RFC 5044 reserves (zero on send, ignored on receive): the initiator
 * offers them in its request, a responder that takes them sets the other
 * bit in its reply. Two bits, not one echoed: siw answers with the flags
 * of the request it got (and uses 0x08 itself, for GSO).
 */
#define SOFTRDMA_MPA_FLAG_EXT_OFFER	0x04	/* request */
#define SOFTRDMA_MPA_FLAG_EXT_ACCEPT	0x02	/* reply */
#define SOFTRDMA_MPA_MAX_PD	512

struct softrdma_mpa_rr {
	u8 key[SOFTRDMA_MPA_KEY_LEN];
	u8 flags;
	u8 rev;
	__be16 pd_len;
} __packed;

/* RFC 6581 enhanced connection data, the first bytes of private data. */
struct softrdma_mpa_v2 {
	__be16 ird;		/* P2P(15) zero-length-send RTR(14) IRD(13:0) */
	__be16 ord;		/* write RTR(15) read RTR(14) ORD(13:0) */
} __packed;

#define SOFTRDMA_MPA_V2_P2P	0x8000	/* in ird */
#define SOFTRDMA_MPA_V2_SEND0	0x4000	/* in ird */
#define SOFTRDMA_MPA_V2_WRITE0	0x8000	/* in ord */
#define SOFTRDMA_MPA_V2_READ0	0x4000	/* in ord */
#define SOFTRDMA_MPA_V2_MASK	0x3fff

static_assert(sizeof(struct softrdma_mpa_rr) == 20);
static_assert(sizeof(struct softrdma_mpa_v2) == 4);

/* DDP control byte (RFC 5041 4.2) and RDMAP control byte (RFC 5040 4.2). */
#define SOFTRDMA_DDP_T		0x80	/* tagged */
#define SOFTRDMA_DDP_L		0x40	/* last segment of the message */
#define SOFTRDMA_DDP_DV_MASK	0x03
#define SOFTRDMA_DDP_DV		1
#define SOFTRDMA_RDMAP_RV_SHIFT	6
#define SOFTRDMA_RDMAP_RV	1
#define SOFTRDMA_RDMAP_OP_MASK	0x0f

enum softrdma_rdmap_op {
	RDMAP_WRITE = 0,
	RDMAP_READ_REQ = 1,
	RDMAP_READ_RESP = 2,
	RDMAP_SEND = 3,
	RDMAP_SEND_INV = 4,
	RDMAP_SEND_SE = 5,
	RDMAP_SEND_SE_INV = 6,
	RDMAP_TERMINATE = 7,
	/* RFC 7306 */
	RDMAP_ATOMIC_REQ = 10,
	RDMAP_ATOMIC_RESP = 11,
	RDMAP_IMM = 12,
	RDMAP_IMM_SE = 13,
};

#define RDMAP_FIRST_EXT		8	/* opcodes from here on: RFC 7306 */

/* Untagged queue numbers (RFC 5040 5.1). */
enum {
	SOFTRDMA_QN_SEND = 0,
	SOFTRDMA_QN_READ = 1,
	SOFTRDMA_QN_TERM = 2,
	SOFTRDMA_QN_AREQ = 3,		/* RFC 7306 Atomic Requests */
	SOFTRDMA_QN_ARESP = 4,		/* RFC 7306 Atomic Responses */
	SOFTRDMA_QN_NUM
};

struct softrdma_ddp_tagged {
	u8 ddp;
	u8 rdmap;
	__be32 stag;
	__be64 to;
} __packed;

struct softrdma_ddp_untagged {
	u8 ddp;
	u8 rdmap;
	__be32 inv_stag;	/* reserved for the ULP: Send with Invalidate */
	__be32 qn;
	__be32 msn;
	__be32 mo;
} __packed;

/* RDMA Read Request payload (RFC 5040 4.4). */
struct softrdma_rdmap_rreq {
	__be32 sink_stag;
	__be64 sink_to;
	__be32 len;
	__be32 src_stag;
	__be64 src_to;
} __packed;

/* RFC 7306 Atomic Request and Response payloads. */
struct softrdma_rdmap_areq {
	__be32 opcode;		/* reserved(31:4) atomic opcode(3:0) */
	__be32 req_id;
	__be32 stag;
	__be64 to;
	__be64 swap_add;
	__be64 swap_add_mask;
	__be64 compare;
	__be64 compare_mask;
} __packed;

struct softrdma_rdmap_aresp {
	__be32 req_id;
	__be64 orig;
} __packed;

#define SOFTRDMA_ATOMIC_FETCH_ADD	0
#define SOFTRDMA_ATOMIC_CMP_SWAP	2

/*
 * RFC 7306 Immediate Data: 8 bytes for the ULP, which is us. The verbs'
 * 32-bit immediate goes first; the second word tells what it belongs to:
 * the Send that follows (SOFTRDMA_IMM_SEND), or else the byte count of the
 * RDMA Write it follows.
 */
struct softrdma_rdmap_imm {
	__be32 imm;
	__be32 info;
} __packed;

#define SOFTRDMA_IMM_SEND	0x80000000

/* Terminate control (RFC 5040 4.8): layer, type, code, header flags. */
struct softrdma_rdmap_term {
	u8 layer_type;		/* layer(7:4) etype(3:0) */
	u8 code;
	__be16 hdrct;		/* M(15) D(14) R(13) */
} __packed;

#define SOFTRDMA_TERM_HDR_M	0x8000	/* DDP segment length valid */
#define SOFTRDMA_TERM_HDR_D	0x4000	/* DDP header copied */
#define SOFTRDMA_TERM_HDR_R	0x2000	/* RDMA Read Request copied */

/* Why a Terminate goes: its layer, error type and code. */
struct softrdma_term_cause {
	u8 layer;
	u8 etype;
	u8 code;
};

#define SOFTRDMA_TAGGED_LEN	14
#define SOFTRDMA_UNTAGGED_LEN	18
#define SOFTRDMA_RREQ_LEN	28
#define SOFTRDMA_AREQ_LEN	52
#define SOFTRDMA_ARESP_LEN	12
#define SOFTRDMA_IMM_LEN	8

static_assert(sizeof(struct softrdma_ddp_tagged) == SOFTRDMA_TAGGED_LEN);
static_assert(sizeof(struct softrdma_ddp_untagged) == SOFTRDMA_UNTAGGED_LEN);
static_assert(sizeof(struct softrdma_rdmap_rreq) == SOFTRDMA_RREQ_LEN);
static_assert(sizeof(struct softrdma_rdmap_term) == 4);
static_assert(sizeof(struct softrdma_rdmap_areq) == SOFTRDMA_AREQ_LEN);
static_assert(sizeof(struct softrdma_rdmap_aresp) == SOFTRDMA_ARESP_LEN);
static_assert(sizeof(struct softrdma_rdmap_imm) == SOFTRDMA_IMM_LEN);

/* Terminate layers, types and codes (RFC 5040 4.8, RFC 5041 7, RFC 5044). */
enum {
	TERM_LAYER_RDMAP = 0,
	TERM_LAYER_DDP = 1,
	TERM_LAYER_LLP = 2,
};

enum {
	TERM_RDMAP_CATASTROPHIC = 0,
	TERM_RDMAP_PROTECTION = 1,
	TERM_RDMAP_OPERATION = 2,
};

enum {
	TERM_RDMAP_INVALID_STAG = 0x00,
	TERM_RDMAP_BOUNDS = 0x01,
	TERM_RDMAP_ACCESS = 0x02,
	TERM_RDMAP_VERSION = 0x05,
	TERM_RDMAP_OPCODE = 0x06,
	TERM_RDMAP_CANT_INVALIDATE = 0x09,
	TERM_RDMAP_UNSPECIFIED = 0xff,
};

enum {
	TERM_DDP_CATASTROPHIC = 0,
	TERM_DDP_TAGGED = 1,
	TERM_DDP_UNTAGGED = 2,
};

enum {
	TERM_DDP_T_INVALID_STAG = 0,
	TERM_DDP_T_BOUNDS = 1,
	TERM_DDP_T_VERSION = 4,
	TERM_DDP_U_QN = 1,
	TERM_DDP_U_NO_BUFFER = 2,
	TERM_DDP_U_MSN_RANGE = 3,
	TERM_DDP_U_MO = 4,
	TERM_DDP_U_TOO_LONG = 5,
	TERM_DDP_U_VERSION = 6,
};

enum {
	TERM_LLP_CRC = 0x02,		/* type 0, MPA CRC error */
	TERM_LLP_MARKER = 0x03,
	TERM_LLP_LEN = 0x04,		/* invalid ULPDU length */
};

/* The largest ULPDU a 16-bit MPA length field carries. */
#define SOFTRDMA_MPA_MAX_ULPDU	0xffff
/*
 * MPA markers (RFC 5044 5): 4 bytes, reserved(16) FPDUPTR(16), at every
 * 512th octet of a direction's FPDU stream, the first one before its first
 * FPDU; the FPDU length excludes them, the CRC covers them.
 */
#define SOFTRDMA_MPA_MARKER_LEN		4
#define SOFTRDMA_MPA_MARKER_INTERVAL	512
/* An FPDU without markers: length, ULPDU, pad, CRC. */
#define SOFTRDMA_FPDU_UNMARKED_MAX	(2 + SOFTRDMA_MPA_MAX_ULPDU + 3 + 4)
/* An FPDU on the wire: at most one marker per 508 bytes, one more ahead. */
#define SOFTRDMA_FPDU_MAX	(SOFTRDMA_FPDU_UNMARKED_MAX + \
				 SOFTRDMA_MPA_MARKER_LEN * \
				 (1 + (SOFTRDMA_FPDU_UNMARKED_MAX - 1) / \
				  (SOFTRDMA_MPA_MARKER_INTERVAL - \
				   SOFTRDMA_MPA_MARKER_LEN)))

/* The largest message a poster's kick sends itself (tx.c). */
#define SOFTRDMA_IW_DIRECT_MAX	(64 * 1024)
/*
 * Payloads the sender hands TCP by reference, as the pages of their MR
 * (tx.c): a WQE of at least this many bytes, and per FPDU, at most this
 * many pieces of pages (a ULPDU of 64 KiB spans 17 pages at most).
 */
#define SOFTRDMA_IW_ZC_MIN	4096
#define SOFTRDMA_IW_ZC_PAGES	(DIV_ROUND_UP(SOFTRDMA_MPA_MAX_ULPDU, PAGE_SIZE) + 1)
/*
 * FPDUs no larger than this (a segment of a wire's MSS) go by reference in
 * groups, several to one socket call and one skb (tx.c): a group is as many
 * pieces as an skb has fragments; each FPDU's payload is at most this many.
 */
#define SOFTRDMA_IW_GROUP_MULPDU	(4 * PAGE_SIZE)
#define SOFTRDMA_IW_GROUP_BV		MAX_SKB_FRAGS
#define SOFTRDMA_IW_GROUP_PIECES	5
/*
 * A group's heads and tails (length, DDP header; pad, CRC field), in a
 * piece of a page fragment that never crosses a page: a power of two.
 */
#define SOFTRDMA_IW_GROUP_HT	(2 + SOFTRDMA_UNTAGGED_LEN + 3 + 4)
#define SOFTRDMA_IW_GROUP_STAGE	\
	roundup_pow_of_two(SOFTRDMA_IW_GROUP_BV * SOFTRDMA_IW_GROUP_HT)

enum softrdma_cep_state {
	CEP_IDLE,
	CEP_LISTEN,
	CEP_AWAIT_REQ,		/* passive: reading the MPA request */
	CEP_AWAIT_ACCEPT,	/* passive: request delivered to iw_cm */
	CEP_AWAIT_REP,		/* active: MPA request sent */
	CEP_AWAIT_RTR,		/* passive, peer to peer: reply sent */
	CEP_RTS,
	CEP_CLOSED,
};

enum {
	CEP_F_CLOSE,		/* close, sending what is queued */
	CEP_F_ABORT,		/* close with a reset */
	CEP_F_ESTABLISHED,	/* the RTR arrived */
	CEP_F_TIMEOUT,		/* the MPA exchange or the RTR took too long */
};

/* How long the MPA request, the reply and the RTR may take. */
#define SOFTRDMA_CEP_TIMEOUT	(10 * HZ)
/* TCP keepalives of a connection (seconds, probes): silent after 35 s. */
#define SOFTRDMA_CEP_KEEPIDLE	20
#define SOFTRDMA_CEP_KEEPINTVL	5
#define SOFTRDMA_CEP_KEEPCNT	3
/* How long a closed socket may wait for its FIN's ACK; how often we look. */
#define SOFTRDMA_CEP_LINGER	(30 * HZ)
#define SOFTRDMA_CEP_LINGER_POLL	(HZ / 20)

/* One TCP endpoint: a listener, or a connection being made or made. */
struct softrdma_cep {
	struct kref ref;
	struct mutex mutex;		/* state, sock, cm_id, qp */
	struct softrdma_dev *sdev;
	struct socket *sock;
	struct iw_cm_id *cm_id;		/* held with add_ref */
	struct softrdma_qp *qp;		/* held with a reference */
	struct softrdma_cep *listener;	/* passive: held */
	enum softrdma_cep_state state;
	struct work_struct work;
	struct timer_list timer;	/* armed: holds a reference */
	/* The socket's callbacks before ours. */
	void (*old_data_ready)(struct sock *sk);
	void (*old_state_change)(struct sock *sk);
	void (*old_write_space)(struct sock *sk);
	struct softrdma_qp *rx_qp;	/* FPDUs go to it (callback lock) */
	unsigned long flags;		/* CEP_F_* */
	bool connected;			/* CLOSE owed to iw_cm */
	/* MPA negotiation. */
	u8 mpa_rev;
	bool enhanced;			/* revision 2 data exchanged */
	bool crc;
	bool tx_markers;		/* the peer asked for markers (M) */
	bool rx_markers;		/* we asked for markers */
	bool p2p;
	bool ext;			/* RFC 7306 offered, then agreed */
	u16 rtr;			/* the RTR kind agreed (ord flags) */
	u16 ird;
	u16 ord;
	u32 mpa_have;
	u8 mpa[sizeof(struct softrdma_mpa_rr) + SOFTRDMA_MPA_MAX_PD];
};

/* An RDMA Read Request (or an atomic) the responder still has to answer. */
struct softrdma_iw_rresp {
	bool atomic;			/* an Atomic Response: req_id, orig */
	u32 req_id;
	u64 orig;
	u32 sink_stag;
	u64 sink_to;
	u32 len;
	u32 src_stag;
	u64 src_to;
};

/* Where the receiver is in the FPDU coming in (rx.c). */
enum softrdma_iw_rx_state {
	IW_RX_HDR,		/* its length field (and a marker ahead) */
	IW_RX_PEEK,		/* length and DDP header */
	IW_RX_FPDU,		/* all of it, into iw->rxbuf */
	IW_RX_PLACE,		/* an RDMA Write's or a Send's payload, into
				 * its buffer
				 */
	IW_RX_TRAILER,		/* then its pad and CRC field */
	IW_RX_WAIT,		/* all of it, checked, waiting for ODP pages */
};

/*
 * The iWARP part of the kernel's copy of a send WQE (struct softrdma_swqe),
 * one per SQ slot: how far the WQE has come.
 */
struct softrdma_iw_swqe {
	bool done;			/* sent (or read back), to complete */
	bool ack_wait;			/* sent by reference, until TCP acks */
	u32 ack_seq;			/* TCP sequence after its last byte */
	bool read_inv;			/* a Read that invalidates its sink */
	u32 inv_key;			/* the sink's key, invalidated */
};

/*
 * A QP of softiwarp: the core's QP and the transport's state, allocated by
 * the RDMA core at the size softrdma_iwarp_ops gives (iwarp.c).
 */
struct softrdma_iw_qp {
	struct softrdma_qp qp;		/* first: INIT_RDMA_OBJ_SIZE */
	struct softrdma_iw_swqe *swqe;	/* one per SQ slot */
	struct softrdma_cep *cep;	/* held; NULL when not connected */
	struct socket *sock;		/* the cep's, while in RTS */
	struct work_struct tx_work;
	struct work_struct rx_work;
	struct mutex tx_mutex;		/* one sender: the work or a poster */
	bool crc;
	bool tx_markers;
	bool rx_markers;
	u32 tx_soff;			/* FPDU stream offsets, for markers */
	u32 rx_soff;
	bool ext;			/* RFC 7306 agreed with the peer */
	bool imm_due;			/* a Send with Immediate Data comes */
	__be32 imm;			/* its immediate */
	bool rtr_due;			/* the passive side waits for the RTR */
	u32 mulpdu;			/* ULPDU bytes per FPDU */
	u32 tx_msn[SOFTRDMA_QN_NUM];	/* next MSN per queue */
	u32 rx_msn[SOFTRDMA_QN_NUM];	/* expected MSN per queue */
	/* Reads we answer (IRD), in arrival order. */
	struct softrdma_iw_rresp *irq;
	u32 irq_size;
	u32 irq_head;
	u32 irq_tail;
	/* Our reads and atomics in flight (ORD): SQ indices, oldest first. */
	u32 *orq;
	u32 orq_size;
	u32 orq_head;
	u32 orq_tail;
	u32 rresp_off;			/* bytes of the oldest read arrived */
	/* A Terminate to send before the connection closes. */
	bool term_due;
	u8 term_layer_type;
	u8 term_code;
	u8 term_hdr[SOFTRDMA_UNTAGGED_LEN + SOFTRDMA_RREQ_LEN];
	bool term_has_hdr;
	u32 term_ulen;			/* the bad ULPDU's length */
	const u8 *rx_ulpdu;		/* the ULPDU being received, or NULL */
	u32 rx_ulen;
	/* Receive: one FPDU at a time. */
	bool rx_stop;			/* the stream cannot be parsed on */
	bool rx_odp_wait;		/* stopped until ODP pages are in */
	u8 rx_state;			/* IW_RX_* (rx.c) */
	u32 rx_have;
	u32 rx_need;
	u32 rx_flen;			/* the FPDU's length on the wire */
	/*
	 * An RDMA Write or a Send placed from the socket as it comes
	 * (IW_RX_PLACE); a Send's DDP header stays in rxbuf meanwhile.
	 */
	bool rx_skip;			/* failed: the rest is dropped */
	bool rx_send;			/* a Send, into the receive taken */
	int rx_err;			/* the receive's own keys failed */
	struct softrdma_mr *rx_mr;	/* held within one skb only */
	u32 rx_stag;
	u64 rx_to;			/* a Write's address, a Send's offset */
	u32 rx_left;			/* payload bytes still to come */
	u32 rx_crc;			/* running CRC32c */
	u8 *rxbuf;
	u8 *txbuf;
	/* Sending by reference (sender only): each FPDU's head and tail. */
	struct page_frag_cache zc_frag;
	struct bio_vec *zc_bv;		/* head, SOFTRDMA_IW_ZC_PAGES, tail */
	u32 zc_unacked;			/* WQEs waiting for TCP's ack */
	/* A group of FPDUs by reference, for one socket call (tx.c). */
	struct bio_vec *gbv;		/* SOFTRDMA_IW_GROUP_BV pieces */
	u32 gnbv;
	u32 glen;			/* bytes in the group */
	u32 gfpdus;
	u8 *gstage;			/* heads and tails, a page fragment */
	u32 gstaged;
};

static inline struct softrdma_iw_qp *to_iwqp(struct softrdma_qp *qp)
{
	return container_of(qp, struct softrdma_iw_qp, qp);
}

/* The iWARP state of the send WQE at ring index @idx. */
static inline struct softrdma_iw_swqe *
softrdma_iw_swqe(struct softrdma_iw_qp *iw, u32 idx)
{
	return &iw->swqe[idx & (iw->qp.sq.num_slots - 1)];
}

/*
 * May the WQE at @idx go now? Our reads and atomics in flight are the
 * ORQ's, at most the ORD agreed (cm.c). Caller holds qp->lock.
 */
static inline bool softrdma_iw_qp_may_send(struct softrdma_qp *qp, u32 idx)
{
	struct softrdma_iw_qp *iw = to_iwqp(qp);

	return softrdma_sq_may_send(qp, idx, iw->orq_tail - iw->orq_head,
				    clamp_t(u32, qp->attrs.max_rd_atomic, 1,
					    iw->orq_size));
}

/* iwarp.c */
extern struct workqueue_struct *softrdma_iw_wq;
extern bool softrdma_iw_mpa_crc;
extern bool softrdma_iw_mpa_markers;
extern bool softrdma_iw_p2p;
extern u8 softrdma_iw_mpa_rev;
extern bool softrdma_iw_rdmap_ext;

/* cm.c */
int softrdma_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int softrdma_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int softrdma_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len);
int softrdma_iw_create_listen(struct iw_cm_id *id, int backlog);
int softrdma_iw_destroy_listen(struct iw_cm_id *id);
void softrdma_cep_put(struct softrdma_cep *cep);
void softrdma_cep_close(struct softrdma_cep *cep, bool graceful);
void softrdma_cep_established(struct softrdma_cep *cep);
void softrdma_cep_wait_all(void);
int softrdma_cep_init(void);
void softrdma_cep_exit(void);

/* sock.c */
void softrdma_sock_setup(struct socket *sock);
void softrdma_sock_close(struct socket *sock, bool graceful);
int softrdma_sock_init(void);
void softrdma_sock_exit(void);

/* qp.c */
int softrdma_iw_qp_init(struct softrdma_qp *qp);
void softrdma_iw_qp_teardown(struct softrdma_qp *qp);
void softrdma_iw_qp_cleanup(struct softrdma_qp *qp);
void softrdma_iw_sqd_check(struct softrdma_qp *qp);
int softrdma_iw_modify_qp(struct softrdma_qp *qp, struct ib_qp_attr *attr,
			  int mask, enum ib_qp_state cur,
			  enum ib_qp_state next);
void softrdma_iw_qp_fail(struct softrdma_qp *qp);
int softrdma_iw_qp_start(struct softrdma_qp *qp, struct softrdma_cep *cep);
void softrdma_iw_qp_stop(struct softrdma_qp *qp);
void softrdma_iw_qp_advance(struct softrdma_qp *qp);
void softrdma_iw_qp_conn_lost(struct softrdma_qp *qp, bool graceful);
void softrdma_iw_qp_fatal(struct softrdma_qp *qp);
void softrdma_iw_qp_terminate(struct softrdma_qp *qp, u8 layer, u8 etype,
			      u8 code);
u32 softrdma_iw_qp_take(struct softrdma_qp *qp, u32 idx);

/* tx.c */
void softrdma_iw_req_run(struct softrdma_qp *qp);
bool softrdma_iw_req_pending(struct softrdma_qp *qp);
void softrdma_iw_write_space(struct softrdma_qp *qp, struct sock *sk);
int softrdma_iw_req_kick(struct softrdma_qp *qp);
int softrdma_iw_send_rtr(struct softrdma_qp *qp, struct socket *sock,
			 u16 rtr);
void softrdma_iw_tx_work(struct work_struct *work);
void softrdma_iw_tx_soon(struct softrdma_qp *qp);

/*
 * rdmap.c: the RDMAP messages that arrive. Those that return int return
 * -EBUSY for a message that waits for ODP pages (nothing done), else 0.
 */
void softrdma_iw_tagged_error(struct softrdma_qp *qp, int err);
int softrdma_iw_rx_write(struct softrdma_qp *qp, u32 stag, u64 to, u8 *p,
			 u32 n);
int softrdma_iw_rx_rresp(struct softrdma_qp *qp, u32 stag, u64 to, bool last,
			 u8 *p, u32 n);
void softrdma_iw_rx_send_fail(struct softrdma_qp *qp, int err);
void softrdma_iw_rx_send_end(struct softrdma_qp *qp, u8 op, bool last,
			     u32 inv_stag, u32 end);
int softrdma_iw_rx_send(struct softrdma_qp *qp, u8 op, bool last, u32 inv_stag,
			u32 msn, u32 mo, u8 *p, u32 n);
void softrdma_iw_rx_rreq(struct softrdma_qp *qp, u8 op, bool last, u32 msn,
			 u8 *p, u32 n);
int softrdma_iw_rx_areq(struct softrdma_qp *qp, u8 op, bool last, u32 msn,
			u8 *p, u32 n);
int softrdma_iw_rx_aresp(struct softrdma_qp *qp, u8 op, bool last, u32 msn,
			 u8 *p, u32 n);
void softrdma_iw_rx_term(struct softrdma_qp *qp, u8 *p, u32 n);

/* rx.c */
void softrdma_iw_data_ready(struct softrdma_qp *qp, struct sock *sk);
void softrdma_iw_rx_kick(struct softrdma_qp *qp);
void softrdma_iw_rx_work(struct work_struct *work);

/* mpa.c */
u32 softrdma_mpa_crc(const void *buf, u32 len);
int softrdma_iw_sendbuf(struct socket *sock, const void *buf, size_t len);
int softrdma_iw_sendmore(struct socket *sock, const void *buf, size_t len,
			 bool more);
u32 softrdma_fpdu_close(u8 *fpdu, u32 ulpdu_len, bool crc);
u32 softrdma_mpa_markers(u32 soff, u32 len);
u32 softrdma_mpa_mark(u8 *buf, u32 len, u32 soff);
int softrdma_mpa_unmark(u8 *buf, u32 wire_len, u32 soff);
u32 softrdma_fpdu_close_at(u8 *fpdu, u32 ulpdu_len, bool crc, bool markers,
			   u32 soff);
u32 softrdma_mpa_hdr_len(u32 soff, bool markers);
u32 softrdma_mpa_fpdu_len(const u8 *hdr, u32 soff, bool markers, u32 *ulen);
int softrdma_fpdu_check(u8 *fpdu, u32 wire_len, u32 soff, bool crc,
			bool markers);
u32 softrdma_mpa_mulpdu(u32 mss, bool markers);
int softrdma_mpa_rr_read(struct softrdma_cep *cep);
int softrdma_mpa_rr_send(struct softrdma_cep *cep, bool reply, bool reject,
			 const void *pdata, u8 pdlen);
void softrdma_mpa_rr_parse_v2(struct softrdma_cep *cep, u8 **pd, u16 *pdlen,
			      u16 *peer_ird, u16 *peer_ord, u16 *ctl_ird,
			      u16 *ctl_ord);

/* ddp.c */
u32 softrdma_ddp_seg(u32 len, u32 off, u32 max, bool *last);
void softrdma_ddp_tagged_fill(struct softrdma_ddp_tagged *h, u8 op,
			      bool last, u32 stag, u64 to);
void softrdma_ddp_untagged_fill(struct softrdma_ddp_untagged *h, u8 op,
				bool last, u32 qn, u32 msn, u32 mo,
				u32 inv_stag);
bool softrdma_ddp_hdr_check(const u8 *u, u32 ulen, u32 qn_num,
			    struct softrdma_term_cause *t);
bool softrdma_ddp_seq_check(u32 msn, u32 mo, u32 want_msn, u32 want_mo,
			    struct softrdma_term_cause *t);
u32 softrdma_term_fill(u8 *p, const struct softrdma_term_cause *t,
		       const u8 *hdr, u32 ulen);

#endif /* SOFTRDMA_IWARP_H */
