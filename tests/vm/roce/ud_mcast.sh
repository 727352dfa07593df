# shellcheck shell=bash
# Multicast on softroce (verbs_ud.cpp --mcast): three UD QPs on two
# devices (sr0, and sr1 in netns b) attached to one group, IPv4
# (::ffff:239.x) and IPv6 (ff0e::), each gets its own copy of every
# datagram (bytes, GRH, source QP), the sender's device's by loopback;
# IBV_QP_CREATE_BLOCK_SELF_MCAST_LB keeps a QP's own datagrams from it;
# detached QPs get nothing; detaching what is not attached is EINVAL; the
# attach limit is ENOMEM; the IP group follows the attachments and QP
# destruction. On the wire the datagrams go to QP 0xFFFFFF with a
# multicast MAC, decode cleanly in Wireshark and carry good ICRCs.
#
# layers: stock
# timeout: 120
test_ud_mcast() {
	rc_pair
	tcpdump -i veth0 -e -w "$TEST_TMP"/mc.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$UDTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --mcast ::ffff:239.1.2.3 ::ffff:239.1.2.4
	"$UDTEST" sr0 fd00::1 sr1 fd00::2 --mcast ff0e::5:1 ff0e::5:2
	sleep 1
	kill -INT $cap
	wait $cap
	# Each run sends 9 datagrams to the group with QP 0xFFFFFF.
	mcast_wire "$TEST_TMP"/mc.pcap 18
	mcast_left '239\.1\.2\.[34]|ff0e::5:[12]'
}
