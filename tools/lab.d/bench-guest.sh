#!/bin/bash
# tools/lab bench, the guests' half (tools/lab.d/bench.sh boots the stock
# kernel and runs it):  bench-guest.sh OUT ROUNDS ITERS POLL_US PARTS...
# PARTS, each measured in ROUNDS interleaved rounds (every number is the
# median of its rounds):
#   veth  the wire of one guest (tools/lab run): every device pair placed
#         alike across the fixture's veth pair, the server on veth1 in netns
#         b, the client on veth0 here: softroce, softiwarp and siw with
#         their own kind, rxe (client) to softroce (6.12's rxe receives in
#         the initial netns only), and the kernel's TCP (iperf3, sockperf);
#         at netdev MTU 1500 and 9000 (RoCE's path MTU then 4096)
#   pair  the same across two guests (tools/lab pair; this is guest A and
#         the client, guest B is reached with `peer`), rxe on both ends
#   loop  every device alone on veth0, server and client both on it
#         (loopback), one after the other (rxe, siw, softroce, softiwarp);
#         softrdma across the two namespaces, the guest's own memcpy and
#         cache-line handoff; then the SQ poller (poll_us) against a kick
#         per post
# Wire rows: latency (write, send, read; 2 B), the 8-byte message rate, the
# bandwidth of 64 KiB and 1 MiB messages and of 64 KiB over 8 QPs (TCP: 8
# streams), each with the CPU time of the guests (both ends; /proc/stat's
# busy time from the client's start to its end) per GiB moved.
# Appends every sample (KEY DEVICE VALUE; DEVICE is WIRE.MTU.KIND on the
# wire) to OUT/bench.tsv; tools/lab.d/bench-report.sh makes the tables.
set -u
out=$1 rounds=$2 iters=$3 poll_on=$4
shift 4
parts=" $* "
here=$(cd "$(dirname "$0")" && pwd)
# BENCH_ROWS: the wire's rows to run (rxe: rxe>sr across the veth pair).
rows=${BENCH_ROWS:-tcp siw softiwarp rxe softroce}
samples=$out/bench.tsv
hz=$(getconf CLK_TCK)

DEVS="rxe siw softroce softiwarp"
declare -A NAME=([rxe]=rxe0 [siw]=siw0 [softroce]=sr0 [softiwarp]=si0)
SWEEP="2 64 1024 4096 16384 65536 262144 1048576"

# Where the server side runs: SRV is "-" (here), a netns (b) or "peer"
# (guest B of a pair).
SRV=-
on_srv() {
	case $SRV in
	-) "$@" ;;
	peer) peer "$@" ;;
	*) ip netns exec "$SRV" "$@" ;;
	esac
}

# srv_start PORT CMD...: the server CMD in the background (SRV_LIMIT, 120 s
# at most); returns once something listens on PORT (SRV_POLLS tenths of a
# second, 30 s, at most; listening). (On the exact clock guest time leaps
# ahead while the guest waits for the host: both are larger there.)
srv_job=
SRV_LIMIT=${SRV_LIMIT:-120}
srv_start() {
	local port=$1 n=${SRV_POLLS:-300}
	shift
	if [ "$SRV" = peer ]; then
		# B's agent sees a socket itself; a CM ID is polled from here.
		if [ -z "$SRV_CM" ]; then
			srv_job=$(peer -b -l "$port" timeout --foreground "$SRV_LIMIT" "$@" 2>/tmp/bench-srv.err) && return 0
			srv_job=
			return 1
		fi
		srv_job=$(peer -b timeout --foreground "$SRV_LIMIT" "$@" 2>/tmp/bench-srv.err) || {
			srv_job=
			return 1
		}
	else
		# A process group of its own, so srv_end can end all of it.
		set -m
		on_srv timeout --foreground "$SRV_LIMIT" "$@" >/dev/null 2>/tmp/bench-srv.err &
		srv_job=$!
		set +m
	fi
	until listening "$port"; do
		n=$((n - 1))
		if [ $n -le 0 ] || { [ "$SRV" != peer ] && ! kill -0 "$srv_job" 2>/dev/null; }; then
			return 1
		fi
		sleep 0.1
	done
}

