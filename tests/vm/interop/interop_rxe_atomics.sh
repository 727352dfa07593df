# shellcheck shell=bash
# interop_rxe_atomics.
#
# layers: stock
test_interop_rxe_atomics() {
	interop_setup
	trap interop_cleanup EXIT
	"$ATOMIC" rxe0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$ATOMIC" sr1 ::ffff:10.0.0.2 rxe0 ::ffff:10.0.0.1
}
