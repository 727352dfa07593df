# shellcheck shell=bash
# The IPv6 wire, checked like wire_roce checks IPv4.
#
# layers: stock
test_wire_roce_ipv6() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local x0 x1
	x0=$(gid_index sr0 fd00::1)
	x1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 fd00::2")
	# perftest.sh gives both sides the same index.
	[ -n "$x0" ] && [ "$x0" = "$x1" ]
	# What a wire carries: the trains of a message (UDP GSO) cut into
	# their packets before the capture (see wire_roce), each ICRC checked.
	wire_gso off
	tcpdump -i veth0 -w "$TEST_TMP"/wire6.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$RCTEST" sr0 fd00::1 sr1 fd00::2 >"$TEST_TMP"/rc6.log || { cat "$TEST_TMP"/rc6.log; false; }
	# perftest exchanges over TCP/IPv4; its GIDs (GIDX) are the IPv6 ones.
	GIDX=$x1 "$PERF" sr1 b sr0 - 10.0.0.2 ib_write_bw -s 65536 -n 20
	sleep 1
	kill -INT $cap
	wait $cap
	wire_gso on
	# The three tshark passes side by side (each took seconds), the
	# ICRCs checked meanwhile.
	local n v4 bad p1 p2 p3
	tshark -r "$TEST_TMP"/wire6.pcap --only-protocols frame,eth,ipv6,udp,infiniband \
		>"$TEST_TMP"/wire6.txt 2>/dev/null &
	p1=$!
	tshark -r "$TEST_TMP"/wire6.pcap -Y ip >"$TEST_TMP"/wire6-v4.txt 2>/dev/null &
	p2=$!
	tshark -r "$TEST_TMP"/wire6.pcap --only-protocols frame,eth,ipv6,udp,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Warning"' >"$TEST_TMP"/wire6-bad.txt 2>/dev/null &
	p3=$!
	softrdma icrc-check "$TEST_TMP"/wire6.pcap
	wait $p1 || true
	wait $p2 || true
	wait $p3 || true
	n=$(grep -c 'fd00::[12] .*RRoCE' "$TEST_TMP"/wire6.txt)
	v4=$(wc -l <"$TEST_TMP"/wire6-v4.txt)
	bad=$(wc -l <"$TEST_TMP"/wire6-bad.txt)
	echo "tshark: $n RoCEv2 packets over IPv6, $v4 over IPv4, $bad malformed or flagged"
	[ "$n" -gt 1000 ] && [ "$v4" = 0 ] && [ "$bad" = 0 ]
}
