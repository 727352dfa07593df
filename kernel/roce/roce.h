/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 wire format (IBTA Vol. 1 ch. 9, Annex A17): base and extended
 * transport headers of the RC and UD services, and the transport's entry
 * points.
 */
#ifndef SOFTRDMA_ROCE_H
#define SOFTRDMA_ROCE_H

#include <linux/build_bug.h>
#include <linux/hrtimer.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#include <net/dst_cache.h>

#include "softrdma.h"

/*
 * Largest bytes of headers a RoCEv2 packet carries around its payload:
 * IPv6 (40) + UDP (8) + BTH (12) + the largest extended header, AtomicETH
 * (28), + ICRC (4). (An XRC request's XRCETH, RETH and ImmDt take 24 of
 * those 28; its atomics carry no payload.)
 */
#define SOFTRDMA_ROCE_OVERHEAD	(40 + 8 + 12 + 28 + 4)

#define SOFTRDMA_ROCE_PORT	4791

/*
 * What a RoCE skb of ours stands for (in skb->cb): @npkts packets of one
 * message in a row, from its BTH's PSN on.
 *
 * On the loop (net.c), where nothing is on a wire, that is a burst: one
 * BTH for them all and their payloads back to back (up to
 * SOFTRDMA_LOOP_MAX_BYTES by reference to the sender's pages,
 * SOFTRDMA_LOOP_COPY_MAX_BYTES copied).
 *
 * To a wire, a train (@seg not 0): @npkts whole packets, each with its own
 * headers and ICRC, @seg bytes from BTH to ICRC each but the last, which
 * may be shorter; sent as one UDP GSO skb of up to
 * SOFTRDMA_TRAIN_MAX_BYTES, cut into its packets by the device if it can
 * (a veth passes it on whole), else by the stack, at the latest by the
 * receiving UDP socket.
 */
struct softrdma_roce_cb {
	u32 npkts;
	u32 seg;
	u32 xrc_srqn;	/* received for an XRC TGT QP: its XRCETH's (recv.c) */
	bool icrc_due;	/* ICRC checked as the payload is placed (icrc.c) */
	bool icrc_done;	/* a train's ICRCs summed as it was filled (req.c) */
};

#define SOFTRDMA_ROCE_CB(skb)	((struct softrdma_roce_cb *)(skb)->cb)
#define SOFTRDMA_LOOP_MAX_BYTES		(64 * 1024)
#define SOFTRDMA_LOOP_COPY_MAX_BYTES	(32 * 1024 - 1024)
/* A train's packets are one order-3 compound page (net.c), ICRC room in. */
#define SOFTRDMA_TRAIN_MAX_BYTES	(32 * 1024 - 512)
/* Requests that wait behind a READ answer being sent, at most (resp.c). */
#define SOFTRDMA_RESP_BACKLOG	4096
#define SOFTRDMA_BTH_LEN	12
#define SOFTRDMA_RETH_LEN	16
#define SOFTRDMA_AETH_LEN	4
#define SOFTRDMA_IMMDT_LEN	4
#define SOFTRDMA_ICRC_LEN	4
/* A payload this long or longer has its ICRC summed as it is placed. */
#define SOFTRDMA_ICRC_FUSE_MIN	64
#define SOFTRDMA_DEFAULT_PKEY	0xffff

