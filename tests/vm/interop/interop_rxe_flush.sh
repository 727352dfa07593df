# shellcheck shell=bash
# interop_rxe_flush: ATOMIC WRITE between rdma_rxe and softroce, each way
# (verbs_flush.cpp). Not RDMA FLUSH: rdma_rxe 6.12 puts a wrong ICRC on
# its FLUSH packets (its headers counted twice; seen in a capture, every
# rxe FLUSH counted in rx_icrc_errors) and checks ours the same wrong way.
#
# layers: stock
# timeout: 300
test_interop_rxe_flush() {
	interop_setup
	trap interop_cleanup EXIT
	"$FLUSHTEST" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --no-flush
	"$FLUSHTEST" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1 --no-flush
}
