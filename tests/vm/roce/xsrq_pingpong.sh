# shellcheck shell=bash
# ibv_xsrq_pingpong (XRC: INI and TGT QPs, an XRC SRQ in a domain file)
# between softroce devices, polled and with completion events (-e).
# rdma_rxe has no XRC: nothing to run it against.
#
# layers: stock
# timeout: 120
# shellcheck disable=SC2086 # $args: several arguments
test_xsrq_pingpong() {
	rc_pair
	local g0 g1 args srv
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for args in "-s 4096" "-s 100 -e"; do
		ip netns exec b timeout 60 ibv_xsrq_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" \
			$args -n 50 -c 1 >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 60 ibv_xsrq_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" $args -n 50 10.0.0.2 ||
			{ cat "$TEST_TMP"/srv.log; return 1; }
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
		grep -q success "$TEST_TMP"/srv.log || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}
