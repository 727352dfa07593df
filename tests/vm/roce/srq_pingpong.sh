# shellcheck shell=bash
# ibv_srq_pingpong with its content check, 4 QPs on one SRQ, polled and
# with completion events (-e).
#
# layers: stock
# shellcheck disable=SC2086 # $args: several arguments
test_srq_pingpong() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local g0 g1 args srv
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for args in "-s 4096 -q 4" "-s 100 -q 2 -e"; do
		ip netns exec b timeout 120 ibv_srq_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" $args -n 50 -c \
			>"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 120 ibv_srq_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" $args -n 50 -c 10.0.0.2 || return 1
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}