# listening PORT: where the server runs, a TCP or UDP socket listens on
# PORT (perftest's own, or over rdma_cm an iWARP driver's listening
# kernel socket), or with SRV_CM set (a RoCE server through the RDMA CM,
# which has no socket) a listening CM ID.
SRV_CM=
listening() {
	[ -n "$(on_srv ss -Hltun "sport = :$1")" ] ||
		{ [ -n "$SRV_CM" ] && on_srv rdma res show cm_id 2>/dev/null | grep LISTEN | grep -qE ":$1( |$)"; }
}

# srv_end [kill]: wait for the server to end (after its client), or end it.
srv_end() {
	[ -n "$srv_job" ] || return 0
	if [ "$SRV" = peer ]; then
		if [ -n "${1:-}" ]; then
			peer -k "$srv_job" >/dev/null 2>&1
		else
			peer -w "$srv_job" >/dev/null 2>&1
		fi
	else
		[ -z "${1:-}" ] || kill -TERM -- "-$srv_job" 2>/dev/null
		wait "$srv_job" 2>/dev/null
	fi
	srv_job=
	return 0
}

# busy: BUSY, the CPU time the guests have been busy so far (both, in a
# pair), in clock ticks: /proc/stat's user, nice, system, irq, softirq and
# steal. Here without a process (it runs inside measured windows).
BUSY=0
busy() {
	ticks </proc/stat
	[ "$SRV" = peer ] || return 0
	local t=$BUSY
	ticks < <(peer --read /proc/stat)
	BUSY=$((BUSY + t))
}
# ticks: BUSY of a /proc/stat on stdin (its first line: cpu user nice
# system idle iowait irq softirq steal ...).
ticks() {
	local c u n s idle iow q sq st r
	read -r c u n s idle iow q sq st r
	: "$c" "$idle" "$iow" "$r"
	BUSY=$((u + n + s + q + sq + st))
}

# run CDEV SDEV IP TEST ARGS...: one perftest run, the server SDEV where
# SRV says, the client CDEV here; sets ROW (the last row of the client's
# table, empty if none) and TICKS (busy ticks from the client's table
# header, printed once connected, to its result: the transfer, without
# the start-up). -F: the CPU frequency check of perftest fails now and
# then under TCG (r^2 below 0.9), and the program then gives up on its
# report.
# A run without a result is tried once more: an rdma_cm server listens on
# every device of its kind, the other end's too, and siw refuses a first
# connection now and then.
ROW=
TICKS=0
run() {
	run_once "$@"
	[ -n "$ROW" ] || { sleep 1; run_once "$@"; }
}
run_once() {
	local cdev=$1 sdev=$2 ip=$3 t=$4 line t0=
	shift 4
	ROW=
	TICKS=0
	if ! srv_start 18515 "$t" -d "$sdev" -F "$@"; then
		echo "$t on $sdev: the server did not start: $(tail -n 2 /tmp/bench-srv.err | tr "\n" " ")" >&2
		srv_end kill
		return
	fi
	# The listener is up; give the server a moment to wait in accept().
	[ "$SRV" = peer ] || sleep 0.2
	while IFS= read -r line; do
		case $line in
		*"#bytes"*)
			busy
			t0=$BUSY
			;;
		" "*[0-9]*)
			[[ $line =~ ^\ +[0-9]+\ +[0-9]+\  ]] || continue
			ROW=$line
			[ -z "$t0" ] || { busy; TICKS=$((BUSY - t0)); }
			;;
		esac
	done < <(timeout 120 stdbuf -oL "$t" -d "$cdev" -F "$@" "$ip" 2>/tmp/bench-cli.err)
	srv_end
	# A missing row says why (on stderr: the tables stay clean), with a
	# failed completion's status.
	[ -n "$ROW" ] ||
		echo "$t on $cdev: no result: $({
			grep -m 2 -iE 'status|error' /tmp/bench-cli.err
			tail -n 2 /tmp/bench-cli.err
		} | tr "\n" " ")" >&2
}

# put KEY DEVICE VALUE: one sample; nothing for a value that is not a
# positive number (a failed run's 0.00, perftest's inf).
put() {
	[[ $3 =~ ^[0-9]*\.?[0-9]+$ && $3 =~ [1-9] ]] || return 0
	echo "$1 $2 $3" >>"$samples"
}
# col N: column N of ROW.
col() { echo "$ROW" | awk -v c="$1" '{ print $c }'; }
# per_gib BYTES: the CPU seconds of TICKS per GiB of BYTES.
per_gib() {
	awk -v t="$TICKS" -v b="$1" -v hz="$hz" 'BEGIN { if (b > 0) printf "%.3f", t / hz / (b / 1073741824) }'
}

