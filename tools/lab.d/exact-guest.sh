#!/bin/bash
# tools/lab bench --exact, the guest's half (bench.sh boots the stock
# kernel on the exact clock: one vCPU, one guest nanosecond per
# instruction, the meter plugin counting): exact-guest.sh OUT METER
# Across the fixture's veth pair (server on veth1 in netns b, client on
# veth0 here), at netdev MTU 1500 and 9000 (BENCH_MTUS), for each stack of
# BENCH_ROWS (tcp siw softiwarp rxe-sr softroce softroce-odp; rxe-sr is rxe
# here to softroce in b, softroce-odp softroce with perftest's --odp: its
# buffers on-demand-paging MRs, their pages present after the first
# messages): 64 KiB and 1 MiB SENDs, the 2-byte ping-pong and 8-byte SENDs,
# in event mode (perftest -e: nobody spins on the one vCPU; qperf's
# tcp_bw and tcp_lat for TCP). Every measurement runs twice, each run a
# phase of the meter (measured_run says where one starts and ends):
# perftest with N and 2N messages, qperf for 1 and 2 guest seconds
# (exact-report.sh: the table's cost of a message is the second run's,
# the profile's the difference of the two); both ends counted. The
# figures (MiB/s, us, Mmsg/s) are the tools' own,
# of the second run, in guest time: on this clock they count every
# instruction of the transfer too.
# Writes OUT/exact.tsv (STACK MTU KEY VALUE; msgs PHASE N; size TEST
# BYTES), METER/phases (MARK NAME: the
# meter's OUT/mark-MARK.tsv is phase NAME), METER/kallsyms.MTU.STACK
# (the kernel's text symbols while the stack's modules are loaded) and
# OUT/runs/PHASE.txt (each run's output).
set -u
out=$1 meter=$2
# Guest time leaps ahead to the next timer whenever the guest waits for
# the host (a 9p read, a page of a program): limits in guest time are
# generous here (the wall-clock bound is tools/lab's).
SRV_LIMIT=100000 SRV_POLLS=100000 LIMIT=100000
# bench-guest.sh's helpers (servers, devices, the wire), not its rounds.
# shellcheck source=tools/lab.d/bench-guest.sh
. "$(dirname "$0")/bench-guest.sh" "$out" 1 0 0
mark=$here/../../build/user/meter-mark
CKIND[softroce-odp]=softroce
SKIND[softroce-odp]=softroce
exact=$out/exact.tsv
: >"$exact"
: >"$meter/phases"
mkdir -p "$out/runs"

# The meter's markers so far; mark-K.tsv holds what ran between the
# markers K-1 and K.
MARKS=0
marker() {
	"$mark"
	MARKS=$((MARKS + 1))
}

# Message counts: N of each perftest measurement (its second run has 2N);
# qperf's runs take 1 and 2 guest seconds (its -n is not kept to) and
# report how many messages they moved.
# A run's regime (how often its processes sleep and wake, the kernel
# worker with them) is not the same from run to run: longer runs average
# more of it (a transfer's instructions cost little beside perftest's
# start-up, about a billion).
declare -A COUNT=([bw64k]=1024 [bw1m]=64 [lat2]=2000 [rate8]=32000)
declare -A SIZE=([bw64k]=65536 [bw1m]=1048576 [lat2]=2 [rate8]=8)
# BENCH_EXACT_TESTS: which of them run (all); BENCH_EXACT_SCALE: their
# counts divided by it (1). tools/lab test's ceilings run a few, short.
EXACT_TESTS=" ${BENCH_EXACT_TESTS:-bw64k bw1m lat2 rate8} "
for k in "${!COUNT[@]}"; do
	COUNT[$k]=$((COUNT[$k] / ${BENCH_EXACT_SCALE:-1}))
done
# exact_test TEST: does TEST run?
exact_test() { [[ $EXACT_TESTS == *" $1 "* ]]; }

# measure NAME A B CMD...: CMD twice, with A and then B for its word "@"
# (a message count, or qperf's seconds), each run a phase of the meter:
# NAME.a and NAME.b, whose messages (exact.tsv's "msgs PHASE N" lines) are
# A and B or what qperf reports. Sets OUTPUT to the second run's output.
OUTPUT=
measure() {
	local name=$1 a=$2 b=$3 k x msgs w cmd
	shift 3
	for x in a b; do
		k=$a
		[ $x = b ] && k=$b
		cmd=()
		for w in "$@"; do
			[ "$w" = @ ] && w=$k
			cmd+=("$w")
		done
		# Not in a subshell: measured_run counts markers.
		measured_run "${cmd[@]}" >/tmp/exact-run.out
		OUTPUT=$(cat /tmp/exact-run.out)
		cp /tmp/exact-run.out "$out/runs/$name.$x.txt"
		echo "$((MARKS - 1)) $name.$x" >>"$meter/phases"
		msgs=$k
		# qperf: tcp_bw's received messages, tcp_lat's round trips.
		[ "$1" != qperf ] || msgs=$(awk '/^ *(recv_msgs|loc_send_msgs) *=/ { gsub(",", "", $3); print $3 }' <<<"$OUTPUT")
		echo "msgs $name.$x ${msgs:-0}" >>"$exact"
	done
}

# measured_run CMD...: one client run (with its perftest server, which
# takes the count too) between two markers, its output on stdout. perftest
# spends a start-up of about a billion instructions of its own, and a
# clock calibration (a 0.2 s busy loop) before its result, each a little
# different from run to run: build/user/libmeter-shim.so, preloaded,
# marks its transfer alone (tools/bench/meter-shim.cpp). qperf starts and
# ends in little.
shim=$here/../../build/user/libmeter-shim.so
measured_run() {
	if [ "$1" = qperf ]; then
		marker
		LD_PRELOAD=$shim timeout "$LIMIT" "$@" 2>&1
		marker
		return
	fi
	local t=$1 cdev=$2 sdev=$3 n
	shift 3
	: >/tmp/exact-shim.log
	if srv_start 18515 env LD_PRELOAD="$shim" METER_SHIM=yield "$t" -d "$sdev" -F "$@"; then
		LD_PRELOAD=$shim METER_SHIM=mark METER_SHIM_LOG=/tmp/exact-shim.log \
			timeout "$LIMIT" "$t" -d "$cdev" -F "$@" "$SIP" 2>&1
	else
		echo "$t $* on $sdev: the server did not start: $(tail -n 3 /tmp/bench-srv.err | tr '\n' ' ')" >&2
	fi
	srv_end kill
	# A run without its header or result still makes its two markers.
	n=$(wc -l </tmp/exact-shim.log)
	MARKS=$((MARKS + n))
	while [ "$n" -lt 2 ]; do
		marker
		n=$((n + 1))
	done
}

# check_row WHAT VALUE: VALUE, or on stderr why WHAT has none (the end
# of the tool's output).
check_row() {
	if [ -n "$2" ]; then
		echo "$2"
	else
		echo "$1: no result: $(tail -n 4 <<<"$OUTPUT" | tr '\n' ' ')" >&2
	fi
}

