#!/bin/bash
# exact-report.sh table OUT: the exact meter's tables (tools/lab bench
# --exact) from OUT/exact.tsv and the meter's counts in OUT/meter.
# exact-report.sh spread OUT OTHER: how far two boots' tables (OUT's and
# OTHER's) differ, row by row: their difference over their mean, in
# percent.
# exact-report.sh ceilings OUT FILE: the instruction ceilings of FILE
# (tests/exact/ceilings) against OUT's counts, as PASS and FAIL lines.
# exact-report.sh profile OUT PHASE [TOP]: the TOP (25) kernel functions
# of PHASE (MTU.STACK.TEST, e.g. 1500.softroce.bw64k), in instructions per
# message: the 2N run's counts less the N run's, so nothing of the
# start-up is in them, each translation block given to the kernel text
# symbol at or below its address (the stack's /proc/kallsyms).
# A measurement's cost in the table is I(2N) / 2N: the second run's
# instructions per message; over the message's bytes, per byte (the
# profile's is (I(2N) - I(N)) / N). Both ends of the wire are counted.
set -u
export LC_ALL=C
mode=$1 out=$2
exact=$out/exact.tsv
meter=$out/meter
if [ ! -f "$exact" ] || [ ! -f "$meter/phases" ]; then
	echo "no exact bench in $out: run tools/lab bench --exact" >&2
	exit 1
fi

# mark_of NAME: the marker file of phase NAME.
mark_of() { awk -v p="$1" '$2 == p { print ENVIRON["meter"] "/mark-" $1 ".tsv"; exit }' "$meter/phases"; }
export meter

# msize TEST: the bytes of TEST's messages.
msize() { awk -v t="$1" '$1 == "size" && $2 == t { print $3; exit }' "$exact"; }
# msgs PHASE: the messages PHASE moved (round trips, for latency).
msgs() { awk -v p="$1" '$1 == "msgs" && $2 == p { print $3; exit }' "$exact"; }

# runs PHASE: the meter's files of PHASE's two runs in A and B, their
# messages in MA and MB; fails unless both are there and the second moved
# more.
A='' B='' MA='' MB=''
runs() {
	A=$(mark_of "$1.a")
	B=$(mark_of "$1.b")
	MA=$(msgs "$1.a")
	MB=$(msgs "$1.b")
	[ -n "$A" ] && [ -n "$B" ] && [ -f "$A" ] && [ -f "$B" ] &&
		[ "${MB:-0}" -gt "${MA:-0}" ]
}

# cost PHASE WHAT: kernel or user instructions per message of PHASE: its
# second run's over the messages it moved. (The second run's less the
# first's, over the messages it moved more, leaves the start-up out too,
# but differs more from boot to boot: a run's regime moves both. The
# shim's marks leave perftest's start-up out already; qperf's is about
# 10 M instructions, 0.5 % of a run.)
cost() {
	if ! runs "$1"; then
		echo -
		return
	fi
	awk -v w="$2" -v n="$MB" '$1 == w { v = $2 } END { printf "%.0f", v / n }' "$B"
}

value() { awk -v s="$1" -v m="$2" -v k="$3" '$1 == s && $2 == m && $3 == k { print $4; exit }' "$exact"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
per_byte() { awk -v c="$1" -v s="$2" 'BEGIN { if (c + 0 > 0 && s > 0) printf "%.3f", c / s; else print "-" }'; }

# by_time KIND FIGURE: a tool's guest-time figure as instructions (one a
# nanosecond): tb per byte of MiB/s, tl per round trip of a half round
# trip in us, tr per message of Mmsg/s.
by_time() {
	awk -v k="$1" -v v="$2" 'BEGIN {
		if (v + 0 <= 0) { print "-"; exit }
		if (k == "tb") printf "%.2f", 1e9 / (v * 1048576)
		else if (k == "tl") printf "%.0f", 2000 * v
		else printf "%.0f", 1000 / v
	}'
}

