# shellcheck shell=bash
# NFS over RDMA over softroce: nfsd's RDMA listeners exist before
# `rdma link add sr0`. The client, in netns b, goes through sr1: written
# over IPv4, read back over IPv6.
#
# layers: stock
# timeout: 300
test_nfs_rdma_roce() {
	trap nfs_down EXIT
	modprobe softrdma
	nfs_server_up "$P_AUX"
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	wait_for 10 grep -rqs fd00:0000:0000:0000:0000:0000:0000:0001 /sys/class/infiniband/sr0/ports/1/gids
	wait_for 10 ip netns exec b grep -rqs fd00:0000:0000:0000:0000:0000:0000:0002 /sys/class/infiniband/sr1/ports/1/gids
	nfs_run b "$P_AUX"
	nfs_down
	rdma link delete sr0
	ip netns exec b rdma link delete sr1
	ulp_unload
}
