# shellcheck shell=bash
# The short lossy case for the debug kernel: go-back-N, then selective
# repeat (the responder keeps what comes past a gap).
#
# layers: debug
test_rc_loss_short() {
	rc_pair
	trap netem_cleanup EXIT
	netem loss 5% duplicate 2%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,3000 --burst 8 --burst-size 2000 --rounds 2
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sr --sizes 1,3000 --burst 8 --burst-size 2000 --rounds 2
}
