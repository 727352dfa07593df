# shellcheck shell=bash
# A dead link: the requester must give up with IBV_WC_RETRY_EXC_ERR after
# retry_cnt timeouts, not hang.
#
# layers: stock
test_rc_dead_link() {
	rc_pair
	trap netem_cleanup EXIT
	netem loss 100%
	local o
	if o=$("$RCTEST" "${RC_AB[@]}" --timeout 10 --retry 2 --no-err --wait 5 --sizes 1 2>&1); then
		echo "$o"
		echo "verbs_rc passed over a dead link"
		return 1
	fi
	echo "$o"
	echo "$o" | grep -q '^not ok 5 - SEND 1 B completes at the sender: transport retry counter exceeded'
	echo "$o" | grep -q '^5 checks, 1 failed$'
}
