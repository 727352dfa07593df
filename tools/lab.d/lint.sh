#!/usr/bin/env bash
# Style gates: checkpatch.pl --strict on the kernel side, clang-tidy on the
# C++ side, shellcheck on every shell script (*.sh, and files whose first
# line names sh or bash). Prints findings; exits non-zero on any.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$LAB_REPO"

rc=0
cp=$LAB_ROOT$ROOT_OPT/linux-src/scripts/checkpatch.pl
[ -f "$cp" ] || die "no checkpatch.pl: run tools/lab setup"
mapfile -t kfiles < <(git ls-files 'kernel/*.[chS]' 'uapi/*.h' 'tests/kunit/*.[ch]' 'tests/kmod/*.[ch]')
if ! perl "$cp" --strict --no-tree --terse --quiet -f "${kfiles[@]}"; then
	rc=1
fi

mapfile -t cxx < <(git ls-files 'provider/*.cpp' 'tools/softrdma/*.cpp' 'tests/unit/*.cpp')
# One clang-tidy per file, as many at once as there are CPUs; a finding
# (warning or error) fails, whatever clang-tidy's exit status.
tidy=$(printf '%s\0' "${cxx[@]}" |
	xargs -0 -n 1 -P "$(nproc)" clang-tidy --quiet -p "$LAB_BUILD/host" 2>/dev/null || true)
if grep -E 'warning:|error:' <<<"$tidy"; then
	rc=1
fi
# Shell: tracked files and new ones not ignored.
mapfile -t shfiles < <(git -c safe.directory='*' ls-files -co --exclude-standard | while read -r f; do
	[ -f "$f" ] || continue
	case "$f" in
	*.sh) echo "$f" ;;
	*) head -n 1 "$f" | grep -qE '^#!.*/(env )?(ba)?sh( |$)' && echo "$f" ;;
	esac
done)
if ! shellcheck -x -P SCRIPTDIR -f gcc "${shfiles[@]}"; then
	rc=1
fi
exit $rc
