#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# FRR as the route source. The router runs FRR's zebra, staticd and bgpd
# (Debian's frr 8), which install routes through kernel nexthop objects:
# a route points at an nhid, a multipath route at a group object. Each
# sink runs a BIRD 2 that announces the same thousands of IPv4 and IPv6
# prefixes over eBGP, so bgpd installs them with two-way ECMP.
#
#   gen -- router (zebra, staticd, bgpd AS 65001; xfibd) -+- sink  (BIRD AS 65002)
#                                                         +- sink2 (BIRD AS 65002)
#
# xfib gives each nexthop object a group of its own (rewritten in place
# when the object changes), so a route by a one-path object looks up as a
# one-member group.
#
# Steps, each ending with the kernel's and xfib's route counts equal,
# `xfibctl verify` clean and UDP flows from gen checked at the sinks
# (every datagram arrives, at the sinks the route says, forwarded by XDP
# while the router kernel's forwarding counters stay flat):
#  1. static ECMP routes (staticd): a two-member group object, flows split;
#  2. BGP from both peers: every prefix on a group of the two, flows split;
#  3. sink2's BIRD stops: its paths go, the routes keep one nexthop;
#  4. configuration changes replace nexthops: a static route moved to
#     sink2, and an inbound route-map that sets sink2 as the next hop of
#     everything sink announces (thousands of routes change nexthop);
#  5. sink withdraws everything and the static routes are deleted: the
#     dataplane is back to its base table, the traffic goes to the kernel.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/frr.sh
. "$(dirname "$0")/../lib/frr.sh"
xfib_init
frr_available || skip "frr not installed and cannot be (scripts/install-deps.sh)"
bird_available || skip "bird2 not installed and cannot be (scripts/install-deps.sh)"

# Announced by both BIRDs: NA IPv4 /29s in 198.19.0.0/17 (half by
# static_a, half by static_b), NB IPv6 /48s in 2001:db8:f000::/37.
# Static in FRR: ECMP 198.19.200.0/24 and 2001:db8:e200::/48, single path
# 198.19.201.0/24 and 2001:db8:e201::/48.
NA=4096
NB=2048
BGP4=198.19.0.1 BGP6=2001:db8:f000::1
ECMP4=198.19.200.1 ECMP6=2001:db8:e200::1
ONE4=198.19.201.1 ONE6=2001:db8:e201::1
FLOWS=128 PKTS=2
flows_py="$XFIB_TOP/tests/lib/flows.py"

topo_create 0
topo_add_sink2
# gen's flows are to be forwarded in XDP.
hosts_fill_checksums "$GEN:$GEN_IF"
xfibd_start
attach_all
resolve_neighbours
BASE4=$(rctl status -j | jq .ipv4.routes)
BASE6=$(rctl status -j | jq .ipv6.routes)
# Every destination exists on both sinks, so a datagram counts wherever
# the router sends it.
for ns in "$SNK" "$SNK2"; do
	for a in "$BGP4" "$ECMP4" "$ONE4"; do
		ip -n "$ns" addr add "$a/32" dev lo
	done
	for a in "$BGP6" "$ECMP6" "$ONE6"; do
		ip -n "$ns" addr add "$a/128" dev lo nodad
	done
done

# ---- FRR on the router ---------------------------------------------------
cat >"$XFIB_TMP/zebra.conf" <<EOF
hostname $RTR
EOF
cat >"$XFIB_TMP/staticd.conf" <<EOF
ip route 198.19.200.0/24 $SNK4
ip route 198.19.200.0/24 $SNK2_4
ipv6 route 2001:db8:e200::/48 $SNK6
ipv6 route 2001:db8:e200::/48 $SNK2_6
ip route 198.19.201.0/24 $SNK4
ipv6 route 2001:db8:e201::/48 $SNK6
EOF
cat >"$XFIB_TMP/bgpd.conf" <<EOF
frr defaults traditional
router bgp 65001
 bgp router-id $R_SNK4
 no bgp ebgp-requires-policy
 no bgp default ipv4-unicast
 neighbor $SNK4 remote-as 65002
 neighbor $SNK2_4 remote-as 65002
 neighbor $SNK6 remote-as 65002
 neighbor $SNK2_6 remote-as 65002
 neighbor $SNK4 timers connect 1
 neighbor $SNK2_4 timers connect 1
 neighbor $SNK6 timers connect 1
 neighbor $SNK2_6 timers connect 1
 address-family ipv4 unicast
  neighbor $SNK4 activate
  neighbor $SNK2_4 activate
  maximum-paths 2
 exit-address-family
 address-family ipv6 unicast
  neighbor $SNK6 activate
  neighbor $SNK2_6 activate
  maximum-paths 2
 exit-address-family
