# shellcheck shell=bash
# cm_roce: the RDMA CM between two softroce devices, each way: a connect
# with private data both ways, data over the QP, disconnect; a reject with
# private data (status 28); no listener (status 8); an address nobody
# answers (ADDR_ERROR); route errors: a route before the address and a
# zero timeout (EINVAL), and the VLAN an address was resolved through
# (its GID on the softroce device below it) deleted before the route
# (ENODEV; left out where the kernel has no VLANs: the debug kernel).
# See verbs_cm.cpp.
#
# layers: stock debug
# timeout: 180
test_cm_roce() {
	local via0=(10.7.0.2 veth0.7) via1=(10.7.0.1 veth1.7)
	rc_pair
	if modprobe -q 8021q; then
		trap cm_vlan_down EXIT
		cm_vlan
	else
		echo "no VLANs in kernel $(uname -r): the ENODEV case is left out"
		via0=() via1=()
	fi
	cm_run b 10.0.0.2 - 10.0.0.77 10.0.0.1 "${via0[@]}"
	[ ${#via1[@]} = 0 ] || cm_vlan
	cm_run - 10.0.0.1 b 10.0.0.77 10.0.0.2 "${via1[@]}"
}

# cm_vlan: VLAN 7 over veth0 (10.7.0.1) and, in netns b, veth1 (10.7.0.2),
# each made anew; cm_vlan_down deletes what is left of them.
cm_vlan_down() {
	ip link del veth0.7 2>/dev/null || true
	ip -n b link del veth1.7 2>/dev/null || true
}
cm_vlan() {
	cm_vlan_down
	ip link add link veth0 name veth0.7 type vlan id 7 &&
		ip addr add 10.7.0.1/24 dev veth0.7 && ip link set veth0.7 up &&
		ip -n b link add link veth1 name veth1.7 type vlan id 7 &&
		ip -n b addr add 10.7.0.2/24 dev veth1.7 &&
		ip -n b link set veth1.7 up
}
