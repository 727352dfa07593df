#!/bin/bash
# bench-report.sh SAMPLES ROUNDS POLL_US SVG: the tables of tools/lab bench
# from its samples ("KEY DEVICE VALUE" lines, bench-guest.sh writes them),
# on stdout, and its chart in SVG: the write bandwidth of the four devices
# over message sizes, and each softrdma row as a ratio to its anchor (rxe
# for softroce, siw for softiwarp; above 1 is better, latencies inverted).
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
sizes=$(awk '$1 ~ /^bw_[0-9]+$/ { sub(/^bw_/, "", $1); print $1 }' "$samples" | sort -nu)
for s in $sizes; do
	printf "%-32s %9s %9s %9s %9s\n" "$s B" "$(get "bw_$s" rxe)" "$(get "bw_$s" siw)" \
		"$(get "bw_$s" softroce)" "$(get "bw_$s" softiwarp)"
done

printf "\n%-24s %14s %14s\n" "softroce" "poll_us=$poll_on" "poll_us=0"
printf "%-24s %14s %14s\n" "write_lat (us)" "$(get "poll_${poll_on}_write_lat" softroce)" \
	"$(get poll_0_write_lat softroce)"
printf "%-24s %14s %14s\n" "write_pps (Mpps)" "$(get "poll_${poll_on}_write_pps" softroce)" \
	"$(get poll_0_write_pps softroce)"

# The chart: the sweep's medians and the ratio rows, one "KIND ..." line
# each, drawn by awk.
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
		print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"940\" height=\"400\" font-family=\"sans-serif\" font-size=\"12\">"
		print "<rect width=\"940\" height=\"400\" fill=\"white\"/>"
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
		print "</svg>"
	}' >"$svg"
echo "(chart: $svg)"
