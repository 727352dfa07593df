# shellcheck shell=bash
# The short run meant for the debug kernel (not in DEBUG_SUBSET until
# timed there).
#
# layers: stock
test_verbs_iwarp_short() {
	iwarp_pair
	iwarp_conformance "$P_IWCONF" --small
}
