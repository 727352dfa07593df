# shellcheck shell=bash
# perftest_uc: perftest's UC tests between two softroce devices, small
# counts (UC does not resend: a lost message would stall the bandwidth
# tests, and none is lost on the veth pair at this rate): the latency
# tests at 2 B, the bandwidth tests at 4 packets a message.
#
# layers: stock
# timeout: 300
test_perftest_uc() {
	rc_pair
	local t
	for t in ib_send_lat ib_write_lat; do
		echo "== $t -c UC -s 2"
		"$PERF" sr1 b sr0 - 10.0.0.2 $t -c UC -s 2 -n 20
	done
	for t in ib_send_bw ib_write_bw; do
		echo "== $t -c UC -s 4096"
		"$PERF" sr1 b sr0 - 10.0.0.2 $t -c UC -s 4096 -n 20
	done
}
