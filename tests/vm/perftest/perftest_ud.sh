# shellcheck shell=bash
# perftest_ud: perftest's UD send tests between two softroce devices, a
# small size and the path MTU (1024 on a 1500-byte veth). (perftest
# posts with ibv_post_send on softrdma whatever the mode; see
# perftest_roce.)
#
# layers: stock
# timeout: 300
test_perftest_ud() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local t size
	for t in ib_send_lat ib_send_bw; do
		for size in 2 1024; do
			echo "== $t -c UD -s $size"
			"$PERF" sr1 b sr0 - 10.0.0.2 $t -c UD -s $size -n 20
		done
	done
}
