# shellcheck shell=bash
# devinfo_roce.
#
# layers: stock
# timeout: 300
test_devinfo_roce() {
	rdma link add sr0 type softroce netdev veth0
	ibv_devices | grep -q '^ *sr0 '
	local o
	o=$(ibv_devinfo -v -d sr0)
	echo "$o"
	echo "$o" | grep -q 'transport:[[:space:]]*InfiniBand'
	echo "$o" | grep -q 'state:[[:space:]]*PORT_ACTIVE'
	echo "$o" | grep -q 'link_layer:[[:space:]]*Ethernet'
	echo "$o" | grep -q 'active_mtu:[[:space:]]*1024'
	echo "$o" | grep -Eq 'GID\[ *[0-9]+\]:[[:space:]]*::ffff:10\.0\.0\.1, RoCE v2'
	echo "$o" | grep -Eq 'GID\[ *[0-9]+\]:[[:space:]]*fd00::1, RoCE v2'
}
