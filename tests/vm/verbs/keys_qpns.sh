# shellcheck shell=bash
# keys_qpns: MR and window keys and QP numbers are drawn at random, on
# softroce and softiwarp: verbs_keys registers, allocates and frees 256
# MRs, 64 windows and 256 QPs and checks the steps between consecutive
# keys and QP numbers and their spread. rdma_rxe's sequential indices and
# QP numbers and siw's reused QP numbers fail the same checks: the checks
# can fail. (Kernel DMA and fast-registration MR keys: kernel_qp.)
#
# layers: stock debug
# timeout: 300
test_keys_qpns() {
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	rdma link add si0 type softiwarp netdev veth0
	"$KEYTEST" sr1
	"$KEYTEST" si0
	expect_fail 'QP numbers held at once: no step between consecutive values repeats' \
		"$KEYTEST" rxe0
	modprobe siw
	rdma link add siw0 type siw netdev veth0
	expect_fail 'QP numbers one at a time: no value given twice' "$KEYTEST" siw0
}
