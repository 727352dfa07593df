# shellcheck shell=bash
# The short conformance run (verbs_iwarp --small) meant for the debug
# kernel; it runs on the stock kernel until it has been timed there.
#
# layers: stock
test_verbs_iwarp_short() {
	iwarp_pair
	iwarp_conformance "$P_IWCONF" --small
}
