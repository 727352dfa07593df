/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The C interface of the provider's C++ core, for the C shim that speaks
 * rdma-core's private provider ABI. No C++ exception crosses it: failures
 * come back as NULL with errno set, or as a negative errno.
 */
#ifndef SOFTRDMA_CORE_H
#define SOFTRDMA_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "softrdma-abi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct softrdma_cq_ring;

/* Map the CQ ring the kernel described; NULL with errno on failure. */
struct softrdma_cq_ring *softrdma_cq_ring_open(int cmd_fd, uint64_t offset,
					       uint64_t size,
					       uint32_t num_slots);
void softrdma_cq_ring_close(struct softrdma_cq_ring *cq);
/* Up to n completions into wc; their count, or a negative errno. */
int softrdma_cq_ring_poll(struct softrdma_cq_ring *cq, int n,
			  struct ibv_wc *wc);

/*
 * The extended poll (ibv_cq_ex). start_poll takes the CQ's lock and, if a
 * completion waits (0), points *wc at it; otherwise it releases the lock
 * and returns ENOENT (empty) or EIO. next_poll moves *wc on (0) or returns
 * ENOENT / EIO; end_poll, due after a start_poll that returned 0, consumes
 * the completions seen and releases the lock.
 */
int softrdma_cq_ring_start_poll(struct softrdma_cq_ring *cq,
				const struct ibv_wc **wc);
int softrdma_cq_ring_next_poll(struct softrdma_cq_ring *cq,
			       const struct ibv_wc **wc);
void softrdma_cq_ring_end_poll(struct softrdma_cq_ring *cq);

struct softrdma_qp_rings;

/* Map the send and receive rings of a new QP; NULL with errno on failure. */
struct softrdma_qp_rings *
softrdma_qp_rings_open(int cmd_fd, const struct softrdma_create_qp_resp *resp);
void softrdma_qp_rings_close(struct softrdma_qp_rings *rings);
/*
 * Post a list of work requests into the rings. Returns 0, or an errno with
 * *bad_wr at the first request not posted (those before it are).
 */
int softrdma_qp_post_send(struct softrdma_qp_rings *rings,
			  struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int softrdma_qp_post_recv(struct softrdma_qp_rings *rings,
			  struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/*
 * After posting: must the kernel be kicked for the send (receive) queue?
 * Orders the preceding publish before the read of the kernel's flag.
 */
bool softrdma_qp_sq_need_wakeup(struct softrdma_qp_rings *rings);
bool softrdma_qp_rq_need_wakeup(struct softrdma_qp_rings *rings);

struct softrdma_srq_ring;

/* Map the ring of a new SRQ; NULL with errno on failure. */
struct softrdma_srq_ring *
softrdma_srq_ring_open(int cmd_fd, const struct softrdma_create_srq_resp *resp);
void softrdma_srq_ring_close(struct softrdma_srq_ring *srq);
/* As softrdma_qp_post_recv, into the SRQ's ring. */
int softrdma_srq_post_recv(struct softrdma_srq_ring *srq,
			   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/*
 * The fields of one send work request besides its data. A bind
 * (IBV_WR_BIND_MW) uses bind_mw, every other opcode the fields beside it,
 * as in the WQE (softrdma-abi.h).
 */
struct softrdma_wr_hdr {
	uint64_t wr_id;
	uint32_t opcode;	/* enum ibv_wr_opcode */
	uint32_t send_flags;	/* enum ibv_send_flags */
	uint32_t wqe_flags;	/* SOFTRDMA_WQE_BIND_TYPE1 or 0 */
	union {
		struct {
			/* immediate (big endian) or rkey to invalidate */
			uint32_t imm_data;
			uint32_t rkey;
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
		};
		struct softrdma_bind_mw_wqe bind_mw;
	};
};

/*
 * Fill the fields of a bind (IBV_WR_BIND_MW) besides wr_id and send_flags:
 * the window whose current rkey is mw_rkey gets new_rkey and the binding
 * in info. type1: for ibv_bind_mw (a type 1 window).
 */
void softrdma_bind_mw_hdr(struct softrdma_wr_hdr *h, uint32_t mw_rkey,
			  uint32_t new_rkey,
			  const struct ibv_mw_bind_info *info, bool type1);

/*
 * The ibv_wr_* API: wr_start takes the send queue's lock and opens a batch;
 * wr_begin starts a request, the setters give it data; wr_complete
 * publishes the batch (0) or drops it and returns the first error
 * (ENOMEM: queue full; EINVAL: a request that does not fit), wr_abort drops
 * it; both release the lock.
 */
void softrdma_qp_wr_start(struct softrdma_qp_rings *rings);
void softrdma_qp_wr_begin(struct softrdma_qp_rings *rings,
			  const struct softrdma_wr_hdr *wr);
void softrdma_qp_wr_set_sge_list(struct softrdma_qp_rings *rings, size_t n,
				 const struct ibv_sge *sges);
void softrdma_qp_wr_set_inline_list(struct softrdma_qp_rings *rings, size_t n,
				    const struct ibv_data_buf *bufs);
int softrdma_qp_wr_complete(struct softrdma_qp_rings *rings);
void softrdma_qp_wr_abort(struct softrdma_qp_rings *rings);

#ifdef __cplusplus
}
#endif

#endif /* SOFTRDMA_CORE_H */
