# shellcheck shell=bash
# What went on the wire, checked by others: Wireshark's RoCE dissector
# (payload heuristics off: they mistake payload bytes for protocols) and
# our own ICRC checker, independent of the kernel's.
#
# layers: stock
test_wire_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	tcpdump -i veth0 -w "$TEST_TMP"/wire.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 >/dev/null
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_write_bw -s 65536 -n 20 >/dev/null
	sleep 1
	kill -INT $cap
	wait $cap
	softrdma icrc-check "$TEST_TMP"/wire.pcap
	local n bad
	n=$(tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband 2>/dev/null | grep -c RRoCE)
	bad=$(tshark -r "$TEST_TMP"/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Warning"' 2>/dev/null | wc -l)
	echo "tshark: $n RoCEv2 packets, $bad malformed or flagged"
	[ "$n" -gt 1000 ] && [ "$bad" = 0 ]
}
