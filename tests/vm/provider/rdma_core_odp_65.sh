# shellcheck shell=bash
# rdma_core_odp_65: rdma-core 65's own ODP tests (tests/test_odp.py, with
# the sid root's pyverbs 65) on softroce, on the stock kernel; eight 2 MiB
# huge pages for those that want them. Beside 56.1's cases (verbs/
# rdma_core_odp), 65 has RDMA FLUSH and ATOMIC WRITE into ODP memory
# through the ibv_wr_* API and registrations by ibv_reg_mr_ex (MREx), of
# explicit, implicit and huge-page ODP MRs. All of them, 23, must pass;
# none may skip. About 140 s.
#
# layers: sid
# timeout: 420
test_rdma_core_odp_65() {
	local out rc=0 n ok
	local hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	rdma link add sr0 type softroce netdev veth0
	echo 8 >"$hp"
	out=$(cd /opt/softrdma-lab/rdma-core-65.0 &&
		timeout 380 python3 tests/run_tests.py --dev sr0 -v test_odp 2>&1) || rc=$?
	echo 0 >"$hp"
	grep -E -- '\.\.\. |^Ran ' <<<"$out"
	n=$(grep -E -o '^Ran [0-9]+ tests?' <<<"$out" | grep -E -o '[0-9]+' || true)
	ok=$(grep -c -- '\.\.\. ok$' <<<"$out" || true)
	echo "rdma-core 65's test_odp on sr0: $ok of ${n:-?} passed (exit $rc)"
	if [ "$rc" != 0 ] || [ -z "$n" ] || [ "$n" -lt 23 ] || [ "$ok" != "$n" ]; then
		echo "$out"
		return 1
	fi
}
