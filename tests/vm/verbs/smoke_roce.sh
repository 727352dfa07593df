# shellcheck shell=bash
# smoke_roce.
#
# layers: stock debug
# timeout: 300
test_smoke_roce() {
	rdma link add sr0 type softroce netdev veth0
	"$SMOKE" sr0 roce ::ffff:10.0.0.1
	"$SMOKE" sr0 roce fd00::1
}
