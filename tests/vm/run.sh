#!/bin/bash
# Guest integration tests (run inside a lab guest by tools/lab test).
#   run.sh [--debug] [--out FILE] [TEST...]
# Prints "PASS name" / "FAIL name" per test (and to FILE); exits 0 only if
# all passed. --debug runs KUnit and the short subset meant for the debug
# kernel.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SMOKE=$REPO/build/user/verbs_smoke
QPTEST=$REPO/build/user/verbs_qp
RCTEST=$REPO/build/user/verbs_rc
out=/dev/null
debug=0
while [ $# -gt 0 ]; do
	case "$1" in
	--debug) debug=1; shift ;;
	--out) out=$2; shift 2 ;;
	*) break ;;
	esac
done
: >"$out"
failed=0

log() { printf '%s\n' "$*" | tee -a "$out"; }

# reset: no softrdma device, module unloaded.
reset() {
	local d
	for d in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1); do
		rdma link delete "$d" 2>/dev/null
	done
	modprobe -r softrdma 2>/dev/null
	return 0
}

# t NAME: run test_NAME in a subshell with tracing to a log; report.
t() {
	local name=$1 tlog
	tlog=$(mktemp)
	if (set -e; "test_$name") >"$tlog" 2>&1; then
		log "PASS $name"
	else
		log "FAIL $name"
		sed 's/^/    /' "$tlog" | tail -n 40
		failed=$((failed + 1))
	fi
	rm -f "$tlog"
	reset
}

# expect_fail MSG CMD...: CMD must fail and print MSG.
expect_fail() {
	local msg=$1 o
	shift
	if o=$("$@" 2>&1); then
		echo "expected failure, got success: $*"
		return 1
	fi
	echo "$o" | grep -q -- "$msg" || {
		echo "'$*' failed without '$msg': $o"
		return 1
	}
}

# has_gid DEV GID: the port's GID table holds GID.
has_gid() {
	ibv_devinfo -v -d "$1" | grep -q "GID\[ *[0-9]*\]:[[:space:]]*$2\b"
}

# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for() {
	local n=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

test_devinfo_roce() {
	rdma link add sr0 type softroce netdev veth0
	ibv_devices | grep -q '^ *sr0 '
	local o
	o=$(ibv_devinfo -v -d sr0)
	echo "$o"
	echo "$o" | grep -q 'transport:[[:space:]]*InfiniBand'
	echo "$o" | grep -q 'state:[[:space:]]*PORT_ACTIVE'
	echo "$o" | grep -q 'link_layer:[[:space:]]*Ethernet'
	echo "$o" | grep -q 'active_mtu:[[:space:]]*1024'
	echo "$o" | grep -Eq 'GID\[ *[0-9]+\]:[[:space:]]*::ffff:10\.0\.0\.1, RoCE v2'
	echo "$o" | grep -Eq 'GID\[ *[0-9]+\]:[[:space:]]*fd00::1, RoCE v2'
}

test_devinfo_iwarp() {
	rdma link add si0 type softiwarp netdev veth0
	local o
	o=$(ibv_devinfo -v -d si0)
	echo "$o"
	echo "$o" | grep -q 'transport:[[:space:]]*iWARP'
	echo "$o" | grep -q 'state:[[:space:]]*PORT_ACTIVE'
	echo "$o" | grep -q 'link_layer:[[:space:]]*Ethernet'
	mac=$(cat /sys/class/net/veth0/address)
	softrdma list | grep -q "^si0	softiwarp	veth0$"
	[ "$(cat /sys/class/infiniband/si0/parent)" = veth0 ]
	[ -n "$mac" ]
}

test_smoke_roce() {
	rdma link add sr0 type softroce netdev veth0
	"$SMOKE" sr0 roce ::ffff:10.0.0.1
	"$SMOKE" sr0 roce fd00::1
}

test_smoke_iwarp() {
	rdma link add si0 type softiwarp netdev veth0
	"$SMOKE" si0 iwarp
}

test_qp_roce() {
	rdma link add sr0 type softroce netdev veth0
	"$QPTEST" sr0 ::ffff:10.0.0.1 ::ffff:10.0.0.2
}

test_qp_iwarp() {
	rdma link add si0 type softiwarp netdev veth0
	"$QPTEST" si0 - -
}

