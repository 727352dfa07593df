# shellcheck shell=bash
# Against siw (veth0, initial namespace; softiwarp on veth1 in b): our
# offer is not taken (siw echoes the request's flags, never our accept
# bit), so the extension opcodes fail locally; plain operations work.
#
# layers: stock
test_interop_siw_ext() {
	modprobe siw
	rdma link add siw0 type siw netdev veth0
	ip netns exec b rdma link add si1 type softiwarp netdev veth1
	local rc=0
	# siw serves, softiwarp connects and tries every extension opcode.
	iwext_run - b 10.0.0.1 noext noext || rc=1
	# softiwarp serves, siw connects with plain operations only.
	iwext_run b - 10.0.0.2 plain plain || rc=1
	rdma link delete siw0
	modprobe -r siw
	return $rc
}
