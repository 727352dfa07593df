#!/usr/bin/env bash
# tools/lab setup [--check]: build or refresh the lab cache. Idempotent:
# every step leaves a stamp and is skipped when its stamp matches its
# inputs. --check changes nothing: exits 0 if no step would run.
# The Debian mirror is the host's own (its apt sources), or SOFTRDMA_MIRROR
# (and SOFTRDMA_SECURITY_MIRROR); it is not an input of any stamp: a new
# mirror rebuilds nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check=0
[ "${1:-}" = --check ] && check=1
[ $check = 1 ] || need_root

HOST_PKGS="qemu-system-x86 debootstrap busybox-static cpio linux-headers-amd64 \
cmake g++ libgtest-dev libibverbs-dev libnl-3-dev clang-tidy clang-format rsync zstd \
shellcheck"
ROOT_PKGS="linux-image-amd64 linux-headers-amd64 linux-source-6.12 \
build-essential bc bison flex libelf-dev libssl-dev cpio kmod rsync python3 \
cmake ninja-build pkg-config dpkg-dev \
rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest \
libibverbs-dev librdmacm-dev libnl-3-dev libnl-route-3-dev libudev-dev \
libsystemd-dev python3-pyverbs iproute2 tcpdump tshark nvme-cli fio \
procps iputils-ping ethtool strace less gdb"
# The kernel's and userspace's RDMA users the tests run (NFS over RDMA, UCX,
# Open MPI). A stage of their own: adding one never upgrades (and so never
# rebuilds) what the stages after root-packages made from the root.
ULP_PKGS="nfs-kernel-server ucx-utils openmpi-bin libopenmpi-dev"
# What tools/lab bench compares softrdma with on the wire: the kernel's TCP
# (iperf3 for bandwidth, sockperf for a busy-polling ping-pong). Adding one
# rebuilds nothing. (Not perf: under TCG its cpu-clock samples land in the
# idle loop, about 97 % of them; the exact meter profiles instead.)
BENCH_PKGS="iperf3 sockperf"
# The exact meter's TCP: qperf (iperf3's timers make it unsteady on the
# exact clock). A stage of its own, after fabric-packages.
METER_PKGS="qperf"
# libfabric's verbs provider and its ping-pong (fi_pingpong, fi_info) for
# the libfabric tests. A stage of its own, after bench-packages: adding it
# rebuilds nothing.
FABRIC_PKGS="libfabric-bin"

STAMPS=$SOFTRDMA_LAB/stamps
[ $check = 1 ] || mkdir -p "$SOFTRDMA_LAB" "$LAB_LOGS" "$STAMPS"

# done_p NAME KEY: true when step NAME already ran with inputs KEY.
done_p() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark() { echo "$2" >"$STAMPS/$1"; }
key_of() { printf '%s' "$*" | sha256sum | cut -c1-16; }

host_packages() {
	local missing=()
	for p in $HOST_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# apt_uris: "URI SUITE..." of each enabled deb source on the host, one-line
# (sources.list, *.list) and deb822 (*.sources) formats.
apt_uris() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# deb [options] URI SUITE COMPONENT...
		sed -E 's/#.*//; s/\[[^]]*\]//' "$f" | awk '$1 == "deb" { print $2, $3 }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			function flush() {
				if (deb && en && uri != "") {
					n = split(uri, u, " ")
					for (i = 1; i <= n; i++) print u[i], suites
				}
				deb = 0; en = 1; uri = ""; suites = ""
			}
			BEGIN { en = 1 }
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{
				k = tolower($1); sub(/:$/, "", k)
				$1 = ""; sub(/^ +/, "")
				if (k == "types") deb = (" " $0 " " ~ / deb /)
				else if (k == "uris") uri = $0
				else if (k == "suites") suites = $0
				else if (k == "enabled") en = (tolower($0) != "no")
			}
			END { flush() }
		' "$f"
	done
}

# host_mirror [security]: the host's Debian mirror (the URI serving its own
# release, or its release's security updates); deb.debian.org if none.
host_mirror() {
	local codename want uri suites
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	want=$codename
	[ "${1:-}" = security ] && want=$codename-security
	if [ -n "$codename" ]; then
		while read -r uri suites; do
			case " $suites " in
			*" $want "*)
				echo "${uri%/}"
				return 0
				;;
			esac
		done < <(apt_uris)
	fi
	if [ "${1:-}" = security ]; then
		echo http://deb.debian.org/debian-security
	else
		echo http://deb.debian.org/debian
	fi
}