# Interop: rdma_rxe on veth0 (initial namespace), softroce on veth1 (b).
interop_setup() {
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
}

interop_cleanup() {
	rdma link delete rxe0 2>/dev/null
	modprobe -r rdma_rxe
}

test_interop_rxe_transfers() {
	interop_setup
	trap interop_cleanup EXIT
	# rxe requests, softroce responds; then the other way round.
	"$RCTEST" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$RCTEST" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1
}

test_interop_rxe_pingpong() {
	interop_setup
	trap interop_cleanup EXIT
	local g0 g1 size srv
	g0=$(gid_index rxe0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in 1 4096 65536; do
		# softroce serves, rxe connects.
		ip netns exec b ibv_rc_pingpong -d sr1 -g "$g1" -s $size -n 20 -c >/tmp/srv.log 2>&1 &
		srv=$!
		sleep 1
		ibv_rc_pingpong -d rxe0 -g "$g0" -s $size -n 20 -c 10.0.0.2
		wait $srv || { cat /tmp/srv.log; return 1; }
		# rxe serves, softroce connects.
		ibv_rc_pingpong -d rxe0 -g "$g0" -s $size -n 20 -c >/tmp/srv.log 2>&1 &
		srv=$!
		sleep 1
		ip netns exec b ibv_rc_pingpong -d sr1 -g "$g1" -s $size -n 20 -c 10.0.0.1
		wait $srv || { cat /tmp/srv.log; return 1; }
	done
}

PERF=$REPO/tests/vm/perftest.sh

# perftest 25.01 takes the ibv_wr_* path only on devices of its own list
# (ConnectX, BlueField, EFA, HNS, by vendor and part id) and forces
# --use_old_post_send on any other, rxe and softrdma included: its banner
# says "ibv_wr* API : OFF" either way. rc_wr_api covers ibv_wr_*.
test_perftest_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local t size mode
	for t in ib_send_lat ib_write_lat ib_read_lat ib_send_bw ib_write_bw ib_read_bw; do
		for size in 2 65536; do
			for mode in "" --use_old_post_send; do
				echo "== $t -s $size $mode"
				"$PERF" sr1 b sr0 - 10.0.0.2 $t -s $size -n 20 $mode
			done
		done
	done
}

test_perftest_interop_rxe() {
	interop_setup
	trap interop_cleanup EXIT
	local t
	for t in ib_send_lat ib_write_lat ib_read_lat ib_write_bw ib_read_bw; do
		echo "== $t: softroce serves, rxe connects"
		"$PERF" sr1 b rxe0 - 10.0.0.2 $t -s 4096 -n 20
		echo "== $t: rxe serves, softroce connects"
		"$PERF" rxe0 - sr1 b 10.0.0.1 $t -s 4096 -n 20
	done
}

# What went on the wire, checked by others: Wireshark's RoCE dissector
# (payload heuristics off: they mistake payload bytes for protocols) and
# our own ICRC checker, independent of the kernel's.
test_wire_roce() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	tcpdump -i veth0 -w /tmp/wire.pcap udp port 4791 2>/dev/null &
	local cap=$!
	sleep 1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 >/dev/null
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_write_bw -s 65536 -n 20 >/dev/null
	sleep 1
	kill -INT $cap
	wait $cap
	softrdma icrc-check /tmp/wire.pcap
	local n bad
	n=$(tshark -r /tmp/wire.pcap --only-protocols frame,eth,ip,udp,infiniband 2>/dev/null | grep -c RRoCE)
	bad=$(tshark -r /tmp/wire.pcap --only-protocols frame,eth,ip,udp,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Warning"' 2>/dev/null | wc -l)
	echo "tshark: $n RoCEv2 packets, $bad malformed or flagged"
	[ "$n" -gt 1000 ] && [ "$bad" = 0 ]
}

test_any_name() {
	rdma link add my_rdma_dev type softroce netdev veth0
	rdma link add rdmadev2 type softiwarp netdev veth0
	"$SMOKE" my_rdma_dev roce
	"$SMOKE" rdmadev2 iwarp
}

