# shellcheck shell=bash
# UC between rdma_rxe and softroce: ibv_uc_pingpong with its data checked
# (-c), each side serving in turn, one packet to many per message.
#
# layers: stock
test_interop_rxe_uc_pingpong() {
	interop_setup
	trap interop_cleanup EXIT
	pingpong_interop ibv_uc_pingpong 20 1 4096 16384
}
