#!/bin/bash
# Guest integration tests: the runner. Each test is one file,
# tests/vm/AREA/NAME.sh, defining test_NAME; the runner finds them there.
#   run.sh --list [--layer L] [NAME|GLOB...]  name, area, layers, limit
#   run.sh [--layer L | --debug] [--out FILE] [--ktap FILE] [NAME|GLOB...]
# Runs the tests of layer L (stock, the default, or debug; --debug is
# --layer debug), or those NAMEs/GLOBs select (matched against NAME and
# AREA/NAME; with --layer, only among that layer's tests). Prints KTAP
# ("ok N NAME # time=Ss" per test, the "ok"/"not ok" lines a test's
# programs print nested as its subtests), writes "PASS name"/"FAIL name"
# per test to FILE, and exits 0 only if all passed.
#
# A test file's header (its first comment block) may say:
#   # layers: stock debug    which layers run it (none: only by name)
#   # timeout: SECONDS       its time limit (default TEST_TIMEOUT, 900)
#   # count: subtests        count its subtests, not itself (KUnit)
# Each test runs in a session of its own (tests/vm/lib/run-one.sh) with a
# temp dir ($TEST_TMP) and 20 TCP ports ($TEST_PORT...) of its own. After
# it, passed, failed or killed at its limit, the runner kills what is left
# of its session and restores the fixture: no rdma device, no softrdma,
# siw or rxe module, no qdisc or tc filter, no netns but b, no extra
# netdev, veth0/veth1 as guest-init.sh made them.
set -u
VM=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$VM/../.." && pwd)
export REPO
TEST_TIMEOUT=${TEST_TIMEOUT:-900}

layer=
list=0
out=/dev/null
ktap=/dev/null
pats=()
while [ $# -gt 0 ]; do
	case "$1" in
	--list) list=1; shift ;;
	--debug) layer=debug; shift ;;
	--layer) layer=$2; shift 2 ;;
	--layer=*) layer=${1#*=}; shift ;;
	--out) out=$2; shift 2 ;;
	--ktap) ktap=$2; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) pats+=("$1"); shift ;;
	esac
done

# Discover: every tests/vm/AREA/NAME.sh but lib/; NAME unique. No program
# per file (a debug guest starts one in a fraction of a second): one find,
# one grep for every file's test functions.
names=() areas=() files=()
declare -A seen=() defines=()
mapfile -t found < <(find "$VM" -mindepth 2 -maxdepth 2 -name '*.sh' ! -path "$VM/lib/*" | sort)
while IFS= read -r d; do
	defines[$d]=1
done < <(grep -H -o '^test_[A-Za-z0-9_]*() {' "${found[@]}" | sed 's/() {$//')
for f in "${found[@]}"; do
	n=${f##*/}
	n=${n%.sh}
	a=${f%/*}
	a=${a##*/}
	if [ -n "${seen[$n]:-}" ]; then
		echo "run.sh: two tests named $n: ${seen[$n]} and $f" >&2
		exit 2
	fi
	if [ -z "${defines[$f:test_$n]:-}" ]; then
		echo "run.sh: $f does not define test_$n" >&2
		exit 2
	fi
	seen[$n]=$f
	names+=("$n") areas+=("$a") files+=("$f")
done

# Every file's header ("# KEY: value" in its first comment block; the
# first of each KEY), read by one awk: layers, timeout, count.
declare -A layers_of=() timeout_of=() count_of=()
while IFS=$'\t' read -r f key v; do
	case $key in
	layers) layers_of[$f]=$v ;;
	timeout) timeout_of[$f]=$v ;;
	count) count_of[$f]=$v ;;
	esac
done < <(awk '
	FNR == 1 { delete seen }
	FNR > 1 && !/^#/ { nextfile }
	$1 == "#" && $2 ~ /^(layers|timeout|count):$/ && !seen[$2]++ {
		k = substr($2, 1, length($2) - 1); $1 = ""; $2 = ""; sub(/^ +/, "")
		print FILENAME "\t" k "\t" $0
	}
' "${found[@]}")

in_layer() { # INDEX LAYER
	case " ${layers_of[${files[$1]}]:-} " in *" $2 "*) return 0 ;; esac
	return 1
}

