# shellcheck shell=bash
# Interop (the same matrix): softroce serves, rxe connects; then the other
# way round.
#
# layers: stock
test_perftest_interop_rxe_server_sr() {
	interop_setup
	trap interop_cleanup EXIT
	perf_matrix sr1 b rxe0 - 10.0.0.2
}
