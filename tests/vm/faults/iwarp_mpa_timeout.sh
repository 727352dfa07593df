# shellcheck shell=bash
# A peer that connects over TCP and then says nothing: the active side's
# connect fails as unreachable (ETIMEDOUT) once the MPA reply is overdue;
# the passive side closes a connection whose MPA request never comes.
#
# layers: stock
test_iwarp_mpa_timeout() {
	iwarp_pair
	# A mute TCP server: accepts, never answers, reports EOF.
	ip netns exec b python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.0.0.2", int(sys.argv[1]))); s.listen(4)
c, _ = s.accept()
c.settimeout(60)
try:
    print("eof" if c.recv(4096) and c.recv(4096) == b"" else "data")
except ConnectionResetError:
    print("eof")
' "$P_AUX" >"$TEST_TMP"/mute.out 2>&1 &
	local mute=$!
	wait_listen b "$P_AUX"
	rping -c -a 10.0.0.2 -p "$P_AUX" -C 1 -S 64 >"$TEST_TMP"/rping-cli.log 2>"$TEST_TMP"/rping-cli.err &
	cli=$!
	exits_within $cli 40
	grep -q 'RDMA_CM_EVENT_UNREACHABLE, error -110' "$TEST_TMP"/rping-cli.err || {
		cat "$TEST_TMP"/rping-cli.err
		return 1
	}
	exits_within $mute 30
	grep -q '^eof$' "$TEST_TMP"/mute.out || { cat "$TEST_TMP"/mute.out; return 1; }
	# A mute client: connects to a softiwarp listener, sends nothing.
	ip netns exec b rping -s -a 10.0.0.2 -p "$P_RPING" -C 1 -S 64 \
		>"$TEST_TMP"/rping-srv.log 2>"$TEST_TMP"/rping-srv.err &
	srv=$!
	wait_listen b "$P_RPING"
	python3 -c '
import socket, sys
c = socket.create_connection(("10.0.0.2", int(sys.argv[1])))
c.settimeout(60)
try:
    print("eof" if c.recv(4096) == b"" else "data")
except ConnectionResetError:
    print("eof")
' "$P_RPING" >"$TEST_TMP"/mute.out 2>&1
	grep -q '^eof$' "$TEST_TMP"/mute.out || { cat "$TEST_TMP"/mute.out; return 1; }
	kill $srv
	wait $srv || true
	iwarp_gone
}
