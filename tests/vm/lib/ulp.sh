# shellcheck shell=bash
# Kernel ULPs over softrdma: NVMe over Fabrics (nvmet-rdma target and
# nvme-rdma host) and NFS over RDMA (nfsd's RDMA listener, the NFS client
# with proto=rdma). The kernel's ULPs make their rdma_cm IDs in the initial
# namespace, so both ends run there, over veth0's device, to its own
# address: the packets come back in on lo.

NVMET=/sys/kernel/config/nvmet
ULP_NQN=nqn.2026-12.org.softrdma:ulp
ULP_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5eb6d4b2-2fd8-4a36-9c3a-5f4e0c3a1d01
ULP_HOSTID=5eb6d4b2-2fd8-4a36-9c3a-5f4e0c3a1d01

# nvmeof_blockdev NQN: the block device of the connected subsystem NQN.
nvmeof_blockdev() {
	local b
	for b in /sys/block/nvme*; do
		[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# nvmeof_down: disconnect the host, take the target apart, unload both
# ULPs (whatever of it is there; also after a failure).
nvmeof_down() {
	local port=$NVMET/ports/$TEST_PORT sub=$NVMET/subsystems/$ULP_NQN
	nvme disconnect -n "$ULP_NQN" >/dev/null 2>&1
	rm -f "$port/subsystems/$ULP_NQN" 2>/dev/null
	rmdir "$port" 2>/dev/null
	[ -d "$sub" ] && echo 0 >"$sub/namespaces/1/enable" 2>/dev/null
	rmdir "$sub/namespaces/1" 2>/dev/null
	rmdir "$sub" 2>/dev/null
	modprobe -r nvme_rdma nvmet_rdma 2>/dev/null
	return 0
}

# nvmeof_run IP: an nvmet-rdma target exporting a 64 MiB file on IP (over
# the device that has it), the host connected to it; fio writes 8 MiB in
# blocks of 4 KiB to 256 KiB (several I/Os in flight) and reads every
# block back, checking its crc32c; then the host disconnects and the
# target goes.
nvmeof_run() {
	local ip=$1 port=$NVMET/ports/$TEST_PORT sub=$NVMET/subsystems/$ULP_NQN dev o
	local fam=ipv4
	[[ $ip == *:* ]] && fam=ipv6
	modprobe -a nvmet nvmet_rdma nvme_rdma
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	truncate -s 64M "$TEST_TMP/ns.img"
	mkdir "$sub"
	echo 1 >"$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo "$TEST_TMP/ns.img" >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/buffered_io"
	echo 1 >"$sub/namespaces/1/enable"
	mkdir "$port"
	echo rdma >"$port/addr_trtype"
	echo $fam >"$port/addr_adrfam"
	echo "$ip" >"$port/addr_traddr"
	echo "$TEST_PORT" >"$port/addr_trsvcid"
	ln -s "$sub" "$port/subsystems/$ULP_NQN"
	if ! o=$(timeout 60 nvme connect -t rdma -a "$ip" -s "$TEST_PORT" -n "$ULP_NQN" \
		-q "$ULP_HOSTNQN" -I "$ULP_HOSTID" 2>&1); then
		echo "nvme connect: $o"
		dmesg | grep -i -E 'nvme|softrdma' | tail -n 20
		return 1
	fi
	wait_for 10 nvmeof_blockdev "$ULP_NQN" || { echo "no block device for $ULP_NQN"; return 1; }
	dev=$(nvmeof_blockdev "$ULP_NQN")
	echo "connected: $dev"
	if ! timeout 120 fio --name=nvmeof --filename="$dev" --direct=1 \
		--ioengine=libaio --iodepth=8 --rw=write --bsrange=4k-256k \
		--size=8M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output="$TEST_TMP/fio.log"; then
		echo "fio failed"
		tail -n 30 "$TEST_TMP/fio.log"
		dmesg | grep -i -E 'nvme|softrdma' | tail -n 20
		return 1
	fi
	grep -E 'write:|read:|err=' "$TEST_TMP/fio.log"
	# The verify pass read back every block written.
	grep -q 'err= 0' "$TEST_TMP/fio.log"
	o=$(nvme disconnect -n "$ULP_NQN" 2>&1)
	echo "$o"
	[[ $o == *"disconnected 1 controller"* ]]
	nvmeof_down
}

# nfs_server_up PORT: nfsd exporting a tmpfs ($TEST_TMP/export, fsid 77) to
# the fixture's networks, with rpcbind and mountd, and an RDMA listener on
# PORT (for IPv4 and IPv6, afonly each, as nfsd makes them).
nfs_server_up() {
	local exp=$TEST_TMP/export
	modprobe -a nfsd rpcrdma nfsv3
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p "$exp" /run/rpcbind /var/lib/nfs
	mount -t tmpfs -o size=64m ulp-export "$exp"
	rpcbind -f >"$TEST_TMP/rpcbind.log" 2>&1 &
	wait_listen - 111
	exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=77 "10.0.0.0/24:$exp"
	exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=77 "[fd00::]/64:$exp"
	rpc.mountd -F >"$TEST_TMP/mountd.log" 2>&1 &
	rpc.nfsd 4
	echo "rdma $1" >/proc/fs/nfsd/portlist
	grep "rdma" /proc/fs/nfsd/portlist
}

# nfs_down: unmount, stop nfsd (its listeners go), unexport (also after a
# failure).
nfs_down() {
	local exp=$TEST_TMP/export
	umount "$TEST_TMP/mnt" 2>/dev/null
	[ -e /proc/fs/nfsd/threads ] && rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	mountpoint -q "$exp" && umount "$exp"
	return 0
}

# nfs_mount ADDR PORT: mount ADDR's export at $TEST_TMP/mnt over RDMA.
nfs_mount() {
	local a=$1
	[[ $a == *:* ]] && a="[$a]"
	mkdir -p "$TEST_TMP/mnt"
	timeout 60 mount -t nfs -o "rdma,port=$2,vers=3,nolock" \
		"$a:$TEST_TMP/export" "$TEST_TMP/mnt"
	grep " $TEST_TMP/mnt nfs .*proto=rdma" /proc/mounts
}

# nfs_run PORT: over IPv4, 6 MiB written (by direct I/O, one RPC per MiB,
# and through the page cache); unmounted; the server's copy checked;
# mounted again over IPv6 and read back (again by direct I/O) and compared.
nfs_run() {
	local port=$1 mnt=$TEST_TMP/mnt data=$TEST_TMP/data
	head -c 6M /dev/urandom >"$data"
	nfs_mount 10.0.0.1 "$port"
	dd if="$data" of="$mnt/direct" bs=1M oflag=direct status=none
	cp "$data" "$mnt/cached"
	sync
	umount "$mnt"
	cmp "$data" "$TEST_TMP/export/direct"
	cmp "$data" "$TEST_TMP/export/cached"
	echo 3 >/proc/sys/vm/drop_caches
	nfs_mount fd00::1 "$port"
	dd if="$mnt/direct" bs=1M iflag=direct status=none | cmp "$data" -
	cmp "$data" "$mnt/cached"
	umount "$mnt"
	echo "6 MiB written over IPv4, read back over IPv6: equal"
}

# ulp_unload: softrdma unloads once the ULPs' connections are gone (a
# closed iWARP socket may linger until its FIN is acknowledged).
ulp_unload() {
	wait_for 20 modprobe -r softrdma || true
	[ ! -e /sys/module/softrdma ] || { echo "softrdma cannot be unloaded"; return 1; }
}
