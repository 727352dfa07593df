#!/usr/bin/env bash
# tests/package/test.sh [--out FILE]: the packages of `tools/lab package`
# (build/packages) as a Debian 13 user gets them. In a copy of the guest
# root (an overlay over the lab root, in a private mount namespace, under
# $SOFTRDMA_LAB; deleted at the end) with only the stock kernel's headers:
#   package.install  apt installs softrdma-dkms and the provider package
#                    for the root's libibverbs (with dkms, a dependency);
#                    dkms's postinst builds softrdma.ko for the stock
#                    kernel into /lib/modules/KVER/updates/dkms;
#   package.guest    a guest booted on the copy (tools/lab run --root)
#                    runs tests/package/guest.sh: modprobe, rdma link add,
#                    softrdma list, ib_write_lat across the veth pair, with
#                    the installed module, provider and tool only;
#   package.purge    apt purges both packages: no file of theirs, no
#                    softrdma.ko, no DKMS tree, no depmod entry is left.
# Prints PASS/FAIL NAME per check (also to FILE) and each phase's time;
# exits non-zero if any check failed. Downloaded .debs are kept in
# $SOFTRDMA_LAB/pkgtest-apt for the next run.
set -euo pipefail
# shellcheck source=tools/lab.d/lib.sh
. "$(dirname "$0")/../../tools/lab.d/lib.sh"
need_root

outf=
case "${1:-}" in
--out) outf=$2 ;;
"") ;;
*) die "usage: tests/package/test.sh [--out FILE]" ;;
esac

# The overlay and its binds live and die with a mount namespace of our own.
if [ -z "${PKGTEST_NS:-}" ]; then
	PKGTEST_NS=1 exec unshare --mount --propagation private -- "$0" "$@"
fi

pkgs=$LAB_BUILD/packages
kver=$(stock_kver)
dkms_deb=$(find "$pkgs" -maxdepth 1 -name 'softrdma-dkms_*_all.deb' 2>/dev/null)
if [ -z "$dkms_deb" ] || [ "$(wc -l <<<"$dkms_deb")" != 1 ]; then
	die "no (single) softrdma-dkms package in $pkgs: run tools/lab package"
