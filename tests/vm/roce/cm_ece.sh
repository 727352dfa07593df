# shellcheck shell=bash
# cm_ece: two softroce devices connected through the RDMA CM (rping, every
# byte checked) agree on selective repeat by ECE, with no change to the
# program: librdmacm asks each provider (ibv_query_ece), the REQ and REP
# carry our vendor id 0x025352 and the options, SR and ECN (seen on the wire by
# tshark), and while connected `rdma res show qp -dd` says retx sr on
# both QPs. With softrdma's roce_sr=0, the same connection runs
# go-back-N on both.
#
# layers: stock
# timeout: 240
test_cm_ece() {
	rc_pair
	tcpdump -i veth0 -w "$TEST_TMP"/cm.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	ece_rping b - 10.0.0.2 sr1 sr sr0 sr || { kill -INT $cap; return 1; }
	sleep 1
	kill -INT $cap
	wait $cap
	cm_ece_wire "$TEST_TMP"/cm.pcap 3 3 || return 1
	echo "== roce_sr=0"
	echo 0 >/sys/module/softrdma/parameters/roce_sr
	ece_rping b - 10.0.0.2 sr1 gbn sr0 gbn
	local rc=$?
	echo 1 >/sys/module/softrdma/parameters/roce_sr
	return $rc
}
