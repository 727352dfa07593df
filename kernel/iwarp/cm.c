// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection management for the kernel's iw_cm: kernel TCP sockets in the
 * netdev's network namespace, and the MPA request/reply exchange (RFC 5044
 * 7.1) with the enhanced connection establishment of RFC 6581 (IRD/ORD and
 * the peer-to-peer RTR).
 *
 * Each endpoint (struct softrdma_cep) does its work in one work item,
 * serialised by its mutex; the socket callbacks, which run in softirq
 * context, only queue work. Markers (RFC 5044 5) go each way its receiver
 * asked for: we ask with the mpa_markers parameter, and send them when the
 * peer asks, as its M flag says.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

static void softrdma_cep_work(struct work_struct *work);
static void softrdma_cep_timeout(struct timer_list *t);

/* Endpoints alive: module unload waits for the last one. */
static atomic_t softrdma_num_ceps = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(softrdma_ceps_gone);

static struct softrdma_cep *softrdma_cep_alloc(struct softrdma_dev *sdev)
{
	struct softrdma_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);

	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	mutex_init(&cep->mutex);
	INIT_WORK(&cep->work, softrdma_cep_work);
	timer_setup(&cep->timer, softrdma_cep_timeout, 0);
	cep->sdev = sdev;
	cep->state = CEP_IDLE;
	atomic_inc(&softrdma_num_ceps);
	return cep;
}

static void softrdma_cep_release(struct kref *ref)
{
	struct softrdma_cep *cep = container_of(ref, struct softrdma_cep, ref);

	WARN_ON(cep->sock || cep->qp || cep->cm_id);
	mutex_destroy(&cep->mutex);
	kfree(cep);
	if (atomic_dec_and_test(&softrdma_num_ceps))
		wake_up(&softrdma_ceps_gone);
}

/*
 * Wait until every endpoint is gone (module unload, the devices gone): the
 * last ones close on their own, at the latest when their timeout fires.
 */
void softrdma_cep_wait_all(void)
{
	/* Still waiting after a minute is a leak: say so, once. */
	if (!wait_event_timeout(softrdma_ceps_gone,
				!atomic_read(&softrdma_num_ceps), 60 * HZ)) {
		pr_err("softrdma: %d iWARP endpoints still held at unload; waiting\n",
		       atomic_read(&softrdma_num_ceps));
		wait_event(softrdma_ceps_gone,
			   !atomic_read(&softrdma_num_ceps));
	}
}

void softrdma_cep_put(struct softrdma_cep *cep)
{
	kref_put(&cep->ref, softrdma_cep_release);
}

/* Queue the endpoint's work; the work holds a reference. Any context. */
static void softrdma_cep_queue(struct softrdma_cep *cep)
{
	kref_get(&cep->ref);
	if (!queue_work(softrdma_iw_wq, &cep->work))
		softrdma_cep_put(cep);
}

/* The MPA exchange or the RTR timed out (softirq): the work closes. */
static void softrdma_cep_timeout(struct timer_list *t)
{
	struct softrdma_cep *cep = timer_container_of(cep, t, timer);

	set_bit(CEP_F_TIMEOUT, &cep->flags);
	softrdma_cep_queue(cep);
	/* The timer's reference. */
	softrdma_cep_put(cep);
}

/* Give the MPA exchange or the RTR its time (cep->mutex held). */
static void softrdma_cep_arm(struct softrdma_cep *cep)
{
	kref_get(&cep->ref);
	if (mod_timer(&cep->timer, jiffies + SOFTRDMA_CEP_TIMEOUT))
		softrdma_cep_put(cep);
}

/* Stop the timer (cep->mutex held; the caller holds a reference). */
static void softrdma_cep_disarm(struct softrdma_cep *cep)
{
	if (timer_delete(&cep->timer))
		softrdma_cep_put(cep);
}

