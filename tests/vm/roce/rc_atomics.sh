# shellcheck shell=bash
# rc_atomics.
#
# layers: stock debug
test_rc_atomics() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$ATOMIC" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}
