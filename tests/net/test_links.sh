#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Links and addresses, as the kernel handles them, with real packets:
#
# - packets to the router's own addresses go to the kernel (counted as
#   pass_local), never forwarded, also for an address added on top of a
#   routed prefix, until it is removed again;
# - an egress MTU lowered: larger packets go to the kernel, which answers
#   ICMP frag-needed / packet too big, or fragments (no DF); smaller ones
#   stay in XDP; the MTU restored, large packets are XDP-forwarded again;
# - the egress renamed under a steady stream: nothing lost, status and
#   lookup show the new name;
# - the egress admin down: the kernel flushes the routes through it (the
#   IPv4 ones without telling), so do we: packets go to the kernel, which
#   does not forward them either; back up with its routes re-added, XDP
#   forwards again;
# - carrier loss (the sink's end down): routes stay (linkdown), packets go
#   to the kernel, the carrier back, XDP forwards with the same routes;
# - the link deleted: every route through it is gone from the dataplane,
#   including those the kernel removed without an announcement.
#
# After each step xfib's prefixes equal the kernel's and verify is clean.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up sink2
wait_prefixes_match
verify_clean "start"

# Destinations behind the sinks, routed by the router via a gateway.
D4=198.19.7.1 D6=2001:db8:f7::1
ip -n "$SNK" addr add "$D4/32" dev lo
ip -n "$SNK" addr add "$D6/128" dev lo nodad
add_dest_routes() {
	ip -n "$RTR" route replace 198.19.7.0/24 via "$SNK4"
	ip -n "$RTR" route replace 2001:db8:f7::/64 via "$SNK6"
}
add_dest_routes
expect_xdp 4 "$D4" 3000 "$SNK"
expect_xdp 6 "$D6" 3000 "$SNK"

# ping_once FAMILY DST [ARGS...]: one echo from gen; sets PING_OUT, and
# PING_OK=1 if it was answered.
ping_once() {
	local fam=$1 dst=$2
	shift 2
	PING_OK=0
	PING_OUT=$(nping "$GEN" "-$fam" -c 1 "$@" "$dst" 2>&1) && PING_OK=1
	true
}

# snap_all: every counter this test compares, before a step.
snap_all() {
	snapshot
	S_STATS=$(rctl stats -j)
	S_ECHO_SNK=$(icmp_in_echos "$SNK")
}

# d_stat NAME: growth of an xfib counter since snap_all.
d_stat() {
	echo $(($(counter "$1") - $(jq -r --arg n "$1" '.[$n].packets' <<<"$S_STATS")))
}

# not_forwarded WHAT [any]: since snap_all, xfib and the router kernel
# forwarded nothing and no echo reached the sink. With "any", the kernel
# may count the packets it handled (ForwDatagrams counts a packet refused
# for its size too).
not_forwarded() {
	deltas
	((D_X4 == 0 && D_X6 == 0)) || fail "$1: xfib forwarded v4 +$D_X4 v6 +$D_X6"
	[ "${2:-}" = any ] || ((D_K4 == 0 && D_K6 == 0)) ||
		fail "$1: router kernel forwarded v4 +$D_K4 v6 +$D_K6"
	local e=$(($(icmp_in_echos "$SNK") - S_ECHO_SNK))
	((e == 0)) || fail "$1: $e echoes reached the sink"
}

# ---- 1. local addresses -------------------------------------------------

log "1. the router's own addresses"
snap_all
for a in "$R_SNK4" "$R_GEN4"; do ping_all "$GEN" 4 "$a" 5; done
for a in "$R_SNK6" "$R_GEN6"; do ping_all "$GEN" 6 "$a" 5; done
not_forwarded "pings to the router's addresses"
n=$(d_stat pass_local)
((n >= 20)) || fail "pings to the router's addresses: pass_local +$n, expected >= 20"
log "20 echoes to the router's addresses: pass_local +$n, nothing forwarded"

