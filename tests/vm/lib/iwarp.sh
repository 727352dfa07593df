# shellcheck shell=bash
# iWARP: softiwarp on veth0 (initial namespace) and on veth1 (netns b).
iwarp_pair() {
	rdma link add si0 type softiwarp netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
}

# rping_expect COUNT SIZE PREFIX FILE: FILE holds exactly the COUNT ping
# lines rping -v prints (PREFIX "ping data: " or "server ping data: "),
# each with the bytes rping's client wrote for that ping.
rping_expect() {
	python3 - "$@" <<'PY'
import sys
count, size, prefix, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
got = [l.rstrip('\n') for l in open(path) if l.startswith(prefix)]
want, start = [], 65
for ping in range(count):
    b = bytearray(b'rdma-ping-%d: ' % ping)[:size - 1]
    c = start
    while len(b) < size - 1:
        b.append(c)
        c = 65 if c >= 122 else c + 1
    start = 65 if start >= 122 else start + 1
    want.append(prefix + b.decode())
if got != want:
    print('%s: %d ping lines, want %d' % (path, len(got), count))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            print('first difference at ping %d:\n got  %r\n want %r' % (i, g[:120], w[:120]))
            break
    sys.exit(1)
PY
}

# rping_run SRV_NS CLI_NS SRV_IP COUNT SIZE: rping -v between the two
# namespaces ("-": the initial one); both sides must succeed and print
# every ping's bytes as sent.
rping_run() {
	local sns=$1 cns=$2 ip=$3 count=$4 size=$5 spre=() cpre=() srv dog rc=0
	[ "$sns" = - ] || spre=(ip netns exec "$sns")
	[ "$cns" = - ] || cpre=(ip netns exec "$cns")
	"${spre[@]}" timeout 120 rping -s -a "$ip" -p "$P_RPING" -v -C "$count" -S "$size" \
		>"$TEST_TMP"/rping-srv.log 2>"$TEST_TMP"/rping-srv.err &
	srv=$!
	wait_listen "$sns" "$P_RPING"
	"$REPO/tests/vm/hangdump.sh" 110 rping "$sns" "$cns" >"$TEST_TMP"/rping-hang.log 2>&1 &
	dog=$!
	"${cpre[@]}" timeout 120 rping -c -a "$ip" -p "$P_RPING" -v -V -C "$count" -S "$size" \
		>"$TEST_TMP"/rping-cli.log 2>"$TEST_TMP"/rping-cli.err || rc=$?
	wait $srv || rc=$((rc + 100 + $?))
	hangdump_stop $dog
	if [ $rc != 0 ]; then
		echo "rping $count x $size B: exit $rc"
		tail -n 5 "$TEST_TMP"/rping-cli.err "$TEST_TMP"/rping-srv.err
		cat "$TEST_TMP"/rping-hang.log
		return 1
	fi
	if grep -q "data mismatch" "$TEST_TMP"/rping-cli.err; then
		echo "rping $count x $size B: data mismatch"
		grep -m 3 -A 2 "data mismatch" "$TEST_TMP"/rping-cli.err
		return 1
	fi
	rping_expect "$count" "$size" "ping data: " "$TEST_TMP"/rping-cli.log &&
	rping_expect "$count" "$size" "server ping data: " "$TEST_TMP"/rping-srv.log
}

# iwarp_left: no QP, no cm_id, no connected or closing TCP socket is left
# in either namespace.
iwarp_left() {
	local ns o bad=0
	for ns in - b; do
		local pre=()
		[ "$ns" = - ] || pre=(ip netns exec "$ns")
		o=$("${pre[@]}" rdma res show qp)
		[ -z "$o" ] || { echo "QPs left ($ns): $o"; bad=1; }
		o=$("${pre[@]}" rdma res show cm_id)
		[ -z "$o" ] || { echo "cm_ids left ($ns): $o"; bad=1; }
		o=$("${pre[@]}" ss -Htan state established state close-wait \
			state syn-sent state syn-recv)
		[ -z "$o" ] || { echo "TCP sockets left ($ns): $o"; bad=1; }
	done
	return $bad
}

# iwarp_gone: iwarp_left, then both devices and the module go.
iwarp_gone() {
	wait_for 10 iwarp_left || { iwarp_left; return 1; }
	rdma link delete si0
	ip netns exec b rdma link delete si1
	modprobe -r softrdma
}