# table: the tables; with CELLS set, MTU|ROW|STACK|VALUE lines instead.
CELLS=${CELLS:-}
table() {
	local stacks mtus mtu s t
	mtus=$(awk 'NF == 4 && $1 !~ /^(msgs|loss|ecn|reorder|tail)$/ { print $2 }' "$exact" | sort -un | tr '\n' ' ')
	stacks=$(awk 'NF == 4 && $1 !~ /^(msgs|loss|ecn|reorder|tail)$/ { print $1 }' "$exact" | awk '!seen[$0]++' | tr '\n' ' ')
	for mtu in $mtus; do
		if [ -z "$CELLS" ]; then
			echo "exact clock (one vCPU, one instruction a guest ns), veth pair, MTU $mtu; both ends counted"
			printf "%-24s" ""
			for s in $stacks; do printf " %10s" "$s"; done
			echo
		fi
		local -a rows=(
			"64 KiB SEND MiB/s|v|bw64k"
			"1 MiB SEND MiB/s|v|bw1m"
			"2 B latency us|v|lat2"
			"8 B SEND Mmsg/s|v|rate8"
			"64 KiB insn/B by time|tb|bw64k"
			"64 KiB kernel insn/B|kb|bw64k"
			"64 KiB user insn/B|ub|bw64k"
			"1 MiB insn/B by time|tb|bw1m"
			"1 MiB kernel insn/B|kb|bw1m"
			"1 MiB user insn/B|ub|bw1m"
			"2 B insn/trip by time|tl|lat2"
			"2 B kernel insn/trip|k|lat2"
			"2 B user insn/trip|u|lat2"
			"8 B insn/msg by time|tr|rate8"
			"8 B kernel insn/msg|k|rate8"
			"8 B user insn/msg|u|rate8"
		)
		local r label how what c
		for r in "${rows[@]}"; do
			IFS='|' read -r label how t <<<"$r"
			[ -n "$CELLS" ] || printf "%-24s" "$label"
			for s in $stacks; do
				case $how in
				v) c=$(value "$s" "$mtu" "$t") ;;
				k | kb) c=$(cost "$mtu.$s.$t" kernel) ;;
				u | ub) c=$(cost "$mtu.$s.$t" user) ;;
				t?) c=$(by_time "$how" "$(value "$s" "$mtu" "$t")") ;;
				esac
				case $how in kb | ub) c=$(per_byte "$c" "$(msize "$t")") ;; esac
				# No figure of the tool's: the run failed, its counts say
				# nothing about a message.
				[ -n "$(value "$s" "$mtu" "$t")" ] || c=-
				if [ -n "$CELLS" ]; then
					printf '%s|%s|%s|%s\n' "$mtu" "$label" "$s" "${c:--}"
				else
					printf " %10s" "${c:--}"
				fi
			done
			[ -n "$CELLS" ] || echo
		done
		[ -z "$CELLS" ] || continue
		printf "%-24s" "as a ratio to tcp:"
		echo
		for r in "64 KiB MiB/s|bw64k" "1 MiB MiB/s|bw1m" "2 B latency|lat2"; do
			IFS='|' read -r label what <<<"$r"
			printf "%-24s" "  $label"
			for s in $stacks; do
				printf " %10s" "$(ratio "$(value "$s" "$mtu" "$what")" "$(value tcp "$mtu" "$what")")"
			done
			echo
		done
		printf "%-24s" "  64 KiB kernel insn/B"
		for s in $stacks; do
			printf " %10s" "$(ratio "$(cost "$mtu.$s.bw64k" kernel)" "$(cost "$mtu.tcp.bw64k" kernel)")"
		done
		echo
		echo
	done
}

# cell PART ROW P TEST KEY: a value of the loss, reordering or tail part
# (exact-guest.sh's "PART ROW P TEST KEY VALUE" lines).
cell() { awk -v c="$1" -v r="$2" -v p="$3" -v t="$4" -v k="$5" '$1 == c && $2 == r && $3 == p && $4 == t && $5 == k { print $6; exit }' "$exact"; }

# lv ROW P TEST KEY: a value of the loss table.
lv() { cell loss "$@"; }