# sample KEY KIND COLUMN TEST ARGS...: one loopback run of KIND's device;
# column COLUMN of its row goes to the samples.
sample() {
	local key=$1 kind=$2 c=$3 t=$4 dev
	shift 4
	dev=${NAME[$kind]}
	# shellcheck disable=SC2046 # cm_flag: no word or one
	run "$dev" "$dev" 10.0.0.1 "$t" $(cm_flag "$kind") "$@"
	put "$key" "$kind" "$(col "$c")"
}

# bw_iters SIZE: about 32 MiB per run, at least 16 and at most ITERS.
bw_iters() {
	local n=$((32 * 1024 * 1024 / $1))
	[ $n -gt "$iters" ] && n=$iters
	[ "$n" -lt 16 ] && n=16
	echo "$n"
}

# iWARP devices connect through rdma_cm (-R), as users run them.
cm_flag() { case $1 in siw | softiwarp) echo -R ;; esac; }

# dev_add WHERE KIND NETDEV NAME / dev_del WHERE KIND NAME: an RDMA device
# here (WHERE -) or on the server's side (srv). rxe holds UDP port 4791
# while its module is loaded, so rxe and siw come and go with their
# modules; softrdma stays loaded (poll_us is its parameter).
dev_add() {
	local at=on_srv
	[ "$1" = - ] && at=
	case $2 in
	rxe) $at modprobe rdma_rxe && $at rdma link add "$4" type rxe netdev "$3" ;;
	siw) $at modprobe siw && $at rdma link add "$4" type siw netdev "$3" ;;
	*) $at rdma link add "$4" type "$2" netdev "$3" ;;
	esac
}
dev_del() {
	local at=on_srv
	[ "$1" = - ] && at=
	$at rdma link del "$3" 2>/dev/null
	case $2 in
	rxe) $at modprobe -r rdma_rxe 2>/dev/null ;;
	siw) $at modprobe -r siw 2>/dev/null ;;
	esac
	return 0
}
dev_up() { dev_add - "$1" veth0 "${NAME[$1]}"; }
dev_down() { dev_del - "$1" "${NAME[$1]}"; }

# The wire: WIRE (veth or pair) sets where the server runs, the netdevs
# and the server's address.
wire_at() {
	case $1 in
	veth) SRV=b CNET=veth0 SNET=veth1 SIP=10.0.0.2 ;;
	pair) SRV=peer CNET=eth0 SNET=eth0 SIP=$LAB_PEER_IP ;;
	esac
}
# wire_mtu MTU: both ends of the wire.
wire_mtu() {
	ip link set "$CNET" mtu "$1" && on_srv ip link set "$SNET" mtu "$1"
}
# wire_loss P [SEED]: a fresh netem dropping P % on both ends of the wire
# (for P 0, none): the client's sends here, the server's (ACKs, NAKs,
# replies) there; with SEED, each end its own (one seed would drop the
# Nth packet of both directions alike). wire_clean: no qdisc of ours on
# either end.
wire_loss() {
	local c=() s=()
	wire_clean
	[ -z "${2:-}" ] || { c=(seed "$2") s=(seed $(($2 + 1))); }
	[ "$1" != 0 ] || return 0
	tc qdisc add dev "$CNET" root netem loss "$1%" "${c[@]}" &&
		on_srv tc qdisc add dev "$SNET" root netem loss "$1%" "${s[@]}"
}
wire_clean() {
	tc qdisc del dev "$CNET" root 2>/dev/null
	on_srv tc qdisc del dev "$SNET" root 2>/dev/null
	return 0
}
# wire_segs N: both ends' gso_max_segs: 1 hands a qdisc on them wire
# packets, one an skb (TCP then sends one segment an skb), 65535 (the
# netdevs' own) whatever the stacks hand over.
wire_segs() {
	ip link set "$CNET" gso_max_segs "$1" && on_srv ip link set "$SNET" gso_max_segs "$1"
}
# The client's and the server's kind of each wire row.
declare -A CKIND=([softroce]=softroce [softiwarp]=softiwarp [siw]=siw [rxe]=rxe [rxe-sr]=rxe)
declare -A SKIND=([softroce]=softroce [softiwarp]=softiwarp [siw]=siw [rxe]=rxe [rxe-sr]=softroce)
declare -A SNAME=([rxe]=rxe1 [siw]=siw1 [softroce]=sr1 [softiwarp]=si1)

