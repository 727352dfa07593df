/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-core's private provider API as it differs between the releases the
 * shim builds against (Debian 13's 56.1, private ABI 34; sid's 65.0, ABI
 * 65). CMakeLists.txt probes the configured tree for each change and
 * defines SOFTRDMA_RC_<change> where the newer form is there; the shim
 * calls these wrappers, never the changed functions themselves.
 */
#ifndef SOFTRDMA_RDMA_CORE_COMPAT_H
#define SOFTRDMA_RDMA_CORE_COMPAT_H

#include <infiniband/driver.h>

/* The newer form takes an array for file descriptors the kernel returns. */
static inline int sr_cmd_get_context(struct verbs_context *ctx,
				     struct ibv_get_context *cmd,
				     size_t cmd_size,
				     struct ib_uverbs_get_context_resp *resp,
				     size_t resp_size)
{
#ifdef SOFTRDMA_RC_GET_CONTEXT_FD_ARR
	return ibv_cmd_get_context(ctx, cmd, cmd_size, NULL, resp, resp_size);
#else
	return ibv_cmd_get_context(ctx, cmd, cmd_size, resp, resp_size);
#endif
}

/* The newer form takes a ring the provider allocated: the kernel does ours. */
static inline int
sr_cmd_create_cq_ex(struct ibv_context *context,
		    const struct ibv_cq_init_attr_ex *attr, struct verbs_cq *cq,
		    struct ibv_create_cq_ex *cmd, size_t cmd_size,
		    struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
		    uint32_t cmd_flags)
{
#ifdef SOFTRDMA_RC_CREATE_CQ_EX_PROV_ATTR
	return ibv_cmd_create_cq_ex(context, attr, NULL, cq, cmd, cmd_size,
				    resp, resp_size, cmd_flags);
#else
	return ibv_cmd_create_cq_ex(context, attr, cq, cmd, cmd_size, resp,
				    resp_size, cmd_flags);
#endif
}

/* The newer form takes driver attributes for the ioctl path: we have none. */
static inline int
sr_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
		     struct ibv_qp_init_attr_ex *attr,
		     struct ibv_create_qp_ex *cmd, size_t cmd_size,
		     struct ib_uverbs_ex_create_qp_resp *resp, size_t resp_size)
{
#ifdef SOFTRDMA_RC_CREATE_QP_EX2_DRIVER
	return ibv_cmd_create_qp_ex2(context, qp, attr, cmd, cmd_size, resp,
				     resp_size, NULL);
#else
	return ibv_cmd_create_qp_ex2(context, qp, attr, cmd, cmd_size, resp,
				     resp_size);
#endif
}

#endif /* SOFTRDMA_RDMA_CORE_COMPAT_H */
