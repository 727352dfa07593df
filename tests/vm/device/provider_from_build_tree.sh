# shellcheck shell=bash
# provider_from_build_tree.
#
# layers: stock
# timeout: 300
test_provider_from_build_tree() {
	rdma link add sr0 type softroce netdev veth0
	mv /etc/libibverbs.d/softrdma.driver "$TEST_TMP"/softrdma.driver.off
	trap 'mv $TEST_TMP/softrdma.driver.off /etc/libibverbs.d/softrdma.driver' EXIT
	# Without the driver file, libibverbs has no provider for sr0: the
	# open itself fails (kept out of the KTAP, where it would read as a
	# failure).
	! "$SMOKE" sr0 roce >"$TEST_TMP"/noprov.log 2>&1
	grep -q '^not ok 1 - open sr0' "$TEST_TMP"/noprov.log ||
		{ cat "$TEST_TMP"/noprov.log; return 1; }
	RDMAV_DRIVERS=$REPO/build/user/libsoftrdma "$SMOKE" sr0 roce ::ffff:10.0.0.1
}
