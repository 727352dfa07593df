#!/usr/bin/env bash
# tools/lab bench: softrdma vs rxe vs siw, side by side, in one boot of the
# stock kernel (tools/lab.d/bench-guest.sh says how they are placed and
# what is measured): softroce is compared with rxe, softiwarp (over
# rdma_cm, as siw) with siw, both with the same boot's memcpy.
# BENCH_ROUNDS interleaved rounds (3), BENCH_ITERS iterations (1000),
# BENCH_POLL_US: the poll_us compared with 0 (200).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
lab_ready

ROUNDS=${BENCH_ROUNDS:-3}
ITERS=${BENCH_ITERS:-1000}
out=$LAB_BUILD/bench
rm -rf "$out"
mkdir -p "$out"
"$LAB_REPO/tools/lab" run --share "$out" -- \
	bash "$LAB_REPO/tools/lab.d/bench-guest.sh" "$out" "$ROUNDS" "$ITERS" "${BENCH_POLL_US:-200}"
say "tables: $out/bench.txt, chart: $out/bench.svg, samples: $out/bench.tsv"
