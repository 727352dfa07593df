#!/usr/bin/env bash
# tools/lab test [--quick]: every test layer; ends with "N passed, N failed".
#   1. host: GoogleTest unit tests (CTest), checkpatch --strict, clang-tidy
#   2. guest, stock kernel: integration tests (tests/vm/run.sh)
#   3. guest, debug kernel (skipped by --quick): KUnit and a short subset,
#      with KASAN, lockdep and kmemleak watching
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_root
# A failing layer is counted, not fatal (lib.sh turned errexit on).
set +e

quick=0
[ "${1:-}" = --quick ] && quick=1

res=$LAB_BUILD/test-results
rm -rf "$res"
mkdir -p "$res"
pass=0
fail=0
failed_names=()

ok() {
	pass=$((pass + 1))
	printf 'PASS %s\n' "$1"
}
ko() {
	fail=$((fail + 1))
	failed_names+=("$1")
	printf 'FAIL %s\n' "$1"
}

# Count the PASS/FAIL lines a guest run wrote.
tally() {
	local f=$1 line
	[ -f "$f" ] || return 0
	while read -r line; do
		case "$line" in
		"PASS "*) pass=$((pass + 1)) ;;
		"FAIL "*) fail=$((fail + 1)); failed_names+=("${line#FAIL }") ;;
		esac
	done <"$f"
}

say "layer 1: host unit tests"
if ctest --test-dir "$LAB_BUILD/host" --output-on-failure >"$res/ctest.log" 2>&1; then
	:
fi
cat "$res/ctest.log" | grep -E 'tests passed|Failed|\*\*\*' || true
# One PASS/FAIL per GoogleTest case, as CTest reports them.
while read -r line; do
	name=$(echo "$line" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*/\1/')
	case "$line" in
	*" Passed"*) pass=$((pass + 1)) ;;
	*) fail=$((fail + 1)); failed_names+=("unit.$name") ;;
	esac
done < <(grep -E 'Test +#[0-9]+: ' "$res/ctest.log")
grep -qE 'Test +#[0-9]+: ' "$res/ctest.log" || ko unit.ran

say "layer 1: style"
if "$LAB_REPO/tools/lab.d/lint.sh" >"$res/lint.log" 2>&1; then
	ok lint
else
	cat "$res/lint.log"
	ko lint
fi

say "layer 2: guest tests on the stock kernel"
tools_run() {
	"$LAB_REPO/tools/lab" run "$@"
}
tools_run --share "$res" -- "$LAB_REPO/tests/vm/run.sh" --out "$res/stock.txt"
rc=$?
tally "$res/stock.txt"
case $rc in
0 | 1) [ -s "$res/stock.txt" ] || ko stock.ran ;;
*) ko "stock.kernel-clean (run exit $rc)" ;;
esac

if [ $quick = 0 ]; then
	say "layer 3: KUnit and the short subset on the debug kernel"
	tools_run --kernel debug --share "$res" -- "$LAB_REPO/tests/vm/run.sh" --debug --out "$res/debug.txt"
	rc=$?
	tally "$res/debug.txt"
	case $rc in
	0 | 1) [ -s "$res/debug.txt" ] || ko debug.ran ;;
	*) ko "debug.kernel-clean (run exit $rc)" ;;
	esac
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