# wbw KEY DEV SIZE QPS ARGS...: one bandwidth run of the wire's pair;
# its MiB/s and its CPU seconds per GiB (KEY with bw_ turned to cpu_).
wbw() {
	local key=$1 d=$2 size=$3 qps=$4 n
	shift 4
	n=$(bw_iters "$size")
	[ "$qps" = 1 ] || n=$((n / qps < 16 ? 16 : n / qps))
	run "$cdev" "$sdev" "$SIP" ib_write_bw "$@" -s "$size" -q "$qps" -n "$n"
	[ -n "$ROW" ] || return 0
	put "$key" "$d" "$(col 4)"
	put "${key/bw/cpu}" "$d" "$(per_gib $((size * n * qps)))"
}

# wire_rdma WIRE MTU ROW: every metric of ROW's device pair (softroce,
# softiwarp, siw, rxe, rxe-sr) across the wire.
wire_rdma() {
	local d=$1.$2.$3 ck=${CKIND[$3]} sk=${SKIND[$3]} cdev sdev f
	cdev=${NAME[$ck]} sdev=${SNAME[$sk]}
	f=$(cm_flag "$ck")
	# RoCE: GID 1, ::ffff:IPv4 (the devices come after the addresses).
	[ -n "$f" ] || f="-x 1"
	if ! dev_add - "$ck" "$CNET" "$cdev" || ! dev_add srv "$sk" "$SNET" "$sdev"; then
		echo "cannot add the $3 pair on the wire" >&2
		dev_del - "$ck" "$cdev" 2>/dev/null
		return
	fi
	local t k key size qps
	for t in write send read; do
		# shellcheck disable=SC2086 # f: flags
		run "$cdev" "$sdev" "$SIP" ib_${t}_lat $f -s 2 -n "$iters"
		put ${t}_lat "$d" "$(col 5)"
	done
	# shellcheck disable=SC2086
	run "$cdev" "$sdev" "$SIP" ib_write_bw $f -s 8 -n "$iters"
	put write_pps "$d" "$(col 5)"
	for k in bw_65536:65536:1 bw_1048576:1048576:1 bw_q8:65536:8; do
		IFS=: read -r key size qps <<<"$k"
		# shellcheck disable=SC2086
		wbw "$key" "$d" "$size" "$qps" $f
	done
	# The client's first: across the veth pair both are of one kernel,
	# whose rxe or siw module goes with the last device.
	dev_del - "$ck" "$cdev"
	dev_del srv "$sk" "$sdev"
}

