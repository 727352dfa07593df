# shellcheck shell=bash
# Interop with Linux's siw: siw on veth0 (initial namespace), softiwarp on
# veth1 (b); each side as server and as client.
#
# layers: stock
test_interop_siw_rping() {
	modprobe siw
	rdma link add siw0 type siw netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	local size rc=0
	for size in 64 1500 65535; do
		rping_run b - 10.0.0.2 10 "$size" || rc=1
		rping_run - b 10.0.0.1 10 "$size" || rc=1
	done
	rdma link delete siw0
	modprobe -r siw
	return $rc
}