EOF
frr_start "$RTR" zebra "$XFIB_TMP/zebra.conf"
frr_start "$RTR" staticd "$XFIB_TMP/staticd.conf"
frr_start "$RTR" bgpd "$XFIB_TMP/bgpd.conf"
log "FRR $(vty "$RTR" -c 'show version' | sed -n 's/^FRRouting \([^ ]*\).*/\1/p') running in $RTR"

# ---- checks ----------------------------------------------------------------

# kroutes FAMILY PROTO: routes zebra installed for PROTO (static or bgp)
# in the router's table main. By number: zebra's static (196) is not
# iproute2's "static" (4).
kroutes() {
	local n=196
	[ "$2" = static ] || n=186
	ip -n "$RTR" "-$1" -j route show table main proto "$n" | jq length
}

# wait_counts S4 S6 B4 B6: the kernel has S4 + S6 static and B4 + B6 BGP
# routes, and xfib's published instances hold the base tables plus those.
wait_counts() {
	local deadline=$((SECONDS + 60)) st x4 x6
	while :; do
		st=$(rctl status -j)
		x4=$(jq .ipv4.routes <<<"$st")
		x6=$(jq .ipv6.routes <<<"$st")
		if [ "$(kroutes 4 static)" -eq "$1" ] && [ "$(kroutes 6 static)" -eq "$2" ] &&
			[ "$(kroutes 4 bgp)" -eq "$3" ] && [ "$(kroutes 6 bgp)" -eq "$4" ] &&
			[ "$x4" -eq $((BASE4 + $1 + $3)) ] && [ "$x6" -eq $((BASE6 + $2 + $4)) ]; then
			return 0
		fi
		((SECONDS < deadline)) ||
			fail "expected static $1 + $2, bgp $3 + $4: kernel static $(kroutes 4 static) + $(kroutes 6 static), bgp $(kroutes 4 bgp) + $(kroutes 6 bgp); xfib $x4 + $x6 (base $BASE4 + $BASE6)"
		sleep 0.2
	done
}

# kernel_paths FAMILY PREFIX: the gateways (or link-local gateway@dev) of
# PREFIX in the router kernel, through its nexthop object, sorted.
kernel_paths() {
	local nh
	nh=$(ip -n "$RTR" "-$1" -j route show "$2" | jqe '.[0].nhid') || {
		echo "no route or no nexthop object: $(ip -n "$RTR" "-$1" route show "$2")"
		return 0
	}
	ip -n "$RTR" -j nexthop show | jq -r --argjson id "$nh" '
		(map({(.id | tostring): .}) | add) as $nh |
		$nh[$id | tostring] | (if .group then [.group[].id] else [.id] end) |
		map($nh[tostring] | "\(.gateway)@\(.dev)") | sort | join(" ")'
}

# paths_match FAMILY PREFIX PATTERN: kernel_paths matches the glob PATTERN.
paths_match() {
	# shellcheck disable=SC2053 # PATTERN is a glob
	[[ $(kernel_paths "$1" "$2") == $3 ]]
}

# wait_paths FAMILY PREFIX PATTERN WHAT: waits (30 s) until PREFIX's paths
# in the router kernel match PATTERN. bgpd installs a peer's routes as its
# session comes up and its updates arrive: the route count can be right a
# moment before every prefix has its second path.
wait_paths() {
	wait_until 30 paths_match "$1" "$2" "$3" ||
		fail "$4, $2 in the kernel: $(kernel_paths "$1" "$2"), expected $3"
}

# nhid PREFIX: the nexthop object of an IPv4 route in the router kernel.
nhid() { ip -n "$RTR" -j route show "$1" | jq '.[0].nhid'; }

# nhids: the nexthop objects of zebra's IPv4 BGP routes, with how many
# routes use each, e.g. "nhid 20: 4096 routes".
nhids() {
	ip -n "$RTR" -j route show proto 186 |
		jq -r 'group_by(.nhid) | map("nhid \(.[0].nhid): \(length) routes") | join(", ")'
}

