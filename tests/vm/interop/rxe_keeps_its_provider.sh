# shellcheck shell=bash
# rxe_keeps_its_provider.
#
# layers: stock
test_rxe_keeps_its_provider() {
	# rdma_rxe takes UDP 4791 in the initial namespace: softroce goes to b.
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	ibv_devinfo -d rxe0 | grep -q 'fw_ver:[[:space:]]*0\.0\.0'
	ibv_devinfo -d sr1 | grep -q 'fw_ver:[[:space:]]*0\.1\.0'
	"$SMOKE" sr1 roce ::ffff:10.0.0.2
	! softrdma list | grep -q rxe0
	rdma link delete rxe0
	modprobe -r rdma_rxe
}
