# shellcheck shell=bash
# fi_pingpong_roce: libfabric's fi_pingpong between two softroce devices,
# MSG endpoints (verbs) and RDM ones (verbs;ofi_rxm), bytes checked.
#
# layers: stock
# timeout: 240
test_fi_pingpong_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	fi_pingpong_run msg - veth0 b veth1 10.0.0.1
	fi_pingpong_run rdm - veth0 b veth1 10.0.0.1
}
