# shellcheck shell=bash
# any_name.
#
# layers: stock
# timeout: 300
test_any_name() {
	rdma link add my_rdma_dev type softroce netdev veth0
	rdma link add rdmadev2 type softiwarp netdev veth0
	"$SMOKE" my_rdma_dev roce
	"$SMOKE" rdmadev2 iwarp
}
