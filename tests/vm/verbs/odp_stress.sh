# shellcheck shell=bash
# odp_stress: on-demand paging while the kernel moves the pages, and a
# process killed mid-transfer. rdma-core's ibv_rc_pingpong (-c: the
# receiver checks every message's bytes) between sr0 and sr1 (netns b),
# 64 KiB messages, on explicit (-o) and implicit (-O) ODP MRs, while
# memory is compacted and the page cache dropped over and over (pages
# migrate: the MRs' MMU notifiers run mid-transfer); both ends must
# finish. Then a client on implicit ODP killed with SIGKILL mid-run (its
# MRs go while faults and holds are in flight) and its server stopped:
# no MR of theirs is left on either device, and a last run passes.
# About 40 s; on the debug kernel, with fewer rounds, about 2 minutes
# (beside another guest on a busy host, up to 5).
#
# layers: stock debug
# timeout: 480
odp_stress_pair() {
	local g0=$1 g1=$2 n=$3 srv rc=0
	shift 3
	ip netns exec b timeout 200 ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" \
		-s 65536 -n "$n" -c "$@" >"$TEST_TMP/srv.log" 2>&1 &
	srv=$!
	wait_listen b "$P_PINGPONG" || return 1
	timeout 200 ibv_rc_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -s 65536 -n "$n" \
		-c "$@" 10.0.0.2 || rc=1
	wait "$srv" || { cat "$TEST_TMP/srv.log"; rc=1; }
	return $rc
}

odp_stress_mrs() {
	rdma res show mr | grep -c -E "dev (sr0|sr1) " || true
}

test_odp_stress() {
	local g0 g1 mover srv cli mrs odp n=200 pause=0.2
	# The debug kernel compacts and checks slowly: fewer rounds there.
	[[ $(uname -r) != *-softrdma-debug ]] || { n=40; pause=1; }
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	mrs=$(odp_stress_mrs)

	(
		while :; do
			echo 1 >/proc/sys/vm/compact_memory
			echo 1 >/proc/sys/vm/drop_caches
			sleep "$pause"
		done
	) &
	mover=$!
	for odp in -o -O; do
		echo "== ibv_rc_pingpong $odp -c, 64 KiB, memory compacted meanwhile"
		odp_stress_pair "$g0" "$g1" "$n" "$odp" || {
			kill "$mover"
			return 1
		}
	done
	kill "$mover"
	wait "$mover" 2>/dev/null || true

	echo "== a client on implicit ODP killed mid-run"
	ip netns exec b timeout 30 ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" \
		-s 65536 -n 1000000 -O >/dev/null 2>&1 &
	srv=$!
	wait_listen b "$P_PINGPONG" || return 1
	ibv_rc_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -s 65536 -n 1000000 -O \
		10.0.0.2 >/dev/null 2>&1 &
	cli=$!
	sleep 2
	kill -0 "$cli" 2>/dev/null || { echo "the client ended before it was killed"; return 1; }
	kill -KILL "$cli"
	wait "$cli" 2>/dev/null || true
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null || true
	[ "$(odp_stress_mrs)" = "$mrs" ] || {
		echo "MRs left on sr0/sr1: $(odp_stress_mrs), $mrs before"
		rdma res show mr
		return 1
	}
	echo "== the devices after it"
	odp_stress_pair "$g0" "$g1" 20 -O
}