# rping_long: a long rping -v -V (4 KiB pings) from the initial namespace
# to the server in b, running once 20 pings went; pids in $srv and $cli
# (the programs themselves: no wrapper stands in between).
rping_long() {
	ip netns exec b rping -s -a 10.0.0.2 -p "$P_RPING" -v -C 100000 -S 4096 \
		>"$TEST_TMP"/rping-srv.log 2>"$TEST_TMP"/rping-srv.err &
	srv=$!
	wait_listen b "$P_RPING"
	rping -c -a 10.0.0.2 -p "$P_RPING" -v -V -C 100000 -S 4096 \
		>"$TEST_TMP"/rping-cli.log 2>"$TEST_TMP"/rping-cli.err &
	cli=$!
	wait_for 60 rping_went 20 || { echo "rping did not start"; return 1; }
}

rping_went() {
	[ "$(grep -c '^ping data: ' "$TEST_TMP"/rping-cli.log)" -ge "$1" ] 2>/dev/null
}

# rping_cut WHO: WHO's rping (cli or srv) stopped early; what it printed
# is byte-exact; it saw the disconnect.
rping_cut() {
	local who=$1 prefix=ping log side
	[ "$who" = srv ] && prefix="server ping" side=server
	[ "$who" = cli ] && side=client
	log=$TEST_TMP/rping-$who.log
	local n
	n=$(grep -c "^$prefix data: " "$log") || true
	[ "$n" -lt 100000 ] || { echo "$who: all pings went"; return 1; }
	grep -q "^$side DISCONNECT EVENT" "$TEST_TMP"/rping-"$who".err || {
		echo "$who: no disconnect event"
		cat "$TEST_TMP"/rping-"$who".err
		return 1
	}
	! grep -q "data mismatch" "$TEST_TMP"/rping-"$who".err
	rping_expect "$n" 4096 "$prefix data: " "$log"
}

# send_bw_long: ib_send_bw -R for 60 s from the initial namespace to b;
# returns once the connection is up. Pids in $srv and $cli.
send_bw_long() {
	ip netns exec b ib_send_bw -d si1 -x 0 -R -F -D 60 -s 4096 -p "$P_SENDBW" \
		>"$TEST_TMP"/perf-srv.log 2>&1 &
	srv=$!
	wait_listen b "$P_SENDBW"
	ib_send_bw -d si0 -x 0 -R -F -D 60 -s 4096 -p "$P_SENDBW" 10.0.0.2 \
		>"$TEST_TMP"/perf-cli.log 2>&1 &
	cli=$!
	# Its output is buffered: the connection shows in ss.
	wait_for 60 send_bw_up
	sleep 5
	# shellcheck disable=SC2015 # either kill failing means it ended
	kill -0 $cli && kill -0 $srv || {
		echo "ib_send_bw ended early"
		cat "$TEST_TMP"/perf-cli.log "$TEST_TMP"/perf-srv.log
		return 1
	}
}

send_bw_up() {
	ss -Htn state established "( dport = :$P_SENDBW )" | grep -q .
}

# shellcheck disable=SC2154 # exit_rc: set by exits_within
exit_failed() {
	[ "$exit_rc" != 0 ] || { echo "exited with 0"; cat "$TEST_TMP"/perf-*.log; return 1; }
}

# send_bw_flushed LOG SIDE: perftest failed with a flush error (status 5,
# IBV_WC_WR_FLUSH_ERR) at SIDE.
send_bw_flushed() {
	# shellcheck disable=SC2015 # either grep failing is the failure
	grep -q "Completion with error at $2" "$1" &&
	grep -q "Failed status 5: " "$1" || { echo "$1:"; cat "$1"; return 1; }
}

# Abortive close by peer death: kill -9 one side of a running rping and of
# a running ib_send_bw; the other side ends in bounded time (rping sees the
# disconnect, perftest a flushed work request), and nothing is left.
kill_rping_both() {
	rping_long
	# The module stays while a connection is up.
	expect_fail 'in use' modprobe -r softrdma
	kill -KILL $cli
	exits_within $srv 30
	wait $cli || true
	rping_cut srv
	rping_long
	kill -KILL $srv
	exits_within $cli 30
	wait $srv || true
	rping_cut cli
}

