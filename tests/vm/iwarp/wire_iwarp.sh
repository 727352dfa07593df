# shellcheck shell=bash
# The conformance run on the wire, with MPA CRCs: tshark must decode every
# frame as MPA/DDP/RDMAP without a malformed one or a bad CRC, and each
# error case's Terminate must carry the layer, type and code verbs_iwarp
# expects (its "# term" lines), sent by the server on that connection.
#
# layers: stock
test_wire_iwarp() {
	modprobe softrdma mpa_crc=1
	iwarp_pair
	tcpdump -i veth0 -s 0 -w "$TEST_TMP"/wire-iw.pcap tcp port "$P_IWCONF" 2>/dev/null &
	local cap=$!
	sleep 1
	iwarp_conformance "$P_IWCONF" || { kill -INT $cap; return 1; }
	sleep 1
	kill -INT $cap
	wait $cap
	# Three tshark passes side by side, not six one after another (each
	# took seconds): the frames, those with FPDUs and those with a bad
	# CRC counted in one (io,stat over the whole capture); the malformed
	# or flagged ones; the Terminates.
	local total fpdus bad crc counts flagged
	tshark -r "$TEST_TMP"/wire-iw.pcap -q \
		-z 'io,stat,0,frame,iwarp_mpa.fpdu,iwarp_mpa.crc_check != iwarp_mpa.crc' \
		>"$TEST_TMP"/wire-iw-stat.txt 2>/dev/null &
	counts=$!
	# TCP's own expert notes (SACKs, window full, the resets that end a
	# connection after a Terminate) are not ours to judge: only frames
	# with MPA are; RPC-over-RDMA's heuristic takes Send payloads for its own.
	local flag='_ws.malformed || (iwarp_mpa && _ws.expert.severity >= "Warning" && !tcp.analysis.flags)'
	tshark -r "$TEST_TMP"/wire-iw.pcap --disable-protocol rpcordma -Y "$flag" \
		>"$TEST_TMP"/wire-iw-bad.txt 2>/dev/null &
	flagged=$!
	# Every Terminate: the TCP ports, and its layer, type and code.
	tshark -r "$TEST_TMP"/wire-iw.pcap -Y 'iwarp_rdma.opcode == 7' -T fields -E separator=' ' \
		-e tcp.srcport -e tcp.dstport -e iwarp_rdma.term_layer -e iwarp_rdma.term_etype_rdma \
		-e iwarp_rdma.term_etype_ddp -e iwarp_rdma.term_etype_llp \
		-e iwarp_rdma.term_errcode_rdma -e iwarp_rdma.term_errcode_ddp_tagged \
		-e iwarp_rdma.term_errcode_ddp_untagged -e iwarp_rdma.term_errcode_llp \
		2>/dev/null >"$TEST_TMP"/wire-iw-terms.txt
	wait $counts || true
	wait $flagged || true
	read -r total fpdus crc < <(awk -F'|' '/<>/ { print $3 + 0, $5 + 0, $7 + 0; seen = 1; exit }
		END { if (!seen) print 0, 0, 0 }' "$TEST_TMP"/wire-iw-stat.txt)
	bad=$(wc -l <"$TEST_TMP"/wire-iw-bad.txt)
	echo "tshark: $total frames, $fpdus with FPDUs, $bad malformed or flagged, $crc bad CRCs"
	head -n 5 "$TEST_TMP"/wire-iw-bad.txt
	[ "$fpdus" -gt 1000 ] && [ "$bad" = 0 ] && [ "$crc" = 0 ] || return 1
	cat "$TEST_TMP"/wire-iw-terms.txt
	python3 - "$TEST_TMP"/iwconf-cli.log "$TEST_TMP"/wire-iw-terms.txt "$P_IWCONF" <<'PY'
import sys
want = {}
for l in open(sys.argv[1]):
    f = l.split()
    if l.startswith('# term '):
        # '# term GROUP port P layer L etype E code C'
        want[int(f[4])] = (int(f[6]), int(f[8]), int(f[10]))
got = {}
for l in open(sys.argv[2]):
    f = [int(x, 0) for x in l.split()]
    # DDP catastrophic (layer 1, type 0): Wireshark has no field for its
    # code, whose only value is 0 (local catastrophic error).
    if len(f) == 4 and f[2] == 1 and f[3] == 0:
        f.append(0)
    if len(f) < 5:
        print('undecoded Terminate:', l.strip())
        sys.exit(1)
    src, dst, layer, etype, code = f[0], f[1], f[2], f[3], f[4]
    if src != int(sys.argv[3]):
        print('a Terminate from the client (port %d): %s' % (src, l.strip()))
        sys.exit(1)
    got.setdefault(dst, []).append((layer, etype, code))
ok = True
for port, t in want.items():
    if got.get(port) != [t]:
        print('connection from port %d: Terminates %s, want [%s]' % (port, got.get(port), t))
        ok = False
for port in set(got) - set(want):
    print('connection from port %d: unexpected Terminates %s' % (port, got[port]))
    ok = False
print('%d Terminates checked' % len(want))
sys.exit(0 if ok else 1)
PY
}
