// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The lifetime of iWARP's kernel TCP sockets, below the connection manager
 * (cm.c): how a connection's socket is set up (no Nagle, keepalives), and
 * how it is released: unread data dropped first, a graceful close kept on
 * the linger list until TCP has its FIN acked (or reset when its time is
 * up), and every such socket released when its network namespace goes
 * (pernet pre_exit) or the module does.
 *
 * Not here: endpoints, socket callbacks and the MPA exchange (cm.c); what
 * goes over the socket (tx.c, rx.c).
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iwarp.h"

/*
 * A connection's socket: TCP_NODELAY, and keepalives, so that a peer gone
 * silent (host down, link cut) ends an idle connection too, in 35 s.
 */
void softrdma_sock_setup(struct socket *sock)
{
	struct sock *sk = sock->sk;

	tcp_sock_set_nodelay(sk);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, SOFTRDMA_CEP_KEEPIDLE);
	tcp_sock_set_keepintvl(sk, SOFTRDMA_CEP_KEEPINTVL);
	tcp_sock_set_keepcnt(sk, SOFTRDMA_CEP_KEEPCNT);
}

/* tcp_read_sock() actor: drop what arrived. */
static int softrdma_sock_discard(read_descriptor_t *desc, struct sk_buff *skb,
				 unsigned int off, size_t len)
{
	return len;
}

/*
 * Release @sock, dropping what it holds unread first: unread bytes would
 * turn the close into a reset, which TCP does not repeat, and a peer that
 * lost it would wait for its keepalives.
 */
static void softrdma_sock_drop(struct socket *sock)
{
	read_descriptor_t desc = { .count = 1 };
	struct sock *sk = sock->sk;

	lock_sock(sk);
	tcp_read_sock(sk, &desc, softrdma_sock_discard);
	release_sock(sk);
	sock_release(sock);
}

/*
 * Sockets closed gracefully whose FIN TCP has not had acked yet. A kernel
 * socket holds no reference on its namespace, so TCP stops its timers when
 * it is released: a FIN (or the data before it) lost after that would never
 * be sent again, and the peer would wait for its keepalives. So such a
 * socket is kept until its FIN is acked, for SOFTRDMA_CEP_LINGER at most,
 * and released at once when its namespace or the module goes.
 */
struct softrdma_linger {
	struct list_head list;
	struct socket *sock;
	unsigned long deadline;
};

static LIST_HEAD(softrdma_lingering);
static DEFINE_MUTEX(softrdma_linger_lock);
static void softrdma_linger_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(softrdma_linger_dwork, softrdma_linger_work);

static bool softrdma_sock_fin_unacked(struct sock *sk)
{
	switch (READ_ONCE(sk->sk_state)) {
	case TCP_FIN_WAIT1:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		return true;
	default:
		return false;
	}
}

/*
 * Release a socket that waited. One whose FIN is still unacked (time up, or
 * its namespace or the module going) is reset: released as it is, it would
 * stay an orphan without timers for as long as its namespace lives.
 */
static void softrdma_linger_drop(struct softrdma_linger *l)
{
	list_del(&l->list);
	if (softrdma_sock_fin_unacked(l->sock->sk))
		sock_no_linger(l->sock->sk);
	softrdma_sock_drop(l->sock);
	kfree(l);
}

/*
 * Release the sockets whose FIN was acked or whose time is up. Under the
 * lock, so that a namespace's exit finds none of its sockets still being
 * released.
 */
static void softrdma_linger_work(struct work_struct *work)
{
	struct softrdma_linger *l, *next;

	mutex_lock(&softrdma_linger_lock);
	list_for_each_entry_safe(l, next, &softrdma_lingering, list) {
		if (!softrdma_sock_fin_unacked(l->sock->sk) ||
		    time_after_eq(jiffies, l->deadline))
			softrdma_linger_drop(l);
	}
	if (!list_empty(&softrdma_lingering))
		queue_delayed_work(softrdma_iw_wq, &softrdma_linger_dwork,
				   SOFTRDMA_CEP_LINGER_POLL);
	mutex_unlock(&softrdma_linger_lock);
}

/* Release now the sockets of @net, or all of them if @net is NULL. */
static void softrdma_linger_flush(struct net *net)
{
	struct softrdma_linger *l, *next;

	mutex_lock(&softrdma_linger_lock);
	list_for_each_entry_safe(l, next, &softrdma_lingering, list) {
		if (!net || net_eq(sock_net(l->sock->sk), net))
			softrdma_linger_drop(l);
	}
	mutex_unlock(&softrdma_linger_lock);
}

/* Release @sock, once its FIN is acked if @graceful. */
void softrdma_sock_close(struct socket *sock, bool graceful)
{
	struct softrdma_linger *l;

	if (graceful && softrdma_sock_fin_unacked(sock->sk)) {
		l = kmalloc(sizeof(*l), GFP_KERNEL);
		if (l) {
			l->sock = sock;
			l->deadline = jiffies + SOFTRDMA_CEP_LINGER;
			mutex_lock(&softrdma_linger_lock);
			list_add_tail(&l->list, &softrdma_lingering);
			queue_delayed_work(softrdma_iw_wq,
					   &softrdma_linger_dwork,
					   SOFTRDMA_CEP_LINGER_POLL);
			mutex_unlock(&softrdma_linger_lock);
			return;
		}
	}
	softrdma_sock_drop(sock);
}

/* A namespace goes: before TCP's own exit, its sockets must be released. */
static void softrdma_linger_net_pre_exit(struct net *net)
{
	softrdma_linger_flush(net);
}

static struct pernet_operations softrdma_linger_net_ops = {
	.pre_exit = softrdma_linger_net_pre_exit,
};

int softrdma_sock_init(void)
{
	return register_pernet_subsys(&softrdma_linger_net_ops);
}

/* Module unload, every socket user gone: release the lingering sockets. */
void softrdma_sock_exit(void)
{
	cancel_delayed_work_sync(&softrdma_linger_dwork);
	softrdma_linger_flush(NULL);
	unregister_pernet_subsys(&softrdma_linger_net_ops);
}