MIRROR=${SOFTRDMA_MIRROR:-$(host_mirror)}
if [ -n "${SOFTRDMA_SECURITY_MIRROR:-}" ]; then
	SECURITY_MIRROR=$SOFTRDMA_SECURITY_MIRROR
elif [ -n "${SOFTRDMA_MIRROR:-}" ]; then
	SECURITY_MIRROR=${SOFTRDMA_MIRROR%/}-security
else
	SECURITY_MIRROR=$(host_mirror security)
fi

debootstrap_root() {
	rm -rf "$LAB_ROOT" "$LAB_ROOT.tmp"
	debootstrap --variant=minbase trixie "$LAB_ROOT.tmp" "$MIRROR"
	mv "$LAB_ROOT.tmp" "$LAB_ROOT"
}

root_packages() {
	cat >"$LAB_ROOT/etc/apt/sources.list" <<SRC
deb $MIRROR trixie main
deb-src $MIRROR trixie main
deb $SECURITY_MIRROR trixie-security main
deb $MIRROR trixie-updates main
SRC
	echo 'wireshark-common wireshark-common/install-setuid boolean false' |
		in_root debconf-set-selections
	in_root apt-get update -q
	# shellcheck disable=SC2086
	in_root apt-get install -y -q --no-install-recommends $ROOT_PKGS
	in_root apt-get clean
	# The guest has no udev; these make hostnames and logins sane.
	echo softrdma-lab >"$LAB_ROOT/etc/hostname"
}

# extra_packages PKG...: more packages in the root, nothing upgraded, no
# service started.
extra_packages() {
	printf '#!/bin/sh\nexit 101\n' >"$LAB_ROOT/usr/sbin/policy-rc.d"
	chmod 755 "$LAB_ROOT/usr/sbin/policy-rc.d"
	in_root apt-get update -q
	in_root apt-get install -y -q --no-install-recommends --no-upgrade "$@"
	in_root apt-get clean
	rm -f "$LAB_ROOT/usr/sbin/policy-rc.d"
}

rdma_core_source() {
	in_root sh -ec "
		mkdir -p $ROOT_OPT/dl && cd $ROOT_OPT/dl
		apt-get source --download-only rdma-core=$RDMA_CORE_VER-1 || true
		test -f rdma-core_$RDMA_CORE_VER.orig.tar.gz
		rm -rf $RDMA_CORE_DIR && mkdir -p $ROOT_OPT
		tar -C $ROOT_OPT -xzf rdma-core_$RDMA_CORE_VER.orig.tar.gz
		cd $RDMA_CORE_DIR && mkdir -p build && cd build
		cmake -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 .. >/dev/null
		ninja include/kernel-abi/ib_user_verbs.h
		test -f include/infiniband/driver.h
	"
}

# The sid root ($SID_ROOT, lib.sh): a second, smaller guest root with
# rdma-core 65's libibverbs, for the provider built against it
# (build/user-65), and its pyverbs (for 65's own tests), and sid's gcc-16
# with its 7.2 kernel headers. It boots the stock kernel, whose modules
# it gets from the lab root. Its own stages and stamps (sid-*); they
# change nothing the stages above made.
SID_KVER=7.2.13+deb14
SID_PKGS="libibverbs1 ibverbs-providers ibverbs-utils rdmacm-utils perftest \
libibverbs-dev librdmacm-dev iproute2 kmod procps ethtool hostname \
cmake ninja-build make pkg-config python3 gcc g++ gcc-16 libnl-3-dev \
libnl-route-3-dev libudev-dev libsystemd-dev linux-headers-$SID_KVER-amd64 \
python3-pyverbs"

sid_debootstrap() {
	rm -rf "$SID_ROOT" "$SID_ROOT.tmp"
	debootstrap --variant=minbase sid "$SID_ROOT.tmp" "$MIRROR"
	mv "$SID_ROOT.tmp" "$SID_ROOT"
}

