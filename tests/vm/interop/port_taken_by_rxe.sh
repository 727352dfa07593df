# shellcheck shell=bash
# port_taken_by_rxe.
#
# layers: stock
test_port_taken_by_rxe() {
	modprobe rdma_rxe
	dmesg -C
	expect_fail 'Address already in use' rdma link add sr0 type softroce netdev veth0
	dmesg | grep -q 'UDP port 4791 is taken in this network namespace'
	[ -z "$(ls /sys/class/infiniband)" ]
	# The iWARP side needs no UDP port.
	rdma link add si0 type softiwarp netdev veth0
	modprobe -r rdma_rxe
	# With the port free again, softroce can have it.
	rdma link add sr0 type softroce netdev veth0
	"$SMOKE" sr0 roce ::ffff:10.0.0.1
}
