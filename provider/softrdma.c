// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma provider: the thin C shim over rdma-core's private provider ABI.
 * Everything with logic of its own lives in the C++ core (core/), reached
 * through core/softrdma_core.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#include "softrdma-abi.h"
#include "softrdma-abi-check.h"
#include "core/softrdma_core.h"

/* The uverbs responses followed by ours, as the kernel writes them. */
struct usr_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct softrdma_alloc_ucontext_resp drv;
};
static_assert(sizeof(struct usr_get_context_resp) ==
	      sizeof(struct ib_uverbs_get_context_resp) +
	      sizeof(struct softrdma_alloc_ucontext_resp),
	      "no padding in the get_context response");

struct usr_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct softrdma_create_cq_resp drv;
};
static_assert(sizeof(struct usr_create_cq_resp) ==
	      sizeof(struct ib_uverbs_create_cq_resp) +
	      sizeof(struct softrdma_create_cq_resp),
	      "no padding in the create_cq response");

struct sr_device {
	struct verbs_device vdev;
};

struct sr_context {
	struct verbs_context vctx;
	uint32_t transport;
};

struct usr_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct softrdma_create_qp_resp drv;
};
static_assert(sizeof(struct usr_create_qp_resp) ==
	      sizeof(struct ib_uverbs_create_qp_resp) +
	      sizeof(struct softrdma_create_qp_resp),
	      "no padding in the create_qp response");

struct sr_qp {
	struct verbs_qp vqp;
	struct softrdma_qp_rings *rings;
	/* The state as our modify_qp calls left it (the kernel may go to
	 * ERR on its own; the doorbell then tells it about new work).
	 */
	_Atomic int state;
};

struct usr_create_cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct softrdma_create_cq_resp drv;
};
static_assert(sizeof(struct usr_create_cq_ex_resp) ==
	      sizeof(struct ib_uverbs_ex_create_cq_resp) +
	      sizeof(struct softrdma_create_cq_resp),
	      "no padding in the extended create_cq response");

struct sr_cq {
	struct verbs_cq vcq;
	struct softrdma_cq_ring *ring;
	/* The completion an extended poll is at. */
	const struct ibv_wc *cur;
};

static struct sr_cq *to_sr_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sr_cq, vcq.cq);
}

static struct sr_cq *cqx_to_sr_cq(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct sr_cq, vcq.cq_ex);
}

static int sr_query_device_ex(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int sr_query_port(struct ibv_context *context, uint8_t port,
			 struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *sr_alloc_pd(struct ibv_context *context)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int sr_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_mr *sr_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int sr_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

static struct ibv_mw *sr_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sr_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

static struct ibv_cq *sr_create_cq(struct ibv_context *context, int cqe,
				   struct ibv_comp_channel *channel,
				   int comp_vector)
{
	struct usr_create_cq_resp resp = {};
	struct ibv_create_cq cmd;
	struct sr_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->ring = softrdma_cq_ring_open(context->cmd_fd, resp.drv.mmap_offset,
					 resp.drv.mmap_size, resp.drv.num_slots);
	if (!cq->ring) {
		ret = errno;
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		free(cq);
		errno = ret;
		return NULL;
	}
	return &cq->vcq.cq;
}

/* The extended CQ: the core polls, these read what it found. */
static int sr_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct sr_cq *cq = cqx_to_sr_cq(cqx);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	ret = softrdma_cq_ring_start_poll(cq->ring, &cq->cur);
	if (ret)
		return ret;
	cqx->status = cq->cur->status;
	cqx->wr_id = cq->cur->wr_id;
	return 0;
}

static int sr_next_poll(struct ibv_cq_ex *cqx)
{
	struct sr_cq *cq = cqx_to_sr_cq(cqx);
	int ret;

	ret = softrdma_cq_ring_next_poll(cq->ring, &cq->cur);
	if (ret)
		return ret;
	cqx->status = cq->cur->status;
	cqx->wr_id = cq->cur->wr_id;
	return 0;
}

static void sr_end_poll(struct ibv_cq_ex *cqx)
{
	softrdma_cq_ring_end_poll(cqx_to_sr_cq(cqx)->ring);
}

static enum ibv_wc_opcode sr_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->opcode;
}

static uint32_t sr_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->vendor_err;
}

static uint32_t sr_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->byte_len;
}

static __be32 sr_read_imm_data(struct ibv_cq_ex *cqx)
{
	const struct ibv_wc *wc = cqx_to_sr_cq(cqx)->cur;

	/* ibv_wc shares one field between the two. */
	return wc->imm_data;
}

static uint32_t sr_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->qp_num;
}

