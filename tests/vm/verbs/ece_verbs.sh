# shellcheck shell=bash
# ece_verbs: ibv_query_ece / ibv_set_ece on softroce RC QPs connected
# without the CM (our vendor id 0x025352, selective repeat agreed when
# both ends set it, go-back-N otherwise, refusals with EINVAL, a change
# after RTS refused), what the kernel runs them with (rdma res: retx),
# and softiwarp's EOPNOTSUPP (verbs_ece.cpp).
#
# layers: stock debug
# timeout: 120
test_ece_verbs() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	rdma link add si0 type softiwarp netdev veth0
	"$ECETEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 si0
}
