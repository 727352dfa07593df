# shellcheck shell=bash
# The provider built for rdma-core 65 (build/user-65, private ABI 65) in
# the sid root, whose libibverbs is 65.0 (tools/lab test's sid layer boots
# the stock kernel with it): libibverbs loads that build for a softroce
# device, by its driver file and by RDMAV_DRIVERS, and programs built
# against 65 pass on it across the veth pair: ours (every byte checked),
# ibverbs-utils' ibv_rc_pingpong with its data check (-c), perftest.
#
# layers: sid
# timeout: 300
test_provider_rdma_core_65() {
	local u=$REPO/build/user-65 v pid
	v=$(dpkg-query -W -f '${Version}' libibverbs1)
	echo "libibverbs1 $v"
	[ "${v%%.*}" = 65 ] || { echo "this root's libibverbs is not rdma-core 65's"; return 1; }
	# guest-init.sh gave this root the build for its ABI.
	grep -qx "driver $u/libsoftrdma" /etc/libibverbs.d/softrdma.driver ||
		{ cat /etc/libibverbs.d/softrdma.driver; return 1; }
	rc_pair

	# A process that opens sr0 has mapped the 65 build, and no other.
	"$u/verbs_smoke" sr0 hold >"$TEST_TMP"/hold.log 2>&1 &
	pid=$!
	wait_for 20 grep -q '^ok 1 - open sr0' "$TEST_TMP"/hold.log ||
		{ cat "$TEST_TMP"/hold.log; return 1; }
	grep -o '/[^ ]*libsoftrdma[^ ]*' /proc/$pid/maps | sort -u >"$TEST_TMP"/maps
	kill $pid
	wait $pid 2>/dev/null || true
	cat "$TEST_TMP"/maps
	[ "$(cat "$TEST_TMP"/maps)" = "$u/libsoftrdma-rdmav65.so" ]

	# Without the driver file, no provider for sr0; RDMAV_DRIVERS names
	# the build (libibverbs appends -rdmav65.so).
	mv /etc/libibverbs.d/softrdma.driver "$TEST_TMP"/softrdma.driver.off
	! "$u/verbs_smoke" sr0 roce >"$TEST_TMP"/noprov.log 2>&1
	grep -q '^not ok 1 - open sr0' "$TEST_TMP"/noprov.log ||
		{ cat "$TEST_TMP"/noprov.log; return 1; }
	RDMAV_DRIVERS=$u/libsoftrdma "$u/verbs_smoke" sr0 roce ::ffff:10.0.0.1
	mv "$TEST_TMP"/softrdma.driver.off /etc/libibverbs.d/softrdma.driver

	"$u/verbs_rc" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2
	"$u/verbs_rc" sr0 ::ffff:10.0.0.1 sr1 ::ffff:10.0.0.2 --wr
	pingpong_softroce ibv_rc_pingpong 50 1 4096 65536
	echo "== ib_write_bw -s 65536"
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_write_bw -s 65536 -n 20
	echo "== ib_write_lat -s 2"
	"$PERF" sr1 b sr0 - 10.0.0.2 ib_write_lat -s 2 -n 20
}
