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
hostname softrdma-lab
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
	local b=$LAB_REPO/build kv ko name deps conf=/etc/modprobe.d/softrdma-lab.conf
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
	if [ -f "$b"/user/libsoftrdma-rdmav34.so ]; then
		mkdir -p /etc/libibverbs.d
		echo "driver $b/user/libsoftrdma" >/etc/libibverbs.d/softrdma.driver
	else
		echo "[lab] no provider in $b/user: run tools/lab build" >&2
	fi
	[ -x "$b"/user/softrdma ] && ln -sf "$b"/user/softrdma /usr/local/bin/softrdma
	return 0
}
use_build

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
