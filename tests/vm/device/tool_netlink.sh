# shellcheck shell=bash
# tool_netlink: `softrdma links|qps|counters --json` say what rdma(8)
# says over the same RDMA netlink: links with their types and netdevs
# (softroce, softiwarp, siw; a netdev in another netns not shown), a
# softroce RC pair in RTS and a softiwarp QP in INIT with their owners,
# and the port counters, which move with traffic. About 30 s.
#
# layers: stock
# timeout: 120
# tool_save NAME CMD...: CMD's output to $TEST_TMP/NAME.json, and shown.
tool_save() {
	local f=$TEST_TMP/$1.json
	shift
	"$@" >"$f"
	cat "$f"
	echo
}

# tool_rts_pair: rdma res show qp lists two RC QPs in RTS.
tool_rts_pair() {
	[ "$(rdma res show qp | grep -c 'type RC state RTS')" = 2 ]
}

test_tool_netlink() {
	modprobe siw
	rdma link add sr0 type softroce netdev veth0
	ip netns exec b rdma link add sr1 type softroce netdev veth1
	rdma link add si0 type softiwarp netdev veth0
	rdma link add siw0 type siw netdev veth0
	local t=$TEST_TMP g0 g1 srv cli iw
	tool_save counters0 softrdma counters sr0 --json

	# A softroce RC pair that keeps running (sr1 serves in b, sr0
	# connects), and a softiwarp server whose QP waits in INIT.
	g0=$(gid_index sr0 ::ffff:10.0.0.1)
	g1=$(ip netns exec b bash -c "$(declare -f gid_index); gid_index sr1 ::ffff:10.0.0.2")
	ip netns exec b ibv_rc_pingpong -d sr1 -g "$g1" -p "$P_PINGPONG" -n 100000000 >"$t"/srv.log 2>&1 &
	srv=$!
	wait_listen b "$P_PINGPONG" || return 1
	ibv_rc_pingpong -d sr0 -g "$g0" -p "$P_PINGPONG" -n 100000000 10.0.0.2 >"$t"/cli.log 2>&1 &
	cli=$!
	ibv_rc_pingpong -d si0 -p "$P_AUX" >/dev/null 2>&1 &
	iw=$!
	wait_listen - "$P_AUX" || return 1
	wait_for 30 tool_rts_pair || {
		rdma res show qp
		cat "$t"/srv.log "$t"/cli.log
		return 1
	}

	softrdma links
	softrdma links | grep -Eq '^sr0/1 +softroce +ACTIVE +LINK_UP +veth0$'
	tool_save links softrdma links --json
	tool_save rdma_links rdma -j link show
	tool_save links_b ip netns exec b softrdma links sr1 --json
	softrdma qps
	tool_save qps softrdma qps --json
	tool_save rdma_qps rdma -j res show qp
	tool_save qps_sr0 softrdma qps sr0 --json
	softrdma list >"$t"/list
	cat "$t"/list
	grep -qx "sr0	softroce	veth0" "$t"/list
	grep -qx "si0	softiwarp	veth0" "$t"/list
	if grep -q siw0 "$t"/list; then
		echo "softrdma list shows siw0"
		return 1
	fi
	expect_fail "no RDMA device 'nosuch0'" softrdma qps nosuch0

	kill "$srv" "$cli" "$iw"
	wait "$srv" "$cli" "$iw" 2>/dev/null || true
	sleep 1
	softrdma counters
	tool_save counters softrdma counters --json
	tool_save rdma_counters rdma -j statistic show link sr0/1

	python3 - "$t" "$srv" "$cli" "$iw" <<'EOF'
import json
import sys

d, srv, cli, iw = sys.argv[1], *map(int, sys.argv[2:])


def load(name):
    with open(f"{d}/{name}.json") as f:
        return json.load(f)


def check(cond, what):
    if not cond:
        sys.exit(f"mismatch: {what}")


def dev(x):
    """rdma(8)'s ifname: "sr0", or "sr0/1" in some versions."""
    return x["ifname"].split("/")[0]


# Links: the same ports, states and netdevs as rdma link show.
mine = {(x["device"], x["port"]): x for x in load("links")}
theirs = {(dev(x), x["port"]): x for x in load("rdma_links")}
check(mine.keys() == theirs.keys(), f"links {sorted(mine)} vs {sorted(theirs)}")
for k, x in mine.items():
    r = theirs[k]
    check(x["index"] == r["ifindex"], f"{k} index")
    check(x["state"] == r["state"], f"{k} state {x['state']} vs {r['state']}")
    check(x["physical_state"] == r["physical_state"], f"{k} physical_state")
    check(x["netdev"] == r.get("netdev"), f"{k} netdev {x['netdev']} vs {r.get('netdev')}")
    check(x["netdev_index"] == r.get("netdev_index"), f"{k} netdev_index")
types = {k[0]: x["type"] for k, x in mine.items()}
check(types == {"sr0": "softroce", "sr1": "softroce", "si0": "softiwarp", "siw0": "siw"},
      f"types {types}")
check(mine[("sr0", 1)]["netdev"] == "veth0" and mine[("si0", 1)]["netdev"] == "veth0",
      "sr0 and si0 on veth0")
check(mine[("sr0", 1)]["state"] == "ACTIVE", "sr0 ACTIVE")
check(mine[("sr1", 1)]["netdev"] is None, "sr1's netdev is in netns b")
check(mine[("sr0", 1)]["abi_version"] == 1, "softrdma's uverbs ABI")
b = load("links_b")
check(len(b) == 1 and b[0]["device"] == "sr1" and b[0]["netdev"] == "veth1",
      f"sr1 seen from netns b: {b}")

# QPs: the same QPs, numbers, types, states and owners as rdma res show qp.
qps = load("qps")
mine = {(x["device"], x["lqpn"]): x for x in qps}
theirs = {(dev(x), x["lqpn"]): x for x in load("rdma_qps")}
check(mine.keys() == theirs.keys(), f"QPs {sorted(mine)} vs {sorted(theirs)}")
for k, x in mine.items():
    r = theirs[k]
    for key in ("port", "rqpn", "type", "state", "pid"):
        check(x[key] == r.get(key), f"QP {k} {key}: {x[key]} vs {r.get(key)}")
rts = sorted((x for x in qps if x["type"] == "RC" and x["state"] == "RTS"),
             key=lambda x: x["device"])
check([x["device"] for x in rts] == ["sr0", "sr1"], f"RC QPs in RTS: {rts}")
check(rts[0]["pid"] == cli and rts[1]["pid"] == srv, "the pingpongs own them")
check(rts[0]["rqpn"] == rts[1]["lqpn"] and rts[1]["rqpn"] == rts[0]["lqpn"],
      "the pair's QPNs")
check(all(x["comm"] == "ibv_rc_pingpong" for x in rts), "comm")
check(any(x["device"] == "sr0" and x["type"] == "GSI" and x["kernel"] for x in qps),
      "sr0's QP1")
init = [x for x in qps if x["device"] == "si0" and x["type"] == "RC"]
check(len(init) == 1 and init[0]["state"] == "INIT" and init[0]["pid"] == iw,
      f"si0's QP: {init}")
check({x["device"] for x in load("qps_sr0")} == {"sr0"}, "qps sr0")

# Counters: softroce's and softiwarp's ports, not siw's (it has none);
# sr0's values are rdma statistic's, and moved with the traffic.
c = load("counters")
check(sorted(x["device"] for x in c) == ["si0", "sr0", "sr1"], f"counters of {c}")
sr0 = next(x for x in c if x["device"] == "sr0")["counters"]
r = load("rdma_counters")[0]
check(dev(r) == "sr0" and r["port"] == 1, "rdma statistic's link")
rc = {k: v for k, v in r.items() if k not in ("ifname", "ifindex", "port")}
check(sr0 == rc, f"sr0 counters {sr0} vs {rc}")
before = load("counters0")[0]["counters"]
check(before["tx_packets"] == 0 and sr0["tx_packets"] > 100, "tx_packets moved")
check(sr0["rx_packets"] > 100, "rx_packets moved")
print("ok: links, QPs and counters match rdma(8)")
EOF
}
