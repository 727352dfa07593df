#!/bin/bash
# Runs as PID 1 inside a lab guest: bring up the fixture, run the command,
# record its status and the kernel's reports, power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
OUT=/lab-out
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

# Boot with this repository's build, whatever another checkout installed in
# the shared lab root: the copies land on the guest's tmpfs overlay.
install_build() {
	local b=$LAB_REPO/build kv mods
	kv=$(uname -r)
	mods=/lib/modules/$kv/updates
	mkdir -p $mods
	[ -f $b/kmod-$LAB_KERNEL/softrdma.ko ] &&
		cp $b/kmod-$LAB_KERNEL/softrdma.ko $mods/
	[ -f $b/kmod-debug/tests/kunit/softrdma_kunit.ko ] && [ "$LAB_KERNEL" = debug ] &&
		cp $b/kmod-debug/tests/kunit/softrdma_kunit.ko $mods/
	{ grep -q 'updates/softrdma.ko' /lib/modules/$kv/modules.dep &&
		{ [ "$LAB_KERNEL" != debug ] ||
			grep -q softrdma_kunit /lib/modules/$kv/modules.dep; }; } ||
		depmod -a
	if [ -f $b/user/libsoftrdma-rdmav34.so ]; then
		cp $b/user/libsoftrdma-rdmav34.so /usr/lib/x86_64-linux-gnu/libibverbs/
		echo "driver softrdma" >/etc/libibverbs.d/softrdma.driver
	fi
	[ -x $b/user/softrdma ] && cp $b/user/softrdma /usr/bin/softrdma
	return 0
}
install_build

kmemleak=/sys/kernel/debug/kmemleak
if [ -w $kmemleak ]; then
	# Forget what boot itself left behind; only the run's leaks count.
	echo scan >$kmemleak
	echo clear >$kmemleak
fi

# The fixture network of DESIGN.md: veth0 here, veth1 in netns b.
fixture() {
	ip link set lo up
	ip link add veth0 type veth peer name veth1 || return 1
	ip netns add b || return 1
	ip link set veth1 netns b || return 1
	sysctl -qw net.ipv6.conf.veth0.accept_dad=0
	ip netns exec b sysctl -qw net.ipv6.conf.veth1.accept_dad=0
	ip addr add 10.0.0.1/24 dev veth0
	ip addr add fd00::1/64 dev veth0 nodad
	ip link set veth0 up
	ip -n b link set lo up
	ip -n b addr add 10.0.0.2/24 dev veth1
	ip -n b addr add fd00::2/64 dev veth1 nodad
	ip -n b link set veth1 up
}
if ! fixture >$OUT/fixture.log 2>&1; then
	cat $OUT/fixture.log
	finish 125
fi

cd "${LAB_CWD:-/}" 2>/dev/null || cd /
bash -c "$LAB_CMD" </dev/null
rc=$?

if [ -w $kmemleak ]; then
	# kmemleak only reports objects older than a few seconds.
	sleep 6
	echo scan >$kmemleak
	cat $kmemleak >$OUT/kmemleak
fi
finish $rc