sid_packages() {
	cat >"$SID_ROOT/etc/apt/sources.list" <<SRC
deb $MIRROR sid main
deb-src $MIRROR sid main
SRC
	# sid's index says it expires within days; the mirror may serve an
	# older one (a snapshot), as the host's apt already accepts.
	echo 'Acquire::Check-Valid-Until "false";' >"$SID_ROOT/etc/apt/apt.conf.d/99softrdma-lab"
	echo softrdma-lab-sid >"$SID_ROOT/etc/hostname"
	printf '#!/bin/sh\nexit 101\n' >"$SID_ROOT/usr/sbin/policy-rc.d"
	chmod 755 "$SID_ROOT/usr/sbin/policy-rc.d"
	in_sid apt-get update -q
	# shellcheck disable=SC2086 # package list
	in_sid apt-get install -y -q --no-install-recommends $SID_PKGS
	in_sid apt-get clean
	rm -f "$SID_ROOT/usr/sbin/policy-rc.d"
	test -f "$SID_ROOT/usr/src/linux-headers-$SID_KVER-amd64/Makefile"
}

# sid_modules KVER: the lab root's stock kernel modules (with siw), a copy.
sid_modules() {
	mkdir -p "$SID_ROOT/lib/modules"
	rsync -a --delete "$LAB_ROOT/lib/modules/$1/" "$SID_ROOT/lib/modules/$1/"
	in_sid depmod -a "$1"
}

# rdma-core 65's source, configured as rdma_core_source does 56.1's; the
# version the sid root's libibverbs has.
sid_rdma_core() {
	in_sid sh -ec "
		v=\$(dpkg-query -W -f='\${Version}' libibverbs1)
		test \"\${v%-*}\" = $SID_RDMA_CORE_VER
		mkdir -p $ROOT_OPT/dl && cd $ROOT_OPT/dl
		apt-get source --download-only rdma-core=\$v || true
		test -f rdma-core_$SID_RDMA_CORE_VER.orig.tar.gz
		rm -rf $SID_RDMA_CORE_DIR && mkdir -p $SID_RDMA_CORE_DIR
		tar -C $SID_RDMA_CORE_DIR --strip-components=1 -xzf rdma-core_$SID_RDMA_CORE_VER.orig.tar.gz
		cd $SID_RDMA_CORE_DIR && mkdir -p build && cd build
		cmake -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 .. >/dev/null
		ninja include/kernel-abi/ib_user_verbs.h
		test -f include/infiniband/driver.h
		grep '^#define IBVERBS_PABI_VERSION' include/config.h
	"
}

linux_source() {
	in_root sh -ec "
		rm -rf $ROOT_OPT/linux-src && mkdir -p $ROOT_OPT/linux-src
		tar -C $ROOT_OPT/linux-src --strip-components=1 -xf /usr/src/linux-source-6.12.tar.xz
	"
}