# loss_table: the loss table, if the run had one (BENCH_LOSS): per test
# and loss share, each row's MiB/s and its share of its own lossless
# figure; then what went on the wire: the packets (TCP: segments) the
# client sent over those the messages needed, the resends, netem's drops.
loss_table() {
	local rows shares p t r c v b st
	rows=$(awk '$1 == "loss" && NF == 6 && $3 == "0" { print $2 }' "$exact" | awk '!seen[$0]++' | tr '\n' ' ')
	[ -n "$rows" ] || return 0
	shares=$(awk '$1 == "loss" && NF == 6 { print $3 }' "$exact" | sort -un | tr '\n' ' ')
	echo "loss: netem on both ends of the veth pair, MTU 1500, one run a cell; seed: $(awk '$1 == "loss" && $2 == "seed" { print $3, $4; exit }' "$exact")"
	# What netem drops: skb, what the stacks hand it (a softroce train of
	# up to 32 packets, a TCP segment of up to 64 KiB), or packet.
	echo "netem drops: $(awk '$1 == "loss" && $2 == "unit" { print ($3 == "packet" ? "wire packets (gso_max_segs 1, roce_gso=0)" : "skbs as handed over (softroce trains, TSO segments)"); exit }' "$exact")"
	echo "the tool's MiB/s (share of the row's lossless figure); stalled: no result within the guest-time bound"
	for t in bw64k bw1m; do
		# perftest's count (qperf's rows ran LOSS_SECS instead).
		c=$(awk -v t="$t" '$1 == "loss" && $2 != "tcp" && $3 == "0" && $4 == t && $5 == "msgs" { print " x " $6; exit }' "$exact")
		printf "%-24s" "$([ $t = bw64k ] && echo "64 KiB SENDs$c" || echo "1 MiB SENDs$c")"
		for r in $rows; do printf " %15s" "$r"; done
		echo
		for p in $shares; do
			printf "%-24s" "$([ "$p" = 0 ] && echo "  no loss" || echo "  $p %")"
			for r in $rows; do
				v=$(lv "$r" "$p" "$t" mib)
				b=$(lv "$r" 0 "$t" mib)
				st=$(lv "$r" "$p" "$t" status)
				if [ -n "$v" ] && [ "$p" != 0 ]; then
					# Shares under 10 % with a decimal: 0.4 % is not 0.
					c=$(awk -v v="$v" -v b="$b" 'BEGIN { if (b > 0) { s = 100 * v / b
						printf (s < 10 ? "%.3g (%.1f%%)" : "%.3g (%.0f%%)"), v, s } else printf "%.3g", v }')
				elif [ -n "$v" ]; then
					c=$(awk -v v="$v" 'BEGIN { printf "%.4g", v }')
				elif [ "$st" = skipped ] || [ -z "$st" ]; then
					c=-
				else
					c=$st$(v=$(lv "$r" "$p" "$t" wc) && [ -n "$v" ] && echo " wc $v")
				fi
				printf " %15s" "$c"
			done
			echo
		done
	done
	echo "sent / needed: the client's packets over those the messages need"
	echo "(tcp, siw, softiwarp: TCP segments sent over those not retransmitted)"
	loss_rows "$rows" "$shares" ratio
	echo "softroce's resends: go-back-N timeouts / selective resends (client) / held out of order (server)"
	loss_rows "$rows" "$shares" resends
	echo "netem's drops: veth0 (client's sends) / veth1 (server's)"
	loss_rows "$rows" "$shares" drops
	printf "%-24s" "retransmission mode"
	for r in $rows; do printf " %15s" "$(v=$(lv "$r" 0 - mode) && echo "${v:--}")"; done
	echo
	echo
}
# loss_rows ROWS SHARES WHAT: lines of loss_table, a test and share a line.
loss_rows() {
	local t p r c
	for t in bw64k bw1m; do
		for p in $2; do
			[ "$p" != 0 ] || [ "$3" = ratio ] || continue
			printf "%-24s" "  $([ $t = bw64k ] && echo "64 KiB" || echo "1 MiB"), $([ "$p" = 0 ] && echo "no loss" || echo "$p %")"
			for r in $1; do
				case $3 in
				ratio)
					c=$(awk -v x="$(lv "$r" "$p" "$t" tx)" -v n="$(lv "$r" "$p" "$t" need)" \
						'BEGIN { if (n > 0 && x != "") printf "%.3f", x / n; else print "-" }')
					[ "$(lv "$r" "$p" "$t" status)" = ok ] || c=-
					;;
				resends)
					c=-
					[ -z "$(lv "$r" "$p" "$t" srretx)" ] ||
						c="$(lv "$r" "$p" "$t" retx)/$(lv "$r" "$p" "$t" srretx)/$(lv "$r" "$p" "$t" held)"
					;;
				drops)
					c=-
					[ -z "$(lv "$r" "$p" "$t" cdrop)" ] || c="$(lv "$r" "$p" "$t" cdrop)/$(lv "$r" "$p" "$t" sdrop)"
					;;
				esac
				printf " %15s" "$c"
			done
			echo
		done
	done
}

