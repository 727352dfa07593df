# shellcheck shell=bash
# rc_gbn_queue: go-back-N through a short queue. A token bucket on both
# veths (100 Mbit/s, a 32 KiB queue) drops what a window's burst puts
# past its queue; without selective repeat (perftest agrees on no ECE),
# each loss sends the rest of the window again. The loss window cuts the
# burst (gbn_window_cuts), so that the resend is not lost the same way
# until the retries run out: RC bursts of mixed operations, every byte
# checked, and perftest's ib_write_bw over 8 QPs (which ended in
# IBV_WC_RETRY_EXC_ERR when every resend was the whole window).
#
# layers: stock
test_rc_gbn_queue() {
	local cuts
	rc_pair
	modprobe sch_tbf
	trap 'tc qdisc del dev veth0 root 2>/dev/null; ip netns exec b tc qdisc del dev veth1 root 2>/dev/null' EXIT
	tc qdisc add dev veth0 root tbf rate 100mbit burst 16kb limit 32kb
	ip netns exec b tc qdisc add dev veth1 root tbf rate 100mbit burst 16kb limit 32kb
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 65536 --burst 4 --burst-size 30000 --rounds 4
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_write_bw -s 65536 -n 100 -q 8
	tc -s qdisc show dev veth0
	ip netns exec b tc -s qdisc show dev veth1
	cuts=$(rdma statistic show link sr0/1 | tr -s ' ' '\n' | grep -A1 -x gbn_window_cuts | tail -n 1)
	echo "gbn_window_cuts $cuts"
	[ "${cuts:-0}" -gt 0 ] || { echo "no loss window was cut: the test lost nothing"; return 1; }
}
