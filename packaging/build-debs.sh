#!/bin/bash
# packaging/build-debs.sh OUTDIR [--dkms] [PROVIDER_BUILD...]: softrdma's
# Debian packages, into OUTDIR:
#   --dkms: softrdma-dkms_V_all.deb, softrdma.ko's sources (Kbuild,
#     kernel/, uapi/) in /usr/src/softrdma-V with their dkms.conf, which
#     DKMS builds for each kernel; /etc/modprobe.d and /etc/modules-load.d
#     files (comments: nothing is forced, `rdma link add` loads the module
#     by its alias);
#   softrdma-provider-rdmavN_V_ARCH.deb for each PROVIDER_BUILD, a CMake
#     build of this tree against an rdma-core whose private provider ABI
#     is N (libsoftrdma-rdmavN.so): the provider, its .driver file, the
#     softrdma tool and its man page, as `cmake --install` lays them out.
#     It depends on the libibverbs1 versions that load it: from the oldest
#     that has every symbol it uses (rdma-core's own debian/
#     libibverbs1.symbols) to the rdma-core release it was built against
#     (a later one may change the private ABI: 57 and 64 did), and on the
#     other libraries as dpkg-shlibdeps says (without dpkg-dev: on the
#     versions installed). Run it on the system the build was made on.
# Needs a Debian system with dpkg, cmake and binutils (tools/lab package
# runs it in the lab's roots); no debhelper. SOFTRDMA_VERSION: the
# packages' version (default: CMakeLists.txt's project VERSION);
# SOFTRDMA_MAINTAINER: their Maintainer field.
set -euo pipefail

SRC=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
PKG=$SRC/packaging

die() {
	echo "build-debs: $*" >&2
	exit 1
}