# ev E KEY: a value of the ECN part ("ecn E KEY VALUE").
ev() { awk -v e="$1" -v k="$2" '$1 == "ecn" && $2 == e && $3 == k { print $4; exit }' "$exact"; }

# ecn_table: the ECN part, if the run had one (BENCH_ECN=1): per run
# (roce_ecn 1 and 0) each QP's MiB/s, their sum as a share of the
# bottleneck, the spread of the shares, what the qdisc did and the CNPs.
# A share of the bottleneck counts wire bytes: a 1024-byte payload
# travels in 1082 (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4), what tbf
# counts.
ecn_table() {
	local e runs mbit i v c
	runs=$(awk '$1 == "ecn" && $3 == "mbit" { print $2 }' "$exact" | tr '\n' ' ')
	[ -n "$runs" ] || return 0
	mbit=$(ev "${runs%% *}" mbit)
	echo "ECN: $(awk '$1 == "ecn" && $3 ~ /^status\./ { n++ } END { print n / 2 }' "$exact") softroce QPs (RDMA CM, SR) through tbf $mbit Mbit/s with RED (ecn) on veth0, $(ev "${runs%% *}" msgs) x 64 KiB SENDs each"
	echo "(bytes checked by perftest's completion statuses only; shares of the bottleneck in wire bytes, 1082 a 1024-byte packet)"
	printf "%-34s" "roce_ecn"
	for e in $runs; do printf " %22s" "$e"; done
	echo
	ecn_line "QPs' MiB/s" qps
	ecn_line "sum MiB/s (share of bottleneck)" sum
	ecn_line "max/min QP (spread)" spread
	ecn_line "all QPs up: s, share used" win
	ecn_line "  median interval, Mbit/s" med
	ecn_line "first to last end, guest s" span
	ecn_line "QPs' ECE bits" ece
	ecn_line "RED marked/early/other/pdrop" red
	ecn_line "qdisc drops (RED / tbf)" drops
	ecn_line "largest backlog sampled, kB" backlog
	ecn_line "CE seen / CNPs sent / handled" cnp
	ecn_line "samples paced / QP samples" paced
	ecn_line "paced rate min / mean, Mb/s" rate
	ecn_line "timeouts / SR resends" retx
	ecn_line "sent / needed" ratio
	echo
}
# ecn_line LABEL WHAT: one line of ecn_table, a run a column.
ecn_line() {
	local e c i v
	printf "%-34s" "$1"
	for e in $runs; do
		case $2 in
		qps)
			c=
			for ((i = 1; ; i++)); do
				v=$(ev "$e" "status.$i")
				[ -n "$v" ] || break
				[ "$v" = ok ] && v=$(awk -v v="$(ev "$e" "mib.$i")" 'BEGIN { printf "%.3g", v }')
				c=$c${c:+ }$v
			done
			;;
		sum | spread)
			c=$(awk -v e="$e" -v m="$mbit" -v w="$2" '$1 == "ecn" && $2 == e && $3 ~ /^mib\./ {
					s += $4; n++; if (max == "" || $4 > max) max = $4; if (min == "" || $4 < min) min = $4 }
				END {
					if (!n) { print "-"; exit }
					if (w == "sum") printf "%.1f (%.0f%%)", s, 100 * s * 1048576 * 1082 / 1024 * 8 / (m * 1e6)
					else printf "%.2f (%.0f%%)", max / min, 100 * (max - min) / (s / n)
				}' "$exact")
			;;
		win)
			c=$(awk -v s="$(ev "$e" win)" -v b="$(ev "$e" winbytes)" -v m="$mbit" \
				'BEGIN { if (s > 0) printf "%.2f, %.0f%%", s, 100 * b * 8 / s / (m * 1e6); else print "-" }')
			;;
		med)
			# The median of the sampling intervals' rates while all
			# the QPs were up (the window less its start and end).
			c=$(awk -v q="$(awk '$1 == "ecn" && $3 ~ /^status\./ { n++ } END { print n / 2 }' "$exact")" -v m="$mbit" '
				p != "" && $4 == q && $1 > p { r[++n] = ($2 - pb) * 8 / ($1 - p) / 1e6 }
				{ p = $1; pb = $2 }
				END {
					if (!n) { print "-"; exit }
					for (i = 2; i <= n; i++) for (j = i; j > 1 && r[j] < r[j - 1]; j--) { t = r[j]; r[j] = r[j - 1]; r[j - 1] = t }
					printf "%.0f (%.0f%%)", r[int((n + 1) / 2)], 100 * r[int((n + 1) / 2)] / m
				}' "$out/runs/ecn.$e.samples" 2>/dev/null)
			;;
		span) c=$(ev "$e" span) ;;
		ece) c=$(ev "$e" ece) ;;
		red) c="$(ev "$e" marked_q)/$(ev "$e" early)/$(ev "$e" other)/$(ev "$e" pdrop)" ;;
		drops) c="$(ev "$e" drops) / $(ev "$e" tbfdrops)" ;;
		backlog) c=$(awk -v b="$(ev "$e" backlog)" 'BEGIN { printf "%.0f", b / 1000 }') ;;
		cnp) c="$(ev "$e" marked)/$(ev "$e" cnp)/$(ev "$e" handled)" ;;
		paced) c=$(ev "$e" paced) ;;
		rate) c="$(ev "$e" rmin) / $(ev "$e" rmean)" ;;
		retx) c="$(ev "$e" retx) / $(ev "$e" srretx)" ;;
		ratio)
			c=$(awk -v x="$(ev "$e" tx)" -v n="$(ev "$e" need)" \
				'BEGIN { if (n > 0 && x != "") printf "%.4f", x / n; else print "-" }')
			;;
		esac
		[ "$c" != " / " ] && [ "$c" != "//" ] && [ "$c" != "///" ] || c=-
		printf " %22s" "${c:--}"
	done
	echo
}

