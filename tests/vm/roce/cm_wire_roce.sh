# shellcheck shell=bash
# The RDMA CM's MADs on the wire, checked by others: Wireshark's
# InfiniBand dissector decodes the CM messages (REQ, REP, RTU, DREQ) sent
# to and from QP 1 in UD SEND packets with a DETH, and finds nothing
# malformed; our ICRC checker agrees with every packet captured.
#
# layers: stock
# timeout: 120
test_cm_wire_roce() {
	rc_pair
	tcpdump -i veth0 -w "$TEST_TMP"/cm.pcap udp port 4791 2>/dev/null &
	local cap=$! f m req rep rtu dreq bad
	sleep 1
	rping_run b - 10.0.0.2 3 100
	rping_run - b 10.0.0.1 3 100
	sleep 1
	kill -INT $cap
	wait $cap
	softrdma icrc-check "$TEST_TMP"/cm.pcap
	f=(--only-protocols "frame,eth,ip,udp,infiniband")
	m='infiniband.bth.destqp == 1 && infiniband.deth.srcqp == 1 && infiniband.deth.q_key == 0x80010000'
	req=$(tshark -r "$TEST_TMP"/cm.pcap "${f[@]}" -Y "$m && infiniband.cm.req.localqpn" 2>/dev/null | wc -l)
	rep=$(tshark -r "$TEST_TMP"/cm.pcap "${f[@]}" -Y "$m && infiniband.cm.rep.localqpn" 2>/dev/null | wc -l)
	rtu=$(tshark -r "$TEST_TMP"/cm.pcap "${f[@]}" -Y "$m && infiniband.cm.rtu.localcommid" 2>/dev/null | wc -l)
	dreq=$(tshark -r "$TEST_TMP"/cm.pcap "${f[@]}" -Y "$m && infiniband.cm.dreq.localcommid" 2>/dev/null | wc -l)
	bad=$(tshark -r "$TEST_TMP"/cm.pcap "${f[@]}" \
		-Y '_ws.malformed || _ws.expert.severity >= "Warning"' 2>/dev/null | wc -l)
	echo "tshark: REQ $req, REP $rep, RTU $rtu, DREQ $dreq; $bad malformed or flagged"
	[ "$req" -ge 2 ] && [ "$rep" -ge 2 ] && [ "$rtu" -ge 2 ] && [ "$dreq" -ge 2 ] && [ "$bad" = 0 ]
}
