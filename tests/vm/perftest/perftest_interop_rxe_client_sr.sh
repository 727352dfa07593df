# shellcheck shell=bash
# perftest_interop_rxe_client_sr.
#
# layers: stock
test_perftest_interop_rxe_client_sr() {
	interop_setup
	trap interop_cleanup EXIT
	perf_matrix rxe0 - sr1 b 10.0.0.1
}
