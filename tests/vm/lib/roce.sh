# shellcheck shell=bash
# Interop: rdma_rxe on veth0 (initial namespace), softroce on veth1 (b).
interop_setup() {
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
}

interop_cleanup() {
	rdma link delete rxe0 2>/dev/null
	modprobe -r rdma_rxe
}

# perf_matrix SERVER_DEV SERVER_NS CLIENT_DEV CLIENT_NS SERVER_IP: every
# perftest program: the latency ones at 2 B (one packet), SEND and READ
# bandwidth at 1 MiB (many, at MTU 1024), ib_write_bw over all its sizes
# (-a: 2 B to 8 MiB, each size must report), each atomic kind once
# (perftest.sh adds -F). A sweep of every program took ~140 s a pair
# under TCG; one sweep covers every segmentation the others share.
# Default post mode only (perftest_roce says why).
perf_matrix() {
	local t
	for t in ib_send_lat ib_write_lat ib_read_lat; do
		echo "== $t -s 2"
		"$PERF" "$@" $t -s 2 -n 5
	done
	for t in ib_send_bw ib_read_bw; do
		echo "== $t -s 1048576"
		"$PERF" "$@" $t -s 1048576 -n 5
	done
	echo "== ib_write_bw -a"
	"$PERF" "$@" ib_write_bw -a -n 5
	echo "== ib_atomic_lat -A FETCH_AND_ADD"
	"$PERF" "$@" ib_atomic_lat -A FETCH_AND_ADD -n 20
	echo "== ib_atomic_bw -A CMP_AND_SWAP"
	"$PERF" "$@" ib_atomic_bw -A CMP_AND_SWAP -n 20
}

# udp_to_sr0 BYTES: one UDP datagram (printf escapes) from netns b to
# 10.0.0.1:4791.
# wire_gso on|off: UDP segmentation offload of veth0 and veth1. Off, a
# softroce train (UDP GSO) is cut into its packets before a capture on
# either end sees it, as on a wire; the fixture has it on.
wire_gso() {
	ethtool -K veth0 tx-udp-segmentation "$1"
	ip netns exec b ethtool -K veth1 tx-udp-segmentation "$1"
}

udp_to_sr0() {
	ip netns exec b bash -c "printf '$1' >/dev/udp/10.0.0.1/4791"
}

# cnp_to_sr0 QPN: a congestion notification packet (RoCEv2 Annex A17.9:
# opcode 0x81, BECN set, 16 reserved bytes) with a good ICRC, from netns b
# (10.0.0.2) to QP QPN at 10.0.0.1. A raw socket: the IP header's
# identification, which the ICRC covers, is ours.
cnp_to_sr0() {
	ip netns exec b python3 - "$1" <<'EOF'
import socket, struct, sys, zlib
qpn = int(sys.argv[1])
bth = struct.pack('!BBHII', 0x81, 0, 0xffff, 0x40000000 | qpn, 0)
body = bth + bytes(16)
udp_len = 8 + len(body) + 4
def ip(tos, ttl, csum):
    return struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + udp_len, 0x1234, 0x4000,
                       ttl, 17, csum, socket.inet_aton('10.0.0.2'),
                       socket.inet_aton('10.0.0.1'))
def udp(csum):
    return struct.pack('!HHHH', 4791, 4791, udp_len, csum)
masked = b'\xff' * 8 + ip(0xff, 0xff, 0xffff) + udp(0xffff) + body[:4] + b'\xff' + body[5:]
pkt = ip(0, 64, 0) + udp(0) + body + struct.pack('<I', zlib.crc32(masked))
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(pkt, ('10.0.0.1', 0))
EOF
}

# RC over an impaired link: sr0 on veth0, sr1 on veth1 in b, netem on both
# ends. Every transfer must still complete byte-exact: go-back-N, NAKs,
# duplicate detection and READ re-execution all get exercised.
# shellcheck disable=SC2034 # RC_AB, RC_LOSSY: for the tests
RC_AB=(sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2)

# shellcheck disable=SC2034
RC_LOSSY=(--timeout 12 --retry 7 --no-err --wait 30)

