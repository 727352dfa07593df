# shellcheck shell=bash
# extras_roce: create_cq_ex refusals, the FLUSH access flags, ibv_rereg_mr
# and SRQ resizing between two softroce devices (verbs_extras.cpp).
#
# layers: stock debug
# timeout: 300
test_extras_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$EXTRAS" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}
