# shellcheck shell=bash
# rmmod_refused_while_open.
#
# layers: stock
# timeout: 300
test_rmmod_refused_while_open() {
	rdma link add sr0 type softroce netdev veth0
	"$SMOKE" sr0 hold >"$TEST_TMP"/hold.out &
	local pid=$!
	wait_for 10 grep -q '^ok 1 - open sr0' "$TEST_TMP"/hold.out
	if rmmod softrdma 2>/dev/null; then
		kill $pid
		echo "rmmod succeeded while the device was open"
		return 1
	fi
	kill $pid
	wait $pid 2>/dev/null || true
	sleep 1
	rmmod softrdma
}
