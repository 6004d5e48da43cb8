#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Bounded torture (TORTURE_SECONDS, default 60): while gen pings the sink
# over an unchanged route, four loops change the router's kernel state at
# once, with xfibd's receive buffer deliberately small so notifications
# are lost and xfibd must resync:
#  - route churn: batches adding, replacing and deleting IPv4 and IPv6
#    routes, single-path and multipath;
#  - nexthop objects: groups replaced, members deleted and re-added;
#  - link flaps: a third router port going down and up, its routes and
#    nexthop objects flushed by the kernel each time;
#  - neighbour flaps: permanent neighbours with changing MACs, deleted and
#    re-added, used as gateways.
# Afterwards: overruns and resyncs happened, no echo was lost, xfibctl
# verify finds 0 mismatches, and the neighbours and nexthop objects in the
# maps equal the kernel's.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

SECS=${TORTURE_SECONDS:-60}

topo_create 0
topo_add_sink2
# The flapping port: a veth whose far end stays in the router namespace.
ip -n "$RTR" link add r-flap type veth peer name r-flap-peer
ip -n "$RTR" link set r-flap-peer up
router_sysctls "$RTR" r-flap
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --rcvbuf 4096
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

end=$((SECONDS + SECS))
churn_log="$XFIB_TMP/churn.log"

# ip -n RTR, tolerant: under churn some commands race with the others
# (a route whose nexthop was just flushed); errors are expected.
r() { ip -n "$RTR" "$@" >>"$churn_log" 2>&1 || true; }

route_churn() {
	local i b batch="$XFIB_TMP/churn.batch"
	for ((i = 0; SECONDS < end; i++)); do
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
		ip -n "$RTR" -force -batch "$batch" >>"$churn_log" 2>&1 || true
	done
}

nexthop_churn() {
	local i
	r nexthop add id 1 via "$SNK4" dev "$R_SNK"
	r nexthop add id 2 via "$SNK2_4" dev "$R_SNK2"
	r nexthop add id 3 via "$SNK6" dev "$R_SNK"
	r nexthop add id 4 via "$SNK2_6" dev "$R_SNK2"
	r nexthop add id 100 group 1/2
	r nexthop add id 101 group 3/4
	for i in $(seq 0 31); do
		r route add "198.19.$((100 + i / 8)).$((i % 8 * 32))/27" nhid 100
		r route add "2001:db8:f1$(printf %02x "$i")::/48" nhid 101
	done
	for ((i = 0; SECONDS < end; i++)); do
		case $((i % 6)) in
		0) r nexthop replace id 100 group 1,3/2 ;;
		1) r nexthop replace id 101 group 4 ;;
		2) r nexthop del id 2 ;;
		3) r nexthop add id 2 via "$SNK2_4" dev "$R_SNK2"
		   r nexthop replace id 100 group 1/2 ;;
		4) r nexthop replace id 101 group 3/4,2 ;;
		5) r nexthop replace id 1 via "$SNK4" dev "$R_SNK" ;;
		esac
		# Routes of a group that a deletion took away come back.
		[ $((i % 6)) != 3 ] || for j in 0 8 16 24; do
			r route replace "198.19.$((100 + j / 8)).0/27" nhid 100
		done
		sleep 0.05
	done
}

link_flaps() {
	local i
	for ((i = 0; SECONDS < end; i++)); do
		r link set r-flap up
		r addr replace 198.18.200.1/24 dev r-flap
		r -6 addr replace 2001:db8:200::1/64 dev r-flap nodad
		r neigh replace 198.18.200.2 lladdr 02:00:00:00:c8:02 dev r-flap nud permanent
		r route replace 198.19.200.0/24 via 198.18.200.2
		r nexthop replace id 50 via 198.18.200.2 dev r-flap
		r route replace 198.19.201.0/24 nhid 50
		r route replace 198.19.202.0/24 nexthop via 198.18.200.2 dev r-flap nexthop via "$SNK4"
		sleep 0.3
		if ((i % 2)); then
			r link set r-flap down
		else
			# Carrier loss only: the peer goes down.
			r link set r-flap-peer down
			sleep 0.2
			r link set r-flap-peer up
			r link set r-flap down
		fi
		sleep 0.2
	done
	r link set r-flap up
	r link set r-flap-peer up
}

