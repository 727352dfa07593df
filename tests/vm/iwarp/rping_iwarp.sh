# shellcheck shell=bash
# rping_iwarp: rping's data checked both ways, at a size under one
# segment, about an MSS, 9000 (several segments, FPDUs not matching
# them) and rping's largest.
#
# layers: stock
test_rping_iwarp() {
	iwarp_pair
	local size
	for size in 30 1500 9000 65535; do
		rping_run b - 10.0.0.2 10 "$size"
		rping_run - b 10.0.0.1 10 "$size"
	done
	rping_run b - 10.0.0.2 200 4096
}
