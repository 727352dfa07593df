# shellcheck shell=bash
# Our verbs conformance program over rdma_cm on softiwarp.
#
# layers: stock
test_verbs_iwarp() {
	iwarp_pair
	iwarp_conformance "$P_IWCONF"
}
