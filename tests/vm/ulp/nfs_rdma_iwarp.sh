# shellcheck shell=bash
# NFS over RDMA over softiwarp, the way a server starts before the device:
# nfsd's RDMA listeners (IPv4, and IPv6 afonly, on one port) exist before
# `rdma link add si0`, so the RDMA CM listens on si0 for both when it
# comes (cma_add_one()). The client, in netns b, goes through si1: written
# over IPv4, read back over IPv6. The client offers an ORD of 0: svcrdma
# takes its initiator depth from the peer's IRD and refuses 0.
#
# layers: stock
# timeout: 300
test_nfs_rdma_iwarp() {
	trap nfs_down EXIT
	modprobe softrdma
	nfs_server_up "$P_AUX"
	rdma link add si0 type softiwarp netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	wait_listen - "$P_AUX"
	# Both listeners on si0's netdev: one per address family.
	ss -Hltn "sport = :$P_AUX"
	[ "$(ss -Hltn "sport = :$P_AUX" | wc -l)" = 2 ]
	nfs_run b "$P_AUX"
	nfs_down
	rdma link delete si0
	ip netns exec b rdma link delete si1
	ulp_unload
}
