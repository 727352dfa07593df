# shellcheck shell=bash
# The RDMA CM on UD between rdma_rxe (veth0) and softroce (veth1, netns
# b): udaddy with softroce serving and rxe as client, then the reverse.
#
# layers: stock
# timeout: 120
test_interop_rxe_udaddy() {
	interop_setup
	trap interop_cleanup EXIT
	udaddy_run b - 10.0.0.2 10 100
	udaddy_run - b 10.0.0.1 10 1000
}
