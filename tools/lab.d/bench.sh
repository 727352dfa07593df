#!/usr/bin/env bash
# tools/lab bench: softrdma vs rxe vs siw vs the kernel's TCP, side by side
# (tools/lab.d/bench-guest.sh says how they are placed and what is
# measured). The wire leads: every device pair across the fixture's veth
# pair in one boot of the stock kernel, with the loopback rows after it
# (each device alone on veth0); then the same wire rows across two guests
# (tools/lab pair). Tables in build/bench/bench.txt, a chart in bench.svg.
# BENCH_ROUNDS interleaved rounds (3), BENCH_ITERS iterations (1000),
# BENCH_POLL_US: the poll_us compared with 0 (200); BENCH_PARTS: what runs,
# of "veth pair loop" (all); BENCH_ROWS: the wire's rows, of "tcp siw
# softiwarp rxe softroce" (all).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

ROUNDS=${BENCH_ROUNDS:-3}
ITERS=${BENCH_ITERS:-1000}
POLL=${BENCH_POLL_US:-200}
one=()
pair=0
for p in ${BENCH_PARTS:-veth pair loop}; do
	case $p in
	veth | loop) one+=("$p") ;;
	pair) pair=1 ;;
	*) die "BENCH_PARTS takes veth, pair and loop" ;;
	esac
done
lab_ready

out=$LAB_BUILD/bench
rm -rf "$out"
mkdir -p "$out"
: >"$out/bench.tsv"
guest=(env "BENCH_ROWS=${BENCH_ROWS:-tcp siw softiwarp rxe softroce}"
	bash "$LAB_REPO/tools/lab.d/bench-guest.sh")
rc=0
t0=$SECONDS
if [ ${#one[@]} -gt 0 ]; then
	say "one guest: ${one[*]}"
	"$LAB_REPO/tools/lab" run --share "$out" -- \
		"${guest[@]}" "$out" "$ROUNDS" "$ITERS" "$POLL" "${one[@]}" || rc=$?
	say "one guest: done ($((SECONDS - t0)) s)"
fi
if [ $pair = 1 ]; then
	t1=$SECONDS
	say "two guests: the wire between them"
	"$LAB_REPO/tools/lab" pair --share "$out" -- \
		"${guest[@]}" "$out" "$ROUNDS" "$ITERS" "$POLL" pair || rc=$?
	say "two guests: done ($((SECONDS - t1)) s)"
fi
"$LAB_REPO/tools/lab.d/bench-report.sh" "$out/bench.tsv" "$ROUNDS" "$POLL" "$out/bench.svg" |
	tee "$out/bench.txt"
say "tables: $out/bench.txt, chart: $out/bench.svg, samples: $out/bench.tsv ($((SECONDS - t0)) s)"
exit "$rc"
