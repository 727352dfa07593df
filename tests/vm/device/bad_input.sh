# shellcheck shell=bash
# bad_input.
#
# layers: stock debug
# timeout: 300
test_bad_input() {
	rdma link add sr0 type softroce netdev veth0
	expect_fail 'No such device' rdma link add sr9 type softroce netdev nosuch0
	expect_fail 'File exists' rdma link add sr0 type softiwarp netdev veth0
	expect_fail 'File exists' rdma link add sr1 type softroce netdev veth0
	modprobe tun
	ip tuntap add mode tun tun0
	expect_fail 'Invalid argument' rdma link add sr2 type softroce netdev tun0
	dmesg | grep -q 'tun0 carries no Ethernet frames'
	expect_fail 'Invalid argument' rdma link add sr3 type softiwarp netdev lo
	ip tuntap del mode tun tun0
	# Nothing was left behind: only sr0 exists.
	[ "$(rdma link show | awk '{print $2}')" = "sr0/1" ]
	[ "$(ls /sys/class/infiniband)" = sr0 ]
	# And sr0 still works.
	"$SMOKE" sr0 roce ::ffff:10.0.0.1
}
