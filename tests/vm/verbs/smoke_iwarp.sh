# shellcheck shell=bash
# smoke_iwarp.
#
# layers: stock debug
# timeout: 300
test_smoke_iwarp() {
	rdma link add si0 type softiwarp netdev veth0
	"$SMOKE" si0 iwarp
}
