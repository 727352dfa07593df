# shellcheck shell=bash
# A wildcard rdma_cm listener that cannot listen on a softiwarp device
# added later (a plain TCP socket holds its port in that device's
# namespace) does not cost the device: the listen is logged, the RDMA CM
# keeps si1, and rping connects through it.
#
# layers: stock
# timeout: 120
test_listen_fail_keeps_device() {
	local tcp srv
	rdma link add si0 type softiwarp netdev veth0
	ip netns exec b python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.listen()
time.sleep(120)' "$P_AUX" &
	tcp=$!
	wait_listen b "$P_AUX"
	rping -s -a 0.0.0.0 -p "$P_AUX" -C 1 >"$TEST_TMP/wild.log" 2>&1 &
	srv=$!
	wait_listen - "$P_AUX"
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	if ! wait_for 5 bash -c "dmesg | grep -q 'si1: cannot listen on 0.0.0.0:$P_AUX: -98'"; then
		echo "no log of the failed listen on si1"
		dmesg | tail -n 5
		return 1
	fi
	dmesg | grep "cannot listen on" | tail -n 1
	rping_run - b 10.0.0.1 5 64
	kill "$srv" "$tcp"
	wait "$srv" "$tcp" 2>/dev/null || true
	iwarp_gone
}