test_rxe_keeps_its_provider() {
	# rdma_rxe takes UDP 4791 in the initial namespace: softroce goes to b.
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	ibv_devinfo -d rxe0 | grep -q 'fw_ver:[[:space:]]*0\.0\.0'
	ibv_devinfo -d sr1 | grep -q 'fw_ver:[[:space:]]*0\.1\.0'
	"$SMOKE" sr1 roce ::ffff:10.0.0.2
	! softrdma list | grep -q rxe0
	rdma link delete rxe0
	modprobe -r rdma_rxe
}

test_port_taken_by_rxe() {
	modprobe rdma_rxe
	dmesg -C
	expect_fail 'Address already in use' rdma link add sr0 type softroce netdev veth0
	dmesg | grep -q 'UDP port 4791 is taken in this network namespace'
	[ -z "$(ls /sys/class/infiniband)" ]
	# The iWARP side needs no UDP port.
	rdma link add si0 type softiwarp netdev veth0
	modprobe -r rdma_rxe
	# With the port free again, softroce can have it.
	rdma link add sr0 type softroce netdev veth0
	"$SMOKE" sr0 roce ::ffff:10.0.0.1
}

# gid_index DEV GID: the GID table index of GID (for ibv_rc_pingpong -g).
gid_index() {
	ibv_devinfo -v -d "$1" | sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$2, RoCE v2.*/\1/p" | head -n 1
}

test_rc_transfers() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}

# The same transfers posted through ibv_wr_* (ibv_qp_ex), and polled
# through ibv_cq_ex.
test_rc_wr_api() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --wr
}

test_rc_cq_ex() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --cq-ex
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --wr --cq-ex
}

test_rc_pingpong() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	local g0 g1 size
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	for size in 1 4096 65536; do
		ip netns exec b ibv_rc_pingpong -d sr1 -g "$g1" -s $size -n 50 -c >/tmp/srv.log 2>&1 &
		local srv=$!
		sleep 1
		ibv_rc_pingpong -d sr0 -g "$g0" -s $size -n 50 -c 10.0.0.2
		wait $srv || { cat /tmp/srv.log; return 1; }
	done
}

test_provider_from_build_tree() {
	rdma link add sr0 type softroce netdev veth0
	mv /etc/libibverbs.d/softrdma.driver /tmp/softrdma.driver.off
	trap 'mv /tmp/softrdma.driver.off /etc/libibverbs.d/softrdma.driver' EXIT
	! "$SMOKE" sr0 roce
	RDMAV_DRIVERS=$REPO/build/user/libsoftrdma "$SMOKE" sr0 roce ::ffff:10.0.0.1
}

test_gids_follow_addresses() {
	rdma link add sr0 type softroce netdev veth0
	ip addr add 10.0.0.77/24 dev veth0
	ip addr add fd00::77/64 dev veth0 nodad
	wait_for 5 has_gid sr0 ::ffff:10.0.0.77
	wait_for 5 has_gid sr0 fd00::77
	ip addr del 10.0.0.77/24 dev veth0
	ip addr del fd00::77/64 dev veth0
	wait_for 5 sh -c '! ibv_devinfo -v -d sr0 | grep -q "10\.0\.0\.77\|fd00::77"'
	has_gid sr0 ::ffff:10.0.0.1
}

test_port_follows_link() {
	rdma link add sr0 type softroce netdev veth0
	rdma link add si0 type softiwarp netdev veth0
	ip link set veth0 down
	wait_for 5 sh -c 'ibv_devinfo -d sr0 | grep -q PORT_DOWN'
	ibv_devinfo -d si0 | grep -q PORT_DOWN
	ip link set veth0 up
	wait_for 5 sh -c 'ibv_devinfo -d sr0 | grep -q PORT_ACTIVE'
	wait_for 5 sh -c 'ibv_devinfo -d si0 | grep -q PORT_ACTIVE'
}

test_mtu_follows_netdev() {
	rdma link add sr0 type softroce netdev veth0
	ip link set veth0 mtu 9000
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*4096'
	ip link set veth0 mtu 1200
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*1024'
	ip link set veth0 mtu 1000
	ibv_devinfo -d sr0 | grep -q 'active_mtu:[[:space:]]*512'
	ip link set veth0 mtu 1500
}

test_netns_device() {
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	ip netns exec b ibv_devinfo -v -d sr1 | grep -q '::ffff:10\.0\.0\.2'
	ip netns exec b "$SMOKE" sr1 roce ::ffff:10.0.0.2
}

