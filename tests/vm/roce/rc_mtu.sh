# shellcheck shell=bash
# Path MTUs: ibv_rc_pingpong (server in b) at sizes around the MTU, and
# verbs_rc around the 256 and 4096 boundaries. 4096 needs jumbo frames.
#
# layers: stock
test_rc_mtu() {
	rc_pair
	trap 'ip link set veth0 mtu 1500; ip netns exec b ip link set veth1 mtu 1500' EXIT
	ip link set veth0 mtu 9000
	ip netns exec b ip link set veth1 mtu 9000
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*4096'
	ip netns exec b ibv_devinfo -d sr1 | grep -q 'active_mtu:[[:space:]]*4096'
	local g0 g1 mtu size srv
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for mtu in 256 1024 4096; do
		for size in 1 4095 4096 65536; do
			echo "== -m $mtu -s $size"
			ip netns exec b timeout 120 ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -m $mtu -s $size -n 5 -c \
				>"$TEST_TMP"/srv.log 2>&1 &
			srv=$!
			wait_listen b "$P_PINGPONG"
			timeout 120 ibv_rc_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -m $mtu -s $size -n 5 -c 10.0.0.2
			wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
		done
	done
	"$RCTEST" "${RC_AB[@]}" --mtu 256 --sizes 0,255,256,257,511,512,513,4096 --no-err \
		--burst 16 --burst-size 257
	"$RCTEST" "${RC_AB[@]}" --mtu 4096 --sizes 4095,4096,4097,8191,8192,8193,65536 \
		--burst 16 --burst-size 4097
}