# netem_perf TEST ARGS...: perftest.sh between si1 (netns b, server) and
# si0. One failure is the right status, not ours to fix: perftest's closing
# handshake runs on a second rdma_cm connection that it destroys without a
# disconnect; iw_cm closes that abruptly (a reset, as iWARP RNICs do), and
# under loss the peer's last message may not have arrived yet, so the peer's
# receive is flushed (status 5) after its table was printed.
netem_perf() {
	GIDX=0 "$REPO/tests/vm/perftest.sh" si1 b si0 - 10.0.0.2 "$@" && return 0
	local size=$4 logs=("$TEST_TMP/perf-cli.log" "$TEST_TMP/perf-srv.log")
	# No side waited for its timeout, both measured without an error...
	[ ! -s "$TEST_TMP"/perf-hang.log ] &&
		grep -q -E "^ +$size +[0-9]+ " "$TEST_TMP"/perf-cli.log &&
		grep -q -E "^ +$size +[0-9]+ " "$TEST_TMP"/perf-srv.log &&
		! grep -q -i 'completion with error' "${logs[@]}" &&
		# ...and only the closing handshake failed, flushed, after the
		# table (whatever the sides then print: seen are "Failed to close
		# connection" and "Terminated").
		grep -h -A 3 -E "^ +$size +[0-9]+ " "${logs[@]}" |
		grep -q 'Bad wc status -- 5 ' || return 1
	echo "$1: the closing handshake was flushed after the run (accepted)"
}

# fin_drop NS DEV: DEV in netns NS drops every TCP segment with FIN it
# would send.
fin_drop() {
	modprobe -a sch_ingress cls_flower act_gact
	ip netns exec "$1" tc qdisc add dev "$2" clsact
	ip netns exec "$1" tc filter add dev "$2" egress protocol ip flower \
		ip_proto tcp tcp_flags 0x1/0x1 action drop
}

# fin_waits NS PORT: in netns NS a socket to PORT waits for its FIN's ACK,
# still ours (a released one would be an orphan: inode 0).
fin_waits() {
	ip netns exec "$1" ss -Htane state fin-wait-1 state closing "dport = :$2" |
		grep -v ' ino:0 ' | grep -q .
}

# fin_lost_rping NS IP PORT: 3 rpings from a client in netns NS, whose FINs
# are dropped, to a server in the initial one on IP (its pid in $srv); the
# client's socket waits for its FIN's ACK.
fin_lost_rping() {
	timeout 60 rping -s -a "$2" -p "$3" -v -C 3 -S 64 >"$TEST_TMP"/fin-srv.log 2>&1 &
	srv=$!
	wait_listen - "$3"
	ip netns exec "$1" timeout 60 rping -c -a "$2" -p "$3" -v -V -C 3 -S 64
	wait_for 10 fin_waits "$1" "$3" || { ip netns exec "$1" ss -tane; return 1; }
}

# iwarp_conformance PORT ARGS...: verbs_iwarp's server on si1 (netns b),
# its client on si0; both must pass. The client's output (with its "# conn"
# and "# term" lines) is kept in $TEST_TMP/iwconf-cli.log.
iwarp_conformance() {
	local port=$1 srv rc=0
	shift
	# IWARP_ONLY=GROUP,...: run only these groups (debugging).
	set -- "$@" ${IWARP_ONLY:+--only "$IWARP_ONLY"}
	ip netns exec b timeout 600 "$IWTEST" --server 10.0.0.2 "$port" "$@" \
		>"$TEST_TMP"/iwconf-srv.log 2>&1 &
	srv=$!
	wait_listen b $((port + 1))
	timeout 600 "$IWTEST" --client 10.0.0.2 "$port" "$@" >"$TEST_TMP"/iwconf-cli.log 2>&1 || rc=1
	wait $srv || rc=$((rc + 2))
	sed 's/^/client: /' "$TEST_TMP"/iwconf-cli.log | grep -v '^client: ok '
	sed 's/^/server: /' "$TEST_TMP"/iwconf-srv.log | grep -v '^server: ok '
	[ $rc = 0 ]
}

