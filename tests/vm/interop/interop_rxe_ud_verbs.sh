# shellcheck shell=bash
# interop_rxe_ud_verbs: UD datagrams both ways between rdma_rxe (veth0)
# and softroce (veth1, netns b) with every GRH and payload byte checked
# where it arrives (verbs_ud_api.cpp, rxe0 as its side A): source QP,
# IBV_WC_GRH, immediate data, inline sends, the Q_Key rules.
#
# layers: stock
# timeout: 240
test_interop_rxe_ud_verbs() {
	interop_setup
	trap interop_cleanup EXIT
	"$REPO"/build/user/verbs_ud_api rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --interop
}
