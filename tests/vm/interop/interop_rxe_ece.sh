# shellcheck shell=bash
# interop_rxe_ece: softroce and rdma_rxe through the RDMA CM (rping, every
# byte checked), each side the server once: rxe has no ECE (its REQ
# carries vendor 0, its REP echoes ours with no options), so softroce's
# QP runs go-back-N (rdma res: retx gbn). On the wire, softroce's REQ
# offers selective repeat and ECN (options 3) and rxe's REP takes none.
#
# layers: stock
# timeout: 240
test_interop_rxe_ece() {
	interop_setup
	trap interop_cleanup EXIT
	tcpdump -i veth0 -w "$TEST_TMP"/cm.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	ece_rping - b 10.0.0.1 rxe0 none sr1 gbn || { kill -INT $cap; return 1; }
	sleep 1
	kill -INT $cap
	wait $cap
	cm_ece_wire "$TEST_TMP"/cm.pcap 3 0 || return 1
	ece_rping b - 10.0.0.2 sr1 gbn rxe0 none
}
