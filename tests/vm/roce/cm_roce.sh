# shellcheck shell=bash
# cm_roce: the RDMA CM between two softroce devices, each way: a connect
# with private data both ways, data over the QP, disconnect; a reject with
# private data (status 28); no listener (status 8); an address nobody
# answers (ADDR_ERROR). See verbs_cm.cpp.
#
# layers: stock debug
# timeout: 180
test_cm_roce() {
	rc_pair
	cm_run b 10.0.0.2 - 10.0.0.77
	cm_run - 10.0.0.1 b 10.0.0.77
}
