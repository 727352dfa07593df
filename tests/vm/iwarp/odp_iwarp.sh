# shellcheck shell=bash
# odp_iwarp: on-demand paging on softiwarp, every byte checked. First its
# caps, MRs and prefetch (verbs_odp DEV); then verbs_iwarp --odp: the SEND,
# RDMA WRITE, RDMA READ and scatter/gather groups with every MR on demand,
# the device's mapping of each message's buffers taken away before it (the
# sink's pages dropped, the source's invalidated, bytes kept): the bytes,
# none past them, every status; then verbs_iwarp_ext ext-odp: RFC 7306's
# immediates and both atomics on ODP pages not mapped (results checked at
# both ends). Both receivers must have stopped the stream for pages
# (rx_odp_waits: the WRITE's and SEND's sinks at the server, the READ's
# at the client) and both ends faulted pages in (odp_faults).
#
# The debug kernel runs the groups' smaller sizes (--small: to 64 KiB).
#
# layers: stock debug
# timeout: 300
test_odp_iwarp() {
	local d small=()
	[[ $(uname -r) != *-softrdma-debug ]] || small=(--small)
	iwarp_pair
	"$REPO/build/user/verbs_odp" si0 || return 1
	iwarp_conformance "$P_IWCONF" --odp "${small[@]}" --only send,write,read,sge || return 1
	iwext_run b - 10.0.0.2 ext-odp ext-odp || return 1
	echo "ext-odp: client $(tail -n 1 "$TEST_TMP"/iwext-cli.log)," \
		"server $(tail -n 1 "$TEST_TMP"/iwext-srv.log)"
	for d in si0 si1; do
		echo "$d: rx_odp_waits $(counter "$d" rx_odp_waits)," \
			"odp_faults $(counter "$d" odp_faults)"
		[ "$(counter "$d" rx_odp_waits)" -gt 0 ] || return 1
		[ "$(counter "$d" odp_faults)" -gt 0 ] || return 1
	done
}
