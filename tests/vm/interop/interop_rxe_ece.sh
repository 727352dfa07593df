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
	# Only what goes to QP 1 (BTH DestQP, UDP payload bytes 5 to 7): the
	# CM MADs cm_ece_wire reads, not rping's traffic (tshark took 30 s
	# over the thousands of packets of 1000 pings).
	tcpdump -i veth0 -w "$TEST_TMP"/cm.pcap \
		'udp dst port 4791 and (udp[12:4] & 0xffffff) = 1' 2>"$TEST_TMP"/cap.err &
	local cap=$!
	wait_for 10 grep -q 'listening on' "$TEST_TMP"/cap.err
	ece_rping - b 10.0.0.1 rxe0 none sr1 gbn || { kill -INT $cap; return 1; }
	# The REQ and REP went out before the pings: tcpdump has them.
	kill -INT $cap
	wait $cap
	cm_ece_wire "$TEST_TMP"/cm.pcap 3 0 || return 1
	ece_rping b - 10.0.0.2 sr1 gbn rxe0 none
}