# iperf KEY DEVICE SIZE STREAMS: one iperf3 run of 3 s (SIZE-byte writes),
# MiB/s (also in IPERF_MIB) and CPU seconds per GiB. Not a byte count: the receiver's time
# counts whole seconds at least, so a transfer shorter than a second read
# as ~32 MiB/s whatever the wire.
iperf() {
	local key=$1 d=$2 size=$3 p=$4 res
	IPERF_MIB=
	srv_start 5201 iperf3 -s -1 -p 5201 || {
		echo "iperf3: the server did not start: $(tail -n 2 /tmp/bench-srv.err | tr "\n" " ")" >&2
		srv_end kill
		return
	}
	# One JSON object a line: the "start" event once connected, "end" with
	# the sums once done; busy time between them.
	local line t0='' end=''
	TICKS=0
	while IFS= read -r line; do
		case $line in
		'{"event":"start"'*)
			busy
			t0=$BUSY
			;;
		'{"event":"end"'*)
			end=$line
			[ -z "$t0" ] || { busy; TICKS=$((BUSY - t0)); }
			;;
		*'"error"'*) end=$line ;;
		esac
	done < <(timeout 120 iperf3 -c "$SIP" -p 5201 -t 3 -l "$size" -P "$p" \
		--json-stream --forceflush 2>&1)
	srv_end
	# The receiver's sum: bytes and seconds.
	res=$(echo "$end" | sed -n 's/.*"sum_received": *{\([^}]*\)}.*/\1/p' | tr , '\n' |
		awk -F: '/"seconds"/ { s = $2 } /"bytes"/ { b = $2 }
			END { if (s > 0 && b > 0) printf "%.2f %d", b / s / 1048576, b }')
	if [ -z "$res" ]; then
		echo "iperf3: no result: $(echo "$end" | head -c 300)" >&2
		return
	fi
	IPERF_MIB=${res% *}
	put "$key" "$d" "$IPERF_MIB"
	put "${key/bw/cpu}" "$d" "$(per_gib "${res#* }")"
}

# pingpong DEVICE PORT [--tcp]: a busy-polling sockperf ping-pong over UDP
# (or TCP), its smallest message, 14 B; the median of half the round trip,
# as perftest reports latency, in the send_lat column.
pingpong() {
	local d=$1 port=$2
	shift 2
	if srv_start "$port" sockperf sr "$@" -i "$SIP" -p "$port" --nonblocked --timeout 0; then
		timeout 60 sockperf pp "$@" -i "$SIP" -p "$port" -m 14 -t "$((iters >= 1000 ? 2 : 1))" \
			--nonblocked --timeout 0 >/tmp/bench-sockperf.log 2>&1
		put send_lat "$d" "$(awk '/percentile 50.000 =/ { print $NF }' /tmp/bench-sockperf.log)"
	else
		echo "sockperf: the server did not start: $(tail -n 2 /tmp/bench-srv.err | tr "\n" " ")" >&2
	fi
	srv_end kill
}

# wire_tcp WIRE MTU: the kernel's TCP over the same wire: a busy-polling
# ping-pong (sockperf, its smallest message, 14 B; half the round trip,
# as perftest reports latency) and iperf3 bandwidth.
wire_tcp() {
	local d=$1.$2.tcp
	pingpong "$d" 11111 --tcp
	iperf bw_65536 "$d" 65536 1
	iperf bw_1048576 "$d" 1048576 1
	iperf bw_q8 "$d" 65536 8
}

# srv_noports: the server side's UDP datagrams that found no socket so far
# (/proc/net/snmp's Udp NoPorts): each went through the whole IP and UDP
# receive, as a RoCE packet does before its protocol handler.
srv_noports() {
	on_srv cat /proc/net/snmp | awk '$1 == "Udp:" && $2 !~ /^[0-9]/ {
		for (i = 2; i <= NF; i++) if ($i == "NoPorts") c = i; next }
		$1 == "Udp:" { print $c; exit }'
}

# link_rate SIZE: datagrams of SIZE bytes a frame (Ethernet header and
# all) per second that cross the wire and the server's IP and UDP receive,
# sent by pktgen (the kernel's packet generator: no socket, no protocol)
# from CNET for 2 s to an unused UDP port of the server; in LINK_PPS.
LINK_PPS=
link_rate() {
	local pg=/proc/net/pktgen mac n0 n1 t0 t1
	LINK_PPS=
	modprobe pktgen || return 0
	mac=$(on_srv cat "/sys/class/net/$SNET/address")
	echo "rem_device_all" >$pg/kpktgend_0
	echo "add_device $CNET" >$pg/kpktgend_0
	{
		echo "pkt_size $1"
		echo "count 0"
		echo "delay 0"
		echo "clone_skb 0"
		echo "dst $SIP"
		echo "dst_mac $mac"
		echo "udp_dst_min 9"
		echo "udp_dst_max 9"
	} | while read -r c; do echo "$c" >"$pg/$CNET"; done
	(echo start >$pg/pgctrl) 2>/dev/null &
	sleep 0.5
	n0=$(srv_noports) t0=$(date +%s.%N)
	sleep 2
	n1=$(srv_noports) t1=$(date +%s.%N)
	echo stop >$pg/pgctrl
	wait
	echo "rem_device_all" >$pg/kpktgend_0
	LINK_PPS=$(awk -v a="$n0" -v b="$n1" -v s="$t0" -v e="$t1" 'BEGIN { if (e > s && b > a) printf "%.0f", (b - a) / (e - s) }')
}

