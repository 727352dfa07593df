# shellcheck shell=bash
# rc_restate: a receive whose MR its QP may not use (an MR of another PD;
# the receive's MR moved to another PD, or to another range, by
# ibv_rereg_mr): IBV_WC_REM_OP_ERR at the sender, IBV_WC_LOC_PROT_ERR at
# the receiver; each time both QPs back to RTS with what ibv_query_qp
# reported for them, and a SEND lands again (verbs_restate.cpp). About
# 6 s.
#
# layers: stock debug
# timeout: 120
test_rc_restate() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RESTATE" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}
