#!/usr/bin/env bash
# tools/lab bench: ours vs rxe vs siw, side by side, measured in one boot of
# the stock kernel (loopback on one device, median of interleaved rounds).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

ROUNDS=${BENCH_ROUNDS:-3}
exec "$LAB_REPO/tools/lab" run -- bash -c '
rounds='"$ROUNDS"'
modprobe rdma_rxe
modprobe siw
rdma link add rxe0 type rxe netdev veth0
rdma link add siw0 type siw netdev veth0
rdma link add sr0 type softroce netdev veth0
# typical latency (usec) of one perftest run on DEV
lat() {
	local dev=$1 test=$2; shift 2
	$test -d "$dev" "$@" -s 2 -n 200 >/tmp/srv.out 2>&1 &
	local srv=$!
	sleep 1
	$test -d "$dev" "$@" -s 2 -n 200 127.0.0.1 2>/dev/null |
		awk "/^ *2 / {print \$5}"
	wait $srv 2>/dev/null
}
median() { sort -n | awk "{a[NR]=\$1} END {if (NR) print a[int((NR+1)/2)]; else print \"n/a\"}"; }
printf "%-22s %12s %12s %12s\n" metric rxe siw softrdma
for t in ib_write_lat ib_send_lat ib_read_lat; do
	r=$(for i in $(seq $rounds); do lat rxe0 $t; done | median)
	s=$(for i in $(seq $rounds); do lat siw0 $t -R; done | median)
	# softrdma has no queue pairs yet (issue [2] brings the data path).
	printf "%-22s %12s %12s %12s\n" "$t 2 B (us)" "$r" "$s" n/a
done
'