static uint32_t sr_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->src_qp;
}

static unsigned int sr_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->wc_flags;
}

static uint32_t sr_read_slid(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->slid;
}

static uint8_t sr_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->sl;
}

static uint8_t sr_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cqx_to_sr_cq(cqx)->cur->dlid_path_bits;
}

/* What a CQE carries; no timestamps, VLAN, flow tag or tag matching. */
#define SR_WC_EX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
			IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
			IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			IBV_WC_EX_WITH_DLID_PATH_BITS)

static struct ibv_cq_ex *sr_create_cq_ex(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr)
{
	struct usr_create_cq_ex_resp resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct ibv_cq_ex *cqx;
	struct sr_cq *cq;
	int ret;

	/* No parent domain; single-threaded use needs nothing from us. */
	if ((attr->wc_flags & ~(uint64_t)SR_WC_EX_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq_ex(context, attr, &cq->vcq, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp), 0);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->ring = softrdma_cq_ring_open(context->cmd_fd, resp.drv.mmap_offset,
					 resp.drv.mmap_size, resp.drv.num_slots);
	if (!cq->ring) {
		ret = errno;
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		free(cq);
		errno = ret;
		return NULL;
	}
	cqx = &cq->vcq.cq_ex;
	cqx->start_poll = sr_start_poll;
	cqx->next_poll = sr_next_poll;
	cqx->end_poll = sr_end_poll;
	cqx->read_opcode = sr_read_opcode;
	cqx->read_vendor_err = sr_read_vendor_err;
	cqx->read_wc_flags = sr_read_wc_flags;
	cqx->read_byte_len = sr_read_byte_len;
	cqx->read_imm_data = sr_read_imm_data;
	cqx->read_qp_num = sr_read_qp_num;
	cqx->read_src_qp = sr_read_src_qp;
	cqx->read_slid = sr_read_slid;
	cqx->read_sl = sr_read_sl;
	cqx->read_dlid_path_bits = sr_read_dlid_path_bits;
	return cqx;
}

static int sr_destroy_cq(struct ibv_cq *ibcq)
{
	struct sr_cq *cq = to_sr_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	softrdma_cq_ring_close(cq->ring);
	free(cq);
	return 0;
}

static int sr_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	return softrdma_cq_ring_poll(to_sr_cq(ibcq)->ring, num_entries, wc);
}

static int sr_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

static struct sr_qp *to_sr_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sr_qp, vqp.qp);
}

static struct sr_qp *qpx_to_sr_qp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct sr_qp, vqp.qp_ex);
}

static struct softrdma_qp_rings *qpx_rings(struct ibv_qp_ex *qpx)
{
	return qpx_to_sr_qp(qpx)->rings;
}

/* Map the rings of a QP the kernel just made; destroys it on failure. */
static struct ibv_qp *sr_qp_map(struct sr_qp *qp, int cmd_fd,
				const struct softrdma_create_qp_resp *drv)
{
	int ret;

	qp->rings = softrdma_qp_rings_open(cmd_fd, drv);
	if (!qp->rings) {
		ret = errno;
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		free(qp);
		errno = ret;
		return NULL;
	}
	qp->state = IBV_QPS_RESET;
	return &qp->vqp.qp;
}

static struct ibv_qp *sr_create_qp(struct ibv_pd *pd,
				   struct ibv_qp_init_attr *attr)
{
	struct usr_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct sr_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return sr_qp_map(qp, pd->context->cmd_fd, &resp.drv);
}

static int sr_destroy_qp(struct ibv_qp *ibqp)
{
	struct sr_qp *qp = to_sr_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	softrdma_qp_rings_close(qp->rings);
	free(qp);
	return 0;
}

static int sr_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE))
		to_sr_qp(ibqp)->state = attr->qp_state;
	return ret;
}

static int sr_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		       int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

struct usr_create_srq_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct softrdma_create_srq_resp drv;
};
static_assert(sizeof(struct usr_create_srq_resp) ==
	      sizeof(struct ib_uverbs_create_srq_resp) +
	      sizeof(struct softrdma_create_srq_resp),
	      "no padding in the create_srq response");

struct sr_srq {
	struct verbs_srq vsrq;
	struct softrdma_srq_ring *ring;
};

static struct sr_srq *to_sr_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct sr_srq, vsrq.srq);
}

static struct ibv_srq *sr_create_srq(struct ibv_pd *pd,
				     struct ibv_srq_init_attr *attr)
{
	struct usr_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct sr_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->ring = softrdma_srq_ring_open(pd->context->cmd_fd, &resp.drv);
	if (!srq->ring) {
		ret = errno;
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		free(srq);
		errno = ret;
		return NULL;
	}
	return &srq->vsrq.srq;
}

