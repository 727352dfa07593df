# shellcheck shell=bash
# rc_duplicate.
#
# layers: stock
test_rc_duplicate() {
	rc_pair
	trap netem_cleanup EXIT
	netem duplicate 5%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,1025,20000,65536 --burst 32 --burst-size 3000 --rounds 2
	netem_cleanup
	netem duplicate 5% loss 3%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,20000 --burst 32 --burst-size 3000 --rounds 2
	netem_stats
}
