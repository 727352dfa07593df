# shellcheck shell=bash
# XRC between softroce devices, every byte checked (verbs_xrc: SEND, SEND
# with immediate, RDMA WRITE with and without immediate, RDMA READ,
# fetch-and-add, a TGT QP opened by a second context, an XRC domain
# violation), and on the wire: every packet carries an XRC opcode, which
# Wireshark names, and its ICRC; each request of the good SRQ its XRCETH.
# Wireshark (4.4) names the XRC opcodes in the BTH (its summary line says
# "Unknown OpCode") but does not dissect what follows the BTH, so the
# XRCETH is read from those raw bytes (infiniband.vendor).
#
# Stock only: on the debug kernel its 36 checks passed, but the run with
# tshark outlasted 120 s on a loaded host (not yet timed alone there).
# layers: stock
# timeout: 120
test_xrc_verbs() {
	rc_pair
	tcpdump -i veth0 -w "$TEST_TMP"/wire.pcap udp port 4791 2>/dev/null &
	local cap=$! rc srqn n xrc good resp named bad
	sleep 0.5
	rc=0
	"$XRCTEST" "${RC_AB[@]}" "$TEST_TMP" >"$TEST_TMP"/out.txt || rc=$?
	cat "$TEST_TMP"/out.txt
	sleep 1
	kill -INT $cap
	wait $cap
	[ "$rc" = 0 ] || return 1
	softrdma icrc-check "$TEST_TMP"/wire.pcap || return 1
	srqn=$(printf '%08x' "$(sed -n 's/^srqn //p' "$TEST_TMP"/out.txt)")
	local ts=(tshark -r "$TEST_TMP"/wire.pcap --only-protocols "frame,eth,ip,udp,infiniband")
	# Per packet: its opcode and the first four bytes after its BTH (an
	# XRC request's XRCETH names the SRQ; READ responses and ACKs,
	# 0xad-0xb2, have an AETH there).
	"${ts[@]}" -T fields -E occurrence=f -e infiniband.bth.opcode -e infiniband.vendor \
		>"$TEST_TMP"/fields.txt 2>/dev/null
	read -r n xrc good resp < <(awk -v s="$srqn" '
		$1 != "" { n++ }
		$1 >= 160 && $1 <= 183 { xrc++; if ($1 >= 173 && $1 <= 178) resp++; else if ($2 == s) good++ }
		END { print n + 0, xrc + 0, good + 0, resp + 0 }' "$TEST_TMP"/fields.txt)
	"${ts[@]}" -V >"$TEST_TMP"/wire.txt 2>/dev/null
	named=$(grep -c 'Opcode: Extended Reliable Connection (XRC)' "$TEST_TMP"/wire.txt || true)
	bad=$(grep -c -E 'Malformed|Expert Info \((Warning|Error)' "$TEST_TMP"/wire.txt || true)
	echo "tshark: $n RoCEv2 packets, $xrc XRC ($named named so), $good requests with" \
		"XRCETH $srqn, $resp responses, $bad malformed or flagged"
	# SEND 3 packets, with immediate 1, WRITE 5, READ 1, atomic 1, WRITE
	# with immediate 1; ACKs, READ responses and the atomic's answer back.
	[ "$n" -gt 12 ] && [ "$xrc" = "$n" ] && [ "$named" = "$n" ] && [ "$good" -ge 12 ] &&
		[ "$resp" -ge 5 ] && [ "$bad" = 0 ]
}