/* RC opcodes (transport 000b). */
enum softrdma_rc_opcode {
	RC_SEND_FIRST = 0x00,
	RC_SEND_MIDDLE = 0x01,
	RC_SEND_LAST = 0x02,
	RC_SEND_LAST_IMM = 0x03,
	RC_SEND_ONLY = 0x04,
	RC_SEND_ONLY_IMM = 0x05,
	RC_WRITE_FIRST = 0x06,
	RC_WRITE_MIDDLE = 0x07,
	RC_WRITE_LAST = 0x08,
	RC_WRITE_LAST_IMM = 0x09,
	RC_WRITE_ONLY = 0x0a,
	RC_WRITE_ONLY_IMM = 0x0b,
	RC_READ_REQUEST = 0x0c,
	RC_READ_RESP_FIRST = 0x0d,
	RC_READ_RESP_MIDDLE = 0x0e,
	RC_READ_RESP_LAST = 0x0f,
	RC_READ_RESP_ONLY = 0x10,
	RC_ACK = 0x11,
	RC_ATOMIC_ACK = 0x12,
	RC_CMP_SWAP = 0x13,
	RC_FETCH_ADD = 0x14,
	RC_SEND_LAST_INV = 0x16,
	RC_SEND_ONLY_INV = 0x17,
	RC_FLUSH = 0x1c,		/* IBTA 1.5: FETH, RETH */
	RC_ATOMIC_WRITE = 0x1d,		/* IBTA 1.5: RETH, 8 bytes */
};

/*
 * UC opcodes (transport 001b, IBTA 9.2.1): the RC SEND and RDMA WRITE
 * opcodes 0x00-0x0b with the UC transport bits; no READ, no atomics,
 * no ACK.
 */
#define SOFTRDMA_UC_TRANSPORT	0x20
#define SOFTRDMA_UC_LAST_OP	(SOFTRDMA_UC_TRANSPORT | RC_WRITE_ONLY_IMM)

/*
 * XRC opcodes (transport 101b, IBTA Vol. 1 Annex A14): the RC opcodes with
 * the XRC transport bits, every one of them. A request carries an XRCETH
 * right after its BTH; responses and ACKs do not.
 */
#define SOFTRDMA_XRC_TRANSPORT	0xa0
#define SOFTRDMA_TRANSPORT_MASK	0xe0

/* UD opcodes (transport 011b): a UD message is one SEND ONLY packet. */
enum softrdma_ud_opcode {
	UD_SEND_ONLY = 0x64,
	UD_SEND_ONLY_IMM = 0x65,
};

/*
 * A congestion notification packet (transport 100b, RoCEv2 Annex A17.9):
 * a BTH with BECN set, 16 reserved bytes, the ICRC. Sent to a QP whose
 * packets arrived marked CE; no QP answers it or completes anything.
 */
#define SOFTRDMA_OP_CNP		0x81

/* Base transport header, in wire order. */
struct softrdma_bth {
	u8 opcode;
	u8 flags;		/* SE(7) M(6) PadCnt(5:4) TVer(3:0) */
	__be16 pkey;
	__be32 qpn;		/* F/B/resv8a(31:24) DestQP(23:0) */
	__be32 apsn;		/* A(31) resv7 PSN(23:0) */
} __packed;

struct softrdma_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

struct softrdma_aeth {
	__be32 smsn;		/* syndrome(31:24) MSN(23:0) */
} __packed;

/* Datagram extended transport header (9.3.3). */
struct softrdma_deth {
	__be32 qkey;
	__be32 sqpn;		/* resv8(31:24) SrcQP(23:0) */
} __packed;

/* Atomic extended transport header (9.3.4). */
struct softrdma_atomic_eth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* Atomic acknowledge extended transport header (9.3.6). */
struct softrdma_atomic_ack_eth {
	__be64 orig;
} __packed;

/*
 * FLUSH extended transport header (IBTA 1.5, 9.3.9): the selectivity
 * level in bits 5:4, the placement type in bits 3:0.
 */
struct softrdma_feth {
	__be32 bits;
} __packed;

#define SOFTRDMA_FETH_PLT_MASK	0x0f
#define SOFTRDMA_FETH_SEL_SHIFT	4
#define SOFTRDMA_FETH_SEL_MASK	0x30

/* XRC extended transport header (A14.4.2): resv8(31:24) XRCSRQ(23:0). */
struct softrdma_xrceth {
	__be32 srqn;
} __packed;

/* Invalidate extended transport header (9.3.7). */
struct softrdma_ieth {
	__be32 rkey;
} __packed;

