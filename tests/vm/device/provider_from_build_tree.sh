# shellcheck shell=bash
# provider_from_build_tree.
#
# layers: stock
# timeout: 300
test_provider_from_build_tree() {
	rdma link add sr0 type softroce netdev veth0
	mv /etc/libibverbs.d/softrdma.driver "$TEST_TMP"/softrdma.driver.off
	trap 'mv $TEST_TMP/softrdma.driver.off /etc/libibverbs.d/softrdma.driver' EXIT
	! "$SMOKE" sr0 roce
	RDMAV_DRIVERS=$REPO/build/user/libsoftrdma "$SMOKE" sr0 roce ::ffff:10.0.0.1
}