/* Close the connection (any context): @graceful sends what is queued. */
void softrdma_cep_close(struct softrdma_cep *cep, bool graceful)
{
	set_bit(graceful ? CEP_F_CLOSE : CEP_F_ABORT, &cep->flags);
	softrdma_cep_queue(cep);
}

/* The peer-to-peer RTR arrived (any context). */
void softrdma_cep_established(struct softrdma_cep *cep)
{
	set_bit(CEP_F_ESTABLISHED, &cep->flags);
	softrdma_cep_queue(cep);
}

static void softrdma_cep_data_ready(struct sock *sk)
{
	struct softrdma_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep) {
		struct softrdma_qp *qp = READ_ONCE(cep->rx_qp);

		if (qp)
			softrdma_iw_data_ready(qp, sk);
		else
			softrdma_cep_queue(cep);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void softrdma_cep_state_change(struct sock *sk)
{
	void (*old)(struct sock *sk) = NULL;
	struct softrdma_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep) {
		struct softrdma_qp *qp = READ_ONCE(cep->rx_qp);

		old = cep->old_state_change;
		/* The receiver or the MPA reader sees EOF or the error. */
		if (qp)
			softrdma_iw_rx_kick(qp);
		else
			softrdma_cep_queue(cep);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	/* Wakes a sender blocked in the socket. */
	if (old)
		old(sk);
}

/* TCP has room again, or (SOCK_NOSPACE set) an ACK came: any context. */
static void softrdma_cep_write_space(struct sock *sk)
{
	struct softrdma_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep) {
		struct softrdma_qp *qp = READ_ONCE(cep->rx_qp);

		/* It wakes a blocked sender, and may clear SOCK_NOSPACE. */
		cep->old_write_space(sk);
		if (qp)
			softrdma_iw_write_space(qp, sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Take @sock over (cep->mutex held): its settings (softrdma_sock_setup())
 * and our callbacks. A connection accepted on @listener (else NULL) was
 * cloned with the listener's callbacks, ours: the ones to chain to are
 * the listener's own, set before a callback can run on the child.
 */
static void softrdma_cep_attach(struct softrdma_cep *cep, struct socket *sock,
				const struct softrdma_cep *listener)
{
	struct sock *sk = sock->sk;

	softrdma_sock_setup(sock);
	write_lock_bh(&sk->sk_callback_lock);
	if (listener) {
		cep->old_data_ready = listener->old_data_ready;
		cep->old_state_change = listener->old_state_change;
		cep->old_write_space = listener->old_write_space;
	} else {
		cep->old_data_ready = sk->sk_data_ready;
		cep->old_state_change = sk->sk_state_change;
		cep->old_write_space = sk->sk_write_space;
	}
	sk->sk_user_data = cep;
	sk->sk_data_ready = softrdma_cep_data_ready;
	sk->sk_state_change = softrdma_cep_state_change;
	sk->sk_write_space = softrdma_cep_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
	cep->sock = sock;
}

/* The connection manager's module init: the sockets' lifetime under it. */
int softrdma_cep_init(void)
{
	return softrdma_sock_init();
}

/* Module unload, every endpoint gone. */
void softrdma_cep_exit(void)
{
	softrdma_sock_exit();
}

/*
 * Give the socket's callbacks back and release it (cep->mutex held), once
 * its FIN is acked if @graceful.
 */
static void softrdma_cep_release_sock(struct softrdma_cep *cep, bool graceful)
{
	struct socket *sock = cep->sock;
	struct sock *sk;

	if (!sock)
		return;
	sk = sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = cep->old_data_ready;
	sk->sk_state_change = cep->old_state_change;
	sk->sk_write_space = cep->old_write_space;
	cep->rx_qp = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
	cep->sock = NULL;
	softrdma_sock_close(sock, graceful);
}

static void softrdma_cep_set_rx_qp(struct softrdma_cep *cep,
				   struct softrdma_qp *qp)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	cep->rx_qp = qp;
	write_unlock_bh(&sk->sk_callback_lock);
}

static void softrdma_cep_event(struct softrdma_cep *cep,
			       enum iw_cm_event_type type, int status,
			       void *pdata, u8 pdlen)
{
	/*
	 * The RDMA CM takes an event's ird as the consumer's initiator
	 * depth and its ord as its responder resources: our ORD and IRD.
	 */
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.private_data = pdata,
		.private_data_len = pdlen,
		.ird = cep->ord,
		.ord = cep->ird,
	};

	if (!cep->cm_id)
		return;
	if (cep->sock) {
		kernel_getsockname(cep->sock, (struct sockaddr *)&ev.local_addr);
		kernel_getpeername(cep->sock,
				   (struct sockaddr *)&ev.remote_addr);
	}
	cep->cm_id->event_handler(cep->cm_id, &ev);
}

/*
 * Close the connection (cep->mutex held): the QP leaves RTS, flushed, the
 * socket goes (with a reset if @abort), iw_cm hears of it.
 */
static void softrdma_cep_do_close(struct softrdma_cep *cep, bool abort)
{
	struct softrdma_cep *listener = cep->listener;

	if (cep->state == CEP_CLOSED)
		return;
	softrdma_cep_disarm(cep);
	if (cep->state == CEP_AWAIT_RTR && cep->cm_id) {
		/*
		 * Accepted, waiting for the RTR: iw_cm leaves CONN_RECV only
		 * with ESTABLISHED, then hears of the close as usual.
		 */
		softrdma_cep_event(cep, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
		cep->connected = true;
	}
	if (cep->sock) {
		if (abort)
			sock_no_linger(cep->sock->sk);
		/* Unblocks a sender; a graceful close still sends its data. */
		kernel_sock_shutdown(cep->sock, SHUT_RDWR);
	}
	if (cep->qp) {
		if (cep->sock)
			softrdma_cep_set_rx_qp(cep, NULL);
		softrdma_iw_qp_stop(cep->qp);
		softrdma_qp_put(cep->qp);
		cep->qp = NULL;
	}
	softrdma_cep_release_sock(cep, !abort);
	if (cep->connected) {
		cep->connected = false;
		/* Harmless after the ULP's own disconnect: iw_cm ignores it. */
		softrdma_cep_event(cep, IW_CM_EVENT_DISCONNECT, 0, NULL, 0);
		softrdma_cep_event(cep, IW_CM_EVENT_CLOSE, 0, NULL, 0);
	}
	if (cep->cm_id) {
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	cep->state = CEP_CLOSED;
	cep->listener = NULL;
	if (listener)
		softrdma_cep_put(listener);
	/* The connection's own reference. */
	softrdma_cep_put(cep);
}

/* Passive side: the MPA request is in; offer it to the listener's iw_cm. */
static int softrdma_cep_proc_req(struct softrdma_cep *cep)
{
	struct softrdma_mpa_rr *rr = (void *)cep->mpa;
	struct softrdma_cep *listener = cep->listener;
	u16 pdlen, peer_ird, peer_ord, ctl_ird, ctl_ord;
	struct iw_cm_event ev = {};
	u8 *pd;
	int ret;

	if (memcmp(rr->key, SOFTRDMA_MPA_KEY_REQ, SOFTRDMA_MPA_KEY_LEN) ||
	    rr->rev < 1)
		return -EPROTO;
	/* Answer in the lower of the two revisions. */
	cep->mpa_rev = min_t(u8, rr->rev, READ_ONCE(softrdma_iw_mpa_rev));
	cep->enhanced = cep->mpa_rev == 2 && (rr->flags & SOFTRDMA_MPA_FLAG_E);
	cep->crc = (rr->flags & SOFTRDMA_MPA_FLAG_C) || softrdma_iw_mpa_crc;
	/* M asks for markers in the direction towards its sender. */
	cep->tx_markers = rr->flags & SOFTRDMA_MPA_FLAG_M;
	cep->rx_markers = softrdma_iw_mpa_markers;
	cep->ext = (rr->flags & SOFTRDMA_MPA_FLAG_EXT_OFFER) &&
		   softrdma_iw_rdmap_ext;
	softrdma_mpa_rr_parse_v2(cep, &pd, &pdlen, &peer_ird, &peer_ord,
				 &ctl_ird, &ctl_ord);
	if (cep->enhanced && pdlen > SOFTRDMA_MPA_MAX_PD - 4)
		return -EPROTO;
	/* What the peer reads from us we answer (IRD), and vice versa. */
	cep->ird = min_t(u16, peer_ord, SOFTRDMA_MAX_RD_ATOMIC);
	cep->ord = min_t(u16, peer_ird, SOFTRDMA_MAX_RD_ATOMIC);
	cep->p2p = cep->enhanced && (ctl_ird & SOFTRDMA_MPA_V2_P2P);
	if (cep->p2p) {
		if (ctl_ord & SOFTRDMA_MPA_V2_WRITE0)
			cep->rtr = SOFTRDMA_MPA_V2_WRITE0;
		else if (ctl_ord & SOFTRDMA_MPA_V2_READ0)
			cep->rtr = SOFTRDMA_MPA_V2_READ0;
		else
			cep->rtr = 0;	/* a zero-length Send: not offered */
	}
	if (cep->p2p && !cep->rtr) {
		/* A Send RTR: refused, the peer learns it. */
		softrdma_mpa_rr_send(cep, true, true, NULL, 0);
		return -EOPNOTSUPP;
	}

	/*
	 * A child's mutex, then its listener's (accept_all: the other way
	 * round, for a child nobody else sees yet).
	 */
	mutex_lock_nested(&listener->mutex, SINGLE_DEPTH_NESTING);
	if (listener->state != CEP_LISTEN || !listener->cm_id) {
		mutex_unlock(&listener->mutex);
		return -ECONNREFUSED;
	}
	ev.event = IW_CM_EVENT_CONNECT_REQUEST;
	ev.provider_data = cep;
	ev.private_data = pd;
	ev.private_data_len = pdlen;
	/*
	 * The listener's initiator depth (ev.ird, as the RDMA CM reads it)
	 * is the Reads we may have in flight: our ORD, the peer's IRD; its
	 * responder resources, our IRD. svcrdma refuses an initiator depth
	 * of 0, and NFS clients offer an ORD of 0.
	 */
	ev.ird = cep->ord;
	ev.ord = cep->ird;
	kernel_getsockname(cep->sock, (struct sockaddr *)&ev.local_addr);
	kernel_getpeername(cep->sock, (struct sockaddr *)&ev.remote_addr);
	cep->state = CEP_AWAIT_ACCEPT;
	/* The ULP takes its time to accept. */
	softrdma_cep_disarm(cep);
	/* Held until iw_cm accepts or rejects. */
	kref_get(&cep->ref);
	ret = listener->cm_id->event_handler(listener->cm_id, &ev);
	mutex_unlock(&listener->mutex);
	if (ret) {
		cep->state = CEP_AWAIT_REQ;
		softrdma_cep_put(cep);
	}
	return ret;
}

/* Active side: the MPA reply is in. */
static void softrdma_cep_proc_rep(struct softrdma_cep *cep)
{
	struct softrdma_mpa_rr *rr = (void *)cep->mpa;
	u16 pdlen, peer_ird, peer_ord, ctl_ird, ctl_ord;
	struct softrdma_qp *qp = cep->qp;
	u8 *pd;
	int ret;

	softrdma_cep_disarm(cep);
	if (memcmp(rr->key, SOFTRDMA_MPA_KEY_REP, SOFTRDMA_MPA_KEY_LEN) ||
	    rr->rev < 1 || rr->rev > cep->mpa_rev) {
		ret = -EPROTO;
		goto fail;
	}
	if (cep->enhanced && (rr->rev < 2 || !(rr->flags & SOFTRDMA_MPA_FLAG_E)))
		cep->enhanced = false;	/* the peer answered in revision 1 */
	softrdma_mpa_rr_parse_v2(cep, &pd, &pdlen, &peer_ird, &peer_ord,
				 &ctl_ird, &ctl_ord);
	if (rr->flags & SOFTRDMA_MPA_FLAG_R) {
		softrdma_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY,
				   -ECONNREFUSED, pd, pdlen);
		softrdma_cep_do_close(cep, false);
		return;
	}
	cep->crc = rr->flags & SOFTRDMA_MPA_FLAG_C;
	cep->tx_markers = rr->flags & SOFTRDMA_MPA_FLAG_M;
	/* Our offer's echo is no answer: only the accept bit is. */
	cep->ext = cep->ext && (rr->flags & SOFTRDMA_MPA_FLAG_EXT_ACCEPT);
	cep->ord = min_t(u16, cep->ord, peer_ird);
	if (cep->p2p && !(ctl_ird & SOFTRDMA_MPA_V2_P2P))
		cep->p2p = false;
	if (cep->p2p) {
		struct softrdma_iw_qp *iw = to_iwqp(qp);

		cep->rtr = ctl_ord & (SOFTRDMA_MPA_V2_WRITE0 |
				      SOFTRDMA_MPA_V2_READ0);
		if (cep->rtr != SOFTRDMA_MPA_V2_WRITE0) {
			ret = -EPROTO;
			goto fail;
		}
		/* The RTR goes first, before the QP's own traffic. */
		iw->crc = cep->crc;
		iw->tx_markers = cep->tx_markers;
		iw->tx_soff = 0;
		ret = softrdma_iw_send_rtr(qp, cep->sock, cep->rtr);
		if (ret)
			goto fail;
	}
	ret = softrdma_iw_qp_start(qp, cep);
	if (ret)
		goto fail;
	softrdma_cep_set_rx_qp(cep, qp);
	/*
	 * The responder may send as soon as its Reply is out: what came
	 * after the receiver's first look and before it had the socket's
	 * data_ready is read now.
	 */
	softrdma_iw_rx_kick(qp);
	cep->state = CEP_RTS;
	cep->connected = true;
	softrdma_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY, 0, pd, pdlen);
	return;

fail:
	softrdma_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY, ret, NULL, 0);
	softrdma_cep_do_close(cep, true);
}

