# shellcheck shell=bash
# rc_ecn: ECN agreed on by both QPs (ibv_set_ece's bit 1, as the RDMA CM
# does): sr0's requests go out ECN-capable, and a queue on its veth marks
# 5 % of them CE (netem's ecn: marked, where a packet not ECN-capable
# would be dropped). sr1 answers the marks with CNPs, sr0 takes them and
# paces itself (DCQCN); every transfer's bytes are checked (verbs_rc),
# and nothing was lost (sr1 received every packet sr0 sent). On the wire (captured
# where the marks arrive, by tshark): every request ECT(0) or CE, the
# ACKs not ECN-capable, and the CNPs as RoCEv2 Annex A17 has them (opcode
# 0x81, BECN, 16 reserved bytes). Then the same QPs without ECE: nothing
# ECN-capable, so nothing marked.
#
# layers: stock
count_b() {
	ip netns exec b rdma statistic show link sr1/1 | tr -s ' ' '\n' |
		awk -v n="$1" 'f { print; exit } $0 == n { f = 1 }'
}

# on_wire FILTER...: how many captured packets match each FILTER, one
# count a line: one tshark pass for them all (io,stat over the whole
# capture counts each filter's frames; a pass each took seconds).
on_wire() {
	local f z=io,stat,0
	for f in "$@"; do
		f=${f//[$'\n\t']/ }
		z+=",udp.dstport == 4791 && ($f)"
	done
	tshark -r "$TEST_TMP"/ecn.pcap --only-protocols frame,eth,ip,udp -q -z "$z" 2>/dev/null |
		awk -F'|' -v n=$# '
			/<>/ { for (i = 1; i <= n; i++) print $(2 * i + 1) + 0; seen = 1; exit }
			END { if (!seen) for (i = 1; i <= n; i++) print 0 }'
}

rc_ecn_cleanup() {
	tc qdisc del dev veth0 root 2>/dev/null
	ip neigh del 10.0.0.2 dev veth0 2>/dev/null
	ip netns exec b ip neigh del 10.0.0.1 dev veth1 2>/dev/null
	return 0
}

test_rc_ecn() {
	rc_pair
	trap rc_ecn_cleanup EXIT
	modprobe sch_netem
	# ARP is not ECN-capable: netem would drop it (veth0's requests,
	# and its replies to veth1's).
	ip neigh replace 10.0.0.2 dev veth0 nud permanent \
		lladdr "$(ip netns exec b cat /sys/class/net/veth1/address)"
	ip netns exec b ip neigh replace 10.0.0.1 dev veth1 nud permanent \
		lladdr "$(cat /sys/class/net/veth0/address)"
	tc qdisc add dev veth0 root netem loss 5% ecn
	ip netns exec b tcpdump -i veth1 -w "$TEST_TMP"/ecn.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$RCTEST" "${RC_AB[@]}" --ece 2 --sizes 1,4096,65536 --iters 4 --no-err
	"$RCTEST" "${RC_AB[@]}" --ece 3 --sizes 4096 --burst 32 --burst-size 4000 \
		--rounds 4 --no-err
	sleep 1
	kill -INT $cap
	wait $cap
	tc -s qdisc show dev veth0
	ip netns exec b rdma statistic show link sr1/1
	rdma statistic show link sr0/1
	local marked cnps handled
	marked=$(count_b np_ecn_marked_roce_packets) cnps=$(count_b np_cnp_sent)
	handled=$(counter sr0 rp_cnp_handled)
	echo "sr1: $marked packets marked CE, $cnps CNPs sent; sr0: $handled CNPs handled"
	[ "$marked" -gt 0 ] && [ "$cnps" -gt 0 ] && [ "$handled" -gt 0 ] || return 1
	[ "$cnps" -le "$marked" ] || { echo "more CNPs than marks"; return 1; }
	# Nothing lost: every packet sr0 sent reached sr1 (a request dropped
	# instead of marked would not). Gaps NAKed are not counted against
	# it: packets sent from two CPUs (the poller, a timer's resend) may
	# reach sr1 out of order, and a timeout on a stalled guest sends
	# again.
	local sent got
	sent=$(counter sr0 tx_packets) got=$(count_b rx_packets)
	echo "sr0 sent $sent packets, sr1 received $got; sr1 NAKed $(count_b seq_naks_sent) gaps"
	[ "$got" -ge "$sent" ] || { echo "requests were lost"; return 1; }
	counter_is sr0 rp_cnp_ignored 0
	local req ect notect acks ackect cnp goodcnp
	req="ip.src == 10.0.0.1 && (frame[42] <= 0x0c || (frame[42] >= 0x13 && frame[42] <= 0x1d))"
	read -r ect notect acks ackect cnp goodcnp < <(on_wire \
		"$req && ip.dsfield.ecn >= 2" \
		"$req && ip.dsfield.ecn < 2" \
		"ip.src == 10.0.0.2 && frame[42] == 0x11" \
		"ip.src == 10.0.0.2 && frame[42] == 0x11 && ip.dsfield.ecn != 0" \
		"frame[42] == 0x81" \
		"frame[42] == 0x81 && ip.src == 10.0.0.2 && udp.length == 40 &&
		frame[46] == 0x40 && frame[54:16] == 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00 &&
		ip.dsfield.ecn == 0" | paste -s -d ' ')
	echo "tshark: requests $ect ECT or CE, $notect not; ACKs $acks, $ackect ECN-capable; CNPs $cnp, $goodcnp well formed"
	if [ "$cnp" = 0 ] || [ "$goodcnp" != "$cnp" ]; then
		tshark -r "$TEST_TMP"/ecn.pcap -x -Y "frame[42] == 0x81" 2>&1 | head -n 12
		return 1
	fi
	[ "$ect" -gt 0 ] && [ "$notect" = 0 ] && [ "$acks" -gt 0 ] && [ "$ackect" = 0 ] || return 1
	# Without ECE: go-back-N, nothing ECN-capable; what netem took
	# now is lost (and resent), never marked.
	marked=$(count_b np_ecn_marked_roce_packets)
	"$RCTEST" "${RC_AB[@]}" "${RC_LOSSY[@]}" --sizes 4096 --iters 2
	[ "$(count_b np_ecn_marked_roce_packets)" = "$marked" ] ||
		{ echo "marks without ECN agreed"; return 1; }
}
