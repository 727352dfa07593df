# shellcheck shell=bash
# NVMe over Fabrics over softroce: nvmet-rdma and nvme-rdma on sr0 (the
# RDMA CM over its GSI QP), fio writing and verifying (crc32c) 8 MiB.
#
# layers: stock debug
# timeout: 300
test_nvmeof_roce() {
	trap nvmeof_down EXIT
	modprobe softrdma
	rdma link add sr0 type softroce netdev veth0
	wait_for 10 grep -rqs 0000:0000:0000:0000:0000:ffff:0a00:0001 /sys/class/infiniband/sr0/ports/1/gids
	nvmeof_run 10.0.0.1
	rdma link delete sr0
	ulp_unload
}