# perftest_row OUTPUT COLUMN: column COLUMN of perftest's last result row.
perftest_row() {
	awk -v c="$2" '/^ +[0-9]+ +[0-9]+ / { v = $c } END { if (v != "") print v }' <<<"$1"
}

# qperf_value OUTPUT UNIT: qperf's one figure ("bw = 1.2 GB/sec",
# "latency = 15 us") in MiB/s (UNIT mib) or us (UNIT us).
qperf_value() {
	awk -v u="$2" '/ = / {
		v = $3; s = $4
		if (u == "mib") {
			m = s ~ /^GB/ ? 1e9 : s ~ /^MB/ ? 1e6 : s ~ /^KB/ ? 1e3 : 1
			printf "%.2f", v * m / 1048576
		} else {
			m = s ~ /^ms/ ? 1000 : s ~ /^ns/ ? 0.001 : s ~ /^sec/ ? 1e6 : 1
			printf "%.3f", v * m
		}
		exit }' <<<"$1"
}

put_exact() {
	[ -n "$4" ] && echo "$1 $2 $3 $4" >>"$exact"
}

# stack_tcp MTU: qperf across the wire (its server in b, one for all).
stack_tcp() {
	local mtu=$1
	srv_start 19765 env LD_PRELOAD="$shim" qperf || {
		echo "qperf: the server did not start" >&2
		srv_end kill
		return
	}
	measured_run qperf "$SIP" -sb 4m -m 65536 -t 1 tcp_bw >/dev/null
	measure "$mtu.tcp.bw64k" 1 2 qperf "$SIP" --precision 6 -sb 4m -vv -m 65536 -t @ tcp_bw
	put_exact tcp "$mtu" bw64k "$(check_row "$mtu tcp bw64k" "$(qperf_value "$OUTPUT" mib)")"
	measure "$mtu.tcp.bw1m" 1 2 qperf "$SIP" --precision 6 -sb 4m -vv -m 1048576 -t @ tcp_bw
	put_exact tcp "$mtu" bw1m "$(check_row "$mtu tcp bw1m" "$(qperf_value "$OUTPUT" mib)")"
	measure "$mtu.tcp.lat2" 1 2 qperf "$SIP" --precision 6 -sb 4m -vv -m 2 -t @ tcp_lat
	put_exact tcp "$mtu" lat2 "$(check_row "$mtu tcp lat2" "$(qperf_value "$OUTPUT" us)")"
	measure "$mtu.tcp.rate8" 1 2 qperf "$SIP" --precision 6 -sb 4m -vv -m 8 -t @ tcp_bw
	put_exact tcp "$mtu" rate8 "$(check_row "$mtu tcp rate8" "$(awk -v b="$(qperf_value "$OUTPUT" mib)" \
		'BEGIN { if (b != "") printf "%.6f", b * 1048576 / 8 / 1e6 }')")"
	srv_end kill
}

# stack_rdma MTU ROW: perftest's SENDs in event mode between ROW's pair.
stack_rdma() {
	local mtu=$1 row=$2 ck=${CKIND[$2]} sk=${SKIND[$2]} cdev sdev f
	cdev=${NAME[$ck]} sdev=${SNAME[$sk]}
	f=$(cm_flag "$ck")
	# RoCE: GID 1, ::ffff:IPv4 (the devices come after the addresses).
	[ -n "$f" ] || f="-x 1"
	case $row in *-odp) f="$f --odp" ;; esac
	if ! dev_add - "$ck" "$CNET" "$cdev" || ! dev_add srv "$sk" "$SNET" "$sdev"; then
		echo "cannot add the $row pair on the wire" >&2
		dev_del - "$ck" "$cdev"
		return
	fi
	local p=$mtu.$row n64=${COUNT[bw64k]} n1m=${COUNT[bw1m]} nlat=${COUNT[lat2]} nrate=${COUNT[rate8]}
	# shellcheck disable=SC2086 # f: flags
	{
		# Unmeasured: what a device's first connection pays once
		# (neighbours, caches, slabs) must not fall on one run of a
		# measurement's two.
		measured_run ib_send_bw "$cdev" "$sdev" $f -e -s 65536 -n 16 >/dev/null
		if exact_test bw64k; then
			measure "$p.bw64k" "$n64" $((2 * n64)) ib_send_bw "$cdev" "$sdev" $f -e -N -s 65536 -n @
			put_exact "$row" "$mtu" bw64k "$(check_row "$p bw64k" "$(perftest_row "$OUTPUT" 4)")"
		fi
		# siw's and softiwarp's 1 MiB SENDs in event mode never end
		# (the last message never arrives; the guest idles on, billions
		# of timer instructions, no result): not measured.
		if exact_test bw1m && [ "$row" != siw ] && [ "$row" != softiwarp ]; then
			measure "$p.bw1m" "$n1m" $((2 * n1m)) ib_send_bw "$cdev" "$sdev" $f -e -N -s 1048576 -n @
			put_exact "$row" "$mtu" bw1m "$(check_row "$p bw1m" "$(perftest_row "$OUTPUT" 4)")"
		fi
		if exact_test lat2; then
			measure "$p.lat2" "$nlat" $((2 * nlat)) ib_send_lat "$cdev" "$sdev" $f -e -s 2 -n @
			put_exact "$row" "$mtu" lat2 "$(check_row "$p lat2" "$(perftest_row "$OUTPUT" 5)")"
		fi
		if exact_test rate8; then
			measure "$p.rate8" "$nrate" $((2 * nrate)) ib_send_bw "$cdev" "$sdev" $f -e -N -s 8 -n @
			put_exact "$row" "$mtu" rate8 "$(check_row "$p rate8" "$(perftest_row "$OUTPUT" 5)")"
		fi
	}
	grep -E ' [tTwW] ' /proc/kallsyms >"$meter/kallsyms.$p"
	dev_del - "$ck" "$cdev"
	dev_del srv "$sk" "$sdev"
}

wire_at veth
# Each end knows the other's MAC address for good: no neighbour entry
# goes stale, is probed and confirmed (ARP's timers are randomized, so
# their work would fall on different phases in different boots; TCP
# confirms its neighbours, a UDP encapsulation does not).
ip neigh replace 10.0.0.2 lladdr "$(ip netns exec b cat /sys/class/net/veth1/address)" \
	dev veth0 nud permanent
ip netns exec b ip neigh replace 10.0.0.1 lladdr "$(cat /sys/class/net/veth0/address)" \
	dev veth1 nud permanent
