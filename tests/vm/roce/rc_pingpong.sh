# shellcheck shell=bash
# rc_pingpong.
#
# layers: stock
test_rc_pingpong() {
	rc_pair
	pingpong_softroce ibv_rc_pingpong 50 1 4096 65536
}
