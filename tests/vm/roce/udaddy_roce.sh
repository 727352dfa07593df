# shellcheck shell=bash
# The RDMA CM on UD over softroce: udaddy resolves address and route,
# "connects" with SIDR REQ/REP over the GSI QP (which tells the client
# the server's QP number and Q_Key) and sends datagrams both ways; both
# directions, IPv4 and IPv6.
#
# layers: stock
# timeout: 120
test_udaddy_roce() {
	rc_pair
	udaddy_run b - 10.0.0.2 10 100
	udaddy_run - b 10.0.0.1 10 1000
	udaddy_run b - fd00::2 10 512
	counter_is sr0 rx_qkey_drops 0
}
