# shellcheck shell=bash
# rdma_core_odp: rdma-core 56.1's own ODP tests (tests/test_odp.py, with
# the system's pyverbs) on softroce. Those that must pass: RC SEND/RECV,
# mixed ODP and pinned MRs, RDMA READ, RDMA WRITE, both atomics, XRC, and
# ibv_advise_mr's prefetch (sync, async, no fault), each with the pages
# dropped (MADV_DONTNEED) before every message. What skips, and why:
# implicit ODP (not offered: EOPNOTSUPP), UD (softroce reports no UD ODP:
# its UD paths do not wait for pages), huge pages (none in the guest).
#
# layers: stock debug
# timeout: 300
test_rdma_core_odp() {
	local out t n
	rdma link add sr0 type softroce netdev veth0
	out=$(cd /opt/softrdma-lab/rdma-core-56.1 &&
		timeout 270 python3 tests/run_tests.py --dev sr0 -v test_odp 2>&1) || {
		echo "rdma-core's test_odp on sr0 failed:"
		echo "$out"
		return 1
	}
	echo "$out"
	for t in test_odp_rc_traffic test_odp_rc_mixed_mr \
		test_odp_rc_atomic_cmp_and_swp test_odp_rc_atomic_fetch_and_add \
		test_odp_rc_rdma_read test_odp_rc_rdma_write test_odp_xrc_traffic \
		test_odp_sync_prefetch_rc_traffic test_odp_async_prefetch_rc_traffic \
		test_odp_prefetch_sync_no_page_fault_rc_traffic \
		test_odp_prefetch_async_no_page_fault_rc_traffic; do
		grep -E -- "^$t \(" <<<"$out" | grep -q -- '\.\.\. ok$' || {
			echo "rdma-core's $t on sr0 did not pass"
			return 1
		}
	done
	n=$(grep -c -- '\.\.\. ok$' <<<"$out")
	echo "rdma-core's test_odp on sr0: $n passed;" \
		"$(grep -c -- '\.\.\. skipped' <<<"$out") skipped; $(tail -n 1 <<<"$out")"
}