/* A listener's new connections (cep->mutex held). */
static void softrdma_cep_accept_all(struct softrdma_cep *listener)
{
	for (;;) {
		struct softrdma_cep *cep;
		struct socket *sock;

		if (!listener->sock ||
		    kernel_accept(listener->sock, &sock, O_NONBLOCK))
			return;
		cep = softrdma_cep_alloc(listener->sdev);
		if (!cep) {
			sock_release(sock);
			continue;
		}
		kref_get(&listener->ref);
		cep->listener = listener;
		mutex_lock_nested(&cep->mutex, SINGLE_DEPTH_NESTING);
		softrdma_cep_attach(cep, sock, listener);
		cep->state = CEP_AWAIT_REQ;
		softrdma_cep_arm(cep);
		/*
		 * The request may be in already. Queued while we hold the
		 * mutex: once it is released, a close may drop the last
		 * reference but the work's.
		 */
		softrdma_cep_queue(cep);
		mutex_unlock(&cep->mutex);
	}
}

static void softrdma_cep_work(struct work_struct *work)
{
	struct softrdma_cep *cep = container_of(work, struct softrdma_cep,
						work);
	int ret;

	mutex_lock(&cep->mutex);
	switch (cep->state) {
	case CEP_LISTEN:
		softrdma_cep_accept_all(cep);
		break;
	case CEP_AWAIT_REQ:
		ret = softrdma_mpa_rr_read(cep);
		if (ret > 0)
			ret = softrdma_cep_proc_req(cep);
		if (ret < 0)
			softrdma_cep_do_close(cep, true);
		break;
	case CEP_AWAIT_REP:
		ret = softrdma_mpa_rr_read(cep);
		if (ret > 0) {
			softrdma_cep_proc_rep(cep);
		} else if (ret < 0) {
			softrdma_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY,
					   -ECONNRESET, NULL, 0);
			softrdma_cep_do_close(cep, true);
		}
		break;
	default:
		break;
	}
	if (test_and_clear_bit(CEP_F_ESTABLISHED, &cep->flags) &&
	    cep->state == CEP_AWAIT_RTR) {
		softrdma_cep_disarm(cep);
		cep->state = CEP_RTS;
		cep->connected = true;
		softrdma_cep_event(cep, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	}
	if (test_and_clear_bit(CEP_F_TIMEOUT, &cep->flags) &&
	    (cep->state == CEP_AWAIT_REQ || cep->state == CEP_AWAIT_REP ||
	     cep->state == CEP_AWAIT_RTR)) {
		if (cep->state == CEP_AWAIT_REP)
			softrdma_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY,
					   -ETIMEDOUT, NULL, 0);
		softrdma_cep_do_close(cep, true);
	}
	if (cep->state != CEP_LISTEN && cep->state != CEP_CLOSED &&
	    cep->state != CEP_AWAIT_ACCEPT &&
	    (test_bit(CEP_F_CLOSE, &cep->flags) ||
	     test_bit(CEP_F_ABORT, &cep->flags))) {
		if (cep->state == CEP_AWAIT_REP)
			softrdma_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY,
					   -ECONNRESET, NULL, 0);
		softrdma_cep_do_close(cep, test_bit(CEP_F_ABORT, &cep->flags));
	}
	mutex_unlock(&cep->mutex);
	softrdma_cep_put(cep);
}

