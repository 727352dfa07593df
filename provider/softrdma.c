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

struct sr_cq {
	struct verbs_cq vcq;
	struct softrdma_cq_ring *ring;
};

static struct sr_cq *to_sr_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sr_cq, vcq.cq);
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
	qp->rings = softrdma_qp_rings_open(pd->context->cmd_fd, &resp.drv);
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

static int sr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	struct sr_qp *qp = to_sr_qp(ibqp);
	int state = qp->state;
	int ret, kret;

	/* Sends may be posted in RTS, SQD, SQE and ERR only. */
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = softrdma_qp_post_send(qp->rings, wr, bad_wr);
	if (ret && *bad_wr == wr)
		return ret;
	/* While the kernel polls the queue, publishing was enough. */
	kret = softrdma_qp_sq_need_wakeup(qp->rings) ? sr_kick(ibqp, true) : 0;
	return ret ? ret : kret;
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
	.create_cq = sr_create_cq,
	.destroy_cq = sr_destroy_cq,
	.poll_cq = sr_poll_cq,
	.req_notify_cq = sr_req_notify_cq,
	.create_qp = sr_create_qp,
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
