#!/bin/bash
# perftest.sh SERVER_DEV SERVER_NS CLIENT_DEV CLIENT_NS SERVER_IP TEST [ARGS...]
# Runs one perftest program as server (in SERVER_NS, "-" for none) and
# client; fails if either side fails or times out. -F: perftest's CPU
# frequency check fails now and then under QEMU TCG, and a bw test then
# gives up on its report.
set -u
sdev=$1 sns=$2 cdev=$3 cns=$4 sip=$5 t=$6
shift 6
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}
port=$((18515 + RANDOM % 1000))
in_ns "$sns" timeout 300 "$t" -d "$sdev" -x 1 -p $port -F "$@" >/tmp/perf-srv.log 2>&1 &
srv=$!
# Connect once the server listens (up to 30 s: a busy host is slow).
n=300
while [ $n -gt 0 ] && kill -0 $srv 2>/dev/null &&
	[ -z "$(in_ns "$sns" ss -Hltn "sport = :$port")" ]; do
	sleep 0.1
	n=$((n - 1))
done
in_ns "$cns" timeout 300 "$t" -d "$cdev" -x 1 -p $port -F "$@" "$sip" >/tmp/perf-cli.log 2>&1
crc=$?
wait $srv
src=$?
if [ $crc != 0 ] || [ $src != 0 ]; then
	echo "$t $*: client exit $crc, server exit $src"
	tail -n 15 /tmp/perf-cli.log
	echo "--- server:"
	tail -n 15 /tmp/perf-srv.log
	exit 1
fi
grep -E '^ +[0-9]+ ' /tmp/perf-cli.log | tail -n 3
