# shellcheck shell=bash
# The RDMA CM's multicast over softroce: mckey receivers join a group
# (rdma_join_multicast, then ibv_attach_mcast), two on one device and one
# on the sender's own device (loopback), and each gets every datagram the
# sender sends; both directions, the second with a send-only sender
# (joined, not attached). After the processes exit, the IP group
# is left. The datagrams on the wire decode cleanly, ICRCs good.
#
# layers: stock
# timeout: 180
test_mckey_roce() {
	rc_pair
	tcpdump -i veth0 -w "$TEST_TMP"/mc.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	mckey_run 239.2.0.1 20 512 - 10.0.0.1 b 10.0.0.2 b 10.0.0.2 - 10.0.0.1
	MCKEY_SENDONLY=1 mckey_run 239.2.0.2 20 1024 b 10.0.0.2 - 10.0.0.1 - 10.0.0.1 b 10.0.0.2
	sleep 1
	kill -INT $cap
	wait $cap
	mcast_wire "$TEST_TMP"/mc.pcap 40
	mcast_left '239\.2\.0\.'
}
