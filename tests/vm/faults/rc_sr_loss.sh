# shellcheck shell=bash
# rc_sr_loss: selective repeat, agreed on with ibv_set_ece by both QPs (as
# the RDMA CM does), over 5 % loss with duplicates and reordering on both
# veths: every transfer's bytes checked (verbs_rc), the responder kept
# what came past a gap (sr_ooo_held) and the requester sent the NAKed
# packets alone again (sr_retransmits), not the window behind them. Then
# through the RDMA CM, which negotiates it by itself: rping's 64 KiB
# READs and WRITEs, verified at both ends, over 2 % loss.
#
# layers: stock
sr_count() {
	echo $(($(counter sr0 "$1") + $(ip netns exec b rdma statistic show link sr1/1 |
		tr -s ' ' '\n' | awk -v n="$1" 'f { print; exit } $0 == n { f = 1 }')))
}

test_rc_sr_loss() {
	rc_pair
	trap netem_cleanup EXIT
	netem loss 5% duplicate 1% reorder 10% delay 1ms
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sr --sizes 1,4096,65536 --iters 2
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sr --sizes 1,4096,20000 \
		--burst 32 --burst-size 2500 --rounds 2
	netem_stats
	local held resent
	held=$(sr_count sr_ooo_held) resent=$(sr_count sr_retransmits)
	echo "kept out of order: $held, sent again alone: $resent"
	[ "$held" -gt 0 ] && [ "$resent" -gt 0 ]
	netem_cleanup
	netem loss 2%
	rping_run b - 10.0.0.2 30 65535
	netem_stats
	echo "kept out of order: $(sr_count sr_ooo_held) (before: $held)"
	[ "$(sr_count sr_ooo_held)" -gt "$held" ]
}
