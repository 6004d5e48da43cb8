# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Churn of a router's kernel state, for the torture test and the soak run.
# Sourced after netns.sh, on a topology with a second sink
# (topo_add_sink2) and a flapping port (churn_add_flap_port). Four loops
# change the router's kernel at once until SECONDS reaches CHURN_END:
#  - routes: batches adding, replacing and deleting IPv4 and IPv6 routes,
#    single-path and multipath;
#  - nexthop objects: groups replaced, members deleted and re-added;
#  - links: r-flap going down and up (admin, or carrier through its
#    peer), its routes and nexthop objects flushed by the kernel each time;
#  - neighbours: permanent neighbours with changing MACs, deleted and
#    re-added, used as gateways.
# Commands of different loops race (a route whose nexthop was just
# flushed), so errors are expected: they go to CHURN_LOG.

CHURN_END=0
CHURN_LOG=""
CHURN_PIDS=()

# churn_add_flap_port: the flapping router port, a veth whose far end
# stays in the router namespace.
churn_add_flap_port() {
	ip -n "$RTR" link add r-flap type veth peer name r-flap-peer
	ip -n "$RTR" link set r-flap-peer up
	router_sysctls "$RTR" r-flap
}

# churn_ip ARGS...: ip -n RTR ARGS, errors to CHURN_LOG.
churn_ip() { ip -n "$RTR" "$@" >>"$CHURN_LOG" 2>&1 || true; }

churn_routes() {
	local i b batch="$XFIB_TMP/churn.batch"
	for ((i = 0; SECONDS < CHURN_END; i++)); do
		for b in $(seq 0 63); do
			case $(((i + b) % 4)) in
			0) echo "route replace 198.19.$b.0/24 via $SNK4" ;;
			1) echo "route replace 198.19.$b.0/24 nexthop via $SNK4 weight 2 nexthop via $SNK2_4" ;;
			2) echo "route del 198.19.$b.0/24" ;;
			3) echo "route replace 198.19.$b.128/25 via $SNK2_4" ;;
			esac
			case $(((i + b) % 3)) in
			0) echo "route replace 2001:db8:f0$(printf %02x "$b")::/48 via $SNK6" ;;
			1) echo "route replace 2001:db8:f0$(printf %02x "$b")::/48 nexthop via $SNK6 nexthop via $SNK2_6" ;;
			2) echo "route del 2001:db8:f0$(printf %02x "$b")::/48" ;;
			esac
		done >"$batch"
		ip -n "$RTR" -force -batch "$batch" >>"$CHURN_LOG" 2>&1 || true
	done
}

churn_nexthops() {
	local i j
	churn_ip nexthop replace id 1 via "$SNK4" dev "$R_SNK"
	churn_ip nexthop replace id 2 via "$SNK2_4" dev "$R_SNK2"
	churn_ip nexthop replace id 3 via "$SNK6" dev "$R_SNK"
	churn_ip nexthop replace id 4 via "$SNK2_6" dev "$R_SNK2"
	churn_ip nexthop replace id 100 group 1/2
	churn_ip nexthop replace id 101 group 3/4
	for i in $(seq 0 31); do
		churn_ip route replace "198.19.$((100 + i / 8)).$((i % 8 * 32))/27" nhid 100
		churn_ip route replace "2001:db8:f1$(printf %02x "$i")::/48" nhid 101
	done
	for ((i = 0; SECONDS < CHURN_END; i++)); do
		case $((i % 6)) in
		0) churn_ip nexthop replace id 100 group 1,3/2 ;;
		1) churn_ip nexthop replace id 101 group 4 ;;
		2) churn_ip nexthop del id 2 ;;
		3) churn_ip nexthop add id 2 via "$SNK2_4" dev "$R_SNK2"
		   churn_ip nexthop replace id 100 group 1/2 ;;
		4) churn_ip nexthop replace id 101 group 3/4,2 ;;
		5) churn_ip nexthop replace id 1 via "$SNK4" dev "$R_SNK" ;;
		esac
		# Routes of a group that a deletion took away come back.
		[ $((i % 6)) != 3 ] || for j in 0 8 16 24; do
			churn_ip route replace "198.19.$((100 + j / 8)).0/27" nhid 100
		done
		sleep 0.05
	done
}

churn_links() {
	local i
	for ((i = 0; SECONDS < CHURN_END; i++)); do
		churn_ip link set r-flap up
		churn_ip addr replace 198.18.200.1/24 dev r-flap
		churn_ip -6 addr replace 2001:db8:200::1/64 dev r-flap nodad
		churn_ip neigh replace 198.18.200.2 lladdr 02:00:00:00:c8:02 dev r-flap nud permanent
		churn_ip route replace 198.19.200.0/24 via 198.18.200.2
		churn_ip nexthop replace id 50 via 198.18.200.2 dev r-flap
		churn_ip route replace 198.19.201.0/24 nhid 50
		churn_ip route replace 198.19.202.0/24 nexthop via 198.18.200.2 dev r-flap nexthop via "$SNK4"
		sleep 0.3
		if ((i % 2)); then
			churn_ip link set r-flap down
		else
			# Carrier loss only: the peer goes down.
			churn_ip link set r-flap-peer down
			sleep 0.2
			churn_ip link set r-flap-peer up
			churn_ip link set r-flap down
		fi
		sleep 0.2
	done
	churn_ip link set r-flap up
	churn_ip link set r-flap-peer up
}

