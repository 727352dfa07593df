# shellcheck shell=bash
# rdma_core_qp: rdma-core's own QP tests (tests/test_qp.py of the source
# tree tools/lab setup unpacked, run with the system's pyverbs) on
# softiwarp and softroce. On an RNIC a new RC QP is in INIT, as siw's are;
# elsewhere in RESET. About 5 s.
#
# layers: stock
# timeout: 120
test_rdma_core_qp() {
	local dev out t
	rdma link add si0 type softiwarp netdev veth0
	rdma link add sr0 type softroce netdev veth0
	for dev in si0 sr0; do
		out=$(cd /opt/softrdma-lab/rdma-core-56.1 &&
			timeout 100 python3 tests/run_tests.py --dev "$dev" -v test_qp 2>&1) || {
			echo "rdma-core's test_qp on $dev failed:"
			echo "$out"
			return 1
		}
		# The RC tests ran (not skipped) and passed.
		for t in test_create_rc_qp_no_attr test_create_rc_qp_with_attr test_query_rc_qp; do
			grep -A1 "^$t " <<<"$out" | grep -q -- '\.\.\. ok$' || {
				echo "rdma-core's $t on $dev did not pass:"
				echo "$out"
				return 1
			}
		done
		echo "rdma-core's test_qp on $dev: $(tail -n 1 <<<"$out")"
	done
}
