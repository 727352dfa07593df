# shellcheck shell=bash
# For the debug kernel: rping only.
#
# layers: debug
test_iwarp_kill_peer_short() {
	iwarp_pair
	kill_rping_both
	iwarp_gone
}
