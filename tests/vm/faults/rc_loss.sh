# shellcheck shell=bash
# rc_loss: RC over a lossy link, the trains of long messages kept (one lost
# takes all its packets: a burst loss that go-back-N recovers).
#
# layers: stock
test_rc_loss() {
	rc_pair
	trap netem_cleanup EXIT
	NETEM_TRAINS=1 netem loss 5%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,1025,4096,20000,65536 --iters 2
	netem_stats
}
