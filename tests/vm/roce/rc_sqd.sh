# shellcheck shell=bash
# rc_sqd.
#
# layers: stock
test_rc_sqd() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$REPO/build/user/verbs_sqd" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}
