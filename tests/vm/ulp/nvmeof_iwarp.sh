# shellcheck shell=bash
# NVMe over Fabrics over softiwarp: nvmet-rdma and nvme-rdma on si0, fio
# writing and verifying (crc32c) 8 MiB; the target's Reads of the host's
# data are RDMA Reads with Invalidate. Then the ULPs go and softrdma
# unloads right after.
#
# Meant for the debug layer too (KASAN, lockdep and kmemleak watching the
# unload right after the ULPs disconnect), but not yet run on the debug
# kernel: stock layer only until it has passed there.
# layers: stock
# timeout: 300
test_nvmeof_iwarp() {
	trap nvmeof_down EXIT
	modprobe softrdma
	rdma link add si0 type softiwarp netdev veth0
	nvmeof_run 10.0.0.1
	rdma link delete si0
	ulp_unload
}
