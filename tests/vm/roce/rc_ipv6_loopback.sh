# shellcheck shell=bash
# Both QPs on sr0, to its own IPv6 address: the packets come in on lo.
#
# layers: stock
test_rc_ipv6_loopback() {
	rdma link add sr0 type softroce netdev veth0
	"$RCTEST" sr0 fd00::1 sr0 fd00::1
}
