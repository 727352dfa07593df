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
# clang-tidy's verdict on a file follows from what it reads: the file and
# every header, as the compiler sees them (preprocessed), the flags,
# .clang-tidy and clang-tidy itself. A clean verdict is kept in the lab's
# cache under a hash of those (the checkout's path taken out), and a file
# whose hash is there is not analysed again: a tree linted once is linted
# in seconds, in any clone of it.
TIDY_CACHE=$SOFTRDMA_LAB/cache/clang-tidy
TIDY_ID=$( {
	clang-tidy --version
	cat .clang-tidy
} | sha256sum | cut -d' ' -f1)
export TIDY_CACHE TIDY_ID LAB_REPO LAB_BUILD
mkdir -p "$TIDY_CACHE"
# tidy_one FILE: clang-tidy's findings on FILE (none if a clean verdict on
# the same input is cached; a clean one is cached).
# shellcheck disable=SC2317 # run by xargs
tidy_one() {
	local f=$1 cmd key out
	cmd=$(python3 -c '
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if e["file"] == sys.argv[2]:
        a = shlex.split(e["command"])
        i = a.index("-o")
        del a[i:i + 2]
        print(e["directory"], shlex.join(["-E" if x == "-c" else x for x in a]))
' "$LAB_BUILD/host/compile_commands.json" "$LAB_REPO/$f" 2>/dev/null)
	if [ -n "$cmd" ] && key=$(
		set -o pipefail
		{
			echo "$TIDY_ID ${cmd#* }"
			cd "${cmd%% *}" && eval "${cmd#* }" 2>/dev/null
		} | sed "s|$LAB_REPO|@REPO@|g" | sha256sum | cut -d' ' -f1
	); then
		[ ! -e "$TIDY_CACHE/$key" ] || return 0
	else
		key=
	fi
	out=$(clang-tidy --quiet -p "$LAB_BUILD/host" "$f" 2>/dev/null)
	printf '%s\n' "$out"
	[ -z "$key" ] || grep -qE 'warning:|error:' <<<"$out" || : >"$TIDY_CACHE/$key"
}
export -f tidy_one
# One file at a time per CPU; a finding (warning or error) fails, whatever
# clang-tidy's exit status.
# shellcheck disable=SC2016 # the inner bash expands it
tidy=$(printf '%s\0' "${cxx[@]}" |
	xargs -0 -n 1 -P "$(nproc)" bash -c 'tidy_one "$1"' tidy_one || true)
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
