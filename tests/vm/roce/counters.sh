# shellcheck shell=bash
# counters.
#
# layers: stock
test_counters() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	rdma statistic show link sr0/1
	local c noqp
	for c in tx_packets rx_packets rx_icrc_errors rx_malformed \
		rx_unknown_qp rx_qp_state_drops retransmits seq_naks_sent \
		rnr_naks_sent duplicate_requests rx_backlog_drops acks_coalesced \
		tx_zcopy_fpdus tx_errors sq_kicks poller_sends \
		loop_merged_packets rx_train_packets tx_zcopy_packets \
		rp_cnp_ignored; do
		[ "$(counter sr0 "$c")" = 0 ]
	done
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	rdma statistic show link sr0/1
	# sr0's SENDs and WRITEs went as trains, which the veth passed on
	# whole: sr1 placed their packets straight from them. Those of a
	# few packets went with the MR's pages.
	ip netns exec b rdma statistic show link sr1/1
	[ "$(ip netns exec b bash -c "$(declare -f counter); counter sr1 rx_train_packets")" -gt 0 ]
	[ "$(counter sr0 tx_zcopy_packets)" -gt 0 ]
	[ "$(counter sr0 tx_packets)" -gt 0 ]
	[ "$(counter sr0 rx_packets)" -gt 0 ]
	[ "$(counter sr0 rx_icrc_errors)" = 0 ]
	[ "$(counter sr0 rx_malformed)" = 0 ]
	noqp=$(counter sr0 rx_unknown_qp)
	# A SEND ONLY to QP 0x11 whose ICRC is wrong: one ICRC error.
	udp_to_sr0 '\x04\x00\xff\xff\x00\x00\x00\x11\x80\x00\x00\x01\xde\xad\xbe\xef'
	wait_for 5 counter_is sr0 rx_icrc_errors 1
	# Shorter than a BTH and an ICRC: one malformed packet.
	udp_to_sr0 '\x04\x00\xff\xff\x00\x00'
	wait_for 5 counter_is sr0 rx_malformed 1
	sleep 0.5
	rdma statistic show link sr0/1
	counter_is sr0 rx_icrc_errors 1
	counter_is sr0 rx_malformed 1
	counter_is sr0 rx_unknown_qp "$noqp"
	# 4 MiB READs at MTU 1024: 4096 answer packets each, four times what
	# a veth backlog holds, paced so that none is lost and resent. (A
	# 4 s ACK timeout, -u 20: a busy host may stall the guest for longer
	# than the default 67 ms, and that resend would be no loss.)
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_read_bw -s 4194304 -n 5 -m 1024 -u 20
	counter_is sr0 retransmits 0
	ip netns exec b rdma statistic show link sr1/1
	ip netns exec b bash -c "$(declare -f counter counter_is); counter_is sr1 retransmits 0"
	# Requests posted as one list arrive in one receive batch: their ACKs
	# coalesce.
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --sizes 64 --burst 64 \
		--burst-size 64 --list --no-err >/dev/null
	ip netns exec b rdma statistic show link sr1/1
	[ "$(ip netns exec b bash -c "$(declare -f counter); counter sr1 acks_coalesced")" -gt 0 ]
	# A CNP to a QP in the middle of a message (a SEND waiting out RNR
	# NAKs for 8 s: python's start on a busy host has taken more than 3):
	# counted and ignored; the QP goes on, its bytes arrive (verbs_rc
	# checks them). No responder takes it for a request.
	local qpn
	"$RCTEST" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --sizes 64 --rnr-ms 8000 \
		>"$TEST_TMP"/cnp.log 2>&1 &
	local rc_pid=$!
	for _ in $(seq 100); do
		qpn=$(rdma res show qp link sr0/1 | awk '{
			delete f
			for (i = 1; i < NF; i++) f[$i] = $(i + 1)
			if (f["type"] == "RC" && f["state"] == "RTS") { print f["lqpn"]; exit }
		}')
		[ -z "$qpn" ] || break
		sleep 0.05
	done
	[ -n "$qpn" ] || { echo "no RC QP of sr0 in RTS"; return 1; }
	cnp_to_sr0 "$qpn"
	wait_for 5 counter_is sr0 rp_cnp_ignored 1
	wait $rc_pid || { cat "$TEST_TMP"/cnp.log; return 1; }
	counter_is sr0 rx_malformed 1
	counter_is sr0 rx_unknown_qp "$noqp"
}