#define SOFTRDMA_DETH_LEN		8
#define SOFTRDMA_ATOMIC_ETH_LEN		28
#define SOFTRDMA_ATOMIC_ACK_ETH_LEN	8
#define SOFTRDMA_IETH_LEN		4
#define SOFTRDMA_FETH_LEN		4
#define SOFTRDMA_XRCETH_LEN		4
#define SOFTRDMA_ATOMIC_WRITE_LEN	8

static_assert(sizeof(struct softrdma_bth) == SOFTRDMA_BTH_LEN);
static_assert(sizeof(struct softrdma_reth) == SOFTRDMA_RETH_LEN);
static_assert(sizeof(struct softrdma_aeth) == SOFTRDMA_AETH_LEN);
static_assert(sizeof(struct softrdma_deth) == SOFTRDMA_DETH_LEN);
static_assert(sizeof(struct softrdma_atomic_eth) == SOFTRDMA_ATOMIC_ETH_LEN);
static_assert(sizeof(struct softrdma_atomic_ack_eth) ==
	      SOFTRDMA_ATOMIC_ACK_ETH_LEN);
static_assert(sizeof(struct softrdma_ieth) == SOFTRDMA_IETH_LEN);
static_assert(sizeof(struct softrdma_feth) == SOFTRDMA_FETH_LEN);
static_assert(sizeof(struct softrdma_xrceth) == SOFTRDMA_XRCETH_LEN);

#define SOFTRDMA_BTH_SE		0x80
#define SOFTRDMA_BTH_MIG	0x40
#define SOFTRDMA_BTH_PAD_SHIFT	4
#define SOFTRDMA_BTH_PAD_MASK	0x30
#define SOFTRDMA_BTH_ACKREQ	0x80000000U
#define SOFTRDMA_QPN_MASK	0x00ffffffU

/* AETH syndromes (9.7.5.1). */
#define SOFTRDMA_AETH_ACK		0x00	/* 000 + credits */
#define SOFTRDMA_AETH_ACK_NO_CREDIT	0x1f	/* ACK, credits invalid */
#define SOFTRDMA_AETH_NAK		0x60
#define SOFTRDMA_NAK_PSN_SEQ		0x60
#define SOFTRDMA_NAK_INVALID_REQ	0x61
#define SOFTRDMA_NAK_REMOTE_ACCESS	0x62
#define SOFTRDMA_NAK_REMOTE_OP		0x63
/*
 * softrdma's own, between selective repeat peers only (both agreed by
 * ECE): send the packet at this PSN again, a hole behind the gap the
 * last sequence NAK named; it acknowledges nothing. A NAK code the IBTA
 * reserves (5 to 31), so no other device ever sends it.
 */
#define SOFTRDMA_NAK_SR_HOLE		0x7f

/* Fill a BTH; @flags carries SE, M and PadCnt, TVer is 0. */
static inline void softrdma_bth_fill(struct softrdma_bth *bth, u8 opcode,
				     u8 flags, u32 dqpn, u32 psn, bool ackreq)
{
	bth->opcode = opcode;
	bth->flags = flags;
	bth->pkey = htons(SOFTRDMA_DEFAULT_PKEY);
	bth->qpn = htonl(dqpn & SOFTRDMA_QPN_MASK);
	bth->apsn = htonl((psn & SOFTRDMA_PSN_MASK) |
			  (ackreq ? SOFTRDMA_BTH_ACKREQ : 0));
}

static inline u8 softrdma_bth_pad(const struct softrdma_bth *bth)
{
	return (bth->flags & SOFTRDMA_BTH_PAD_MASK) >> SOFTRDMA_BTH_PAD_SHIFT;
}

static inline bool softrdma_bth_se(const struct softrdma_bth *bth)
{
	return bth->flags & SOFTRDMA_BTH_SE;
}

static inline u32 softrdma_bth_dqpn(const struct softrdma_bth *bth)
{
	return ntohl(bth->qpn) & SOFTRDMA_QPN_MASK;
}

static inline u32 softrdma_bth_psn(const struct softrdma_bth *bth)
{
	return ntohl(bth->apsn) & SOFTRDMA_PSN_MASK;
}