# rv ROW P KEY: a value of the reordering table's 64 KiB cells.
rv() { cell reorder "$1" "$2" bw64k "$3"; }

# reorder_table: the reordering part, if the run had one (BENCH_REORDER):
# netem's count first, then per row and share the MiB/s (share of the
# row's figure without netem, and of the delay alone), the packets sent
# over those needed, the resends.
reorder_table() {
	local rows shares r p v c
	rows=$(awk '$1 == "reorder" && NF == 6 && $3 == "none" { print $2 }' "$exact" | awk '!seen[$0]++' | tr '\n' ' ')
	[ -n "$rows" ] || return 0
	shares=$(awk '$1 == "reorder" && NF == 6 && $3 != "none" { print $3 }' "$exact" | sort -un | tr '\n' ' ')
	echo "reordering: netem on veth0, delay 1 ms, reorder P% gap 5, no loss; MTU 1500, 64 KiB SENDs x $(rv "${rows%% *}" none msgs), one run a cell"
	echo "netem reorders: $(awk '$1 == "reorder" && $2 == "unit" { print ($3 == "packet" ? "wire packets (gso_max_segs 1, roce_gso=0)" : "skbs as handed over (softroce trains)"); exit }' "$exact")"
	awk '$1 == "reorder" && $2 == "check" && NF < 6 { printf "netem at %s %%: no count (the probe gave nothing)\n", $3 }
		$1 == "reorder" && $2 == "check" && NF >= 6 { printf "netem at %s %%: %s of %s UDP datagrams received (%s sent) came before one of a lower number (%.2f%%)\n", $3, $6, $5, $4, ($5 > 0 ? 100 * $6 / $5 : 0) }' "$exact"
	printf "%-30s" ""
	for r in $rows; do printf " %24s" "$r"; done
	echo
	for p in none $shares; do
		case $p in
		none) c="no netem, MiB/s" ;;
		0) c="delay 1 ms (of no netem)" ;;
		*) c="$p % (of none / of delay)" ;;
		esac
		printf "%-30s" "$c"
		for r in $rows; do
			v=$(rv "$r" "$p" mib)
			if [ -z "$v" ]; then
				c=$(rv "$r" "$p" status)
			else
				c=$(awk -v v="$v" -v a="$(rv "$r" none mib)" -v d="$(rv "$r" 0 mib)" -v p="$p" 'BEGIN {
					sa = a > 0 ? sprintf("%.0f%%", 100 * v / a) : "-"
					sd = d > 0 ? sprintf("%.0f%%", 100 * v / d) : "-"
					if (p == "none") printf "%.4g", v
					else if (p == "0") printf "%.4g (%s)", v, sa
					else printf "%.4g (%s / %s)", v, sa, sd }')
			fi
			printf " %24s" "${c:--}"
		done
		echo
	done
	for p in none $shares; do
		printf "%-30s" "  sent/needed, $p"
		for r in $rows; do
			printf " %24s" "$(awk -v x="$(rv "$r" "$p" tx)" -v n="$(rv "$r" "$p" need)" -v st="$(rv "$r" "$p" status)" \
				'BEGIN { if (n > 0 && x != "" && st == "ok") printf "%.4f", x / n; else print "-" }')"
		done
		echo
	done
	for p in none $shares; do
		printf "%-30s" "  timeouts/SR resends/held/NAKs, $p"
		for r in $rows; do
			printf " %24s" "$(rv "$r" "$p" retx)/$(rv "$r" "$p" srretx)/$(rv "$r" "$p" held)/$(rv "$r" "$p" naks)"
		done
		echo
	done
	printf "%-30s" "retransmission mode"
	for r in $rows; do printf " %24s" "$(v=$(awk -v r="$r" '$1 == "reorder" && $2 == r && $5 == "mode" { print $6; exit }' "$exact") && echo "${v:--}")"; done
	echo
	echo
}