neigh_flaps() {
	local i k
	for ((i = 0; SECONDS < end; i++)); do
		for k in 10 11 12 13; do
			r neigh replace "198.18.$((16 * 0 + 3)).$k" lladdr "02:00:00:00:$(printf %02x $((i % 256))):$k" \
				dev "$R_SNK2" nud permanent
			r route replace "198.19.$((150 + k)).0/24" via "198.18.3.$k"
		done
		r neigh del 198.18.3.$((10 + i % 4)) dev "$R_SNK2"
		sleep 0.05
	done
}

snapshot
nping "$GEN" -4 -q -c $((SECS * 50)) -i 0.02 "$SNK4" >"$XFIB_TMP/ping4" 2>&1 &
ping_pid=$!
XFIB_PIDS+=("$ping_pid")
route_churn &
XFIB_PIDS+=($!)
nexthop_churn &
XFIB_PIDS+=($!)
link_flaps &
XFIB_PIDS+=($!)
neigh_flaps &
XFIB_PIDS+=($!)
wait "${XFIB_PIDS[@]: -4}"
log "churn over: $(grep -c . "$churn_log" || true) lines of expected errors in $churn_log"
wait "$ping_pid" || true

# xfibd catches up: the last overrun is repaired by a resync.
deadline=$((SECONDS + 30))
last=""
while :; do
	st=$(rctl status -j)
	now=$(jq -c '[.daemon.resyncs, .ipv4.generation, .ipv6.generation, .ipv4.routes, .ipv6.routes]' <<<"$st")
	[ "$now" = "$last" ] && break
	((SECONDS < deadline)) || fail "xfibd did not settle: $now"
	last=$now
	sleep 2
done
resyncs=$(jq '.daemon.resyncs' <<<"$st")
overruns=$(jq '.daemon.overruns' <<<"$st")
log "settled: resyncs $resyncs, overruns $overruns, routes v4 $(jq '.ipv4.routes' <<<"$st") v6 $(jq '.ipv6.routes' <<<"$st")"
((resyncs > 0 && overruns > 0)) || fail "no overrun or resync: the torture did not torture"
kill -0 "$XFIBD_PID" || fail "xfibd died"

out=$(rctl verify --random 200000 2>&1) || fail "verify: $(tail -n 25 <<<"$out")"
log "verify: $(tail -n 2 <<<"$out" | tr '\n' ' ')"

# Neighbours: every unicast neighbour the kernel would send to is in the
# map, valid, with its MAC; every valid one in the map is the kernel's.
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
print(len(kern), file=sys.stderr)
PY
)
[ -z "$diff" ] || fail "neighbours differ: $diff"
log "neighbours equal to the kernel's"

# Routes by nexthop object: the group in the map has the members of the
# kernel's group (verify already checked that the kernel's path is one).
ip -n "$RTR" -j nexthop show >"$XFIB_TMP/nh.json"
n=0
while read -r dst nhid; do
	want=$(jq --argjson id "$nhid" '.[] | select(.id == $id) |
		if .group then (.group | length) else 1 end' "$XFIB_TMP/nh.json")
	got=$(rctl lookup -j "${dst%/*}" | jq '.group.members // 1')
	[ "$got" = "$want" ] || fail "route $dst nhid $nhid: $got members in xfib, $want in the kernel"
	n=$((n + 1))
done < <({ ip -n "$RTR" -j route show; ip -n "$RTR" -6 -j route show; } |
	jq -r '.[] | select(.nhid) | "\(.dst) \(.nhid)"')
((n > 0)) || fail "no route by nexthop object survived the churn"
log "$n routes by nexthop object have the kernel's group"

rcvd=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$XFIB_TMP/ping4")
[ "${rcvd:-0}" -eq $((SECS * 50)) ] ||
	fail "${rcvd:-0}/$((SECS * 50)) echoes over the unchanged route answered"
deltas
((D_K4 == 0)) || fail "the kernel forwarded $D_K4 IPv4 packets: the unchanged route left the fast path"
log "PASS: $SECS s of churn, $resyncs resyncs, verify clean, no echo lost"