# netem ARGS...: impair both directions. Permanent neighbour entries keep
# ARP out of it (connecting a QP resolves the peer's MAC address).
# netem ARGS...: netem on both veths. A qdisc sees softroce's trains
# (UDP GSO) as one skb, so its loss would take a train's packets all at
# once: trains are off, and every packet is lost on its own as on a
# wire, unless NETEM_TRAINS=1.
netem() {
	modprobe sch_netem
	[ -n "${NETEM_TRAINS:-}" ] || echo 0 >/sys/module/softrdma/parameters/roce_gso
	ip neigh replace 10.0.0.2 dev veth0 nud permanent \
		lladdr "$(ip netns exec b cat /sys/class/net/veth1/address)"
	ip netns exec b ip neigh replace 10.0.0.1 dev veth1 nud permanent \
		lladdr "$(cat /sys/class/net/veth0/address)"
	tc qdisc add dev veth0 root netem "$@"
	ip netns exec b tc qdisc add dev veth1 root netem "$@"
}

netem_cleanup() {
	tc qdisc del dev veth0 root 2>/dev/null
	ip netns exec b tc qdisc del dev veth1 root 2>/dev/null
	ip neigh del 10.0.0.2 dev veth0 2>/dev/null
	ip netns exec b ip neigh del 10.0.0.1 dev veth1 2>/dev/null
	echo 1 >/sys/module/softrdma/parameters/roce_gso 2>/dev/null
	return 0
}

rc_pair() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
}

# netem_stats: what netem did (to show in the log the impairment was real).
netem_stats() {
	tc -s qdisc show dev veth0
	ip netns exec b tc -s qdisc show dev veth1
}

