# shellcheck shell=bash
# ucmatose_interop_siw.
#
# layers: stock
test_ucmatose_interop_siw() {
	siw_pair
	trap siw_cleanup EXIT
	ucma_run b - 10.0.0.2 -c 4 -C 20 -S 4096
	ucma_run - b 10.0.0.1 -c 4 -C 20 -S 100000
}
