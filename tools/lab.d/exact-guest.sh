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
		measure "$p.bw64k" "$n64" $((2 * n64)) ib_send_bw "$cdev" "$sdev" $f -e -N -s 65536 -n @
		put_exact "$row" "$mtu" bw64k "$(check_row "$p bw64k" "$(perftest_row "$OUTPUT" 4)")"
		# siw's and softiwarp's 1 MiB SENDs in event mode never end
		# (the last message never arrives; the guest idles on, billions
		# of timer instructions, no result): not measured.
		if [ "$row" != siw ] && [ "$row" != softiwarp ]; then
			measure "$p.bw1m" "$n1m" $((2 * n1m)) ib_send_bw "$cdev" "$sdev" $f -e -N -s 1048576 -n @
			put_exact "$row" "$mtu" bw1m "$(check_row "$p bw1m" "$(perftest_row "$OUTPUT" 4)")"
		fi
		measure "$p.lat2" "$nlat" $((2 * nlat)) ib_send_lat "$cdev" "$sdev" $f -e -s 2 -n @
		put_exact "$row" "$mtu" lat2 "$(check_row "$p lat2" "$(perftest_row "$OUTPUT" 5)")"
		measure "$p.rate8" "$nrate" $((2 * nrate)) ib_send_bw "$cdev" "$sdev" $f -e -N -s 8 -n @
		put_exact "$row" "$mtu" rate8 "$(check_row "$p rate8" "$(perftest_row "$OUTPUT" 5)")"
	}
	grep -E ' [tTwW] ' /proc/kallsyms >"$meter/kallsyms.$p"
	dev_del - "$ck" "$cdev"
	dev_del srv "$sk" "$sdev"
}

wire_at veth
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
# What the phases are made of (the report's per-message counts).
for k in "${!COUNT[@]}"; do
	echo "size $k ${SIZE[$k]}" >>"$exact"
done
