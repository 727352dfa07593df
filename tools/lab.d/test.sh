#!/usr/bin/env bash
# tools/lab test [--quick] [NAME|GLOB...]: every test layer; ends with
# "N passed, N failed".
#   1. host: GoogleTest unit tests (CTest), checkpatch --strict, clang-tidy
#      and shellcheck (lint.sh)
#   2. guest, stock kernel: integration tests (tests/vm/run.sh)
#   2b. guest, stock kernel with the sid root: the provider for rdma-core
#      65 (the tests of layer sid)
#   3. guest, debug kernel (skipped by --quick): KUnit and the tests meant
#      for it, with KASAN, lockdep and kmemleak watching
#   4. guest, trixie-backports' 7.3 kernel (skipped by --quick): a subset
#      covering each area, with that kernel's rxe and siw (K73_TESTS)
#   5. packages (skipped by --quick and by NAME|GLOB): tools/lab package
#      --test, the Debian packages installed with DKMS into a copy of the
#      guest root, used in a guest, purged (tests/package/test.sh)
#   6. instruction ceilings (skipped by --quick and by NAME|GLOB): a short
#      run of the exact meter (tools/lab bench --exact) over softroce and
#      softiwarp, each count against tests/exact/ceilings
# The stock layer's guest, the longest, runs beside layers 1, 2b, 4, 5, 6:
# a TCG guest keeps about one of the host's two cores busy, and they take
# turns on the other. Its console goes to build/test-results/stock.console
# and is printed when it ends. The debug layer runs last, alone.
# NAME|GLOB...: only the guest tests they select (a name, a glob, or
# AREA/NAME), in each layer that has them. tools/lab test --list lists the
# guest tests: name, area, layers, time limit.
# Sets up the lab and builds this checkout first if either is missing or
# out of date; the guests always run this checkout's build.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNNER=$LAB_REPO/tests/vm/run.sh

quick=0
list=0
pats=()
for a in "$@"; do
	case "$a" in
	--quick) quick=1 ;;
	--list) list=1 ;;
	-*) die "usage: tools/lab test [--quick] [--list] [NAME|GLOB...]" ;;
	*) pats+=("$a") ;;
	esac
done
if [ $list = 1 ]; then
	exec "$RUNNER" --list ${pats[@]+"${pats[@]}"}
fi
need_root
# Names that select nothing at all are a mistake, not an empty run.
if [ ${#pats[@]} -gt 0 ]; then
	"$RUNNER" --list "${pats[@]}" >/dev/null || exit 2
fi
lab_ready
# A failing layer is counted, not fatal (lib.sh turned errexit on).
set +e

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

# guest_run LAYER KERNEL [RUN_OPTION...] -- RUNNER_ARG...: one guest
# (tools/lab run with KERNEL and the RUN_OPTIONs) runs the tests the
# RUNNER_ARGs select, its results in LAYER's files; its PASS/FAIL lines
# are counted, and a guest that wrote none, or whose kernel reported a
# problem, is a failure of its own.
# With BESIDE=1 the guest runs in the background, its console to
# LAYER.console: beside_wait counts it.
BESIDE=0
beside_pid=
beside_layer=
guest_run() {
	local layer=$1 kernel=$2 opts=() rc
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	set -- "$LAB_REPO/tools/lab" run --kernel "$kernel" --share "$res" ${opts[@]+"${opts[@]}"} -- \
		"$RUNNER" --out "$res/$layer.txt" --ktap "$res/$layer.ktap" "$@"
	if [ "$BESIDE" = 1 ]; then
		# How long it ran, for beside_wait to say.
		(
			t0=$SECONDS
			"$@"
			rc=$?
			echo $((SECONDS - t0)) >"$res/$layer.seconds"
			exit $rc
		) >"$res/$layer.console" 2>&1 &
		beside_pid=$!
		beside_layer=$layer
		return 0
	fi
	local t0=$SECONDS
	"$@"
	rc=$?
	say "the $layer layer took $((SECONDS - t0)) s"
	guest_count "$layer" $rc
}

# guest_count LAYER RC: the PASS/FAIL lines of LAYER's guest, which
# exited with RC.
guest_count() {
	tally "$res/$1.txt"
	case $2 in
	0 | 1) [ -s "$res/$1.txt" ] || ko "$1.ran" ;;
	*) ko "$1.kernel-clean (run exit $2)" ;;
	esac
}

# beside_wait: waits for the guest started with BESIDE=1, prints its
# console and counts its results.
beside_wait() {
	local rc
	[ -n "$beside_pid" ] || return 0
	say "waiting for the $beside_layer layer's guest (started beside the others)"
	wait "$beside_pid"
	rc=$?
	cat "$res/$beside_layer.console"
	say "the $beside_layer layer took $(cat "$res/$beside_layer.seconds" 2>/dev/null) s"
	guest_count "$beside_layer" $rc
	beside_pid=
}