/* The QP of number @qpn, with a reference, or NULL. */
static struct softrdma_qp *softrdma_cep_qp_get(struct softrdma_dev *sdev,
					       u32 qpn)
{
	struct softrdma_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->refs))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

static int softrdma_sockaddr_len(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (a->ss_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return -EAFNOSUPPORT;
}

static int softrdma_cep_socket(struct softrdma_dev *sdev, int family,
			       struct socket **sock)
{
	int ret;

	ret = sock_create_kern(dev_net(sdev->netdev), family, SOCK_STREAM,
			       IPPROTO_TCP, sock);
	if (ret)
		return ret;
	sock_set_reuseaddr((*sock)->sk);
	return 0;
}

int softrdma_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct softrdma_dev *sdev = to_sdev(id->device);
	int llen = softrdma_sockaddr_len(&id->m_local_addr);
	int rlen = softrdma_sockaddr_len(&id->m_remote_addr);
	struct softrdma_cep *cep;
	struct softrdma_qp *qp;
	struct socket *sock;
	int ret;

	if (llen < 0 || rlen < 0 ||
	    id->m_local_addr.ss_family != id->m_remote_addr.ss_family)
		return -EAFNOSUPPORT;
	if (param->private_data_len > SOFTRDMA_MPA_MAX_PD - 4)
		return -EINVAL;
	qp = softrdma_cep_qp_get(sdev, param->qpn);
	if (!qp)
		return -EINVAL;
	cep = softrdma_cep_alloc(sdev);
	if (!cep) {
		ret = -ENOMEM;
		goto err_qp;
	}
	ret = softrdma_cep_socket(sdev, id->m_remote_addr.ss_family, &sock);
	if (ret)
		goto err_cep;
	ret = kernel_bind(sock, (struct sockaddr_unsized *)&id->m_local_addr,
			  llen);
	if (ret)
		goto err_sock;
	ret = kernel_connect(sock,
			     (struct sockaddr_unsized *)&id->m_remote_addr,
			     rlen, 0);
	if (ret)
		goto err_sock;

	mutex_lock(&cep->mutex);
	softrdma_cep_attach(cep, sock, NULL);
	cep->mpa_rev = READ_ONCE(softrdma_iw_mpa_rev);
	cep->enhanced = cep->mpa_rev == 2;
	cep->crc = softrdma_iw_mpa_crc;
	cep->rx_markers = softrdma_iw_mpa_markers;
	cep->p2p = softrdma_iw_p2p;
	cep->ext = softrdma_iw_rdmap_ext;
	cep->ird = min_t(u32, param->ird, SOFTRDMA_MAX_RD_ATOMIC);
	cep->ord = min_t(u32, param->ord, SOFTRDMA_MAX_RD_ATOMIC);
	cep->qp = qp;
	cep->state = CEP_AWAIT_REP;
	softrdma_cep_arm(cep);
	id->add_ref(id);
	cep->cm_id = id;
	id->provider_data = cep;
	ret = softrdma_mpa_rr_send(cep, false, false, param->private_data,
				   param->private_data_len);
	if (ret) {
		/* No event owed: iw_cm learns it from our return. */
		id->provider_data = NULL;
		cep->cm_id = NULL;
		id->rem_ref(id);
		kref_get(&cep->ref);
		softrdma_cep_do_close(cep, true);
		mutex_unlock(&cep->mutex);
		softrdma_cep_put(cep);
		return ret;
	}
	/* The reply may be in already (queued under the mutex, as above). */
	softrdma_cep_queue(cep);
	mutex_unlock(&cep->mutex);
	return 0;

err_sock:
	sock_release(sock);
err_cep:
	softrdma_cep_put(cep);
err_qp:
	softrdma_qp_put(qp);
	return ret;
}

