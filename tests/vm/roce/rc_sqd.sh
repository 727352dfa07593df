# shellcheck shell=bash
# rc_sqd: drain a burst of WRITEs. Then again with the ACKs 20 ms late, so
# the 256-packet window fills inside the first (512 KiB) WRITE: it must
# finish in SQD, and none after it start.
#
# layers: stock
test_rc_sqd() {
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	"$REPO/build/user/verbs_sqd" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	modprobe sch_netem
	ip netns exec b tc qdisc add dev veth1 root netem delay 20ms
	trap 'ip netns exec b tc qdisc del dev veth1 root' EXIT
	"$REPO/build/user/verbs_sqd" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
}
