// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma provider: the C shim over rdma-core's private provider ABI,
 * which C++ cannot include. It holds only glue: the verbs objects as
 * libibverbs lays them out, one helper that creates an object in the
 * kernel and maps its rings, and the tables of entry points. The data
 * path (rings, WQEs, posting, the kick, polling) is the C++ core's
 * (core/), reached through core/softrdma_core.h, whose error convention
 * (0 or a positive errno; NULL and errno) the shim passes on unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#include "softrdma-abi.h"
#include "softrdma-abi-check.h"
#include "core/softrdma_core.h"
#include "rdma_core_compat.h"

/* The uverbs responses followed by ours, as the kernel writes them. */
#define SR_RESP(name, ibv, drv_type)					\
	struct name {							\
		struct ibv ibv_resp;					\
		struct drv_type drv;					\
	};								\
	static_assert(sizeof(struct name) == sizeof(struct ibv) +	\
		      sizeof(struct drv_type), "no padding in " #name)

SR_RESP(usr_get_context_resp, ib_uverbs_get_context_resp,
	softrdma_alloc_ucontext_resp);
SR_RESP(usr_create_cq_resp, ib_uverbs_create_cq_resp, softrdma_create_cq_resp);
SR_RESP(usr_create_cq_ex_resp, ib_uverbs_ex_create_cq_resp,
	softrdma_create_cq_resp);
SR_RESP(usr_create_qp_resp, ib_uverbs_create_qp_resp, softrdma_create_qp_resp);
SR_RESP(usr_create_qp_ex_resp, ib_uverbs_ex_create_qp_resp,
	softrdma_create_qp_resp);
SR_RESP(usr_create_srq_resp, ib_uverbs_create_srq_resp,
	softrdma_create_srq_resp);
SR_RESP(usr_create_ah_resp, ib_uverbs_create_ah_resp, softrdma_create_ah_resp);

struct sr_device {
	struct verbs_device vdev;
};

struct sr_context {
	struct verbs_context vctx;
	uint32_t transport;
	uint32_t ece_caps;	/* SOFTRDMA_ECE_*; 0 from an older module */
};

struct sr_cq {
	struct verbs_cq vcq;
	struct softrdma_cq *core;
};

/*
 * ECE (ibv_set_ece, ibv_query_ece; librdmacm calls them): options set
 * wait in ece_pending for the next modify_qp, which gives them to the
 * kernel; ece_accepted is what the kernel answered.
 */
struct sr_qp {
	struct verbs_qp vqp;
	struct softrdma_qp *core;
	uint32_t ece_pending;
	uint32_t ece_accepted;
	bool ece_has_pending;
	bool ece_set;
};

struct sr_srq {
	struct verbs_srq vsrq;
	struct softrdma_srq *core;
};

/* An address handle and the number UD WQEs name it by. */
struct sr_ah {
	struct ibv_ah ibah;
	uint32_t ah_num;
};

static struct sr_qp *to_sr_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sr_qp, vqp.qp);
}

static struct sr_context *to_sr_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct sr_context, vctx.context);
}

static struct sr_cq *to_sr_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sr_cq, vcq.cq);
}

static struct softrdma_qp *to_core_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sr_qp, vqp.qp)->core;
}

static struct softrdma_srq *to_core_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct sr_srq, vsrq.srq)->core;
}

/*
 * How to make one kind of object: its size, the ibv_cmd_* call that makes
 * it in the kernel and, for an object with rings, the core's call that
 * maps them and the command that destroys the kernel's object again if
 * that fails. Each call gets the object and the verb's arguments, and
 * returns 0 or an errno.
 */
struct sr_create_ops {
	size_t size;
	int (*cmd)(void *obj, void *args);
	int (*map)(void *obj, void *args);
	int (*destroy)(void *obj);
};

/* Allocate, create and map an object, or unwind: NULL with errno. */
static void *sr_create(const struct sr_create_ops *ops, void *args)
{
	void *obj = calloc(1, ops->size);
	int ret;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ops->cmd(obj, args);
	if (ret)
		goto err_free;
	if (ops->map) {
		ret = ops->map(obj, args);
		if (ret)
			goto err_destroy;
	}
	return obj;

err_destroy:
	ops->destroy(obj);
err_free:
	free(obj);
	errno = ret;
	return NULL;
}

