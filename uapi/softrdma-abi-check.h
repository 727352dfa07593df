/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Layout checks of the softrdma ABI, compiled by the kernel module and by
 * the provider (C and C++): a change on one side that the other has not
 * seen fails the build.
 */
#ifndef SOFTRDMA_ABI_CHECK_H
#define SOFTRDMA_ABI_CHECK_H

#if defined(__KERNEL__)
#include <linux/build_bug.h>
#include <linux/stddef.h>
#elif defined(__cplusplus)
#include <cstddef>
#else
#include <assert.h>
#include <stddef.h>
#endif

#include "softrdma-abi.h"

static_assert(sizeof(struct softrdma_ring_hdr) == SOFTRDMA_RING_HDR_SIZE,
	      "ring header size");
static_assert(offsetof(struct softrdma_ring_hdr, consumer) ==
	      SOFTRDMA_CACHELINE, "consumer on its own cache line");
static_assert(offsetof(struct softrdma_ring_hdr, arm) ==
	      SOFTRDMA_CACHELINE + 4, "arm beside consumer: both the consumer's");
static_assert(offsetof(struct softrdma_ring_hdr, flags) ==
	      2 * SOFTRDMA_CACHELINE, "flags on their own cache line");
static_assert(sizeof(struct softrdma_cqe) == SOFTRDMA_CQE_SIZE, "CQE size");
static_assert(offsetof(struct softrdma_cqe, status) == 8, "CQE status");
static_assert(offsetof(struct softrdma_cqe, flags) == 36, "CQE flags");
static_assert(offsetof(struct softrdma_cqe, pkey_index) == 40,
	      "CQE pkey_index");
static_assert(offsetof(struct softrdma_cqe, smac) == 48, "CQE smac");
static_assert(sizeof(struct softrdma_alloc_ucontext_resp) == 24,
	      "ucontext response size");
static_assert(offsetof(struct softrdma_alloc_ucontext_resp, ece_caps) ==
	      SOFTRDMA_UCONTEXT_RESP_MIN, "ucontext ece_caps after the old end");
static_assert(SOFTRDMA_ECE_VENDOR_ID > 0xffff &&
	      SOFTRDMA_ECE_VENDOR_ID <= 0xffffff,
	      "ECE vendor id: 24 bits, never a PCI vendor id");
static_assert(sizeof(struct softrdma_create_cq_resp) == 24,
	      "create_cq response size");
static_assert(sizeof(struct softrdma_sge) == 16, "SGE size");
static_assert(sizeof(struct softrdma_send_wqe) == SOFTRDMA_SEND_WQE_HDR_SIZE,
	      "send WQE header size");
static_assert(offsetof(struct softrdma_send_wqe, num_sge) == 16,
	      "send WQE num_sge");
static_assert(offsetof(struct softrdma_send_wqe, imm_data) == 24,
	      "send WQE imm_data");
static_assert(offsetof(struct softrdma_send_wqe, rkey) == 28,
	      "send WQE rkey");
static_assert(offsetof(struct softrdma_send_wqe, remote_addr) == 32,
	      "send WQE remote_addr");
static_assert(offsetof(struct softrdma_send_wqe, compare_add) == 40,
	      "send WQE compare_add");
static_assert(offsetof(struct softrdma_send_wqe, swap) == 48,
	      "send WQE swap");
static_assert(offsetof(struct softrdma_send_wqe, remote_srqn) == 56,
	      "send WQE remote_srqn");
static_assert(offsetof(struct softrdma_send_wqe, bind_mw) == 24,
	      "send WQE bind_mw");
static_assert(sizeof(struct softrdma_bind_mw_wqe) == 32, "bind_mw size");
static_assert(offsetof(struct softrdma_bind_mw_wqe, addr) == 8,
	      "bind_mw addr");
static_assert(offsetof(struct softrdma_bind_mw_wqe, length) == 16,
	      "bind_mw length");
static_assert(offsetof(struct softrdma_bind_mw_wqe, mr_lkey) == 24,
	      "bind_mw mr_lkey");
static_assert(offsetof(struct softrdma_bind_mw_wqe, access) == 28,
	      "bind_mw access");
static_assert(offsetof(struct softrdma_send_wqe, ud) == 24, "send WQE ud");
static_assert(sizeof(struct softrdma_ud_wqe) == 32, "ud size");
static_assert(offsetof(struct softrdma_ud_wqe, ah_num) == 4, "ud ah_num");
static_assert(offsetof(struct softrdma_ud_wqe, remote_qpn) == 8,
	      "ud remote_qpn");
static_assert(offsetof(struct softrdma_ud_wqe, remote_qkey) == 12,
	      "ud remote_qkey");
static_assert(offsetof(struct softrdma_ud_wqe, pkey_index) == 16,
	      "ud pkey_index");
static_assert(sizeof(struct softrdma_flush_wqe) == 32, "flush size");
static_assert(offsetof(struct softrdma_flush_wqe, rkey) == 4, "flush rkey");
static_assert(offsetof(struct softrdma_flush_wqe, remote_addr) == 8,
	      "flush remote_addr");
static_assert(offsetof(struct softrdma_flush_wqe, length) == 16,
	      "flush length");
static_assert(offsetof(struct softrdma_flush_wqe, type) == 24, "flush type");
static_assert(offsetof(struct softrdma_flush_wqe, level) == 25,
	      "flush level");
static_assert(sizeof(struct softrdma_atomic_write_wqe) == 32,
	      "atomic_write size");
static_assert(offsetof(struct softrdma_atomic_write_wqe, rkey) == 4,
	      "atomic_write rkey");
static_assert(offsetof(struct softrdma_atomic_write_wqe, remote_addr) == 8,
	      "atomic_write remote_addr");
static_assert(offsetof(struct softrdma_atomic_write_wqe, data) == 16,
	      "atomic_write data");
static_assert(sizeof(struct softrdma_create_ah_resp) == 8,
	      "create_ah response size");
static_assert(sizeof(struct softrdma_recv_wqe) == SOFTRDMA_RECV_WQE_HDR_SIZE,
	      "recv WQE header size");
static_assert(sizeof(struct softrdma_create_qp_resp) == 56,
	      "create_qp response size");
static_assert(sizeof(struct softrdma_create_srq_resp) == 24,
	      "create_srq response size");
static_assert(sizeof(struct softrdma_modify_srq_cmd) == 8,
	      "modify_srq command size");
static_assert(sizeof(struct softrdma_modify_qp_cmd) == 8,
	      "modify_qp command size");
static_assert(offsetof(struct softrdma_modify_qp_cmd, ece_options) == 4,
	      "modify_qp command ece_options");
static_assert(sizeof(struct softrdma_modify_qp_resp) == 8,
	      "modify_qp response size");

#endif /* SOFTRDMA_ABI_CHECK_H */
