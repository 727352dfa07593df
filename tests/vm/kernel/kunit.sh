# shellcheck shell=bash
# KUnit: load the KUnit module (its suites run at load) and report every
# case of every suite as a subtest, kunit.SUITE.CASE; a suite without
# results fails. The suites: those tests/kunit names (.name = "softrdma_*"),
# and any other softrdma_* suite that reported.
#
# layers: debug
# count: subtests
kunit_suites() {
	{
		grep -ho '\.name = "softrdma_[a-z0-9_]*"' "$REPO"/tests/kunit/*.c |
			cut -d'"' -f2
		find /sys/kernel/debug/kunit -mindepth 1 -maxdepth 1 -name 'softrdma_*' \
			-printf '%f\n' 2>/dev/null
	} | awk '!seen[$0]++'
}

test_kunit() {
	local s f line n=0 bad=0
	modprobe kunit || { echo "not ok 1 kunit.load"; return 1; }
	# softrdma first: the suites call into it, whatever modules.dep says.
	if ! modprobe softrdma || ! modprobe softrdma_kunit; then
		echo "not ok 1 kunit.load"
		return 1
	fi
	for s in $(kunit_suites); do
		f=/sys/kernel/debug/kunit/$s/results
		if [ ! -r "$f" ]; then
			n=$((n + 1))
			echo "not ok $n kunit.$s.results"
			bad=1
			continue
		fi
		# Case lines are indented one level: "    ok 1 name" /
		# "    not ok 2 name"; a failing case's diagnostics precede it.
		if grep -q -E '^    not ok ' "$f"; then
			sed 's/^/# /' "$f"
		fi
		while read -r line; do
			n=$((n + 1))
			case "$line" in
			"ok "*) echo "ok $n kunit.$s.${line##* }" ;;
			"not ok "*)
				echo "not ok $n kunit.$s.${line##* }"
				bad=1
				;;
			esac
		done < <(grep -E '^    (not )?ok ' "$f")
		if ! grep -q -E '^    (not )?ok ' "$f"; then
			n=$((n + 1))
			echo "not ok $n kunit.$s.cases"
			bad=1
		fi
	done
	modprobe -r softrdma_kunit || true
	modprobe -r softrdma 2>/dev/null || true
	return $bad
}