/* The core's open calls: NULL with errno on failure. */
static int sr_opened(const void *core)
{
	return core ? 0 : errno;
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

static int sr_alloc_pd_cmd(void *obj, void *args)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;

	return ibv_cmd_alloc_pd(args, obj, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static const struct sr_create_ops sr_pd_ops = {
	.size = sizeof(struct ibv_pd),
	.cmd = sr_alloc_pd_cmd,
};

static struct ibv_pd *sr_alloc_pd(struct ibv_context *context)
{
	return sr_create(&sr_pd_ops, context);
}

static int sr_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

struct sr_reg_mr_args {
	struct ibv_pd *pd;
	void *addr;
	size_t length;
	uint64_t hca_va;
	int access;
};

static int sr_reg_mr_cmd(void *obj, void *args)
{
	struct sr_reg_mr_args *a = args;
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;

	return ibv_cmd_reg_mr(a->pd, a->addr, a->length, a->hca_va, a->access,
			      obj, &cmd, sizeof(cmd), &resp, sizeof(resp));
}

static const struct sr_create_ops sr_mr_ops = {
	.size = sizeof(struct verbs_mr),
	.cmd = sr_reg_mr_cmd,
};

static struct ibv_mr *sr_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t hca_va, int access)
{
	struct sr_reg_mr_args a = {
		.pd = pd, .addr = addr, .length = length, .hca_va = hca_va,
		.access = access,
	};
	struct verbs_mr *vmr = sr_create(&sr_mr_ops, &a);

	return vmr ? &vmr->ibv_mr : NULL;
}

/* ibv_rereg_mr: the kernel answers with the keys, new or kept. */
static int sr_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		       void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static int sr_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

struct sr_alloc_mw_args {
	struct ibv_pd *pd;
	enum ibv_mw_type type;
};

static int sr_alloc_mw_cmd(void *obj, void *args)
{
	struct sr_alloc_mw_args *a = args;
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;

	return ibv_cmd_alloc_mw(a->pd, a->type, obj, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static const struct sr_create_ops sr_mw_ops = {
	.size = sizeof(struct ibv_mw),
	.cmd = sr_alloc_mw_cmd,
};

static struct ibv_mw *sr_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct sr_alloc_mw_args a = { .pd = pd, .type = type };

	return sr_create(&sr_mw_ops, &a);
}

static int sr_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

/* ibv_bind_mw (type 1 windows): the core posts the bind. */
static int sr_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		      struct ibv_mw_bind *mw_bind)
{
	if (!to_core_qp(ibqp))
		return EINVAL;	/* an XRC TGT QP has no send queue */
	return softrdma_qp_bind_mw(to_core_qp(ibqp), mw, mw_bind);
}

/*
 * A CQ, from create_cq or create_cq_ex (attr set): the command writes the
 * response, whose driver part says where the ring is.
 */
struct sr_create_cq_args {
	struct ibv_context *context;
	int cqe;
	struct ibv_comp_channel *channel;
	int comp_vector;
	struct ibv_cq_init_attr_ex *attr;
	struct softrdma_create_cq_resp drv;
};

static int sr_create_cq_cmd(void *obj, void *args)
{
	struct sr_create_cq_args *a = args;
	struct sr_cq *cq = obj;
	struct usr_create_cq_resp resp = {};
	struct ibv_create_cq cmd;
	int ret;

	ret = ibv_cmd_create_cq(a->context, a->cqe, a->channel, a->comp_vector,
				&cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	a->drv = resp.drv;
	return ret;
}

static int sr_create_cq_ex_cmd(void *obj, void *args)
{
	struct sr_create_cq_args *a = args;
	struct sr_cq *cq = obj;
	struct usr_create_cq_ex_resp resp = {};
	struct ibv_create_cq_ex cmd = {};
	int ret;

	ret = sr_cmd_create_cq_ex(a->context, a->attr, &cq->vcq, &cmd,
				  sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	a->drv = resp.drv;
	return ret;
}

static int sr_cq_map(void *obj, void *args)
{
	struct sr_create_cq_args *a = args;
	struct sr_cq *cq = obj;

	cq->core = softrdma_cq_open(a->context->cmd_fd, &a->drv);
	return sr_opened(cq->core);
}

static int sr_cq_destroy_cmd(void *obj)
{
	return ibv_cmd_destroy_cq(&((struct sr_cq *)obj)->vcq.cq);
}

static const struct sr_create_ops sr_cq_ops = {
	.size = sizeof(struct sr_cq),
	.cmd = sr_create_cq_cmd,
	.map = sr_cq_map,
	.destroy = sr_cq_destroy_cmd,
};

static const struct sr_create_ops sr_cq_ex_ops = {
	.size = sizeof(struct sr_cq),
	.cmd = sr_create_cq_ex_cmd,
	.map = sr_cq_map,
	.destroy = sr_cq_destroy_cmd,
};

static struct ibv_cq *sr_create_cq(struct ibv_context *context, int cqe,
				   struct ibv_comp_channel *channel,
				   int comp_vector)
{
	struct sr_create_cq_args a = {
		.context = context, .cqe = cqe, .channel = channel,
		.comp_vector = comp_vector,
	};
	struct sr_cq *cq = sr_create(&sr_cq_ops, &a);

	return cq ? &cq->vcq.cq : NULL;
}

/* The shim's half of the extended CQ: the core's poll finds its CQ. */
struct softrdma_cq *softrdma_cqx_core(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct sr_cq, vcq.cq_ex)->core;
}

static struct ibv_cq_ex *sr_create_cq_ex(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr)
{
	struct sr_create_cq_args a = { .context = context, .attr = attr };
	struct sr_cq *cq;
	int ret;

	ret = softrdma_cq_ex_check(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	cq = sr_create(&sr_cq_ex_ops, &a);
	if (!cq)
		return NULL;
	softrdma_cq_ex_init(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}

static int sr_destroy_cq(struct ibv_cq *ibcq)
{
	struct sr_cq *cq = to_sr_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	softrdma_cq_close(cq->core);
	free(cq);
	return 0;
}

static int sr_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	return softrdma_cq_poll(to_sr_cq(ibcq)->core, num_entries, wc);
}

static int sr_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	if (softrdma_cq_arm(to_sr_cq(ibcq)->core, solicited_only))
		return 0;
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/* A QP, from create_qp or create_qp_ex (attr_ex set). */
struct sr_create_qp_args {
	struct ibv_pd *pd;
	struct ibv_qp_init_attr *attr;
	struct ibv_context *context;
	struct ibv_qp_init_attr_ex *attr_ex;
	struct softrdma_create_qp_resp drv;
};

static int sr_create_qp_cmd(void *obj, void *args)
{
	struct sr_create_qp_args *a = args;
	struct sr_qp *qp = obj;
	struct usr_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	int ret;

	ret = ibv_cmd_create_qp(a->pd, &qp->vqp.qp, a->attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	a->drv = resp.drv;
	return ret;
}

static int sr_create_qp_ex_cmd(void *obj, void *args)
{
	struct sr_create_qp_args *a = args;
	struct sr_qp *qp = obj;
	struct usr_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct usr_create_qp_ex_resp resp2 = {};
	struct ibv_create_qp_ex cmd2 = {};
	int ret;

	if (!(a->attr_ex->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS)) {
		ret = ibv_cmd_create_qp_ex(a->context, &qp->vqp, a->attr_ex,
					   &cmd, sizeof(cmd), &resp.ibv_resp,
					   sizeof(resp));
		a->drv = resp.drv;
		return ret;
	}
	/* Creation flags go by the extended command only. */
	ret = sr_cmd_create_qp_ex2(a->context, &qp->vqp, a->attr_ex, &cmd2,
				   sizeof(cmd2), &resp2.ibv_resp,
				   sizeof(resp2));
	a->drv = resp2.drv;
	return ret;
}

static int sr_qp_map(void *obj, void *args)
{
	struct sr_create_qp_args *a = args;
	struct sr_qp *qp = obj;

	qp->core = softrdma_qp_open(&qp->vqp.qp, &a->drv);
	return sr_opened(qp->core);
}

static int sr_qp_destroy_cmd(void *obj)
{
	return ibv_cmd_destroy_qp(&((struct sr_qp *)obj)->vqp.qp);
}

static const struct sr_create_ops sr_qp_ops = {
	.size = sizeof(struct sr_qp),
	.cmd = sr_create_qp_cmd,
	.map = sr_qp_map,
	.destroy = sr_qp_destroy_cmd,
};

static const struct sr_create_ops sr_qp_ex_ops = {
	.size = sizeof(struct sr_qp),
	.cmd = sr_create_qp_ex_cmd,
	.map = sr_qp_map,
	.destroy = sr_qp_destroy_cmd,
};

/*
 * An XRC TGT QP (IBV_QPT_XRC_RECV) has no queues to post to: the kernel
 * makes it for its XRC domain, with nothing to map; its core is NULL.
 */
static const struct sr_create_ops sr_qp_tgt_ops = {
	.size = sizeof(struct sr_qp),
	.cmd = sr_create_qp_ex_cmd,
};

static bool sr_iwarp(struct ibv_context *context)
{
	return context->device->transport_type == IBV_TRANSPORT_IWARP;
}

static struct ibv_qp *sr_create_qp(struct ibv_pd *pd,
				   struct ibv_qp_init_attr *attr)
{
	struct sr_create_qp_args a = { .pd = pd, .attr = attr };
	struct sr_qp *qp;
	int ret;

	ret = softrdma_qp_type_check(attr->qp_type, sr_iwarp(pd->context));
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = sr_create(&sr_qp_ops, &a);
	return qp ? &qp->vqp.qp : NULL;
}

/*
 * The QP's completions not yet polled go from its CQs once the kernel
 * destroyed or reset it, as mlx5's provider does: a consumer that tears a
 * connection down frees what its work requests' wr_ids point to
 * (libfabric's ofi_rxm reposts a receive buffer to its endpoint when it
 * polls the buffer's completion). The kernel writes no completion for the
 * QP after either, so nothing comes after the purge.
 */
static void sr_qp_purge_cqs(struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			    uint32_t qp_num)
{
	if (send_cq)
		softrdma_cq_purge(to_sr_cq(send_cq)->core, qp_num);
	if (recv_cq && recv_cq != send_cq)
		softrdma_cq_purge(to_sr_cq(recv_cq)->core, qp_num);
}

static int sr_destroy_qp(struct ibv_qp *ibqp)
{
	struct sr_qp *qp = container_of(ibqp, struct sr_qp, vqp.qp);
	struct ibv_cq *send_cq = ibqp->send_cq, *recv_cq = ibqp->recv_cq;
	uint32_t qp_num = ibqp->qp_num;
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	sr_qp_purge_cqs(send_cq, recv_cq, qp_num);
	if (qp->core)
		softrdma_qp_close(qp->core);
	free(qp);
	return 0;
}

/* A modify_qp command and response with ours after uverbs' (ECE). */
struct usr_modify_qp_cmd {
	struct ibv_modify_qp_ex ibv_cmd;
	struct softrdma_modify_qp_cmd drv;
};
static_assert(sizeof(struct usr_modify_qp_cmd) ==
	      sizeof(struct ibv_modify_qp_ex) +
	      sizeof(struct softrdma_modify_qp_cmd),
	      "no padding in usr_modify_qp_cmd");
SR_RESP(usr_modify_qp_resp, ib_uverbs_ex_modify_qp_resp,
	softrdma_modify_qp_resp);

/*
 * Options set wait for a modify that keeps the QP going: one to RESET or
 * ERR would have the kernel forget or refuse them.
 */
static bool sr_modify_takes_ece(const struct sr_qp *qp,
				const struct ibv_qp_attr *attr, int attr_mask)
{
	if (!qp->ece_has_pending)
		return false;
	return !(attr_mask & IBV_QP_STATE) ||
	       (attr->qp_state != IBV_QPS_RESET &&
		attr->qp_state != IBV_QPS_ERR);
}

/* The modify, with the options set since the last one. */
static int sr_modify_qp_ece(struct sr_qp *qp, struct ibv_qp_attr *attr,
			    int attr_mask)
{
	struct usr_modify_qp_cmd cmd = {};
	struct usr_modify_qp_resp resp = {};
	int ret;

	cmd.drv.comp_mask = SOFTRDMA_MODIFY_QP_ECE;
	cmd.drv.ece_options = qp->ece_pending;
	ret = ibv_cmd_modify_qp_ex(&qp->vqp.qp, attr, attr_mask, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		return ret;
	qp->ece_accepted = resp.drv.ece_options;
	qp->ece_set = true;
	qp->ece_has_pending = false;
	return 0;
}

static int sr_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			int attr_mask)
{
	struct sr_qp *qp = to_sr_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	if (sr_modify_takes_ece(qp, attr, attr_mask))
		ret = sr_modify_qp_ece(qp, attr, attr_mask);
	else
		ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd,
					sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE)) {
		if (to_core_qp(ibqp))
			softrdma_qp_set_state(to_core_qp(ibqp), attr->qp_state);
		if (attr->qp_state == IBV_QPS_RESET) {
			/* The kernel's QP runs with no options again. */
			qp->ece_set = false;
			qp->ece_accepted = 0;
			sr_qp_purge_cqs(ibqp->send_cq, ibqp->recv_cq, ibqp->qp_num);
		}
	}
	return ret;
}

/*
 * ibv_query_ece: our vendor id and, before any ibv_set_ece, what the
 * device can agree on; after one, the options the QP takes (set, not yet
 * given to the kernel) or took. A module without ECE (or softiwarp,
 * whose connection manager carries none) has nothing to say.
 */
static int sr_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	struct sr_context *ctx = to_sr_ctx(ibqp->context);
	struct sr_qp *qp = to_sr_qp(ibqp);

	if (!ctx->ece_caps)
		return EOPNOTSUPP;
	ece->vendor_id = SOFTRDMA_ECE_VENDOR_ID;
	ece->comp_mask = 0;
	if (qp->ece_has_pending)
		ece->options = qp->ece_pending;
	else if (qp->ece_set)
		ece->options = qp->ece_accepted;
	else
		ece->options = ctx->ece_caps;
	return 0;
}

/*
 * ibv_set_ece: the options the peer asked for (or 0: go-back-N), for the
 * next modify_qp; ours only, and only those the device has.
 */
static int sr_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	struct sr_context *ctx = to_sr_ctx(ibqp->context);
	struct sr_qp *qp = to_sr_qp(ibqp);

	if (ece->comp_mask)
		return EINVAL;
	if (!ctx->ece_caps)
		return EOPNOTSUPP;
	if (ece->vendor_id != SOFTRDMA_ECE_VENDOR_ID)
		return EINVAL;
	qp->ece_pending = ece->options & ctx->ece_caps;
	qp->ece_has_pending = true;
	return 0;
}

