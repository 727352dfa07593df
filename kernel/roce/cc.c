// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion notification, RoCEv2 Annex A17 and DCQCN (Zhu et al.,
 * SIGCOMM 2015):
 *
 * - A QP whose peer agreed (SOFTRDMA_ECE_ECN) sends its requests
 *   ECN-capable, ECT(0); ACKs, READ answers and CNPs are not.
 * - The notification point: a packet that arrives marked CE (a queue on
 *   the way filled) is answered with a CNP to the QP that sent it, at most
 *   one per QP every SOFTRDMA_CC_CNP_INTERVAL_NS.
 * - The reaction point: a CNP to a QP that sends ECN-capable packets cuts
 *   the rate it paces its requests at by alpha/2, alpha being how often
 *   CNPs came lately; without CNPs the rate climbs back, halfway to where
 *   it was cut from at each increase event (a period of time or of bytes
 *   sent), then beyond it, additively and then faster, until the line
 *   rate ends the pacing. DCQCN's timers are computed from timestamps on
 *   the next send, not run.
 *
 * Caller holds qp->lock throughout, except for softrdma_cc_tos() (the
 * sending path, which reads what it needs once).
 */
#include <kunit/visibility.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>

#include "softrdma.h"
#include "roce.h"

/* Notification point: one CNP per QP per this many ns at most. */
#define SOFTRDMA_CC_CNP_INTERVAL_NS	(50 * NSEC_PER_USEC)
/* alpha: g = 1/256, decaying every 55 us without a CNP. */
#define SOFTRDMA_CC_G_SHIFT		8
#define SOFTRDMA_CC_ALPHA_NS		(55 * NSEC_PER_USEC)
/* One cut per 4 us at most. */
#define SOFTRDMA_CC_CUT_NS		(4 * NSEC_PER_USEC)
/* Increase events: every 300 us and every 2 MiB sent without a CNP. */
#define SOFTRDMA_CC_RAISE_NS		(300 * NSEC_PER_USEC)
#define SOFTRDMA_CC_RAISE_BYTES		(2 << 20)
/* Fast recovery for this many events, then additive, then hyper. */
#define SOFTRDMA_CC_F			5
#define SOFTRDMA_CC_AI_MBPS		5
#define SOFTRDMA_CC_HAI_MBPS		50
/* The pacer's bucket: a message's worth, or two ticks of its timer. */
#define SOFTRDMA_CC_BUCKET_MIN		(64 * 1024)

/* The CNP: a BTH, then 16 reserved bytes (A17.2.2). */
#define SOFTRDMA_CNP_LEN		(SOFTRDMA_BTH_LEN + 16)
#define SOFTRDMA_BTH_BECN		BIT(30)

/*
 * The IP header's TOS (traffic class) for a packet of @qp to @qn whose
 * BTH is @bth: the QP's, with ECT(0) in its ECN field for a request of a
 * QP that agreed on ECN. The rest keep the traffic class as given (a
 * program may set ECT itself, as with rxe); a CNP is never ECN-capable.
 */
u8 softrdma_cc_tos(struct softrdma_qp *qp, const struct softrdma_roce_net *qn,
		   const struct softrdma_bth *bth)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	u8 op = bth->opcode;
	u8 rc_op = op & ~SOFTRDMA_TRANSPORT_MASK;

	if (op == SOFTRDMA_OP_CNP)
		return qn->tclass & ~INET_ECN_MASK;
	/* Requests: RC's and XRC's (UD and UC agree on nothing). */
	if (qn != &rqp->net || !softrdma_roce_ecn(rqp) ||
	    (rc_op >= RC_READ_RESP_FIRST && rc_op <= RC_ATOMIC_ACK))
		return qn->tclass;
	return (qn->tclass & ~INET_ECN_MASK) | INET_ECN_ECT_0;
}