# udp_closed NS: UDP datagrams NS's kernel received for closed ports.
udp_closed() {
	local v4 v6
	# shellcheck disable=SC2016
	v4=$(in_ns "$1" awk '
		$1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Udp:" && hdr { print $col["NoPorts"]; exit }
	' /proc/net/snmp)
	v6=$(kicmp6 "$1" Udp6NoPorts)
	echo $((v4 + v6))
}

# fresh_neighbours FAMILY: every gateway of FAMILY the routes may use is
# resolved in the router kernel, so the dataplane has its MAC: the sinks'
# global addresses (pinged from gen, through xfib) and, for IPv6, their
# link-local ones (BGP's next hops, pinged from the router).
fresh_neighbours() {
	local fam=$1 ns dev ll out
	if [ "$fam" = 4 ]; then
		expect_xdp 4 "$SNK4"
		expect_xdp 4 "$SNK2_4"
		return
	fi
	expect_xdp 6 "$SNK6"
	expect_xdp 6 "$SNK2_6"
	for ns in "$SNK" "$SNK2"; do
		dev=$R_SNK
		[ "$ns" = "$SNK" ] || dev=$R_SNK2
		ll=$(ip -n "$ns" -6 -j addr show dev sink0 scope link |
			jq -r '[.[0].addr_info[] | select(.scope == "link") | .local][0]')
		out=$(ip netns exec "$RTR" ping -q -c 1 -W 1 -I "$dev" "$ll%$dev" 2>&1) ||
			fail "router cannot reach $ll on $dev: $out"
	done
}

# flows FAMILY DST WHERE WHAT: FLOWS x PKTS UDP datagrams from gen to DST
# all arrive, at both sinks (WHERE=both: each gets a quarter or more),
# or all at sink or all at sink2 (WHERE=sink, sink2); xfib forwarded
# them and the router kernel forwarded nothing.
flows() {
	local fam=$1 dst=$2 where=$3 what=$4 a0 b0 a b n=$((FLOWS * PKTS)) dx dk
	fresh_neighbours "$fam"
	a0=$(udp_closed "$SNK")
	b0=$(udp_closed "$SNK2")
	snapshot
	ip netns exec "$GEN" python3 "$flows_py" send "$dst" "$FLOWS" "$PKTS"
	# Delivered by now, but the sinks' kernels may lag on a busy machine.
	for _ in $(seq 50); do
		a=$(($(udp_closed "$SNK") - a0))
		b=$(($(udp_closed "$SNK2") - b0))
		((a + b >= n)) && break
		sleep 0.1
	done
	deltas
	dx=$D_X4 dk=$D_K4
	[ "$fam" = 4 ] || { dx=$D_X6; dk=$D_K6; }
	log "$what: $a datagrams at sink, $b at sink2 (of $n)"
	((a + b == n)) || fail "$what: $((a + b)) of $n datagrams to $dst arrived (sinks' UDP counters: $(in_ns "$SNK" grep Udp /proc/net/snmp | tr '\n' ' ') $(in_ns "$SNK2" grep Udp /proc/net/snmp | tr '\n' ' '))"
	((dx >= n && dk == 0)) ||
		fail "$what: xfib forwarded +$dx, the router kernel +$dk (of $n): $(stats_line)"
	case $where in
	both) ((a >= n / 4 && b >= n / 4)) || fail "$what: not split over both paths: $a / $b" ;;
	sink) ((a == n)) || fail "$what: $b datagrams went to sink2" ;;
	sink2) ((b == n)) || fail "$what: $a datagrams went to sink" ;;
	esac
}

# ---- 1. static ECMP ----------------------------------------------------------
wait_counts 2 2 0 0
wait_paths 4 198.19.200.0/24 "$SNK4@$R_SNK $SNK2_4@$R_SNK2" "static ECMP"
wait_paths 6 2001:db8:e200::/48 "$SNK6@$R_SNK $SNK2_6@$R_SNK2" "static ECMP v6"
log "static routes: $(ip -n "$RTR" route show 198.19.200.0/24 | head -n 1)"
wait_lookup "$ECMP4" '.group.members == 2'
wait_lookup "$ECMP6" '.group.members == 2'
wait_lookup "$ONE4" ".nexthop.kind == \"gateway\" and .gateway == \"$SNK4\""
verify_clean "static routes"
flows 4 "$ECMP4" both "static ECMP ipv4"
flows 6 "$ECMP6" both "static ECMP ipv6"
# One frame, as the sink receives it: the router's MAC, TTL - 1.
capture_start "$SNK" "$SNK_IF" "icmp and dst $ONE4 and icmp[icmptype] == icmp-echo"
ping_all "$GEN" 4 "$ONE4" 1 -t 17
capture_wait
check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 16

