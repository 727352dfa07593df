# shellcheck shell=bash
# For the debug kernel: the RDMA CM over softroce (GSI QP, UD MADs,
# address handles made and destroyed in atomic context), a few pings each
# way, then the module unloaded with the devices.
#
# layers: debug
# timeout: 400
test_rping_roce_short() {
	rc_pair
	rping_run b - 10.0.0.2 5 64
	rping_run - b 10.0.0.1 5 65535
	rdma link delete sr0
	ip netns exec b rdma link delete sr1
	modprobe -r softrdma
}
