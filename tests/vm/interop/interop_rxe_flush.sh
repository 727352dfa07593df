# shellcheck shell=bash
# interop_rxe_flush: RDMA FLUSH and ATOMIC WRITE between rdma_rxe and
# softroce, each way (verbs_flush.cpp).
#
# layers: stock
# timeout: 300
test_interop_rxe_flush() {
	interop_setup
	trap interop_cleanup EXIT
	"$FLUSHTEST" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$FLUSHTEST" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1
}
