#!/bin/bash
# tools/lab bench, the guest's half (tools/lab.d/bench.sh boots the stock
# kernel and runs it):  bench-guest.sh OUT ROUNDS ITERS POLL_US
# Every device is placed alike: alone on veth0 (10.0.0.1), perftest's
# server and client both on it (loopback), one device after the other, in
# BENCH_ROUNDS interleaved rounds (rxe, siw, softroce, softiwarp, then
# again); each number is the median of its rounds. Then softrdma across the
# two namespaces (veth0 <-> veth1 in netns b), the guest's own memcpy and
# cache-line handoff, and the SQ poller (poll_us) against a kick per post.
# Writes OUT/bench.tsv (every sample: KEY DEVICE VALUE), OUT/bench.txt (the
# tables, also printed) and OUT/bench.svg (the size sweep and the ratios).
set -u
out=$1 rounds=$2 iters=$3 poll_on=$4
here=$(cd "$(dirname "$0")" && pwd)
samples=$out/bench.tsv
: >"$samples"

DEVS="rxe siw softroce softiwarp"
declare -A NAME=([rxe]=rxe0 [siw]=siw0 [softroce]=sr0 [softiwarp]=si0)
SWEEP="2 64 1024 4096 16384 65536 262144 1048576"

# dev_up KIND / dev_down KIND: the device alone on veth0. rxe holds UDP
# port 4791 while its module is loaded, so rxe and siw come and go with
# their modules; softrdma stays loaded (poll_us is its parameter).
dev_up() {
	case $1 in
	rxe) modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0 ;;
	siw) modprobe siw && rdma link add siw0 type siw netdev veth0 ;;
	softroce) rdma link add sr0 type softroce netdev veth0 ;;
	softiwarp) rdma link add si0 type softiwarp netdev veth0 ;;
	esac
}
dev_down() {
	rdma link del "${NAME[$1]}"
	case $1 in
	rxe) modprobe -r rdma_rxe ;;
	siw) modprobe -r siw ;;
	esac
}
# iWARP devices connect through rdma_cm (-R), as users run them.
cm_flag() { case $1 in siw | softiwarp) echo -R ;; esac; }

# in_ns NS CMD...: CMD in netns NS ("-": this one).
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

# run SNS SDEV CNS CDEV IP TEST ARGS...: one perftest run, server SDEV in
# netns SNS, client CDEV in CNS; prints the last row of its table. -F: the
# CPU frequency check of perftest fails now and then under TCG (r^2 below
# 0.9), and the program then gives up on its report.
run() {
	local sns=$1 sdev=$2 cns=$3 cdev=$4 ip=$5 t=$6
	shift 6
	in_ns "$sns" timeout 120 "$t" -d "$sdev" -F "$@" >/dev/null 2>&1 &
	local srv=$! n=300
	# Connect once the server listens, 30 s at most (perftest port 18515;
	# over rdma_cm the listener is a kernel socket of the driver).
	while [ $n -gt 0 ] && [ -z "$(in_ns "$sns" ss -Hltn "sport = :18515")" ]; do
		sleep 0.1
		n=$((n - 1))
	done
	sleep 0.2
	local row rc=0
	row=$(in_ns "$cns" timeout 120 "$t" -d "$cdev" -F "$@" "$ip" 2>/tmp/bench-cli.err) || rc=$?
	row=$(echo "$row" | grep -E "^ +[0-9]+ +[0-9]+ " | tail -n 1)
	wait $srv 2>/dev/null || true
	# A missing row says why (on stderr: the tables stay clean).
	if [ -n "$row" ]; then
		echo "$row"
	else
		echo "$t on $cdev: no result (exit $rc): $(tail -n 2 /tmp/bench-cli.err | tr "\n" " ")" >&2
	fi
}

# sample KEY KIND COLUMN TEST ARGS...: one loopback run of KIND's device;
# column COLUMN of its row goes to the samples.
sample() {
	local key=$1 kind=$2 col=$3 t=$4 dev
	shift 4
	dev=${NAME[$kind]}
	# shellcheck disable=SC2046 # cm_flag: no word or one
	run - "$dev" - "$dev" 10.0.0.1 "$t" $(cm_flag "$kind") "$@" |
		awk -v k="$key" -v d="$kind" -v c="$col" '{ print k, d, $c }' >>"$samples"
}

# bw_iters SIZE: about 32 MiB per run, at least 16 and at most ITERS.
bw_iters() {
	local n=$((32 * 1024 * 1024 / $1))
	[ $n -gt "$iters" ] && n=$iters
	[ "$n" -lt 16 ] && n=16
	echo "$n"
}

q8=$((iters / 8))
[ $q8 -lt 16 ] && q8=16
for r in $(seq "$rounds"); do
	for kind in $DEVS; do
		echo "round $r/$rounds: $kind" >&2
		dev_up "$kind" || { echo "cannot add the $kind device" >&2; continue; }
		sample write_lat "$kind" 5 ib_write_lat -s 2 -n "$iters"
		sample send_lat "$kind" 5 ib_send_lat -s 2 -n "$iters"
		sample read_lat "$kind" 5 ib_read_lat -s 2 -n "$iters"
		sample write_pps "$kind" 5 ib_write_bw -s 8 -n "$iters"
		sample write_bw_q8 "$kind" 4 ib_write_bw -s 65536 -q 8 -n "$q8"
		for s in $SWEEP; do
			sample "bw_$s" "$kind" 4 ib_write_bw -s "$s" -n "$(bw_iters "$s")"
		done
		dev_down "$kind"
	done
	# softrdma across the namespaces: server in b on veth1, client here.
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	run b sr1 - sr0 10.0.0.2 ib_write_bw -s 65536 -n "$(bw_iters 65536)" |
		awk '{ print "ns_bw softroce", $4 }' >>"$samples"
	rdma link del sr0
	ip netns exec b rdma link del sr1
	rdma link add si0 type softiwarp netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	run b si1 - si0 10.0.0.2 ib_write_bw -R -s 65536 -n "$(bw_iters 65536)" |
		awk '{ print "ns_bw softiwarp", $4 }' >>"$samples"
	rdma link del si0
	ip netns exec b rdma link del si1
	"$here"/../../build/user/membench | awk '{ print $1, "machine", $2 }' >>"$samples"
done

# The SQ poller (module parameter poll_us) against a kick on every post.
p=/sys/module/softrdma/parameters/poll_us
rdma link add sr0 type softroce netdev veth0
for r in $(seq "$rounds"); do
	for poll in "$poll_on" 0; do
		echo "$poll" >$p
		sample "poll_${poll}_write_lat" softroce 5 ib_write_lat -s 2 -n "$iters"
		sample "poll_${poll}_write_pps" softroce 5 ib_write_bw -s 8 -n "$iters"
	done
done
echo 0 >$p
rdma link del sr0

"$here"/bench-report.sh "$samples" "$rounds" "$poll_on" "$out/bench.svg" | tee "$out/bench.txt"
