# shellcheck shell=bash
# ucmatose_iwarp.
#
# layers: stock
test_ucmatose_iwarp() {
	iwarp_pair
	ucma_run b - 10.0.0.2 -c 4 -C 20 -S 4096
	ucma_run - b 10.0.0.1 -c 2 -C 10 -S 100000
}