test_bad_input() {
	rdma link add sr0 type softroce netdev veth0
	expect_fail 'No such device' rdma link add sr9 type softroce netdev nosuch0
	expect_fail 'File exists' rdma link add sr0 type softiwarp netdev veth0
	expect_fail 'File exists' rdma link add sr1 type softroce netdev veth0
	modprobe tun
	ip tuntap add mode tun tun0
	expect_fail 'Invalid argument' rdma link add sr2 type softroce netdev tun0
	dmesg | grep -q 'tun0 carries no Ethernet frames'
	expect_fail 'Invalid argument' rdma link add sr3 type softiwarp netdev lo
	ip tuntap del mode tun tun0
	# Nothing was left behind: only sr0 exists.
	[ "$(rdma link show | awk '{print $2}')" = "sr0/1" ]
	[ "$(ls /sys/class/infiniband)" = sr0 ]
	# And sr0 still works.
	"$SMOKE" sr0 roce ::ffff:10.0.0.1
}

test_netdev_unregister() {
	ip link add vx0 type veth peer name vx1
	ip link set vx0 up
	rdma link add srx type softroce netdev vx0
	rdma link add six type softiwarp netdev vx1
	ip link del vx0
	wait_for 10 sh -c '! rdma link show | grep -q "srx\|six"'
	[ ! -e /sys/class/infiniband/srx ]
}

test_add_delete_rmmod_cycles() {
	local i
	for i in 1 2 3; do
		rdma link add sr0 type softroce netdev veth0
		rdma link add si0 type softiwarp netdev veth0
		ip netns exec b rdma link add sr1 type softroce netdev veth1
		rdma link delete sr0
		rdma link add sr0 type softroce netdev veth0
		"$SMOKE" si0 iwarp >/dev/null
		# rmmod with devices present removes them.
		rmmod softrdma
		[ -z "$(ls /sys/class/infiniband)" ]
		! lsmod | grep -q '^softrdma '
	done
}

test_rmmod_refused_while_open() {
	rdma link add sr0 type softroce netdev veth0
	"$SMOKE" sr0 hold >/tmp/hold.out &
	local pid=$!
	wait_for 10 grep -q '^ok 1 - open sr0' /tmp/hold.out
	if rmmod softrdma 2>/dev/null; then
		kill $pid
		echo "rmmod succeeded while the device was open"
		return 1
	fi
	kill $pid
	wait $pid 2>/dev/null || true
	sleep 1
	rmmod softrdma
}

kunit() {
	modprobe kunit || { log "FAIL kunit.load"; failed=$((failed + 1)); return; }
	if ! modprobe softrdma_kunit; then
		log "FAIL kunit.load"
		failed=$((failed + 1))
		return
	fi
	local f=/sys/kernel/debug/kunit/softrdma_util/results line
	[ -r $f ] || { log "FAIL kunit.results"; failed=$((failed + 1)); return; }
	cat $f
	# Case lines are indented one level: "    ok 1 name" / "    not ok 2 name".
	while read -r line; do
		case "$line" in
		"ok "*) log "PASS kunit.softrdma_util.${line##* }" ;;
		"not ok "*) log "FAIL kunit.softrdma_util.${line##* }"; failed=$((failed + 1)) ;;
		esac
	done < <(grep -E '^    (not )?ok ' $f)
	modprobe -r softrdma_kunit
}

ALL="devinfo_roce devinfo_iwarp smoke_roce smoke_iwarp qp_roce qp_iwarp \
rc_transfers rc_wr_api rc_cq_ex rc_pingpong interop_rxe_transfers interop_rxe_pingpong \
perftest_roce perftest_interop_rxe wire_roce any_name rxe_keeps_its_provider port_taken_by_rxe provider_from_build_tree gids_follow_addresses \
port_follows_link mtu_follows_netdev netns_device bad_input \
netdev_unregister add_delete_rmmod_cycles rmmod_refused_while_open"
DEBUG_SUBSET="smoke_roce smoke_iwarp qp_roce rc_transfers bad_input netdev_unregister \
add_delete_rmmod_cycles"

reset
if [ $# -gt 0 ]; then
	tests="$*"
elif [ $debug = 1 ]; then
	kunit
	tests=$DEBUG_SUBSET
else
	tests=$ALL
fi
for name in $tests; do
	t "$name"
done
exit $((failed > 0))
