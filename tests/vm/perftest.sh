#!/bin/bash
# perftest.sh SERVER_DEV SERVER_NS CLIENT_DEV CLIENT_NS SERVER_IP TEST [ARGS...]
# Runs one perftest program as server (in SERVER_NS, "-" for none) and
# client; fails if either side fails or times out, if either log reports
# an error, or if the client's table lacks a row for a size it should
# have measured (-a: every power of two from 2 to 2^23; -s N: N; atomics:
# 8; otherwise the program's default size).
# GIDX: the GID index both sides use (default 1, ::ffff:10.0.0.x).
# TEST_TMP, TEST_PORT: as the runner sets them (tests/vm/lib/common.sh).
# -F: perftest's CPU frequency check fails now and then under QEMU TCG,
# and a bw test then gives up on its report.
set -u
sdev=$1 sns=$2 cdev=$3 cns=$4 sip=$5 t=$6
shift 6
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

sizes=
prev=
for a in "$@"; do
	case "$a" in
	-a | --all) sizes=$(for i in $(seq 1 23); do echo $((1 << i)); done) ;;
	esac
	case "$prev" in
	-s | --size) sizes=$a ;;
	esac
	prev=$a
done
case "$t" in
ib_atomic_*) sizes=8 ;;
*_lat) : "${sizes:=2}" ;;
*) : "${sizes:=65536}" ;;
esac

# Logs in the test's directory; ports of the test's own range (see
# lib/common.sh), a different one each run: the last one may linger.
T=${TEST_TMP:-/tmp}
if [ -n "${TEST_PORT:-}" ]; then
	n=$(cat "$T/.perftest-runs" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$T/.perftest-runs"
	port=$((TEST_PORT + 10 + n % 10))
else
	port=$((18515 + RANDOM % 1000))
fi
in_ns "$sns" timeout 300 "$t" -d "$sdev" -x "${GIDX:-1}" -p $port -F "$@" >"$T"/perf-srv.log 2>&1 &
srv=$!
# Connect once the server listens (a fresh boot may take seconds).
n=300
while [ $n -gt 0 ] && kill -0 $srv 2>/dev/null &&
	[ -z "$(in_ns "$sns" ss -Hltn "sport = :$port")" ]; do
	sleep 0.1
	n=$((n - 1))
done
# rdma_cm (-R) listens on every device in turn (iWARP: a TCP socket each):
# the first one up is not necessarily the one the client reaches.
case " $* " in *" -R "*) sleep 1 ;; esac
# What listened when the client started (printed if the run fails).
in_ns "$sns" ss -Hltne "sport = :$port" >"$T"/perf-listen.log 2>&1
in_ns "$cns" timeout 300 "$t" -d "$cdev" -x "${GIDX:-1}" -p $port -F "$@" "$sip" >"$T"/perf-cli.log 2>&1 &
cli=$!
# A side about to time out: where it waits, and the TCP sockets.
"$(dirname "$0")/hangdump.sh" 290 "$t" "$sns" "$cns" >"$T"/perf-hang.log 2>&1 &
dog=$!
wait $cli
crc=$?
wait $srv
src=$?
pkill -P $dog sleep 2>/dev/null; kill $dog 2>/dev/null
wait $dog 2>/dev/null || true
bad=
if [ $crc != 0 ] || [ $src != 0 ]; then
	bad="client exit $crc, server exit $src"
elif grep -q -i -E 'completion with error|failed|couldn.t|unable' \
	"$T"/perf-cli.log "$T"/perf-srv.log; then
	bad="an error in the logs"
else
	for s in $sizes; do
		if ! grep -q -E "^ +$s +[0-9]+ " "$T"/perf-cli.log; then
			bad="no row for size $s"
			break
		fi
	done
fi
if [ -n "$bad" ]; then
	# The runner shows a failed test's last lines: the two sides' own
	# logs come last, after where they waited and what was counted.
	echo "$t $*: $bad"
	[ -s "$T"/perf-hang.log ] && cat "$T"/perf-hang.log
	echo "--- listening on port $port when the client started:"
	cat "$T"/perf-listen.log
	# What each device counted (Terminates, malformed input, ...).
	echo "--- counters:"
	in_ns "$sns" rdma statistic show link "$sdev/1" 2>&1
	in_ns "$cns" rdma statistic show link "$cdev/1" 2>&1
	dmesg | grep -i -E 'softrdma|siw|infiniband|rdma|iw_cm' | tail -n 12
	echo "--- server:"
	tail -n 15 "$T"/perf-srv.log
	echo "--- client:"
	tail -n 15 "$T"/perf-cli.log
	echo "$t $*: $bad"
	exit 1
fi
grep -E '^ +[0-9]+ ' "$T"/perf-cli.log | tail -n 3
