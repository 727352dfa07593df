# shellcheck shell=bash
# What went on the wire, checked by others: Wireshark's RoCE dissector
# (payload heuristics off: they mistake payload bytes for protocols) and
# our own ICRC checker, independent of the kernel's. A message's packets
# leave as trains (one UDP GSO skb each, gso_merged_packets), which a
# veth passes on whole and a capture on it would show as one datagram:
# with UDP segmentation off on both veths (wire_gso), the stack cuts them
# before the capture, as a NIC would on a wire, and each packet's own
# ICRC (written before the cut, for the headers it gets from it) is
# checked.
#
# layers: stock
test_wire_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	# What a wire carries: the trains of a message (UDP GSO) cut into
	# their packets before the capture (see wire_roce), each ICRC checked.
	wire_gso off
	tcpdump -i veth0 -w "$TEST_TMP"/wire.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	# Quiet when they pass; what they printed when one fails.
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 >"$TEST_TMP"/rc.log 2>&1 ||
		{ tail -n 30 "$TEST_TMP"/rc.log; false; }
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_write_bw -s 65536 -n 20 >"$TEST_TMP"/perf.log ||
		{ cat "$TEST_TMP"/perf.log; false; }
	sleep 1
	kill -INT $cap
	wait $cap
	wire_gso on
	# The two tshark passes side by side (each took seconds), the ICRCs
	# checked meanwhile.
	local n bad all flagged
	tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		>"$TEST_TMP"/wire.txt 2>/dev/null &
	all=$!
	tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Warning"' >"$TEST_TMP"/wire-bad.txt 2>/dev/null &
	flagged=$!
	softrdma icrc-check "$TEST_TMP"/wire.pcap
	wait $all || true
	wait $flagged || true
	n=$(grep -c RRoCE "$TEST_TMP"/wire.txt)
	bad=$(wc -l <"$TEST_TMP"/wire-bad.txt)
	echo "tshark: $n RoCEv2 packets, $bad malformed or flagged"
	[ "$n" -gt 1000 ] && [ "$bad" = 0 ] && [ "$(counter sr0 gso_merged_packets)" -gt 500 ]
}
