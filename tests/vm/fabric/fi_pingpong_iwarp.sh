# shellcheck shell=bash
# fi_pingpong_iwarp: libfabric's fi_pingpong between two softiwarp
# devices, MSG endpoints (verbs) and RDM ones (verbs;ofi_rxm), bytes
# checked.
#
# layers: stock
# timeout: 240
test_fi_pingpong_iwarp() {
	iwarp_pair
	fi_pingpong_run msg - veth0 b veth1 10.0.0.1
	fi_pingpong_run rdm - veth0 b veth1 10.0.0.1
}
