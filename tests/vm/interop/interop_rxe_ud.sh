# shellcheck shell=bash
# User UD between rdma_rxe (veth0) and softroce (veth1, netns b), both
# ways: ibv_ud_pingpong with its received buffers checked (-c).
#
# layers: stock
# timeout: 240
test_interop_rxe_ud() {
	interop_setup
	trap interop_cleanup EXIT
	local g0 g1 size srv
	g0=$(gid_index rxe0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in 1 1024; do
		# softroce serves, rxe connects.
		ip netns exec b timeout 60 ibv_ud_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s $size -n 50 -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 60 ibv_ud_pingpong -d rxe0 -g "$g0" -p "$P_PINGPONG" -s $size -n 50 -c 10.0.0.2
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
		# rxe serves, softroce connects.
		timeout 60 ibv_ud_pingpong -d rxe0 -g "$g0" -p "$P_PINGPONG" -s $size -n 50 -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen - "$P_PINGPONG"
		ip netns exec b timeout 60 ibv_ud_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s $size -n 50 -c 10.0.0.1
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}
