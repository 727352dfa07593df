/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softrdma user/kernel ABI.
 *
 * Included unchanged by the kernel module (C) and by the rdma-core provider
 * (C and C++). Every structure has a fixed size and layout, checked with
 * static assertions on both sides (softrdma-abi-check.h).
 *
 * Rings (CQ, SQ, RQ and SRQ) are allocated by the kernel and
 * mapped into the process. A ring is one softrdma_ring_hdr followed by
 * num_slots fixed-size slots. Producer and consumer indices are free-running
 * 32-bit counters; slot i lives at index (i & (num_slots - 1)). num_slots is
 * a power of two. Each index is written by one side only and read by the
 * other with acquire/release ordering.
 */
#ifndef SOFTRDMA_ABI_H
#define SOFTRDMA_ABI_H

#include <linux/types.h>

#define SOFTRDMA_UVERBS_ABI_VERSION 1

/* Firmware version reported by query_device: major.minor.sub. */
#define SOFTRDMA_FW_MAJOR 0
#define SOFTRDMA_FW_MINOR 1
#define SOFTRDMA_FW_SUB 0
#define SOFTRDMA_FW_VERSION \
	(((__u64)SOFTRDMA_FW_MAJOR << 32) | (SOFTRDMA_FW_MINOR << 16) | \
	 SOFTRDMA_FW_SUB)

/* Name of the sysfs attribute every softrdma ib_device carries. */
#define SOFTRDMA_SYSFS_ABI_ATTR "softrdma_abi_version"

enum softrdma_transport_id {
	SOFTRDMA_TRANSPORT_ROCE = 1,
	SOFTRDMA_TRANSPORT_IWARP = 2,
};

/* Flags in softrdma_ring_hdr.flags (written by the kernel). */
enum softrdma_ring_flags {
	/* The kernel worker sleeps: the producer must kick after posting. */
	SOFTRDMA_RING_NEED_KICK = 1 << 0,
	/* The ring is in error (overflow or corrupted indices). */
	SOFTRDMA_RING_ERROR = 1 << 1,
};

#define SOFTRDMA_CACHELINE 64

/*
 * Ring header: producer, consumer and flags on separate cache lines so the
 * two sides never write the same line.
 */
struct softrdma_ring_hdr {
	__u32 producer;
	__u32 reserved0[15];
	__u32 consumer;
	/*
	 * A CQ's arming, written by its consumer alone, where the kernel
	 * says so (SOFTRDMA_CQ_ARM_MAPPED): two counts of requests for a
	 * completion event (ibv_req_notify_cq), each modulo 2^16: in the
	 * upper half (SOFTRDMA_CQ_ARM_NEXT) for the next completion, in the
	 * lower (SOFTRDMA_CQ_ARM_SOLICITED) for the next solicited one.
	 * When it next produces a CQE, the kernel takes a change of the
	 * upper half as a request for the next completion, else a change
	 * of the lower as one for the next solicited.
	 */
	__u32 arm;
	__u32 reserved1[14];
	__u32 flags;
	__u32 reserved2[15];
};

#define SOFTRDMA_CQ_ARM_NEXT		0xffff0000U
#define SOFTRDMA_CQ_ARM_SOLICITED	0x0000ffffU

#define SOFTRDMA_RING_HDR_SIZE 192

/* Flags of a completion; each side maps them to its own verbs flags. */
enum softrdma_cqe_flags {
	SOFTRDMA_CQE_WITH_IMM = 1 << 0,
	SOFTRDMA_CQE_WITH_INV = 1 << 1,
	SOFTRDMA_CQE_GRH = 1 << 2,
};

/*
 * How a datagram arrived (softrdma_cqe.network_hdr_type of a completion
 * with SOFTRDMA_CQE_GRH): the kernel's enum rdma_network_type.
 */
enum softrdma_network_type {
	SOFTRDMA_NETWORK_IB = 0,
	SOFTRDMA_NETWORK_ROCE_V1 = 1,
	SOFTRDMA_NETWORK_IPV4 = 2,
	SOFTRDMA_NETWORK_IPV6 = 3,
};

/*
 * Completion queue entry. status and opcode carry the verbs values, which
 * are the same numbers in the kernel (IB_WC_*) and in libibverbs (IBV_WC_*).
 */
struct softrdma_cqe {
	__aligned_u64 wr_id;
	__u32 status;		/* enum ibv_wc_status */
	__u32 opcode;		/* enum ibv_wc_opcode */
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;		/* immediate (big endian) or invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 flags;		/* enum softrdma_cqe_flags */
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 network_hdr_type;	/* enum softrdma_network_type */
	__u8 reserved0;
	__u8 smac[6];
	__u16 vlan_id;
	__aligned_u64 reserved1;
};

#define SOFTRDMA_CQE_SIZE 64
/*
 * As many CQEs as siw takes (3.2 million), rounded up to a power of two:
 * programs size CQs by their own needs, not by max_cqe (libfabric's
 * ofi_rxm asks its MSG provider for one entry per transmit and receive
 * slot of 1024 peers: 262144 at its defaults).
 */
