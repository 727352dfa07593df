# shellcheck shell=bash
# libfabric (trixie's libfabric-bin: fi_info, fi_pingpong) over its verbs
# provider: FI_EP_MSG endpoints on verbs itself, FI_EP_RDM ones through
# ofi_rxm on verbs. The verbs provider finds a device by the netdev named
# in FI_VERBS_IFACE.

# fi_rows FILE: how many of the six default sizes (64 B to 1 MiB, ten round
# trips each) FILE reports.
fi_rows() {
	grep -c -E '^(64|256|1k|4k|64k|1m) +10 +=10 ' "$1" || true
}

# fi_pingpong_run EP SRV_NS SRV_IF CLI_NS CLI_IF SRV_IP: one fi_pingpong
# run, EP msg or rdm, the server in netns SRV_NS ("-": the initial one) on
# the device of SRV_IF, the client in CLI_NS on CLI_IF's, connecting to
# SRV_IP. Every default size, 10 round trips each, and -c: each side
# checks the bytes of every message it receives (a wrong byte ends it
# with an error before its next size). Both must exit 0 within 150 s and
# report all six sizes.
# An RDM side that dies as it closes (ofi_rxm reposting a receive to a
# closed connection's endpoint, which a completion left in the CQ after
# its QP was destroyed used to make it do) fails like any other exit;
# but one whose only error is a flushed receive read after every size
# passed on both sides (softiwarp's server, now and then, as the client
# goes: not understood yet) runs once more, and fails if it does again.
fi_pingpong_run() {
	local rc=0
	fi_pingpong_once "$@" || rc=$?
	[ $rc = 2 ] || return $rc
	echo "fi_pingpong -e $1: only a flushed receive as it closed, once more"
	fi_pingpong_once "$@"
}

# fi_pingpong_once: one run of fi_pingpong_run's. 2: the failure above.
fi_pingpong_once() {
	local ep=$1 sns=$2 sif=$3 cns=$4 cif=$5 ip=$6 prov=verbs spre=() cpre=()
	local srv dog rc=0 src=0 t0=$SECONDS crows srows
	[ "$ep" = rdm ] && prov="verbs;ofi_rxm"
	[ "$sns" = - ] || spre=(ip netns exec "$sns")
	[ "$cns" = - ] || cpre=(ip netns exec "$cns")
	echo "== fi_pingpong -p '$prov' -e $ep: $cif ($cns) to $sif ($sns)"
	# Line-buffered: each size's report is in the file as the size ends.
	"${spre[@]}" env FI_VERBS_IFACE="$sif" timeout 150 stdbuf -oL fi_pingpong -p "$prov" \
		-e "$ep" -c -B "$P_AUX" >"$TEST_TMP"/fi-srv.log 2>&1 &
	srv=$!
	wait_listen "$sns" "$P_AUX" || rc=1
	# A side about to time out: where it waits (an RDM side has hung
	# as it closed, after its last size).
	"$REPO/tests/vm/hangdump.sh" 140 fi_pingpong "$sns" "$cns" >"$TEST_TMP"/fi-hang.log 2>&1 &
	dog=$!
	"${cpre[@]}" env FI_VERBS_IFACE="$cif" timeout 150 stdbuf -oL fi_pingpong -p "$prov" \
		-e "$ep" -c -P "$P_AUX" "$ip" >"$TEST_TMP"/fi-cli.log 2>&1 || rc=$?
	wait $srv || src=$?
	hangdump_stop $dog
	crows=$(fi_rows "$TEST_TMP"/fi-cli.log)
	srows=$(fi_rows "$TEST_TMP"/fi-srv.log)
	if [ $rc != 0 ] || [ $src != 0 ] || [ "$crows" != 6 ] || [ "$srows" != 6 ]; then
		echo "fi_pingpong -e $ep: client exit $rc, $crows of 6 sizes;" \
			"server exit $src, $srows of 6 sizes"
		echo "-- client"; cat "$TEST_TMP"/fi-cli.log
		echo "-- server"; cat "$TEST_TMP"/fi-srv.log
		[ -s "$TEST_TMP"/fi-hang.log ] && cat "$TEST_TMP"/fi-hang.log
		if [ "$ep" = rdm ] && [ $rc = 0 ] && [ "$crows" = 6 ] && [ "$srows" = 6 ] &&
			[ "$(grep -c '\[error\]' "$TEST_TMP"/fi-srv.log)" = 1 ] &&
			grep -q 'cq_readerr: Work Request Flushed Error' "$TEST_TMP"/fi-srv.log; then
			return 2
		fi
		return 1
	fi
	cat "$TEST_TMP"/fi-cli.log
	echo "($((SECONDS - t0)) s)"
}
