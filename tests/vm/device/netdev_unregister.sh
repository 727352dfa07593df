# shellcheck shell=bash
# netdev_unregister.
#
# layers: stock debug
# timeout: 300
test_netdev_unregister() {
	ip link add vx0 type veth peer name vx1
	ip link set vx0 up
	rdma link add srx type softroce netdev vx0
	rdma link add six type softiwarp netdev vx1
	ip link del vx0
	wait_for 10 sh -c '! rdma link show | grep -q "srx\|six"'
	[ ! -e /sys/class/infiniband/srx ]
}
