# shellcheck shell=bash
# Shared helpers for the lab scripts.
set -euo pipefail

: "${SOFTRDMA_LAB:=/var/cache/softrdma-lab}"
: "${LAB_ROOT:=$SOFTRDMA_LAB/root}"
: "${LAB_LOGS:=$SOFTRDMA_LAB/logs}"
: "${LAB_REPO:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${LAB_BUILD:=$LAB_REPO/build}"

# Versions the lab is pinned to.
RDMA_CORE_VER=56.1
DEBUG_LOCALVERSION=-softrdma-debug
STOCK_SERIES=6.12
# trixie-backports' kernel (ABI name): its headers in the root, for a
# compile check (setup.sh's bpo-headers stage, build.sh's build-kmod-73),
# and its image and modules, a third guest kernel (bpo-kernel stage).
# shellcheck disable=SC2034 # for setup.sh and build.sh
BPO_KVER=7.3.4+deb13
# Where things live inside the Debian 13 root (paths as seen from the chroot).
ROOT_OPT=/opt/softrdma-lab
# shellcheck disable=SC2034 # for setup.sh and build.sh
RDMA_CORE_DIR=$ROOT_OPT/rdma-core-$RDMA_CORE_VER
DEBUG_KDIR=$ROOT_OPT/linux-debug
# The second, smaller guest root (tools/lab setup's sid stages): Debian
# sid's libibverbs (rdma-core 65, private ABI 65), gcc-16 and its 7.2
# kernel headers; it boots the stock kernel, whose modules it holds too.
# Paths inside it as above ($ROOT_OPT).
SID_ROOT=$SOFTRDMA_LAB/sid-root
SID_RDMA_CORE_VER=65.0
# shellcheck disable=SC2034 # for setup.sh and build.sh
SID_RDMA_CORE_DIR=$ROOT_OPT/rdma-core-$SID_RDMA_CORE_VER

# The exact meter, a QEMU plugin (tools/meter; setup.sh's meter stage).
METER_SO=$SOFTRDMA_LAB/meter/meter.so

mkdir -p "$LAB_LOGS" 2>/dev/null || true

say() { printf '\033[1m[lab]\033[0m %s\n' "$*" >&2; }
die() {
	printf '\033[1;31m[lab] error:\033[0m %s\n' "$*" >&2
	exit 1
}

# step NAME CMD...: run CMD with output to $LAB_LOGS/NAME.log; fail loudly.
step() {
	local name=$1 log
	shift
	log=$LAB_LOGS/$name.log
	say "$name ... (log: $log)"
	local t0=$SECONDS
	# In the background so that errexit stays in force inside "$@".
	"$@" >"$log" 2>&1 &
	if ! wait $!; then
		printf '\033[1;31m[lab] %s failed; last lines of %s:\033[0m\n' "$name" "$log" >&2
		tail -n 40 "$log" >&2
		exit 1
	fi
	say "$name done ($((SECONDS - t0)) s)"
}

# in_root CMD...: run CMD inside the Debian 13 root, with /proc, /sys, /dev
# and the repository (at the same path) mounted in a private mount namespace,
# so nothing stays mounted afterwards.
in_root() {
	# shellcheck disable=SC2016 # the chroot's script, with its own arguments
	unshare --mount --propagation private -- /bin/sh -ec '
		r=$1 repo=$2
		shift 2
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs tmpfs "$r/tmp"
		mkdir -p "$r$repo" 2>/dev/null || true
		mount --bind "$repo" "$r$repo"
		cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
		exec chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive "$@"
	' in_root "$LAB_ROOT" "$LAB_REPO" "$@"
}

# in_sid CMD...: in_root, in the sid root.
in_sid() {
	LAB_ROOT=$SID_ROOT in_root "$@"
}

# The stock kernel release installed in the root: trixie's 6.12 (other
# kernels the lab has never go into the root's /boot; still, only a 6.12
# one is taken).
stock_kver() {
	local v
	v=$(find "$LAB_ROOT/boot" -maxdepth 1 -name "vmlinuz-$STOCK_SERIES.*" ! -name "*$DEBUG_LOCALVERSION" -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -n 1)
	[ -n "$v" ] || die "no stock kernel in $LAB_ROOT/boot: run tools/lab setup"
	echo "$v"
}

debug_kver() {
	local f=$LAB_ROOT$DEBUG_KDIR/include/config/kernel.release
	[ -f "$f" ] || die "no debug kernel built: run tools/lab setup"
	cat "$f"
}

need_root() {
	[ "$(id -u)" = 0 ] || die "the lab needs root (debootstrap, chroot, mounts)"
}

# build_fresh: this checkout's build exists and no build input (sources,
# build scripts) changed since it finished (build.sh writes the stamp).
BUILD_STAMP=$LAB_BUILD/.built
BUILD_INPUTS=(kernel uapi provider tools/softrdma tools/bench tests/unit tests/kunit tests/kmod
	'tests/vm/*.cpp' 'tests/vm/*.hpp' Kbuild CMakeLists.txt cmake tools/lab.d/build.sh)