int softrdma_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct softrdma_cep *cep = id->provider_data;
	struct softrdma_dev *sdev = to_sdev(id->device);
	struct softrdma_qp *qp;
	int ret;

	if (!cep)
		return -EINVAL;
	id->provider_data = NULL;
	qp = softrdma_cep_qp_get(sdev, param->qpn);
	mutex_lock(&cep->mutex);
	if (cep->state != CEP_AWAIT_ACCEPT) {
		ret = -ECONNRESET;
		goto out;
	}
	if (!qp || param->private_data_len > SOFTRDMA_MPA_MAX_PD - 4) {
		ret = -EINVAL;
		softrdma_cep_do_close(cep, true);
		goto out;
	}
	cep->ird = min_t(u32, param->ird, SOFTRDMA_MAX_RD_ATOMIC);
	cep->ord = min_t(u32, param->ord, cep->ord);
	id->add_ref(id);
	cep->cm_id = id;
	/* No provider data now: iw_cm's reject must not find this one. */
	cep->qp = qp;
	qp = NULL;
	ret = softrdma_iw_qp_start(cep->qp, cep);
	if (ret) {
		softrdma_mpa_rr_send(cep, true, true, NULL, 0);
		goto close;
	}
	softrdma_cep_set_rx_qp(cep, cep->qp);
	ret = softrdma_mpa_rr_send(cep, true, false, param->private_data,
				   param->private_data_len);
	if (ret)
		goto close;
	if (cep->p2p) {
		cep->state = CEP_AWAIT_RTR;
		softrdma_cep_arm(cep);
		/* The RTR may have come and gone already. */
		if (test_bit(CEP_F_ESTABLISHED, &cep->flags))
			softrdma_cep_queue(cep);
	} else {
		cep->state = CEP_RTS;
		cep->connected = true;
		softrdma_cep_event(cep, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	}
	goto out;

close:
	/* iw_cm learns of the failure from our return, not by an event. */
	id->provider_data = NULL;
	cep->cm_id = NULL;
	id->rem_ref(id);
	softrdma_cep_do_close(cep, true);
out:
	mutex_unlock(&cep->mutex);
	if (qp)
		softrdma_qp_put(qp);
	/* The reference the request held. */
	softrdma_cep_put(cep);
	return ret;
}