# wire_link WIRE MTU: what the wire itself carries, whatever the protocol
# on top: a busy-polling UDP ping-pong (sockperf, 14 B; half the round
# trip), the rate of datagrams as long as an 8-byte RDMA WRITE's RoCE
# packet, and the payload the link moves in datagrams as long as a full
# RoCE packet at the path MTU (1024 at MTU 1500, 4096 at 9000; one
# message per datagram, as RoCE sends them on a wire that cannot carry a
# train whole). Row "link" of the wire's table.
wire_link() {
	local d=$1.$2.link pmtu=1024
	[ "$2" -ge 9000 ] && pmtu=4096
	pingpong "$d" 11112
	# Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, 8 bytes, ICRC 4.
	link_rate 82
	[ -z "$LINK_PPS" ] || put write_pps "$d" "$(awk -v p="$LINK_PPS" 'BEGIN { printf "%.4f", p / 1e6 }')"
	# A middle packet: Ethernet, IPv4, UDP, BTH, the payload, ICRC.
	link_rate $((14 + 20 + 8 + 12 + pmtu + 4))
	[ -z "$LINK_PPS" ] || put bw_65536 "$d" "$(awk -v p="$LINK_PPS" -v m=$pmtu 'BEGIN { printf "%.2f", p * m / 1048576 }')"
}

# wire_round WIRE: one round of the wire's rows, at MTU 1500 and 9000.
wire_round() {
	local mtu kind
	wire_at "$1"
	for mtu in 1500 9000; do
		wire_mtu $mtu || { echo "cannot set MTU $mtu on the $1 wire" >&2; continue; }
		echo "round $r/$rounds: $1 wire, MTU $mtu" >&2
		for kind in $2; do
			case " $rows " in *" ${kind%-sr} "*) ;; *) continue ;; esac
			if [ "$kind" = tcp ]; then
				wire_tcp "$1" $mtu
				wire_link "$1" $mtu
			else
				wire_rdma "$1" $mtu "$kind"
			fi
		done
	done
	wire_mtu 1500
	SRV=-
}

# pair_loss_round: one round of the two guests' loss rows (BENCH_PAIR_LOSS:
# loss shares in percent, e.g. "1 5"; none by default): for each row of
# BENCH_PAIR_LOSS_ROWS, 64 KiB SENDs without loss, then with netem
# dropping each share of the wire packets on both guests' eth0
# (gso_max_segs 1 on both, and roce_gso=0 in both for softroce: netem
# drops one wire packet at a time, not a TCP segment of up to 64 KiB or
# a softroce train); MTU 1500. RDMA rows: ib_send_bw, PAIR_LOSS_MSGS
# messages (softroce-sr and the iWARP rows through the RDMA CM, where
# softroce's ECE agrees on selective repeat; rxe to rxe without it,
# go-back-N); tcp: iperf3, one stream of 64 KiB writes, 3 s. Samples
# bw_loss_P of device pair.loss.ROW (and iperf3's cpu_loss_P), and
# share_loss_P: the cell's MiB/s over the row's lossless MiB/s of the
# same round, in percent (the rounds' load varies, a round's cells see
# about the same).
PAIR_LOSS=${BENCH_PAIR_LOSS:-}
PAIR_LOSS_ROWS=${BENCH_PAIR_LOSS_ROWS:-tcp softroce-sr softiwarp siw rxe}
PAIR_LOSS_MSGS=256
GSOP=/sys/module/softrdma/parameters/roce_gso
pair_loss_round() {
	local row k p cdev sdev f cm v b0
	wire_at pair
	if ! wire_mtu 1500 || ! wire_segs 1; then
		echo "cannot set up the pair's wire for the loss rows" >&2
		SRV=-
		return
	fi
	for row in $PAIR_LOSS_ROWS; do
		echo "round $r/$rounds: pair wire, loss, $row" >&2
		k=${row%-sr}
		if [ "$k" != tcp ]; then
			cdev=${NAME[$k]} sdev=${SNAME[$k]} f=-R cm=
			[ "$k" != rxe ] || f="-x 1"
			# RoCE through the CM: no socket to wait for.
			[ "$k" != softroce ] || cm=1
			if ! dev_add - "$k" "$CNET" "$cdev" || ! dev_add srv "$k" "$SNET" "$sdev"; then
				echo "cannot add the $row pair on the wire" >&2
				dev_del - "$k" "$cdev"
				continue
			fi
			# (The module is loaded in both guests now.)
			[ "$k" != softroce ] || { echo 0 >$GSOP && on_srv sh -c "echo 0 >$GSOP"; }
		fi
		b0=
		for p in 0 $PAIR_LOSS; do
			wire_loss "$p" || { echo "cannot set netem ($p %) on the pair's eth0" >&2; continue; }
			if [ "$k" = tcp ]; then
				iperf "bw_loss_$p" "pair.loss.$row" 65536 1
				v=$IPERF_MIB
			else
				# shellcheck disable=SC2086 # f: flags
				SRV_CM=$cm run "$cdev" "$sdev" "$SIP" ib_send_bw $f -s 65536 -n "$PAIR_LOSS_MSGS"
				v=$(col 4)
				put "bw_loss_$p" "pair.loss.$row" "$v"
			fi
			if [ "$p" = 0 ]; then
				b0=$v
			else
				put "share_loss_$p" "pair.loss.$row" "$(awk -v v="$v" -v b="$b0" \
					'BEGIN { if (v + 0 > 0 && b + 0 > 0) printf "%.2f", 100 * v / b }')"
			fi
		done
		wire_clean
		[ "$k" = tcp ] || {
			[ "$k" != softroce ] || { echo 1 >$GSOP && on_srv sh -c "echo 1 >$GSOP"; }
			dev_del - "$k" "$cdev"
			dev_del srv "$k" "$sdev"
		}
	done
	wire_segs 65535
	SRV=-
}

