# shellcheck shell=bash
# perftest_interop_siw_server: every operation at sizes that take one FPDU
# (the latency programs, 2 bytes) and many (the bandwidth ones, 64 KiB):
# all of -a would take a quarter of an hour each way under TCG.
#
# layers: stock
test_perftest_interop_siw_server() {
	local rc=0

	siw_pair
	trap siw_cleanup EXIT
	IW_PROGS="ib_send_lat ib_write_lat ib_read_lat" IW_SIZES=2 \
		iw_matrix siw0 - si1 b 10.0.0.1 || rc=1
	IW_PROGS="ib_send_bw ib_write_bw ib_read_bw" IW_SIZES=65536 \
		iw_matrix siw0 - si1 b 10.0.0.1 || rc=1
	return $rc
}