# tv ROW P KEY: a value of the tail part's cells.
tv() { cell tail "$1" "$2" lat4k "$3"; }

# tail_table: the tail-latency part, if the run had one (BENCH_TAIL): a
# line per row and loss share: the 4 KiB ping-pong's median, p99, p99.9
# and largest half round trip, the p99 over the row's lossless p99, the
# round trips, softroce's resends and netem's drops.
tail_table() {
	local rows shares r p v c
	rows=$(awk '$1 == "tail" && NF == 6 && $3 == "0" && $4 == "lat4k" { print $2 }' "$exact" | awk '!seen[$0]++' | tr '\n' ' ')
	[ -n "$rows" ] || return 0
	shares=$(awk '$1 == "tail" && NF == 6 && $4 == "lat4k" { print $3 }' "$exact" | sort -un | tr '\n' ' ')
	echo "tail latency: 4 KiB ping-pong, half a round trip in us (guest time); netem drops wire packets on both ends"
	echo "of the veth pair (gso_max_segs 1, roce_gso=0), MTU 1500, one run a cell; seed: $(awk '$1 == "tail" && $2 == "seed" { print $3, $4; exit }' "$exact")"
	echo "RDMA rows: ib_send_lat -e (event mode; perftest's typical is its median); tcp: sockperf ping-pong, TCP, blocking"
	printf "%-12s %5s %8s %8s %8s %9s %11s %7s %12s %9s\n" "" loss median p99 p99.9 max "p99/no loss" trips "timeouts/SR" drops
	for r in $rows; do
		for p in $shares; do
			v=$(tv "$r" "$p" med)
			if [ -z "$v" ]; then
				printf "%-12s %5s %8s\n" "$r" "$p %" "$(c=$(tv "$r" "$p" status) && echo "${c:--}")"
				continue
			fi
			c=-
			[ "$p" = 0 ] || c=$(awk -v a="$(tv "$r" "$p" p99)" -v b="$(tv "$r" 0 p99)" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }')
			printf "%-12s %5s %8s %8s %8s %9s %11s %7s %12s %9s\n" "$r" "$p %" "$v" "$(tv "$r" "$p" p99)" \
				"$(tv "$r" "$p" p999)" "$(tv "$r" "$p" max)" "$c" "$(tv "$r" "$p" msgs)" \
				"$(v=$(tv "$r" "$p" srretx) && [ -n "$v" ] && echo "$(tv "$r" "$p" retx)/$v" || echo -)" \
				"$(v=$(tv "$r" "$p" cdrop) && [ -n "$v" ] && echo "$v/$(tv "$r" "$p" sdrop)" || echo -)"
		done
	done
	echo "(target, issue [11]: p99 at 1 % at most 3x the lossless p99. trips: round trips measured;"
	echo " timeouts/SR: softroce's timeouts and selective resends (client); drops: netem's, veth0/veth1)"
	printf "retransmission mode:"
	for r in $rows; do
		v=$(awk -v r="$r" '$1 == "tail" && $2 == r && $5 == "mode" { print $6; exit }' "$exact")
		[ -z "$v" ] || printf " %s %s" "$r" "$v"
	done
	echo
	echo
}

