# shellcheck shell=bash
# add_delete_rmmod_cycles.
#
# layers: stock debug
# timeout: 300
test_add_delete_rmmod_cycles() {
	local i
	# shellcheck disable=SC2034 # i counts the cycles
	for i in 1 2 3; do
		rdma link add sr0 type softroce netdev veth0
		rdma link add si0 type softiwarp netdev veth0
		ip netns exec b rdma link add sr1 type softroce netdev veth1
		rdma link delete sr0
		rdma link add sr0 type softroce netdev veth0
		"$SMOKE" si0 iwarp >/dev/null
		# rmmod with devices present removes them.
		rmmod softrdma
		[ -z "$(ls /sys/class/infiniband)" ]
		! lsmod | grep -q '^softrdma '
	done
}
