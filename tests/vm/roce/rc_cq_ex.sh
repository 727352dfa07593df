# shellcheck shell=bash
# rc_cq_ex.
#
# layers: stock
test_rc_cq_ex() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --cq-ex
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --wr --cq-ex
}
