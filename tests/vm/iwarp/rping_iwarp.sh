# shellcheck shell=bash
# rping_iwarp.
#
# layers: stock
test_rping_iwarp() {
	iwarp_pair
	local size
	for size in 30 64 1000 1500 4096 9000 65535; do
		rping_run b - 10.0.0.2 10 "$size"
		rping_run - b 10.0.0.1 10 "$size"
	done
	rping_run b - 10.0.0.2 200 4096
}
