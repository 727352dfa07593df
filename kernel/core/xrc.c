// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC (IBTA Vol. 1, Annex A14): XRC domains, and the device's table of XRC
 * SRQ numbers through which an XRC TGT QP finds the SRQ each request names.
 *
 * ib_core keeps what is shared: the domain's file (one domain per inode
 * per device), the TGT QPs a domain holds and the processes that opened
 * them (ibv_open_qp); a TGT QP outlives its creator while the domain holds
 * it. The driver numbers XRC SRQs and checks, for every request a TGT QP
 * takes, that the SRQ its XRCETH names is of the QP's domain; the SRQ's PD
 * then stands for the QP's own in every memory access of that request.
 */
#include "softrdma.h"

int softrdma_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct softrdma_dev *sdev = to_sdev(ibxrcd->device);

	if (atomic_inc_return(&sdev->num_xrcds) > SOFTRDMA_MAX_XRCD) {
		atomic_dec(&sdev->num_xrcds);
		return -ENOMEM;
	}
	return 0;
}

int softrdma_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibxrcd->device)->num_xrcds);
	return 0;
}

/*
 * Number a new XRC SRQ: at random (peers name it on the wire, as they name
 * QPs), into ibsrq.ext.xrc.srq_num. Return: 0, -ENOMEM or -EBUSY.
 */
int softrdma_xrc_srq_add(struct softrdma_dev *sdev, struct softrdma_srq *srq)
{
	return softrdma_xa_alloc_random(&sdev->srqs,
					&srq->ibsrq.ext.xrc.srq_num, srq,
					SOFTRDMA_SRQN_LIMIT, NULL, 0);
}

/*
 * Take an XRC SRQ's number away; once this returns, no request handler
 * uses the SRQ any more (they find it under RCU: softrdma_xrc_srq_get()).
 */
void softrdma_xrc_srq_del(struct softrdma_dev *sdev, struct softrdma_srq *srq)
{
	xa_erase_bh(&sdev->srqs, srq->ibsrq.ext.xrc.srq_num);
	synchronize_rcu();
}

/**
 * softrdma_xrc_srq_get - the XRC SRQ a request for an XRC TGT QP names
 * @qp: the XRC TGT QP; qp->lock and rcu_read_lock() held until
 *	softrdma_xrc_srq_put()
 * @srqn: the XRC SRQ number of the request's XRCETH
 *
 * An SRQ of another XRC domain than the QP's is none of the QP's.
 *
 * Return: true, with qp->xrc_srq and qp->pd set to the SRQ and its PD; false
 * (both NULL) if @srqn names no XRC SRQ of the QP's domain.
 */
bool softrdma_xrc_srq_get(struct softrdma_qp *qp, u32 srqn)
{
	struct softrdma_srq *srq = xa_load(&qp->sdev->srqs, srqn);

	if (!srq || srq->ibsrq.ext.xrc.xrcd != qp->xrcd) {
		softrdma_xrc_srq_put(qp);
		return false;
	}
	qp->xrc_srq = srq;
	qp->pd = srq->ibsrq.pd;
	return true;
}

/* The request is handled: the QP uses no SRQ and no PD until the next. */
void softrdma_xrc_srq_put(struct softrdma_qp *qp)
{
	qp->xrc_srq = NULL;
	qp->pd = NULL;
}