/* The congestion a CE mark tells of: a CNP to the sender, rate limited. */
static void softrdma_cc_send_cnp(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);
	struct softrdma_bth *bth;
	struct sk_buff *skb;
	u64 now = ktime_get_ns();

	if (rqp->cc.cnp_at &&
	    now - rqp->cc.cnp_at < SOFTRDMA_CC_CNP_INTERVAL_NS)
		return;
	skb = softrdma_roce_alloc_skb(qp, SOFTRDMA_CNP_LEN);
	if (!skb)
		return;
	rqp->cc.cnp_at = now;
	bth = (struct softrdma_bth *)skb->data;
	softrdma_bth_fill(bth, SOFTRDMA_OP_CNP, 0, qp->attrs.dest_qp_num, 0,
			  false);
	bth->qpn |= htonl(SOFTRDMA_BTH_BECN);
	memset(skb->data + SOFTRDMA_BTH_LEN, 0,
	       SOFTRDMA_CNP_LEN - SOFTRDMA_BTH_LEN);
	if (!softrdma_roce_xmit(qp, skb))
		softrdma_count(qp->sdev, SOFTRDMA_CNT_NP_CNP_SENT);
}

/**
 * softrdma_cc_rcv_ce - the notification point: a received packet's ECN field
 * @qp: the connected QP it is for (RC, XRC), qp->lock held
 * @skb: the packet, its network header still set
 *
 * A peer that marks its packets ECN-capable asks for CNPs when a queue
 * marks them CE (a softrdma peer after ECE, hardware by its settings): it
 * gets one, whatever this end agreed to send itself.
 */
void softrdma_cc_rcv_ce(struct softrdma_qp *qp, struct sk_buff *skb)
{
	u8 ds;

	if (skb->protocol == htons(ETH_P_IP))
		ds = ipv4_get_dsfield(ip_hdr(skb));
	else if (skb->protocol == htons(ETH_P_IPV6))
		ds = ipv6_get_dsfield(ipv6_hdr(skb));
	else
		return;
	if (!INET_ECN_is_ce(ds))
		return;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_NP_ECN_MARKED);
	softrdma_cc_send_cnp(qp);
}

/* Bring alpha's decay and the increase events up to @now. */
static void softrdma_dcqcn_catch_up(struct softrdma_dcqcn *d, u64 now)
{
	u32 n;

	for (n = 0; n < 64 && now - d->alpha_at >= SOFTRDMA_CC_ALPHA_NS; n++) {
		d->alpha -= d->alpha >> SOFTRDMA_CC_G_SHIFT;
		d->alpha_at += SOFTRDMA_CC_ALPHA_NS;
	}
	if (n == 64)
		d->alpha_at = now;
	/* Time's events are not owed for a QP long idle. */
	if (now - d->raise_at > 64 * SOFTRDMA_CC_RAISE_NS)
		d->raise_at = now - 64 * SOFTRDMA_CC_RAISE_NS;
	while (d->paced && (now - d->raise_at >= SOFTRDMA_CC_RAISE_NS ||
			    d->bytes >= SOFTRDMA_CC_RAISE_BYTES)) {
		u32 t, b, step = 0;

		if (d->bytes >= SOFTRDMA_CC_RAISE_BYTES) {
			d->bytes -= SOFTRDMA_CC_RAISE_BYTES;
			d->byte_events++;
		} else {
			d->raise_at += SOFTRDMA_CC_RAISE_NS;
			d->timer_events++;
		}
		t = d->timer_events;
		b = d->byte_events;
		/* Fast recovery toward target; then the target rises. */
		if (t > SOFTRDMA_CC_F && b > SOFTRDMA_CC_F)
			step = SOFTRDMA_CC_HAI_MBPS * (min(t, b) - SOFTRDMA_CC_F);
		else if (t > SOFTRDMA_CC_F || b > SOFTRDMA_CC_F)
			step = SOFTRDMA_CC_AI_MBPS;
		d->target = min_t(u32, d->target + step,
				  SOFTRDMA_DCQCN_LINE_MBPS);
		d->rate = (d->rate + d->target + 1) / 2;
		if (d->rate >= SOFTRDMA_DCQCN_LINE_MBPS)
			d->paced = false;
	}
}

/**
 * softrdma_dcqcn_cnp - the reaction point's answer to a CNP at @now
 * @d: the QP's state
 * @now: ktime_get_ns()
 *
 * Return: true if the rate was cut (not within SOFTRDMA_CC_CUT_NS of the
 * last cut).
 */
