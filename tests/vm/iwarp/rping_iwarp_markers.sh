# shellcheck shell=bash
# MPA markers (RFC 5044 5) both ways, with CRC: rping's data checked, and
# the capture read by Wireshark's MPA dissector, which strips the markers
# and checks each FPDU's CRC over them (it assumes one FPDU per segment:
# segmentation offloads off, and FPDUs it cannot place are not counted).
#
# layers: stock
test_rping_iwarp_markers() {
	modprobe softrdma mpa_markers=1 mpa_crc=1
	iwarp_pair
	ethtool -K veth0 tso off gso off gro off >/dev/null 2>&1 || true
	ip netns exec b ethtool -K veth1 tso off gso off gro off >/dev/null 2>&1 || true
	tcpdump -i veth0 -s 0 -w "$TEST_TMP"/mpa.pcap tcp port "$P_RPING" 2>/dev/null &
	local cap=$! size n m bad crcbad crcok
	sleep 1
	for size in 30 65535; do
		rping_run b - 10.0.0.2 10 "$size"
		rping_run - b 10.0.0.1 10 "$size"
	done
	sleep 1
	kill -INT $cap
	wait $cap || true
	# Both directions asked for markers (a request and a reply each of
	# the four connections): the frames asking for them, with markers, and
	# (TCP's own notes aside: the connections end with a reset) malformed
	# or flagged, counted in one pass (io,stat over the whole capture: a
	# pass a count took seconds), while another reads the CRCs.
	local flag='_ws.malformed || (_ws.expert.severity >= "Warning" && !tcp.flags.reset && !tcp.analysis.flags)'
	tshark -r "$TEST_TMP"/mpa.pcap -V -Y 'iwarp_mpa.crc_check' >"$TEST_TMP"/mpa.txt 2>/dev/null &
	local crcs=$!
	read -r m n bad < <(tshark -r "$TEST_TMP"/mpa.pcap -q \
		-z "io,stat,0,iwarp_mpa.marker_flag == 1,iwarp_mpa.markers,$flag" 2>/dev/null |
		awk -F'|' '/<>/ { print $3 + 0, $5 + 0, $7 + 0; seen = 1; exit }
			END { if (!seen) print 0, 0, 0 }')
	wait $crcs || true
	crcok=$(grep -c 'Good CRC32' "$TEST_TMP"/mpa.txt || true)
	crcbad=$(grep -c 'Bad CRC32' "$TEST_TMP"/mpa.txt || true)
	[ "$bad" = 0 ] || tshark -r "$TEST_TMP"/mpa.pcap -Y "$flag" 2>/dev/null | head -n 5
	echo "tshark: $m MPA frames asking for markers, $n FPDUs with markers," \
		"$crcok good and $crcbad bad CRCs, $bad malformed or flagged"
	[ "$m" -ge 8 ] && [ "$n" -gt 100 ] && [ "$crcok" -gt 100 ] &&
		[ "$crcbad" = 0 ] && [ "$bad" = 0 ]
}
