# shellcheck shell=bash
# perftest's latency programs between softiwarp on veth0 and on veth1
# (b): the smallest size and 64 KiB (many FPDUs, by reference; every size,
# -a, took minutes; tools/lab bench sweeps the sizes). perftest_iwarp_bw:
# the bandwidth ones.
#
# layers: stock
test_perftest_iwarp() {
	iwarp_pair
	IW_SIZES="2 65536" IW_PROGS="ib_send_lat ib_write_lat ib_read_lat" iw_matrix si1 b si0 - 10.0.0.2
}
