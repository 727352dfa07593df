# shellcheck shell=bash
# ud_wr_api: UD through both posting and both polling APIs of the
# provider (verbs_ud_api.cpp: ibv_post_send and ibv_wr_set_ud_addr,
# ibv_poll_cq and ibv_cq_ex), both ways between two softroce devices,
# over IPv4 and IPv6 GIDs, every GRH and payload byte checked; what the
# provider refuses on a UD QP.
#
# layers: stock
# timeout: 240
test_ud_wr_api() {
	rc_pair
	"$REPO"/build/user/verbs_ud_api sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$REPO"/build/user/verbs_ud_api sr1 fd00::2 sr0 fd00::1
}