static int sr_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			 int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int sr_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int sr_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sr_srq *srq = to_sr_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	softrdma_srq_ring_close(srq->ring);
	free(srq);
	return 0;
}

/* Receives wait in the ring for packets: no doorbell. */
static int sr_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	return softrdma_srq_post_recv(to_sr_srq(ibsrq)->ring, wr, bad_wr);
}

/*
 * The doorbell: a POST_SEND or POST_RECV command without work requests
 * tells the kernel that the rings hold new entries.
 */
static int sr_kick(struct ibv_qp *ibqp, bool send)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send scmd = {};
	struct ibv_post_recv rcmd = {};
	void *cmd;
	size_t len;

	if (send) {
		scmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		scmd.hdr.in_words = sizeof(scmd) / 4;
		scmd.hdr.out_words = sizeof(resp) / 4;
		scmd.response = (uintptr_t)&resp;
		scmd.qp_handle = ibqp->handle;
		scmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
		cmd = &scmd;
		len = sizeof(scmd);
	} else {
		rcmd.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
		rcmd.hdr.in_words = sizeof(rcmd) / 4;
		rcmd.hdr.out_words = sizeof(resp) / 4;
		rcmd.response = (uintptr_t)&resp;
		rcmd.qp_handle = ibqp->handle;
		rcmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
		cmd = &rcmd;
		len = sizeof(rcmd);
	}
	if (write(ibqp->context->cmd_fd, cmd, len) != (ssize_t)len)
		return errno;
	return 0;
}

/*
 * Tell the kernel that the send queue holds new work, unless it polls the
 * queue: then publishing was enough. The one kick site for the send queue.
 */
static int sr_sq_doorbell(struct sr_qp *qp)
{
	if (!softrdma_qp_sq_need_wakeup(qp->rings))
		return 0;
	return sr_kick(&qp->vqp.qp, true);
}

/*
 * Sends may be posted in RTS, SQD, SQE and ERR only. An iWARP QP enters RTS
 * in the kernel, with its connection, while the RDMA CM left it in INIT
 * (initiator) or RTR (responder) here: the kernel holds what is posted
 * before the connection is up and sends it then.
 */
static bool sr_sq_postable(struct sr_qp *qp)
{
	int state = qp->state;

	if (qp->vqp.qp.context->device->transport_type == IBV_TRANSPORT_IWARP)
		return state != IBV_QPS_RESET;
	return state != IBV_QPS_RESET && state != IBV_QPS_INIT &&
	       state != IBV_QPS_RTR;
}

static int sr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	struct sr_qp *qp = to_sr_qp(ibqp);
	int ret, kret;

	if (!sr_sq_postable(qp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = softrdma_qp_post_send(qp->rings, wr, bad_wr);
	if (ret && *bad_wr == wr)
		return ret;
	kret = sr_sq_doorbell(qp);
	return ret ? ret : kret;
}

/*
 * ibv_bind_mw (type 1 windows; libibverbs checked the type and the PD): a
 * bind WQE under a new 8-bit key. The window takes the new rkey now; a
 * failed bind completes in error and the caller puts the old one back.
 */
static int sr_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		      struct ibv_mw_bind *mw_bind)
{
	struct sr_qp *qp = to_sr_qp(ibqp);
	struct softrdma_qp_rings *rings = qp->rings;
	struct softrdma_wr_hdr h = {
		.wr_id = mw_bind->wr_id,
		.send_flags = mw_bind->send_flags,
	};
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int ret;

	if (!sr_sq_postable(qp))
		return EINVAL;
	softrdma_bind_mw_hdr(&h, mw->rkey, rkey, &mw_bind->bind_info, true);
	softrdma_qp_wr_start(rings);
	softrdma_qp_wr_begin(rings, &h);
	ret = softrdma_qp_wr_complete(rings);
	if (ret)
		return ret;
	mw->rkey = rkey;
	return sr_sq_doorbell(qp);
}

/*
 * The ibv_wr_* API: each builder hands the request's header to the core,
 * which writes it into the next slot; the setters add its data.
 */
static void sr_wr_begin(struct ibv_qp_ex *qpx, uint32_t opcode,
			uint32_t imm_data, uint32_t rkey, uint64_t remote_addr,
			uint64_t compare_add, uint64_t swap)
{
	struct softrdma_wr_hdr h = {
		.wr_id = qpx->wr_id,
		.remote_addr = remote_addr,
		.compare_add = compare_add,
		.swap = swap,
		.opcode = opcode,
		.send_flags = qpx->wr_flags,
		.imm_data = imm_data,
		.rkey = rkey,
	};

	softrdma_qp_wr_begin(qpx_rings(qpx), &h);
}