# ---- 2. BGP from two peers -------------------------------------------------
# bird_conf ROUTER_ID PEER4 PEER6: a sink's BIRD, announcing all NA + NB
# prefixes to the router's addresses PEER4 and PEER6.
bird_conf() {
	local p start i
	bgp_peer_conf "$1" 65002 "$2" "$3" 65001
	for p in a b; do
		echo "protocol static static_$p {"
		echo "	ipv4;"
		start=0
		[ "$p" = a ] || start=$((NA / 2))
		for i in $(seq "$start" $((start + NA / 2 - 1))); do
			echo "	route 198.19.$((i / 32)).$((i % 32 * 8))/29 blackhole;"
		done
		echo "}"
	done
	echo "protocol static static6 {"
	echo "	ipv6;"
	for i in $(seq 0 $((NB - 1))); do
		printf '\troute 2001:db8:f%03x::/48 blackhole;\n' "$i"
	done
	echo "}"
}
bird_conf "$SNK4" "$R_SNK4" "$R_SNK6" >"$XFIB_TMP/bird-sink.conf"
bird_conf "$SNK2_4" "$R_SNK2_4" "$R_SNK2_6" >"$XFIB_TMP/bird-sink2.conf"
SOCK1="$XFIB_TMP/bird-sink.ctl"
SOCK2="$XFIB_TMP/bird-sink2.ctl"
t0=$(now_ms)
bird_start "$SNK" "$XFIB_TMP/bird-sink.conf" "$SOCK1"
bird_start "$SNK2" "$XFIB_TMP/bird-sink2.conf" "$SOCK2"
BIRD2_PID=$BIRD_PID
birdc1() { ip netns exec "$SNK" birdc -s "$SOCK1" "$@"; }

wait_counts 2 2 "$NA" "$NB"
log "$NA + $NB BGP routes in the kernel and the dataplane $(($(now_ms) - t0)) ms after the BIRDs started"
for p in 198.19.0.0/29 198.19.127.248/29; do
	wait_paths 4 "$p" "$SNK4@$R_SNK $SNK2_4@$R_SNK2" "BGP ECMP"
done
# Link-local gateways, sorted as strings: either port's may come first.
wait_paths 6 2001:db8:f7ff::/48 "@(fe80::*@$R_SNK fe80::*@$R_SNK2|fe80::*@$R_SNK2 fe80::*@$R_SNK)" \
	"BGP ECMP v6"
log "BGP routes: $(nhids), static ECMP: nhid $(nhid 198.19.200.0/24)"
wait_lookup "$BGP4" '.group.members == 2'
wait_lookup "$BGP6" '.group.members == 2'
verify_clean "BGP from two peers"
flows 4 "$BGP4" both "BGP ECMP ipv4"
flows 6 "$BGP6" both "BGP ECMP ipv6"

# ---- 3. a peer goes away: the groups shrink ---------------------------------
kill -TERM "$BIRD2_PID"
wait "$BIRD2_PID" 2>/dev/null || true
t0=$(now_ms)
wait_lookup "$BGP4" ".nexthop.kind == \"gateway\" and .gateway == \"$SNK4\"" 30
wait_lookup "$BGP6" '.nexthop.kind == "gateway" and .egress.name == "'"$R_SNK"'"' 30
wait_counts 2 2 "$NA" "$NB"
for p in 198.19.0.0/29 198.19.127.248/29; do
	wait_paths 4 "$p" "$SNK4@$R_SNK" "after sink2 went away"
done
wait_paths 6 2001:db8:f7ff::/48 "fe80::+([0-9a-f:])@$R_SNK" "after sink2 went away"
log "sink2's paths gone from the dataplane $(($(now_ms) - t0)) ms after its BIRD stopped; BGP routes: $(nhids), static ECMP: nhid $(nhid 198.19.200.0/24)"
verify_clean "one peer left"
flows 4 "$BGP4" sink "BGP ipv4, one peer"
flows 6 "$BGP6" sink "BGP ipv6, one peer"
# The static group is not BGP's: it keeps both members.
flows 4 "$ECMP4" both "static ECMP ipv4, one BGP peer"