# Select: a layer's tests in name order, or the tests each NAME/GLOB
# matches, in the order given.
matches() { # INDEX PATTERN
	# shellcheck disable=SC2053 # a glob, on purpose
	[[ ${names[$1]} == $2 || ${areas[$1]}/${names[$1]} == $2 ]]
}
sel=()
declare -A picked=()
if [ ${#pats[@]} -eq 0 ]; then
	for i in "${!names[@]}"; do
		# --list alone lists them all.
		if { [ $list = 1 ] && [ -z "$layer" ]; } || in_layer "$i" "${layer:-stock}"; then
			sel+=("$i")
		fi
	done
fi
for p in ${pats[@]+"${pats[@]}"}; do
	hit=0
	for i in "${!names[@]}"; do
		matches "$i" "$p" || continue
		hit=1
		[ -z "$layer" ] || in_layer "$i" "$layer" || continue
		[ -z "${picked[$i]:-}" ] || continue
		picked[$i]=1
		sel+=("$i")
	done
	[ $hit = 1 ] || { echo "run.sh: no test matches '$p' (see --list)" >&2; exit 2; }
done

if [ $list = 1 ]; then
	for i in "${sel[@]}"; do
		l=${layers_of[${files[$i]}]:-}
		t=${timeout_of[${files[$i]}]:-$TEST_TIMEOUT}
		printf '%-32s %-9s %-13s %s s\n' "${names[$i]}" "${areas[$i]}" "${l:--}" "$t"
	done
	exit 0
fi

# shellcheck source=../../tools/lab.d/fixture.sh
. "$REPO/tools/lab.d/fixture.sh"
: >"$out"
: >"$ktap"
RUN_TMP=$(mktemp -d /tmp/vmtests.XXXXXX)
trap 'rm -rf "$RUN_TMP"' EXIT
# What cleanup restores: the provider's driver files (as they were when
# verbs.stamp was made), the fixture's state.
verbs=0
[ ! -e /etc/libibverbs.d ] || { verbs=1; cp -a /etc/libibverbs.d "$RUN_TMP/libibverbs.d"; }
: >"$RUN_TMP/verbs.stamp"
fixture_want=$(fixture_state)

# Under TCG a process costs ~80 ms: what runs per test forks little.
k() { printf '%s\n' "$*"; printf '%s\n' "$*" >>"$ktap"; }
res() { printf '%s\n' "$*" >>"$out"; }

# kill_session SID: SIGKILL every process of the session until none is left
# (10 s at most: a process stuck in the kernel cannot be killed).
my_sid=$(ps -o sid= -p $$ | tr -d ' ')
kill_session() {
	local sid=$1 n=100
	[ -n "$sid" ] && [ "$sid" != "$my_sid" ] || return 0
	while pgrep -s "$sid" >/dev/null; do
		pkill -KILL -s "$sid"
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "processes left: $(pgrep -a -s "$sid" | tr '\n' ';')"; return 1; }
		sleep 0.1
	done
}

# verbs_changed: whether /etc/libibverbs.d was made, removed, or written
# since the stamp (a file added, removed, renamed or written: its mtime or
# the folder's; the copy cleanup puts back keeps the old ones).
verbs_changed() {
	local f
	[ -e /etc/libibverbs.d ] || return $((verbs == 0))
	[ $verbs = 1 ] || return 0
	for f in /etc/libibverbs.d /etc/libibverbs.d/* /etc/libibverbs.d/.*; do
		[ ! "$f" -nt "$RUN_TMP/verbs.stamp" ] || return 0
	done
	return 1
}

# cleanup: after every test, whatever it did or did not undo. What most
# tests leave (modules, the provider files) is undone at once; the rest only
# when the fixture's state says something changed.
cleanup_mods=(softrdma_ktest softrdma_kunit softrdma siw rdma_rxe)
cleanup() {
	local ns d m n now mods=() left=()
	# Modules, all in one modprobe: a driver's unload deletes its rdma
	# devices, in every namespace.
	for m in "${cleanup_mods[@]}"; do
		[ ! -e "/sys/module/$m" ] || mods+=("$m")
	done
	[ ${#mods[@]} -eq 0 ] || modprobe -r "${mods[@]}" 2>/dev/null
	for m in ${mods[@]+"${mods[@]}"}; do
		[ ! -e "/sys/module/$m" ] || left+=("$m")
	done
	# One held (softrdma's TCP sockets may hold it a moment after a kill):
	# its devices deleted first, in every namespace ("link DEV/PORT ..." a
	# port; rdma needs no /sys of the namespace's), then one by one.
	if [ ${#left[@]} -gt 0 ]; then
		for ns in - /var/run/netns/*; do
			local pre=() devs=()
			[ "$ns" = - ] || { [ -e "$ns" ] && pre=(nsenter "--net=$ns"); } || continue
			while read -r _ d _; do
				devs+=("${d%%/*}")
			done < <("${pre[@]}" rdma link show 2>/dev/null)
			for d in ${devs[@]+"${devs[@]}"}; do
				"${pre[@]}" rdma link delete "$d" 2>/dev/null
			done
		done
	fi
	for m in ${left[@]+"${left[@]}"}; do
		n=100
		while [ -e "/sys/module/$m" ] && ! modprobe -r "$m" 2>/dev/null && ! rmmod "$m" 2>/dev/null; do
			n=$((n - 1))
			[ $n -gt 0 ] || { echo "module $m cannot be unloaded: $(cat "/sys/module/$m"/refcnt)"; break; }
			sleep 0.1
		done
	done
	now=$(fixture_state)
	if [ "$now" != "$fixture_want" ]; then
		# Namespaces but b, netdevs but the fixture's, qdiscs and filters.
		for ns in $(ip netns list | awk '{print $1}'); do
			[ "$ns" = b ] || ip netns del "$ns"
		done
		for ns in - b; do
			local pre=() keep=veth0
			[ "$ns" = - ] || { pre=(ip netns exec "$ns"); keep=veth1; }
			for d in $("${pre[@]}" ls /sys/class/net 2>/dev/null); do
				[ "$d" = lo ] || [ "$d" = "$keep" ] || "${pre[@]}" ip link del "$d" 2>/dev/null
			done
			for d in $("${pre[@]}" ls /sys/class/net 2>/dev/null); do
				"${pre[@]}" tc qdisc del dev "$d" root 2>/dev/null
				"${pre[@]}" tc qdisc del dev "$d" clsact 2>/dev/null
				"${pre[@]}" tc qdisc del dev "$d" ingress 2>/dev/null
			done
		done
	fi
	if verbs_changed; then
		rm -rf /etc/libibverbs.d
		[ $verbs = 0 ] || cp -a "$RUN_TMP/libibverbs.d" /etc/libibverbs.d
	fi
	# The fixture as it was, made anew if anything still differs.
	[ "$now" = "$fixture_want" ] || now=$(fixture_state)
	if [ "$now" != "$fixture_want" ]; then
		echo "the fixture changed: made anew"
		diff <(echo "$fixture_want") <(echo "$now") | head -n 20
		fixture_down
		fixture_up >"$RUN_TMP/fixture.log" 2>&1 || cat "$RUN_TMP/fixture.log"
		now=$(fixture_state)
		[ "$now" = "$fixture_want" ] ||
			diff <(echo "$fixture_want") <(echo "$now") | head -n 20
	fi
	return 0
}

# nest LOG: the "ok N ..." / "not ok N ..." lines in LOG, renumbered, as
# KTAP subtests (indented one level), printed and added to the KTAP file.
nest() {
	awk -v ktap="$ktap" '
		function out(l) { print l; print l >>ktap }
		/^(not )?ok [0-9]+( |$)/ {
			st = ($1 == "ok") ? "ok" : "not ok"
			sub(/^(not )?ok [0-9]+/, "")
			lines[++n] = st " " n $0
		}
		END {
			if (n == 0) exit
			out("    KTAP version 1")
			out("    # Subtest: " name)
			out("    1.." n)
			for (i = 1; i <= n; i++) out("    " lines[i])
		}' name="$2" "$1"
}

total=${#sel[@]}
run_t0=$SECONDS
pass=0 fail=0 tno=0
times=()
cleanup >/dev/null 2>&1
k "KTAP version 1"
k "1..$total"
k "# kernel $(uname -r), $(nproc) CPUs, layer ${layer:-any}, $total tests"
for i in "${sel[@]}"; do
	name=${names[$i]}
	f=${files[$i]}
	tno=$((tno + 1))
	limit=${timeout_of[$f]:-$TEST_TIMEOUT}
	# The test's own dir: run-one.sh makes it ($TEST_TMP in it).
	T=$RUN_TMP/$name
	log=$RUN_TMP/$name.log
	echo "# $tno/$total $name (limit $limit s)"
	t0=$EPOCHREALTIME
	# Its ports: by name order, stable for a test.
	TEST_TMP=$T/tmp TEST_PORT=$((10000 + 20 * i)) TEST_NAME=$name \
		setsid "$VM/lib/run-one.sh" "$f" "$name" "$T/sid" </dev/null >"$log" 2>&1 &
	pid=$!
	sleep "$limit" &
	dog=$!
	done_pid=
	wait -n -p done_pid "$pid" "$dog"
	rc=$?
	timed_out=0
	if [ "$done_pid" != "$pid" ]; then
		timed_out=1
		echo "timed out after $limit s: killed" >>"$log"
		sid=
		read -r sid 2>/dev/null <"$T/sid"
		kill_session "$sid" >>"$log" 2>&1
		kill -KILL "$pid" 2>/dev/null
		{ wait "$pid"; } 2>/dev/null
		rc=124
	else
		kill "$dog" 2>/dev/null
		wait "$dog" 2>/dev/null
	fi
	# What the test left running: its session's processes.
	sid=
	read -r sid 2>/dev/null <"$T/sid"
	kill_session "$sid" >>"$log" 2>&1
	t1=$EPOCHREALTIME
	secs=$(((${t1/./} - ${t0/./}) / 100000))
	secs=$((secs / 10)).$((secs % 10))
	cleanup >"$RUN_TMP/cleanup.log" 2>&1
	if [ -s "$RUN_TMP/cleanup.log" ]; then
		# Only what the test left behind is said here.
		echo "# cleanup after $name:"
		sed 's/^/#   /' "$RUN_TMP/cleanup.log"
		cat "$RUN_TMP/cleanup.log" >>"$log"
	fi
	times+=("$secs $name")
	nest "$log" "$name"
	count=${count_of[$f]:-}
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		k "ok $tno $name # time=${secs}s"
	else
		fail=$((fail + 1))
		tail -n 150 "$log" | sed 's/^/# /' | tee -a "$ktap"
		if [ $timed_out = 1 ]; then
			k "not ok $tno $name # time=${secs}s, killed at its limit"
		else
			k "not ok $tno $name # time=${secs}s"
		fi
	fi
	if [ "$count" = subtests ]; then
		# Each subtest counts (KUnit's cases); the test itself only if it
		# failed without a failing subtest to say so.
		awk '/^ok [0-9]+ / { print "PASS " $3 } /^not ok [0-9]+ / { print "FAIL " $4 }' "$log" >>"$out"
		[ "$rc" = 0 ] || grep -q '^not ok ' "$log" || res "FAIL $name"
	elif [ "$rc" = 0 ]; then
		res "PASS $name"
	else
		res "FAIL $name"
	fi
	rm -rf "$T"
done
if [ ${#times[@]} -gt 0 ]; then
	k "# slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 5 |
		awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')"
fi
k "# $pass passed, $fail failed in $((SECONDS - run_t0)) s"
exit $((fail > 0))
