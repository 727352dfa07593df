# shellcheck shell=bash
# perftest_interop_siw_client.
#
# layers: stock
test_perftest_interop_siw_client() {
	siw_pair
	trap siw_cleanup EXIT
	IW_SIZES="2 65536" iw_matrix si1 b siw0 - 10.0.0.2
}
