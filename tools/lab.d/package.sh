#!/usr/bin/env bash
# tools/lab package [--test [--out FILE]]: this checkout's Debian packages
# in build/packages/: softrdma-dkms and a softrdma-provider-rdmavN for each
# provider build (build/user: rdma-core 56.1, ABI 34; any other
# build/user-*), made in the lab root by packaging/build-debs.sh. Builds
# the checkout first if its build is missing or out of date.
# --test: then tests/package/test.sh (install them with DKMS into a copy
# of the guest root, use them in a guest, purge them); --out FILE: its
# PASS/FAIL lines also go to FILE.
# Version: CMakeLists.txt's project VERSION, then +gitDATE.HASH of HEAD
# (UTC commit time), then .dirty if tracked files differ from HEAD.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root

test=0
testargs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--test) test=1 ;;
	--out) testargs+=(--out "$2") && shift ;;
	*) die "usage: tools/lab package [--test [--out FILE]]" ;;
	esac
	shift
done

lab_ready

version=$(sed -nE 's/^project\(softrdma VERSION ([0-9.]+).*/\1/p' "$LAB_REPO/CMakeLists.txt")
git=(git -C "$LAB_REPO" -c safe.directory='*')
if "${git[@]}" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	version+=+git$(TZ=UTC "${git[@]}" log -1 --format=%cd --date=format-local:%Y%m%d%H%M)
	version+=.$("${git[@]}" rev-parse --short=8 HEAD)
	"${git[@]}" diff --quiet HEAD -- || version+=.dirty
fi

# A provider build is packaged in the root it was built in (its libraries'
# versions, its rdma-core tree): the lab root's, or another root of the
# lab's (build/user-65: the sid root).
root_of() {
	local rc r
	rc=$(sed -n 's/^RDMA_CORE_BUILD:PATH=//p' "$1/CMakeCache.txt")
	for r in "$LAB_ROOT" ${SID_ROOT:+"$SID_ROOT"}; do
		[ -f "$r$rc/include/config.h" ] && echo "$r" && return
	done
	die "$1: no root of the lab has its rdma-core tree ($rc)"
}

out=$LAB_BUILD/packages
rm -rf "$out"
mkdir -p "$out"
debs() { in_root env SOFTRDMA_VERSION="$version" "$LAB_REPO/packaging/build-debs.sh" "$out" "$@"; }
step package-dkms debs --dkms
n=0
for b in "$LAB_BUILD"/user "$LAB_BUILD"/user-*; do
	if [ -f "$b/CMakeCache.txt" ] && compgen -G "$b/libsoftrdma-rdmav*.so" >/dev/null; then
		r=$(root_of "$b")
		LAB_ROOT=$r step "package-provider-${b##*/}" debs "$b"
		n=$((n + 1))
	fi
done
[ $n -gt 0 ] || die "no provider build in $LAB_BUILD/user*"
say "packages $version in $out:"
for f in "$out"/*.deb; do echo "  ${f##*/}"; done >&2

if [ $test = 1 ]; then
	exec "$LAB_REPO/tests/package/test.sh" ${testargs[@]+"${testargs[@]}"}
fi
