# shellcheck shell=bash
# rc_loss_burst.
#
# layers: stock
test_rc_loss_burst() {
	rc_pair
	trap netem_cleanup EXIT
	netem loss 5%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 3000 --burst 32 --burst-size 3000 --rounds 4
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1 --burst 64 --burst-size 1 --rounds 4
	netem_stats
}
