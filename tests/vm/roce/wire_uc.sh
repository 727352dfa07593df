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
	# Two tshark passes side by side, the ICRCs checked meanwhile: every
	# frame's line, and the UC frames and the malformed or flagged ones
	# counted in one (io,stat over the whole capture; a pass a count took
	# seconds).
	local n uc bad all flagged
	tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		>"$TEST_TMP"/wire.txt 2>/dev/null &
	all=$!
	tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband -q \
		-z 'io,stat,0,infiniband.bth.opcode >= 0x20 && infiniband.bth.opcode <= 0x2b,_ws.malformed || _ws.expert.severity >= "Warning"' \
		>"$TEST_TMP"/wire-stat.txt 2>/dev/null &
	flagged=$!
	softrdma icrc-check "$TEST_TMP"/wire.pcap
	wait $all || true
	wait $flagged || true
	n=$(grep -c RRoCE "$TEST_TMP"/wire.txt)
	read -r uc bad < <(awk -F'|' '/<>/ { print $3 + 0, $5 + 0; seen = 1; exit }
		END { if (!seen) print 0, 0 }' "$TEST_TMP"/wire-stat.txt)
	echo "tshark: $n RoCEv2 packets, $uc UC, $bad malformed or flagged"
	[ "$n" -gt 100 ] && [ "$uc" -gt 100 ] && [ "$bad" = 0 ]
}
