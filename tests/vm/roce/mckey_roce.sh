# shellcheck shell=bash
# The RDMA CM's multicast over softroce, IPv4 (the kernel's RDMA CM
# refuses IPv6 groups on RoCEv2): mckey receivers join a group
# (rdma_join_multicast, then ibv_attach_mcast in librdmacm), two on one
# device and one on the sender's own (loopback), and each gets every
# datagram the sender sends; then the other way with a send-only sender
# (joined, not attached) and every QP made with
# IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (mckey -l). After the processes exit
# the IP groups are left. The datagrams on the wire decode cleanly, go to
# QP 0xFFFFFF at a multicast MAC, ICRCs good.
#
# layers: stock
# timeout: 120
test_mckey_roce() {
	rc_pair
	tcpdump -i veth0 -w "$TEST_TMP"/mc.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	mckey_run 239.2.0.1 20 512 - 10.0.0.1 b 10.0.0.2 b 10.0.0.2 - 10.0.0.1
	MCKEY_SENDONLY=1 MCKEY_OPTS=-l mckey_run 239.2.0.2 20 1024 b 10.0.0.2 \
		- 10.0.0.1 - 10.0.0.1 b 10.0.0.2
	sleep 1
	kill -INT $cap
	wait $cap
	mcast_wire "$TEST_TMP"/mc.pcap 40
	mcast_left '239\.2\.0\.'
}
