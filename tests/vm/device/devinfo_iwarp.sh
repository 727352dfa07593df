# shellcheck shell=bash
# devinfo_iwarp.
#
# layers: stock
# timeout: 300
test_devinfo_iwarp() {
	rdma link add si0 type softiwarp netdev veth0
	local o
	o=$(ibv_devinfo -v -d si0)
	echo "$o"
	echo "$o" | grep -q 'transport:[[:space:]]*iWARP'
	echo "$o" | grep -q 'state:[[:space:]]*PORT_ACTIVE'
	echo "$o" | grep -q 'link_layer:[[:space:]]*Ethernet'
	mac=$(cat /sys/class/net/veth0/address)
	softrdma list | grep -q "^si0	softiwarp	veth0$"
	[ "$(cat /sys/class/infiniband/si0/parent)" = veth0 ]
	[ -n "$mac" ]
}
