# shellcheck shell=bash
# UC on the wire, checked by others: Wireshark's RoCE dissector sees UC
# opcodes and nothing malformed, and our ICRC checker agrees with the
# kernel's (see wire_roce).
#
# layers: stock
test_wire_uc() {
	rc_pair
	# What a wire carries: the trains of a message (UDP GSO) cut into
	# their packets before the capture (see wire_roce), each ICRC checked.
	wire_gso off
	tcpdump -i veth0 -w "$TEST_TMP"/wire.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$RCTEST" "${RC_AB[@]}" --uc --sizes 0,1,3000 >/dev/null
	pingpong_softroce ibv_uc_pingpong 20 4096 >/dev/null
	sleep 1
	kill -INT $cap
	wait $cap
	wire_gso on
	softrdma icrc-check "$TEST_TMP"/wire.pcap
	local n uc bad
	n=$(tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband 2>/dev/null | grep -c RRoCE)
	uc=$(tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		-Y 'infiniband.bth.opcode >= 0x20 && infiniband.bth.opcode <= 0x2b' 2>/dev/null | wc -l)
	bad=$(tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Warning"' 2>/dev/null | wc -l)
	echo "tshark: $n RoCEv2 packets, $uc UC, $bad malformed or flagged"
	[ "$n" -gt 100 ] && [ "$uc" -gt 100 ] && [ "$bad" = 0 ]
}
