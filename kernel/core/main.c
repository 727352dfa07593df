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

const char *const softrdma_transport_names[] = {
	[SOFTRDMA_TRANSPORT_ROCE] = "softroce",
	[SOFTRDMA_TRANSPORT_IWARP] = "softiwarp",
};

/*
 * softrdma_devlist_add - claim @ndev for a new device of @transport
 *
 * Fails with -EEXIST if a device of that transport already sits on @ndev or
 * a device named @name exists (ours or any other driver's). The name is
 * looked up before our lock is taken: the RDMA core's device lock must not
 * nest inside it (our netdev notifier takes it under RTNL). A name taken in
 * between is still refused, by ib_register_device().
 */
int softrdma_devlist_add(struct softrdma_dev *sdev, const char *name)
{
	struct softrdma_dev *d;
	struct ib_device *other;
	int ret = 0;

	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		pr_warn("softrdma: an RDMA device named %s exists already\n",
			name);
		return -EEXIST;
	}

	mutex_lock(&softrdma_devices_lock);
	list_for_each_entry(d, &softrdma_devices, list) {
		if (d->netdev == sdev->netdev &&
		    d->transport == sdev->transport && !d->unregistering) {
			pr_warn("softrdma: %s already carries %s device %s\n",
				netdev_name(sdev->netdev),
				softrdma_transport_names[sdev->transport],
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

/* The softroce device on @ndev, under rcu_read_lock(). */
struct softrdma_dev *softrdma_roce_dev_by_netdev(struct net_device *ndev)
{
	struct softrdma_dev *d;

	list_for_each_entry_rcu(d, &softrdma_devices, list)
		if (d->netdev == ndev &&
		    d->transport == SOFTRDMA_TRANSPORT_ROCE)
			return d;
	return NULL;
}

static int softrdma_newlink(const char *name, struct net_device *ndev,
			    enum softrdma_transport transport)
{
	if (ndev->type != ARPHRD_ETHER) {
		pr_warn("softrdma: %s carries no Ethernet frames (type %u); a %s device needs an Ethernet netdev\n",
			netdev_name(ndev), ndev->type,
			softrdma_transport_names[transport]);
		return -EINVAL;
	}
	return softrdma_register(name, ndev, transport);
}

static int softrdma_newlink_roce(const char *name, struct net_device *ndev)
{
	return softrdma_newlink(name, ndev, SOFTRDMA_TRANSPORT_ROCE);
}

static int softrdma_newlink_iwarp(const char *name, struct net_device *ndev)
{
	return softrdma_newlink(name, ndev, SOFTRDMA_TRANSPORT_IWARP);
}

static struct rdma_link_ops softrdma_link_roce = {
	.type = "softroce",
	.newlink = softrdma_newlink_roce,
};

static struct rdma_link_ops softrdma_link_iwarp = {
	.type = "softiwarp",
	.newlink = softrdma_newlink_iwarp,
};

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

static int __init softrdma_init(void)
{
	int ret;

	ret = softrdma_poll_init();
	if (ret)
		return ret;
	ret = softrdma_roce_init();
	if (ret)
		goto err_poll;
	ret = softrdma_iwarp_init();
	if (ret)
		goto err_roce;
	ret = register_netdevice_notifier(&softrdma_netdev_nb);
	if (ret) {
		pr_err("softrdma: cannot register netdev notifier: %d\n", ret);
		goto err_iwarp;
	}
	rdma_link_register(&softrdma_link_roce);
	rdma_link_register(&softrdma_link_iwarp);
	return 0;

err_iwarp:
	softrdma_iwarp_exit();
err_roce:
	softrdma_roce_exit();
err_poll:
	softrdma_poll_exit();
	return ret;
}

static void __exit softrdma_exit(void)
{
	rdma_link_unregister(&softrdma_link_iwarp);
	rdma_link_unregister(&softrdma_link_roce);
	unregister_netdevice_notifier(&softrdma_netdev_nb);

	/* No new devices can appear now; take down the rest and wait. */
	softrdma_unregister_on(NULL);
	wait_event(softrdma_devices_gone,
		   !atomic_read(&softrdma_num_devices));
	softrdma_iwarp_exit();
	softrdma_roce_exit();
	softrdma_poll_exit();
}

module_init(softrdma_init);
module_exit(softrdma_exit);