# An address of the router inside a prefix it routes to the sink: the
# kernel's local table wins. The sink has the same addresses, so where an
# echo is answered shows who took it.
L4=198.19.7.9 L6=2001:db8:f7::9
ip -n "$SNK" addr add "$L4/32" dev lo
ip -n "$SNK" addr add "$L6/128" dev lo nodad
expect_xdp 4 "$L4" 3000 "$SNK"
expect_xdp 6 "$L6" 3000 "$SNK"
ip -n "$RTR" addr add "$L4/32" dev lo
ip -n "$RTR" addr add "$L6/128" dev lo nodad
wait_lookup "$L4" '.action == "pass" and .reason == "pass_local"'
wait_lookup "$L6" '.action == "pass" and .reason == "pass_local"'
snap_all
ping_all "$GEN" 4 "$L4" 5
ping_all "$GEN" 6 "$L6" 5
not_forwarded "pings to an address the router took over"
n=$(d_stat pass_local)
((n >= 10)) || fail "pings to $L4/$L6 on the router: pass_local +$n, expected >= 10"
ip -n "$RTR" addr del "$L4/32" dev lo
ip -n "$RTR" addr del "$L6/128" dev lo
expect_xdp 4 "$L4" 3000 "$SNK"
expect_xdp 6 "$L6" 3000 "$SNK"
wait_prefixes_match
verify_clean "local addresses"

# ---- 2. MTU change on the egress ------------------------------------------

log "2. egress MTU 1500 -> 1280"
set_sink_mtu() {
	ip -n "$RTR" link set dev "$R_SNK" mtu "$1"
	ip -n "$SNK" link set dev "$SNK_IF" mtu "$1"
	# The gen host forgets what it learnt about the path.
	ip -n "$GEN" route flush cache
	ip -n "$GEN" -6 route flush cache
}
set_sink_mtu 1280
wait_lookup "$D4" '.action == "forward"'
# (the lookup does not know the packet size: wait for the interface MTU
# through a packet that must now go to the kernel)
deadline=$((SECONDS + 10))
while :; do
	snap_all
	ping_once 4 "$D4" -s 1300 -M "do"
	(($(d_stat pass_mtu) > 0)) && break
	((SECONDS < deadline)) || fail "1328-byte packets not passed to the kernel after the MTU change ($(stats_line))"
	ip -n "$GEN" route flush cache
	sleep 0.1
done
# One DF packet larger than the MTU: the kernel answers, nothing is sent.
ip -n "$GEN" route flush cache
snap_all
u0=$(kicmp "$RTR" OutDestUnreachs)
ping_once 4 "$D4" -s 1300 -M "do"
((PING_OK == 0)) || fail "1328-byte DF echo crossed a 1280-byte link: $PING_OUT"
[[ $PING_OUT == *"Frag needed and DF set (mtu = 1280)"* ]] ||
	fail "no frag-needed (mtu 1280) from the router: $PING_OUT"
not_forwarded "DF packet above the MTU" any
((d = $(d_stat pass_mtu), d == 1)) || fail "pass_mtu +$d for one DF echo above the MTU"
((d = $(kicmp "$RTR" OutDestUnreachs) - u0, d == 1)) || fail "router sent $d destination unreachables, expected 1"
log "IPv4 DF 1328 bytes: frag-needed mtu 1280 from the router, pass_mtu +1"

snap_all
t0=$(kicmp6 "$RTR" Icmp6OutPktTooBigs)
ping_once 6 "$D6" -s 1300
((PING_OK == 0)) || fail "1348-byte IPv6 echo crossed a 1280-byte link: $PING_OUT"
[[ $PING_OUT == *"Packet too big: mtu=1280"* ]] || fail "no packet too big (mtu 1280) from the router: $PING_OUT"
not_forwarded "IPv6 packet above the MTU" any
((d = $(d_stat pass_mtu), d == 1)) || fail "pass_mtu +$d for one IPv6 echo above the MTU"
((d = $(kicmp6 "$RTR" Icmp6OutPktTooBigs) - t0, d == 1)) || fail "router sent $d packet too big, expected 1"
log "IPv6 1348 bytes: packet too big mtu 1280 from the router, pass_mtu +1"

