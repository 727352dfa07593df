# shellcheck shell=bash
# interop_rxe_pingpong.
#
# layers: stock
test_interop_rxe_pingpong() {
	interop_setup
	trap interop_cleanup EXIT
	pingpong_interop ibv_rc_pingpong 20 1 4096 65536
}
