# shellcheck shell=bash
# interop_rxe_restate: verbs_restate.cpp between rdma_rxe and softroce,
# each as the responder whose receive names an MR its QP may not use:
# either requester reads the other's Remote Operational Error NAK as
# IBV_WC_REM_OP_ERR, and both bring their QPs back from ibv_query_qp.
# rdma_rxe completes that receive with IBV_WC_LOC_QP_OP_ERR, and moves no
# MR (ibv_rereg_mr), so it is tried with an MR of another PD only. About
# 10 s.
#
# layers: stock
# timeout: 120
test_interop_rxe_restate() {
	interop_setup
	trap interop_cleanup EXIT
	"$RESTATE" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$RESTATE" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1 rxe
}
