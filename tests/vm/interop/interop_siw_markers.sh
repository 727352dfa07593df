# shellcheck shell=bash
# The default never asks for markers, and a peer that asks gets them: an
# initiator asking for markers from siw (which has none) is refused.
#
# layers: stock
test_interop_siw_markers() {
	modprobe siw
	modprobe softrdma mpa_markers=1
	rdma link add siw0 type siw netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	local rc=0 srv
	timeout 60 rping -s -a 10.0.0.1 -p "$P_RPING" -C 2 -S 64 >/dev/null 2>&1 &
	srv=$!
	wait_listen - "$P_RPING"
	if ip netns exec b timeout 30 rping -c -a 10.0.0.1 -p "$P_RPING" -C 2 -S 64 -V \
		>"$TEST_TMP"/rping-cli.log 2>&1; then
		echo "siw accepted a request for markers"
		rc=1
	fi
	kill $srv 2>/dev/null || true
	wait $srv 2>/dev/null || true
	rdma link delete siw0
	modprobe -r siw
	return $rc
}