static void sr_wr_send(struct ibv_qp_ex *qpx)
{
	sr_wr_begin(qpx, IBV_WR_SEND, 0, 0, 0, 0, 0);
}

static void sr_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	sr_wr_begin(qpx, IBV_WR_SEND_WITH_IMM, imm_data, 0, 0, 0, 0);
}

static void sr_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	sr_wr_begin(qpx, IBV_WR_SEND_WITH_INV, invalidate_rkey, 0, 0, 0, 0);
}

static void sr_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t remote_addr)
{
	sr_wr_begin(qpx, IBV_WR_RDMA_WRITE, 0, rkey, remote_addr, 0, 0);
}

static void sr_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, __be32 imm_data)
{
	sr_wr_begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, imm_data, rkey,
		    remote_addr, 0, 0);
}

static void sr_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			    uint64_t remote_addr)
{
	sr_wr_begin(qpx, IBV_WR_RDMA_READ, 0, rkey, remote_addr, 0, 0);
}

static void sr_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, uint64_t compare,
				 uint64_t swap)
{
	sr_wr_begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, 0, rkey, remote_addr,
		    compare, swap);
}

static void sr_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t add)
{
	sr_wr_begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, rkey, remote_addr,
		    add, 0);
}

static void sr_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			  uint32_t rkey,
			  const struct ibv_mw_bind_info *bind_info)
{
	struct softrdma_wr_hdr h = {
		.wr_id = qpx->wr_id,
		.send_flags = qpx->wr_flags,
	};

	softrdma_bind_mw_hdr(&h, mw->rkey, rkey, bind_info, false);
	softrdma_qp_wr_begin(qpx_rings(qpx), &h);
}

static void sr_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	sr_wr_begin(qpx, IBV_WR_LOCAL_INV, invalidate_rkey, 0, 0, 0, 0);
}

static void sr_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
			  uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	softrdma_qp_wr_set_sge_list(qpx_rings(qpx), 1, &sge);
}

static void sr_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			       const struct ibv_sge *sg_list)
{
	softrdma_qp_wr_set_sge_list(qpx_rings(qpx), num_sge, sg_list);
}

static void sr_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				  size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	softrdma_qp_wr_set_inline_list(qpx_rings(qpx), 1, &buf);
}

static void sr_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				       const struct ibv_data_buf *buf_list)
{
	softrdma_qp_wr_set_inline_list(qpx_rings(qpx), num_buf, buf_list);
}

static void sr_wr_start(struct ibv_qp_ex *qpx)
{
	softrdma_qp_wr_start(qpx_rings(qpx));
}

static int sr_wr_complete(struct ibv_qp_ex *qpx)
{
	struct sr_qp *qp = qpx_to_sr_qp(qpx);
	int ret;

	if (!sr_sq_postable(qp)) {
		softrdma_qp_wr_abort(qp->rings);
		return EINVAL;
	}
	ret = softrdma_qp_wr_complete(qp->rings);
	return ret ? ret : sr_sq_doorbell(qp);
}

static void sr_wr_abort(struct ibv_qp_ex *qpx)
{
	softrdma_qp_wr_abort(qpx_rings(qpx));
}

/* The builders we have, by QP type; the rest fail QP creation. */
static uint64_t sr_send_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		       IBV_QP_EX_WITH_SEND_WITH_INV |
		       IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		       IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	case IBV_QPT_UC:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		       IBV_QP_EX_WITH_SEND_WITH_INV |
		       IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	default:
		return 0; /* UD needs wr_set_ud_addr: not yet */
	}
}

static void sr_set_send_ops(struct ibv_qp_ex *qpx, uint64_t ops)
{
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = sr_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = sr_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = sr_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = sr_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = sr_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = sr_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = sr_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = sr_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = sr_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = sr_wr_local_inv;
	qpx->wr_set_sge = sr_wr_set_sge;
	qpx->wr_set_sge_list = sr_wr_set_sge_list;
	qpx->wr_set_inline_data = sr_wr_set_inline_data;
	qpx->wr_set_inline_data_list = sr_wr_set_inline_data_list;
	qpx->wr_start = sr_wr_start;
	qpx->wr_complete = sr_wr_complete;
	qpx->wr_abort = sr_wr_abort;
}