# loop_round: one round of every device alone on veth0, and across the
# two namespaces.
loop_round() {
	local kind s
	for kind in $DEVS; do
		echo "round $r/$rounds: $kind (loopback)" >&2
		dev_up "$kind" || { echo "cannot add the $kind device" >&2; continue; }
		sample write_lat "$kind" 5 ib_write_lat -s 2 -n "$iters"
		sample send_lat "$kind" 5 ib_send_lat -s 2 -n "$iters"
		sample read_lat "$kind" 5 ib_read_lat -s 2 -n "$iters"
		sample write_pps "$kind" 5 ib_write_bw -s 8 -n "$iters"
		sample write_bw_q8 "$kind" 4 ib_write_bw -s 65536 -q 8 -n "$q8"
		for s in $SWEEP; do
			sample "bw_$s" "$kind" 4 ib_write_bw -s "$s" -n "$(bw_iters "$s")"
		done
		dev_down "$kind"
	done
	# softrdma across the namespaces: server in b on veth1, client here.
	SRV=b
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	run sr0 sr1 10.0.0.2 ib_write_bw -s 65536 -n "$(bw_iters 65536)"
	put ns_bw softroce "$(col 4)"
	rdma link del sr0
	ip netns exec b rdma link del sr1
	rdma link add si0 type softiwarp netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	run si0 si1 10.0.0.2 ib_write_bw -R -s 65536 -n "$(bw_iters 65536)"
	put ns_bw softiwarp "$(col 4)"
	rdma link del si0
	ip netns exec b rdma link del si1
	SRV=-
	"$here"/../../build/user/membench | awk '{ print $1, "machine", $2 }' >>"$samples"
}

# Sourced (exact-guest.sh): the helpers above, no rounds.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
q8=$((iters / 8))
[ $q8 -lt 16 ] && q8=16
for r in $(seq "$rounds"); do
	case $parts in *" veth "*) wire_round veth "tcp siw softiwarp rxe-sr softroce" ;; esac
	case $parts in *" pair "*) wire_round pair "tcp siw softiwarp rxe softroce" ;; esac
	case $parts in *" pair "*) [ -z "$PAIR_LOSS" ] || pair_loss_round ;; esac
	case $parts in *" loop "*) loop_round ;; esac
done

case $parts in *" loop "*) ;; *) exit 0 ;; esac
# The SQ poller (module parameter poll_us) against a kick on every post.
p=/sys/module/softrdma/parameters/poll_us
rdma link add sr0 type softroce netdev veth0
for r in $(seq "$rounds"); do
	for poll in "$poll_on" 0; do
		echo "$poll" >$p
		sample "poll_${poll}_write_lat" softroce 5 ib_write_lat -s 2 -n "$iters"
		sample "poll_${poll}_write_pps" softroce 5 ib_write_bw -s 8 -n "$iters"
	done
done
echo 0 >$p
rdma link del sr0