#define SOFTRDMA_MAX_CQE 0x400000	/* 4M */

/*
 * Enhanced Connection Establishment (ECE): options two QPs agree on
 * through the connection manager (the REQ's and REP's VendorID and the
 * CM MAD's AttributeModifier carry them; librdmacm asks the provider by
 * ibv_query_ece and tells it by ibv_set_ece). The CM fields hold 24 bits
 * of vendor id: ours sits above 0xffff, in the locally administered OUI
 * space (the U/L bit, 0x02 of the first octet, set), so it can never
 * equal a PCI vendor id such as mlx5's 0x15b3. It is a convention, not a
 * registered OUI.
 */
#define SOFTRDMA_ECE_VENDOR_ID 0x025352

/*
 * The options are capability bits: a QP runs with those both ends have
 * (accepted = local capabilities & requested options); 0 is IBTA
 * go-back-N, what a QP runs until options are set.
 *
 * SOFTRDMA_ECE_SR, bit 0: selective repeat (the responder keeps what
 * comes past a gap and NAKs the gap; the requester resends that alone).
 */
#define SOFTRDMA_ECE_SR 0x1U
/*
 * SOFTRDMA_ECE_ECN, bit 1: congestion notification (the requests go out
 * ECN-capable, ECT(0); a receiver answers CE marks with CNPs, and the
 * sender paces itself by DCQCN's rules).
 */
#define SOFTRDMA_ECE_ECN 0x2U

/* Response of the ucontext allocation (driver data after the uverbs one). */
struct softrdma_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 transport;	/* enum softrdma_transport_id */
	__u32 ring_hdr_size;
	__u32 cqe_size;
	/*
	 * SOFTRDMA_ECE_* the device's QPs can agree on (0: no ECE). A
	 * module that predates them writes only the fields above.
	 */
	__u32 ece_caps;
	__u32 reserved;
};

/* The oldest softrdma_alloc_ucontext_resp a provider may ask for. */
#define SOFTRDMA_UCONTEXT_RESP_MIN 16

/* Flags of softrdma_create_cq_resp. */
enum softrdma_cq_flags {
	/*
	 * The CQ is armed through its ring header's arm word, no system
	 * call: after writing it, the consumer orders the write before its
	 * next read of the producer index (a full fence), as the kernel
	 * orders a new producer index before its read of the word. A
	 * module that predates it leaves the flag 0: ibv_cmd_req_notify_cq.
	 */
	SOFTRDMA_CQ_ARM_MAPPED = 1 << 0,
};

/* Response of CQ creation: where and how to map the CQ ring. */
struct softrdma_create_cq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 num_slots;
	__u32 flags;		/* enum softrdma_cq_flags */
};

/* A scatter/gather element, as the verbs define it. */
struct softrdma_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Flags of a send work request. */
enum softrdma_wqe_flags {
	SOFTRDMA_WQE_SIGNALED = 1 << 0,
	SOFTRDMA_WQE_SOLICITED = 1 << 1,
	SOFTRDMA_WQE_INLINE = 1 << 2,
	SOFTRDMA_WQE_FENCE = 1 << 3,
	/* IBV_WR_BIND_MW from ibv_bind_mw (a type 1 window). */
	SOFTRDMA_WQE_BIND_TYPE1 = 1 << 4,
};

/*
 * The fields of an IBV_WR_BIND_MW, in the place of the send WQE's
 * imm_data ... swap. It carries no data. mw_rkey names the window by its
 * index (its 8-bit key may be stale); new_rkey is the key it gets.
 * addr and length give the range of the MR whose lkey is mr_lkey (0 for a
 * zero length, which unbinds); access holds the window's IBV_ACCESS_*
 * flags.
 */
struct softrdma_bind_mw_wqe {
	__u32 mw_rkey;
	__u32 new_rkey;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_lkey;
	__u32 access;		/* enum ibv_access_flags */
};

/*
 * The destination of a send on a UD QP (and the GSI QP), in the place of
 * the send WQE's rkey ... compare_add; the send WQE's imm_data keeps the
 * immediate. ah_num names an address handle of the QP's PD, as its
 * creation answered (softrdma_create_ah_resp); remote_qkey with its high
 * bit set asks for the QP's own Q_Key.
 */
struct softrdma_ud_wqe {
	__u32 reserved0;	/* the send WQE's imm_data */
	__u32 ah_num;
	__u32 remote_qpn;
	__u32 remote_qkey;
	__u16 pkey_index;	/* GSI only */
	__u16 reserved1[7];
};

/*
 * An IBV_WR_FLUSH (IBTA 1.5, RDMA FLUSH), in the place of the send WQE's
 * imm_data ... swap. It carries no data: length bytes at remote_addr under
 * rkey are made visible (type IBV_FLUSH_GLOBAL) or persistent
 * (IBV_FLUSH_PERSISTENT), the range or the whole MR (level
 * IBV_FLUSH_RANGE or IBV_FLUSH_MR).
 */
