# shellcheck shell=bash
# The same matrix over sizes that take one, several and many FPDUs: all of
# -a would take a quarter of an hour each way under TCG, 1 MiB minutes.
#
# layers: stock
test_perftest_interop_siw_server() {
	siw_pair
	trap siw_cleanup EXIT
	IW_SIZES="2 65536" iw_matrix siw0 - si1 b 10.0.0.1
}
