# shellcheck shell=bash
# perftest between softiwarp on veth0 and on veth1 (b), every size; the
# latency programs, then the bandwidth ones (each half takes minutes).
#
# layers: stock
test_perftest_iwarp() {
	iwarp_pair
	IW_PROGS="ib_send_lat ib_write_lat ib_read_lat" iw_matrix si1 b si0 - 10.0.0.2
}
