# shellcheck shell=bash
# perftest between two softroce devices, 2 B and 64 KiB, 20 iterations
# each (perf_matrix runs three sizes and a sweep). perftest 25.01 takes the
# ibv_wr_* path only on devices of its own list (ConnectX, BlueField, EFA,
# HNS, by vendor and part id) and forces --use_old_post_send on any other,
# rxe and softrdma included (its banner says "ibv_wr* API : OFF" either
# way), so one mode is all it can test; rc_wr_api covers ibv_wr_*.
#
# layers: stock
test_perftest_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local t size
	for t in ib_send_lat ib_write_lat ib_read_lat ib_send_bw ib_write_bw ib_read_bw; do
		for size in 2 65536; do
			echo "== $t -s $size"
			"$PERF" sr1 b sr0 - 10.0.0.2 $t -s $size -n 20
		done
	done
}
