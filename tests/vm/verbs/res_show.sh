# shellcheck shell=bash
# res_show: `rdma res show qp|cq|mr|pd` lists a process's softroce and
# softiwarp objects with their types, states and owners, as for rdma_rxe.
#
# layers: stock
# timeout: 120
test_res_show() {
	rdma link add sr0 type softroce netdev veth0
	rdma link add si0 type softiwarp netdev veth0
	local g0 srv dev
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	# Each server makes its PD, CQ, MR and an RC QP in INIT, then waits.
	ibv_rc_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" >/dev/null 2>&1 &
	srv=$!
	ibv_rc_pingpong -d si0 -p "$P_AUX" >/dev/null 2>&1 &
	local srv2=$!
	wait_listen - "$P_PINGPONG" && wait_listen - "$P_AUX" || return 1
	rdma res show
	for dev in sr0 si0; do
		rdma res show qp | grep "link $dev/" | tee "$TEST_TMP/qp"
		grep -q "type RC state INIT .*comm ibv_rc_pingpong" "$TEST_TMP/qp" ||
			{ echo "no RC QP in INIT owned by ibv_rc_pingpong on $dev"; return 1; }
		local o
		for o in cq mr pd; do
			rdma res show "$o" | grep "dev $dev " | tee "$TEST_TMP/$o"
			grep -q "comm ibv_rc_pingpong" "$TEST_TMP/$o" ||
				{ echo "no $o owned by ibv_rc_pingpong on $dev"; return 1; }
		done
	done
	kill "$srv" "$srv2"
	wait "$srv" "$srv2" 2>/dev/null || true
}