# pingpong_interop PROG N SIZE...: an ibverbs example pingpong (PROG:
# ibv_rc_pingpong, ibv_uc_pingpong) with -c (the data checked), N
# iterations of each SIZE, between rxe0 (veth0) and sr1 (veth1, netns b):
# softroce serves and rxe connects, then the reverse. interop_setup first.
pingpong_interop() {
	local prog=$1 n=$2 g0 g1 size srv
	shift 2
	g0=$(gid_index rxe0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in "$@"; do
		echo "== $prog -s $size: softroce serves"
		ip netns exec b timeout 120 "$prog" -d sr1 -g "$g1" -p "$P_PINGPONG" -s "$size" -n "$n" -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 120 "$prog" -d rxe0 -g "$g0" -p "$P_PINGPONG" -s "$size" -n "$n" -c 10.0.0.2
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
		echo "== $prog -s $size: rxe serves"
		timeout 120 "$prog" -d rxe0 -g "$g0" -p "$P_PINGPONG" -s "$size" -n "$n" -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen - "$P_PINGPONG"
		ip netns exec b timeout 120 "$prog" -d sr1 -g "$g1" -p "$P_PINGPONG" -s "$size" -n "$n" -c 10.0.0.1
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}

# pingpong_softroce PROG N SIZE...: the same between sr0 (veth0) and sr1
# (veth1, netns b), sr1 serving. rc_pair first.
pingpong_softroce() {
	local prog=$1 n=$2 g0 g1 size srv
	shift 2
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in "$@"; do
		echo "== $prog -s $size"
		ip netns exec b timeout 120 "$prog" -d sr1 -g "$g1" -p "$P_PINGPONG" -s "$size" -n "$n" -c >"$TEST_TMP"/srv.log 2>&1 &
		srv=$!
		wait_listen b "$P_PINGPONG"
		timeout 120 "$prog" -d sr0 -g "$g0" -p "$P_PINGPONG" -s "$size" -n "$n" -c 10.0.0.2
		wait $srv || { cat "$TEST_TMP"/srv.log; return 1; }
	done
}

# ns_pre NS: the command prefix that runs in netns NS ("-": the initial).
ns_pre() {
	[ "$1" = - ] || echo "ip netns exec $1"
}

# udaddy_run SERVER_NS CLIENT_NS SERVER_IP COUNT SIZE: udaddy (the RDMA CM
# on UD: address and route resolution, SIDR REQ/REP give the client the
# server's QP number and Q_Key) sends COUNT datagrams of SIZE bytes each
# way; both ends must see them all and exit 0. udaddy's port is 7174.
udaddy_run() {
	local sns=$1 cns=$2 ip=$3 count=$4 size=$5 srv rc=0
	# shellcheck disable=SC2046
	$(ns_pre "$sns") timeout 60 udaddy -b "$ip" -C "$count" -S "$size" \
		>"$TEST_TMP"/udaddy-srv.log 2>&1 &
	srv=$!
	wait_listen "$sns" 7174 || rc=1
	# shellcheck disable=SC2046
	$(ns_pre "$cns") timeout 60 udaddy -s "$ip" -C "$count" -S "$size" \
		>"$TEST_TMP"/udaddy-cli.log 2>&1 || rc=$?
	wait $srv || rc=$((rc + 100 + $?))
	if [ $rc != 0 ] || ! grep -q "data transfers complete" "$TEST_TMP"/udaddy-cli.log ||
		! grep -q "data transfers complete" "$TEST_TMP"/udaddy-srv.log; then
		echo "udaddy to $ip, $count x $size B: exit $rc"
		cat "$TEST_TMP"/udaddy-cli.log "$TEST_TMP"/udaddy-srv.log
		return 1
	fi
	echo "udaddy to $ip: $count x $size B each way"
}

# cm_run SERVER_NS ADDR CLIENT_NS UNREACHABLE [LOCAL [VIA VIA_DEV]]:
# verbs_cm's server on ADDR in SERVER_NS ("-": the initial one), its client
# in CLIENT_NS (connect with private data, reject, no listener, address
# error; with LOCAL, the client's address, route errors; with VIA, a peer
# reached through VIA_DEV, which the client deletes: verbs_cm.cpp).
cm_run() {
	local sns=$1 addr=$2 cns=$3 spre=() cpre=() srv rc=0
	shift 3
	[ "$sns" = - ] || spre=(ip netns exec "$sns")
	[ "$cns" = - ] || cpre=(ip netns exec "$cns")
	"${spre[@]}" timeout 60 "$CMTEST" server "$addr" "$P_AUX" >"$TEST_TMP"/cm-srv.log 2>&1 &
	srv=$!
	wait_listen "$sns" "$P_AUX" || rc=1
	[ $rc != 0 ] || "${cpre[@]}" timeout 60 "$CMTEST" client "$addr" "$P_AUX" "$@" || rc=$?
	wait $srv || rc=$((rc + 100 + $?))
	echo "server:"
	cat "$TEST_TMP"/cm-srv.log
	return $rc
}

# mckey_run GROUP COUNT SIZE SEND_NS SEND_IP RECV_NS RECV_IP...: mckey
# receivers join GROUP, each bound to RECV_IP in RECV_NS ("-": the
# initial netns), then a sender bound to SEND_IP sends COUNT datagrams of
# SIZE bytes to it (after its join, mckey waits 3 s). Every receiver must
# have had COUNT completions and exit 0 (mckey waits for exactly COUNT).
# With MCKEY_SENDONLY=1 the sender joins as a send-only full member (not
# attached: nothing loops back to it); MCKEY_OPTS are more options for
# every mckey (-l: QPs made with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB).
# MCKEY_PACED=1 holds the sender 50 ms after each write(2), for a sender
# on rdma_rxe: mckey posts its sends unsignaled and tears down at once,
# rxe's provider only rings a doorbell (a write) and rxe sends from a
# workqueue, and what it has not sent when the QP is destroyed is never
# sent (seen under TCG: 0 or 1 datagram of 5 on the wire).
mckey_run() {
	local grp=$1 count=$2 size=$3 sns=$4 sip=$5 pids=() i=0 j rc=0 log
	local sopt=(-s) opts pace=()
	read -r -a opts <<<"${MCKEY_OPTS:-}"
	[ -z "${MCKEY_SENDONLY:-}" ] || sopt+=(-o)
	[ -z "${MCKEY_PACED:-}" ] ||
		pace=(strace -f -qq -o /dev/null -e trace=write -e inject=write:delay_exit=50000)
	shift 5
	while [ $# -ge 2 ]; do
		# shellcheck disable=SC2046 # the prefix splits into words
		# stdbuf: mckey's printf output, to a file, is block buffered.
		$(ns_pre "$1") timeout 30 stdbuf -oL mckey -m "$grp" -b "$2" -C "$count" -S "$size" \
			${opts[@]+"${opts[@]}"} >"$TEST_TMP/mckey-r$i.log" 2>&1 &
		pids+=($!)
		i=$((i + 1))
		shift 2
	done
	for ((j = 0; j < i; j++)); do
		wait_for 15 grep -q "joined dgid" "$TEST_TMP/mckey-r$j.log" || {
			echo "mckey receiver $j did not join"
			rc=1
		}
	done
	# shellcheck disable=SC2046
	$(ns_pre "$sns") timeout 20 ${pace[@]+"${pace[@]}"} mckey -m "$grp" -b "$sip" "${sopt[@]}" \
		-C "$count" -S "$size" \
		${opts[@]+"${opts[@]}"} >"$TEST_TMP/mckey-s.log" 2>&1 || {
		echo "mckey sender: exit $?"
		cat "$TEST_TMP/mckey-s.log"
		rc=1
	}
	for ((j = 0; j < i; j++)); do
		log=$TEST_TMP/mckey-r$j.log
		if ! wait "${pids[j]}" || ! grep -q "data transfers complete" "$log"; then
			echo "mckey receiver $j did not get $count datagrams"
			cat "$log"
			rc=1
		fi
	done
	if [ $rc = 0 ]; then
		echo "mckey $grp: $i receivers got $count x $size B"
	else
		# Where the datagrams went: each side's counters and groups.
		for j in - b; do
			# shellcheck disable=SC2046
			$(ns_pre "$j") rdma statistic show 2>&1 | grep -v ' 0 *$' | tr -s ' \n' ' '
			echo
			# shellcheck disable=SC2046
			$(ns_pre "$j") ip maddr show 2>&1 | grep -E '^[0-9]|inet' | tr -s ' \n' ' '
			echo
		done
	fi
	return $rc
}
# mcast_wire PCAP MIN: the capture holds at least MIN RoCEv2 datagrams to
# destination QP 0xFFFFFF, each to a multicast MAC (01:00:5e:.. for IPv4,
# 33:33:.. for IPv6), Wireshark finds nothing malformed in it, and our
# ICRC checker agrees with every packet.
mcast_wire() {
	local f=(--only-protocols "frame,eth,ip,ipv6,udp,infiniband") n bad mac
	softrdma icrc-check "$1" || return 1
	n=$(tshark -r "$1" "${f[@]}" -Y 'infiniband.bth.destqp == 0xffffff && infiniband.deth.srcqp' \
		2>/dev/null | wc -l)
	mac=$(tshark -r "$1" "${f[@]}" -Y 'infiniband.bth.destqp == 0xffffff &&
		!((ip && eth.dst[0:3] == 01:00:5e) || (ipv6 && eth.dst[0:2] == 33:33))' \
		2>/dev/null | wc -l)
	bad=$(tshark -r "$1" "${f[@]}" -Y '_ws.malformed || _ws.expert.severity >= "Warning"' \
		2>/dev/null | wc -l)
	echo "tshark: $n datagrams to QP 0xFFFFFF ($mac not to a multicast MAC), $bad malformed or flagged"
	[ "$n" -ge "$2" ] && [ "$mac" = 0 ] && [ "$bad" = 0 ]
}

# mcast_left PATTERN: no netdev of the fixture (veth0, veth1 in b) is still
# in an IP multicast group matching PATTERN (grep -E).
mcast_left() {
	if ip maddr show dev veth0 | grep -q -E "$1" ||
		ip netns exec b ip maddr show dev veth1 | grep -q -E "$1"; then
		echo "an IP multicast group matching $1 is still joined"
		ip maddr show dev veth0
		ip netns exec b ip maddr show dev veth1
		return 1
	fi
}

# qp_retx DEV COMM: how each RC QP in RTS on DEV that COMM owns
# retransmits, one "RETX ECE" line a QP, as softroce tells `rdma -dd res
# show qp` in its driver attributes (iproute2 prints them as drv_retx and
# drv_ece, on the QP's line or an indented one after it; "none none": a
# driver that does not say, rdma_rxe).
qp_retx() {
	rdma -dd res show qp link "$1/1" 2>/dev/null | awk -v comm="$2" '
		function flush() {
			if (want)
				print (r == "" ? "none" : r), (e == "" ? "none" : e)
			want = 0; r = ""; e = ""
		}
		/^link / {
			flush()
			want = / type RC / && / state RTS / && $0 ~ (" comm " comm "( |$)")
		}
		{
			for (i = 1; i < NF; i++) {
				if ($i ~ /^(drv_)?retx$/) r = $(i + 1)
				if ($i ~ /^(drv_)?ece$/) e = $(i + 1)
			}
		}
		END { flush() }'
}

# ece_rping SRV_NS CLI_NS SRV_IP SRV_DEV SRV_RETX CLI_DEV CLI_RETX: rping
# through the RDMA CM (rping_run: every ping's bytes checked); while it
# runs, rping's RC QP on SRV_DEV must say retx SRV_RETX and the one on
# CLI_DEV CLI_RETX (sr, gbn; none for rdma_rxe's), as `softrdma qps`
# says of the client's too.
ece_rping() {
	local sns=$1 cns=$2 ip=$3 sdev=$4 swant=$5 cdev=$6 cwant=$7 run i s='' c='' cli='' rc=0
	rping_run "$sns" "$cns" "$ip" "${ECE_PINGS:-1000}" 64 >"$TEST_TMP"/ece-rping.log 2>&1 &
	run=$!
	for ((i = 0; i < 600; i++)); do
		[ -n "$s" ] || s=$(qp_retx "$sdev" rping)
		[ -n "$c" ] || c=$(qp_retx "$cdev" rping)
		# Our CLI says the same of the client's QP (asked in the same
		# pass: a short rping may be gone by the next).
		[ -n "$cli" ] || [ "$cwant" = none ] ||
			cli=$(softrdma qps "$cdev" | awk '$4 == "RC" && $5 == "RTS" && $NF == "rping" { print $6 }')
		[ -n "$s" ] && [ -n "$c" ] && { [ -n "$cli" ] || [ "$cwant" = none ]; } && break
		kill -0 "$run" 2>/dev/null || break
		sleep 0.1
	done
	wait "$run" || rc=1
	cat "$TEST_TMP"/ece-rping.log
	echo "rping QP on $sdev (server): retx/ece ${s:-not seen}; on $cdev (client): ${c:-not seen}"
	[ $rc = 0 ] || { echo "rping failed"; return 1; }
	[ "${s%% *}" = "$swant" ] || { echo "$sdev: want retx $swant"; return 1; }
	[ "${c%% *}" = "$cwant" ] || { echo "$cdev: want retx $cwant"; return 1; }
	echo "softrdma qps $cdev: RETX ${cli:-(none)}"
	[ "$cwant" = none ] || [ "$cli" = "$cwant" ] || { echo "softrdma qps: want $cwant"; return 1; }
}

# cm_ece_wire PCAP REQ_ATTR REP_ATTR: the capture holds a CM REQ with our
# ECE vendor id (0x025352, 24 bits at byte 5 of the REQ) and
# AttributeModifier REQ_ATTR (the options), and a REP with the same
# vendor id (VendorID_H/M/L at bytes 15, 19, 23) and REP_ATTR. Offsets
# in the frame: Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8, MAD header 24.
cm_ece_wire() {
	local f=(--only-protocols "frame,eth,ip,udp,infiniband") req rep
	req=$(tshark -r "$1" "${f[@]}" -Y "infiniband.cm.req.localqpn && frame[91:3] == 02:53:52 &&
		infiniband.mad.attributemodifier == $2" 2>/dev/null | wc -l)
	rep=$(tshark -r "$1" "${f[@]}" -Y "infiniband.cm.rep.localqpn && frame[101] == 0x02 &&
		frame[105] == 0x53 && frame[109] == 0x52 &&
		infiniband.mad.attributemodifier == $3" 2>/dev/null | wc -l)
	echo "tshark: $req REQ with vendor 0x025352 options $2, $rep REP with it and $3"
	if [ "$req" -lt 1 ] || [ "$rep" -lt 1 ]; then
		tshark -r "$1" "${f[@]}" -x \
			-Y "infiniband.cm.req.localqpn || infiniband.cm.rep.localqpn" 2>/dev/null
		return 1
	fi
}
