# shellcheck shell=bash
# UCX's protocol layer on softroce: ucx_perftest's UCP tag tests (tag_lat,
# and tag_bw with 20000-byte messages, which UD carries in fragments)
# between sr1 (netns b) and sr0, over UD alone (UCX_TLS=ud_verbs,self)
# and over RC beside it (rc_verbs,ud_verbs,self: UCP wires RC up over
# UD). See ucx_roce for what UCX's UD needs of a completion.
#
# layers: stock
# timeout: 240
test_ucx_ucp_roce() {
	local tls
	rc_pair
	wait_for 10 has_gid sr0 ::ffff:10.0.0.1
	ip netns exec b bash -c "$(declare -f wait_for has_gid); wait_for 10 has_gid sr1 ::ffff:10.0.0.2"
	for tls in ud_verbs,self rc_verbs,ud_verbs,self; do
		ucx_perf "UCX_NET_DEVICES=sr1:1 UCX_TLS=$tls" "" \
			"UCX_NET_DEVICES=sr0:1 UCX_TLS=$tls" "" -t tag_lat -n 1000
		ucx_perf "UCX_NET_DEVICES=sr1:1 UCX_TLS=$tls" "" \
			"UCX_NET_DEVICES=sr0:1 UCX_TLS=$tls" "" -t tag_bw -s 20000 -n 200
	done
	ucx_packets sr0
	ucx_packets sr1
	counter_is sr0 rx_qkey_drops 0
	counter_is sr1 rx_qkey_drops 0
}
