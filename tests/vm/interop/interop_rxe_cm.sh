# shellcheck shell=bash
# interop_rxe_cm: the RDMA CM between rdma_rxe and softroce, each side the
# server once (verbs_cm.cpp: connect with private data, data, disconnect,
# reject, no listener, address error, route errors).
#
# layers: stock
# timeout: 180
test_interop_rxe_cm() {
	interop_setup
	trap interop_cleanup EXIT
	cm_run b 10.0.0.2 - 10.0.0.77 10.0.0.1
	cm_run - 10.0.0.1 b 10.0.0.77 10.0.0.2
}
