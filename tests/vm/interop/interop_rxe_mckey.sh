# shellcheck shell=bash
# Multicast between rdma_rxe (veth0, the initial netns: rxe receives
# there only) and softroce (veth1, netns b): mckey with rxe sending to two
# softroce receivers, then softroce sending to two rxe receivers; the
# Q_Key the RDMA CM gives RoCE groups (0x01234567) matches on both.
# rxe's mckey is paced (see mckey_run): else rxe drops what it has not
# sent yet when mckey exits.
#
# layers: stock
# timeout: 120
test_interop_rxe_mckey() {
	interop_setup
	trap interop_cleanup EXIT
	MCKEY_PACED=1 mckey_run 239.3.0.1 20 512 - 10.0.0.1 b 10.0.0.2 b 10.0.0.2
	mckey_run 239.3.0.2 20 512 b 10.0.0.2 - 10.0.0.1 - 10.0.0.1
	ip netns exec b bash -c "$(declare -f counter counter_is); counter_is sr1 rx_qkey_drops 0"
}