profile() {
	local phase=$1 top=${2:-25} syms=$meter/kallsyms.${1%.*}
	if ! runs "$phase" || [ ! -f "$syms" ]; then
		echo "no counts or symbols of $phase; phases: $(awk '{ sub(/\.[ab]$/, "", $2); print $2 }' "$meter/phases" | sort -u | tr '\n' ' ')" >&2
		return 1
	fi
	echo "$phase: kernel instructions per message (the $MB-message run less the $MA-message run)"
	# Blocks (their instructions, the second run's less the first's) and
	# symbols, by address (16 hex digits: text order is number order); a
	# block goes to the last symbol before it.
	{
		awk 'FNR == 1 && NR > 1 { f = 1 } FNR > 2 { d[$1] += (f ? 1 : -1) * $2 * $3 }
			END { for (v in d) if (d[v] != 0) print v, 1, d[v] }' "$A" "$B"
		awk '{ print $1, 0, $3 ($4 != "" ? " " $4 : "") }' "$syms"
	} | sort -k1,1 -k2,2n | awk -v n=$((MB - MA)) '
		$2 == 0 { sym = $3 ($4 != "" ? " " $4 : ""); next }
		{ c[sym == "" ? "?" : sym] += $3; tot += $3 }
		END {
			for (s in c) printf "%12.0f %6.2f%% %s\n", c[s] / n, 100 * c[s] / tot, s
			printf "%12.0f %6.2f%% %s\n", tot / n, 100, "(all kernel)"
		}' | sort -k1,1nr | head -n "$((top + 1))"
}

# spread OTHER: this run's table against OTHER's (another boot's
# build/bench-exact, kept): per row and stack, both values and their
# difference over their mean, in percent.
spread() {
	local other=$1
	awk -F'|' 'NR == FNR { o[$1 "|" $2 "|" $3] = $4; next }
		$1 != mtu {
			mtu = $1
			printf "\nMTU %s: this boot, the other, the difference over the mean\n", mtu
		}
		$2 != row { row = $2; printf "%s\n", row }
		{
			v = $4; w = o[$1 "|" $2 "|" $3]
			c = "-"
			if (v ~ /^-?[0-9.]+$/ && w ~ /^-?[0-9.]+$/ && v + w != 0) {
				d = v - w; if (d < 0) d = -d
				c = sprintf("%.2f %%", 200 * d / (v + w))
			}
			printf "  %-10s %12s %12s %9s\n", $3, v, w, c
		}' <(CELLS=1 "$0" table "$other") <(CELLS=1 table)
}

# ceilings FILE: each line of FILE ("PHASE WHAT UNIT MAX": kernel or user
# instructions, per byte or per message, of the phase's second run, as
# the table gives them; # starts a comment) against this boot: PASS or
# FAIL lines (exact.PHASE.WHAT), for tools/lab test. Fails if any FAILs.
ceilings() {
	local phase what unit max c rc=0
	while read -r phase what unit max; do
		case $phase in '' | '#'*) continue ;; esac
		c=$(cost "$phase" "$what")
		[ "$unit" = byte ] && c=$(per_byte "$c" "$(msize "${phase##*.}")")
		if [ "$c" = - ]; then
			echo "FAIL exact.$phase.$what: not measured"
			rc=1
		elif awk -v c="$c" -v m="$max" 'BEGIN { exit !(c + 0 <= m + 0) }'; then
			echo "PASS exact.$phase.$what: $c <= $max a $unit"
		else
			echo "FAIL exact.$phase.$what: $c > $max a $unit"
			rc=1
		fi
	done <"$1"
	return $rc
}

case $mode in
ceilings) ceilings "$3" ;;
table)
	table
	if [ -z "$CELLS" ]; then
		loss_table
		ecn_table
		reorder_table
		tail_table
	fi
	;;
spread) spread "$3" ;;
profile)
	shift 2
	profile "$@"
	;;
*)
	echo "usage: exact-report.sh table OUT | spread OUT OTHER | profile OUT PHASE [TOP] | ceilings OUT FILE" >&2
	exit 2
	;;
esac