# iwext_run SRV_NS CLI_NS SRV_IP SRV_MODE CLI_MODE: verbs_iwarp_ext's
# server in SRV_NS ("-": the initial one), its client in CLI_NS; both
# must pass every check.
iwext_run() {
	local sns=$1 cns=$2 ip=$3 smode=$4 cmode=$5 spre=() cpre=() srv dog rc=0
	[ "$sns" = - ] || spre=(ip netns exec "$sns")
	[ "$cns" = - ] || cpre=(ip netns exec "$cns")
	"${spre[@]}" timeout 120 "$IWEXT" server "$ip" "$P_AUX" "$smode" >"$TEST_TMP"/iwext-srv.log 2>&1 &
	srv=$!
	wait_listen "$sns" "$P_AUX"
	# A completion the client waits for (60 s at most): the sockets, the
	# QPs and where the programs wait, while it waits.
	"$REPO/tests/vm/hangdump.sh" 40 verbs_iwarp_ext "$sns" "$cns" >"$TEST_TMP"/iwext-hang.log 2>&1 &
	dog=$!
	"${cpre[@]}" timeout 120 "$IWEXT" client "$ip" "$P_AUX" "$cmode" >"$TEST_TMP"/iwext-cli.log 2>&1 ||
		rc=1
	wait $srv || rc=1
	hangdump_stop $dog
	if [ $rc != 0 ]; then
		echo "verbs_iwarp_ext $smode/$cmode, server $ip:"
		grep -v '^ok ' "$TEST_TMP"/iwext-cli.log | sed 's/^/client: /'
		grep -v '^ok ' "$TEST_TMP"/iwext-srv.log | sed 's/^/server: /'
		cat "$TEST_TMP"/iwext-hang.log
	fi
	return $rc
}

# iw_matrix SERVER_DEV SERVER_NS CLIENT_DEV CLIENT_NS SERVER_IP: every
# perftest program in IW_PROGS (default: all but the atomics, which iWARP
# has not) over rdma_cm (-R), all sizes (-a: 2 B to 8 MiB, each size must
# report), or each size in IW_SIZES if set. An iWARP port has one GID,
# index 0. Runs every program, fails if any failed.
iw_matrix() {
	local t s rc=0
	for t in ${IW_PROGS:-ib_send_lat ib_write_lat ib_read_lat ib_send_bw ib_write_bw ib_read_bw}; do
		if [ -z "${IW_SIZES:-}" ]; then
			echo "== $t -a"
			GIDX=0 "$PERF" "$@" "$t" -R -a -n 5 || rc=1
			continue
		fi
		for s in $IW_SIZES; do
			echo "== $t -s $s"
			GIDX=0 "$PERF" "$@" "$t" -R -s "$s" -n 5 || rc=1
		done
	done
	return $rc
}

# Interop with siw, perftest: siw on veth0 (initial namespace), softiwarp
# on veth1 (b); siw serves, then softiwarp does.
siw_pair() {
	modprobe siw
	rdma link add siw0 type siw netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
}

siw_cleanup() {
	rdma link delete siw0 2>/dev/null
	modprobe -r siw
}

# iw_param NAME VALUE: set one of our iWARP module parameters.
iw_param() {
	echo "$2" >"/sys/module/softrdma/parameters/$1"
}

