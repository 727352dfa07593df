# shellcheck shell=bash
# keys_qpns: MR and window keys and QP numbers are drawn at random, on
# softroce and softiwarp: verbs_keys registers, allocates and frees 256
# MRs, 64 windows and 256 QPs and checks the steps between consecutive
# keys and QP numbers and their spread (keys_qpns_anchors: rdma_rxe and
# siw fail those checks; kernel_qp: kernel DMA and fast-registration MR
# keys). About 20 s on the stock kernel; on the debug kernel (minutes there) the
# KUnit cases and the ktest module's keys check cover the same code.
#
# layers: stock
# timeout: 600
test_keys_qpns() {
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	rdma link add si0 type softiwarp netdev veth0
	"$KEYTEST" sr1
	"$KEYTEST" si0
}
