# shellcheck shell=bash
# User UD QPs and address handles between two softroce devices:
# ibv_ud_pingpong with its received buffers checked (-c) at sizes up to
# the port's MTU (1024 on a 1500-byte veth), over IPv4 and IPv6 GIDs.
#
# layers: stock
# timeout: 240
test_ud_roce() {
	rc_pair
	local addr size g0 g1 srv
	for addr in 10.0.0 fd00:; do
		if [ "$addr" = fd00: ]; then
			g0=$(gid_index sr0 fd00::1)
			g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 fd00::2")
		else
			g0=$(gid_index sr0 ::ffff:10.0.0.1)
			g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
		fi
		for size in 1 512 1024; do
			ip netns exec b timeout 60 ibv_ud_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s $size -n 50 -c >"$TEST_TMP"/srv.log 2>&1 &
			srv=$!
			wait_listen b "$P_PINGPONG"
			timeout 60 ibv_ud_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -s $size -n 50 -c 10.0.0.2
			wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
		done
	done
	counter_is sr0 rx_qkey_drops 0
	# Larger than the MTU: the sender refuses it, nothing is sent.
	expect_fail "larger than port MTU" ibv_ud_pingpong -d sr0 -g "$g0" -s 2048 -p "$P_PINGPONG" 10.0.0.2
}
