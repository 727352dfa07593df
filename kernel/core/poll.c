// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send-queue poller (module parameter poll_us: how long an idle SQ
 * stays polled; 0 turns it off).
 *
 * Without it, the requester looks at the producer index whenever an
 * acknowledgment arrives (the RoCE requester does): the provider
 * kicks only an SQ with nothing in flight. With it, an RC QP whose
 * provider made a kick (system call) also joins the poller's list and its
 * SQ ring's NEED_KICK flag is cleared (qp->polled: the requester leaves it
 * clear too): while the poller has it, the provider publishes WQEs without
 * a system call and the poller thread sends them. A QP that brings no new
 * work for poll_us microseconds leaves the list with NEED_KICK set again.
 *
 * The thread only polls a CPU it has to itself: when another task is
 * runnable where it runs (an application spinning on its CQ, as latency
 * tests do on two vCPUs), it hands every QP back to its kicks and takes
 * none for SOFTRDMA_POLL_BACKOFF, rather than take turns with that task
 * for the CPU. Where a core is free it sends what the applications post
 * without a system call each (the 8-byte message rate in loopback rose
 * 2.5-fold; Documentation/performance.rst, step 3). A QP whose last
 * message was long (SOFTRDMA_POLL_MAX_LEN) goes by kicks: that message
 * pays for its system call, and polling it cost bandwidth (step 4). UD
 * and UC QPs always go by kicks (softrdma_poll_join()).
 *
 * No kick is lost: the provider publishes its producer index, then (after
 * a full barrier) reads the flag; the poller sets the flag, then (after a
 * full barrier) reads the producer index once more before it lets go.
 */
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/wait.h>

#include "softrdma.h"

static unsigned int poll_us = 200;
module_param(poll_us, uint, 0644);
MODULE_PARM_DESC(poll_us,
		 "microseconds the kernel keeps polling an idle send queue before the provider must kick it (0: never poll)");

/* How long the thread stays away from a CPU it found busy. */
#define SOFTRDMA_POLL_BACKOFF	msecs_to_jiffies(10)
/*
 * A QP whose last message was this long or longer goes by kicks: such a
 * message pays for its system call, and the poller's spinning took 64 KiB
 * bandwidth from the application (Documentation/performance.rst, step 4).
 */
#define SOFTRDMA_POLL_MAX_LEN	4096

static LIST_HEAD(softrdma_poll_list);
static DEFINE_SPINLOCK(softrdma_poll_lock);	/* the list and qp->poll_* */
static DECLARE_WAIT_QUEUE_HEAD(softrdma_poll_wq);
static struct task_struct *softrdma_poll_task;
static unsigned long softrdma_poll_backoff;	/* jiffies: no new QPs till */

/* The provider must kick this QP's SQ from now on. Caller holds qp->lock. */
void softrdma_qp_need_kick(struct softrdma_qp *qp)
{
	softrdma_ring_set_flag(&qp->sq, SOFTRDMA_RING_NEED_KICK);
	/* Pairs with the provider's barrier between publish and flag read. */
	smp_mb();
}

/* Was the last WQE @qp's requester took a long one? Caller holds qp->lock. */
static bool softrdma_poll_long(struct softrdma_qp *qp)
{
	u32 last = qp->req.send_idx - 1;

	return qp->swqe &&
	       qp->swqe[last & (qp->sq.num_slots - 1)].len >=
	       SOFTRDMA_POLL_MAX_LEN;
}

/*
 * After a kick of @qp in RTS: start polling its SQ, unless polling is off,
 * the thread backs off, or the QP is one it leaves to its kicks: a long
 * last message (SOFTRDMA_POLL_MAX_LEN), or a QP other than RC. A UD or UC
 * send completes without an answer, and programs destroy such a QP (or
 * its AH) right after their last post: what a kick would have sent inside
 * that post must not still wait for the poller (librdmacm's mckey).
 * Caller holds qp->lock.
 */
void softrdma_poll_join(struct softrdma_qp *qp)
{
	if (!READ_ONCE(poll_us) || !softrdma_poll_task || qp->polled ||
	    qp->state != IB_QPS_RTS || qp->ibqp.qp_type != IB_QPT_RC ||
	    time_before(jiffies, READ_ONCE(softrdma_poll_backoff)) ||
	    softrdma_poll_long(qp))
		return;
	spin_lock(&softrdma_poll_lock);
	if (!qp->poll_dead) {
		WRITE_ONCE(qp->poll_last, ktime_get());
		if (list_empty(&qp->poll_node))
			list_add_tail(&qp->poll_node, &softrdma_poll_list);
		qp->polled = true;
		softrdma_ring_clear_flag(&qp->sq, SOFTRDMA_RING_NEED_KICK);
	}
	spin_unlock(&softrdma_poll_lock);
	wake_up(&softrdma_poll_wq);
}