static struct ibv_qp *sr_create_qp_ex(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct usr_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	uint64_t ops = 0;
	struct sr_qp *qp;
	int ret;

	if (attr->comp_mask & ~(uint64_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (ops & ~sr_send_ops(attr->qp_type)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		sr_set_send_ops(&qp->vqp.qp_ex, ops);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return sr_qp_map(qp, context->cmd_fd, &resp.drv);
}

static int sr_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct sr_qp *qp = to_sr_qp(ibqp);
	int ret, kret = 0;

	if (qp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = softrdma_qp_post_recv(qp->rings, wr, bad_wr);
	if (ret && *bad_wr == wr)
		return ret;
	/*
	 * Receives wait for packets; only a QP in error needs telling (the
	 * kernel flags the ring when it moved the QP there on its own).
	 */
	if (qp->state == IBV_QPS_ERR || softrdma_qp_rq_need_wakeup(qp->rings))
		kret = sr_kick(ibqp, false);
	return ret ? ret : kret;
}

static void sr_free_context(struct ibv_context *ibctx)
{
	struct sr_context *ctx = container_of(ibctx, struct sr_context,
					      vctx.context);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops sr_ctx_ops = {
	.query_device_ex = sr_query_device_ex,
	.query_port = sr_query_port,
	.alloc_pd = sr_alloc_pd,
	.dealloc_pd = sr_dealloc_pd,
	.reg_mr = sr_reg_mr,
	.dereg_mr = sr_dereg_mr,
	.alloc_mw = sr_alloc_mw,
	.dealloc_mw = sr_dealloc_mw,
	.bind_mw = sr_bind_mw,
	.create_cq = sr_create_cq,
	.create_cq_ex = sr_create_cq_ex,
	.destroy_cq = sr_destroy_cq,
	.poll_cq = sr_poll_cq,
	.req_notify_cq = sr_req_notify_cq,
	.create_qp = sr_create_qp,
	.create_qp_ex = sr_create_qp_ex,
	.destroy_qp = sr_destroy_qp,
	.modify_qp = sr_modify_qp,
	.query_qp = sr_query_qp,
	.post_send = sr_post_send,
	.post_recv = sr_post_recv,
	.create_srq = sr_create_srq,
	.modify_srq = sr_modify_srq,
	.query_srq = sr_query_srq,
	.destroy_srq = sr_destroy_srq,
	.post_srq_recv = sr_post_srq_recv,
	.free_context = sr_free_context,
};

static struct verbs_context *sr_alloc_context(struct ibv_device *ibdev,
					      int cmd_fd, void *private_data)
{
	struct usr_get_context_resp resp = {};
	struct ibv_get_context cmd;
	struct sr_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp)))
		goto err;
	if (resp.drv.abi_version != SOFTRDMA_UVERBS_ABI_VERSION ||
	    resp.drv.ring_hdr_size != SOFTRDMA_RING_HDR_SIZE ||
	    resp.drv.cqe_size != SOFTRDMA_CQE_SIZE) {
		fprintf(stderr,
			"softrdma: kernel ABI %u (ring header %u, CQE %u) does not match this provider's %u (%u, %u)\n",
			resp.drv.abi_version, resp.drv.ring_hdr_size, resp.drv.cqe_size,
			SOFTRDMA_UVERBS_ABI_VERSION, SOFTRDMA_RING_HDR_SIZE,
			SOFTRDMA_CQE_SIZE);
		errno = EPROTO;
		goto err;
	}
	ctx->transport = resp.drv.transport;
	verbs_set_ops(&ctx->vctx, &sr_ctx_ops);
	return &ctx->vctx;

err:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	return NULL;
}

/* Ours are the devices that carry our sysfs attribute, whatever their name. */
static bool sr_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[16];

	if (ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev,
				      SOFTRDMA_SYSFS_ABI_ATTR) <= 0)
		return false;
	return strtoul(buf, NULL, 10) == SOFTRDMA_UVERBS_ABI_VERSION;
}

static struct verbs_device *sr_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct sr_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->vdev : NULL;
}

static void sr_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct sr_device, vdev));
}

/*
 * No table entry matches (softrdma has no driver id, and users name devices
 * freely): sr_match_device() decides. libibverbs walks the table of every
 * provider, so it must exist and end with its sentinel.
 */
static const struct verbs_match_ent sr_match_table[] = {
	{},
};

static const struct verbs_device_ops sr_dev_ops = {
	.name = "softrdma",
	.match_table = sr_match_table,
	.match_min_abi_version = SOFTRDMA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SOFTRDMA_UVERBS_ABI_VERSION,
	.match_device = sr_match_device,
	.alloc_device = sr_alloc_device,
	.uninit_device = sr_uninit_device,
	.alloc_context = sr_alloc_context,
};
PROVIDER_DRIVER(softrdma, sr_dev_ops);
