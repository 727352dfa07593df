# shellcheck shell=bash
# rc_pingpong.
#
# layers: stock
test_rc_pingpong() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local g0 g1 size
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in 1 4096 65536; do
		ip netns exec b timeout 120 ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s $size -n 50 -c >"$TEST_TMP"/srv.log 2>&1 &
		local srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 120 ibv_rc_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -s $size -n 50 -c 10.0.0.2
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}
