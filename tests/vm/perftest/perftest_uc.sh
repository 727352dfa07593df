# shellcheck shell=bash
# perftest_uc: perftest's UC tests between two softroce devices, small
# counts (UC does not resend: a lost message would stall the bandwidth
# tests, and none is lost on the veth pair at this rate).
#
# layers: stock
# timeout: 300
test_perftest_uc() {
	rc_pair
	local t size
	for t in ib_send_lat ib_write_lat ib_send_bw ib_write_bw; do
		for size in 2 4096; do
			echo "== $t -c UC -s $size"
			"$PERF" sr1 b sr0 - 10.0.0.2 $t -c UC -s $size -n 20
		done
	done
}
