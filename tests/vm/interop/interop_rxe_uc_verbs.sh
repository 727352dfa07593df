# shellcheck shell=bash
# UC with rdma_rxe, our byte-checking program both ways: rxe sends to
# softroce, then softroce to rxe (see roce/uc_verbs).
#
# layers: stock
test_interop_rxe_uc_verbs() {
	interop_setup
	trap interop_cleanup EXIT
	"$RCTEST" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --uc --sizes 0,1,1025,4096,65536
	"$RCTEST" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1 --uc --sizes 0,1,1025,4096,65536
}
