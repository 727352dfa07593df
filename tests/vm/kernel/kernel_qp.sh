# shellcheck shell=bash
# A kernel consumer: softrdma_ktest.ko posts and polls RC transfers between
# sr0 and sr1 through the kernel verbs (FRMRs, invalidation, flushing
# included) at load, and fails its load on any mismatch.
#
# layers: stock debug
test_kernel_qp() {
	local ko k
	for k in stock debug; do
		ko=$REPO/build/kmod-$k/tests/kmod/softrdma_ktest.ko
		[ -f "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$(uname -r) " && break
		ko=
	done
	[ -n "$ko" ] || { echo "no softrdma_ktest.ko built for $(uname -r)"; return 1; }
	modprobe softrdma
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	wait_for 10 grep -rqs 0000:0000:0000:0000:0000:ffff:0a00:0001 /sys/class/infiniband/sr0/ports/1/gids
	wait_for 10 grep -rqs 0000:0000:0000:0000:0000:ffff:0a00:0002 /sys/class/infiniband/sr1/ports/1/gids
	if ! insmod "$ko" dev_a=sr0 ip_a=10.0.0.1 dev_b=sr1 ip_b=10.0.0.2; then
		dmesg | grep softrdma_ktest | tail -n 30
		return 1
	fi
	dmesg | grep softrdma_ktest | tail -n 20
	rmmod softrdma_ktest
}