static int sr_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		       int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int sr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	/* An XRC TGT QP has no send queue. */
	if (!to_core_qp(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	return softrdma_qp_post_send(to_core_qp(ibqp), wr, bad_wr);
}

static int sr_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	/* Nor a receive queue: its XRC SRQs take the receives. */
	if (!to_core_qp(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	return softrdma_qp_post_recv(to_core_qp(ibqp), wr, bad_wr);
}

/* ibv_open_qp: another handle on an XRC TGT QP of an XRC domain. */
struct sr_open_qp_args {
	struct ibv_context *context;
	struct ibv_qp_open_attr *attr;
};

static int sr_open_qp_cmd(void *obj, void *args)
{
	struct sr_open_qp_args *a = args;
	struct sr_qp *qp = obj;
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};

	return ibv_cmd_open_qp(a->context, &qp->vqp, sizeof(qp->vqp), a->attr,
			       &cmd, sizeof(cmd), &resp, sizeof(resp));
}

static const struct sr_create_ops sr_open_qp_ops = {
	.size = sizeof(struct sr_qp),
	.cmd = sr_open_qp_cmd,
};

static struct ibv_qp *sr_open_qp(struct ibv_context *context,
				 struct ibv_qp_open_attr *attr)
{
	struct sr_open_qp_args a = { .context = context, .attr = attr };
	struct sr_qp *qp = sr_create(&sr_open_qp_ops, &a);

	return qp ? &qp->vqp.qp : NULL;
}

/* XRC domains: the kernel shares one per file and device. */
struct sr_open_xrcd_args {
	struct ibv_context *context;
	struct ibv_xrcd_init_attr *attr;
};

static int sr_open_xrcd_cmd(void *obj, void *args)
{
	struct sr_open_xrcd_args *a = args;
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};

	return ibv_cmd_open_xrcd(a->context, obj, sizeof(struct verbs_xrcd),
				 a->attr, &cmd, sizeof(cmd), &resp,
				 sizeof(resp));
}

