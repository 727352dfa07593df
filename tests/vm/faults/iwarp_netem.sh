# shellcheck shell=bash
# TCP under 5 % loss, reordering and duplicates on both veths: every
# transfer completes (rping's bytes checked at both ends), nothing is left.
# A lost FIN is sent again: the close keeps the socket until it is acked.
#
# layers: stock
test_iwarp_netem() {
	modprobe sch_netem
	iwarp_pair
	tc qdisc add dev veth0 root netem loss 5% delay 2ms reorder 25% 50% duplicate 2%
	ip netns exec b tc qdisc add dev veth1 root netem loss 5% delay 2ms reorder 25% 50% duplicate 2%
	trap 'tc qdisc del dev veth0 root; ip netns exec b tc qdisc del dev veth1 root' EXIT
	rping_run b - 10.0.0.2 10 65535
	rping_run - b 10.0.0.1 10 1000
	netem_perf ib_write_bw -R -s 65536 -n 50
	netem_perf ib_read_bw -R -s 65536 -n 50
	netem_perf ib_send_bw -R -s 4096 -n 50
	# The faults happened.
	tc -s qdisc show dev veth0 | tee /dev/stderr | grep -q 'dropped [1-9]'
	iwarp_gone
}
