# shellcheck shell=bash
# Receiver not ready: a SEND waits 300 ms for its receive (rnr_retry 7 is
# infinite); over a clean and a lossy link.
#
# layers: stock
test_rc_rnr() {
	rc_pair
	"$RCTEST" "${RC_AB[@]}" --sizes 1 --rnr-ms 300
	trap netem_cleanup EXIT
	netem loss 5%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,4096 --rnr-ms 300
}
