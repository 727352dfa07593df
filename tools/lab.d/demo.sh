#!/usr/bin/env bash
# tools/lab demo: softrdma in a guest. Creates softroce and softiwarp
# devices with `rdma link add`, shows them as verbs applications see them,
# and runs perftest between two softroce devices and then between two
# softiwarp devices (veth0 <-> veth1 in netns b).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
lab_ready

# shellcheck disable=SC2016 # the guest's script, expanded there
exec "$LAB_REPO/tools/lab" run -- bash -c '
set -e
step() { printf "\n\033[1m$ %s\033[0m\n" "$*"; "$@"; }
step rdma link add sr0 type softroce netdev veth0
step rdma link add si0 type softiwarp netdev veth0
step rdma link show
step softrdma list
step ibv_devices
step ibv_devinfo -d sr0
ibv_devinfo -v -d sr0 | grep -E "GID\[" || true
step ibv_devinfo -d si0
step ip netns exec b rdma link add sr1 type softroce netdev veth1
# perf SERVER_DEV CLIENT_DEV PERFTEST ARGS...: server in netns b (veth1),
# client on veth0; waits until the server listens.
perf() {
	local sdev=$1 cdev=$2 n=100
	shift 2
	printf "\n\033[1m$ %s   (server: %s on veth1 in netns b, client: %s on veth0)\033[0m\n" "$*" "$sdev" "$cdev"
	ip netns exec b "$@" -d "$sdev" >/tmp/srv.log 2>&1 &
	while [ $n -gt 0 ] && [ -z "$(ip netns exec b ss -Hltn "sport = :18515")" ]; do
		sleep 0.1
		n=$((n - 1))
	done
	"$@" -d "$cdev" 10.0.0.2
	wait
}
printf "\nRoCEv2 (softroce, GID 1 = ::ffff:10.0.0.x):\n"
perf sr1 sr0 ib_write_lat -x 1 -n 1000
perf sr1 sr0 ib_write_bw -x 1 -s 65536 -n 500
# rdma_cm picks the device by address: leave it only the iWARP ones.
step rdma link delete sr0
step ip netns exec b rdma link delete sr1
step ip netns exec b rdma link add si1 type softiwarp netdev veth1
printf "\niWARP (softiwarp: MPA/DDP/RDMAP over TCP, connected with rdma_cm):\n"
perf si1 si0 ib_write_lat -R -n 1000
perf si1 si0 ib_write_bw -R -s 65536 -n 500
'
