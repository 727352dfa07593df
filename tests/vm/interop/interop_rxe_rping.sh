# shellcheck shell=bash
# The RDMA CM between rdma_rxe (veth0) and softroce (veth1, netns b), both
# ways: CM MADs over each side's GSI QP, then rping with its data verified
# (-V) at a few sizes, and ucmatose.
#
# layers: stock
# timeout: 300
test_interop_rxe_rping() {
	interop_setup
	trap interop_cleanup EXIT
	local size
	for size in 64 1000 4096 65535; do
		# softroce serves, rxe connects; then the other way.
		rping_run b - 10.0.0.2 10 "$size"
		rping_run - b 10.0.0.1 10 "$size"
	done
	ucma_run b - 10.0.0.2 -c 2 -C 10 -S 4096
	ucma_run - b 10.0.0.1 -c 2 -C 10 -S 4096
	ip netns exec b bash -c "$(declare -f counter counter_is); counter_is sr1 rx_qkey_drops 0"
}
