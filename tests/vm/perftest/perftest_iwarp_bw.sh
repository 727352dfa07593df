# shellcheck shell=bash
# perftest's bandwidth programs between softiwarp on veth0 and on veth1
# (b): the smallest size, a 64 KiB and a 1 MiB message (every size, -a,
# took minutes; tools/lab bench sweeps the sizes).
#
# layers: stock
test_perftest_iwarp_bw() {
	iwarp_pair
	IW_SIZES="2 65536 1048576" IW_PROGS="ib_send_bw ib_write_bw ib_read_bw" iw_matrix si1 b si0 - 10.0.0.2
	# Payloads of a page or more went to TCP by reference: Sends and
	# Writes from the client, Read Responses from the server.
	rdma statistic show link si0/1
	[ "$(counter si0 tx_zcopy_fpdus)" -gt 0 ]
	[ "$(ip netns exec b bash -c "$(declare -f counter); counter si1 tx_zcopy_fpdus")" -gt 0 ]
}
