# shellcheck shell=bash
# rc_reorder.
#
# layers: stock
test_rc_reorder() {
	rc_pair
	trap netem_cleanup EXIT
	# netem reorders by sending some packets at once and delaying the rest.
	netem delay 5ms reorder 75% 50%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,4096,20000 --burst 32 --burst-size 2500 --rounds 2
	netem_cleanup
	netem loss 3% delay 3ms 2ms
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,4096,20000 --burst 32 --burst-size 2500 --rounds 2
	netem_stats
}
