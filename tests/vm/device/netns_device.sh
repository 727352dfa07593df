# shellcheck shell=bash
# netns_device.
#
# layers: stock
# timeout: 300
test_netns_device() {
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	ip netns exec b ibv_devinfo -v -d sr1 | grep -q '::ffff:10\.0\.0\.2'
	ip netns exec b "$SMOKE" sr1 roce ::ffff:10.0.0.2
}
