# shellcheck shell=bash
# NFS over RDMA over softroce: nfsd's RDMA listeners exist before
# `rdma link add sr0`. Written over IPv4, read back over IPv6.
#
# layers: stock
# timeout: 300
test_nfs_rdma_roce() {
	trap nfs_down EXIT
	modprobe softrdma
	nfs_server_up "$P_AUX"
	rdma link add sr0 type softroce netdev veth0
	wait_for 10 grep -rqs 0000:0000:0000:0000:0000:ffff:0a00:0001 /sys/class/infiniband/sr0/ports/1/gids
	wait_for 10 grep -rqs fd00:0000:0000:0000:0000:0000:0000:0001 /sys/class/infiniband/sr0/ports/1/gids
	nfs_run "$P_AUX"
	nfs_down
	rdma link delete sr0
	ulp_unload
}