# ---- 4. configuration changes replace nexthops --------------------------------
vty "$RTR" -c "configure terminal" \
	-c "ip route 198.19.201.0/24 $SNK2_4" -c "no ip route 198.19.201.0/24 $SNK4" \
	-c "ipv6 route 2001:db8:e201::/48 $SNK2_6" -c "no ipv6 route 2001:db8:e201::/48 $SNK6" ||
	fail "vtysh: static routes"
wait_lookup "$ONE4" ".nexthop.kind == \"gateway\" and .gateway == \"$SNK2_4\""
wait_lookup "$ONE6" ".nexthop.kind == \"gateway\" and .gateway == \"$SNK2_6\""
wait_counts 2 2 "$NA" "$NB"
verify_clean "static routes moved"
flows 4 "$ONE4" sink2 "static ipv4 moved to sink2"
flows 6 "$ONE6" sink2 "static ipv6 moved to sink2"

# Everything sink announces, with sink2 as its next hop.
t0=$(now_ms)
vty "$RTR" -c "configure terminal" \
	-c "route-map via-sink2 permit 10" -c "set ip next-hop $SNK2_4" -c "exit" \
	-c "route-map via-sink2-6 permit 10" -c "set ipv6 next-hop global $SNK2_6" \
	-c "set ipv6 next-hop prefer-global" -c "exit" \
	-c "router bgp 65001" -c "address-family ipv4 unicast" \
	-c "neighbor $SNK4 route-map via-sink2 in" -c "exit-address-family" \
	-c "address-family ipv6 unicast" \
	-c "neighbor $SNK6 route-map via-sink2-6 in" -c "exit-address-family" ||
	fail "vtysh: route-maps"
vty "$RTR" -c "clear bgp ipv4 unicast $SNK4 soft in" -c "clear bgp ipv6 unicast $SNK6 soft in" >/dev/null
wait_lookup "$BGP4" ".nexthop.kind == \"gateway\" and .gateway == \"$SNK2_4\"" 30
wait_lookup "$BGP6" ".nexthop.kind == \"gateway\" and .gateway == \"$SNK2_6\"" 30
for p in 198.19.0.0/29 198.19.127.248/29; do
	wait_paths 4 "$p" "$SNK2_4@$R_SNK2" "after the route-map"
done
wait_paths 6 2001:db8:f7ff::/48 "$SNK2_6@$R_SNK2" "after the route-map"
wait_counts 2 2 "$NA" "$NB"
log "route-map: $NA + $NB routes moved to sink2 in the dataplane after $(($(now_ms) - t0)) ms; BGP routes: $(nhids)"
verify_clean "nexthops replaced"
flows 4 "$BGP4" sink2 "BGP ipv4 via sink2"
flows 6 "$BGP6" sink2 "BGP ipv6 via sink2"

# ---- 5. withdrawn ------------------------------------------------------------
birdc1 disable static_b >/dev/null || fail "birdc disable static_b"
wait_counts 2 2 $((NA / 2)) "$NB"
birdc1 disable static_a >/dev/null || fail "birdc disable static_a"
birdc1 disable static6 >/dev/null || fail "birdc disable static6"
vty "$RTR" -c "configure terminal" \
	-c "no ip route 198.19.200.0/24 $SNK4" -c "no ip route 198.19.200.0/24 $SNK2_4" \
	-c "no ipv6 route 2001:db8:e200::/48 $SNK6" -c "no ipv6 route 2001:db8:e200::/48 $SNK2_6" \
	-c "no ip route 198.19.201.0/24 $SNK2_4" -c "no ipv6 route 2001:db8:e201::/48 $SNK2_6" ||
	fail "vtysh: deleting the static routes"
wait_counts 0 0 0 0
for a in "$BGP4" "$BGP6" "$ECMP4" "$ECMP6" "$ONE4"; do
	wait_lookup "$a" '.action == "pass" and .reason == "pass_no_route"'
done
verify_clean "everything withdrawn"
# The traffic goes to the kernel, which has no route either.
nr0=$(counter pass_no_route)
snapshot
nping "$GEN" -4 -c 3 -i 0.2 "$BGP4" >/dev/null 2>&1 && fail "$BGP4 still answers after the withdrawal"
deltas
(($(counter pass_no_route) - nr0 >= 3 && D_X4 == 0 && D_K4 == 0)) ||
	fail "withdrawn $BGP4: pass_no_route +$(($(counter pass_no_route) - nr0)), forwarded by xfib +$D_X4, by the kernel +$D_K4"
log "PASS: FRR static ECMP and $NA + $NB BGP routes over nexthop objects mirrored, forwarded, shrunk, replaced and withdrawn"
