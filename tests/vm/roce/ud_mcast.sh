# shellcheck shell=bash
# Multicast on softroce (verbs_ud.cpp --mcast): UD QPs on two devices
# attached to one group, IPv4 (::ffff:239.x) and IPv6 (ff0e::), every
# attached QP with the right Q_Key gets each datagram (bytes compared),
# the sender's device by loopback; detached QPs get nothing; the IP group
# follows the attachments. The datagrams on the wire go to QP 0xFFFFFF,
# decode cleanly in Wireshark and carry good ICRCs.
#
# layers: stock
# timeout: 120
test_ud_mcast() {
	rc_pair
	tcpdump -i veth0 -w "$TEST_TMP"/mc.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$UDTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --mcast ::ffff:239.1.2.3
	"$UDTEST" sr0 fd00::1 sr1 fd00::2 --mcast ff0e::5:1
	sleep 1
	kill -INT $cap
	wait $cap
	# Each run sends 7 datagrams to the group.
	mcast_wire "$TEST_TMP"/mc.pcap 14
	mcast_left '239\.1\.2\.3|ff0e::5:1'
}