fi
# The provider package for the root's libibverbs: its private ABI.
abi=$(objdump -T "$LAB_ROOT"/usr/lib/*/libibverbs.so.1 | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u)
abi=${abi##*_}
prov=softrdma-provider-rdmav$abi
prov_deb=$(find "$pkgs" -maxdepth 1 -name "${prov}_*.deb")
[ -n "$prov_deb" ] || die "no $prov package in $pkgs (the lab root's libibverbs has ABI $abi)"

work=$(mktemp -d "$SOFTRDMA_LAB/pkgtest.XXXXXX")
R=$work/root
log=$work/log
fails=0
cleanup() {
	umount -R "$R" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

result() {
	[ "$1" = PASS ] || fails=$((fails + 1))
	echo "$1 $2"
	[ -z "$outf" ] || echo "$1 $2" >>"$outf"
}
# phase NAME T0: how long the phase took.
phase() { say "$1: $((SECONDS - $2)) s"; }
# in_copy CMD...: CMD in the copy, as in_root runs it in the lab root.
in_copy() { LAB_ROOT=$R in_root "$@"; }
showlog() {
	tail -n "${1:-40}" "$log"
	: >"$log"
}

mkdir -p "$work/upper" "$work/work" "$R" "$SOFTRDMA_LAB/pkgtest-apt/partial"
mount -t overlay overlay -o "lowerdir=$LAB_ROOT,upperdir=$work/upper,workdir=$work/work" "$R"
mount --bind "$SOFTRDMA_LAB/pkgtest-apt" "$R/var/cache/apt/archives"
# A machine with the guest's kernel and its headers only: DKMS builds for
# every kernel with headers on a first install, and other checkouts put
# more kernels in the lab root.
for m in "$R"/lib/modules/*; do
	[ "$m" = "$R/lib/modules/$kver" ] || rm -f "$m/build"
done
# probe: what DKMS and depmod made of softrdma's (not in dpkg's lists).
probe() {
	(
		cd "$R"
		for f in usr/src/softrdma* var/lib/dkms/softrdma lib/modules/*/updates/dkms/softrdma.ko* \
			etc/libibverbs.d/softrdma.driver usr/bin/softrdma usr/lib/*/libibverbs/libsoftrdma*; do
			[ ! -e "$f" ] || echo "/$f"
		done
		grep -l -w softrdma lib/modules/*/modules.dep lib/modules/*/modules.alias 2>/dev/null |
			sed 's|^|softrdma in /|'
	) || true
}
# What the lab root may have of it already is not the packages' doing.
before=$(probe)
# No service starts in the chroot.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"

say "package.install: ${dkms_deb##*/}, ${prov_deb##*/} into a copy of the lab root ($work)"
t0=$SECONDS
install_pkgs() { in_copy apt-get install -y --no-install-recommends "$dkms_deb" "$prov_deb" >>"$log" 2>&1; }
ok=1
if ! install_pkgs; then
	# The copy's package lists may be older than the mirror's pool:
	# refresh them (in the copy only) and try once more.
	if grep -q -E 'Failed to fetch|Unable to fetch' "$log"; then
		in_copy apt-get update >>"$log" 2>&1 && install_pkgs || ok=0
	else
		ok=0
	fi
fi
ko=$(find "$R/lib/modules/$kver/updates/dkms" -maxdepth 1 -name 'softrdma.ko*' 2>/dev/null)
grep -E '^(Building|Installing|Running depmod|Error|Warning|WARNING)' "$log" | head -n 20 || true
for p in softrdma-dkms "$prov"; do
	# shellcheck disable=SC2016 # dpkg-query's format
	st=$(in_copy dpkg-query -W -f='${Status}' "$p" 2>/dev/null) || true
	[ "$st" = "install ok installed" ] || {
		echo "$p: '$st'"
		ok=0
	}
done
if [ -z "$ko" ]; then
	echo "no softrdma.ko in /lib/modules/$kver/updates/dkms"
	ok=0
elif [ "$(in_copy modinfo -k "$kver" -F filename softrdma)" != "${ko#"$R"}" ]; then
	echo "modinfo -k $kver softrdma does not find ${ko#"$R"}"
	ok=0
elif ! grep -q '^alias rdma-link-softroce softrdma$' "$R/lib/modules/$kver/modules.alias"; then
	echo "depmod has no alias rdma-link-softroce for softrdma"
	ok=0
else
	echo "${ko#"$R"}: $(in_copy modinfo -k "$kver" -F vermagic softrdma)"
fi
if [ $ok = 1 ]; then
	result PASS package.install
	: >"$log"
else
	showlog 60
	cat "$R"/var/lib/dkms/softrdma/*/build/make.log 2>/dev/null | tail -n 30
	result FAIL package.install
fi
phase package.install $t0

if [ $ok = 1 ]; then
	t0=$SECONDS
	# guest-init.sh: a root so marked keeps what it has installed.
	mkdir -p "$R/etc/softrdma-lab"
	echo "tests/package/test.sh: use the installed softrdma" >"$R/etc/softrdma-lab/use-installed"
	if LAB_TIMEOUT=${LAB_TIMEOUT:-900} "$LAB_REPO/tools/lab" run --root "$R" -- \
		"$LAB_REPO/tests/package/guest.sh"; then
		result PASS package.guest
	else
		result FAIL "package.guest (exit $?)"
	fi
	rm -r "$R/etc/softrdma-lab"
	phase package.guest $t0
fi

t0=$SECONDS
# What dpkg installed (files and links; directories may be shared).
owned=$(in_copy dpkg-query -L softrdma-dkms "$prov" 2>/dev/null |
	while read -r f; do [ -d "$R$f" ] && [ ! -L "$R$f" ] || echo "$f"; done)
ok=1
in_copy apt-get purge -y softrdma-dkms "$prov" >>"$log" 2>&1 || {
	showlog
	ok=0
}
left=$(
	for p in softrdma-dkms "$prov"; do
		# shellcheck disable=SC2016 # dpkg-query's format
		st=$(in_copy dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) || true
		[ -z "$st" ] || [ "$st" = not-installed ] || echo "dpkg: $p is $st"
	done
	for f in $owned; do
		[ ! -e "$R$f" ] && [ ! -L "$R$f" ] || echo "$f"
	done
	probe | grep -v -x -F -f <(echo "$before") || true
)
if [ -z "$owned" ]; then
	echo "dpkg listed no files of softrdma-dkms and $prov"
	ok=0
fi
if [ -n "$left" ]; then
	echo "left behind after apt-get purge:"
	while read -r f; do echo "  $f"; done <<<"$left"
	ok=0
fi
if [ $ok = 1 ]; then
	echo "purged: none of their $(wc -w <<<"$owned") files, no DKMS tree, module or depmod entry left"
	result PASS package.purge
else
	result FAIL package.purge
fi
phase package.purge $t0
[ $fails = 0 ]