[ $# -ge 1 ] || {
	echo "usage: packaging/build-debs.sh OUTDIR [--dkms] [PROVIDER_BUILD...]" >&2
	exit 2
}
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
version=${SOFTRDMA_VERSION:-$(sed -nE 's/^project\(softrdma VERSION ([0-9.]+).*/\1/p' "$SRC/CMakeLists.txt")}
[ -n "$version" ] || die "no version in CMakeLists.txt's project()"
maint=${SOFTRDMA_MAINTAINER:-softrdma developers <softrdma@invalid>}
arch=$(dpkg --print-architecture)
stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# fill TEMPLATE KEY=VALUE...: TEMPLATE with every @KEY@ replaced by VALUE.
fill() {
	local t kv
	t=$(cat "$1")
	shift
	for kv in "$@"; do
		t=${t//"@${kv%%=*}@"/"${kv#*=}"}
	done
	printf '%s\n' "$t"
}

# docs DIR PACKAGE: the copyright file every package carries.
docs() {
	install -D -m 644 "$PKG/copyright" "$1/usr/share/doc/$2/copyright"
}

# deb DIR CONTROL KEY=VALUE...: DIR/DEBIAN/control from CONTROL (with
# the installed size), DIR/DEBIAN/md5sums, and the package, in OUTDIR.
deb() {
	local d=$1 ctl=$2 size
	shift 2
	size=$(du -sk --exclude=DEBIAN "$d" | cut -f 1)
	mkdir -p "$d/DEBIAN"
	fill "$ctl" VERSION="$version" MAINTAINER="$maint" SIZE="$size" "$@" >"$d/DEBIAN/control"
	(cd "$d" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 -r md5sum) >"$d/DEBIAN/md5sums"
	dpkg-deb --root-owner-group --build "$d" "$out" >&2
}

dkms_deb() {
	local d=$stage/softrdma-dkms src f
	src=$d/usr/src/softrdma-$version
	install -d -m 755 "$src"
	install -m 644 "$SRC/Kbuild" "$src/"
	# The sources only: an in-tree build's objects stay behind.
	(cd "$SRC" && find kernel uapi -type f \( -name '*.[chS]' -o -name '*.mk' -o -name Kbuild -o -name Makefile \) -print0) |
		while IFS= read -r -d '' f; do
			install -D -m 644 "$SRC/$f" "$src/$f"
		done
	fill "$PKG/dkms.conf" VERSION="$version" >"$src/dkms.conf"
	chmod 644 "$src/dkms.conf"
	install -D -m 644 "$PKG/modprobe.conf" "$d/etc/modprobe.d/softrdma.conf"
	install -D -m 644 "$PKG/modules-load.conf" "$d/etc/modules-load.d/softrdma.conf"
	docs "$d" softrdma-dkms
	install -d -m 755 "$d/DEBIAN"
	for f in postinst prerm; do
		fill "$PKG/softrdma-dkms/$f" VERSION="$version" >"$d/DEBIAN/$f"
		chmod 755 "$d/DEBIAN/$f"
	done
	printf '%s\n' /etc/modprobe.d/softrdma.conf /etc/modules-load.d/softrdma.conf >"$d/DEBIAN/conffiles"
	deb "$d" "$PKG/softrdma-dkms/control"
}

# ibverbs_range SYMBOLS ABI RDMA_CORE_VERSION FILE...: the libibverbs1
# dependency of the provider and tool FILEs, built against that rdma-core
# (SYMBOLS: its debian/libibverbs1.symbols).
ibverbs_range() {
	local syms=$1 abi=$2 rc_version=$3 low=$2 up need f
	shift 3
	if [ -f "$syms" ]; then
		# The oldest version that has every symbol@version they import.
		need=$(for f in "$@"; do objdump -T "$f"; done |
			awk '/\*UND\*/ { v = $(NF - 1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u)
		low=$({
			awk 'NR == FNR { need[$1] = 1; next } $1 in need { print $2 }' \
				<(printf '%s\n' "$need") "$syms"
			echo "$abi"
		} | sort -V | tail -n 1)
	else
		echo "build-debs: no $syms: libibverbs1 (>= $abi)" >&2
	fi
	up=$((${rc_version%%.*} + 1))
	echo "libibverbs1 (>= $low), libibverbs1 (<< $up~)"
}

# installed_deps FILE...: "PKG (>= VERSION)" for the package of each
# library the FILEs need, but libibverbs1, at its installed upstream
# version.
installed_deps() {
	local lib path pkg ver
	for lib in $(objdump -p "$@" | awk '$1 == "NEEDED" { print $2 }' | sort -u); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
		[ -n "$path" ] || die "$lib: not found"
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f 1)
		[ -n "$pkg" ] || die "$path: in no package"
		[ "$pkg" != libibverbs1 ] || continue
		ver=$(dpkg-query -W -f='${Version}' "$pkg")
		ver=${ver#*:}
		echo "$pkg (>= ${ver%-*})"
	done | sort -u | paste -s -d, | sed 's/,/, /g'
}

provider_deb() {
	local b=$1 d lib so bin tmp shl dep abi rc_build rc_version
	b=$(cd "$b" && pwd)
	lib=$(find "$b" -maxdepth 1 -name 'libsoftrdma-rdmav*.so' -printf '%f\n' | head -n 1)
	[ -n "$lib" ] || die "$b: no libsoftrdma-rdmav*.so (not a provider build?)"
	abi=${lib#libsoftrdma-rdmav}
	abi=${abi%.so}
	rc_build=$(sed -n 's/^RDMA_CORE_BUILD:PATH=//p' "$b/CMakeCache.txt")
	[ -f "$rc_build/include/config.h" ] || die "$b: its rdma-core build ($rc_build) is gone"
	rc_version=$(sed -nE 's/^#define PACKAGE_VERSION "(.*)"/\1/p' "$rc_build/include/config.h")
	[ "$(sed -nE 's/^#define IBVERBS_PABI_VERSION ([0-9]+).*/\1/p' "$rc_build/include/config.h")" = "$abi" ] ||
		die "$b: $lib, but rdma-core $rc_version's provider ABI is not $abi"

	d=$stage/softrdma-provider-rdmav$abi
	[ ! -e "$d" ] || die "two provider builds for ABI $abi"
	DESTDIR=$d cmake --install "$b" --strip >&2
	so=$(find "$d" -name "$lib" -path '*/libibverbs/*')
	bin=$d/usr/bin/softrdma
	if [ -z "$so" ] || [ ! -x "$bin" ] || [ ! -f "$d/etc/libibverbs.d/softrdma.driver" ]; then
		die "$b: cmake --install did not lay out the provider, tool and driver file"
	fi
	chmod 644 "$so"
	install -d -m 755 "$d/usr/share/man/man8"
	gzip -9n <"$SRC/Documentation/softrdma.8" >"$d/usr/share/man/man8/softrdma.8.gz"
	chmod 644 "$d/usr/share/man/man8/softrdma.8.gz"
	docs "$d" "softrdma-provider-rdmav$abi"
	mkdir -p "$d/DEBIAN"
	echo /etc/libibverbs.d/softrdma.driver >"$d/DEBIAN/conffiles"

	# Shared libraries but libibverbs: dpkg-shlibdeps (which wants a
	# debian/control to run in), else the versions installed here.
	if command -v dpkg-shlibdeps >/dev/null; then
		tmp=$stage/shlibdeps-$abi
		mkdir -p "$tmp/debian"
		printf 'Source: softrdma\n\nPackage: softrdma-provider-rdmav%s\nArchitecture: any\n' \
			"$abi" >"$tmp/debian/control"
		shl=$(cd "$tmp" && dpkg-shlibdeps -O -xlibibverbs1 "$bin" "$so" 2>"$tmp/log") || {
			cat "$tmp/log" >&2
			die "dpkg-shlibdeps failed"
		}
		shl=${shl#shlibs:Depends=}
	else
		echo "build-debs: no dpkg-shlibdeps: the provider depends on the libraries installed here" >&2
		shl=$(installed_deps "$bin" "$so")
	fi
	dep="${shl:+$shl, }$(ibverbs_range "$rc_build/../debian/libibverbs1.symbols" \
		"$abi" "$rc_version" "$bin" "$so")"
	deb "$d" "$PKG/softrdma-provider/control" ABI="$abi" ARCH="$arch" \
		DEPENDS="$dep" RDMA_CORE="$rc_version"
}

for a in "$@"; do
	case "$a" in
	--dkms) dkms_deb ;;
	*) provider_deb "$a" ;;
	esac
done
