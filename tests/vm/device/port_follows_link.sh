# shellcheck shell=bash
# port_follows_link.
#
# layers: stock
# timeout: 300
test_port_follows_link() {
	rdma link add sr0 type softroce netdev veth0
	rdma link add si0 type softiwarp netdev veth0
	ip link set veth0 down
	wait_for 5 sh -c 'ibv_devinfo -d sr0 | grep -q PORT_DOWN'
	ibv_devinfo -d si0 | grep -q PORT_DOWN
	ip link set veth0 up
	# Down took the fixture's IPv6 address along (IPv4 stays).
	ip addr replace fd00::1/64 dev veth0 nodad
	wait_for 5 sh -c 'ibv_devinfo -d sr0 | grep -q PORT_ACTIVE'
	wait_for 5 sh -c 'ibv_devinfo -d si0 | grep -q PORT_ACTIVE'
}
