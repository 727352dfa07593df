# shellcheck shell=bash
# The same transfers posted through ibv_wr_* (ibv_qp_ex), and polled
# through ibv_cq_ex.
#
# layers: stock
test_rc_wr_api() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --wr
}