bool softrdma_dcqcn_cnp(struct softrdma_dcqcn *d, u64 now)
{
	u32 rate;

	if (!d->paced) {
		d->paced = true;
		d->rate = SOFTRDMA_DCQCN_LINE_MBPS;
		d->alpha = SOFTRDMA_DCQCN_ONE;
		d->alpha_at = now;
		d->tokens = SOFTRDMA_CC_BUCKET_MIN;
		d->tokens_at = now;
	} else {
		softrdma_dcqcn_catch_up(d, now);
		if (now - d->cut_at < SOFTRDMA_CC_CUT_NS)
			return false;
	}
	rate = d->rate;
	d->target = rate;
	rate -= (u32)(((u64)rate * d->alpha) / (2 * SOFTRDMA_DCQCN_ONE));
	d->rate = max_t(u32, rate, SOFTRDMA_DCQCN_MIN_MBPS);
	d->alpha = min_t(u32, d->alpha - (d->alpha >> SOFTRDMA_CC_G_SHIFT) +
				      (SOFTRDMA_DCQCN_ONE >> SOFTRDMA_CC_G_SHIFT),
			 SOFTRDMA_DCQCN_ONE);
	d->alpha_at = now;
	d->cut_at = now;
	d->raise_at = now;
	d->bytes = 0;
	d->timer_events = 0;
	d->byte_events = 0;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_dcqcn_cnp);

/* The pacer's bucket at the current rate: bytes. */
static s64 softrdma_dcqcn_bucket(const struct softrdma_dcqcn *d)
{
	/* Mb/s to bytes per two ticks: rate * 1e6 / 8 * 2 / HZ. */
	s64 b = (s64)d->rate * (1000000 / 4) / HZ;

	return max_t(s64, b, SOFTRDMA_CC_BUCKET_MIN);
}

/**
 * softrdma_dcqcn_may_send - may the requester send at @now?
 * @d: the QP's state
 * @now: ktime_get_ns()
 *
 * Return: true if not paced, or the bucket holds tokens.
 */
bool softrdma_dcqcn_may_send(struct softrdma_dcqcn *d, u64 now)
{
	u64 dt;

	if (likely(!d->paced))
		return true;
	softrdma_dcqcn_catch_up(d, now);
	if (!d->paced)
		return true;
	/* Mb/s is bytes per 8000 ns; a second's worth at most at once. */
	dt = min_t(u64, now - d->tokens_at, NSEC_PER_SEC);
	d->tokens = min_t(s64, d->tokens + div_u64(dt * d->rate, 8000),
			  softrdma_dcqcn_bucket(d));
	d->tokens_at = now;
	return d->tokens > 0;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_dcqcn_may_send);

/* @bytes went out: the pacer's tokens, the byte counter's events. */
void softrdma_dcqcn_sent(struct softrdma_dcqcn *d, u32 bytes)
{
	if (likely(!d->paced))
		return;
	d->tokens -= bytes;
	d->bytes += bytes;
}
EXPORT_SYMBOL_IF_KUNIT(softrdma_dcqcn_sent);

/**
 * softrdma_cc_rcv_cnp - the reaction point: a CNP came for @qp
 * @qp: the QP, qp->lock held
 *
 * Return: false if @qp sends nothing ECN-capable (the CNP is not for what
 * it sends: counted as ignored by the caller).
 */
bool softrdma_cc_rcv_cnp(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	if (softrdma_qp_is_ud(qp) || qp->ibqp.qp_type == IB_QPT_UC ||
	    (!softrdma_roce_ecn(rqp) && !(rqp->net.tclass & INET_ECN_MASK)))
		return false;
	softrdma_count(qp->sdev, SOFTRDMA_CNT_RP_CNP_HANDLED);
	softrdma_dcqcn_cnp(&rqp->cc.rp, ktime_get_ns());
	return true;
}

/* May the requester of @qp send now (qp->lock held)? */
bool softrdma_cc_may_send(struct softrdma_qp *qp)
{
	struct softrdma_dcqcn *d = &to_rqp(qp)->cc.rp;

	return likely(!d->paced) || softrdma_dcqcn_may_send(d, ktime_get_ns());
}

void softrdma_cc_sent(struct softrdma_qp *qp, u32 bytes)
{
	softrdma_dcqcn_sent(&to_rqp(qp)->cc.rp, bytes);
}

/* A QP that starts sending starts at the line rate, unpaced. */
void softrdma_cc_reset(struct softrdma_qp *qp)
{
	struct softrdma_roce_qp *rqp = to_rqp(qp);

	memset(&rqp->cc, 0, sizeof(rqp->cc));
}