# BENCH_ROWS=none: no lossless table (the loss table alone, say).
rows=${BENCH_ROWS:-tcp siw softiwarp rxe-sr softroce softroce-odp}
mtus=${BENCH_MTUS:-1500 9000}
[ "$rows" != none ] || mtus=
for mtu in $mtus; do
	wire_mtu "$mtu" || { echo "cannot set MTU $mtu on the veth pair" >&2; continue; }
	for row in $rows; do
		echo "exact: MTU $mtu, $row" >&2
		case $row in
		tcp)
			stack_tcp "$mtu"
			grep -E ' [tTwW] ' /proc/kallsyms >"$meter/kallsyms.$mtu.tcp"
			;;
		*) stack_rdma "$mtu" "$row" ;;
		esac
	done
done
wire_mtu 1500

# The loss table (BENCH_LOSS: loss shares in percent, e.g. "1 5"; empty
# by default, and then none of this runs). At MTU 1500, each row of
# BENCH_LOSS_ROWS (tcp softroce softroce-sr softiwarp siw rxe-sr) moves
# 64 KiB and 1 MiB SENDs (perftest -e; qperf tcp_bw for tcp) without loss,
# then at each share with netem dropping it on both ends of the veth pair
# (veth0 here: data; veth1 in b: ACKs and NAKs). softroce is go-back-N
# and softroce-sr selective repeat, both through the RDMA CM (perftest -R),
# so that they differ in the mode alone: roce_sr=0 keeps the first from
# offering it in ECE, the second negotiates it; rxe-sr is rxe here to
# softroce in b (go-back-N, no CM); siw and softiwarp connect through the
# CM as above, and have no 1 MiB cells (their 1 MiB SENDs in event mode
# never end, loss or not). Each run has a fresh qdisc with a fixed seed
# where netem takes one (LOSS_SEED: then its drops repeat from boot to
# boot as far as the packets it sees do). netem drops what the qdisc is
# handed: a softroce train (a GSO skb of up to 32 packets) or a TCP
# segment of up to 64 KiB goes whole. BENCH_LOSS_PKT=1 hands it wire
# packets instead (lossless cells too): the veths' gso_max_segs 1 (TCP
# then sends one segment an skb) and roce_gso=0 (no trains).
# One run a cell, bounded in guest time (LOSS_LIMIT: a stack that stalls
# idles on its timers, and guest time then leaps ahead); a run without a
# result is "stalled" (the bound hit) or "error" (the tool gave up; wc,
# its completion status).
# Lines "loss ROW P TEST KEY VALUE" in OUT/exact.tsv: mib (the tool's
# MiB/s), status, msgs; need and tx: RoCE rows, the packets the messages
# need (messages x packets at the path MTU) and those the client sent
# (softroce tx_packets, rxe sent_pkts); TCP rows (tcp, siw, softiwarp),
# the client's TCP segments sent less those retransmitted, and sent;
# retx: softroce's timeouts (each a go-back-N resend), TCP's
# retransmitted segments; srretx: softroce's selective resends; held and
# naks: the softroce server's sr_ooo_held and seq_naks_sent; cdrop and
# sdrop: what netem dropped on veth0 and on veth1; mode (P 0, TEST -):
# the retransmission mode softroce's server QP said while it ran.
# Also "loss seed YES|NO SEED" and "loss unit skb|packet".
LOSS_ROWS=${BENCH_LOSS_ROWS:-tcp softroce softroce-sr softiwarp siw rxe-sr}
# 300 guest seconds: the slowest finisher seen (rxe to softroce at 5 %,
# 0.4 MiB/s) needs 160 for its 64 MiB. Guest time leaps while a stack
# waits on its timers: such a run costs little wall time.
LOSS_LIMIT=300
# qperf's guest seconds a run.
LOSS_SECS=3
LOSS_SEED=20261205
# 64 MiB a cell: at 1 % a train of 32 packets goes about 20 times (the
# drops a cell sees vary as their square root).
declare -A LCOUNT=([bw64k]=1024 [bw1m]=64)
CKIND[softroce-sr]=softroce
SKIND[softroce-sr]=softroce
SRP=/sys/module/softrdma/parameters/roce_sr
LOSS_PKT=${BENCH_LOSS_PKT:-0}
# What loss_row's cells are (loss; reorder below), their shares and tests.
LKIND=loss
LSHARES="0 ${BENCH_LOSS:-}"
LTESTS="bw64k bw1m"

# netem_seed: SEED is "seed" if tc and this kernel's netem take one (6.12
# does: TCA_NETEM_PRNG_SEED).
SEED=
netem_seed() {
	if tc qdisc add dev lo root netem loss 1% seed 1 2>/dev/null; then
		SEED=seed
		tc qdisc del dev lo root
	fi
	echo "$LKIND seed $([ -n "$SEED" ] && echo yes || echo no) $LOSS_SEED" >>"$exact"
}

# netem_on P: a fresh netem dropping P % on both ends of the wire (for P
# 0, none; wire_loss), with the seed if netem takes one. With LKIND
# reorder, on veth0 alone: P none, no netem; 0, REORDER_DELAY; else that
# delay with P % reordered (netem's reorder: after GAP - 1 delayed skbs,
# each skb goes at once with probability P, ahead of those still
# delayed).
netem_on() {
	if [ "$LKIND" != reorder ]; then
		wire_loss "$1" ${SEED:+"$LOSS_SEED"}
		return
	fi
	wire_clean
	case $1 in
	none) return 0 ;;
	0) tc qdisc add dev "$CNET" root netem delay "$REORDER_DELAY" ;;
	*) tc qdisc add dev "$CNET" root netem delay "$REORDER_DELAY" reorder "$1%" gap "$REORDER_GAP" \
		${SEED:+seed "$LOSS_SEED"} ;;
	esac
}
netem_off() { wire_clean; }
# netem_drops CMD...: what the netem qdisc `CMD tc -s qdisc show dev ...`
# shows dropped ("(dropped N, ...").
netem_drops() {
	"$@" | awk '/qdisc netem/ { q = 1 } q && $6 == "(dropped" { sub(/,/, "", $7); print $7; exit }'
}

# snap N: the counters of the run's two ends into /tmp/loss-c.N (client)
# and /tmp/loss-s.N (server), "NAME VALUE" lines: a RoCE device's port
# counters (rdma statistic), or the client's TCP segments.
snap() {
	case $lrow in
	tcp | siw | softiwarp)
		awk '$1 == "Tcp:" && $2 !~ /^[0-9]/ { for (i = 2; i <= NF; i++) c[$i] = i; next }
			$1 == "Tcp:" { print "OutSegs", $c["OutSegs"]; print "RetransSegs", $c["RetransSegs"]; exit }' \
			/proc/net/snmp >"/tmp/loss-c.$1"
		: >"/tmp/loss-s.$1"
		;;
	*)
		rdma statistic show link "$lcdev/1" 2>/dev/null | pairs >"/tmp/loss-c.$1"
		on_srv rdma statistic show link "$lsdev/1" 2>/dev/null | pairs >"/tmp/loss-s.$1"
		;;
	esac
}
# pairs: `rdma statistic show link DEV/1` as NAME VALUE lines (it wraps
# its "link DEV/1 NAME VALUE ..." over several lines).
pairs() {
	tr -s ' \t\n' '\n' | awk 'NF { t[++n] = $1 } END { for (i = 3; i < n; i += 2) print t[i], t[i + 1] }'
}
# grown END NAME: how much counter NAME of END (c or s) grew from snap 0
# to snap 1; nothing if the end has no such counter.
grown() {
	awk -v k="$2" '$1 == k { v[FILENAME == ARGV[1] ? "a" : "b"] = $2 }
		END { if (("a" in v) && ("b" in v)) print v["b"] - v["a"] }' "/tmp/loss-$1.0" "/tmp/loss-$1.1"
}

