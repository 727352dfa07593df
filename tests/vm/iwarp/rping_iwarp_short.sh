# shellcheck shell=bash
# A few pings each way, smallest and largest: by name only, e.g. on the
# debug kernel (tools/lab run --kernel debug -- tests/vm/run.sh
# rping_iwarp_short). The debug layer's iWARP CM users are iwarp_ext and
# iwarp_kill_peer_short; rping_iwarp runs rping on the stock kernel.
#
# layers:
test_rping_iwarp_short() {
	iwarp_pair
	rping_run b - 10.0.0.2 5 64
	rping_run - b 10.0.0.1 5 65535
	# 64 KiB went by reference: si0's RDMA Writes, si1's Read Responses.
	rdma statistic show link si0/1
	ip netns exec b rdma statistic show link si1/1
	[ "$(counter si0 tx_zcopy_fpdus)" -gt 0 ]
	[ "$(ip netns exec b bash -c "$(declare -f counter); counter si1 tx_zcopy_fpdus")" -gt 0 ]
	iwarp_gone
}
