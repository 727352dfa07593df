# shellcheck shell=bash
# UC over a lossy link: a message that loses a packet is dropped by the
# responder (its receive goes to the next message, never completed in
# error); every message that arrives is whole, right and in order; the
# drops are counted.
#
# layers: stock
test_uc_loss() {
	rc_pair
	trap netem_cleanup EXIT
	netem loss 5%
	"$RCTEST" "${RC_AB[@]}" --uc --no-err --sizes 1,3000,20000 --iters 8
	netem_stats
	local drops
	drops=$(counter sr1 rx_uc_drops)
	echo "sr1 rx_uc_drops: $drops"
	[ "$drops" -gt 0 ]
}
