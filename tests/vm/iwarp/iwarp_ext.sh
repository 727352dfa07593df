# shellcheck shell=bash
# RFC 7306 atomics and immediate data, Send with Invalidate of a type 2
# window, between softiwarp devices in both directions; then, with the
# extensions switched off (rdmap_ext=0), they are refused locally.
#
# layers: stock debug
test_iwarp_ext() {
	iwarp_pair
	iwext_run b - 10.0.0.2 ext ext
	iwext_run - b 10.0.0.1 ext ext
	echo 0 >/sys/module/softrdma/parameters/rdmap_ext
	iwext_run b - 10.0.0.2 noext noext
}