siw_stock() {
	local kver=$1
	in_root sh -ec "
		d=$ROOT_OPT/siw-stock && rm -rf \$d && mkdir -p \$d
		cp $ROOT_OPT/linux-src/drivers/infiniband/sw/siw/*.[ch] \$d/
		printf 'obj-m += siw.o\nsiw-y := siw_cm.o siw_cq.o siw_main.o siw_mem.o siw_qp.o siw_qp_rx.o siw_qp_tx.o siw_verbs.o\n' >\$d/Kbuild
		make -C /usr/src/linux-headers-$kver M=\$d modules
		mkdir -p /lib/modules/$kver/updates
		install -m644 \$d/siw.ko /lib/modules/$kver/updates/siw.ko
		depmod -a $kver
	"
}

debug_kernel() {
	local frag=$ROOT_OPT/debug.config
	cp "$LAB_REPO/tools/lab.d/debug.config" "$LAB_ROOT$frag"
	in_root sh -ec "
		src=$ROOT_OPT/linux-src o=$DEBUG_KDIR
		mkdir -p \$o
		make -C \$src O=\$o x86_64_defconfig
		make -C \$src O=\$o kvm_guest.config
		\$src/scripts/kconfig/merge_config.sh -m -O \$o \$o/.config $frag
		make -C \$src O=\$o olddefconfig
		make -C \$src O=\$o -j\$(nproc) bzImage modules
		make -C \$src O=\$o modules_install INSTALL_MOD_STRIP=1
		depmod -a \$(cat \$o/include/config/kernel.release)
	"
	# Every option the lab relies on must have survived olddefconfig.
	local cfg=$LAB_ROOT$DEBUG_KDIR/.config opt
	for opt in KUNIT=m RDMA_RXE=m RDMA_SIW=m NET_SCH_INGRESS=m NET_CLS_FLOWER=m NET_ACT_GACT=m KASAN=y PROVE_LOCKING=y DEBUG_KMEMLEAK=y DEBUG_ATOMIC_SLEEP=y INFINIBAND=y 9P_FS=y OVERLAY_FS=y VETH=y; do
		grep -qx "CONFIG_$opt" "$cfg" || {
			echo "debug kernel config lacks CONFIG_$opt" >&2
			return 1
		}
	done
}

# initramfs KVER [OUT]: the guests' initramfs for kernel KVER.
initramfs() {
	local stock=$1 out=${2:-$SOFTRDMA_LAB/initrd.cpio.gz} d
	d=$(mktemp -d)
	mkdir -p "$d"/{bin,sbin,proc,sys,dev,lower,rw,newroot,modules}
	cp /bin/busybox "$d/bin/busybox"
	for a in sh mount umount mkdir insmod switch_root cat echo sleep poweroff ls; do
		ln -s busybox "$d/bin/$a"
	done
	# Modules the stock kernel needs before it can mount the 9p root, in
	# dependency order, as modprobe resolves them in the root.
	in_root sh -ec "for m in virtio_pci 9pnet_virtio 9p overlay; do modprobe -S $stock --show-depends \$m; done" |
		awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++' >"$d/modules.list"
	: >"$d/modules/order"
	while read -r m; do
		local b
		b=$(basename "$m")
		case "$b" in
		*.zst) zstd -q -d -c "$LAB_ROOT$m" >"$d/modules/${b%.zst}" ; b=${b%.zst} ;;
		*.xz) xz -d -c "$LAB_ROOT$m" >"$d/modules/${b%.xz}" ; b=${b%.xz} ;;
		*) cp "$LAB_ROOT$m" "$d/modules/$b" ;;
		esac
		echo "$b" >>"$d/modules/order"
	done <"$d/modules.list"
	echo "$stock" >"$d/modules/kver"
	cp "$LAB_REPO/tools/lab.d/initramfs-init" "$d/init"
	chmod +x "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$d"
}

# A newer kernel's headers, to check that the module builds against it:
# trixie-backports' 7.3 (built with trixie's gcc-14, so it compiles in the
# root). Read through a private sources list, package lists and cache
# under $SOFTRDMA_LAB/apt-bpo: neither the host's nor the root's apt setup
# changes; the packages are unpacked into the root (dpkg -x), not
# installed. No kernel image: the root's /boot keeps only 6.12.
# (BPO_KVER: lib.sh.)
BPO_HDR_PKGS="linux-headers-$BPO_KVER-amd64 linux-headers-$BPO_KVER-common \
linux-kbuild-$BPO_KVER"
# private_apt DIR ARGS...: the host's apt-get with a private setup in DIR
# (DIR/sources.list, its own lists and cache): the host's apt state is
# never touched.
private_apt() {
	local d=$1
	shift
	apt-get -q -o Dir::Etc::SourceList="$d/sources.list" \
		-o Dir::Etc::SourceParts="$d/parts" -o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts="$d/parts" -o Dir::State::Lists="$d/lists" \
		-o Dir::Cache="$d/cache" -o Dir::State::status="$d/status" \
		-o APT::Sandbox::User=root "$@"
}
# private_apt_dir DIR: an empty private setup in DIR, with DIR/debs.
private_apt_dir() {
	mkdir -p "$1/parts" "$1/lists/partial" "$1/cache/archives/partial" "$1/debs"
	: >"$1/status"
}
# bpo_apt ARGS...: private_apt for trixie-backports (the root's keyring
# signs trixie's suites).
bpo_apt() { private_apt "$SOFTRDMA_LAB/apt-bpo" "$@"; }
bpo_headers() {
	local d=$SOFTRDMA_LAB/apt-bpo
	private_apt_dir "$d"
	echo "deb [signed-by=$LAB_ROOT/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie-backports main" >"$d/sources.list"
	bpo_apt update
	rm -f "$d"/debs/*.deb
	# shellcheck disable=SC2086 # package list
	(cd "$d/debs" && bpo_apt download $BPO_HDR_PKGS)
	local f
	for f in "$d"/debs/*.deb; do
		dpkg -x "$f" "$LAB_ROOT"
	done
	test -f "$LAB_ROOT/usr/src/linux-headers-$BPO_KVER-amd64/Module.symvers"
}

# trixie-backports' 7.3 as a second stock kernel (tools/lab run --kernel
# 7.3): its image, modules and module lists unpacked into the root's
# /usr/lib/modules/KVER, where Debian's packages put the image too (the
# root's /boot keeps only 6.12: stock_kver); siw built from its
# linux-source as for 6.12 (Debian builds no siw); an initramfs of its own.
BPO_KERNEL_PKGS="linux-binary-$BPO_KVER-amd64 linux-modules-$BPO_KVER-amd64 \
linux-base-$BPO_KVER-amd64 linux-source-${BPO_KVER%.*}"
bpo_kernel() {
	local d=$SOFTRDMA_LAB/apt-bpo kv=$BPO_KVER-amd64 src=linux-source-${BPO_KVER%.*} f
	rm -rf "$d/kernel" && mkdir -p "$d/kernel/debs" "$d/kernel/src"
	bpo_apt update
	# shellcheck disable=SC2086 # package list
	(cd "$d/kernel/debs" && bpo_apt download $BPO_KERNEL_PKGS)
	for f in "$d"/kernel/debs/linux-{binary,modules,base}-*.deb; do
		dpkg -x "$f" "$LAB_ROOT"
	done
	dpkg -x "$d"/kernel/debs/"$src"_*.deb "$d/kernel/src"
	rm -rf "$LAB_ROOT$ROOT_OPT/siw-$kv" && mkdir -p "$LAB_ROOT$ROOT_OPT/siw-$kv"
	tar -C "$LAB_ROOT$ROOT_OPT/siw-$kv" --strip-components=5 \
		-xf "$d/kernel/src/usr/src/$src.tar.xz" "$src/drivers/infiniband/sw/siw"
	rm -rf "$d/kernel"
	in_root sh -ec "
		s=$ROOT_OPT/siw-$kv
		sed 's/^obj-\\\$(CONFIG_RDMA_SIW)/obj-m/' \$s/Makefile >\$s/Kbuild
		make -C /usr/src/linux-headers-$kv M=\$s modules
		mkdir -p /lib/modules/$kv/updates
		install -m644 \$s/siw.ko /lib/modules/$kv/updates/siw.ko
		depmod -a $kv
		modinfo -k $kv -F vermagic siw rdma_rxe
	"
	initramfs "$kv" "$SOFTRDMA_LAB/initrd-$kv.cpio.gz"
}

# --only FUNCTION: run one step by hand (for lab development).
if [ "${1:-}" = --only ]; then
	shift
	step "$1" "$@"
	exit 0
fi

# The exact meter (tools/meter/meter.cpp, LAB_METER in lib.sh): a QEMU
# plugin built with the host's g++ against the plugin header of the host's
# own QEMU, taken from Debian's qemu source package of that version
# (deb-src of the host's mirrors, a private apt setup); only the header is
# kept. The version is read when the stage runs: on a new machine QEMU
# comes with host-packages, after this script started.
qemu_src_ver() {
	dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null || true
}
meter_plugin() {
	local d=$SOFTRDMA_LAB/apt-src codename ver
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	ver=$(qemu_src_ver)
	[ -n "$ver" ] || die "no qemu-system-x86 on the host"
	private_apt_dir "$d"
	{
		echo "deb-src $MIRROR $codename $codename-updates main"
		echo "deb-src $SECURITY_MIRROR $codename-security main"
	} >"$d/sources.list"
	private_apt "$d" update
	rm -rf "$d/debs"/*
	(cd "$d/debs" && private_apt "$d" source --download-only "qemu=$ver")
	mkdir -p "$SOFTRDMA_LAB/meter"
	tar -C "$SOFTRDMA_LAB/meter" -xJf "$d"/debs/qemu_*.orig.tar.xz \
		--wildcards --strip-components=3 '*/include/qemu/qemu-plugin.h'
	rm -rf "$d/debs"/*
	g++ -std=c++20 -O2 -fPIC -shared -Wall -Wextra -Werror \
		-I"$SOFTRDMA_LAB/meter" -o "$METER_SO" "$LAB_REPO/tools/meter/meter.cpp"
}

# stage NAME KEY CMD...: run step NAME (CMD...) unless its stamp holds KEY.
stage() {
	local name=$1 key=$2
	shift 2
	done_p "$name" "$key" && return 0
	[ $check = 0 ] || { echo "setup: step $name has to run" >&2; exit 1; }
	step "$name" "$@"
	mark "$name" "$key"
}

t0=$SECONDS
[ $check = 1 ] || say "Debian mirror: $MIRROR (security: $SECURITY_MIRROR)"
stage host-packages "$(key_of "$HOST_PKGS")" host_packages

if [ ! -x "$LAB_ROOT/usr/bin/apt-get" ]; then
	[ $check = 0 ] || { echo "setup: no lab root yet" >&2; exit 1; }
	step debootstrap debootstrap_root
fi
stage root-packages "$(key_of "$ROOT_PKGS")" root_packages
# shellcheck disable=SC2086 # package lists
stage ulp-packages "$(key_of "$ULP_PKGS")" extra_packages $ULP_PKGS
# (The step keeps its historical stamp name.)
done_p rdma-core "$RDMA_CORE_VER" || {
	[ $check = 0 ] || { echo "setup: step rdma-core has to run" >&2; exit 1; }
	step rdma-core-source rdma_core_source && mark rdma-core "$RDMA_CORE_VER"
}
stage linux-source "$(key_of "$(ls "$LAB_ROOT"/usr/src/linux-source-6.12.tar.xz -l)")" linux_source

STOCK=$(stock_kver)
[ $check = 1 ] || say "stock kernel: $STOCK"
stage siw-stock "$STOCK" siw_stock "$STOCK"
stage debug-kernel "$(key_of "$(cat "$LAB_REPO/tools/lab.d/debug.config")" "$(cat "$STAMPS/linux-source")")" debug_kernel
[ $check = 1 ] || say "debug kernel: $(debug_kver)"
stage initramfs "$(key_of "$STOCK" "$(cat "$LAB_REPO/tools/lab.d/initramfs-init")")" initramfs "$STOCK"
[ -f "$SOFTRDMA_LAB/initrd.cpio.gz" ] || { [ $check = 0 ] || exit 1; step initramfs initramfs "$STOCK"; }
# shellcheck disable=SC2086
stage bench-packages "$(key_of "$BENCH_PKGS")" extra_packages $BENCH_PKGS
# shellcheck disable=SC2086
stage fabric-packages "$(key_of "$FABRIC_PKGS")" extra_packages $FABRIC_PKGS
if [ ! -x "$SID_ROOT/usr/bin/apt-get" ]; then
	[ $check = 0 ] || { echo "setup: no sid root yet" >&2; exit 1; }
	step sid-debootstrap sid_debootstrap
fi
stage sid-packages "$(key_of "$SID_PKGS")" sid_packages
stage sid-modules "$(key_of "$STOCK" "$(cat "$STAMPS/siw-stock")")" sid_modules "$STOCK"
stage sid-rdma-core "$SID_RDMA_CORE_VER" sid_rdma_core
stage bpo-headers "$(key_of "$BPO_HDR_PKGS")" bpo_headers
stage bpo-kernel "$(key_of "$BPO_KERNEL_PKGS" "$(cat "$LAB_REPO/tools/lab.d/initramfs-init")")" bpo_kernel
# shellcheck disable=SC2086
stage meter-packages "$(key_of "$METER_PKGS")" extra_packages $METER_PKGS
stage meter "$(key_of "$(qemu_src_ver)" "$(cat "$LAB_REPO/tools/meter/meter.cpp")")" meter_plugin
[ $check = 0 ] || exit 0

say "setup complete in $((SECONDS - t0)) s; cache: $SOFTRDMA_LAB"