build_fresh() {
	[ -f "$BUILD_STAMP" ] || return 1
	local newer
	if git -C "$LAB_REPO" -c safe.directory='*' rev-parse --git-dir >/dev/null 2>&1; then
		# shellcheck disable=SC2016 # find's script, with its own arguments
		newer=$(cd "$LAB_REPO" && git -c safe.directory='*' ls-files -z -co --exclude-standard -- "${BUILD_INPUTS[@]}" |
			xargs -0 -r sh -c 'find "$@" -maxdepth 0 -newer "$0" -print 2>/dev/null' "$BUILD_STAMP" | head -n 1)
	else
		newer=$(cd "$LAB_REPO" && find kernel uapi provider tools/softrdma tests Kbuild CMakeLists.txt tools/lab.d/build.sh \
			-type f \( -name '*.[chS]' -o -name '*.[ch]pp' -o -name Kbuild -o -name CMakeLists.txt -o -name '*.sh' \) \
			-newer "$BUILD_STAMP" -print 2>/dev/null | head -n 1)
	fi
	[ -z "$newer" ] || { say "$newer changed since the last build"; return 1; }
}

# lab_ready: set up the lab cache if a step is missing, and build this
# checkout if its build is missing or older than its sources: every
# command that boots a guest works from nothing, with this checkout's code.
lab_ready() {
	if ! "$LAB_REPO/tools/lab.d/setup.sh" --check 2>/dev/null; then
		say "the lab cache ($SOFTRDMA_LAB) is incomplete: running tools/lab setup"
		"$LAB_REPO/tools/lab.d/setup.sh" || die "tools/lab setup failed"
	fi
	if ! build_fresh; then
		say "this checkout's build is missing or out of date: running tools/lab build"
		"$LAB_REPO/tools/lab.d/build.sh" || die "tools/lab build failed"
	fi
}

