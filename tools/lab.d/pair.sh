#!/usr/bin/env bash
# tools/lab pair [--kernel stock|debug|7.3] [--share DIR]... [--root DIR] [--mtu N] -- CMD...
# Two guests on one link, as two hosts: each a guest of tools/lab run (this
# checkout's build, the fixture, the kernel's checkers) with one vCPU and a
# virtio-net NIC, eth0, on a Linux bridge of two taps in a network namespace
# of the host that this run makes and removes (softrdma-pair-PID; nothing
# leaves the machine). Guest A (10.0.1.1/24, fd01::1/64) runs CMD as
# root; guest B (10.0.1.2/24, fd01::2/64) runs what CMD asks of it with
# `peer` (tools/lab.d/peer.sh: `peer CMD...`, `peer -b -l PORT CMD...`).
# eth0 has MTU N in both (1500; the bridge takes up to 9000). In both,
# LAB_PEER_IP and LAB_PEER_IP6 are the other's addresses. Exits with CMD's
# status; a kernel report in either guest fails the run, as in tools/lab run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

mtu=1500
while [ $# -gt 0 ]; do
	case "$1" in
	--mtu) mtu=$2; shift 2 ;;
	--mtu=*) mtu=${1#*=}; shift ;;
	--) shift; break ;;
	*)
		guest_opt "$@" || break
		shift "$GUEST_SHIFT"
		;;
	esac
done
[ $# -gt 0 ] || die "usage: tools/lab pair [--kernel stock|debug|7.3] [--share DIR] [--root DIR] [--mtu N] -- CMD..."
case "$mtu" in '' | *[!0-9]*) die "--mtu takes a number" ;; esac
link_mtu=$((mtu > 9000 ? mtu : 9000))
if [ -z "${LAB_MEM:-}" ]; then
	LAB_MEM=2G
	[ "$GUEST_KERNEL" = debug ] && LAB_MEM=3G
fi
limit=${LAB_TIMEOUT:-3600}

# The namespaces of runs that ended without cleaning up (killed): gone.
for n in $(ip netns list | awk '$1 ~ /^softrdma-pair-[0-9]+$/ { print $1 }'); do
	kill -0 "${n##*-}" 2>/dev/null || ip netns del "$n" 2>/dev/null || true
done

ns=softrdma-pair-$$
work=$(mktemp -d /tmp/softrdma-pair.XXXXXX)
peer=$work/peer
mkdir -p "$work/a" "$work/b" "$peer/q"
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup() {
	local f
	for f in "$work"/a/qemu.pid "$work"/b/qemu.pid; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

ip netns add "$ns"
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$ns" link add br0 type bridge stp_state 0 mcast_snooping 0
ip -n "$ns" link set br0 up

GUEST_SHARES+=("$peer")
# guest NAME MAC ADDR4 ADDR6 PEER4 PEER6 CMD...: the QEMU command line
# of guest NAME (a or b) in the array qargs_NAME.
guest() {
	local g=$1 mac=$2 a4=$3 a6=$4 p4=$5 p6=$6
	shift 6
	guest_prepare "$work/$g" "$GUEST_KERNEL" 1 "$@"
	{
		printf 'LAB_HOST=lab-%s\n' "$g"
		printf 'LAB_NET_ADDRS=%q\n' "$a4 $a6"
		printf 'LAB_NET_MTU=%d\n' "$mtu"
		printf 'export LAB_PEER_ROLE=%s LAB_PEER_DIR=%q\n' "$g" "$peer"
		printf 'export LAB_PEER_IP=%s LAB_PEER_IP6=%s\n' "$p4" "$p6"
	} >>"$work/$g/guest.env"
	# shellcheck disable=SC2054 # commas inside QEMU options
	GUEST_QARGS+=(-pidfile "$work/$g/qemu.pid"
		-netdev "tap,id=n0,ifname=tap$g,script=no,downscript=no"
		-device "virtio-net-pci,netdev=n0,mac=$mac")
	eval "qargs_$g=(\"\${GUEST_QARGS[@]}\")"
}
qargs_a=()
qargs_b=()
guest a 52:54:00:5e:01:01 10.0.1.1/24 fd01::1/64 10.0.1.2 fd01::2 "$@"
guest b 52:54:00:5e:01:02 10.0.1.2/24 fd01::2/64 10.0.1.1 fd01::1 \
	bash "$LAB_REPO/tools/lab.d/peer.sh" --serve

qemu() { ip netns exec "$ns" timeout --foreground "$limit" qemu-system-x86_64 "$@" </dev/null; }
# Guest B's console goes to a file (shown if B fails), A's here.
(
	qemu "${qargs_b[@]}" >"$work/b/console" 2>&1 || true
	: >"$peer/dead"
) &
bjob=$!
(qemu "${qargs_a[@]}" || true) | stdbuf -oL tr -d "\r" &
ajob=$!

# Each tap joins the bridge as soon as its QEMU made it.
for t in tapa tapb; do
	n=600
	until ip -n "$ns" link show "$t" >/dev/null 2>&1; do
		n=$((n - 1))
		if [ $n -le 0 ] || ! kill -0 $ajob 2>/dev/null || ! kill -0 $bjob 2>/dev/null; then
			die "QEMU did not make $t"
		fi
		sleep 0.1
	done
	ip -n "$ns" link set "$t" mtu "$link_mtu" master br0 up
done

wait $ajob || true
# A is done: B's agent stops, B powers off (or is stopped after 120 s).
: >"$peer/stop"
n=120
while kill -0 $bjob 2>/dev/null && [ $n -gt 0 ]; do
	sleep 1
	n=$((n - 1))
done
[ -s "$work/b/qemu.pid" ] && kill "$(cat "$work/b/qemu.pid")" 2>/dev/null
wait $bjob || true

rc=0
guest_verdict "$work/a" "guest A" || rc=$?
rcb=0
guest_verdict "$work/b" "guest B" || rcb=$?
if [ $rcb != 0 ]; then
	echo "[lab] guest B ended with status $rcb; its console:" >&2
	tail -n 40 "$work/b/console" >&2
	[ $rc = 0 ] && rc=$rcb
fi
exit "$rc"
