# shellcheck shell=bash
# odp_verbs: on-demand paging, every byte checked (tests/vm/verbs_odp.cpp):
# ODP caps, SEND, RDMA WRITE, RDMA READ and atomics between softroce
# devices on ODP MRs whose pages are absent (fresh memory, MADV_DONTNEED,
# mprotect), a WRITE after fork() landing in the parent's page,
# ibv_advise_mr, munmap (exact error completions, also while a 4 MiB
# WRITE is on its way), and UD datagrams from ODP pages into ODP pages,
# absent on both ends (statuses, GRH and bytes; none dropped). softiwarp's
# ODP: odp_iwarp.
#
# layers: stock debug
# timeout: 240
test_odp_verbs() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$REPO/build/user/verbs_odp" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}
