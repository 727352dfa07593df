# shellcheck shell=bash
# interop_rxe_ipv6.
#
# layers: stock
test_interop_rxe_ipv6() {
	interop_setup
	trap interop_cleanup EXIT
	"$RCTEST" rxe0 fd00::1 sr1 fd00::2
	"$RCTEST" sr1 fd00::2 rxe0 fd00::1
}
