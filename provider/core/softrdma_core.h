/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The C interface of the provider's C++ core, for the C shim that speaks
 * rdma-core's private provider ABI. No C++ exception crosses it: failures
 * come back as NULL with errno set, or as a negative errno.
 */
#ifndef SOFTRDMA_CORE_H
#define SOFTRDMA_CORE_H

#include <stdbool.h>
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

#ifdef __cplusplus
}
#endif

#endif /* SOFTRDMA_CORE_H */
