# shellcheck shell=bash
# Abortive close by a TCP reset (ss -K: the socket is destroyed, the peer
# gets an RST) in the middle of a transfer: both sides end in bounded time,
# rping with a disconnect, ib_send_bw with flushed work requests.
#
# layers: stock
# shellcheck disable=SC2154 # srv, cli, exit_rc: set by lib/ helpers
test_iwarp_reset() {
	ss -K dst 10.0.0.9 >/dev/null 2>&1 || {
		echo "no ss -K (CONFIG_INET_DIAG_DESTROY) in this kernel: skipped"
		return 0
	}
	iwarp_pair
	local o
	rping_long
	o=$(ss -K dst 10.0.0.2 dport = "$P_RPING")
	echo "$o" | grep -q ESTAB || { echo "no socket reset: $o"; return 1; }
	exits_within "$cli" 30
	exits_within "$srv" 30
	rping_cut cli
	rping_cut srv
	send_bw_long
	o=$(ip netns exec b ss -K src 10.0.0.2 sport = "$P_SENDBW" dst 10.0.0.1)
	echo "$o" | grep -q ESTAB || { echo "no socket reset: $o"; return 1; }
	exits_within "$cli" 30
	exit_failed
	exits_within "$srv" 30
	exit_failed
	send_bw_flushed "$TEST_TMP"/perf-cli.log client
	send_bw_flushed "$TEST_TMP"/perf-srv.log server
	iwarp_gone
}