# mpa_check PCAP REQ_REV REQ_FLAGS REP_REV REP_FLAGS: the one MPA request
# and reply in PCAP (Ethernet, IPv4, TCP) carry these revisions and flags
# (hex: 0x80 markers, 0x40 CRC, 0x20 reject, 0x10 enhanced; the reserved
# low four bits, two of which offer and accept RFC 7306 between softrdma
# peers, are iwarp_ext's to check); with CRC agreed, the first FPDU after
# the reply has a CRC field that is not zero.
mpa_check() {
	python3 - "$@" <<'PY'
import struct, sys
path, want = sys.argv[1], [int(a, 0) for a in sys.argv[2:]]
data = open(path, 'rb').read()
off, frames, fpdu = 24, {}, None
while off + 16 <= len(data):
    caplen = struct.unpack_from('<I', data, off + 8)[0]
    pkt = data[off + 16:off + 16 + caplen]
    off += 16 + caplen
    if len(pkt) < 34 or pkt[12:14] != b'\x08\x00' or pkt[23] != 6:
        continue
    ip = 14 + (pkt[14] & 15) * 4
    pay = pkt[ip + (pkt[ip + 12] >> 4) * 4:]
    if pay[:12] == b'MPA ID Req F' or pay[:12] == b'MPA ID Rep F':
        frames[pay[7:10]] = (pay[17], pay[16] & 0xf0)
        rest = pay[20 + struct.unpack_from('>H', pay, 18)[0]:]
        if pay[7:10] == b'Rep' and len(rest) >= 8:
            fpdu = rest
    elif b'Rep' in frames and fpdu is None and len(pay) >= 8:
        fpdu = pay
got = [frames.get(b'Req', (-1, -1)), frames.get(b'Rep', (-1, -1))]
if got != [(want[0], want[1]), (want[2], want[3])]:
    print('MPA (rev, flags) request %r reply %r, want %r' % (got[0], got[1], want))
    sys.exit(1)
if want[3] & 0x40:
    if fpdu is None:
        print('no FPDU after the MPA reply')
        sys.exit(1)
    ulen = struct.unpack_from('>H', fpdu)[0]
    end = 2 + ulen + (-(2 + ulen) & 3)
    if fpdu[end:end + 4] in (b'', b'\0\0\0\0'):
        print('CRC agreed, but the first FPDU has none: %r' % fpdu[:24])
        sys.exit(1)
PY
}

# mpa_cap PORT REQ_REV REQ_FLAGS REP_REV REP_FLAGS CMD...: run CMD while
# capturing TCP port PORT on veth1 (CMD started once tcpdump says it
# listens), then mpa_check.
mpa_cap() {
	local port=$1 cap rc=0
	shift
	ip netns exec b tcpdump -i veth1 -U -s 0 -w "$TEST_TMP"/mpa.pcap tcp port "$port" \
		2>"$TEST_TMP"/mpa-cap.err &
	cap=$!
	wait_for 10 grep -q 'listening on' "$TEST_TMP"/mpa-cap.err
	"${@:5}" || rc=1
	sleep 1
	kill $cap
	wait $cap
	[ $rc = 0 ] && mpa_check "$TEST_TMP"/mpa.pcap "$1" "$2" "$3" "$4"
}

# mpa_rping SRV_NS CLI_NS SRV_IP REQ_REV REQ_FLAGS REP_REV REP_FLAGS: rping
# as rping_run does, the MPA frames checked.
mpa_rping() {
	mpa_cap "$P_RPING" "$4" "$5" "$6" "$7" rping_run "$1" "$2" "$3" 10 4000
}

# ucmatose: CONNECTIONS connections, COUNT sends of SIZE bytes each way,
# then disconnects; both sides must exit 0 and report every step. It does
# not check completion statuses: the kernel log must show no Terminate.
# ucma_run SRV_NS CLI_NS SRV_IP ARGS...
ucma_run() {
	local sns=$1 cns=$2 ip=$3 spre=() cpre=() srv rc=0 t0
	shift 3
	[ "$sns" = - ] || spre=(ip netns exec "$sns")
	[ "$cns" = - ] || cpre=(ip netns exec "$cns")
	t0=$(dmesg | grep -c -i terminat || true)
	"${spre[@]}" timeout 120 ucmatose -p "$P_UCMA" "$@" >"$TEST_TMP"/ucma-srv.log 2>&1 &
	srv=$!
	wait_listen "$sns" "$P_UCMA"
	"${cpre[@]}" timeout 120 ucmatose -s "$ip" -p "$P_UCMA" "$@" >"$TEST_TMP"/ucma-cli.log 2>&1 || rc=$?
	wait $srv || rc=$((rc + 100 + $?))
	if [ $rc != 0 ] ||
		! grep -q "^data transfers complete" "$TEST_TMP"/ucma-srv.log ||
		! grep -q "^data transfers complete" "$TEST_TMP"/ucma-cli.log ||
		! grep -q "^disconnected" "$TEST_TMP"/ucma-srv.log ||
		[ "$(dmesg | grep -c -i terminat || true)" != "$t0" ]; then
		echo "ucmatose $*: exit $rc"
		tail -n 8 "$TEST_TMP"/ucma-cli.log "$TEST_TMP"/ucma-srv.log
		dmesg | tail -n 5
		return 1
	fi
}
