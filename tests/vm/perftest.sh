#!/bin/bash
# perftest.sh SERVER_DEV SERVER_NS CLIENT_DEV CLIENT_NS SERVER_IP TEST [ARGS...]
# Runs one perftest program as server (in SERVER_NS, "-" for none) and
# client; fails if either side fails or times out. GIDX: the GID index
# both sides use (default 1, ::ffff:10.0.0.x).
set -u
sdev=$1 sns=$2 cdev=$3 cns=$4 sip=$5 t=$6
shift 6
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}
port=$((18515 + RANDOM % 1000))
in_ns "$sns" timeout 300 "$t" -d "$sdev" -x "${GIDX:-1}" -p $port "$@" >/tmp/perf-srv.log 2>&1 &
srv=$!
sleep 1
in_ns "$cns" timeout 300 "$t" -d "$cdev" -x "${GIDX:-1}" -p $port "$@" "$sip" >/tmp/perf-cli.log 2>&1
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