int softrdma_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	struct softrdma_cep *cep = id->provider_data;
	int ret = 0;

	if (!cep)
		return -EINVAL;
	id->provider_data = NULL;
	mutex_lock(&cep->mutex);
	if (cep->state == CEP_AWAIT_ACCEPT) {
		if (pdata_len > SOFTRDMA_MPA_MAX_PD - 4)
			pdata_len = 0;
		ret = softrdma_mpa_rr_send(cep, true, true, pdata, pdata_len);
		softrdma_cep_do_close(cep, false);
	} else {
		ret = -ECONNRESET;
	}
	mutex_unlock(&cep->mutex);
	softrdma_cep_put(cep);
	return ret;
}

/* Is @a the wildcard address (INADDR_ANY, in6addr_any)? */
static bool softrdma_sockaddr_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

int softrdma_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	struct softrdma_dev *sdev = to_sdev(id->device);
	int len = softrdma_sockaddr_len(&id->m_local_addr);
	struct softrdma_cep *cep;
	struct socket *sock;
	bool any;
	int ret;

	if (len < 0)
		return len;
	any = softrdma_sockaddr_any(&id->m_local_addr);
	cep = softrdma_cep_alloc(sdev);
	if (!cep) {
		ret = -ENOMEM;
		goto err;
	}
	ret = softrdma_cep_socket(sdev, id->m_local_addr.ss_family, &sock);
	if (ret)
		goto err_cep;
	/*
	 * A wildcard listen is one per iWARP device (the RDMA CM's): each
	 * takes only what comes in through its own netdev, and so does not
	 * collide with the others' (another driver's, say siw's, in the
	 * same namespace) on the same port.
	 */
	if (any) {
		ret = sock_bindtoindex(sock->sk, sdev->netdev->ifindex, true);
		if (ret)
			goto err_sock;
	}
	/*
	 * One address family only (the CM's afonly, as nfsd asks for its
	 * IPv6 listener): an IPv4 listener may share the port.
	 */
	if (id->m_local_addr.ss_family == AF_INET6 && id->afonly) {
		ret = ip6_sock_set_v6only(sock->sk);
		if (ret)
			goto err_sock;
	}
	ret = kernel_bind(sock, (struct sockaddr_unsized *)&id->m_local_addr,
			  len);
	if (ret)
		goto err_sock;
	ret = kernel_listen(sock, backlog);
	if (ret)
		goto err_sock;
	mutex_lock(&cep->mutex);
	softrdma_cep_attach(cep, sock, NULL);
	cep->state = CEP_LISTEN;
	id->add_ref(id);
	cep->cm_id = id;
	id->provider_data = cep;
	/*
	 * A connection that came in between kernel_listen() and our
	 * callbacks woke nobody: it waits in the accept queue, and its
	 * peer's MPA request with it, until the work takes it.
	 */
	softrdma_cep_queue(cep);
	mutex_unlock(&cep->mutex);
	return 0;

err_sock:
	sock_release(sock);
err_cep:
	softrdma_cep_put(cep);
err:
	/*
	 * The RDMA CM listens on every device for a wildcard listener, on
	 * one added later too, and there a failure drops the whole device
	 * (cma_add_one()): a wildcard listen that fails here is only logged.
	 * A listen on one address reports its error.
	 */
	if (!any)
		return ret;
	ibdev_warn_ratelimited(&sdev->ibdev, "cannot listen on %pISpc: %d\n",
			       &id->m_local_addr, ret);
	return 0;
}

int softrdma_iw_destroy_listen(struct iw_cm_id *id)
{
	struct softrdma_cep *cep = id->provider_data;

	if (!cep)
		return 0;
	id->provider_data = NULL;
	mutex_lock(&cep->mutex);
	softrdma_cep_release_sock(cep, false);
	if (cep->cm_id) {
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	cep->state = CEP_CLOSED;
	mutex_unlock(&cep->mutex);
	/* The listener's own reference; its children hold theirs. */
	softrdma_cep_put(cep);
	return 0;
}