# srv_up PORT CMD...: srv_start (the server in b, in a process group of
# its own), ready once anything listens on PORT: a TCP socket (perftest's
# own, an iWARP driver's) or, over RoCE through the RDMA CM, which has
# none, a listening CM ID; 30 guest seconds at most.
srv_up() { SRV_CM=1 SRV_POLLS=300 srv_start "$@"; }

# loss_once TEST N: one perftest run of the row's pair (lcdev here, lsdev
# in b, flags lf), N of TEST's SENDs: ib_send_bw, or ib_send_lat's
# ping-pong for a latency test (lat*); its output in /tmp/loss-run.out,
# the client's exit status in LRC (124: LOSS_LIMIT hit; 125: no server).
LRC=0
loss_once() {
	local pt=(ib_send_bw -N)
	[ "${1#lat}" = "$1" ] || pt=(ib_send_lat)
	LRC=125
	# shellcheck disable=SC2086 # lf: flags
	if srv_up 18515 "${pt[0]}" -d "$lsdev" -F $lf -e "${pt[@]:1}" -s "${SIZE[$1]}" -n "$2"; then
		timeout "$LOSS_LIMIT" "${pt[0]}" -d "$lcdev" -F $lf -e "${pt[@]:1}" -s "${SIZE[$1]}" -n "$2" "$SIP" \
			>/tmp/loss-run.out 2>&1
		LRC=$?
	else
		echo "${pt[0]} on $lsdev: the server did not start: $(tail -n 2 /tmp/bench-srv.err | tr '\n' ' ')" \
			>/tmp/loss-run.out
	fi
	srv_end kill
}

# tail_figs TOOL: the latency figures of /tmp/loss-run.out, a half round
# trip in us, as "MEDIAN P99 P99.9 MAX": perftest's typical (its median)
# and percentiles, or sockperf's.
tail_figs() {
	if [ "$1" = sockperf ]; then
		awk '/percentile 50.000 =/ { m = $NF } /percentile 99.000 =/ { p = $NF }
			/percentile 99.900 =/ { q = $NF } /<MAX> observation =/ { x = $NF }
			END { if (m != "") print m, p, q, x }' /tmp/loss-run.out
	else
		awk '/^ +[0-9]+ +[0-9]+ / { v = $5 " " $8 " " $9 " " $4 } END { if (v != "") print v }' /tmp/loss-run.out
	fi
}

