# shellcheck shell=bash
# interop_rxe_pingpong.
#
# layers: stock
test_interop_rxe_pingpong() {
	interop_setup
	trap interop_cleanup EXIT
	local g0 g1 size srv
	g0=$(gid_index rxe0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in 1 4096 65536; do
		# softroce serves, rxe connects.
		ip netns exec b timeout 120 ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s $size -n 20 -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 120 ibv_rc_pingpong -d rxe0 -g "$g0" -p "$P_PINGPONG" -s $size -n 20 -c 10.0.0.2
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
		# rxe serves, softroce connects.
		timeout 120 ibv_rc_pingpong -d rxe0 -g "$g0" -p "$P_PINGPONG" -s $size -n 20 -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen - "$P_PINGPONG"
		ip netns exec b timeout 120 ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s $size -n 20 -c 10.0.0.1
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}
