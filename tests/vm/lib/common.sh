# shellcheck shell=bash
# Helpers every guest test may use. The runner (tests/vm/run.sh) sources
# lib/*.sh and then one test file, in a process of the test's own, with:
#   REPO       the repository (shared into the guest at the same path)
#   TEST_TMP   an empty directory of the test's own, removed afterwards
#   TEST_PORT  the first of 20 TCP ports of the test's own (below)
: "${REPO:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
: "${TEST_TMP:=/tmp}"
: "${TEST_PORT:=20000}"
export REPO TEST_TMP TEST_PORT

# The test's ports: rping (and what it carries), two spare ones, the
# conformance program (and the next one), ucmatose, the pingpong programs,
# a long ib_send_bw; perftest.sh takes TEST_PORT+10 to +19 in turn.
P_RPING=$TEST_PORT
P_AUX=$((TEST_PORT + 1))
P_AUX2=$((TEST_PORT + 2))
P_IWCONF=$((TEST_PORT + 4))
P_UCMA=$((TEST_PORT + 6))
P_PINGPONG=$((TEST_PORT + 7))
P_SENDBW=$((TEST_PORT + 8))

# The test programs (built by tools/lab build).
SMOKE=$REPO/build/user/verbs_smoke
QPTEST=$REPO/build/user/verbs_qp
RCTEST=$REPO/build/user/verbs_rc
IWTEST=$REPO/build/user/verbs_iwarp
IWEXT=$REPO/build/user/verbs_iwarp_ext
ATOMIC=$REPO/build/user/verbs_atomic
MWTEST=$REPO/build/user/verbs_mw
SRQTEST=$REPO/build/user/verbs_srq
UDTEST=$REPO/build/user/verbs_ud
EXTRAS=$REPO/build/user/verbs_extras
FLUSHTEST=$REPO/build/user/verbs_flush
CMTEST=$REPO/build/user/verbs_cm
KEYTEST=$REPO/build/user/verbs_keys
RESTATE=$REPO/build/user/verbs_restate
XRCTEST=$REPO/build/user/verbs_xrc
ECETEST=$REPO/build/user/verbs_ece
PERF=$REPO/tests/vm/perftest.sh
# For the tests and helpers sourced with this file (and their children).
export P_RPING P_AUX P_AUX2 P_IWCONF P_UCMA P_PINGPONG P_SENDBW
export SMOKE QPTEST RCTEST IWTEST IWEXT ATOMIC MWTEST SRQTEST UDTEST EXTRAS FLUSHTEST CMTEST KEYTEST RESTATE XRCTEST ECETEST PERF

# hangdump_stop PID: end tests/vm/hangdump.sh started in the background
# as PID, quietly: its sleep, then itself (it prints nothing then).
hangdump_stop() {
	pkill -P "$1" sleep 2>/dev/null || true
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# wait_listen NS PORT: wait up to 20 s until a TCP socket listens on PORT
# in netns NS ("-" for the initial one): the pingpong servers, and rdma_cm
# servers over iWARP; or, over RoCE, which has no TCP, a listening rdma_cm
# ID bound to PORT.
wait_listen() {
	local i pre=()
	[ "$1" = - ] || pre=(ip netns exec "$1")
	# shellcheck disable=SC2034 # i counts the tries
	for i in $(seq 200); do
		"${pre[@]}" ss -Hltn "sport = :$2" | grep -q . && return 0
		"${pre[@]}" rdma res show cm_id 2>/dev/null | grep LISTEN |
			grep -q -E ":$2( |$)" && return 0
		sleep 0.1
	done
	echo "nothing listens on port $2 in netns $1"
	return 1
}

# killtree PID: kill PID and every process below it.
killtree() {
	local c
	for c in $(pgrep -P "$1"); do
		killtree "$c"
	done
	kill -KILL "$1" 2>/dev/null
}

# expect_fail MSG CMD...: CMD must fail and print MSG.
expect_fail() {
	local msg=$1 o
	shift
	if o=$("$@" 2>&1); then
		echo "expected failure, got success: $*"
		return 1
	fi
	echo "$o" | grep -q -- "$msg" || {
		echo "'$*' failed without '$msg': $o"
		return 1
	}
}

# has_gid DEV GID: the port's GID table holds GID.
has_gid() {
	ibv_devinfo -v -d "$1" | grep -q "GID\[ *[0-9]*\]:[[:space:]]*$2\b"
}

# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for() {
	local n=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# exits_within PID SECONDS: PID (a child) exits in time; $exit_rc is its
# status. A process still running is killed and fails the test.
exits_within() {
	local n=$(($2 * 10))
	while kill -0 "$1" 2>/dev/null; do
		n=$((n - 1))
		if [ $n -le 0 ]; then
			echo "pid $1 still running after $2 s"
			kill -KILL "$1"
			return 1
		fi
		sleep 0.1
	done
	exit_rc=0
	# shellcheck disable=SC2034 # for the caller
	wait "$1" || exit_rc=$?
}

# gid_index DEV GID: the GID table index of GID (for ibv_rc_pingpong -g).
gid_index() {
	ibv_devinfo -v -d "$1" | sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$2, RoCE v2.*/\1/p" | head -n 1
}

# counter DEV NAME: a hw counter of DEV's port 1 (rdma statistic).
counter() {
	rdma statistic show link "$1/1" | tr -s ' ' '\n' |
		awk -v n="$2" 'f { print; exit } $0 == n { f = 1 }'
}

# counter_is DEV NAME VALUE
counter_is() {
	[ "$(counter "$1" "$2")" = "$3" ]
}
