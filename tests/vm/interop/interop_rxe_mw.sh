# shellcheck shell=bash
# interop_rxe_mw.
#
# layers: stock
test_interop_rxe_mw() {
	interop_setup
	trap interop_cleanup EXIT
	# softroce binds, rxe uses and invalidates its windows; then the
	# other way round.
	"$MWTEST" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$MWTEST" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1
}