# guest_layer LAYER KERNEL [RUN_OPTION...]: the layer's tests (those
# selected) in a guest.
guest_layer() {
	local layer=$1 kernel=$2
	shift 2
	if [ ${#pats[@]} -gt 0 ] &&
		[ -z "$("$RUNNER" --list --layer "$layer" "${pats[@]}" 2>/dev/null)" ]; then
		say "no selected test in the $layer layer"
		return 0
	fi
	guest_run "$layer" "$kernel" "$@" -- --layer "$layer" ${pats[@]+"${pats[@]}"}
}

# guest_named LAYER KERNEL NAME...: those tests (the ones selected, if
# names were given) in a guest, whatever their layers.
guest_named() {
	local layer=$1 kernel=$2 n sel=()
	shift 2
	if [ ${#pats[@]} -gt 0 ]; then
		for n in "$@"; do
			"$RUNNER" --list "${pats[@]}" 2>/dev/null | awk '{print $1}' | grep -qx "$n" && sel+=("$n")
		done
	else
		sel=("$@")
	fi
	if [ ${#sel[@]} -eq 0 ]; then
		say "no selected test in the $layer layer"
		return 0
	fi
	guest_run "$layer" "$kernel" -- "${sel[@]}"
}

# The 7.x layer: devices (and a name taken), the provider, RC on both
# transports, the CM on both, UD, interop with 7.3's own rxe and siw, a
# kernel ULP (NVMe-oF), on-demand paging on both transports (ib_umem_odp's
# hmm_dma_map of 6.16 on). About 6 minutes.
K73_TESTS=(bad_input devinfo_roce devinfo_iwarp provider_from_build_tree
	smoke_roce smoke_iwarp rc_transfers rc_atomics qp_iwarp cm_roce
	ucmatose_iwarp ud_roce interop_rxe_transfers interop_rxe_cm
	interop_siw_ext nvmeof_roce odp_verbs rdma_core_odp odp_iwarp)

say "layer 2: guest tests on the stock kernel, beside the other layers"
BESIDE=1 guest_layer stock stock

if [ ${#pats[@]} -eq 0 ]; then
	say "layer 1: host unit tests"
	ctest --test-dir "$LAB_BUILD/host" --output-on-failure >"$res/ctest.log" 2>&1
	grep -E 'tests passed|Failed|\*\*\*' "$res/ctest.log"
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
fi

say "layer 2b: the provider for rdma-core 65 in the sid root, stock kernel"
guest_layer sid stock --root "$SID_ROOT"

if [ $quick = 0 ]; then
	say "layer 4: a subset on trixie-backports' 7.3 kernel"
	guest_named k73 7.3 "${K73_TESTS[@]}"
fi

if [ $quick = 0 ] && [ ${#pats[@]} -eq 0 ]; then
	say "layer 5: Debian packages, installed with DKMS, used in a guest, purged"
	t0=$SECONDS
	"$LAB_REPO/tools/lab" package --test --out "$res/package.txt" >"$res/package.log" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL) |package\.[a-z]+: [0-9]+ s$' "$res/package.log"
	tally "$res/package.txt"
	# A run that stopped without saying which check failed.
	if [ ! -s "$res/package.txt" ] ||
		{ [ $rc != 0 ] && ! grep -q '^FAIL ' "$res/package.txt"; }; then
		tail -n 40 "$res/package.log"
		ko "package.ran (exit $rc)"
	fi
	say "layer 5 took $((SECONDS - t0)) s (log: $res/package.log)"
fi

# The exact clock counts instructions, not time: what else runs does not
# move its counts. 64 KiB SENDs (256 and 512) and 8-byte SENDs (8000 and
# 16000), a quarter of the bench's runs: their costs sit a little above
# the bench's, and the ceilings were set from these runs.
if [ $quick = 0 ] && [ ${#pats[@]} -eq 0 ]; then
	say "layer 6: instruction ceilings on the exact clock"
	t0=$SECONDS
	ex=$res/exact
	rm -rf "$ex"
	mkdir -p "$ex/meter"
	LAB_METER=$ex/meter "$LAB_REPO/tools/lab" run --share "$ex" -- \
		env BENCH_ROWS="softroce softiwarp" BENCH_MTUS=1500 \
		BENCH_EXACT_TESTS="bw64k rate8" BENCH_EXACT_SCALE=4 \
		bash "$LAB_REPO/tools/lab.d/exact-guest.sh" "$ex" "$ex/meter" \
		>"$res/exact.log" 2>&1
	rc=$?
	"$LAB_REPO/tools/lab.d/exact-report.sh" ceilings "$ex" "$LAB_REPO/tests/exact/ceilings" \
		>"$res/exact.txt" 2>&1
	cat "$res/exact.txt"
	tally "$res/exact.txt"
	if ! grep -q '^PASS ' "$res/exact.txt"; then
		tail -n 40 "$res/exact.log"
		ko "exact.ran (exit $rc)"
	fi
	say "layer 6 took $((SECONDS - t0)) s (log: $res/exact.log)"
fi

beside_wait

# Alone: a debug kernel (KASAN, lockdep) in a guest whose vCPUs share the
# cores with another guest's spins on locks whose holder is not running.
if [ $quick = 0 ]; then
	say "layer 3: KUnit and the debug subset on the debug kernel"
	guest_layer debug debug
fi

# What a failed guest test printed last (its KTAP's nested lines), here
# at the end too, where a log cut to its tail still shows it (CI's does).
for f in "$res"/*.ktap; do
	[ -e "$f" ] || continue
	awk -v layer="$(basename "$f" .ktap)" '
		/^# [0-9]+\/[0-9]+ / { n = 0 }
		{ buf[n++ % 60] = $0 }
		/^not ok [0-9]+ / {
			print "--- " layer ": " $0
			for (i = (n > 60 ? n - 60 : 0); i < n; i++) print buf[i % 60]
		}' "$f"
done | head -n 400

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo "KTAP: $res/*.ktap"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
