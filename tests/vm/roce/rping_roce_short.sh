# shellcheck shell=bash
# For the debug kernel: the RDMA CM over softroce (GSI QP, UD MADs,
# address handles made and destroyed in atomic context), a few pings each
# way and a short UD pingpong, then the module unloaded with the devices.
#
# layers: debug
# timeout: 600
test_rping_roce_short() {
	rc_pair
	rping_run b - 10.0.0.2 3 64
	rping_run - b 10.0.0.1 3 65535
	local g0 g1 srv
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	ip netns exec b timeout 120 ibv_ud_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -s 512 -n 5 -c \
		>"$TEST_TMP"/srv.log 2>&1 &
	srv=$!
	wait_listen b "$P_PINGPONG"
	timeout 120 ibv_ud_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -s 512 -n 5 -c 10.0.0.2
	wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	rdma link delete sr0
	ip netns exec b rdma link delete sr1
	modprobe -r softrdma
}
