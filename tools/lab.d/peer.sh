#!/bin/bash
# peer: commands in the other guest of a pair (tools/lab pair), from guest
# A, where this is /usr/local/bin/peer:
#   peer CMD...              run CMD as root in guest B, in the same working
#                            directory; print its output; exit with its status
#   peer -b [-l PORT] CMD... start CMD in guest B, print its job id; with -l,
#                            only once a TCP or UDP socket listens on PORT there
#                            (fails if CMD ends first)
#   peer -w ID               wait for job ID: its output, its status
#   peer -k ID               end job ID (TERM to its process group), then -w
#   peer --read FILE         FILE of guest B (such as /proc/stat), read by
#                            B's agent itself, without starting a process
# One word is a command line for bash (as tools/lab run takes it); more are
# quoted word by word. B's environment is its own, not the caller's.
#
# Guest B runs `peer.sh --serve` (its agent) as its command. The channel is
# a folder both guests share, LAB_PEER_DIR: a request takes the next free
# number N (created with O_EXCL: N.claim), writes N.cmd and then N.go; the
# agent waits for the go of the number after the last it took (one stat a
# poll, no directory listing), runs N.cmd and writes N.out, N.err and last
# N.rc; N.up once something listens on the port of -l; N.kill asks it to end
# the job. The agent writes "ready" when it starts; the host writes "stop"
# once A's command is over, and "dead" when guest B's QEMU has ended.
# Polls sleep with bash's read timeout on a pipe: under QEMU TCG every
# process started costs tens of milliseconds, so neither side starts one
# to wait.
set -u
P=${LAB_PEER_DIR:?peer: not in a guest of tools/lab pair}
Q=$P/q
exec {NAP}<> <(:)
nap() { read -rt "${1:-0.05}" -u "$NAP" || :; }

# show FILE [FD]: FILE's lines on stdout (or FD), without a process; stops
# quietly when the reader is gone (a caller that wants the first line).
show() {
	local l
	[ -e "$1" ] || return 0
	while IFS= read -r l || [ -n "$l" ]; do
		if [ "${2:-1}" = 1 ]; then
			printf '%s\n' "$l" 2>/dev/null || return 0
		else
			printf '%s\n' "$l" >&"$2"
		fi
	done <"$1"
}

# gone: guest B's agent is no more (its guest ended, or the run did).
gone() {
	if [ -e "$P/dead" ] || [ -e "$P/stop" ]; then
		echo "peer: guest B is gone" >&2
		return 0
	fi
	return 1
}

# wait_file FILE: until FILE is there, not empty; fails (255) if guest B
# is gone.
wait_file() {
	until [ -s "$1" ]; do
		! gone || return 255
		nap
	done
}

# request CMDLINE [PORT]: queue CMDLINE (or a "#read FILE" line), print
# its number. PORT: write N.up once something listens on it.
request() {
	local n=0 line
	[ -s /tmp/.peer-next ] && read -r n </tmp/.peer-next
	set -C
	until { : >"$Q/$n.claim"; } 2>/dev/null; do
		n=$((n + 1))
	done
	set +C
	echo $((n + 1)) >/tmp/.peer-next
	line=$1
	case "$line" in
	"#read "*) ;;
	*) line=$(printf 'cd %q 2>/dev/null || cd /\n%s' "$PWD" "$1") ;;
	esac
	printf '%s\n' "$line" >"$Q/$n.cmd"
	[ -z "${2:-}" ] || echo "$2" >"$Q/$n.port"
	: >"$Q/$n.go"
	echo "$n"
}

# finish ID: job ID's output and status.
finish() {
	local rc
	wait_file "$Q/$1.rc" || return
	show "$Q/$1.out"
	show "$Q/$1.err" 2
	read -r rc <"$Q/$1.rc"
	return "${rc:-255}"
}

cmdline() {
	if [ $# -eq 1 ]; then printf '%s' "$1"; else printf '%q ' "$@"; fi
}

# The agent, guest B's command: runs what A queues, until "stop".
serve() {
	local next=0 id line
	local -A live=() killed=()
	mkdir -p "$Q"
	set -m
	: >"$P/ready"
	while [ ! -e "$P/stop" ]; do
		if [ -e "$Q/$next.go" ]; then
			id=$next
			next=$((next + 1))
			read -r line <"$Q/$id.cmd"
			case "$line" in
			"#read "*)
				show "${line#\#read }" >"$Q/$id.out" 2>"$Q/$id.err"
				echo $? >"$Q/$id.rc"
				;;
			*)
				start "$id"
				live[$id]=$!
				;;
			esac
			continue
		fi
		for id in "${!live[@]}"; do
			if [ -s "$Q/$id.rc" ]; then
				unset "live[$id]" "killed[$id]"
			elif [ -e "$Q/$id.kill" ] && [ -z "${killed[$id]:-}" ]; then
				kill -TERM -- "-${live[$id]}" 2>/dev/null
				killed[$id]=0
			elif [ -n "${killed[$id]:-}" ]; then
				# Still there 5 s after TERM: KILL, and say so.
				killed[$id]=$((killed[$id] + 1))
				if [ "${killed[$id]}" -ge 100 ]; then
					kill -KILL -- "-${live[$id]}" 2>/dev/null
					echo 137 >"$Q/$id.rc"
				fi
			fi
		done
		nap
	done
	for id in "${!live[@]}"; do
		kill -TERM -- "-${live[$id]}" 2>/dev/null
	done
	return 0
}

# start ID: job ID in a process group of its own (set -m), in the
# background; N.up once its port (N.port) listens, N.rc when it ends.
start() {
	local id=$1 port=
	[ -s "$Q/$id.port" ] && read -r port <"$Q/$id.port"
	{
		trap : TERM
		bash "$Q/$id.cmd" >"$Q/$id.out" 2>"$Q/$id.err" </dev/null &
		c=$!
		while [ -n "$port" ] && kill -0 $c 2>/dev/null; do
			if ss -Hltun "sport = :$port" | grep -q .; then
				: >"$Q/$id.up"
				break
			fi
			nap 0.1
		done
		wait $c
		echo $? >"$Q/$id.rc"
	} &
}

case "${1:-}" in
--serve) serve ;;
-b)
	shift
	port=
	if [ "${1:-}" = -l ]; then
		port=$2
		shift 2
	fi
	[ $# -gt 0 ] || { echo "usage: peer -b [-l PORT] CMD..." >&2; exit 2; }
	id=$(request "$(cmdline "$@")" "$port")
	if [ -n "$port" ]; then
		until [ -e "$Q/$id.up" ]; do
			if [ -s "$Q/$id.rc" ]; then
				echo "peer: nothing listened on port $port in guest B: $*" >&2
				finish "$id"
				exit 255
			fi
			! gone || exit 255
			nap
		done
	fi
	echo "$id"
	;;
-w) finish "$2" ;;
-k)
	: >"$Q/$2.kill"
	finish "$2"
	;;
--read)
	finish "$(request "#read $2")"
	;;
"" | -h | --help)
	sed -n '2,16s/^# \{0,1\}//p' "$0"
	[ $# -gt 0 ]
	;;
*) finish "$(request "$(cmdline "$@")")" ;;
esac