# loss_mode: the retransmission mode of the row's server QP (softroce in
# b: sr or gbn), seen while a long unmeasured run goes on (1000 64 KiB
# SENDs, no loss; the first connection's costs fall on it too).
loss_mode() {
	local m='' i
	# shellcheck disable=SC2086 # lf: flags
	srv_up 18515 ib_send_bw -d "$lsdev" -F $lf -e -N -s 65536 -n 1000 || {
		srv_end kill
		return
	}
	# shellcheck disable=SC2086
	timeout "$LOSS_LIMIT" ib_send_bw -d "$lcdev" -F $lf -e -N -s 65536 -n 1000 "$SIP" >/dev/null 2>&1 &
	local cli=$!
	for ((i = 0; i < 100; i++)); do
		# (perftest's server of a one-way test without the CM stays
		# in RTR.)
		m=$(on_srv rdma -dd res show qp link "$lsdev/1" 2>/dev/null | awk '
			/^link / { want = / type RC / && / state (RTR|RTS) / }
			want { for (i = 1; i < NF; i++) if ($i ~ /^(drv_)?retx$/) { print $(i + 1); exit } }')
		[ -z "$m" ] || break
		kill -0 "$cli" 2>/dev/null || break
		sleep 0.05
	done
	wait "$cli"
	srv_end kill
	echo "$LKIND $lrow 0 - mode ${m:-unseen}" >>"$exact"
}

# loss_cell P TEST: one cell of the loss table (the row's devices are up,
# netem set to P): its lines in exact.tsv, its output in
# OUT/runs/loss.P.ROW.TEST.txt (LKIND for "loss": the reorder table's
# cells are made alike).
loss_cell() {
	local p=$1 t=$2 n=${LCOUNT[$2]} size=${SIZE[$2]} k="$LKIND $lrow $1 $2" fig st=ok pm need tx lat=()
	snap 0
	marker
	case $lrow/$t in
	tcp/lat*)
		timeout "$LOSS_LIMIT" sockperf pp --tcp --no-rdtsc -i "$SIP" -p 11111 -m "$size" \
			-t "$([ "$p" = 0 ] && echo "$TAIL_SECS" || echo "$TAIL_LOSS_SECS")" >/tmp/loss-run.out 2>&1
		LRC=$?
		read -ra lat <<<"$(tail_figs sockperf)"
		;;
	tcp/*)
		timeout "$LOSS_LIMIT" qperf "$SIP" --precision 6 -sb 4m -vv -m "$size" -t "$LOSS_SECS" tcp_bw \
			>/tmp/loss-run.out 2>&1
		LRC=$?
		fig=$(qperf_value "$(cat /tmp/loss-run.out)" mib)
		;;
	*/lat*)
		loss_once "$t" "$n"
		read -ra lat <<<"$(tail_figs perftest)"
		;;
	*)
		loss_once "$t" "$n"
		fig=$(perftest_row "$(cat /tmp/loss-run.out)" 4)
		;;
	esac
	# A latency test's figure is its median.
	[ ${#lat[@]} = 0 ] || fig=${lat[0]}
	marker
	echo "$((MARKS - 1)) $LKIND.$p.$lrow.$t" >>"$meter/phases"
	snap 1
	cp /tmp/loss-run.out "$out/runs/$LKIND.$p.$lrow.$t.txt"
	# perftest's 0.00 of a run that moved nothing is no figure.
	[[ $fig =~ [1-9] ]] || fig=
	if [ -z "$fig" ]; then
		st=error
		[ "$LRC" != 124 ] || st=stalled
		echo "$k wc $(grep -o -m 1 -E 'status [0-9]+' /tmp/loss-run.out | awk '{ print $2 }')" >>"$exact"
		echo "$LKIND $p % $lrow $t: $st (exit $LRC): $(tail -n 3 /tmp/loss-run.out | tr '\n' ' ')" >&2
	fi
	echo "$k status $st" >>"$exact"
	if [ ${#lat[@]} = 0 ]; then
		put_loss "$k" mib "$fig"
	elif [ -n "$fig" ]; then
		put_loss "$k" med "${lat[0]}"
		put_loss "$k" p99 "${lat[1]:-}"
		put_loss "$k" p999 "${lat[2]:-}"
		put_loss "$k" max "${lat[3]:-}"
	fi
	put_loss "$k" cdrop "$(netem_drops tc -s qdisc show dev "$CNET")"
	put_loss "$k" sdrop "$(netem_drops on_srv tc -s qdisc show dev "$SNET")"
	case $lrow in
	tcp | siw | softiwarp)
		tx=$(grown c OutSegs)
		put_loss "$k" tx "$tx"
		put_loss "$k" retx "$(grown c RetransSegs)"
		[ -z "$tx" ] || put_loss "$k" need $((tx - $(grown c RetransSegs)))
		# qperf's messages: those received; sockperf's: the round trips
		# its figures count (its last line with them: the run less its
		# warm-up).
		[ "$lrow" != tcp ] || n=$(awk '/^ *recv_msgs *=/ { gsub(",", "", $3); v = $3 }
			/ReceivedMessages=/ { sub(/.*ReceivedMessages=/, ""); v = $1 + 0 } END { print v }' /tmp/loss-run.out)
		;;
	*)
		# The path MTU perftest reports (1024 at netdev MTU 1500).
		pm=$(awk '$1 == "Mtu" { sub(/\[.*/, "", $3); print $3; exit }' /tmp/loss-run.out)
		need=$((n * ((size + ${pm:-1024} - 1) / ${pm:-1024})))
		put_loss "$k" need "$need"
		tx=$(grown c tx_packets)
		[ -n "$tx" ] || tx=$(grown c sent_pkts)
		put_loss "$k" tx "$tx"
		put_loss "$k" retx "$(grown c retransmits)"
		put_loss "$k" srretx "$(grown c sr_retransmits)"
		put_loss "$k" held "$(grown s sr_ooo_held)"
		put_loss "$k" naks "$(grown s seq_naks_sent)"
		;;
	esac
	put_loss "$k" msgs "${n:-0}"
}
put_loss() { [ -z "$3" ] || echo "$1 $2 $3" >>"$exact"; }

# loss_row ROW: ROW's cells, each test of LTESTS at each share of
# LSHARES (no loss first).
loss_row() {
	local p t sr='' sr0='' gso0=''
	lrow=$1
	case $lrow in
	tcp)
		# The tail part's ping-pong is sockperf's, the others qperf's.
		local srv=(19765 qperf) first=(qperf "$SIP" -sb 4m -m 65536 -t 1 tcp_bw)
		[ "$LKIND" != tail ] || {
			srv=(11111 sockperf sr --tcp -i "$SIP" -p 11111)
			first=(sockperf pp --tcp --no-rdtsc -i "$SIP" -p 11111 -m 4096 -t 1)
		}
		srv_up "${srv[@]}" || {
			echo "${srv[1]}: the server did not start" >&2
			srv_end kill
			return
		}
		# A first connection (unmeasured, no loss).
		timeout "$LOSS_LIMIT" "${first[@]}" >/dev/null 2>&1
		;;
	*)
		local ck=${CKIND[$lrow]} sk=${SKIND[$lrow]}
		lcdev=${NAME[$ck]} lsdev=${SNAME[$sk]}
		case $lrow in
		softroce) lf=-R sr=0 ;;
		softroce-sr) lf=-R sr=1 ;;
		rxe-sr) lf="-x 1" ;;
		*) lf=$(cm_flag "$ck") ;;
		esac
		if ! dev_add - "$ck" "$CNET" "$lcdev" || ! dev_add srv "$sk" "$SNET" "$lsdev"; then
			echo "cannot add the $lrow pair on the wire" >&2
			dev_del - "$ck" "$lcdev"
			return
		fi
		# (The module is loaded now, its parameters there.)
		if [ "$LOSS_PKT" = 1 ] && [ "$lrow" != rxe-sr ]; then
			gso0=$(cat "$GSOP")
			echo 0 >"$GSOP"
		fi
		if [ -n "$sr" ]; then
			if [ ! -w "$SRP" ]; then
				echo "no $SRP: no $lrow row" >&2
				dev_del - "$ck" "$lcdev"
				dev_del srv "$sk" "$lsdev"
				return
			fi
			sr0=$(cat "$SRP")
			echo "$sr" >"$SRP"
		fi
		if [ "$sk" = softroce ]; then
			loss_mode
		else
			loss_once bw64k 16
		fi
		;;
	esac
	for p in $LSHARES; do
		for t in $LTESTS; do
			echo "exact: $LKIND $p %, $lrow, $t" >&2
			case $lrow/$t in
			siw/bw1m | softiwarp/bw1m)
				echo "$LKIND $lrow $p $t status skipped" >>"$exact"
				continue
				;;
			esac
			# A fresh qdisc a cell: its PRNG from the seed, its drops
			# the cell's.
			if ! netem_on "$p"; then
				echo "cannot set netem ($LKIND $p %) on the veth pair" >&2
				continue
			fi
			loss_cell "$p" "$t"
		done
	done
	netem_off
	if [ "$lrow" = tcp ]; then
		srv_end kill
	else
		dev_del - "$ck" "$lcdev"
		dev_del srv "$sk" "$lsdev"
		# roce_sr and roce_gso as they were.
		[ -z "$sr" ] || echo "$sr0" >"$SRP"
		[ -z "$gso0" ] || echo "$gso0" >"$GSOP"
	fi
}

# unit_set KIND: what netem drops or delays from here, one wire packet an
# skb (BENCH_LOSS_PKT=1: veth's gso_max_segs 1 on both ends) or the skbs
# the stacks hand over, and the table says which ("KIND unit ...");
# unit_reset: veth's own (65535) again.
unit_set() {
	if [ "$LOSS_PKT" = 1 ]; then
		wire_segs 1 && echo "$1 unit packet" >>"$exact"
	else
		echo "$1 unit skb" >>"$exact"
	fi
}

unit_reset() {
	[ "$LOSS_PKT" != 1 ] || wire_segs 65535
}

if [ -n "${BENCH_LOSS:-}" ]; then
	# The loss rows' bound: stalls must end.
	wire_mtu 1500
	netem_seed
	unit_set loss
	for r in $LOSS_ROWS; do
		loss_row "$r"
	done
	unit_reset
