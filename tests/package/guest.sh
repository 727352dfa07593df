#!/bin/bash
# tests/package/guest.sh: run by tests/package/test.sh in a guest booted
# on a copy of the lab root where softrdma's packages are installed, and
# where guest-init.sh therefore set up nothing of the checkout's build: the
# module DKMS built is what modprobe loads, the installed provider is what
# libibverbs loads, the installed tool lists the devices, ib_write_lat runs
# across the fixture's veth pair, and `rdma link add` loads the module by
# its aliases. Exits non-zero at the first check that fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kv=$(uname -r)
fail() {
	echo "FAIL: $*"
	exit 1
}
loaded() { grep -q '^softrdma ' /proc/modules; }

[ ! -e /etc/modprobe.d/softrdma-lab.conf ] || fail "the checkout's build is set up in this guest"
[ -z "${RDMAV_DRIVERS:-}" ] || fail "RDMAV_DRIVERS is set"

echo "== modprobe softrdma"
! loaded || fail "softrdma is loaded before modprobe"
modprobe softrdma
loaded || fail "modprobe softrdma loaded nothing"
f=$(modinfo -F filename softrdma)
case "$f" in
"/lib/modules/$kv/updates/dkms/softrdma.ko"*) ;;
*) fail "modprobe's softrdma is $f, not the one DKMS installed" ;;
esac
# The module loaded is that file: the same build ID.
case "$f" in
*.xz) xz -dc "$f" ;;
*.zst) zstd -qdc "$f" ;;
*) cat "$f" ;;
esac >/tmp/softrdma.ko
id=$(readelf -n /tmp/softrdma.ko | sed -n 's/.*Build ID: //p')
loaded_id=$(od -An -tx1 -v -j16 /sys/module/softrdma/notes/.note.gnu.build-id | tr -d ' \n')
if [ -z "$id" ] || [ "$id" != "$loaded_id" ]; then
	fail "the softrdma loaded (build ID $loaded_id) is not $f ($id)"
fi
echo "$f (build ID $id, $(modinfo -F vermagic "$f"))"

echo "== rdma link add, softrdma list"
rdma link add sr0 type softroce netdev veth0
ip netns exec b rdma link add sr1 type softroce netdev veth1
[ "$(command -v softrdma)" = /usr/bin/softrdma ] || fail "softrdma is $(command -v softrdma)"
# Each namespace sees both devices (shared RDMA netns mode), and the
# netdev of those whose netdev is in it.
list_is() {
	local l want
	l=$(${1:+ip netns exec "$1"} softrdma list)
	want=$(printf 'sr0\tsoftroce\t%s\nsr1\tsoftroce\t%s' "$2" "$3")
	echo "netns ${1:-init}: $(tr '\t\n' ' ;' <<<"$l")"
	[ "$l" = "$want" ] || fail "softrdma list in netns ${1:-init}: want $(tr '\t\n' ' ;' <<<"$want")"
}
list_is "" veth0 -
list_is b - veth1

echo "== the provider libibverbs loads"
p=$(LD_DEBUG=files ibv_devinfo -d sr0 2>&1 >/dev/null |
	sed -nE 's/.*file=([^ ]*libsoftrdma-rdmav[0-9]+\.so) .*/\1/p' | sort -u)
case "$p" in
/usr/lib/*/libibverbs/libsoftrdma-rdmav*.so) echo "$p" ;;
*) fail "libibverbs loaded '$p', not the installed provider" ;;
esac
ibv_devinfo -d sr0 | grep -E 'hca_id|transport|state'

echo "== ib_write_lat, sr0 (veth0) to sr1 (veth1, netns b)"
"$here/../vm/perftest.sh" sr1 b sr0 - 10.0.0.2 ib_write_lat -s 2 -n 200
rdma link delete sr0
ip netns exec b rdma link delete sr1
modprobe -r softrdma

# Nothing loads the module beforehand: `rdma link add` asks modprobe for
# rdma-link-TYPE, an alias the module carries.
for t in softroce softiwarp; do
	echo "== rdma link add x0 type $t, softrdma not loaded"
	! loaded || fail "softrdma is still loaded"
	rdma link add x0 type $t netdev veth0
	loaded || fail "rdma link add type $t did not load softrdma"
	rdma link show x0/1
	rdma link delete x0
	modprobe -r softrdma
done
echo "guest: all checks passed"