churn_neighbours() {
	local i k
	for ((i = 0; SECONDS < CHURN_END; i++)); do
		for k in 10 11 12 13; do
			churn_ip neigh replace "$NET4_S2.$k" lladdr "02:00:00:00:$(printf %02x $((i % 256))):$k" \
				dev "$R_SNK2" nud permanent
			churn_ip route replace "198.19.$((150 + k)).0/24" via "$NET4_S2.$k"
		done
		churn_ip neigh del "$NET4_S2.$((10 + i % 4))" dev "$R_SNK2"
		sleep 0.05
	done
}

# churn_run SECONDS: the four loops at once, for SECONDS; returns when
# all have stopped.
churn_run() {
	local loop
	CHURN_END=$((SECONDS + $1))
	CHURN_LOG=${CHURN_LOG:-$XFIB_TMP/churn.log}
	CHURN_PIDS=()
	for loop in churn_routes churn_nexthops churn_links churn_neighbours; do
		"$loop" &
		CHURN_PIDS+=($!)
		XFIB_PIDS+=($!)
	done
	wait "${CHURN_PIDS[@]}"
}

# wait_settled [TIMEOUT_S]: xfibd has caught up (the last overrun repaired
# by a resync): its status stops changing over 2 s. Sets SETTLED_STATUS.
wait_settled() {
	local deadline=$((SECONDS + ${1:-30})) now last=""
	while :; do
		SETTLED_STATUS=$(rctl status -j)
		now=$(jq -c '[.daemon.resyncs, .ipv4.generation, .ipv6.generation, .ipv4.routes, .ipv6.routes]' <<<"$SETTLED_STATUS")
		[ "$now" = "$last" ] && return 0
		((SECONDS < deadline)) || fail "xfibd did not settle: $now"
		last=$now
		sleep 2
	done
}

# check_neighbours_equal: every unicast neighbour the kernel would send to
# is in the map, valid, with its MAC; every valid one in the map is the
# kernel's.
check_neighbours_equal() {
	local diff
	ip -n "$RTR" -j neigh show nud all >"$XFIB_TMP/kneigh.json"
	ip -n "$RTR" -j link show >"$XFIB_TMP/links.json"
	bpftool -j map dump pinned "$PIN/xfib_neighs" >"$XFIB_TMP/xneigh.json"
	diff=$(python3 - "$XFIB_TMP" <<'PY'
import ipaddress, json, sys
d = sys.argv[1]
load = lambda f: json.load(open("%s/%s" % (d, f)))
names = {l["ifindex"]: l["ifname"] for l in load("links.json")}
usable = {"REACHABLE", "STALE", "DELAY", "PROBE", "PERMANENT", "NOARP"}
kern = {(str(ipaddress.ip_address(n["dst"])), n["dev"], n["lladdr"])
        for n in load("kneigh.json")
        if n.get("lladdr") and usable & set(n.get("state", []))
        and not ipaddress.ip_address(n["dst"]).is_multicast}
mine = set()
for e in load("xneigh.json"):
    v = e["formatted"]["value"] if "formatted" in e else e["value"]
    if v["state"] != 1:
        continue
    raw = bytes(v["addr"][:4] if v["family"] == 2 else v["addr"])
    mine.add((str(ipaddress.ip_address(raw)), names.get(v["ifindex"], "?"),
              ":".join("%02x" % b for b in v["dmac"])))
print("kernel only: %s; xfib only: %s" % (sorted(kern - mine), sorted(mine - kern))
      if kern != mine else "")
PY
)
	[ -z "$diff" ] || fail "neighbours differ: $diff"
}

# check_nhobj_groups: every route by nexthop object has, in the map, a
# group of as many members as the kernel's object (verify already checks
# that the kernel's path is one of them). Sets NHOBJ_ROUTES.
check_nhobj_groups() {
	local dst nhid want got routes lines n=0
	ip -n "$RTR" -j nexthop show >"$XFIB_TMP/nh.json"
	routes=$({ ip -n "$RTR" -j route show; ip -n "$RTR" -6 -j route show; } |
		jq -r '.[] | select(.nhid) | "\(.dst) \(.nhid)"')
	# xfib's answer for each route's address; then the kernel's count and
	# xfib's of every route from one jq (not two per route: a busy
	# machine takes 50 to 100 ms a process, and the torture leaves some 64
	# such routes).
	: >"$XFIB_TMP/nh_lookups.json"
	while read -r dst nhid; do
		[ -n "$dst" ] || continue
		rctl lookup -j "${dst%/*}" >>"$XFIB_TMP/nh_lookups.json" ||
			fail "route $dst nhid $nhid: xfibctl lookup failed"
		n=$((n + 1))
	done <<<"$routes"
	lines=$(jq -rn --slurpfile nh "$XFIB_TMP/nh.json" \
		--slurpfile lk "$XFIB_TMP/nh_lookups.json" --arg routes "$routes" '
		[$routes | split("\n")[] | select(length > 0) | split(" ")] as $r |
		range($r | length) as $i | $r[$i] as [$dst, $nhid] |
		([$nh[0][] | select(.id == ($nhid | tonumber)) |
		  if .group then (.group | length) else 1 end] |
		 if length == 1 then .[0] else "none" end) as $want |
		"\($dst) \($nhid) \($want) \($lk[$i].group.members // 1)"') ||
		fail "comparing the nexthop objects' groups"
	NHOBJ_ROUTES=0
	while read -r dst nhid want got; do
		[ -n "$dst" ] || continue
		[ "$got" = "$want" ] || fail "route $dst nhid $nhid: $got members in xfib, $want in the kernel"
		NHOBJ_ROUTES=$((NHOBJ_ROUTES + 1))
	done <<<"$lines"
	((NHOBJ_ROUTES == n)) || fail "nexthop object groups: $NHOBJ_ROUTES of $n routes compared"
}
