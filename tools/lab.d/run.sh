#!/usr/bin/env bash
# tools/lab run [--kernel stock|debug|7.3] [--share DIR] [--root DIR] -- CMD...
# Boots a guest with this checkout's build and the fixture up, runs CMD
# as root, exits with CMD's status. A kernel oops, BUG, WARNING, KASAN,
# lockdep or kmemleak report fails the run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

while [ $# -gt 0 ]; do
	[ "$1" != -- ] || { shift; break; }
	guest_opt "$@" || break
	shift "$GUEST_SHIFT"
done
[ $# -gt 0 ] || die "usage: tools/lab run [--kernel stock|debug|7.3] [--share DIR] [--root DIR] -- CMD..."

out=$(mktemp -d /tmp/softrdma-run.XXXXXX)
trap 'rm -rf "$out"' EXIT
guest_prepare "$out" "$GUEST_KERNEL" "${LAB_SMP:-2}" "$@"

# A TCG guest now and then dies early in its boot (an int3 oops in
# sched_clock_cpu or ktime_get: QEMU and the kernel's text patching), before
# any module loads, or hangs there (a 7.3 guest spun for 26 minutes on a
# loaded host, printing nothing): boot it again, twice at most. A boot
# that has not reached the command after LAB_BOOT_TIMEOUT seconds (900: a
# debug guest on a busy host takes 3-6 minutes) is stopped.
for boot in 1 2 3; do
	rm -f "$out/started" "$out/status" "$out/dmesg"
	(
		sleep "${LAB_BOOT_TIMEOUT:-900}"
		[ -f "$out/started" ] || [ -f "$out/status" ] || pkill -f -- "path=$out,"
	) &
	dog=$!
	timeout --foreground "${LAB_TIMEOUT:-3600}" qemu-system-x86_64 "${GUEST_QARGS[@]}" </dev/null |
		stdbuf -oL tr -d "\r" || true
	pkill -P "$dog" sleep 2>/dev/null || true
	wait "$dog" 2>/dev/null || true
	if [ -f "$out/started" ] || [ -f "$out/status" ] || [ $boot = 3 ]; then
		break
	fi
	say "the guest died or hung in its boot (try $boot): booting it again"
done

rc=0
guest_verdict "$out" || rc=$?
if [ -n "${LAB_KEEP_DMESG:-}" ] && [ -f "$out/dmesg" ]; then
	cp "$out/dmesg" "$LAB_KEEP_DMESG"
fi
exit "$rc"
