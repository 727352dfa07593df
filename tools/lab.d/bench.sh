#!/usr/bin/env bash
# tools/lab bench: softrdma vs rxe vs siw vs the kernel's TCP, side by side
# (tools/lab.d/bench-guest.sh says how they are placed and what is
# measured). The wire leads: every device pair across the fixture's veth
# pair in one boot of the stock kernel, with the loopback rows after it
# (each device alone on veth0); then the same wire rows across two guests
# (tools/lab pair). Tables in build/bench/bench.txt, a chart in bench.svg.
# BENCH_ROUNDS interleaved rounds (3), BENCH_ITERS iterations (1000),
# BENCH_POLL_US: the poll_us compared with 0 (200); BENCH_PARTS: what runs,
# of "exact veth pair loop" (all); BENCH_ROWS: the wire's rows, of "tcp siw
# softiwarp rxe softroce" (all; none: no rows). BENCH_PAIR_LOSS (loss
# shares in percent, e.g. "1 5"; none by default) adds the two guests'
# loss rows: 64 KiB SENDs under netem loss of wire packets on both eth0,
# rows BENCH_PAIR_LOSS_ROWS (tcp softroce-sr softiwarp siw rxe), each as
# MiB/s and a share of its lossless figure of the same run
# (BENCH_PARTS=pair BENCH_ROWS=none: those rows alone).
# The exact part comes first: the veth pair's rows on the exact clock
# (one vCPU, one guest nanosecond per instruction, tools/meter counting
# every instruction; exact-guest.sh says what runs), tables in
# build/bench-exact/exact.txt; `tools/lab profile PHASE` prints where a
# phase's instructions went. --exact: that part alone. There BENCH_LOSS
# (loss shares in percent, e.g. "1 5"; none by default) adds the loss
# table: netem on both ends of the veth pair, the rows of BENCH_LOSS_ROWS
# (tcp softroce softroce-sr softiwarp siw rxe-sr) at MTU 1500 (netem
# drops skbs as the stacks hand them over; BENCH_LOSS_PKT=1: wire packets);
# BENCH_ECN=1 adds four softroce QPs through one 400 Mbit/s bottleneck
# that marks ECN (tbf with RED under it on veth0), with roce_ecn 1 and 0
# (BENCH_ECN_MSGS 64 KiB SENDs a QP, 2048); BENCH_REORDER (shares in
# percent, e.g. "1") adds softroce-sr and softroce under netem's 1 ms
# delay and reordering on veth0; BENCH_TAIL (shares in percent, e.g. "1")
# adds a 4 KiB ping-pong's median and p99 lossless and at each share of
# wire packets lost on both ends, rows BENCH_TAIL_ROWS (softroce-sr
# softroce softiwarp siw tcp), BENCH_TAIL_ITERS round trips (10000);
# BENCH_ROWS=none leaves the lossless table out.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

parts=${BENCH_PARTS:-exact veth pair loop}
[ "${1:-}" = --exact ] && parts=exact
ROUNDS=${BENCH_ROUNDS:-3}
ITERS=${BENCH_ITERS:-1000}
POLL=${BENCH_POLL_US:-200}
one=()
pair=0
exact=0
for p in $parts; do
	case $p in
	veth | loop) one+=("$p") ;;
	pair) pair=1 ;;
	exact) exact=1 ;;
	*) die "BENCH_PARTS takes exact, veth, pair and loop" ;;
	esac
done
lab_ready

rc=0
if [ $exact = 1 ]; then
	ex=$LAB_BUILD/bench-exact
	rm -rf "$ex"
	mkdir -p "$ex/meter"
	t0=$SECONDS
	say "the exact clock: the veth pair, one vCPU"
	LAB_METER=$ex/meter "$LAB_REPO/tools/lab" run --share "$ex" -- \
		env "BENCH_ROWS=${BENCH_ROWS:-tcp siw softiwarp rxe-sr softroce softroce-odp}" "BENCH_MTUS=${BENCH_MTUS:-1500 9000}" \
		"BENCH_LOSS=${BENCH_LOSS:-}" "BENCH_LOSS_ROWS=${BENCH_LOSS_ROWS:-tcp softroce softroce-sr softiwarp siw rxe-sr}" \
		"BENCH_LOSS_PKT=${BENCH_LOSS_PKT:-0}" "BENCH_ECN=${BENCH_ECN:-0}" \
		"BENCH_ECN_MSGS=${BENCH_ECN_MSGS:-2048}" "BENCH_REORDER=${BENCH_REORDER:-}" \
		"BENCH_TAIL=${BENCH_TAIL:-}" "BENCH_TAIL_ROWS=${BENCH_TAIL_ROWS:-}" "BENCH_TAIL_ITERS=${BENCH_TAIL_ITERS:-}" \
		"BENCH_EXACT_TESTS=${BENCH_EXACT_TESTS:-}" "BENCH_EXACT_SCALE=${BENCH_EXACT_SCALE:-}" \
		bash "$LAB_REPO/tools/lab.d/exact-guest.sh" "$ex" "$ex/meter" || rc=$?
	"$LAB_REPO/tools/lab.d/exact-report.sh" table "$ex" | tee "$ex/exact.txt"
	say "the exact clock: done ($((SECONDS - t0)) s); tables: $ex/exact.txt; tools/lab profile PHASE"
	[ ${#one[@]} -gt 0 ] || [ $pair = 1 ] || exit "$rc"
fi

out=$LAB_BUILD/bench
rm -rf "$out"
mkdir -p "$out"
: >"$out/bench.tsv"
guest=(env "BENCH_ROWS=${BENCH_ROWS:-tcp siw softiwarp rxe softroce}"
	"BENCH_PAIR_LOSS=${BENCH_PAIR_LOSS:-}" "BENCH_PAIR_LOSS_ROWS=${BENCH_PAIR_LOSS_ROWS:-}"
	bash "$LAB_REPO/tools/lab.d/bench-guest.sh")
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
