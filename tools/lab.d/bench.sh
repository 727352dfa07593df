#!/usr/bin/env bash
# tools/lab bench: softrdma vs rxe vs siw, side by side, in one boot of the
# stock kernel: loopback on one device (client and server on the same
# device), median of BENCH_ROUNDS interleaved rounds. softroce is compared
# with rxe, softiwarp (over rdma_cm, as siw) with siw.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
lab_ready

ROUNDS=${BENCH_ROUNDS:-3}
ITERS=${BENCH_ITERS:-1000}
# shellcheck disable=SC2016 # the guest's script, expanded there
exec "$LAB_REPO/tools/lab" run -- bash -c '
rounds='"$ROUNDS"' iters='"$ITERS"'
modprobe rdma_rxe
modprobe siw
rdma link add rxe0 type rxe netdev veth0
rdma link add siw0 type siw netdev veth0
# rxe holds UDP 4791 here: softroce lives in netns b.
ip netns exec b rdma link add sr1 type softroce netdev veth1
# softiwarp gets a netdev of its own (veth3 in netns c), so that rdma_cm
# never has to choose between two devices on one address.
ip netns add c
ip link add veth2 type veth peer name veth3
ip link set veth3 netns c
ip link set veth2 up
ip netns exec c ip link set lo up
ip netns exec c ip link set veth3 up
ip netns exec c ip addr add 10.0.1.2/24 dev veth3
ip netns exec c rdma link add si2 type softiwarp netdev veth3

# run NS DEV IP TEST ARGS...: one loopback perftest run; prints its table row.
# -F: the CPU frequency check of perftest fails now and then under TCG (r^2
# below 0.9), and the program then gives up on its report.
run() {
	local ns=$1 dev=$2 ip=$3 t=$4
	shift 4
	local pre=()
	[ "$ns" = - ] || pre=(ip netns exec "$ns")
	"${pre[@]}" timeout 120 $t -d "$dev" -F "$@" >/dev/null 2>&1 &
	local srv=$! n=100
	# Connect once the server listens (perftest port 18515; over rdma_cm
	# the listener is a kernel socket of the driver).
	while [ $n -gt 0 ] && [ -z "$("${pre[@]}" ss -Hltn "sport = :18515")" ]; do
		sleep 0.1
		n=$((n - 1))
	done
	sleep 0.2
	local row rc=0
	row=$("${pre[@]}" timeout 120 $t -d "$dev" -F "$@" "$ip" 2>/tmp/bench-cli.err) || rc=$?
	row=$(echo "$row" | grep -E "^ +[0-9]+ +[0-9]+ " | tail -n 1)
	wait $srv 2>/dev/null || true
	# A missing row says why (on stderr: the tables stay clean).
	if [ -n "$row" ]; then
		echo "$row"
	else
		echo "$t on $dev: no result (exit $rc): $(tail -n 2 /tmp/bench-cli.err | tr "\n" " ")" >&2
	fi
}
median() { sort -g | awk "{a[NR]=\$1} END {if (NR) print a[int((NR+1)/2)]; else print \"-\"}"; }
# measure METRIC_COLUMN TEST ARGS...: medians for rxe, siw, softroce, softiwarp
declare -A res
measure() {
	local key=$1 col=$2 t=$3
	shift 3
	local r
	for r in $(seq $rounds); do
		run - rxe0 10.0.0.1 $t "$@" | awk -v c=$col "{print \$c}" >>/tmp/b.$key.rxe
		run - siw0 10.0.0.1 $t -R "$@" | awk -v c=$col "{print \$c}" >>/tmp/b.$key.siw
		run b sr1 10.0.0.2 $t "$@" | awk -v c=$col "{print \$c}" >>/tmp/b.$key.sr
		run c si2 10.0.1.2 $t -R "$@" | awk -v c=$col "{print \$c}" >>/tmp/b.$key.si
	done
	res[$key.rxe]=$(median </tmp/b.$key.rxe)
	res[$key.siw]=$(median </tmp/b.$key.siw)
	res[$key.sr]=$(median </tmp/b.$key.sr)
	res[$key.si]=$(median </tmp/b.$key.si)
}
ratio() { awk -v a="$1" -v b="$2" "BEGIN { if (a+0 > 0 && b+0 > 0) printf \"%.2fx\", a / b; else print \"-\" }"; }
measure write_lat 5 ib_write_lat -s 2 -n $iters
measure send_lat 5 ib_send_lat -s 2 -n $iters
measure read_lat 5 ib_read_lat -s 2 -n $iters
measure write_bw 4 ib_write_bw -s 65536 -n $((iters / 2))
measure write_pps 5 ib_write_bw -s 8 -n $iters
printf "\n%-27s %9s %9s %9s %9s %10s %10s\n" metric rxe siw softroce softiwarp "roce/rxe" "iwarp/siw"
row() {
	printf "%-27s %9s %9s %9s %9s %10s %10s\n" "$1" "${res[$2.rxe]}" "${res[$2.siw]}" "${res[$2.sr]}" \
		"${res[$2.si]}" "$(ratio ${res[$2.sr]} ${res[$2.rxe]})" "$(ratio ${res[$2.si]} ${res[$2.siw]})"
}
row "ib_write_lat 2 B (us)" write_lat
row "ib_send_lat 2 B (us)" send_lat
row "ib_read_lat 2 B (us)" read_lat
row "ib_write_bw 64 KiB (MiB/s)" write_bw
row "ib_write_bw 8 B (Mpps)" write_pps
echo "(latency: typical usec, lower is better; bandwidth: higher is better; median of $rounds rounds)"
# The SQ poller (module parameter poll_us) against a kick on every post.
p=/sys/module/softrdma/parameters/poll_us
on='"${BENCH_POLL_US:-200}"'

printf "\n%-24s %14s %14s\n" "softrdma" "poll_us=$on" "poll_us=0"
for m in "write_lat 5 ib_write_lat -s 2 -n $iters" "write_pps 5 ib_write_bw -s 8 -n $iters"; do
	set -- $m
	k=$1 c=$2
	shift 2
	echo $on >$p
	a=$(for r in $(seq $rounds); do run b sr1 10.0.0.2 "$@" | awk -v c=$c "{print \$c}"; done | median)
	echo 0 >$p
	z=$(for r in $(seq $rounds); do run b sr1 10.0.0.2 "$@" | awk -v c=$c "{print \$c}"; done | median)
	printf "%-24s %14s %14s\n" "$k" "$a" "$z"
done
echo 0 >$p
'
