# shellcheck shell=bash
# interop_rxe_transfers.
#
# layers: stock
test_interop_rxe_transfers() {
	interop_setup
	trap interop_cleanup EXIT
	# rxe requests, softroce responds; then the other way round.
	"$RCTEST" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$RCTEST" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1
}
