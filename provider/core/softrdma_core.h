/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The C interface of the provider's C++ core, for the C shim that speaks
 * rdma-core's private provider ABI (../softrdma.c). The core holds the
 * data path: the rings, the WQE and CQE encodings, the post loop, the
 * states a QP may be posted in and the kick. It uses only public headers
 * (libibverbs' verbs.h and the kernel's uverbs ABI).
 *
 * Error convention: errors are positive errno values, as the verbs return
 * them. A function returning int returns 0 or an errno; one returning a
 * pointer returns NULL and sets errno. The only exception is
 * softrdma_cq_poll(), which returns what ibv_poll_cq returns: a count, or a
 * negative errno. No C++ exception crosses this interface.
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

/* A completion queue's ring. */
struct softrdma_cq;

/* Map the CQ ring the kernel described. */
struct softrdma_cq *softrdma_cq_open(int cmd_fd,
				     const struct softrdma_create_cq_resp *resp);
void softrdma_cq_close(struct softrdma_cq *cq);
/* Up to n completions into wc: their count, or a negative errno. */
int softrdma_cq_poll(struct softrdma_cq *cq, int n, struct ibv_wc *wc);
/*
 * ibv_req_notify_cq through the ring header, where the kernel takes it
 * there (SOFTRDMA_CQ_ARM_MAPPED): true if done, false to ask the kernel.
 */
bool softrdma_cq_arm(struct softrdma_cq *cq, int solicited_only);
/*
 * Drop the completions of QP qp_num not yet polled, once the kernel
 * destroyed or reset it: their work requests' owners may be gone.
 */
void softrdma_cq_purge(struct softrdma_cq *cq, uint32_t qp_num);

/*
 * The extended CQ (ibv_cq_ex): check what create_cq_ex asks for (0 or
 * EOPNOTSUPP), then point its poll and read functions at the core's.
 */
int softrdma_cq_ex_check(const struct ibv_cq_init_attr_ex *attr);
void softrdma_cq_ex_init(struct ibv_cq_ex *cqx);
/* Defined by the shim, which knows libibverbs' layout: cqx's core CQ. */
struct softrdma_cq *softrdma_cqx_core(struct ibv_cq_ex *cqx);

/* A QP's send and receive rings, and how to post to them. */
struct softrdma_qp;

/*
 * Whether a device takes QPs of this type, before the kernel is asked: 0
 * for RC, and for UC, UD and XRC (IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV) on
 * RoCE; EOPNOTSUPP for every other type libibverbs knows (and UC, UD and
 * XRC on iWARP); EINVAL for a value that is no type at all, as libibverbs
 * itself answers.
 */
int softrdma_qp_type_check(enum ibv_qp_type type, bool iwarp);

/*
 * Defined by the shim, which keeps it in its address handle: the number
 * the kernel gave ah at its creation, which UD WQEs name it by.
 */
uint32_t softrdma_ah_num(const struct ibv_ah *ah);

/*
 * Map the rings of a QP the kernel just made (ibqp: its handle, context
 * and device, which say where kicks go and which transport it uses).
 */
struct softrdma_qp *softrdma_qp_open(struct ibv_qp *ibqp,
				     const struct softrdma_create_qp_resp *resp);
void softrdma_qp_close(struct softrdma_qp *qp);
/* The state a successful modify_qp moved the QP to. */
void softrdma_qp_set_state(struct softrdma_qp *qp, enum ibv_qp_state state);

/*
 * ibv_post_send and ibv_post_recv: post a list of work requests and kick
 * the kernel if it asks for it. On error *bad_wr is at the first request
 * not posted (those before it are).
 */
int softrdma_qp_post_send(struct softrdma_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr);
int softrdma_qp_post_recv(struct softrdma_qp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);
/*
 * ibv_bind_mw (type 1 windows; libibverbs checked the type and the PD):
 * mw takes its new rkey once the bind is posted.
 */
int softrdma_qp_bind_mw(struct softrdma_qp *qp, struct ibv_mw *mw,
			const struct ibv_mw_bind *bind);

/*
 * The extended QP (ibv_qp_ex, the ibv_wr_* API): check what create_qp_ex
 * asks for (0 or EOPNOTSUPP; the builders a QP type has: RC all of ours,
 * XRC INI those of RC but RDMA FLUSH and ATOMIC WRITE, UC SEND and RDMA
 * WRITE with or without immediate, UD SEND with or without immediate;
 * RDMA FLUSH and ATOMIC WRITE on RC only if not @iwarp), then point the
 * builders (those in ops, the IBV_QP_EX_WITH_* flags) and the rest of the
 * API at the core's; a UD QP's (qpx->qp_base.qp_type) also gets
 * wr_set_ud_addr, an XRC INI QP's wr_set_xrc_srqn.
 */
int softrdma_qp_ex_check(const struct ibv_qp_init_attr_ex *attr, bool iwarp);
void softrdma_qp_ex_init(struct ibv_qp_ex *qpx, uint64_t ops);
/* Defined by the shim, which knows libibverbs' layout: qpx's core QP. */
struct softrdma_qp *softrdma_qpx_core(struct ibv_qp_ex *qpx);

/* A shared receive queue's ring. */
struct softrdma_srq;

/* Map the ring of a new SRQ. */
struct softrdma_srq *softrdma_srq_open(int cmd_fd,
				       const struct softrdma_create_srq_resp *resp);
void softrdma_srq_close(struct softrdma_srq *srq);
/* ibv_post_srq_recv: as softrdma_qp_post_recv; receives need no kick. */
int softrdma_srq_post_recv(struct softrdma_srq *srq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr);
/*
 * ibv_modify_srq with IBV_SRQ_MAX_WR: with no post in between, cmd(arg,
 * resp) makes the modify command, which resizes the ring in the kernel and
 * describes the new one in *resp (0 or an errno); then the new ring is
 * mapped in place of the old one. 0 or an errno.
 */
int softrdma_srq_resize(struct softrdma_srq *srq, int cmd_fd,
			int (*cmd)(void *arg, struct softrdma_create_srq_resp *resp),
			void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SOFTRDMA_CORE_H */
