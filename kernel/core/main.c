// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma module: `rdma link add` entry points, the device list and the
 * netdev notifier that keeps devices in step with their netdevs.
 */
#include <linux/module.h>
#include <linux/if_arp.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <rdma/rdma_netlink.h>

#include "softrdma.h"
#include "softrdma-abi-check.h"

MODULE_AUTHOR("softrdma developers");
MODULE_DESCRIPTION("softrdma: software RoCEv2 and iWARP RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("softroce");
MODULE_ALIAS_RDMA_LINK("softiwarp");

static LIST_HEAD(softrdma_devices);
static DEFINE_MUTEX(softrdma_devices_lock);
static DECLARE_WAIT_QUEUE_HEAD(softrdma_devices_gone);
static atomic_t softrdma_num_devices = ATOMIC_INIT(0);

/* Every transport the module carries: the core reaches them only here. */
static const struct softrdma_transport *const softrdma_transports[] = {
	&softrdma_roce_transport,
	&softrdma_iwarp_transport,
};

/*
 * softrdma_devlist_add - claim sdev->netdev for @sdev
 * @sdev: a new device, its netdev and transport set
 *
 * Fails with -EEXIST if a device of that transport already sits on @ndev.
 * A name taken already (by any driver) is refused by ib_register_device().
 */
int softrdma_devlist_add(struct softrdma_dev *sdev)
{
	struct softrdma_dev *d;
	int ret = 0;

	mutex_lock(&softrdma_devices_lock);
	list_for_each_entry(d, &softrdma_devices, list) {
		if (d->netdev == sdev->netdev &&
		    d->transport == sdev->transport && !d->unregistering) {
			pr_warn("softrdma: %s already carries %s device %s\n",
				netdev_name(sdev->netdev),
				sdev->transport->name,
				dev_name(&d->ibdev.dev));
			ret = -EEXIST;
			goto out;
		}
	}
	list_add_tail_rcu(&sdev->list, &softrdma_devices);
	atomic_inc(&softrdma_num_devices);
out:
	mutex_unlock(&softrdma_devices_lock);
	return ret;
}

/* softrdma_devlist_del - forget @sdev; harmless if it was never added. */
void softrdma_devlist_del(struct softrdma_dev *sdev)
{
	bool listed;

	mutex_lock(&softrdma_devices_lock);
	listed = !list_empty(&sdev->list);
	if (listed)
		list_del_rcu(&sdev->list);
	mutex_unlock(&softrdma_devices_lock);
	/* Packets being received may still look at the device. */
	synchronize_rcu();
	INIT_LIST_HEAD(&sdev->list);
	if (listed && atomic_dec_and_test(&softrdma_num_devices))
		wake_up_all(&softrdma_devices_gone);
}

/* The device of @transport on @ndev, under rcu_read_lock(). */
struct softrdma_dev *
softrdma_dev_by_netdev(struct net_device *ndev,
		       const struct softrdma_transport *transport)
{
	struct softrdma_dev *d;

	list_for_each_entry_rcu(d, &softrdma_devices, list)
		if (d->netdev == ndev && d->transport == transport)
			return d;
	return NULL;
}

static int softrdma_newlink(const char *name, struct net_device *ndev,
			    unsigned int t)
{
	const struct softrdma_transport *transport = softrdma_transports[t];

	if (ndev->type != ARPHRD_ETHER) {
		pr_warn("softrdma: %s carries no Ethernet frames (type %u); a %s device needs an Ethernet netdev\n",
			netdev_name(ndev), ndev->type, transport->name);
		return -EINVAL;
	}
	return softrdma_register(name, ndev, transport);
}

/* rdma_link_ops.newlink has no context: one entry per table slot. */
static int softrdma_newlink0(const char *name, struct net_device *ndev)
{
	return softrdma_newlink(name, ndev, 0);
}

static int softrdma_newlink1(const char *name, struct net_device *ndev)
{
	return softrdma_newlink(name, ndev, 1);
}

/* The link types (.type) are the transports' names, set at init. */
static struct rdma_link_ops softrdma_links[] = {
	{ .newlink = softrdma_newlink0 },
	{ .newlink = softrdma_newlink1 },
};

static_assert(ARRAY_SIZE(softrdma_links) == ARRAY_SIZE(softrdma_transports));

/* Queue the unregistration of every device on @ndev, or of all if NULL. */
static void softrdma_unregister_on(struct net_device *ndev)
{
	struct softrdma_dev *d;

	mutex_lock(&softrdma_devices_lock);
	list_for_each_entry(d, &softrdma_devices, list) {
		if ((ndev && d->netdev != ndev) || d->unregistering)
			continue;
		d->unregistering = true;
		ib_unregister_device_queued(&d->ibdev);
	}
	mutex_unlock(&softrdma_devices_lock);
}

static void softrdma_event_on(struct net_device *ndev, enum ib_event_type type)
{
	struct softrdma_dev *d;

	mutex_lock(&softrdma_devices_lock);
	list_for_each_entry(d, &softrdma_devices, list)
		if (d->netdev == ndev && !d->unregistering)
			softrdma_port_event(d, type);
	mutex_unlock(&softrdma_devices_lock);
}

static int softrdma_netdev_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_UNREGISTER:
		softrdma_unregister_on(ndev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		if (netif_running(ndev) && netif_carrier_ok(ndev))
			softrdma_event_on(ndev, IB_EVENT_PORT_ACTIVE);
		else
			softrdma_event_on(ndev, IB_EVENT_PORT_ERR);
		break;
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
		softrdma_event_on(ndev, IB_EVENT_LID_CHANGE);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block softrdma_netdev_nb = {
	.notifier_call = softrdma_netdev_event,
};

static void softrdma_transports_exit(unsigned int n)
{
	while (n--)
		softrdma_transports[n]->exit();
}

static int __init softrdma_init(void)
{
	unsigned int i;
	int ret;

	ret = softrdma_poll_init();
	if (ret)
		return ret;
	ret = softrdma_odp_init();
	if (ret)
		goto err_poll;
	/* Both transports' CRCs: before any of them can send or receive. */
	softrdma_crc_init();
	for (i = 0; i < ARRAY_SIZE(softrdma_transports); i++) {
		ret = softrdma_transports[i]->init();
		if (ret)
			goto err_transports;
	}
	ret = register_netdevice_notifier(&softrdma_netdev_nb);
	if (ret) {
		pr_err("softrdma: cannot register netdev notifier: %d\n", ret);
		goto err_transports;
	}
	for (i = 0; i < ARRAY_SIZE(softrdma_links); i++) {
		softrdma_links[i].type = softrdma_transports[i]->name;
		rdma_link_register(&softrdma_links[i]);
	}
	return 0;

err_transports:
	softrdma_transports_exit(i);
	softrdma_crc_exit();
	softrdma_odp_exit();
err_poll:
	softrdma_poll_exit();
	return ret;
}

static void __exit softrdma_exit(void)
{
	unsigned int i = ARRAY_SIZE(softrdma_links);

	while (i--)
		rdma_link_unregister(&softrdma_links[i]);
	unregister_netdevice_notifier(&softrdma_netdev_nb);

	/* No new devices can appear now; take down the rest and wait. */
	softrdma_unregister_on(NULL);
	wait_event(softrdma_devices_gone,
		   !atomic_read(&softrdma_num_devices));
	softrdma_transports_exit(ARRAY_SIZE(softrdma_transports));
	softrdma_crc_exit();
	softrdma_odp_exit();
	softrdma_poll_exit();
}

module_init(softrdma_init);
module_exit(softrdma_exit);
