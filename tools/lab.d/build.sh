#!/usr/bin/env bash
# tools/lab build: softrdma.ko for the stock and debug 6.12 kernels (and
# compile checks against the host's Debian 12 6.1 headers, trixie-backports'
# 7.3 and, with the sid root, sid's 7.2), the KUnit suite,
# the kernel verbs test module (tests/kmod, loaded by tests/vm/run.sh),
# the provider and the tools (for rdma-core 56.1 in build/user, for 65.0
# in build/user-65), all under build/ in this checkout. Nothing is
# installed into the shared lab root: a guest takes the modules and the
# provider from the build tree of the checkout that boots it (guest-init.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

STOCK=$(stock_kver)
DEBUG=$(debug_kver)
mkdir -p "$LAB_BUILD"
# The stamp says when the build started: a source saved during it is newer.
rm -f "$BUILD_STAMP"
touch "$BUILD_STAMP.new"

# Kbuild writes objects beside the sources: give each kernel its own copy.
stage_kmod() {
	local dst=$LAB_BUILD/kmod-$1
	mkdir -p "$dst"
	rsync -a --delete --include Kbuild --include 'kernel/***' \
		--include 'uapi/***' --include 'tests/' --include 'tests/kunit/***' \
		--include 'tests/kmod/***' --exclude '*' "$LAB_REPO/" "$dst/"
	echo "$dst"
}

# Kbuild compiles one file at a time unless told: a module's files in
# parallel, on every core.
JOBS=$(nproc)

# kmake CMD...: run a kernel build command; fail on a compiler or modpost
# warning too (W=1 builds must be clean).
kmake() {
	local out
	out=$("$@" 2>&1) || {
		printf '%s\n' "$out"
		return 1
	}
	printf '%s\n' "$out"
	if grep -E ': warning:|^WARNING: ' <<<"$out"; then
		echo "warnings above: the build must be W=1 clean"
		return 1
	fi
}

kmod_stock() {
	local d
	d=$(stage_kmod stock)
	kmake in_root make -j"$JOBS" -C "/usr/src/linux-headers-$STOCK" M="$d" W=1 modules
	kmake in_root make -j"$JOBS" -C "/usr/src/linux-headers-$STOCK" M="$d/tests/kmod" W=1 modules
}

kmod_debug() {
	local d
	d=$(stage_kmod debug)
	kmake in_root make -j"$JOBS" -C "$DEBUG_KDIR" M="$d" W=1 modules
	kmake in_root make -j"$JOBS" -C "$DEBUG_KDIR" M="$d/tests/kunit" W=1 modules
	kmake in_root make -j"$JOBS" -C "$DEBUG_KDIR" M="$d/tests/kmod" W=1 modules
}

kmod_host61() {
	local kdir d
	kdir=$(find /usr/src -maxdepth 1 -name 'linux-headers-6.1.*-amd64' | sort -V | tail -n 1)
	[ -n "$kdir" ] || {
		echo "no Debian 12 6.1 headers on the host (tools/lab setup installs them)"
		return 1
	}
	d=$(stage_kmod host61)
	kmake make -j"$JOBS" -C "$kdir" M="$d" W=1 modules
}

# trixie-backports' 7.3 headers (tools/lab setup unpacks them into the
# root; built with trixie's gcc-14): a compile check, module and tests/kmod.
kmod_73() {
	local kdir=/usr/src/linux-headers-$BPO_KVER-amd64 d
	[ -f "$LAB_ROOT$kdir/Makefile" ] || {
		echo "no $BPO_KVER headers in the lab root: run tools/lab setup"
		return 1
	}
	d=$(stage_kmod 7.3)
	kmake in_root make -j"$JOBS" -C "$kdir" M="$d" W=1 modules
	kmake in_root make -j"$JOBS" -C "$kdir" M="$d/tests/kmod" W=1 modules
}

# sid's 7.2 headers want sid's gcc-16: a compile check in the sid root.
SID_KROOT=${SID_ROOT:-$SOFTRDMA_LAB/sid-root}
kmod_72() {
	local kdir d
	kdir=$(find "$SID_KROOT/usr/src" -maxdepth 1 -name 'linux-headers-7.2.*-amd64' -printf '/usr/src/%f\n' | sort -V | tail -n 1)
	[ -n "$kdir" ] || {
		echo "no 7.2 headers in $SID_KROOT: run tools/lab setup"
		return 1
	}
	d=$(stage_kmod 7.2)
	LAB_ROOT=$SID_KROOT kmake in_root make -j"$JOBS" -C "$kdir" M="$d" W=1 modules
	LAB_ROOT=$SID_KROOT kmake in_root make -j"$JOBS" -C "$kdir" M="$d/tests/kmod" W=1 modules
}

userspace() {
	in_root cmake -S "$LAB_REPO" -B "$LAB_BUILD/user" -G Ninja \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
		-DRDMA_CORE_BUILD="$RDMA_CORE_DIR/build" \
		-DSOFTRDMA_HOST_TESTS=OFF
	in_root ninja -C "$LAB_BUILD/user"
}

# The provider (and the tools and test programs) for rdma-core 65, built in
# the sid root against its configured 65.0 tree: build/user-65, named for
# that tree's private ABI (libsoftrdma-rdmav65.so). guest-init.sh gives a
# guest the build whose ABI its root's libibverbs has.
userspace_65() {
	[ -f "$SID_ROOT$SID_RDMA_CORE_DIR/build/include/config.h" ] ||
		die "no rdma-core $SID_RDMA_CORE_VER in $SID_ROOT: run tools/lab setup"
	in_sid cmake -S "$LAB_REPO" -B "$LAB_BUILD/user-65" -G Ninja \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
		-DRDMA_CORE_BUILD="$SID_RDMA_CORE_DIR/build" \
		-DSOFTRDMA_HOST_TESTS=OFF
	in_sid ninja -C "$LAB_BUILD/user-65"
}

host_tests() {
	cmake -S "$LAB_REPO" -B "$LAB_BUILD/host" -DSOFTRDMA_HOST_TESTS=ON \
		-DSOFTRDMA_PROVIDER=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build "$LAB_BUILD/host" -j "$(nproc)"
}

step build-kmod-stock kmod_stock
step build-kmod-debug kmod_debug
step build-kmod-host61 kmod_host61
step build-kmod-73 kmod_73
if [ -x "$SID_KROOT/usr/bin/make" ]; then
	step build-kmod-72 kmod_72
else
	say "no sid root ($SID_KROOT): no build against sid's 7.2 headers"
fi
step build-userspace userspace
step build-userspace-65 userspace_65
step build-host-tests host_tests
mv "$BUILD_STAMP.new" "$BUILD_STAMP"
say "build complete in $LAB_BUILD: softrdma.ko for $STOCK and $DEBUG, checked against 6.1, 7.3 (and 7.2 with the sid root); provider and tools"