# Without DF the kernel fragments and forwards; the answer comes back.
ip -n "$GEN" route flush cache
snap_all
ping_once 4 "$D4" -s 1300 -M dont
((PING_OK == 1)) || fail "1328-byte echo without DF not answered: $PING_OUT"
deltas
((d = $(d_stat pass_mtu), d == 1)) || fail "pass_mtu +$d for one non-DF echo above the MTU"
((D_K4 >= 1)) || fail "the router kernel did not forward (fragment) the non-DF echo"
log "IPv4 1328 bytes without DF: fragmented by the kernel (kernel forwarded +$D_K4)"

# Below the new MTU: still XDP.
snap_all
ping_all "$GEN" 4 "$D4" 3 -s 1200 -M "do"
ping_all "$GEN" 6 "$D6" 3 -s 1200
deltas
((D_X4 >= 6 && D_X6 >= 6 && D_K4 == 0 && D_K6 == 0)) ||
	fail "1228-byte packets under a 1280 MTU: xfib v4 +$D_X4 v6 +$D_X6, kernel v4 +$D_K4 v6 +$D_K6"

set_sink_mtu 1500
deadline=$((SECONDS + 10))
while :; do
	snap_all
	ping_once 4 "$D4" -s 1400 -M "do"
	deltas
	((PING_OK == 1 && D_X4 >= 2 && D_K4 == 0)) && break
	((SECONDS < deadline)) || fail "1428-byte packets not XDP-forwarded after the MTU went back to 1500: $PING_OUT ($(stats_line))"
	ip -n "$GEN" route flush cache
	sleep 0.1
done
snap_all
ping_all "$GEN" 4 "$D4" 3 -s 1400 -M "do"
ping_all "$GEN" 6 "$D6" 3 -s 1400
deltas
((D_X4 >= 6 && D_X6 >= 6 && D_K4 == 0 && D_K6 == 0 && $(d_stat pass_mtu) == 0)) ||
	fail "1428-byte packets at MTU 1500: xfib v4 +$D_X4 v6 +$D_X6, kernel v4 +$D_K4 v6 +$D_K6"
log "MTU back to 1500: 1428-byte packets XDP-forwarded"

# ---- 3. rename under traffic ---------------------------------------------

log "3. rename $R_SNK -> r-out under a stream"
snap_all
stream_start rename4 4 "$D4" -i 0.02 -c 150
stream_start rename6 6 "$D6" -i 0.02 -c 150
sleep 1
ip -n "$RTR" link set dev "$R_SNK" name r-out
R_SNK=r-out
for f in 4 6; do
	stream_answered "rename$f" 150 "rename: v$f stream"
done
deltas
forwarded_by xdp 300 "rename: stream"
rctl status -j | jqe '[.interfaces[].name] | index("r-out") != null' >/dev/null ||
	fail "status after rename: $(rctl status -j | jq -c .interfaces)"
lookup_is "$D4" '.egress.name == "r-out" and .action == "forward"' ||
	fail "lookup after rename: $(rctl -j lookup "$D4")"
rctl status | grep -q 'r-out' || fail "status text does not name r-out"
log "rename: 150/150 echoes per family, all XDP-forwarded; status and lookup say r-out"

# ---- 4. admin down / up -----------------------------------------------------

log "4. $R_SNK admin down"
ip -n "$RTR" link set dev "$R_SNK" down
# The kernel deleted the IPv4 routes through it without a word.
[ -z "$(ip -n "$RTR" -4 route show dev "$R_SNK" 2>/dev/null)" ] ||
	fail "kernel kept routes through a down link: $(ip -n "$RTR" -4 route show dev "$R_SNK")"
wait_lookup "$D4" '.reason == "pass_no_route"'
wait_lookup "$D6" '.reason == "pass_no_route"'
wait_prefixes_match
snap_all
ping_once 4 "$D4"
((PING_OK == 0)) || fail "echo to $D4 answered through a down link"
ping_once 6 "$D6"
((PING_OK == 0)) || fail "echo to $D6 answered through a down link"
not_forwarded "egress down"
((d = $(d_stat pass_no_route), d == 2)) || fail "egress down: pass_no_route +$d for 2 echoes ($(stats_line))"
verify_clean "egress down"
log "egress down: routes flushed, 2 echoes passed to the kernel (no route), none forwarded"

