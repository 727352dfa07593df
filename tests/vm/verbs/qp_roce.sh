# shellcheck shell=bash
# qp_roce.
#
# layers: stock debug
# timeout: 300
test_qp_roce() {
	rdma link add sr0 type softroce netdev veth0
	"$QPTEST" sr0 ::ffff:10.0.0.1 ::ffff:10.0.0.2
	"$QPTEST" sr0 fd00::1 fd00::2
}
