# shellcheck shell=bash
# UCX (ucx_perftest, ucx_info) and Open MPI over UCX on softroce.
# ucx_perftest runs without MPI (-P 0): the server takes the test's
# parameters from the client over TCP. Few warm-up iterations: TCG is
# slow.

# UCX's own noise off; errors still print.
export UCX_WARN_UNUSED_ENV_VARS=n

# ucx_port: a TCP port of the test's own for the next ucx_perftest run,
# a different one each run (see lib/common.sh; perftest.sh takes the ten
# from TEST_PORT+10).
ucx_port() {
	local n
	n=$(cat "$TEST_TMP"/.ucx-runs 2>/dev/null || echo 0)
	echo $((n + 1)) >"$TEST_TMP"/.ucx-runs
	echo $((TEST_PORT + 10 + n % 10))
}

# ucx_perf SERVER_ENV SERVER_DEV CLIENT_ENV CLIENT_DEV ARGS...: one
# ucx_perftest run, ARGS on both sides, the server in netns b with the
# environment SERVER_ENV (space-separated NAME=VALUE, may be empty) and,
# if SERVER_DEV is not empty, "-d SERVER_DEV" (a UCT test's device), the
# client likewise in the initial namespace, connecting to 10.0.0.2. Both
# must exit 0 within 60 s, neither may print a UCX error or warning, and
# the client must print its final results.
ucx_perf() {
	local senv=$1 sdev=$2 cenv=$3 cdev=$4 port srv rc=0 t0=$SECONDS
	shift 4
	port=$(ucx_port)
	echo "== ucx_perftest $* ($cenv${cdev:+ -d $cdev} to $senv${sdev:+ -d $sdev})"
	# shellcheck disable=SC2086 # the environments split on purpose
	ip netns exec b env $senv timeout 60 ucx_perftest -P 0 -p "$port" \
		${sdev:+-d "$sdev"} -w 10 "$@" >"$TEST_TMP"/ucx-srv.log 2>&1 &
	srv=$!
	wait_listen b "$port" || rc=1
	# shellcheck disable=SC2086
	env $cenv timeout 60 ucx_perftest -P 0 -p "$port" ${cdev:+-d "$cdev"} \
		-w 10 "$@" 10.0.0.2 >"$TEST_TMP"/ucx-cli.log 2>&1 || rc=$?
	wait $srv || rc=$((rc + 100 + $?))
	if [ $rc != 0 ] || ! grep -q '^Final:' "$TEST_TMP"/ucx-cli.log ||
		grep -q -E 'UCX +(ERROR|WARN)' "$TEST_TMP"/ucx-cli.log "$TEST_TMP"/ucx-srv.log; then
		echo "ucx_perftest $*: exit $rc"
		echo "-- client"; cat "$TEST_TMP"/ucx-cli.log
		echo "-- server"; cat "$TEST_TMP"/ucx-srv.log
		return 1
	fi
	grep '^Final:' "$TEST_TMP"/ucx-cli.log
	echo "($((SECONDS - t0)) s)"
}

# ucx_packets DEV: DEV's packets sent and received (rdma statistic).
ucx_packets() {
	echo "$1: tx $(counter "$1" tx_packets), rx $(counter "$1" rx_packets)"
}

# ucx_has_tl DEV TL: ucx_info -d lists transport TL on device DEV.
ucx_has_tl() {
	ucx_info -d | awk -v tl="$2" -v dev="$1" '
		$2 == "Transport:" { t = $3 }
		$2 == "Device:" && t == tl && $3 == dev { found = 1 }
		END { exit !found }'
}