fi
# The ECN part (BENCH_ECN=1; off by default): four softroce QP pairs
# through one bottleneck that marks ECN. On veth0 (the client's sends) a
# tbf at ECN_MBIT Mbit/s, below what one softroce QP moves alone, and
# under it RED with ecn: between its thresholds it marks an ECT packet CE
# with a growing probability (above the upper one, always), and drops
# what is not ECT instead. ECN_QPS ib_send_bw servers in b (ports 18515
# on), as many clients here, all through the RDMA CM (perftest -R: ECE
# agrees on selective repeat and, if roce_ecn allows, ECN), ECN_MSGS
# 64 KiB SENDs each in event mode, the clients started at once; twice:
# roce_ecn=1 and roce_ecn=0, roce_sr=1 both times. Bytes are checked by
# perftest's completion statuses alone. While they run, every ECN_EVERY
# guest seconds: the tbf's bytes sent and RED's backlog (tc -s -j), and
# the client QPs' state, ECE and DCQCN rate (rdma -dd res show qp), in
# OUT/runs/ecn.E.samples (TIME TBF_BYTES BACKLOG QPS_IN_RTS RATES ECES);
# each client's output in OUT/runs/ecn.E.qpI.txt.
# Lines "ecn E KEY VALUE" in OUT/exact.tsv (E: roce_ecn): mib.I and
# status.I (client I: the tool's MiB/s; ok, stalled or error), msgs,
# mbit (the bottleneck), the RED qdisc's marked, early, pdrop, other and
# drops (its -s counters; early: dropped or marked between the
# thresholds, other: above the upper one), tbf's drops, backlog (the
# largest sampled, bytes), win and winbytes (the guest seconds in which
# all clients' QPs were up, and the tbf's bytes then), span (first
# client's end to last's), paced (samples with a QP paced / QP samples),
# rmin and rmean (the paced rates, Mb/s), ece (the QPs' ECE bits seen),
# and the port counters grown: marked (np_ecn_marked_roce_packets) and
# cnp (np_cnp_sent) of the server, handled (rp_cnp_handled), ignored
# (rp_cnp_ignored), retx (timeouts), srretx, tx and need (as in the loss
# rows) of the client.
ECN_QPS=4
ECN_MBIT=400
ECN_MSGS=${BENCH_ECN_MSGS:-2048}
ECN_EVERY=0.2
# Samples without a byte through the bottleneck that make a stall.
ECN_STILL=25
# Guest seconds a client may take. Its start can take hundreds: four
# programs read in at once from the host (the shim locks their pages),
# guest time leaps (one such leap of 278 s was seen); a stall once the
# QPs are up ends sooner (ECN_STILL).
ECN_LIMIT=1800
ECNP=/sys/module/softrdma/parameters/roce_ecn

