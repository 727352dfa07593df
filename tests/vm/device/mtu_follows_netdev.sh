# shellcheck shell=bash
# mtu_follows_netdev.
#
# layers: stock
# timeout: 300
test_mtu_follows_netdev() {
	rdma link add sr0 type softroce netdev veth0
	ip link set veth0 mtu 9000
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*4096'
	ip link set veth0 mtu 1200
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*1024'
	ip link set veth0 mtu 1000
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*512'
	ip link set veth0 mtu 1500
}
