/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The transport descriptor: all the core knows of RoCEv2 (kernel/roce) and
 * iWARP (kernel/iwarp). Each transport defines one const descriptor; the
 * core keeps a table of them (main.c), a device and each of its QPs point
 * at theirs, and the core reaches a transport through nothing else.
 */
#ifndef SOFTRDMA_TRANSPORT_H
#define SOFTRDMA_TRANSPORT_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct softrdma_ah;
struct softrdma_dev;
struct softrdma_qp;

struct softrdma_transport {
	const char *name;		/* rdma link type, e.g. "softroce" */
	u32 abi_id;			/* enum softrdma_transport_id */
	u8 node_type;			/* RDMA_NODE_IB_CA or RDMA_NODE_RNIC */
	/* Its verbs and port setup, set on the device after the core's. */
	const struct ib_device_ops *ops;
	/* Largest bytes of headers around a packet's payload (path MTU). */
	unsigned int overhead;
	/* Limits and port attributes that differ between the transports. */
	u32 gid_tbl_len;
	u32 port_cap_flags;
	bool ip_gids;
	/*
	 * QP types it takes beyond RC, which all do: BIT(IB_QPT_*); with
	 * IB_QPT_XRC_TGT, XRC SRQs too (its ops then have the XRC domains).
	 */
	u32 qp_types;
	/* IB_QP_CREATE_* flags its UD QPs take (none for other types). */
	u32 ud_create_flags;
	/*
	 * What of ODP its paths take (the IB_ODP_SUPPORT_* of each QP type,
	 * as ibv_query_device_ex reports them): they wait for pages on demand
	 * (-EBUSY of softrdma_mr_get(), odp.c). Without IB_ODP_SUPPORT in
	 * general_caps, ODP MRs are refused.
	 */
	struct ib_odp_caps odp_caps;
	/*
	 * SOFTRDMA_ECE_* its QPs can agree on with their peers through the
	 * connection manager (ECE), told to processes in their ucontext;
	 * 0: none (iw_cm carries no ECE).
	 */
	u32 ece_caps;

	/* Module load and unload; in table order, unwound in reverse. */
	int (*init)(void);
	void (*exit)(void);
	/*
	 * Per device: init before registration, exit when the core frees
	 * the device (also after a failed or skipped init: it must cope).
	 */
	int (*dev_init)(struct softrdma_dev *sdev);
	void (*dev_exit)(struct softrdma_dev *sdev);
	/* Device attributes of its own, after the core's (may be NULL). */
	void (*query_device)(struct softrdma_dev *sdev,
			     struct ib_device_attr *attr);

	/*
	 * An address handle's route from its address vector; NULL for a
	 * transport without address handles (their verbs are its ops').
	 */
	int (*ah_init)(struct softrdma_ah *ah, const struct rdma_ah_attr *attr);

	/* QP hooks: transport state, requester and teardown. */
	int (*qp_init)(struct softrdma_qp *qp);
	/* Before destroy waits for the QP's references (may be NULL). */
	void (*qp_teardown)(struct softrdma_qp *qp);
	/* After the last reference is gone. */
	void (*qp_cleanup)(struct softrdma_qp *qp);
	/* The requester; callers hold qp->lock. */
	void (*req_run)(struct softrdma_qp *qp);
	bool (*req_pending)(struct softrdma_qp *qp);
	/*
	 * A process kicked (no lock held, may sleep): send in its
	 * context rather than wake a worker (may be NULL).
	 */
	int (*req_kick)(struct softrdma_qp *qp);
	void (*sqd_check)(struct softrdma_qp *qp);
	/*
	 * The QP leaves the working states (to RESET or ERR): drop output
	 * in progress; qp->lock held (may be NULL).
	 */
	void (*qp_stop)(struct softrdma_qp *qp);
	/* After qp_stop, with qp->lock released (may sleep; may be NULL). */
	void (*qp_stop_sync)(struct softrdma_qp *qp);
	/*
	 * A transport with its own state machine (iWARP) takes modify_qp
	 * over after the common checks; NULL for the IBTA one.
	 */
	int (*modify_qp)(struct softrdma_qp *qp, struct ib_qp_attr *attr,
			 int mask, enum ib_qp_state cur, enum ib_qp_state next);
	/*
	 * modify_qp, the IBTA states: take the attributes that can fail
	 * before anything changes (may be NULL), then, with qp->lock held
	 * and the common attributes applied, move the transport state along
	 * before the QP enters @next (may be NULL).
	 */
	int (*modify_attrs)(struct softrdma_qp *qp, struct ib_qp_attr *attr,
			    int mask);
	void (*modify_locked)(struct softrdma_qp *qp, int mask,
			      enum ib_qp_state cur, enum ib_qp_state next);
	/*
	 * modify_qp with options from the process (ibv_set_ece), before
	 * modify_attrs: the QP takes @options & the transport's current
	 * capabilities; returns those (>= 0) or -EINVAL if they differ from
	 * the QP's and the QP can no longer change them (past the move to
	 * RTR). NULL: the QP runs with none.
	 */
	int (*set_ece)(struct softrdma_qp *qp, u32 options,
		       enum ib_qp_state cur, enum ib_qp_state next);
	/*
	 * ece_caps less what a module parameter withdrew, as now (may be
	 * NULL: ece_caps).
	 */
	u32 (*ece_caps_now)(void);
};

/* The descriptors, defined in kernel/roce/roce.c and kernel/iwarp/iwarp.c. */
extern const struct softrdma_transport softrdma_roce_transport;
extern const struct softrdma_transport softrdma_iwarp_transport;

#endif /* SOFTRDMA_TRANSPORT_H */
