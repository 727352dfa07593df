# shellcheck shell=bash
# keys_qpns_anchors: the checks keys_qpns makes can fail. rdma_rxe counts
# its key indices and QP numbers up by one, and siw numbers QPs from 1,
# lowest free first, so a destroyed QP's number comes back at once:
# verbs_keys fails on both, for those reasons (its failed checks are
# printed with the device's name in front).
#
# layers: stock
# timeout: 300
test_keys_qpns_anchors() {
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev veth0
	keys_fail rxe0 'QP numbers held at once: no step between' \
		'MRs held at once key indices: no step between' \
		'windows and MRs both in both halves'
	rdma link delete rxe0
	modprobe siw
	rdma link add siw0 type siw netdev veth0
	keys_fail siw0 'QP numbers one at a time: no value given twice'
}

# keys_fail DEV CHECK...: verbs_keys must fail on DEV, each CHECK among
# the checks that failed.
keys_fail() {
	local dev=$1 out c
	shift
	if out=$("$KEYTEST" "$dev" 2>&1); then
		echo "verbs_keys passed on $dev"
		return 1
	fi
	grep '^not ok' <<<"$out" | sed "s/^/$dev: /"
	for c in "$@"; do
		grep -q "^not ok [0-9]* - $c" <<<"$out" || {
			echo "$dev: no failed check '$c'"
			return 1
		}
	done
}
