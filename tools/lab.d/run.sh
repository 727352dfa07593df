#!/usr/bin/env bash
# tools/lab run [--kernel stock|debug] [--share DIR]... -- CMD...
# Boots a guest with this checkout's build and the fixture up, runs CMD
# as root, exits with CMD's status. A kernel oops, BUG, WARNING, KASAN,
# lockdep or kmemleak report fails the run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

kernel=stock
shares=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--kernel=*) kernel=${1#*=}; shift ;;
	--share) shares+=("$(readlink -f "$2")"); shift 2 ;;
	--share=*) shares+=("$(readlink -f "${1#*=}")"); shift ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "usage: tools/lab run [--kernel stock|debug] [--share DIR] -- CMD..."

case "$kernel" in
stock)
	kver=$(stock_kver)
	kimg=$LAB_ROOT/boot/vmlinuz-$kver
	mem=${LAB_MEM:-3G}
	;;
debug)
	kimg=$LAB_ROOT$DEBUG_KDIR/arch/x86/boot/bzImage
	mem=${LAB_MEM:-4G}
	;;
*) die "--kernel takes stock or debug" ;;
esac
[ -f "$kimg" ] || die "no $kernel kernel image ($kimg): run tools/lab setup"
initrd=$SOFTRDMA_LAB/initrd.cpio.gz
[ -f "$initrd" ] || die "no initramfs: run tools/lab setup"

limit=${LAB_TIMEOUT:-3600}
out=$(mktemp -d /tmp/softrdma-run.XXXXXX)
trap 'rm -rf "$out"' EXIT
{
	printf 'LAB_REPO=%q\n' "$LAB_REPO"
	printf 'LAB_SHARES=%q\n' "${shares[*]:-}"
	printf 'LAB_CWD=%q\n' "$PWD"
	printf 'LAB_KERNEL=%q\n' "$kernel"
	# The guest reports its state and stops this long before the limit.
	printf 'LAB_DEADLINE=%d\n' $((limit > 300 ? limit - 120 : 0))
	if [ $# -eq 1 ]; then
		printf 'LAB_CMD=%q\n' "$1"
	else
		printf 'LAB_CMD=%q\n' "$(printf '%q ' "$@")"
	fi
} >"$out/guest.env"

v9p() { echo "local,path=$1,mount_tag=$2,security_model=none,multidevs=remap${3:+,$3}"; }
# shellcheck disable=SC2054 # commas inside QEMU options
qargs=(
	-accel tcg,thread=multi -cpu max,la57=off -smp "${LAB_SMP:-2}" -m "$mem"
	-display none -monitor none -serial stdio -no-reboot
	-kernel "$kimg" -initrd "$initrd"
	-append "console=ttyS0 loglevel=2 panic=-1 oops=panic panic_print=0x20"
	-virtfs "$(v9p "$LAB_ROOT" root readonly=on)"
	-virtfs "$(v9p "$LAB_REPO" repo readonly=on)"
	-virtfs "$(v9p "$out" out)"
	-nic none
)
i=0
for s in "${shares[@]}"; do
	qargs+=(-virtfs "$(v9p "$s" "share$i")")
	i=$((i + 1))
done

timeout --foreground "$limit" qemu-system-x86_64 "${qargs[@]}" </dev/null |
	stdbuf -oL tr -d "\r" || true

if [ ! -f "$out/status" ]; then
	echo "[lab] the guest died before the command finished" >&2
	[ -f "$out/dmesg" ] && tail -n 60 "$out/dmesg" >&2
	exit 124
fi
rc=$(cat "$out/status")

# A report from the kernel's checkers fails the run, whatever CMD said.
pat='Oops:|BUG:|WARNING:|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|Call Trace:|general protection fault|kernel BUG'
if grep -Eq "$pat" "$out/dmesg"; then
	echo "[lab] the kernel reported a problem during the run:" >&2
	grep -E -A 40 "$pat" "$out/dmesg" | head -n 120 >&2
	[ "$rc" = 0 ] && rc=99
fi
if [ -s "$out/kmemleak" ]; then
	echo "[lab] kmemleak found leaks:" >&2
	head -n 80 "$out/kmemleak" >&2
	[ "$rc" = 0 ] && rc=98
fi
[ -n "${LAB_KEEP_DMESG:-}" ] && cp "$out/dmesg" "$LAB_KEEP_DMESG"
exit "$rc"
