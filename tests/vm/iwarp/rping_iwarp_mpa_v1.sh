# shellcheck shell=bash
# MPA revision 1 between two softiwarp devices (the parameter holds for
# both: each asks and answers in revision 1), without CRC, then with.
#
# layers: stock
test_rping_iwarp_mpa_v1() {
	iwarp_pair
	iw_param mpa_rev 1
	mpa_rping b - 10.0.0.2 1 0 1 0
	iw_param mpa_crc 1
	mpa_rping - b 10.0.0.1 1 0x40 1 0x40
}
