# shellcheck shell=bash
# perftest_matrix.
#
# layers: stock
test_perftest_matrix() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	perf_matrix sr1 b sr0 - 10.0.0.2
}
