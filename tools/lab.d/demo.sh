#!/usr/bin/env bash
# tools/lab demo: softrdma in a guest. Creates a softroce and a softiwarp
# device with `rdma link add` and shows them as verbs applications see them.
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
printf "\nThe data path (perftest between devices) arrives with the RoCEv2 and iWARP transports.\n"
'
