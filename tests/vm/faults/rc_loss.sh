# shellcheck shell=bash
# rc_loss.
#
# layers: stock
test_rc_loss() {
	rc_pair
	trap netem_cleanup EXIT
	netem loss 5%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,1025,4096,20000,65536 --iters 2
	netem_stats
}