/* Stop polling @qp (it is being destroyed). */
void softrdma_poll_del(struct softrdma_qp *qp)
{
	spin_lock_bh(&softrdma_poll_lock);
	qp->poll_dead = true;
	list_del_init(&qp->poll_node);
	spin_unlock_bh(&softrdma_poll_lock);
}

/*
 * Hand @qp back to its kicks: the provider kicks from now on, and what it
 * published before it saw that is sent here. Caller holds qp->lock.
 */
static void softrdma_poll_hand_back(struct softrdma_qp *qp)
{
	qp->polled = false;
	softrdma_qp_need_kick(qp);
	softrdma_qp_kick_locked(qp);
}

/*
 * Poll @qp once: send what the provider published. Return: true if it
 * stays on the list.
 */
static bool softrdma_poll_qp(struct softrdma_qp *qp, ktime_t now, s64 idle_ns)
{
	bool keep = true;

	spin_lock_bh(&qp->lock);
	if (qp->state != IB_QPS_RTS) {
		softrdma_poll_hand_back(qp);
		keep = false;
	} else if (qp->transport->req_pending(qp)) {
		softrdma_count(qp->sdev, SOFTRDMA_CNT_POLLER_SENDS);
		qp->transport->req_run(qp);
		WRITE_ONCE(qp->poll_last, now);
		if (softrdma_poll_long(qp)) {
			softrdma_poll_hand_back(qp);
			keep = false;
		}
	} else if (ktime_to_ns(ktime_sub(now, READ_ONCE(qp->poll_last))) >
		   idle_ns) {
		softrdma_qp_need_kick(qp);
		/* Published before the provider saw the flag? Keep going. */
		if (qp->transport->req_pending(qp)) {
			softrdma_ring_clear_flag(&qp->sq,
						 SOFTRDMA_RING_NEED_KICK);
		} else {
			qp->polled = false;
			keep = false;
		}
	}
	spin_unlock_bh(&qp->lock);
	return keep;
}

/* softrdma_poll_hand_back(), taking @qp's lock. */
static void softrdma_poll_release(struct softrdma_qp *qp)
{
	spin_lock_bh(&qp->lock);
	softrdma_poll_hand_back(qp);
	spin_unlock_bh(&qp->lock);
}

static int softrdma_poll_thread(void *data)
{
	while (!kthread_should_stop()) {
		s64 idle_ns = (s64)READ_ONCE(poll_us) * NSEC_PER_USEC;
		struct softrdma_qp *qp;
		LIST_HEAD(round);
		ktime_t now;
		bool yield;

		wait_event_interruptible(softrdma_poll_wq,
					 !list_empty(&softrdma_poll_list) ||
					 kthread_should_stop());
		now = ktime_get();
		/*
		 * One round over every listed QP. The round's list is only
		 * touched under the lock, so softrdma_poll_del() may take a
		 * QP off it at any time. If another task wants this CPU, the
		 * round hands every QP back, and none is taken for a while.
		 */
		yield = !single_task_running();
		if (yield)
			WRITE_ONCE(softrdma_poll_backoff,
				   jiffies + SOFTRDMA_POLL_BACKOFF);
		spin_lock_bh(&softrdma_poll_lock);
		list_splice_init(&softrdma_poll_list, &round);
		while (!list_empty(&round)) {
			bool keep = false;

			qp = list_first_entry(&round, struct softrdma_qp,
					      poll_node);
			list_del_init(&qp->poll_node);
			if (!refcount_inc_not_zero(&qp->refs))
				continue;
			spin_unlock_bh(&softrdma_poll_lock);
			if (yield)
				softrdma_poll_release(qp);
			else
				keep = softrdma_poll_qp(qp, now, idle_ns);
			spin_lock_bh(&softrdma_poll_lock);
			if (keep && !qp->poll_dead && list_empty(&qp->poll_node))
				list_add_tail(&qp->poll_node,
					      &softrdma_poll_list);
			softrdma_qp_put(qp);
		}
		spin_unlock_bh(&softrdma_poll_lock);
		cond_resched();
	}
	return 0;
}

int softrdma_poll_init(void)
{
	struct task_struct *t;

	t = kthread_run(softrdma_poll_thread, NULL, "softrdma_poll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	softrdma_poll_task = t;
	return 0;
}

void softrdma_poll_exit(void)
{
	kthread_stop(softrdma_poll_task);
	softrdma_poll_task = NULL;
}
