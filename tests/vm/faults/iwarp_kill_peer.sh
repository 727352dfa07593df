# shellcheck shell=bash
# iwarp_kill_peer.
#
# layers: stock
# shellcheck disable=SC2154 # srv, cli, exit_rc: set by lib/ helpers
test_iwarp_kill_peer() {
	iwarp_pair
	kill_rping_both
	wait_for 10 iwarp_left
	send_bw_long
	kill -KILL "$cli"
	exits_within "$srv" 30
	wait "$cli" || true
	exit_failed
	send_bw_flushed "$TEST_TMP"/perf-srv.log server
	send_bw_long
	kill -KILL "$srv"
	exits_within "$cli" 30
	wait "$srv" || true
	exit_failed
	send_bw_flushed "$TEST_TMP"/perf-cli.log client
	iwarp_gone
}