static const struct sr_create_ops sr_xrcd_ops = {
	.size = sizeof(struct verbs_xrcd),
	.cmd = sr_open_xrcd_cmd,
};

static struct ibv_xrcd *sr_open_xrcd(struct ibv_context *context,
				     struct ibv_xrcd_init_attr *attr)
{
	struct sr_open_xrcd_args a = { .context = context, .attr = attr };
	struct verbs_xrcd *xrcd = sr_create(&sr_xrcd_ops, &a);

	return xrcd ? &xrcd->xrcd : NULL;
}

static int sr_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}

struct sr_create_srq_args {
	struct ibv_pd *pd;
	struct ibv_srq_init_attr *attr;
	struct softrdma_create_srq_resp drv;
};

static int sr_create_srq_cmd(void *obj, void *args)
{
	struct sr_create_srq_args *a = args;
	struct sr_srq *srq = obj;
	struct usr_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	int ret;

	ret = ibv_cmd_create_srq(a->pd, &srq->vsrq.srq, a->attr, &cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	a->drv = resp.drv;
	return ret;
}

static int sr_srq_map(void *obj, void *args)
{
	struct sr_create_srq_args *a = args;
	struct sr_srq *srq = obj;

	srq->core = softrdma_srq_open(a->pd->context->cmd_fd, &a->drv);
	return sr_opened(srq->core);
}

static int sr_srq_destroy_cmd(void *obj)
{
	return ibv_cmd_destroy_srq(&((struct sr_srq *)obj)->vsrq.srq);
}

static const struct sr_create_ops sr_srq_ops = {
	.size = sizeof(struct sr_srq),
	.cmd = sr_create_srq_cmd,
	.map = sr_srq_map,
	.destroy = sr_srq_destroy_cmd,
};

static struct ibv_srq *sr_create_srq(struct ibv_pd *pd,
				     struct ibv_srq_init_attr *attr)
{
	struct sr_create_srq_args a = { .pd = pd, .attr = attr };
	struct sr_srq *srq = sr_create(&sr_srq_ops, &a);

	return srq ? &srq->vsrq.srq : NULL;
}

/* ibv_create_srq_ex: an XRC SRQ (or a basic one); the same ring. */
struct sr_create_srq_ex_args {
	struct ibv_context *context;
	struct ibv_srq_init_attr_ex *attr;
	struct softrdma_create_srq_resp drv;
};

static int sr_create_srq_ex_cmd(void *obj, void *args)
{
	struct sr_create_srq_ex_args *a = args;
	struct sr_srq *srq = obj;
	struct usr_create_srq_resp resp = {};
	struct ibv_create_xsrq cmd = {};
	int ret;

	ret = ibv_cmd_create_srq_ex(a->context, &srq->vsrq, a->attr, &cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	a->drv = resp.drv;
	return ret;
}

static int sr_srq_ex_map(void *obj, void *args)
{
	struct sr_create_srq_ex_args *a = args;
	struct sr_srq *srq = obj;

	srq->core = softrdma_srq_open(a->context->cmd_fd, &a->drv);
	return sr_opened(srq->core);
}

static const struct sr_create_ops sr_srq_ex_ops = {
	.size = sizeof(struct sr_srq),
	.cmd = sr_create_srq_ex_cmd,
	.map = sr_srq_ex_map,
	.destroy = sr_srq_destroy_cmd,
};

static struct ibv_srq *sr_create_srq_ex(struct ibv_context *context,
					struct ibv_srq_init_attr_ex *attr)
{
	struct sr_create_srq_ex_args a = { .context = context, .attr = attr };
	struct sr_srq *srq = sr_create(&sr_srq_ex_ops, &a);

	return srq ? &srq->vsrq.srq : NULL;
}

/* The XRC SRQ number peers name it by: the kernel's, from its creation. */
static int sr_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = container_of(ibsrq, struct verbs_srq, srq)->srq_num;
	return 0;
}

/* A resize's command: ours follows uverbs', and says where to answer. */
struct usr_modify_srq_cmd {
	struct ibv_modify_srq ibv_cmd;
	struct softrdma_modify_srq_cmd drv;
};
static_assert(sizeof(struct usr_modify_srq_cmd) ==
	      sizeof(struct ibv_modify_srq) +
	      sizeof(struct softrdma_modify_srq_cmd),
	      "no padding in usr_modify_srq_cmd");

struct sr_modify_srq_args {
	struct ibv_srq *srq;
	struct ibv_srq_attr *attr;
	int attr_mask;
};

static int sr_modify_srq_cmd(void *arg, struct softrdma_create_srq_resp *resp)
{
	struct sr_modify_srq_args *a = arg;
	struct usr_modify_srq_cmd cmd = {};

	cmd.drv.resp_addr = (uintptr_t)resp;
	return ibv_cmd_modify_srq(a->srq, a->attr, a->attr_mask, &cmd.ibv_cmd,
				  sizeof(cmd));
}

static int sr_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			 int attr_mask)
{
	struct sr_modify_srq_args a = {
		.srq = ibsrq, .attr = attr, .attr_mask = attr_mask,
	};
	struct ibv_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return softrdma_srq_resize(to_core_srq(ibsrq),
					   ibsrq->context->cmd_fd,
					   sr_modify_srq_cmd, &a);
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int sr_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int sr_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sr_srq *srq = container_of(ibsrq, struct sr_srq, vsrq.srq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	softrdma_srq_close(srq->core);
	free(srq);
	return 0;
}

static int sr_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	return softrdma_srq_post_recv(to_core_srq(ibsrq), wr, bad_wr);
}

