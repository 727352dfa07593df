#!/bin/bash
# Runs as PID 1 inside a lab guest: bring up the fixture, run the command,
# record its status and the kernel's reports, power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
OUT=/lab-out
# shellcheck source=/dev/null # written by run.sh
. $OUT/guest.env

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# /tmp stays on the (tmpfs-backed) overlay root: the repository or a share
# may live under /tmp, mounted there already.
chmod 1777 /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
stty -F /dev/console -onlcr 2>/dev/null
hostname "${LAB_HOST:-softrdma-lab}"
echo 1 >/proc/sys/kernel/sysrq

finish() {
	dmesg -n 1
	dmesg >$OUT/dmesg 2>&1
	echo "$1" >$OUT/status
	sync
	echo o >/proc/sysrq-trigger
	# PID 1 must not exit; the root may already be gone.
	while :; do :; done
}

# Use this checkout's build ($LAB_REPO/build, shared read-only at the same
# path), never what may lie in the shared lab root: modprobe loads our
# modules from the build tree (install commands; their aliases, such as
# rdma-link-softroce, which `rdma link add` asks for, point there too),
# libibverbs loads the provider from it, and the softrdma tool comes from
# it. All of it lives on the guest's tmpfs overlay. siw and rxe stay as
# the root has them.
use_build() {
	local b=$LAB_REPO/build kv ko name deps d conf=/etc/modprobe.d/softrdma-lab.conf
	kv=$(uname -r)
	: >$conf
	for ko in $b/kmod-$LAB_KERNEL/softrdma.ko $b/kmod-$LAB_KERNEL/tests/kunit/softrdma_kunit.ko; do
		[ -f "$ko" ] || continue
		if [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$kv" ]; then
			echo "[lab] $ko is not built for $kv: not used" >&2
			continue
		fi
		name=$(modinfo -F name "$ko")
		deps=$(modinfo -F depends "$ko" | tr , ' ')
		{
			echo "install $name ${deps:+/sbin/modprobe -a $deps && }/sbin/insmod $ko \$CMDLINE_OPTS"
			echo "remove $name /sbin/rmmod $name"
			modinfo -F alias "$ko" | sed "s/^/alias /; s/\$/ $name/"
		} >>$conf
	done
	grep -q '^install softrdma ' $conf ||
		echo "[lab] no softrdma.ko in $b/kmod-$LAB_KERNEL: run tools/lab build" >&2
	# The provider (and the tool) built for the private ABI of this root's
	# libibverbs: build/user (rdma-core 56.1, ABI 34) in the lab root,
	# build/user-65 in the sid root.
	local abi user=
	abi=$(grep -ao -m 1 'IBVERBS_PRIVATE_[0-9]*' /usr/lib/*/libibverbs.so.1 | head -n 1)
	abi=${abi##*_}
	for d in "$b"/user "$b"/user-*; do
		[ -n "$abi" ] && [ -f "$d/libsoftrdma-rdmav$abi.so" ] && { user=$d; break; }
	done
	if [ -n "$user" ]; then
		mkdir -p /etc/libibverbs.d
		echo "driver $user/libsoftrdma" >/etc/libibverbs.d/softrdma.driver
		[ -x "$user"/softrdma ] && ln -sf "$user"/softrdma /usr/local/bin/softrdma
	else
		echo "[lab] no provider for libibverbs' private ABI ${abi:-?} in $b/user*: run tools/lab build" >&2
	fi
	return 0
}
# A root with softrdma's packages installed (tests/package/test.sh marks
# its copy of the lab root so) keeps what it has installed.
[ -e /etc/softrdma-lab/use-installed ] || use_build

kmemleak=/sys/kernel/debug/kmemleak
if [ -w $kmemleak ]; then
	# Forget what boot itself left behind; only the run's leaks count.
	echo scan >$kmemleak
	echo clear >$kmemleak
fi

# The fixture network of DESIGN.md: veth0 here, veth1 in netns b.
. "$LAB_REPO/tools/lab.d/fixture.sh"
if ! fixture_up >$OUT/fixture.log 2>&1; then
	cat $OUT/fixture.log
	finish 125
fi

# One of two guests (tools/lab pair): eth0, on the host's bridge, gets
# LAB_NET_ADDRS and LAB_NET_MTU (no udev: the driver is loaded here).
# Guest A gets the `peer` command (tools/lab.d/peer.sh) and starts its
# command once guest B's agent answers and B answers pings.
pair_up() {
	local a n=100
	modprobe virtio_net
	while [ ! -e /sys/class/net/eth0 ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	sysctl -qw net.ipv6.conf.eth0.accept_dad=0 || return 1
	for a in $LAB_NET_ADDRS; do
		ip addr add "$a" dev eth0 nodad || return 1
	done
	ip link set eth0 mtu "${LAB_NET_MTU:-1500}" up || return 1
	[ "$LAB_PEER_ROLE" = a ] || return 0
	ln -sf "$LAB_REPO/tools/lab.d/peer.sh" /usr/local/bin/peer
	n=600
	while [ ! -e "$LAB_PEER_DIR/ready" ] && [ ! -e "$LAB_PEER_DIR/dead" ] && [ $n -gt 0 ]; do
		sleep 0.5
		n=$((n - 1))
	done
	[ -e "$LAB_PEER_DIR/ready" ] || { echo "[lab] guest B did not come up"; return 1; }
	n=30
	until ping -c 1 -W 1 "$LAB_PEER_IP" >/dev/null; do
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "[lab] guest B does not answer on eth0"; return 1; }
	done
}
if [ -n "${LAB_NET_ADDRS:-}" ] && ! pair_up >$OUT/pair.log 2>&1; then
	cat $OUT/pair.log
	finish 125
fi

# A command still running near the host's time limit: say what the guest
# is doing (its processes, its blocked tasks, the kernel's last messages)
# and end the run, rather than be killed with nothing to show.
stuck() {
	echo "[lab] the command still runs after $LAB_DEADLINE s; the guest's state:"
	ps -N --ppid 2 -o pid,stat,etimes,wchan:32,args | cut -c 1-200
	echo w >/proc/sysrq-trigger
	dmesg | tail -n 150
	finish 124
}

# The boot is over: a guest that dies from here on is not retried.
: >$OUT/started
cd "${LAB_CWD:-/}" 2>/dev/null || cd /
bash -c "$LAB_CMD" </dev/null &
cmd=$!
dog=
if [ "${LAB_DEADLINE:-0}" -gt 0 ]; then
	(
		sleep "$LAB_DEADLINE"
		stuck
	) &
	dog=$!
fi
wait $cmd
rc=$?
[ -z "$dog" ] || kill $dog 2>/dev/null

if [ -w $kmemleak ]; then
	# kmemleak only reports objects older than a few seconds.
	sleep 6
	echo scan >$kmemleak
	cat $kmemleak >$OUT/kmemleak
fi
finish $rc