# ecn_qdisc: a fresh bottleneck on veth0. RED's thresholds for 400 Mbit/s
# (50 kB a ms): 64 kB (1.3 ms, two softroce trains) and 192 kB (3.8 ms),
# at most 10 % marked below the upper one; a limit of 1 MB (20 ms) it
# should never reach with ECN. What is never ECT goes around it, in a
# prio band of its own (as a RoCE network gives CNPs and control a class
# of their own): the RDMA CM's MADs (BTH destination QP 1), ACKs (BTH
# opcode 0x11), CNPs (0x81) and ARP. RED drops what is not ECT, all of it
# while its average is above the upper threshold: seen, a lost RTU left
# a connection half made (the server's QPs in ERR, its client in RTS,
# waiting), and a server whose ACKs never got through (its perftest
# exchange, to a client busy behind the queue) ended in retry exceeded.
ecn_qdisc() {
	tc qdisc del dev "$CNET" root 2>/dev/null
	tc qdisc add dev "$CNET" root handle 1: prio bands 2 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc qdisc add dev "$CNET" parent 1:2 handle 2: tbf rate "${ECN_MBIT}mbit" burst 64kb latency 20ms &&
		tc qdisc add dev "$CNET" parent 2:1 handle 3: red limit 1000000 min 64000 max 192000 \
			avpkt 1000 burst 100 probability 0.1 bandwidth "${ECN_MBIT}mbit" ecn &&
		tc filter add dev "$CNET" parent 1: protocol ip prio 1 u32 match u8 17 0xff at 9 \
			match u16 4791 0xffff at 22 match u32 1 0x00ffffff at 32 flowid 1:1 &&
		tc filter add dev "$CNET" parent 1: protocol ip prio 1 u32 match u8 17 0xff at 9 \
			match u16 4791 0xffff at 22 match u8 0x11 0xff at 28 flowid 1:1 &&
		tc filter add dev "$CNET" parent 1: protocol ip prio 1 u32 match u8 17 0xff at 9 \
			match u16 4791 0xffff at 22 match u8 0x81 0xff at 28 flowid 1:1 &&
		tc filter add dev "$CNET" parent 1: protocol arp prio 2 u32 match u32 0 0 flowid 1:1
}
# qd_stat KIND KEY... [KIND KEY...]: the named counters of veth0's
# qdiscs KIND (tbf, red, prio), on one line (tc -s -j: raw numbers).
qd_stat() {
	tc -s -j qdisc show dev "$CNET" | awk -v keys="$*" 'BEGIN { RS = "[{]\"kind\":\""; n = split(keys, w, " ") }
		{ k = $0; sub(/".*/, "", k); rec[k] = $0 }
		END {
			for (i = 1; i <= n; i++) {
				if (w[i] ~ /^(tbf|red|prio|pfifo)$/) { q = w[i]; continue }
				v = "-"
				if (match(rec[q], "\"" w[i] "\":[0-9]+")) { v = substr(rec[q], RSTART, RLENGTH); sub(/.*:/, "", v) }
				printf "%s%s", (o++ ? " " : ""), v
			}
			print ""
		}'
}
# ecn_qps: the client's RC QPs in RTS: how many processes have one
# (perftest -R makes two a process: its own messages' and the test's),
# and the QPs' DCQCN rates and ECE bits (comma-separated; - for none).
ecn_qps() {
	rdma -dd res show qp link "$lcdev/1" 2>/dev/null | awk '
		function flush() { if (rc && rts) { if (!(pid in seen)) n++; seen[pid] = 1; r = r sep rate; e = e sep ece; sep = "," } rc = rts = 0; rate = ece = pid = "-" }
		/^link / { flush() }
		/ type RC / { rc = 1 }
		/ state RTS / { rts = 1 }
		{ for (i = 1; i < NF; i++) {
			if ($i == "pid") pid = $(i + 1)
			if ($i ~ /^(drv_)?rate_mbps$/) rate = $(i + 1)
			if ($i ~ /^(drv_)?ece$/) ece = $(i + 1) } }
		END { flush(); print n + 0, (r == "" ? "-" : r), (e == "" ? "-" : e) }'
}

# ecn_run E: one run of the ECN part with roce_ecn E.
ecn_run() {
	local e=$1 i port pids=() cli=() k="ecn $1" f fig st n=0 samples=$out/runs/ecn.$1.samples
	echo "$e" >"$ECNP"
	echo 1 >"$SRP"
	if ! ecn_qdisc; then
		echo "cannot set the ECN bottleneck on $CNET" >&2
		return
	fi
	snap 0
	for ((i = 1; i <= ECN_QPS; i++)); do
		port=$((18514 + i))
		set -m
		on_srv timeout --foreground "$SRV_LIMIT" env LD_PRELOAD="$shim" \
			ib_send_bw -d "$lsdev" -F -R -e -N -s 65536 -n "$ECN_MSGS" -p "$port" \
			>/dev/null 2>"/tmp/ecn-srv.$i.err" &
		pids+=($!)
		set +m
	done
	for ((i = 1; i <= ECN_QPS; i++)); do
		port=$((18514 + i)) n=300
		until on_srv rdma res show cm_id 2>/dev/null | grep LISTEN | grep -qE ":$port( |$)"; do
			n=$((n - 1))
			[ $n -gt 0 ] || break
			sleep 0.1
		done
		[ $n -gt 0 ] || echo "ecn $e: server $i not listening: $(tail -n 2 "/tmp/ecn-srv.$i.err" | tr '\n' ' ')" >&2
	done
	# The clients at once; each notes its exit status and its end.
	for ((i = 1; i <= ECN_QPS; i++)); do
		port=$((18514 + i))
		rm -f "/tmp/ecn-c.$i.end"
		{
			LD_PRELOAD=$shim timeout "$ECN_LIMIT" ib_send_bw -d "$lcdev" -F -R -e -N -s 65536 \
				-n "$ECN_MSGS" -p "$port" "$SIP" >"/tmp/ecn-c.$i.out" 2>&1
			echo "$? $(date +%s.%N)" >"/tmp/ecn-c.$i.end"
		} &
		cli+=($!)
	done
	: >"$samples"
	echo "launched $(date +%s.%N)" >"$out/runs/ecn.$e.ends"
	local nth=0 q qs last='' still=0
	while :; do
		n=0
		for i in "${cli[@]}"; do
			! kill -0 "$i" 2>/dev/null || n=$((n + 1))
		done
		[ $n -gt 0 ] || break
		q=$(qd_stat tbf bytes red backlog)
		qs=$(ecn_qps)
		echo "$EPOCHREALTIME $q $qs" >>"$samples"
		# A stall: nothing through the bottleneck for ECN_STILL samples
		# (the guest-time bound would take long in wall time while this
		# loop runs): the clients are ended.
		# (Counted once a QP is up: the clients' start moves nothing.)
		if [ "${q% *}" = "$last" ] && [ "${qs%% *}" -gt 0 ]; then
			still=$((still + 1))
			if [ $still -ge "$ECN_STILL" ]; then
				echo "ecn $e: nothing through the bottleneck for $still samples: clients ended" >&2
				echo "$k stall $EPOCHREALTIME" >>"$exact"
				for i in "${cli[@]}"; do pkill -TERM -P "$i" timeout 2>/dev/null; done
				sleep 1
			fi
		else
			still=0
		fi
		last=${q% *}
		# One look at every QP, as rdma shows them.
		nth=$((nth + 1))
		[ $nth != 5 ] || { rdma -dd res show qp; on_srv rdma -dd res show qp; } >"$out/runs/ecn.$e.qps" 2>&1
		sleep "$ECN_EVERY"
	done
	wait "${cli[@]}"
	for i in "${pids[@]}"; do
		kill -TERM -- "-$i" 2>/dev/null
		wait "$i" 2>/dev/null
	done
	for ((i = 1; i <= ECN_QPS; i++)); do
		[ ! -s "/tmp/ecn-srv.$i.err" ] || cp "/tmp/ecn-srv.$i.err" "$out/runs/ecn.$e.srv$i.err"
	done
	snap 1
	echo "$k mbit $ECN_MBIT" >>"$exact"
	echo "$k msgs $ECN_MSGS" >>"$exact"
	for ((i = 1; i <= ECN_QPS; i++)); do
		f=/tmp/ecn-c.$i.out
		cp "$f" "$out/runs/ecn.$e.qp$i.txt"
		fig=$(perftest_row "$(cat "$f")" 4)
		[[ $fig =~ [1-9] ]] || fig=
		st=ok
		if [ -z "$fig" ]; then
			st=error
			[ "$(awk '{ print $1 }' "/tmp/ecn-c.$i.end" 2>/dev/null)" != 124 ] && [ $still -lt "$ECN_STILL" ] ||
				st=stalled
			echo "ecn $e: QP $i: $st: $(tail -n 3 "$f" | tr '\n' ' ')" >&2
		fi
		echo "$k status.$i $st" >>"$exact"
		put_loss "$k" "mib.$i" "$fig"
	done
	# shellcheck disable=SC2046 # the counters, one word each
	set -- $(qd_stat red marked early pdrop other drops tbf drops prio packets drops)
	put_loss "$k" marked_q "$1"
	put_loss "$k" early "$2"
	put_loss "$k" pdrop "$3"
	put_loss "$k" other "$4"
	put_loss "$k" drops "$5"
	put_loss "$k" tbfdrops "$6"
	put_loss "$k" prio "$7"
	put_loss "$k" priodrops "$8"
	awk -v k="$k" -v qps="$ECN_QPS" '
		$3 ~ /^[0-9]+$/ && $3 > b { b = $3 }
		$4 == qps { if (t0 == "") { t0 = $1; b0 = $2 } t1 = $1; b1 = $2 }
		$4 > 0 { m = split($5, r, ","); for (i = 1; i <= m; i++) if (r[i] ~ /^[0-9]+$/) { q++; if (r[i] > 0) { p++; s += r[i]; if (min == "" || r[i] < min) min = r[i] } } }
		$4 > 0 && $6 != "-" { m = split($6, x, ","); for (i = 1; i <= m; i++) ece[x[i]] = 1 }
		END {
			print k, "backlog", b + 0
			if (t0 != "" && t1 > t0) { printf "%s win %.3f\n%s winbytes %d\n", k, t1 - t0, k, b1 - b0 }
			if (q) printf "%s paced %d/%d\n", k, p, q
			if (p) printf "%s rmin %d\n%s rmean %.0f\n", k, min, k, s / p
			for (v in ece) l = l (l == "" ? "" : ",") v
			if (l != "") print k, "ece", l
		}' "$samples" >>"$exact"
	for ((i = 1; i <= ECN_QPS; i++)); do
		echo "$i $(cat "/tmp/ecn-c.$i.end" 2>/dev/null)" >>"$out/runs/ecn.$e.ends"
	done
	awk '$1 != "launched" { print $3 }' "$out/runs/ecn.$e.ends" | sort -n |
		awk -v k="$k" 'NR == 1 { a = $1 } { b = $1 } END { if (NR > 1) printf "%s span %.3f\n", k, b - a }' >>"$exact"
	put_loss "$k" marked "$(grown s np_ecn_marked_roce_packets)"
	put_loss "$k" cnp "$(grown s np_cnp_sent)"
	put_loss "$k" handled "$(grown c rp_cnp_handled)"
	put_loss "$k" ignored "$(grown c rp_cnp_ignored)"
	put_loss "$k" retx "$(grown c retransmits)"
	put_loss "$k" srretx "$(grown c sr_retransmits)"
	put_loss "$k" tx "$(grown c tx_packets)"
	# 64 packets a message at the path MTU of 1024.
	put_loss "$k" need $((ECN_QPS * ECN_MSGS * 64))
	tc qdisc del dev "$CNET" root 2>/dev/null
	return 0
}

if [ "${BENCH_ECN:-0}" = 1 ]; then
	wire_mtu 1500
	lrow=softroce-sr lcdev=${NAME[softroce]} lsdev=${SNAME[softroce]} lf=-R
	if ! dev_add - softroce "$CNET" "$lcdev" || ! dev_add srv softroce "$SNET" "$lsdev"; then
		echo "cannot add the softroce pair for the ECN part" >&2
		dev_del - softroce "$lcdev"
	# (The module is loaded now, its parameters there.)
	elif [ ! -w "$ECNP" ] || [ ! -w "$SRP" ]; then
		echo "no $ECNP or $SRP: no ECN part" >&2
		dev_del - softroce "$lcdev"
		dev_del srv softroce "$lsdev"
	else
		ecn0=$(cat "$ECNP") sr0=$(cat "$SRP")
		# A first connection (unmeasured, no bottleneck).
		LKIND=ecn loss_mode
		for e in 1 0; do
			echo "exact: ECN, roce_ecn=$e, $ECN_QPS QPs through ${ECN_MBIT} Mbit/s" >&2
			ecn_run "$e"
		done
		echo "$ecn0" >"$ECNP"
		echo "$sr0" >"$SRP"
		dev_del - softroce "$lcdev"
		dev_del srv softroce "$lsdev"
	fi
fi

# The reordering part (BENCH_REORDER: shares in percent, e.g. "1"; empty
# by default): netem on veth0 alone delays every skb REORDER_DELAY and,
# after REORDER_GAP - 1 delayed ones, sends each at once with probability
# P, ahead of those still in the delay; nothing is lost. Rows softroce-sr
# and softroce (go-back-N, roce_sr=0), both through the RDMA CM, 64 KiB
# SENDs, cells as the loss table's (LKIND reorder: "reorder ROW P TEST
# KEY VALUE" lines): P none (no netem), 0 (the delay alone), then each
# share. netem reorders what it is handed: softroce trains, or with
# BENCH_LOSS_PKT=1 wire packets (as for loss). Before them a count of
# what netem does at each share: REORDER_PROBE UDP datagrams (one skb
# each) sent as fast as a Python loop goes, counted in b: "reorder check
# P SENT RECEIVED AHEAD", AHEAD the datagrams that came before one of a
# lower number.
REORDER_DELAY=1ms
REORDER_GAP=5
REORDER_PROBE=20000
# The count's bound, guest seconds: the two Python programs are read in
# from the host, and guest time leaps while they are (a bound of 120
# ended the receiver before the sender had started).
REORDER_LIMIT=1800
reorder_check() {
	local p=$1 n=100 r
	netem_on "$p" || return
	on_srv timeout "$REORDER_LIMIT" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
s.bind(("0.0.0.0", 9999))
a = []
try:
    while True:
        a.append(int.from_bytes(s.recv(2048)[:4], "big"))
        s.settimeout(3)
except socket.timeout:
    pass
# Ahead: a datagram that came before one of a lower number.
j = 0
low = 1 << 62
for q in reversed(a):
    if q > low:
        j += 1
    low = min(low, q)
print(len(a), j)
' >/tmp/reorder-check.out 2>&1 &
	r=$!
	until on_srv ss -Hlun "sport = :9999" | grep -q .; do
		n=$((n - 1))
		[ $n -gt 0 ] || break
		sleep 0.1
	done
	timeout "$REORDER_LIMIT" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
pad = bytes(996)
for i in range(int(sys.argv[2])):
    s.sendto(i.to_bytes(4, "big") + pad, (sys.argv[1], 9999))
' "$SIP" "$REORDER_PROBE"
	wait "$r"
	echo "reorder check $p $REORDER_PROBE $(cat /tmp/reorder-check.out)" >>"$exact"
	netem_off
}

if [ -n "${BENCH_REORDER:-}" ]; then
	wire_mtu 1500
	LKIND=reorder LSHARES="none 0 $BENCH_REORDER" LTESTS=bw64k
	netem_seed
	for p in $BENCH_REORDER; do
		echo "exact: reorder check, $p %" >&2
		reorder_check "$p"
	done
	unit_set reorder
	for r in softroce-sr softroce; do
		loss_row "$r"
	done
	unit_reset
fi
# The tail-latency part (BENCH_TAIL: loss shares in percent, e.g. "1";
# empty by default): a 4 KiB ping-pong, lossless and at each share, netem
# dropping wire packets on both ends of the veth pair as in the loss
# table (always per packet here: gso_max_segs 1, roce_gso=0; a 4 KiB
# message is 4 RoCE packets at the path MTU of 1024, so at 1 % about 8 %
# of round trips lose one), one run a cell, the rows of BENCH_TAIL_ROWS
# (softroce-sr softroce softiwarp siw tcp; softroce and softroce-sr
# through the RDMA CM as in the loss table, go-back-N and selective
# repeat). RDMA rows: ib_send_lat -e, TAIL_ITERS round trips: event mode,
# as everywhere on this clock (ib_write_lat has none, and two processes
# polling one vCPU take turns by scheduler ticks, so a polled WRITE
# ping-pong would time the scheduler). A 4 KiB SEND crosses the wire as a
# WRITE does, in the same packets, acknowledged, NAKed and resent alike:
# its tail under loss is the transport's recovery. TCP: sockperf's
# ping-pong (blocking sockets, the monotonic clock) for TAIL_SECS guest
# seconds, with loss TAIL_LOSS_SECS: sockperf counts no round trips, and
# each loss there waits out TCP's minimum RTO of 200 ms (in 2 s, 1 %
# left 246 round trips), which guest time skips. Lines "tail ROW P lat4k
# KEY VALUE": med, p99, p999 and max (half a round trip, us, the tools'
# own), and the loss table's counters and status.
TAIL_ROWS=${BENCH_TAIL_ROWS:-softroce-sr softroce softiwarp siw tcp}
TAIL_ITERS=${BENCH_TAIL_ITERS:-10000}
TAIL_SECS=2 TAIL_LOSS_SECS=120
if [ -n "${BENCH_TAIL:-}" ]; then
	wire_mtu 1500
	LKIND=tail LSHARES="0 $BENCH_TAIL" LTESTS=lat4k LOSS_PKT=1
	SIZE[lat4k]=4096 LCOUNT[lat4k]=$TAIL_ITERS
	netem_seed
	unit_set tail
	for r in $TAIL_ROWS; do
		loss_row "$r"
	done
	unit_reset
fi
# What the phases are made of (the report's per-message counts).
for k in "${!COUNT[@]}"; do
	echo "size $k ${SIZE[$k]}" >>"$exact"
done