struct sr_create_ah_args {
	struct ibv_pd *pd;
	struct ibv_ah_attr *attr;
};

static int sr_create_ah_cmd(void *obj, void *args)
{
	struct sr_create_ah_args *a = args;
	struct sr_ah *ah = obj;
	struct usr_create_ah_resp resp = {};
	int ret;

	ret = ibv_cmd_create_ah(a->pd, &ah->ibah, a->attr, &resp.ibv_resp,
				sizeof(resp));
	ah->ah_num = resp.drv.ah_num;
	return ret;
}

static const struct sr_create_ops sr_ah_ops = {
	.size = sizeof(struct sr_ah),
	.cmd = sr_create_ah_cmd,
};

static struct ibv_ah *sr_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct sr_create_ah_args a = { .pd = pd, .attr = attr };
	struct sr_ah *ah = sr_create(&sr_ah_ops, &a);

	return ah ? &ah->ibah : NULL;
}

static int sr_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (!ret)
		free(container_of(ibah, struct sr_ah, ibah));
	return ret;
}

/* The shim's half of a UD post: the core's WQEs name an AH by its number. */
uint32_t softrdma_ah_num(const struct ibv_ah *ibah)
{
	return container_of(ibah, const struct sr_ah, ibah)->ah_num;
}

/* The shim's half of the ibv_wr_* API: the core's builders find their QP. */
struct softrdma_qp *softrdma_qpx_core(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct sr_qp, vqp.qp_ex)->core;
}

