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

# nvmeof_blockdev NQN: the block device of the connected subsystem NQN,
# once the host has scanned the namespace (its size is known).
nvmeof_blockdev() {
	local b
	for b in /sys/block/nvme*; do
		[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		[ "$(cat "$b/size")" -gt 0 ] || continue
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# nvmeof_down: disconnect the host, take the target apart, unload both
# ULPs (whatever of it is there; also after a failure, as the EXIT trap:
# errexit is off here, or the first step already undone would end it).
nvmeof_down() {
	local port=$NVMET/ports/$TEST_PORT sub=$NVMET/subsystems/$ULP_NQN
	local -
	set +e
	nvme disconnect -n "$ULP_NQN" >/dev/null 2>&1
	rm -f "$port/subsystems/$ULP_NQN" 2>/dev/null
	rmdir "$port" 2>/dev/null
	[ -d "$sub" ] && echo 0 >"$sub/namespaces/1/enable" 2>/dev/null
	rmdir "$sub/namespaces/1" 2>/dev/null
	rmdir "$sub" 2>/dev/null
	modprobe -r nvme_rdma nvmet_rdma 2>/dev/null
	mountpoint -q "$TEST_TMP/ns" && umount "$TEST_TMP/ns"
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
	# On a tmpfs of its own: the file backend takes the namespace's size
	# from the inode of the file it opened, and an overlayfs inode (the
	# guest's root) does not follow the size of the file below it: the
	# namespace would be 0 bytes.
	mkdir -p "$TEST_TMP/ns"
	mount -t tmpfs -o size=72m nvmeof-ns "$TEST_TMP/ns"
	truncate -s 64M "$TEST_TMP/ns/ns.img"
	mkdir "$sub"
	echo 1 >"$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo "$TEST_TMP/ns/ns.img" >"$sub/namespaces/1/device_path"
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
		--verify_state_save=0 \
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

# nfs_down: stop nfsd (its listeners go), unexport (also after a failure).
nfs_down() {
	local exp=$TEST_TMP/export
	local -
	set +e
	[ -e /proc/fs/nfsd/threads ] && rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	mountpoint -q "$exp" && umount -l "$exp"
	return 0
}

# nfs_client ADDR PORT MODE: in a mount namespace of its own (ip netns
# exec makes one), mount ADDR's export at $TEST_TMP/mnt over RDMA; MODE
# write: write $TEST_TMP/data as "direct" (direct I/O, one RPC per MiB)
# and "cached" (through the page cache); MODE read: compare both with it
# (again by direct I/O); then unmount.
nfs_client() {
	local a=$1 mnt=$TEST_TMP/mnt data=$TEST_TMP/data proto=rdma
	# mount.nfs resolves the server in the family of proto= only.
	[[ $a == *:* ]] && a="[$a]" && proto=rdma6
	mkdir -p "$mnt"
	if ! timeout 60 mount -t nfs -o "proto=$proto,port=$2,vers=3,nolock" \
		"$a:$TEST_TMP/export" "$mnt"; then
		echo "mount $a:$TEST_TMP/export over RDMA failed"
		dmesg | grep -i -E 'rpcrdma|svcrdma|nfs|softrdma' | tail -n 20
		return 1
	fi
	grep " $mnt nfs .*proto=rdma" /proc/mounts
	if [ "$3" = write ]; then
		dd if="$data" of="$mnt/direct" bs=1M oflag=direct status=none
		cp "$data" "$mnt/cached"
		sync
	else
		dd if="$mnt/direct" bs=1M iflag=direct status=none | cmp "$data" -
		cmp "$data" "$mnt/cached"
	fi
	umount "$mnt"
}

# nfs_run NS PORT: a client in netns NS writes 6 MiB over IPv4 and
# unmounts; the server's copy is checked; the client mounts again over
# IPv6, reads it back and compares.
nfs_run() {
	local ns=$1 port=$2 pre=()
	[ "$ns" = - ] || pre=(ip netns exec "$ns")
	head -c 6M /dev/urandom >"$TEST_TMP/data"
	"${pre[@]}" bash -ec "$(declare -f nfs_client); nfs_client 10.0.0.1 $port write"
	cmp "$TEST_TMP/data" "$TEST_TMP/export/direct"
	cmp "$TEST_TMP/data" "$TEST_TMP/export/cached"
	"${pre[@]}" bash -ec "$(declare -f nfs_client); nfs_client fd00::1 $port read"
	echo "6 MiB written over IPv4, read back over IPv6: equal"
}

# ulp_unload: softrdma unloads once the ULPs' connections are gone (a
# closed iWARP socket may linger until its FIN is acknowledged).
ulp_unload() {
	wait_for 20 modprobe -r softrdma || true
	[ ! -e /sys/module/softrdma ] || { echo "softrdma cannot be unloaded"; return 1; }
}
