# shellcheck shell=bash
# rc_poller: RC traffic with the send-queue poller (poll_us=200, the
# default) and without it (poll_us=0: every post to an idle SQ kicks):
# verbs_rc (every byte compared, the remote access error's status checked)
# between two softroce devices, then bursts posted back to back in
# loopback on one device and, as lists, between the two. The poller sends
# what the provider publishes without a kick while it has a CPU to itself,
# hands the QPs back to their kicks when another task wants that CPU
# (verbs_rc spins on its CQs, so both happen on two vCPUs), and leaves a
# QP whose last message was 4 KiB or more to its kicks (verbs_rc's sizes
# go up to 64 KiB). UD QPs always go by kicks (ibv_ud_pingpong's
# datagrams, checked with -c, leave poller_sends where it was), and with
# poll_us=0 the poller never sends.
#
# layers: stock
# timeout: 300
test_rc_poller() {
	local us p0 p1
	for us in 200 0; do
		echo "== poll_us=$us"
		modprobe softrdma poll_us=$us
		[ "$(cat /sys/module/softrdma/parameters/poll_us)" = $us ]
		pgrep -x softrdma_poll >/dev/null || { echo "no softrdma_poll thread"; return 1; }
		rc_pair
		"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
		"$RCTEST" sr0 ::ffff:10.0.0.1 sr0 ::ffff:10.0.0.1 --no-err --burst 32 --rounds 10
		"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --no-err --burst 32 --rounds 10 --list
		p0=$(counter sr0 poller_sends)
		echo "sr0: sq_kicks $(counter sr0 sq_kicks) poller_sends $p0"
		[ "$(counter sr0 sq_kicks)" -gt 0 ]
		if [ "$us" = 0 ]; then
			[ "$p0" = 0 ]
		fi
		# UD: by kicks only.
		p1=$(ip netns exec b bash -c "$(declare -f counter); counter sr1 poller_sends")
		pingpong_softroce ibv_ud_pingpong 200 512
		counter_is sr0 poller_sends "$p0"
		[ "$(ip netns exec b bash -c "$(declare -f counter); counter sr1 poller_sends")" = "$p1" ]
		rdma link delete sr0
		ip netns exec b rdma link delete sr1
		modprobe -r softrdma
	done
	# The default, as a plain modprobe loads it.
	modprobe softrdma
	[ "$(cat /sys/module/softrdma/parameters/poll_us)" = 200 ]
}
