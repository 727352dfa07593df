# shellcheck shell=bash
# rc_loop: a device talking to its own addresses, over IPv4 and IPv6,
# takes softroce's loop (kernel/roce/net.c) rather than IP and lo: the
# transfers check their bytes, no RoCE packet shows on lo, and the device
# counts what it sent. A message of several packets goes as few skbs
# (up to 64 KiB of payload each by reference, 31 KiB where it must be
# copied; loop_merged_packets counts the packets that went in another's
# skb). The receive side still finds the device by the destination
# address, as it did for packets from lo. A peer in another namespace
# still gets real packets with good ICRCs (rc_transfers, the
# wire and interop tests).
#
# layers: stock debug
test_rc_loop() {
	rdma link add sr0 type softroce netdev veth0
	tcpdump -i lo -n -U -w "$TEST_TMP"/lo.pcap udp port 4791 2>/dev/null &
	local cap=$! before sent merged n
	sleep 1
	before=$(counter sr0 tx_packets)
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr0 ::ffff:10.0.0.1
	"$RCTEST" sr0 fd00::1 sr0 fd00::1
	sent=$(($(counter sr0 tx_packets) - before))
	merged=$(counter sr0 loop_merged_packets)
	sleep 1
	kill -INT $cap
	wait $cap
	n=$(tcpdump -r "$TEST_TMP"/lo.pcap 2>/dev/null | wc -l)
	echo "sent $sent packets ($merged in another's skb); $n RoCE packets on lo"
	[ "$sent" -gt 100 ] && [ "$merged" -gt 50 ] && [ "$n" = 0 ]
}
