#!/bin/bash
# hangdump.sh SECONDS PROG NS...: after SECONDS, if PROG still runs, print
# where its threads wait, the TCP sockets of each namespace NS ("-" for the
# initial one), the rdma QPs and the kernel's last messages: what a test
# that is about to time out leaves behind. Run it in the background; kill
# it when done (its sleep, then itself): it then prints nothing. A
# foreground sleep killed first would have bash print "Terminated", and an
# empty log is how callers tell that nothing hung.
sleep "$1" &
wait $! || exit 0
prog=$2
shift 2
pids=$(pgrep -x "$prog") || exit 0
# The sockets first: a test's log keeps only its last lines.
for ns in "$@"; do
	echo "== TCP sockets in namespace $ns"
	if [ "$ns" = - ]; then ss -tanoie; else ip netns exec "$ns" ss -tanoie; fi |
		grep -v LISTEN | cut -c 1-400
done
for p in $pids; do
	echo "== $prog pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline)"
	for s in /proc/"$p"/task/*/stack; do
		head -n 6 "$s"
		echo
	done
done
echo "== $(grep TCP: /proc/net/sockstat)"
echo "== rdma QPs"
rdma res show qp 2>&1 | head -n 20
echo "== softrdma's messages"
dmesg | grep -E 'softrdma|infiniband|si[0-9]' | tail -n 10
