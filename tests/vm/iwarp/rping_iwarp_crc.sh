# shellcheck shell=bash
# rping_iwarp_crc.
#
# layers: stock
test_rping_iwarp_crc() {
	modprobe softrdma mpa_crc=1 peer_to_peer=1
	iwarp_pair
	rping_run b - 10.0.0.2 20 65535
	rping_run - b 10.0.0.1 20 1000
}