static inline bool softrdma_bth_ackreq(const struct softrdma_bth *bth)
{
	return ntohl(bth->apsn) & SOFTRDMA_BTH_ACKREQ;
}

static inline void softrdma_aeth_fill(struct softrdma_aeth *aeth, u8 syndrome,
				      u32 msn)
{
	aeth->smsn = htonl((u32)syndrome << 24 | (msn & SOFTRDMA_PSN_MASK));
}

static inline u8 softrdma_aeth_syndrome(const struct softrdma_aeth *aeth)
{
	return ntohl(aeth->smsn) >> 24;
}

static inline u32 softrdma_aeth_msn(const struct softrdma_aeth *aeth)
{
	return ntohl(aeth->smsn) & SOFTRDMA_PSN_MASK;
}

static inline void softrdma_xrceth_fill(struct softrdma_xrceth *x, u32 srqn)
{
	x->srqn = htonl(srqn & SOFTRDMA_QPN_MASK);
}

static inline u32 softrdma_xrceth_srqn(const struct softrdma_xrceth *x)
{
	return ntohl(x->srqn) & SOFTRDMA_QPN_MASK;
}

/* Is @qp an XRC QP, whose packets carry the XRC transport bits? */
static inline bool softrdma_qp_is_xrc(const struct softrdma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* The opcode @qp puts on the wire for the RC opcode @op. */
static inline u8 softrdma_wire_op(const struct softrdma_qp *qp, u8 op)
{
	return softrdma_qp_is_xrc(qp) ? op | SOFTRDMA_XRC_TRANSPORT : op;
}

/* The Q_Key bit that makes a UD WQE's Q_Key the QP's own (IBTA 10.2.5). */
#define SOFTRDMA_QKEY_USE_QP	0x80000000U

static inline void softrdma_deth_fill(struct softrdma_deth *deth, u32 qkey,
				      u32 sqpn)
{
	deth->qkey = htonl(qkey);
	deth->sqpn = htonl(sqpn & SOFTRDMA_QPN_MASK);
}

static inline u32 softrdma_deth_qkey(const struct softrdma_deth *deth)
{
	return ntohl(deth->qkey);
}

static inline u32 softrdma_deth_sqpn(const struct softrdma_deth *deth)
{
	return ntohl(deth->sqpn) & SOFTRDMA_QPN_MASK;
}

/* The Q_Key a UD send carries: the WQE's, or the QP's if it asks so. */
static inline u32 softrdma_ud_qkey(u32 wqe_qkey, u32 qp_qkey)
{
	return (wqe_qkey & SOFTRDMA_QKEY_USE_QP) ? qp_qkey : wqe_qkey;
}

/*
 * Where packets go (RoCEv2 over IPv4 or IPv6): a connected QP's, from its
 * address vector, or an address handle's.
 */
struct softrdma_roce_net {
	bool ipv6;		/* the v6 addresses, else the v4 ones */
	__be32 saddr4;
	__be32 daddr4;
	struct in6_addr saddr6;
	struct in6_addr daddr6;
	u16 sport;
	u8 tclass;
	u8 hop_limit;		/* 0: the default, 64 */
	u32 flow_label;
};

/*
 * Multicast limits (mcast.c): groups per device, QPs per group,
 * attachments per device.
 */
#define SOFTRDMA_MAX_MCAST_GRP		1024
#define SOFTRDMA_MAX_MCAST_QP_ATTACH	64
#define SOFTRDMA_MAX_MCAST_TOTAL_ATTACH	4096
/* The destination QP of a datagram to a multicast group (IBTA 10.5.1). */
#define SOFTRDMA_MCAST_QPN		0xffffff

/*
 * A softroce device's own state (its transport_priv): the network
 * namespace whose UDP sockets it holds (net.c), its multicast groups.
 */
struct softrdma_roce_dev {
	struct net *net;
	struct mutex mc_lock;		/* changes to mcgs and their QPs */
	struct list_head mcgs;		/* softrdma_mcg (mcast.c), RCU */
	u32 num_mcgs;
	u32 num_attached;		/* QP attachments over all groups */
};

static inline struct softrdma_roce_dev *to_rdev(struct softrdma_dev *sdev)
{
	return sdev->transport_priv;
}

/* A RoCE address handle: the core's, then its route (roce.c). */
struct softrdma_roce_ah {
	struct softrdma_ah ah;
	struct softrdma_roce_net net;
};

static inline struct softrdma_roce_ah *to_rah(struct softrdma_ah *ah)
{
	return container_of(ah, struct softrdma_roce_ah, ah);
}

/* A result of an atomic, for a duplicate of its request to replay. */
struct softrdma_atomic_res {
	u64 orig;
	u32 psn;
	u8 op;			/* an atomic, RC_FLUSH or RC_ATOMIC_WRITE */
	bool valid;
};

/*
 * DCQCN's reaction point (cc.c): the rate a QP paces its requests at
 * after CNPs. Times are ktime_get_ns(), rates Mb/s.
 */
struct softrdma_dcqcn {
	bool paced;		/* a CNP came, full rate not back */
	u32 rate;		/* the current rate, Rc */
	u32 target;		/* the rate before the last cut, Rt */
	u32 alpha;		/* of SOFTRDMA_DCQCN_ONE */
	u64 cut_at;		/* the last cut */
	u64 alpha_at;		/* alpha decayed up to here */
	u64 raise_at;		/* the timer's last increase event */
	u64 bytes;		/* sent since the byte counter's last event */
	u32 timer_events;	/* increase events since the last cut */
	u32 byte_events;
	s64 tokens;		/* bytes the pacer may send now */
	u64 tokens_at;
};

#define SOFTRDMA_DCQCN_ONE		1024
/* The line rate, Mb/s: where pacing starts from, and stops. */
#define SOFTRDMA_DCQCN_LINE_MBPS	10000
#define SOFTRDMA_DCQCN_MIN_MBPS		10

/*
 * A RoCE QP: the core's QP, then the RC requester's and responder's state
 * and the route. ib_core allocates it (softrdma_roce_ops' object size), so
 * the core's QP must stay first.
 */
struct softrdma_roce_qp {
	struct softrdma_qp qp;
	struct softrdma_roce_net net;
	struct dst_cache dst_cache;	/* the route of net, per CPU */
	struct {
		u32 psn;		/* next PSN to use */
		u32 tx_pkt;		/* next packet of WQE send_idx - 1 */
		u32 una_psn;		/* oldest PSN not acknowledged */
		u32 read_off;		/* bytes of the oldest READ arrived */
		u32 rd_atomic;		/* READs and atomics in flight */
		u32 rnr_psn;		/* where to resume after an RNR wait */
		bool rnr_wait;		/* the timer runs the RNR delay */
		bool tx_tick;		/* no memory, or no tokens: next tick */
		bool looped;		/* the last packet took the loop */
		u8 retries;
		u8 rnr_retries;
		/*
		 * Selective repeat's retransmission timeout (RFC 6298): one
		 * WQE timed at a time, from its last packet's first sending
		 * to its completion; srtt_us 0: no sample yet.
		 */
		bool rtt_open;
		u8 rto_shift;		/* timeouts since the last sample */
		u32 rtt_idx;
		u64 rtt_t0;
		u32 srtt_us;
		u32 rttvar_us;
		/*
		 * Selective repeat after a timeout: each ACK that moves
		 * una short of sr_recover (the next PSN when it fired)
		 * sends the packet at una again, one gap a round trip.
		 */
		bool sr_recovery;
		u32 sr_recover;
		/*
		 * Go-back-N's loss window: packets in flight at most, cut
		 * by a timeout (to SOFTRDMA_REQ_CWND_MIN) or a sequence NAK
		 * (by half), grown by ACKs (by what they acknowledge up to
		 * ssthresh, then a packet a window's worth), never above
		 * SOFTRDMA_REQ_WINDOW; selective repeat keeps it whole. A
		 * resend goes as the window opens: from gbn_next on, while
		 * gbn_resend. A NAK cuts it once a loss: not for a PSN below
		 * gbn_recover (the next PSN when it was last cut).
		 */
		u32 cwnd;
		u32 ssthresh;
		u32 cwnd_acked;
		u32 gbn_next;
		u32 gbn_recover;
		bool gbn_resend;
		/*
		 * Selective repeat: when each PSN of the window was last
		 * sent again (by PSN modulo the window; NULL until the
		 * first resend), so that a NAK sent before that resend
		 * could arrive does not send it once more.
		 */
		struct softrdma_req_resent *resent;
		/*
		 * The one timer of the requester (retransmission, the RNR
		 * delay, the pacer's tick), an hrtimer: a measured timeout
		 * is a few round trips, well below a jiffy. timer_at is
		 * when it is due (0: not set); see softrdma_req_timer_set().
		 */
		struct hrtimer timer;
		ktime_t timer_at;
	} req;
	struct {
		u32 epsn;		/* PSN expected next */
		u32 msn;
		bool nak_sent;
		bool in_write;		/* a WRITE in progress */
		bool in_send;		/* UC: a SEND in progress */
		/* Results of the last atomics, for duplicates to replay. */
		struct softrdma_atomic_res atomics[SOFTRDMA_MAX_RD_ATOMIC];
		u32 atomic_next;
		u64 wva;
		u32 wrkey;
		u32 wlen;
		u32 woff;
		/*
		 * Paced output (resp.c): a long READ answer goes out a batch
		 * per tasklet run, requests that arrive meanwhile wait in
		 * backlog, and ACKs asked for in one receive batch leave
		 * as one.
		 */
		struct tasklet_struct tasklet;
		struct sk_buff_head backlog;
		struct softrdma_mr *rd_mr;	/* the READ being answered */
		u64 rd_va;
		u32 rd_len;
		u32 rd_psn;
		u32 rd_sent;			/* its packets sent */
		u32 ack_psn;
		bool rd_active;
		bool ack_pending;
		/*
		 * Selective repeat: requests that came ahead of epsn, by PSN
		 * modulo SOFTRDMA_SR_WIN (allocated when the first comes).
		 */
		struct sk_buff **ooo;
		u32 ooo_held;
		/* Requests past the gap since epsn moved or it was NAKed. */
		u32 nak_behind;
		u32 sr_high;		/* the highest PSN kept past it */
		bool sr_lossy;		/* a gap NAKed since none was kept */
		bool nak_rnr;		/* that NAK was an RNR NAK */
	} resp;
	/* Congestion (cc.c): the last CNP sent, and DCQCN's pacing. */
	struct {
		u64 cnp_at;
		struct softrdma_dcqcn rp;
	} cc;
	/*
	 * UD (ud.c): datagrams waiting for the ODP pages of their receive
	 * WQEs, in order of arrival; the first has the WQE in hand.
	 */
	struct sk_buff_head ud_held;
	u32 ece;	/* options agreed with the peer (SOFTRDMA_ECE_*) */
};

/*
 * Selective repeat (when both ends agreed on SOFTRDMA_ECE_SR): the
 * responder keeps requests that arrive past a gap, up to this many PSNs
 * ahead of the one it expects, and NAKs each gap's first PSN; the
 * requester sends that packet alone again, not every one after it.
 */
#define SOFTRDMA_SR_WIN		256
/* Requests past a gap in a row before it counts as a loss and is NAKed. */
#define SOFTRDMA_SR_DUPTHRESH	3
/*
 * The requester's tick: the pacer's, a retry of a send that found no
 * memory, and the shortest RNR wait (a jiffy, as before the timer was an
 * hrtimer: a peer asking for 10 us would have its RNR NAKs come back at
 * that rate).
 */
#define SOFTRDMA_REQ_TICK_NS	(NSEC_PER_SEC / HZ)
/* Requests past a gap before it is NAKed again. */
#define SOFTRDMA_SR_RENAK	32
/* UD datagrams a QP keeps while ODP pages are faulted in (ud.c). */
#define SOFTRDMA_UD_HELD_MAX	64

static inline bool softrdma_roce_sr(const struct softrdma_roce_qp *rqp)
{
	return rqp->ece & SOFTRDMA_ECE_SR;
}

/* Does the QP mark its requests ECN-capable (both ends agreed)? */
static inline bool softrdma_roce_ecn(const struct softrdma_roce_qp *rqp)
{
	return READ_ONCE(rqp->ece) & SOFTRDMA_ECE_ECN;
}

static inline struct softrdma_roce_qp *to_rqp(struct softrdma_qp *qp)
{
	return container_of(qp, struct softrdma_roce_qp, qp);
}

/* The QP's path MTU in bytes. */
static inline u32 softrdma_mtu(struct softrdma_qp *qp)
{
	return ib_mtu_enum_to_int(qp->attrs.path_mtu);
}

static inline u32 softrdma_psn_add(u32 psn, u32 n)
{
	return (psn + n) & 0xffffff;
}

/* psn_a - psn_b as a signed 24-bit distance. */
static inline s32 softrdma_psn_diff(u32 a, u32 b)
{
	return ((s32)((a - b) << 8)) >> 8;
}

/* net.c */
void softrdma_roce_add_zeroes(struct sk_buff *skb, u32 len);
int softrdma_roce_init(void);
void softrdma_roce_exit(void);
int softrdma_roce_dev_init(struct softrdma_dev *sdev);
void softrdma_roce_dev_exit(struct softrdma_dev *sdev);
struct sk_buff *softrdma_roce_alloc_skb(struct softrdma_qp *qp,
					unsigned int len);
extern bool softrdma_roce_gso;
struct page *softrdma_roce_train_page(unsigned int order);
struct sk_buff *softrdma_roce_alloc_train(struct softrdma_qp *qp,
					  unsigned int len);
u8 *softrdma_roce_train_data(struct sk_buff *skb);
int softrdma_roce_xmit(struct softrdma_qp *qp, struct sk_buff *skb);
int softrdma_roce_xmit_to(struct softrdma_qp *qp, struct sk_buff *skb,
			  const struct softrdma_roce_net *qn);
struct softrdma_dev *softrdma_roce_rx_dev(struct sk_buff *skb);
void softrdma_roce_count_drop(struct sk_buff *skb, enum softrdma_counter c);

/* icrc.c: the ICRC */
struct iphdr;
struct ipv6hdr;
struct udphdr;
u32 softrdma_icrc(const struct iphdr *iph, const struct udphdr *udph,
		  const u8 *bth, unsigned int len);
u32 softrdma_icrc6(const struct ipv6hdr *ip6h, const struct udphdr *udph,
		   const u8 *bth, unsigned int len);
void softrdma_roce_train_icrc(struct sk_buff *skb, const struct iphdr *iph,
			      const struct ipv6hdr *ip6h,
			      const struct udphdr *udph, u32 tlen);
void softrdma_roce_train_close(struct sk_buff *skb);
u32 softrdma_roce_train_head(bool held, const struct softrdma_roce_net *qn,
			     u32 i, u32 len, const u8 *bth, u32 hlen);
bool softrdma_roce_icrc_ok(struct sk_buff *skb);
bool softrdma_roce_icrc_rcv(struct sk_buff *skb, u32 qpn);
bool softrdma_roce_icrc_settle(struct sk_buff *skb);
u32 softrdma_roce_icrc_head(const struct sk_buff *skb, const u8 *p);
bool softrdma_roce_icrc_end(struct sk_buff *skb, u32 crc, u32 off);

/* roce.c: the QP's RoCE state as a whole */
void softrdma_roce_qp_fail(struct softrdma_qp *qp);

/* ud.c: UD and GSI QPs */
void softrdma_ud_req_run(struct softrdma_qp *qp);
bool softrdma_ud_req_pending(struct softrdma_qp *qp);
void softrdma_ud_rcv(struct softrdma_qp *qp, struct sk_buff *skb);
void softrdma_ud_tick(struct softrdma_qp *qp);
void softrdma_ud_stop(struct softrdma_qp *qp);

/* uc.c: the UC responder */
void softrdma_uc_rcv(struct softrdma_qp *qp, u8 op, u8 flags, u32 psn,
		     u8 *p, u32 len);

/* mcast.c: multicast groups */
void softrdma_mcast_init(struct softrdma_roce_dev *rdev);
void softrdma_mcast_exit(struct softrdma_dev *sdev);
int softrdma_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int softrdma_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void softrdma_mcast_qp_gone(struct softrdma_qp *qp);
void softrdma_mcast_rcv(struct softrdma_dev *sdev, struct sk_buff *skb);

/* recv.c: receive dispatch */
void softrdma_rx_dispatch(struct sk_buff *skb, bool looped);
void softrdma_rx_train(struct sock *sk, struct sk_buff *skb);

/* req.c: the requester */
void softrdma_req_run(struct softrdma_qp *qp);

/* Congestion: ECN marks, CNPs and DCQCN's pacing (cc.c). */
u8 softrdma_cc_tos(struct softrdma_qp *qp, const struct softrdma_roce_net *qn,
		   const struct softrdma_bth *bth);
void softrdma_cc_rcv_ce(struct softrdma_qp *qp, struct sk_buff *skb);
bool softrdma_cc_rcv_cnp(struct softrdma_qp *qp);
bool softrdma_cc_may_send(struct softrdma_qp *qp);
void softrdma_cc_sent(struct softrdma_qp *qp, u32 bytes);
void softrdma_cc_reset(struct softrdma_qp *qp);
bool softrdma_dcqcn_cnp(struct softrdma_dcqcn *d, u64 now);
bool softrdma_dcqcn_may_send(struct softrdma_dcqcn *d, u64 now);
void softrdma_dcqcn_sent(struct softrdma_dcqcn *d, u32 bytes);
bool softrdma_req_pending(struct softrdma_qp *qp);
void softrdma_req_sqd_check(struct softrdma_qp *qp);
u32 softrdma_req_una(struct softrdma_qp *qp);
void softrdma_req_arm_timer(struct softrdma_qp *qp);
void softrdma_req_timer_set(struct softrdma_qp *qp, u64 ns);
void softrdma_req_rtt_done(struct softrdma_qp *qp, u32 idx);
void softrdma_req_resend(struct softrdma_qp *qp, u32 psn);
void softrdma_req_gbn_loss(struct softrdma_qp *qp, u32 psn, bool timeout);
void softrdma_req_window_reset(struct softrdma_roce_qp *rqp);
void softrdma_req_acked(struct softrdma_qp *qp, u32 n);
void softrdma_req_resend_one(struct softrdma_qp *qp, u32 psn);
void softrdma_req_resend_nak(struct softrdma_qp *qp, u32 psn);
enum hrtimer_restart softrdma_req_timeout(struct hrtimer *t);

/* The requester's timer is no longer wanted (it may still fire: idle). */
static inline void softrdma_req_timer_stop(struct softrdma_roce_qp *rqp)
{
	rqp->req.timer_at = 0;
}

/* comp.c: the completer */
void softrdma_comp_rcv(struct softrdma_qp *qp, u8 op, u8 flags, u32 psn,
		       u8 *p, u32 paylen);

/* resp.c: the responder */
bool softrdma_resp_rcv(struct softrdma_qp *qp, struct sk_buff *skb);
void softrdma_resp_tasklet(struct tasklet_struct *t);
void softrdma_resp_stop(struct softrdma_qp *qp);
void softrdma_resp_flush_ack(struct softrdma_qp *qp);
void softrdma_resp_write_start(struct softrdma_qp *qp,
			       const struct softrdma_reth *reth);
bool softrdma_resp_write_place(struct softrdma_qp *qp, u8 *p, u32 paylen);

#endif /* SOFTRDMA_ROCE_H */