static struct ibv_qp *sr_create_qp_ex(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct sr_create_qp_args a = { .context = context, .attr_ex = attr };
	struct sr_qp *qp;
	int ret;

	ret = softrdma_qp_type_check(attr->qp_type, sr_iwarp(context));
	if (!ret)
		ret = softrdma_qp_ex_check(attr, sr_iwarp(context));
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = sr_create(attr->qp_type == IBV_QPT_XRC_RECV ? &sr_qp_tgt_ops :
						       &sr_qp_ex_ops, &a);
	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		softrdma_qp_ex_init(&qp->vqp.qp_ex, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;
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
	.rereg_mr = sr_rereg_mr,
	.dereg_mr = sr_dereg_mr,
	/* ODP prefetch: the kernel faults the ranges in (softroce). */
	.advise_mr = ibv_cmd_advise_mr,
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
	.query_ece = sr_query_ece,
	.set_ece = sr_set_ece,
	.post_send = sr_post_send,
	.post_recv = sr_post_recv,
	.create_srq = sr_create_srq,
	.create_srq_ex = sr_create_srq_ex,
	.get_srq_num = sr_get_srq_num,
	.modify_srq = sr_modify_srq,
	.query_srq = sr_query_srq,
	.destroy_srq = sr_destroy_srq,
	.post_srq_recv = sr_post_srq_recv,
	.create_ah = sr_create_ah,
	.destroy_ah = sr_destroy_ah,
	/* iWARP devices answer EOPNOTSUPP: no XRC there. */
	.open_xrcd = sr_open_xrcd,
	.close_xrcd = sr_close_xrcd,
	.open_qp = sr_open_qp,
	/* The kernel keeps the groups; iWARP devices answer EOPNOTSUPP. */
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
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
	if (sr_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.ibv_resp,
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
	/* 0 (resp zeroed) where the kernel wrote only the older fields. */
	ctx->ece_caps = resp.drv.ece_caps;
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
