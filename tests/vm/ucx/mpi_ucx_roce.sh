# shellcheck shell=bash
# Open MPI over UCX on softroce: two ranks on this host (the pml ucx, both
# on sr0, which reaches its own address over lo) run mpi_check
# (tests/vm/mpi_check.c): buffers from 1 B to 1 MiB each way, every byte
# checked, over UD alone and over RC (wired up over UD).
#
# layers: stock
# timeout: 180
test_mpi_ucx_roce() {
	local tls tx
	[ -x "$REPO"/build/user/mpi_check ] || { echo "no mpi_check: MPI not found at build time"; return 1; }
	rdma link add sr0 type softroce netdev veth0
	wait_for 10 has_gid sr0 ::ffff:10.0.0.1
	for tls in ud_verbs,self rc_verbs,ud_verbs,self; do
		echo "== UCX_TLS=$tls"
		tx=$(counter sr0 tx_packets)
		timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 \
			--mca pml ucx \
			-x UCX_NET_DEVICES=sr0:1 -x UCX_TLS=$tls -x UCX_WARN_UNUSED_ENV_VARS=n \
			"$REPO"/build/user/mpi_check 2 >"$TEST_TMP"/mpi.log 2>&1 ||
			{ cat "$TEST_TMP"/mpi.log; return 1; }
		cat "$TEST_TMP"/mpi.log
		grep -q '^ok: 2 rounds' "$TEST_TMP"/mpi.log
		# 2 x 2 x 1.48 MB at most 1024 B a packet, over sr0, not
		# shared memory.
		tx=$(($(counter sr0 tx_packets) - tx))
		echo "sr0 sent $tx packets"
		[ $tx -ge 5000 ]
	done
}
