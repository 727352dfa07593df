# shellcheck shell=bash
# Open MPI over UCX on softroce: two ranks on this host (the pml ucx, both
# on sr0, which reaches its own address over lo) run mpi_check
# (tests/vm/mpi_check.c): buffers from 1 B to 1 MiB each way, every byte
# checked, over UD alone and over RC (wired up over UD), then over RC
# with UCX registering user memory on demand (UCX_REG_NONBLOCK_MEM_TYPES:
# ODP MRs, as UCX asks of a device that reports ODP): the device must
# have faulted pages in for them (odp_faults).
#
# layers: stock
# timeout: 180
test_mpi_ucx_roce() {
	local run tls tx faults odp
	[ -x "$REPO"/build/user/mpi_check ] || { echo "no mpi_check: MPI not found at build time"; return 1; }
	rdma link add sr0 type softroce netdev veth0
	wait_for 10 has_gid sr0 ::ffff:10.0.0.1
	for run in ud_verbs,self rc_verbs,ud_verbs,self "rc_verbs,ud_verbs,self odp"; do
		tls=${run%% *}
		odp=()
		[ "$run" = "$tls" ] || odp=(-x UCX_REG_NONBLOCK_MEM_TYPES=host)
		echo "== UCX_TLS=$tls ${odp[*]}"
		tx=$(counter sr0 tx_packets)
		faults=$(counter sr0 odp_faults)
		timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 \
			--mca pml ucx \
			-x UCX_NET_DEVICES=sr0:1 -x "UCX_TLS=$tls" -x UCX_WARN_UNUSED_ENV_VARS=n \
			"${odp[@]}" "$REPO"/build/user/mpi_check 2 >"$TEST_TMP"/mpi.log 2>&1 ||
			{ cat "$TEST_TMP"/mpi.log; return 1; }
		cat "$TEST_TMP"/mpi.log
		grep -q '^ok: 2 rounds' "$TEST_TMP"/mpi.log
		# 2 x 2 x 1.48 MB at most 1024 B a packet, over sr0, not
		# shared memory.
		tx=$(($(counter sr0 tx_packets) - tx))
		echo "sr0 sent $tx packets"
		[ $tx -ge 5000 ] || return 1
		faults=$(($(counter sr0 odp_faults) - faults))
		echo "sr0 faulted $faults ODP ranges in"
		[ ${#odp[@]} = 0 ] || [ $faults -gt 0 ] ||
			{ echo "UCX registered no ODP memory"; return 1; }
	done
}
