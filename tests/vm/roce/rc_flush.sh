# shellcheck shell=bash
# rc_flush: RDMA FLUSH and ATOMIC WRITE (IBTA 1.5) between two softroce
# devices, bytes and statuses checked (verbs_flush.cpp); softiwarp, which
# has neither, refuses a QP that asks for them.
#
# layers: stock debug
# timeout: 300
test_rc_flush() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$FLUSHTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	rdma link add si0 type softiwarp netdev veth0
	"$FLUSHTEST" --refused si0
}
