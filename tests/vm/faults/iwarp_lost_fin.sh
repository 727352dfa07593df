# shellcheck shell=bash
# A lost FIN is sent again: a graceful close keeps its socket until TCP has
# the FIN acked (a released kernel socket retransmits nothing), and only
# then does the peer learn of the close. A namespace deleted while such a
# socket waits takes it along; the module unloads, nothing is left.
#
# layers: stock
# shellcheck disable=SC2154 # srv, cli, exit_rc: set by lib/ helpers
test_iwarp_lost_fin() {
	local srv
	trap 'ip netns exec b tc qdisc del dev veth1 clsact 2>/dev/null || true
		ip netns del c 2>/dev/null || true' EXIT
	iwarp_pair
	fin_drop b veth1
	fin_lost_rping b 10.0.0.1 "$P_AUX"
	sleep 2
	kill -0 "$srv" || { echo "the server ended without the FIN"; return 1; }
	ip netns exec b tc qdisc del dev veth1 clsact
	exits_within "$srv" 30
	[ "$exit_rc" = 0 ] || { cat "$TEST_TMP"/fin-srv.log; return 1; }
	rping_expect 3 64 "server ping data: " "$TEST_TMP"/fin-srv.log
	iwarp_left

	# Netns c, its veth pair and a device at each end; c's FINs dropped.
	ip netns add c
	ip link add vc0 type veth peer name vc1 netns c
	ip addr add 10.0.9.1/24 dev vc0
	ip link set vc0 up
	ip netns exec c ip addr add 10.0.9.2/24 dev vc1
	ip netns exec c ip link set vc1 up
	rdma link add si2 type softiwarp netdev vc0
	ip netns exec c rdma link add si3 type softiwarp netdev vc1
	fin_drop c vc1
	fin_lost_rping c 10.0.9.1 "$P_AUX2"
	ip netns del c
	# The server's peer is gone: it would wait for its keepalives.
	killtree "$srv" || true
	wait "$srv" || true
	# The pair goes with c, and both devices with it.
	wait_for 20 sh -c '! rdma link show | grep -q "si2\|si3"' ||
		{ echo "devices left: $(rdma link show)"; return 1; }
	iwarp_gone
}