# The guests: one builder for every command that boots one (run.sh, pair.sh).
#
# guest_prepare OUT KERNEL SMP CMD...: a guest that runs CMD as root with
# this checkout's build: writes OUT/guest.env (what the initramfs and
# guest-init.sh read; a caller may append more lines) and the QEMU command
# line in the array GUEST_QARGS (a caller may add devices). Shares: the
# host folders in the array GUEST_SHARES, mounted read-write at the same
# path. LAB_MEM and LAB_TIMEOUT as tools/lab run documents them.
GUEST_SHARES=()
GUEST_QARGS=()
# guest_opt ARGS...: the option ARGS start with, if it is one of the
# guest's (--kernel stock|debug|7.3, --share DIR, --root DIR): sets
# GUEST_KERNEL, adds to GUEST_SHARES or sets GUEST_ROOT (the guest's root
# filesystem, the lab root unless given: it must hold the kernel's modules),
# and GUEST_SHIFT to the words it took; fails otherwise.
GUEST_KERNEL=stock
GUEST_ROOT=$LAB_ROOT
GUEST_SHIFT=0
# shellcheck disable=SC2034 # for run.sh and pair.sh
guest_opt() {
	case "$1" in
	--kernel) GUEST_KERNEL=$2 GUEST_SHIFT=2 ;;
	--kernel=*) GUEST_KERNEL=${1#*=} GUEST_SHIFT=1 ;;
	--share) GUEST_SHARES+=("$(readlink -f "$2")") GUEST_SHIFT=2 ;;
	--share=*) GUEST_SHARES+=("$(readlink -f "${1#*=}")") GUEST_SHIFT=1 ;;
	--root) GUEST_ROOT=$(readlink -f "$2") GUEST_SHIFT=2 ;;
	--root=*) GUEST_ROOT=$(readlink -f "${1#*=}") GUEST_SHIFT=1 ;;
	*) return 1 ;;
	esac
}
guest_prepare() {
	local out=$1 kernel=$2 smp=$3 kimg mem limit initrd=$SOFTRDMA_LAB/initrd.cpio.gz s i=0
	shift 3
	case "$kernel" in
	stock)
		kimg=$LAB_ROOT/boot/vmlinuz-$(stock_kver)
		mem=${LAB_MEM:-3G}
		;;
	debug)
		kimg=$LAB_ROOT$DEBUG_KDIR/arch/x86/boot/bzImage
		mem=${LAB_MEM:-4G}
		;;
	7.3)
		# trixie-backports' (setup.sh's bpo-kernel stage), with its
		# own initramfs.
		kimg=$LAB_ROOT/usr/lib/modules/$BPO_KVER-amd64/vmlinuz
		initrd=$SOFTRDMA_LAB/initrd-$BPO_KVER-amd64.cpio.gz
		mem=${LAB_MEM:-3G}
		;;
	*) die "--kernel takes stock, debug or 7.3" ;;
	esac
	[ -f "$kimg" ] || die "no $kernel kernel image ($kimg): run tools/lab setup"
	# The debug kernel's ACPI interpreter, under KASAN and TCG, runs out
	# its 30 s AML loop limit on QEMU's PCI routing method (_PRT), three
	# times a boot: PCI interrupts from the MP table instead.
	local kargs=
	[ "$kernel" != debug ] || kargs=" pci=noacpi"
	[ -f "$initrd" ] || die "no initramfs: run tools/lab setup"
	limit=${LAB_TIMEOUT:-3600}
	{
		printf 'LAB_REPO=%q\n' "$LAB_REPO"
		printf 'LAB_SHARES=%q\n' "${GUEST_SHARES[*]:-}"
		printf 'LAB_CWD=%q\n' "$PWD"
		printf 'LAB_KERNEL=%q\n' "$kernel"
		# The guest reports its state and stops this long before the limit.
		# (None on the exact clock: its guest time leaps ahead of wall
		# time whenever the guest waits for the host.)
		if [ -n "${LAB_METER:-}" ]; then
			printf 'LAB_DEADLINE=0\n'
		else
			printf 'LAB_DEADLINE=%d\n' $((limit > 300 ? limit - 120 : 0))
		fi
		if [ $# -eq 1 ]; then
			printf 'LAB_CMD=%q\n' "$1"
		else
			printf 'LAB_CMD=%q\n' "$(printf '%q ' "$@")"
		fi
	} >"$out/guest.env"
	# shellcheck disable=SC2054 # commas inside QEMU options
	GUEST_QARGS=(-accel tcg,thread=multi -cpu max,la57=off -smp "$smp")
	if [ -n "${LAB_METER:-}" ]; then
		# The exact clock: one vCPU, one guest nanosecond per
		# instruction, idle time skipped; no ERMS/FSRM, so the kernel
		# copies with rep movsq and movq loops, not rep movsb (which TCG
		# counts byte by byte); the meter plugin counts and profiles;
		# no KASLR, so a profile's addresses repeat from boot to boot.
		[ -f "$METER_SO" ] || die "no meter plugin ($METER_SO): run tools/lab setup"
		# shellcheck disable=SC2054
		GUEST_QARGS=(-accel tcg,thread=single -icount shift=0,sleep=off
			-cpu max,la57=off,erms=off,fsrm=off -smp 1
			-plugin "$METER_SO,out=$LAB_METER")
	fi
	# shellcheck disable=SC2054
	GUEST_QARGS+=(
		-m "$mem"
		-display none -monitor none -serial stdio -no-reboot
		-kernel "$kimg" -initrd "$initrd"
		-append "console=ttyS0 loglevel=2 panic=-1 oops=panic panic_print=0x20${LAB_METER:+ nokaslr}$kargs"
		-virtfs "$(guest_9p "$GUEST_ROOT" root readonly=on)"
		-virtfs "$(guest_9p "$LAB_REPO" repo readonly=on)"
		-virtfs "$(guest_9p "$out" out)"
		-nic none
	)
	for s in "${GUEST_SHARES[@]}"; do
		GUEST_QARGS+=(-virtfs "$(guest_9p "$s" "share$i")")
		i=$((i + 1))
	done
}
guest_9p() { echo "local,path=$1,mount_tag=$2,security_model=none,multidevs=remap${3:+,$3}"; }

# guest_verdict OUT [NAME]: the status of the command the guest OUT ran,
# unless the guest died before it finished (124) or its kernel reported a
# problem (an oops, BUG, WARNING, KASAN, lockdep: 99; kmemleak: 98),
# whatever the command said. NAME: how the messages call the guest.
guest_verdict() {
	local out=$1 who=${2:-the guest} rc pat user
	if [ ! -f "$out/status" ]; then
		echo "[lab] $who died before the command finished" >&2
		[ -f "$out/dmesg" ] && tail -n 60 "$out/dmesg" >&2
		return 124
	fi
	rc=$(cat "$out/status")
	pat='Oops:|BUG:|WARNING:|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|Call Trace:|general protection fault|kernel BUG'
	# A program's own fault ("traps: NAME[PID] general protection fault
	# ip:..."): its exit status says it; not the kernel's.
	user='traps: .*\[[0-9]+\] general protection fault'
	if grep -Ev "$user" "$out/dmesg" | grep -Eq "$pat"; then
		echo "[lab] the kernel of $who reported a problem during the run:" >&2
		grep -Ev "$user" "$out/dmesg" | grep -E -A 40 "$pat" | head -n 120 >&2
		[ "$rc" = 0 ] && rc=99
	fi
	if [ -s "$out/kmemleak" ]; then
		echo "[lab] kmemleak found leaks in $who:" >&2
		head -n 80 "$out/kmemleak" >&2
		[ "$rc" = 0 ] && rc=98
	fi
	return "$rc"
}
