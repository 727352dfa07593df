# shellcheck shell=bash
# The RDMA CM over softroce: its MADs go over the GSI QP (QP 1) as UD
# datagrams, then rping (data verified with -V) and ucmatose run over the
# RC QPs it connected, between two softroce devices, both ways, IPv4 and
# IPv6.
#
# layers: stock
# timeout: 240
test_rping_roce() {
	rc_pair
	local size
	for size in 64 1000 4096 65535; do
		rping_run b - 10.0.0.2 10 "$size"
		rping_run - b 10.0.0.1 10 "$size"
	done
	rping_run b - fd00::2 10 4096
	ucma_run b - 10.0.0.2 -c 2 -C 10 -S 4096
	ucma_run - b 10.0.0.1 -c 2 -C 10 -S 100000
	# Every MAD had a receive waiting and the right Q_Key.
	counter_is sr0 rx_qkey_drops 0
	counter_is sr0 rx_ud_no_recv_drops 0
	[ "$(counter sr0 rx_packets)" -gt 0 ]
}
