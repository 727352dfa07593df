#!/usr/bin/env bash
# tools/lab demo: softrdma in a guest. Creates softroce and softiwarp
# devices with `rdma link add`, shows them as verbs applications see them,
# and runs perftest between two softroce devices (veth0 <-> veth1 in b).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

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
perf() {
	printf "\n\033[1m$ %s   (server: sr1 on veth1 in netns b, client: sr0 on veth0)\033[0m\n" "$*"
	ip netns exec b "$@" -d sr1 -x 1 >/tmp/srv.log 2>&1 &
	sleep 1
	"$@" -d sr0 -x 1 10.0.0.2
	wait
}
perf ib_write_lat -n 1000
perf ib_write_bw -s 65536 -n 500
printf "\niWARP traffic (softiwarp) arrives with the MPA/DDP/RDMAP transport.\n"
'
