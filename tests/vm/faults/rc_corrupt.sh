# shellcheck shell=bash
# rc_corrupt: bit errors on the wire (netem corrupt flips a bit of a
# packet). The ICRC catches a flip past the IP and UDP headers; a SEND's
# or RDMA WRITE's packets after its first have it summed as their payload
# is copied into place (icrc.c), and a bad one is undone there and sent
# again, go-back-N and selective repeat. Every byte compared; ICRC errors
# counted.
#
# layers: stock
test_rc_corrupt() {
	local errs
	rc_pair
	trap netem_cleanup EXIT
	netem corrupt 3%
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 1,3000,65536 --burst 8 --burst-size 3000 --rounds 2
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sr --sizes 1,3000,65536 --burst 8 --burst-size 3000 --rounds 2
	errs=$(($(counter sr0 rx_icrc_errors) + $(counter sr1 rx_icrc_errors)))
	echo "ICRC errors counted: $errs"
	[ "$errs" -gt 0 ]
	netem_stats
}
