#!/usr/bin/env bash
# tools/lab run [--kernel stock|debug] [--share DIR]... -- CMD...
# Boots a guest with this checkout's build and the fixture up, runs CMD
# as root, exits with CMD's status. A kernel oops, BUG, WARNING, KASAN,
# lockdep or kmemleak report fails the run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

kernel=stock
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--kernel=*) kernel=${1#*=}; shift ;;
	--share) GUEST_SHARES+=("$(readlink -f "$2")"); shift 2 ;;
	--share=*) GUEST_SHARES+=("$(readlink -f "${1#*=}")"); shift ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "usage: tools/lab run [--kernel stock|debug] [--share DIR] -- CMD..."

out=$(mktemp -d /tmp/softrdma-run.XXXXXX)
trap 'rm -rf "$out"' EXIT
guest_prepare "$out" "$kernel" "${LAB_SMP:-2}" "$@"

timeout --foreground "${LAB_TIMEOUT:-3600}" qemu-system-x86_64 "${GUEST_QARGS[@]}" </dev/null |
	stdbuf -oL tr -d "\r" || true

rc=0
guest_verdict "$out" || rc=$?
if [ -n "${LAB_KEEP_DMESG:-}" ] && [ -f "$out/dmesg" ]; then
	cp "$out/dmesg" "$LAB_KEEP_DMESG"
fi
exit "$rc"