log "$R_SNK up, routes and IPv6 address re-added"
ip -n "$RTR" link set dev "$R_SNK" up
ip -n "$RTR" addr replace "$R_SNK6/64" dev "$R_SNK" nodad
add_dest_routes
expect_xdp 4 "$D4" 5000 "$SNK"
expect_xdp 6 "$D6" 5000 "$SNK"
expect_xdp 4 "$SNK4" 5000 "$SNK"
expect_xdp 6 "$SNK6" 5000 "$SNK"
wait_prefixes_match
verify_clean "egress up"

# ---- 5. carrier loss ------------------------------------------------------

log "5. carrier loss: $SNK_IF down in the sink"
ip -n "$SNK" link set dev "$SNK_IF" down
ip -n "$RTR" -j link show dev "$R_SNK" | jqe '.[0].flags | index("NO-CARRIER") != null and index("UP") != null' >/dev/null ||
	fail "$R_SNK: expected UP and NO-CARRIER: $(ip -n "$RTR" -br link show dev "$R_SNK")"
wait_lookup "$D4" '.egress.up == false and .reason == "pass_egress_down"'
wait_lookup "$D6" '.egress.up == false and .reason == "pass_egress_down"'
# The routes stay (linkdown), in the kernel and in xfib.
ip -n "$RTR" route show 198.19.7.0/24 | grep -q linkdown || fail "kernel route not linkdown: $(ip -n "$RTR" route show 198.19.7.0/24)"
wait_prefixes_match
snap_all
ping_once 4 "$D4"
ping_once 6 "$D6"
deltas
((D_X4 == 0 && D_X6 == 0)) || fail "carrier down: xfib forwarded v4 +$D_X4 v6 +$D_X6"
((d = $(d_stat pass_egress_down), d == 2)) || fail "carrier down: pass_egress_down +$d for 2 echoes ($(stats_line))"
verify_clean "carrier down"

log "carrier back"
ip -n "$SNK" link set dev "$SNK_IF" up
# The sink's own kernel dropped its IPv6 address and default routes when
# its port went down; the router's routes were kept.
ip -n "$SNK" addr replace "$SNK6/64" dev "$SNK_IF" nodad
ip -n "$SNK" route replace default via "$R_SNK4"
ip -n "$SNK" -6 route replace default via "$R_SNK6"
ip -n "$RTR" route show 198.19.7.0/24 | grep -q "via $SNK4" || fail "router lost 198.19.7.0/24 on carrier loss"
expect_xdp 4 "$D4" 5000 "$SNK"
expect_xdp 6 "$D6" 5000 "$SNK"
wait_prefixes_match
verify_clean "carrier up"

# ---- 6. link deletion ---------------------------------------------------------

log "6. delete $R_SNK2"
E4=198.19.8.1 E6=2001:db8:f8::1
ip -n "$SNK2" addr add "$E4/32" dev lo
ip -n "$SNK2" addr add "$E6/128" dev lo nodad
ip -n "$RTR" route add 198.19.8.0/24 via "$SNK2_4"
ip -n "$RTR" route add 2001:db8:f8::/64 via "$SNK2_6"
expect_xdp 4 "$E4" 3000 "$SNK2"
expect_xdp 6 "$E6" 3000 "$SNK2"
wait_prefixes_match
ip -n "$RTR" link del dev "$R_SNK2"
wait_lookup "$E4" '.reason == "pass_no_route"'
wait_lookup "$E6" '.reason == "pass_no_route"'
# Everything through the link, in every table, the local one included.
wait_prefixes_match
wait_lookup "$NET4_S2.255" '.reason == "pass_no_route"'
rctl status -j | jqe '.interfaces | length == 2' >/dev/null ||
	fail "status after link deletion: $(rctl status -j | jq -c .interfaces)"
snap_all
ping_once 4 "$E4"
ping_once 6 "$E6"
not_forwarded "link deleted"
((d = $(d_stat pass_no_route), d == 2)) || fail "link deleted: pass_no_route +$d for 2 echoes"
verify_clean "link deleted"
# The rest still forwards.
expect_xdp 4 "$D4" 3000 "$SNK"
expect_xdp 6 "$D6" 3000 "$SNK"

log "PASS: local addresses, MTU, rename, admin down/up, carrier loss and link deletion"
