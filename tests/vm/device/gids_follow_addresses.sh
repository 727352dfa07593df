# shellcheck shell=bash
# gids_follow_addresses.
#
# layers: stock
# timeout: 300
test_gids_follow_addresses() {
	rdma link add sr0 type softroce netdev veth0
	ip addr add 10.0.0.77/24 dev veth0
	ip addr add fd00::77/64 dev veth0 nodad
	wait_for 5 has_gid sr0 ::ffff:10.0.0.77
	wait_for 5 has_gid sr0 fd00::77
	ip addr del 10.0.0.77/24 dev veth0
	ip addr del fd00::77/64 dev veth0
	wait_for 5 sh -c '! ibv_devinfo -v -d sr0 | grep -q "10\.0\.0\.77\|fd00::77"'
	has_gid sr0 ::ffff:10.0.0.1
}
