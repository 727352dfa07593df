# shellcheck shell=bash
# rdma_core_mr: rdma-core's own MR and MW tests (tests/test_mr.py of the
# source tree tools/lab setup unpacked, with the system's pyverbs) on
# softroce. Among them the two [9] found failing: test_mr_rereg_pd and
# test_mr_rereg_addr (a SEND into a receive whose MR was moved to another
# PD or range fails at the sender with "Remote operation error"; the QPs
# then come back to RTS with the attributes query reported, and the
# traffic after it finds no completion left over from the error). About
# 30 s.
#
# layers: stock
# timeout: 180
test_rdma_core_mr() {
	local out t
	rdma link add sr0 type softroce netdev veth0
	out=$(cd /opt/softrdma-lab/rdma-core-56.1 &&
		timeout 150 python3 tests/run_tests.py --dev sr0 -v test_mr 2>&1) || {
		echo "rdma-core's test_mr on sr0 failed:"
		echo "$out"
		return 1
	}
	# unittest -v names a test by its docstring's first line if it has one.
	for t in "test_mr_rereg_addr " "Test that cover rereg MR's PD with this flow:" \
		"test_mr_rereg_access " "test_mw_type2_invalidate_remote "; do
		grep -F -- "$t" <<<"$out" | grep -q -- '\.\.\. ok$' || {
			echo "rdma-core's test ($t) on sr0 did not pass:"
			echo "$out"
			return 1
		}
	done
	echo "rdma-core's test_mr on sr0: $(grep -c -- '\.\.\. ok$' <<<"$out") passed;" \
		"$(tail -n 1 <<<"$out")"
}
