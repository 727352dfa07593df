# shellcheck shell=bash
# qp_iwarp.
#
# layers: stock
# timeout: 300
test_qp_iwarp() {
	rdma link add si0 type softiwarp netdev veth0
	"$QPTEST" si0 - -
}
