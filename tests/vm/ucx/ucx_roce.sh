# shellcheck shell=bash
# UCX's transport layer on softroce: ucx_info -d lists sr0:1 with rc_verbs
# and ud_verbs, and ucx_perftest's UCT tests run between sr1 (netns b) and
# sr0 over each: am_lat and put_bw over rc_verbs, am_lat and am_bw over
# ud_verbs (which has no put). UCX's UD drops every datagram whose
# completion's SL does not say, as mlx5's does, that it came over IPv4
# (see provider/core/ring.cpp): without that its endpoints time out, as
# they do over rdma_rxe.
#
# layers: stock
# timeout: 180
test_ucx_roce() {
	local tl t
	rc_pair
	wait_for 10 has_gid sr0 ::ffff:10.0.0.1
	ip netns exec b bash -c "$(declare -f wait_for has_gid); wait_for 10 has_gid sr1 ::ffff:10.0.0.2"
	for tl in rc_verbs ud_verbs; do
		ucx_has_tl sr0:1 $tl || { ucx_info -d; echo "no $tl on sr0:1"; return 1; }
	done
	for t in am_lat put_bw; do
		ucx_perf "" sr1:1 "" sr0:1 -x rc_verbs -t $t -n 1000
	done
	for t in am_lat am_bw; do
		ucx_perf "" sr1:1 "" sr0:1 -x ud_verbs -t $t -n 1000
	done
	ucx_packets sr0
	ucx_packets sr1
	counter_is sr0 rx_qkey_drops 0
	counter_is sr1 rx_qkey_drops 0
}
