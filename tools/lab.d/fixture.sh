# shellcheck shell=bash
# The fixture network of DESIGN.md: veth0 (10.0.0.1, fd00::1) here, veth1
# (10.0.0.2, fd00::2) in netns b. Sourced by guest-init.sh, which brings it
# up at boot, and by tests/vm/run.sh, which restores it after a test.

fixture_up() {
	ip link set lo up
	ip link add veth0 type veth peer name veth1 || return 1
	ip netns add b || return 1
	ip link set veth1 netns b || return 1
	sysctl -qw net.ipv6.conf.veth0.accept_dad=0
	ip netns exec b sysctl -qw net.ipv6.conf.veth1.accept_dad=0
	ip addr add 10.0.0.1/24 dev veth0
	ip addr add fd00::1/64 dev veth0 nodad
	ip link set veth0 up
	ip -n b link set lo up
	ip -n b addr add 10.0.0.2/24 dev veth1
	ip -n b addr add fd00::2/64 dev veth1 nodad
	ip -n b link set veth1 up
}

# fixture_down: the pair and netns b go (deleting veth0 takes veth1 along).
fixture_down() {
	ip link del veth0 2>/dev/null
	ip netns del b 2>/dev/null
	return 0
}

# fixture_state: what a test may change and must leave as it found it,
# without what a fresh fixture changes anyway (interface indexes, MAC and
# link-local addresses). Run after every test, so it forks little: each
# process costs ~80 ms under TCG ("ip netns exec" three times that). One
# ip per namespace shows links, addresses, permanent neighbours and routes
# (-batch); its lines say which they are (a link's "N: NAME: <", an
# address's "N: NAME", a neighbour's state PERMANENT, the rest routes),
# and awk prints them in that order, the qdiscs before the routes.
fixture_state() {
	local ns nso f
	{
		for ns in - b; do
			nso=()
			[ "$ns" = - ] || nso=(-n "$ns")
			echo "@ns $ns"
			ip "${nso[@]}" -o -force -batch - <<-EOF
				link show
				address show scope global
				neigh show nud permanent
				route show table all
			EOF
			echo "@qdisc"
			tc "${nso[@]}" qdisc show
		done
		echo "@ethtool"
		ethtool -k veth0
		# Not "ip netns exec", which remounts /sys: ethtool needs none.
		nsenter --net=/var/run/netns/b ethtool -k veth1
		echo "@netns"
		for f in /var/run/netns/*; do
			[ -e "$f" ] && echo "${f##*/}"
		done
	} 2>&1 | awk '
		function flush() {
			printf "%s%s%s%s%s", link, addr, neigh, qdisc, route
			link = addr = neigh = qdisc = route = ""
		}
		/^@/ {
			if ($1 != "@qdisc") flush()
			sec = $1
			if (sec == "@ns") print "== netns", $2
			next
		}
		sec == "@ns" && /^[0-9]+: [^ ]+: </ {
			sub(/^[0-9]+: /, ""); sub(/@[a-z0-9]+:/, ":"); sub(/ link\/.*/, "")
			sub(/ link-netns(id)? [a-z0-9]+/, ""); link = link $0 "\n"; next
		}
		sec == "@ns" && /^[0-9]+: / { addr = addr $2 " " $3 " " $4 "\n"; next }
		sec == "@ns" && / PERMANENT( |$)/ { neigh = neigh $1 " " $3 "\n"; next }
		sec == "@ns" { if (!/fe80|ff00|local|broadcast|multicast/) route = route $0 "\n"; next }
		sec == "@qdisc" { qdisc = qdisc $0 "\n"; next }
		{ print }
		END { flush() }'
}
