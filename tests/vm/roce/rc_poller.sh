# shellcheck shell=bash
# rc_poller: RC traffic with the send-queue poller on (poll_us=200):
# verbs_rc (every byte compared, the remote access error's status checked)
# between two softroce devices, then bursts posted back to back in
# loopback on one device and, as lists, between the two. The poller sends what the provider publishes without a
# kick while it has a CPU to itself, and hands the QPs back to their kicks
# when another task wants that CPU (verbs_rc spins on its CQs, so both
# happen on two vCPUs).
#
# layers: stock
# timeout: 300
test_rc_poller() {
	modprobe softrdma poll_us=200
	[ "$(cat /sys/module/softrdma/parameters/poll_us)" = 200 ]
	pgrep -x softrdma_poll >/dev/null || { echo "no softrdma_poll thread"; return 1; }
	rc_pair
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr0 ::ffff:10.0.0.1 --no-err --burst 32 --rounds 10
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --no-err --burst 32 --rounds 10 --list
}
