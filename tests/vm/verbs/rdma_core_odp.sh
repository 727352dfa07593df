# shellcheck shell=bash
# rdma_core_odp: rdma-core 56.1's own ODP tests (tests/test_odp.py, with
# the system's pyverbs) on softroce, eight 2 MiB huge pages reserved for
# the two that want them. Those that must pass: RC SEND/RECV, mixed ODP
# and pinned MRs, RDMA READ, RDMA WRITE, both atomics, XRC, huge pages
# (with and without an address of the test's), ibv_advise_mr's prefetch
# (sync, async, no fault), UD SENDs from an ODP MR and implicit ODP (the
# whole address space as one MR: traffic, sync and async prefetch); all
# but the atomics and huge pages with the pages dropped (MADV_DONTNEED)
# before every message. Nothing of test_odp skips. About 90 s on the
# stock kernel and on 7.3 (layer k73: ib_umem_odp's hmm_dma_map; 7.3's
# rxe passes RC SEND/RECV, READ, WRITE, both atomics, mixed MRs and UD,
# and skips the rest); the debug kernel
# runs RC SEND/RECV and fetch-and-add (about 120 s there: four cases took
# 218 s).
#
# layers: stock debug
# timeout: 420
test_rdma_core_odp() {
	local out t n want=(test_odp_rc_traffic test_odp_rc_atomic_fetch_and_add)
	local hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	rdma link add sr0 type softroce netdev veth0
	if [[ $(uname -r) != *-softrdma-debug ]]; then
		want+=(test_odp_rc_rdma_read test_odp_xrc_traffic
			test_odp_rc_mixed_mr test_odp_rc_atomic_cmp_and_swp
			test_odp_rc_rdma_write test_odp_rc_huge_traffic
			test_odp_rc_huge_user_addr_traffic
			test_odp_sync_prefetch_rc_traffic test_odp_async_prefetch_rc_traffic
			test_odp_prefetch_sync_no_page_fault_rc_traffic
			test_odp_prefetch_async_no_page_fault_rc_traffic
			test_odp_implicit_rc_traffic test_odp_ud_traffic
			test_odp_implicit_sync_prefetch_rc_traffic
			test_odp_implicit_async_prefetch_rc_traffic)
		echo 8 >"$hp"
	fi
	out=$(cd /opt/softrdma-lab/rdma-core-56.1 &&
		timeout 380 python3 tests/run_tests.py --dev sr0 -v \
			"${want[@]/#/test_odp.OdpTestCase.}" 2>&1)
	local rc=$?
	[ -f "$hp" ] && echo 0 >"$hp"
	[ "$rc" = 0 ] || {
		echo "rdma-core's test_odp on sr0 failed:"
		echo "$out"
		return 1
	}
	grep -E -- '\.\.\. ' <<<"$out"
	for t in "${want[@]}"; do
		grep -E -- "^$t \(" <<<"$out" | grep -q -- '\.\.\. ok$' || {
			echo "rdma-core's $t on sr0 did not end as it must:"
			echo "$out"
			return 1
		}
	done
	n=$(grep -c -- '\.\.\. ok$' <<<"$out")
	echo "rdma-core's test_odp on sr0: $n passed;" \
		"$(grep -c -- '\.\.\. skipped' <<<"$out") skipped; $(tail -n 1 <<<"$out")"
}
