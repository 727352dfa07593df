# shellcheck shell=bash
# UC between two softroce devices: ibv_uc_pingpong with its data checked
# (-c), one packet to many per message.
#
# layers: stock
test_uc_pingpong() {
	rc_pair
	pingpong_softroce ibv_uc_pingpong 50 1 4096 16384
}
