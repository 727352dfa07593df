# shellcheck shell=bash
# RoCEv2 over IPv6: the GIDs are the guest's fd00:: addresses.
#
# layers: stock
test_rc_ipv6() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RCTEST" sr0 fd00::1 sr1 fd00::2
	"$RCTEST" sr1 fd00::2 sr0 fd00::1
	"$ATOMIC" sr0 fd00::1 sr1 fd00::2
}