struct softrdma_flush_wqe {
	__u32 reserved0;
	__u32 rkey;
	__aligned_u64 remote_addr;
	__aligned_u64 length;
	__u8 type;		/* enum ibv_placement_type */
	__u8 level;		/* enum ibv_selectivity_level */
	__u8 reserved1[6];
};

/*
 * An IBV_WR_ATOMIC_WRITE (IBTA 1.5), in the place of the send WQE's
 * imm_data ... swap: the 8 bytes written at remote_addr under rkey, as
 * one store, in the order the application gave them.
 */
struct softrdma_atomic_write_wqe {
	__u32 reserved0;
	__u32 rkey;
	__aligned_u64 remote_addr;
	__u8 data[8];
	__aligned_u64 reserved1;
};

/*
 * Send queue entry: this header, then num_sge softrdma_sge or, with
 * SOFTRDMA_WQE_INLINE, inline_len bytes of data. opcode is the verbs
 * (IBV_WR_*) value. IBV_WR_BIND_MW uses bind_mw, IBV_WR_FLUSH flush and
 * IBV_WR_ATOMIC_WRITE atomic_write; a send on a UD QP uses ud beside
 * imm_data; every other opcode the fields beside imm_data.
 * IBV_WR_LOCAL_INV carries the key to invalidate in imm_data. On an XRC
 * INI QP, remote_srqn names the XRC SRQ (at the XRC TGT QP's end) whose
 * receive WQEs and PD the request uses: it travels in the XRCETH.
 */
struct softrdma_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;		/* enum ibv_wr_opcode */
	__u32 flags;		/* enum softrdma_wqe_flags */
	__u32 num_sge;
	__u32 inline_len;
	union {
		struct {
			/* immediate (big endian) or rkey to invalidate */
			__u32 imm_data;
			__u32 rkey;
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
		};
		struct softrdma_bind_mw_wqe bind_mw;
		struct softrdma_ud_wqe ud;
		struct softrdma_flush_wqe flush;
		struct softrdma_atomic_write_wqe atomic_write;
	};
	__u32 remote_srqn;	/* XRC INI QPs: the XRC SRQ at the target */
	__u32 reserved;
};

#define SOFTRDMA_SEND_WQE_HDR_SIZE 64

/* Receive queue entry: this header, then num_sge softrdma_sge. */
struct softrdma_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

#define SOFTRDMA_RECV_WQE_HDR_SIZE 16

/*
 * Every receive on a UD QP starts with this many bytes of the packet's
 * network header (IBTA 11.4.1.2): an IPv6 header, or for IPv4 20 bytes of
 * zeros and then the IPv4 header.
 */
#define SOFTRDMA_GRH_SIZE 40

/* Response of address handle creation: the number UD WQEs name it by. */
struct softrdma_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* Response of QP creation: the QP number and where its rings are. */
struct softrdma_create_qp_resp {
	__aligned_u64 sq_mmap_offset;
	__aligned_u64 sq_mmap_size;
	__aligned_u64 rq_mmap_offset;
	__aligned_u64 rq_mmap_size;
	__u32 qpn;
	__u32 sq_slots;
	__u32 sq_slot_size;
	__u32 rq_slots;
	__u32 rq_slot_size;
	__u32 max_inline;
};

/*
 * Response of SRQ creation: where and how to map the SRQ ring, whose slots
 * hold receive WQEs as the RQ's do.
 */
struct softrdma_create_srq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 num_slots;
	__u32 slot_size;
};

/*
 * The driver part of a modify_srq command that resizes the SRQ
 * (IB_SRQ_MAX_WR): the kernel writes a softrdma_create_srq_resp for the
 * new ring at resp_addr (modify_srq has no response of its own). The old
 * ring's WQEs not yet taken are in the new ring, at the same indices.
 */
struct softrdma_modify_srq_cmd {
	__aligned_u64 resp_addr;
};

/* Bits of softrdma_modify_qp_cmd.comp_mask. */
enum softrdma_modify_qp_mask {
	/* ece_options holds options to set (ibv_set_ece). */
	SOFTRDMA_MODIFY_QP_ECE = 1 << 0,
};

/*
 * The driver part of a modify_qp command (optional: a command without it
 * changes no option). With SOFTRDMA_MODIFY_QP_ECE, the QP takes
 * ece_options & its device's capabilities, allowed in RESET and INIT and
 * on the move to RTR.
 */
struct softrdma_modify_qp_cmd {
	__u32 comp_mask;	/* enum softrdma_modify_qp_mask */
	__u32 ece_options;	/* SOFTRDMA_ECE_* */
};

/* The driver part of modify_qp's response: the options the QP runs with. */
struct softrdma_modify_qp_resp {
	__u32 ece_options;	/* SOFTRDMA_ECE_* */
	__u32 reserved;
};

#endif /* SOFTRDMA_ABI_H */
