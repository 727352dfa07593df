#!/bin/bash
# bench-report.sh SAMPLES ROUNDS POLL_US SVG: the tables of tools/lab bench
# from its samples ("KEY DEVICE VALUE" lines, bench-guest.sh writes them),
# on stdout, and its chart in SVG. The wire first: a table for each wire
# (the veth pair, two guests) and MTU, a row for each device pair and TCP,
# and each softrdma row as a ratio to TCP and to its anchor (rxe for
# softroce, siw for softiwarp); then the loopback tables. The chart: 64 KiB
# bandwidth and latency on the wire, then the loopback's write bandwidth
# over message sizes and each softrdma row as a ratio to its anchor (above
# 1 is better, latencies inverted).
set -u
samples=$1 rounds=$2 poll_on=$3 svg=$4

# The median of every KEY DEVICE pair, one "KEY DEVICE MEDIAN" line each.
declare -A med
while read -r k d v; do
	med[$k.$d]=$v
done < <(awk '$3 ~ /^[0-9.]+$/ { n = ++cnt[$1 " " $2]; v[$1 " " $2, n] = $3 }
	END {
		for (kd in cnt) {
			n = cnt[kd]
			for (i = 1; i <= n; i++) a[i] = v[kd, i]
			for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			print kd, a[int((n + 1) / 2)]
		}
	}' "$samples")
get() { echo "${med[$1.$2]:--}"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1f%%", 100 * a / b; else print "-" }'; }
memcpy=$(get memcpy_64k_mbs machine)
# has DEVICE: there are samples of DEVICE.
has() { awk -v d="$1" '$2 == d { f = 1; exit } END { exit !f }' "$samples"; }

# The wire: WIRE.MTU.KIND devices.
W_KEYS="write_lat send_lat read_lat write_pps bw_65536 bw_1048576 bw_q8 cpu_65536 cpu_1048576 cpu_q8"
W_HEAD="wr_lat sd_lat rd_lat 8B_Mpps 64K 1M 64Kx8 cpu64K cpu1M cpu64Kx8"
# shellcheck disable=SC2086 # word lists
wrow() {
	local label=$1 d=$2 k
	printf "%-14s" "$label"
	for k in $W_KEYS; do printf " %8s" "$(get "$k" "$d")"; done
	echo
}
wratio() {
	local label=$1 a=$2 b=$3 k
	printf "%-14s" "$label"
	for k in $W_KEYS; do printf " %8s" "$(ratio "$(get "$k" "$a")" "$(get "$k" "$b")")"; done
	echo
}
# wire_anchor WIRE: softroce's anchor there (rxe receives in the initial
# netns only: across the veth pair it sends to softroce).
wire_anchor() { if [ "$1" = veth ]; then echo rxe-sr; else echo rxe; fi; }
wire_title() {
	if [ "$1" = veth ]; then
		echo "across veth0 <-> veth1 (one guest, 2 vCPUs; server in netns b), MTU $2"
	else
		echo "across two guests (1 vCPU each, virtio-net, a bridge of taps), MTU $2"
	fi
}
wires=()
for w in veth pair; do
	for mtu in 1500 9000; do
		has "$w.$mtu.tcp" || has "$w.$mtu.softroce" || has "$w.$mtu.siw" || continue
		wires+=("$w.$mtu")
	done
done
for wm in "${wires[@]}"; do
	w=${wm%.*} mtu=${wm#*.} a=$(wire_anchor "${wm%.*}")
	al=${a/rxe-sr/rxe>sr}
	echo "== $(wire_title "$w" "$mtu")"
	printf "%-14s" ""
	# shellcheck disable=SC2086
	printf " %8s" $W_HEAD
	echo
	wrow TCP "$wm.tcp"
	wrow link "$wm.link"
	wrow siw "$wm.siw"
	wrow softiwarp "$wm.softiwarp"
	wrow "$al" "$wm.$a"
	wrow softroce "$wm.softroce"
	wratio softiwarp/TCP "$wm.softiwarp" "$wm.tcp"
	wratio softiwarp/siw "$wm.softiwarp" "$wm.siw"
	wratio softroce/TCP "$wm.softroce" "$wm.tcp"
	wratio "softroce/$al" "$wm.softroce" "$wm.$a"
	wratio softroce/link "$wm.softroce" "$wm.link"
	echo
done
if [ ${#wires[@]} -gt 0 ]; then
	cat <<LEGEND
(wr_lat sd_lat rd_lat: ib_write_lat, ib_send_lat, ib_read_lat 2 B, typical
 us; TCP: a busy-polling sockperf ping-pong, 14 B, median, half the round
 trip. 8B_Mpps: ib_write_bw 8 B message rate. 64K 1M 64Kx8: ib_write_bw
 MiB/s, 64 KiB and 1 MiB messages, 64 KiB over 8 QPs (-q 8); TCP: iperf3,
 one stream (8 streams for 64Kx8). cpu*: guest CPU seconds (both ends,
 /proc/stat busy time while the client ran) per GiB moved, lower is better.
 link: the wire alone, no protocol: a busy-polling UDP ping-pong (sockperf,
 14 B, half the round trip); 8B_Mpps: pktgen datagrams as long as an 8-byte
 WRITE's RoCE packet that reach the server's UDP, per second; 64K: payload
 MiB/s of pktgen datagrams as long as a full RoCE packet at the path MTU.
 rxe>sr: rxe client on veth0, softroce server on veth1 (6.12's rxe receives
 in the initial netns only). Ratios are plain quotients: for latency and
 cpu below 1x is better. Medians of $rounds interleaved rounds.)

LEGEND
fi

# The two guests' loss rows (BENCH_PAIR_LOSS): samples bw_loss_P and
# share_loss_P of pair.loss.ROW: each cell's median MiB/s and the median
# of its shares of the same round's lossless figure.
pair_loss_table() {
	local rows shares r p
	rows=$(awk '$1 ~ /^bw_loss_/ && $2 ~ /^pair[.]loss[.]/ { sub(/^pair[.]loss[.]/, "", $2); print $2 }' "$samples" |
		awk '!seen[$0]++' | tr '\n' ' ')
	[ -n "$rows" ] || return 0
	shares=$(awk '$1 ~ /^bw_loss_/ { sub(/^bw_loss_/, "", $1); print $1 }' "$samples" | sort -un | tr '\n' ' ')
	echo "== across two guests, loss: 64 KiB SENDs, netem dropping wire packets on both eth0, MTU 1500"
	printf "%-14s" ""
	for p in $shares; do printf " %16s" "$([ "$p" = 0 ] && echo "no loss" || echo "$p %")"; done
	echo
	for r in $rows; do
		printf "%-14s" "$r"
		for p in $shares; do
			printf " %16s" "$(awk -v v="$(get "bw_loss_$p" "pair.loss.$r")" -v s="$(get "share_loss_$p" "pair.loss.$r")" 'BEGIN {
				if (v + 0 <= 0) print "-"
				else if (s + 0 <= 0) printf "%.4g", v
				else printf (s < 10 ? "%.3g (%.1f%%)" : "%.3g (%.0f%%)"), v, s }')"
		done
		echo
	done
	cat <<LEGEND
(MiB/s, the median of $rounds interleaved rounds; in brackets the median of
 the cell's shares of its round's lossless figure. RDMA rows: ib_send_bw
 -s 65536, 256 messages; softroce-sr, siw, softiwarp through the RDMA CM
 (softroce: selective repeat by ECE), rxe to rxe without it (go-back-N);
 tcp: iperf3, one stream of 64 KiB writes, 3 s. Both guests' eth0 at
 gso_max_segs 1 and roce_gso=0, lossless cells too: netem drops single
 wire packets.)

LEGEND
}
pair_loss_table

# The loopback: devices named by their kind alone.
sizes=$(awk '$1 ~ /^bw_[0-9]+$/ && $2 !~ /[.]/ { sub(/^bw_/, "", $1); print $1 }' "$samples" | sort -nu)
loop_tables() {
	echo "== loopback: every device alone on veth0"
	printf "%-32s %9s %9s %9s %9s %9s %9s\n" metric rxe siw softroce softiwarp roce/rxe iwarp/siw
	row() {
		local label=$1 k=$2
		printf "%-32s %9s %9s %9s %9s %9s %9s\n" "$label" "$(get "$k" rxe)" "$(get "$k" siw)" \
			"$(get "$k" softroce)" "$(get "$k" softiwarp)" \
			"$(ratio "$(get "$k" softroce)" "$(get "$k" rxe)")" \
			"$(ratio "$(get "$k" softiwarp)" "$(get "$k" siw)")"
	}
	row "ib_write_lat 2 B (us)" write_lat
	row "ib_send_lat 2 B (us)" send_lat
	row "ib_read_lat 2 B (us)" read_lat
	row "ib_write_bw 64 KiB (MiB/s)" bw_65536
	row "ib_write_bw 64 KiB -q 8 (MiB/s)" write_bw_q8
	row "ib_write_bw 8 B (Mpps)" write_pps
	echo "(every device alone on veth0, loopback; latency: typical us, lower is better;"
	echo " bandwidth and rate: higher is better; median of $rounds interleaved rounds)"

	printf "\n%-32s %9s %9s %9s %9s\n" "of memcpy (64 KiB)" rxe siw softroce softiwarp
	printf "%-32s %9s %9s %9s %9s\n" "ib_write_bw 64 KiB" "$(pct "$(get bw_65536 rxe)" "$memcpy")" \
		"$(pct "$(get bw_65536 siw)" "$memcpy")" "$(pct "$(get bw_65536 softroce)" "$memcpy")" \
		"$(pct "$(get bw_65536 softiwarp)" "$memcpy")"
	printf "%-32s %9s %9s %9s %9s\n" "ib_write_bw 64 KiB -q 8" "$(pct "$(get write_bw_q8 rxe)" "$memcpy")" \
		"$(pct "$(get write_bw_q8 siw)" "$memcpy")" "$(pct "$(get write_bw_q8 softroce)" "$memcpy")" \
		"$(pct "$(get write_bw_q8 softiwarp)" "$memcpy")"
	printf "%-32s %9s %9s %9s %9s\n" "64 KiB across two namespaces" - - \
		"$(get ns_bw softroce) ($(pct "$(get ns_bw softroce)" "$memcpy"))" \
		"$(get ns_bw softiwarp) ($(pct "$(get ns_bw softiwarp)" "$memcpy"))"
	echo "(this boot: memcpy of 64 KiB blocks $memcpy MiB/s, cache-line handoff between" \
		"the two vCPUs $(get handoff_ns machine) ns)"

	printf "\n%-32s %9s %9s %9s %9s\n" "ib_write_bw sweep (MiB/s)" rxe siw softroce softiwarp
	for s in $sizes; do
		printf "%-32s %9s %9s %9s %9s\n" "$s B" "$(get "bw_$s" rxe)" "$(get "bw_$s" siw)" \
			"$(get "bw_$s" softroce)" "$(get "bw_$s" softiwarp)"
	done

	printf "\n%-24s %14s %14s\n" "softroce" "poll_us=$poll_on" "poll_us=0"
	printf "%-24s %14s %14s\n" "write_lat (us)" "$(get "poll_${poll_on}_write_lat" softroce)" \
		"$(get poll_0_write_lat softroce)"
	printf "%-24s %14s %14s\n" "write_pps (Mpps)" "$(get "poll_${poll_on}_write_pps" softroce)" \
		"$(get poll_0_write_pps softroce)"
}
if has rxe || has siw || has softroce || has softiwarp; then
	loop_tables
else
	echo "(no loopback rows: BENCH_PARTS)"
fi

# The chart's wire panel: 64 KiB bandwidth and latency of every row of
# every wire, grouped by wire, one "bar PANEL GROUP KIND VALUE" line each,
# drawn by awk (TCP's latency: its ping-pong).
wire_chart() {
	local wm w k
	for wm in "${wires[@]}"; do
		w=${wm%.*}
		for k in tcp siw softiwarp "$(wire_anchor "$w")" softroce; do
			echo "bar 1 $w/${wm#*.} $k $(get bw_65536 "$wm.$k")"
			if [ "$k" = tcp ]; then
				echo "bar 2 $w/${wm#*.} $k $(get send_lat "$wm.$k")"
			else
				echo "bar 2 $w/${wm#*.} $k $(get write_lat "$wm.$k")"
			fi
		done
	done | awk -v rounds="$rounds" '
	$1 == "bar" { if (!(($2, $3) in gi)) { gi[$2, $3] = ++ng[$2]; gl[$2, ng[$2]] = $3 }
		k = gi[$2, $3]; nb[$2, k]++; kind[$2, k, nb[$2, k]] = $4; val[$2, k, nb[$2, k]] = $5
		if ($5 + 0 > mx[$2]) mx[$2] = $5 + 0 }
	END {
		col["tcp"] = "#444444"; col["siw"] = "#bbbb55"; col["softiwarp"] = "#d62728"
		col["rxe"] = "#888888"; col["rxe-sr"] = "#888888"; col["softroce"] = "#1f77b4"
		title[1] = "across the wire: 64 KiB ib_write_bw, TCP one iperf3 stream (MiB/s)"
		title[2] = "across the wire: ib_write_lat 2 B, TCP ping-pong (us)"
		for (p = 1; p <= 2; p++) {
			x0 = p == 1 ? 70 : 540; w = 380
			printf "<text x=\"%d\" y=\"30\" font-size=\"14\">%s</text>\n", x0 - 50, title[p]
			printf "<line x1=\"%d\" y1=\"330\" x2=\"%d\" y2=\"330\" stroke=\"black\"/>\n", x0, x0 + w
			printf "<line x1=\"%d\" y1=\"50\" x2=\"%d\" y2=\"330\" stroke=\"black\"/>\n", x0, x0
			if (mx[p] <= 0) continue
			top = mx[p] * 1.15
			for (t = 0; t <= 2; t++)
				printf "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\" font-size=\"10\">%.3g</text>\n", x0 - 4, 334 - t * 140, top * t / 2
			gw = w / ng[p]
			for (g = 1; g <= ng[p]; g++) {
				gx = x0 + (g - 1) * gw
				printf "<text x=\"%.0f\" y=\"346\" text-anchor=\"middle\">%s</text>\n", gx + gw / 2, gl[p, g]
				bw = gw / (nb[p, g] + 1)
				for (b = 1; b <= nb[p, g]; b++) {
					v = val[p, g, b] + 0
					if (v <= 0) continue
					h = v / top * 280; x = gx + bw / 2 + (b - 1) * bw
					printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", x, 330 - h, bw - 2, h, col[kind[p, g, b]]
					printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" text-anchor=\"middle\">%.3g</text>\n", x + bw / 2 - 1, 327 - h, v
				}
			}
		}
		n = split("tcp siw softiwarp rxe softroce", ks, " ")
		for (i = 1; i <= n; i++)
			printf "<rect x=\"%d\" y=\"370\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"380\">%s</text>\n", 70 + (i - 1) * 95, col[ks[i]], 86 + (i - 1) * 95, ks[i] == "tcp" ? "TCP" : (ks[i] == "rxe" ? "rxe (veth: rxe>sr)" : ks[i])
		printf "<text x=\"540\" y=\"380\">medians of %s rounds; groups: wire/MTU</text>\n", rounds
	}'
}

# The chart's loopback panel: the sweep's medians and the ratio rows, one
# "KIND ..." line each, drawn by awk.
loop_chart() {
	{
		for s in $sizes; do
			for d in rxe siw softroce softiwarp; do
				echo "sweep $d $s $(get "bw_$s" "$d")"
			done
		done
		for m in write_lat:lat send_lat:lat read_lat:lat bw_65536:bw write_bw_q8:bw write_pps:bw; do
			k=${m%%:*}
			echo "ratio $k ${m##*:} $(get "$k" softroce) $(get "$k" rxe) $(get "$k" softiwarp) $(get "$k" siw)"
		done
	} | awk -v rounds="$rounds" '
		function x_of(s) { return 70 + (log(s) / log(2) - 1) / 19 * 380 }
		function y_of(v) { return 330 - (log(v) / log(10) - lo) / (hi - lo) * 280 }
		$1 == "sweep" && !($3 in sz) { sz[$3] = 1; ss[++nss] = $3 }
		$1 == "sweep" && $4 + 0 > 0 { v[$2, $3] = $4
			l = log($4) / log(10); if (!seen++ || l < lo) lo = l; if (l > hi) hi = l }
		$1 == "ratio" { nr++; rk[nr] = $2
			rr[nr, 1] = $3 == "lat" ? q($5, $4) : q($4, $5)
			rr[nr, 2] = $3 == "lat" ? q($7, $6) : q($6, $7) }
		function label(s) { return s >= 1048576 ? s / 1048576 "M" : (s >= 1024 ? s / 1024 "K" : s) }
		function q(a, b) { return a + 0 > 0 && b + 0 > 0 ? a / b : 0 }
		END {
			lo = lo < int(lo) ? int(lo) - 1 : int(lo); hi = int(hi) + 1
			col["rxe"] = "#888888"; col["siw"] = "#bbbb55"; col["softroce"] = "#1f77b4"; col["softiwarp"] = "#d62728"
			print "<text x=\"70\" y=\"30\" font-size=\"14\">ib_write_bw by message size (MiB/s, log scales)</text>"
			print "<line x1=\"70\" y1=\"330\" x2=\"450\" y2=\"330\" stroke=\"black\"/>"
			print "<line x1=\"70\" y1=\"50\" x2=\"70\" y2=\"330\" stroke=\"black\"/>"
			for (e = lo; e <= hi; e++)
				printf "<text x=\"64\" y=\"%.0f\" text-anchor=\"end\">%g</text>\n", y_of(10 ^ e) + 4, 10 ^ e
			for (s in sz)
				printf "<text x=\"%.0f\" y=\"346\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n", x_of(s), label(s)
			n = split("rxe siw softroce softiwarp", ds, " ")
			for (i = 1; i <= n; i++) {
				d = ds[i]; pts = ""
				for (j = 1; j <= nss; j++)
					if ((d, ss[j]) in v) pts = pts sprintf("%.1f,%.1f ", x_of(ss[j]), y_of(v[d, ss[j]]))
				printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", col[d], pts
				printf "<rect x=\"%d\" y=\"370\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"380\">%s</text>\n", 70 + (i - 1) * 95, col[d], 86 + (i - 1) * 95, d
			}
			# Ratios on a log2 scale around 1x (the dashed line), 40 px a doubling.
			print "<text x=\"500\" y=\"30\" font-size=\"14\">softrdma against its anchor (above 1x is better)</text>"
			print "<line x1=\"750\" y1=\"45\" x2=\"750\" y2=\"340\" stroke=\"black\" stroke-dasharray=\"4\"/>"
			print "<text x=\"750\" y=\"356\" text-anchor=\"middle\">1x</text>"
			for (i = 1; i <= nr; i++) {
				y = 50 + (i - 1) * 48
				printf "<text x=\"600\" y=\"%d\" text-anchor=\"end\">%s</text>\n", y + 20, rk[i]
				for (j = 1; j <= 2; j++) {
					c = j == 1 ? col["softroce"] : col["softiwarp"]
					if (rr[i, j] <= 0)
						continue
					w = log(rr[i, j]) / log(2) * 40
					if (w > 170) w = 170
					if (w < -140) w = -140
					x = w < 0 ? 750 + w : 750
					printf "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>", x, y + (j - 1) * 18, w < 0 ? -w : w, c
					printf "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"%s\">%.2fx</text>\n", w < 0 ? 746 + w : 754 + w, y + (j - 1) * 18 + 12, w < 0 ? "end" : "start", rr[i, j]
				}
			}
			printf "<text x=\"500\" y=\"380\">softroce/rxe and softiwarp/siw; medians of %s rounds</text>\n", rounds
		}'
}

wire_h=0
[ ${#wires[@]} -eq 0 ] || wire_h=400
loop_h=0
[ -z "$sizes" ] || loop_h=400
{
	printf '<svg xmlns="http://www.w3.org/2000/svg" width="940" height="%d" font-family="sans-serif" font-size="12">\n' $((wire_h + loop_h))
	printf '<rect width="940" height="%d" fill="white"/>\n' $((wire_h + loop_h))
	[ $wire_h = 0 ] || wire_chart
	if [ $loop_h != 0 ]; then
		echo "<g transform=\"translate(0,$wire_h)\">"
		loop_chart
		echo "</g>"
	fi
	echo "</svg>"
} >"$svg"
echo "(chart: $svg)"
