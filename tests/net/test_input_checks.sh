#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Input checks the kernel makes that xfib must make too, with real packets
# and the kernel as the oracle:
#
# 1. a port leaving a bridge: the bridge announces it as an AF_BRIDGE
#    RTM_DELLINK of the port, which stays; its routes stay mirrored, the
#    device known, verify clean;
# 2. net.ipv6.conf.<port>.disable_ipv6: the kernel drops IPv6 arriving on
#    the port and sends none out of it. IPv6 in on such a port, or routed
#    out of one (a route by nexthop object, which the kernel keeps), goes
#    to the kernel (pass_ipv6_disabled), which drops it: nothing reaches
#    the sink. Enabled again, XDP forwards again;
# 3. IPv6 source-specific routes ("from"): the kernel chooses by source
#    within the destination prefix, and backtracks to a shorter prefix
#    for a source without a route there, so that prefix goes to the
#    kernel (pass_unsupported) and each source's packets go where the
#    kernel sends them; a longer prefix without source routes stays in
#    XDP; with the source route gone, the prefix is XDP-forwarded again.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

# The topology of topo_up, with a bridge and a port for it (section 1)
# made before xfibd starts: no change in flight then, so no resync
# (which reads everything again) can hide a change mirrored wrongly.
topo_create 0
topo_add_sink2
ip -n "$RTR" link add br-t type bridge
ip -n "$RTR" link add bt-a type veth peer name bt-b
ip -n "$RTR" link set bt-a up
ip -n "$RTR" link set bt-b up
ip -n "$RTR" addr add 198.19.60.1/24 dev bt-a
ip -n "$RTR" addr add 2001:db8:60::1/64 dev bt-a nodad
ip -n "$RTR" route add 198.19.61.0/24 via 198.19.60.2 dev bt-a
ip -n "$RTR" route add 2001:db8:61::/64 via 2001:db8:60::2 dev bt-a
xfibd_start
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4" 3000 "$SNK"
expect_xdp 6 "$SNK6" 3000 "$SNK"
expect_xdp 4 "$SNK2_4" 3000 "$SNK2"
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"
wait_prefixes_match
verify_clean "start"

# d_stat NAME BEFORE: growth of an xfib counter since BEFORE.
d_stat() { echo $(($(counter "$1") - $2)); }
in_echos6() { kicmp6 "$1" Icmp6InEchos; }

# ---- 1. a port leaving a bridge ---------------------------------------------

log "1. a port with routes joins a bridge and leaves it"
wait_lookup 198.19.61.1 '.egress.name == "bt-a" and .egress.known and .egress.up'
wait_lookup 2001:db8:61::1 '.egress.name == "bt-a" and .egress.known and .egress.up'
resyncs0=$(rctl status -j | jq .daemon.resyncs)
ip -n "$RTR" link set bt-a master br-t
ip -n "$RTR" link set bt-a nomaster
# Netlink keeps order: once a route added after the bridge's messages is
# mirrored, they have been read.
ip -n "$RTR" route add 198.19.62.0/24 via 198.19.60.2 dev bt-a
wait_lookup 198.19.62.1 '.egress.name == "bt-a"'
wait_prefixes_match
for a in 198.19.61.1 2001:db8:61::1 198.19.60.9 2001:db8:60::9; do
	lookup_is "$a" '.egress.name == "bt-a" and .egress.known and .egress.up' ||
		fail "after bt-a left the bridge, lookup $a: $(rctl -j lookup "$a" | jq -c '{egress, action, reason}')"
done
verify_clean "port out of a bridge"
((r = $(rctl status -j | jq .daemon.resyncs), r == resyncs0)) ||
	fail "xfibd read everything again ($resyncs0 -> $r resyncs) around the bridge"
ip -n "$RTR" link del bt-a
ip -n "$RTR" link del br-t
wait_prefixes_match

# ---- 2. disable_ipv6 --------------------------------------------------------

D6=2001:db8:f6::1
ip -n "$SNK" addr add "$D6/128" dev lo nodad
ip -n "$RTR" nexthop add id 60 via "$SNK6" dev "$R_SNK"
ip -n "$RTR" -6 route add 2001:db8:f6::/64 nhid 60
expect_xdp 6 "$D6" 3000 "$SNK"
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"

# no_v6_forwarding WHAT DST: 20 echoes from gen to DST: none answered,
# none forwarded by XDP, none reaching a sink, pass_ipv6_disabled +20 or
# more.
no_v6_forwarding() {
	local what=$1 dst=$2 p0 e0 e1 out
	p0=$(counter pass_ipv6_disabled)
	snapshot
	e0=$(($(in_echos6 "$SNK") + $(in_echos6 "$SNK2")))
	out=$(nping "$GEN" -6 -q -c 20 -i 0.01 -W 0.2 "$dst" 2>&1) || true
	ping_summary "$out" || true
	deltas
	((PING_RX == 0)) || fail "$what: $PING_RX echoes answered"
	((D_X6 == 0)) || fail "$what: xfib forwarded $D_X6 IPv6 packets"
	e1=$(($(in_echos6 "$SNK") + $(in_echos6 "$SNK2")))
	((e1 == e0)) || fail "$what: $((e1 - e0)) echoes reached a sink"
	((p0 = $(d_stat pass_ipv6_disabled "$p0"), p0 >= 20)) ||
		fail "$what: pass_ipv6_disabled +$p0, expected >= 20"
	log "$what: 20 echoes, none forwarded or answered, pass_ipv6_disabled +$p0"
}

# v6_passed_on_ingress: one echo from gen was handed to the kernel for
# disable_ipv6 (xfibd has seen the change).
v6_passed_on_ingress() {
	local p0
	p0=$(counter pass_ipv6_disabled)
	nping "$GEN" -6 -c 1 -W 0.2 "$SNK2_6" >/dev/null 2>&1 || true
	(($(d_stat pass_ipv6_disabled "$p0") > 0))
}

log "2a. disable_ipv6 on the ingress port"
# The router stops answering neighbour solicitations on the port: gen's
# entry for it would go from stale to failed within seconds (sooner on a
# busy machine) and gen stop sending. A permanent entry keeps every echo
# going to the router, whose answer to them is what is checked here.
ip -n "$GEN" neigh replace "$R_GEN6" lladdr "$R_GEN_MAC" dev "$GEN_IF" nud permanent
in_ns "$RTR" sysctl -qw "net.ipv6.conf.$R_GEN.disable_ipv6=1"
wait_until 10 v6_passed_on_ingress ||
	fail "IPv6 on $R_GEN not passed to the kernel after disable_ipv6 ($(stats_line))"
no_v6_forwarding "disable_ipv6 on the ingress" "$SNK2_6"
expect_xdp 4 "$SNK2_4" 3000 "$SNK2"
in_ns "$RTR" sysctl -qw "net.ipv6.conf.$R_GEN.disable_ipv6=0"
# Disabling took the port's addresses with it.
ip -n "$RTR" addr add "$R_GEN6/64" dev "$R_GEN" nodad
wait_ipv6_ready "$RTR"
ip -n "$GEN" neigh del "$R_GEN6" dev "$GEN_IF"
expect_xdp 6 "$SNK2_6" 5000 "$SNK2"
expect_xdp 6 "$D6" 3000 "$SNK"

log "2b. disable_ipv6 on the egress port"
in_ns "$RTR" sysctl -qw "net.ipv6.conf.$R_SNK.disable_ipv6=1"
# The kernel keeps the route by nexthop object (and flushes the port's
# neighbours, so this is the second reason not to forward), but sends
# nothing out of the port.
ip -n "$RTR" -6 route show 2001:db8:f6::/64 | grep -q "nhid 60" ||
	fail "the kernel dropped the route by nexthop object"
wait_lookup "$D6" '.action == "pass" and .reason == "pass_ipv6_disabled"'
no_v6_forwarding "disable_ipv6 on the egress" "$D6"
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"
expect_xdp 4 "$SNK4" 3000 "$SNK"
in_ns "$RTR" sysctl -qw "net.ipv6.conf.$R_SNK.disable_ipv6=0"
ip -n "$RTR" addr add "$R_SNK6/64" dev "$R_SNK" nodad
wait_ipv6_ready "$RTR"
expect_xdp 6 "$D6" 5000 "$SNK"
wait_prefixes_match
verify_clean "disable_ipv6 off again"

# ---- 3. source-specific routes ----------------------------------------------

log "3. IPv6 source-specific routes"
GEN6B="$NET6_G::3"
ip -n "$GEN" addr add "$GEN6B/64" dev "$GEN_IF" nodad
D5=2001:db8:f5::1 D5L=2001:db8:f5:1::1
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add "$D5/128" dev lo nodad
	ip -n "$ns" addr add "$D5L/128" dev lo nodad
done
wait_ipv6_ready "$GEN"
ip -n "$RTR" -6 route add 2001:db8:f5::/48 via "$SNK6" metric 1024
ip -n "$RTR" -6 route add 2001:db8:f5:1::/64 via "$SNK6"
expect_xdp 6 "$D5" 3000 "$SNK"
# A lower metric than the plain route: taken for its source only.
ip -n "$RTR" -6 route add 2001:db8:f5::/48 from "$GEN6B/128" via "$SNK2_6" metric 100
wait_lookup "$D5" '.action == "pass" and .reason == "pass_unsupported"'
wait_lookup "$D5L" '.action == "forward"'

# echoes_from SRC NS OTHER: 10 echoes from gen's SRC to D5 are answered,
# every one reached NS and none OTHER, and xfib handed them all to the
# kernel (pass_unsupported).
echoes_from() {
	local src=$1 ns=$2 other=$3 p0 e0 o0
	p0=$(counter pass_unsupported)
	e0=$(in_echos6 "$ns")
	o0=$(in_echos6 "$other")
	ping_all "$GEN" 6 "$D5" 10 -I "$src"
	(($(in_echos6 "$ns") - e0 == 10)) || fail "from $src: $(($(in_echos6 "$ns") - e0)) of 10 echoes reached $ns"
	(($(in_echos6 "$other") == o0)) || fail "from $src: $(($(in_echos6 "$other") - o0)) echoes reached $other"
	((p0 = $(d_stat pass_unsupported "$p0"), p0 >= 10)) ||
		fail "from $src: pass_unsupported +$p0, expected >= 10"
	log "from $src: 10 echoes to $ns, as the kernel routes them; pass_unsupported +$p0"
}
echoes_from "$GEN6B" "$SNK2" "$SNK"
# Another source: the kernel finds no route in the prefix's source tree
# and backtracks to a shorter destination, past the plain route of the
# same prefix; there is none, so it answers unreachable.
ip -n "$RTR" -6 route get "$D5" from "$GEN6" iif "$R_GEN" >/dev/null 2>&1 &&
	fail "the kernel routes $D5 from $GEN6: $(ip -n "$RTR" -6 route get "$D5" from "$GEN6" iif "$R_GEN")"
p0=$(counter pass_unsupported)
u0=$(kicmp6 "$RTR" Icmp6OutDestUnreachs)
e0=$(($(in_echos6 "$SNK") + $(in_echos6 "$SNK2")))
out=$(nping "$GEN" -6 -c 10 -i 0.01 -W 0.2 -I "$GEN6" "$D5" 2>&1) || true
ping_summary "$out" || true
((PING_RX == 0)) || fail "from $GEN6: $PING_RX echoes answered: $out"
((e0 == $(in_echos6 "$SNK") + $(in_echos6 "$SNK2"))) || fail "from $GEN6: echoes reached a sink"
# (ICMPv6 errors are rate-limited per destination: not one per echo)
((u = $(kicmp6 "$RTR" Icmp6OutDestUnreachs) - u0, u > 0)) ||
	fail "from $GEN6: the router sent no unreachable"
((p0 = $(d_stat pass_unsupported "$p0"), p0 >= 10)) ||
	fail "from $GEN6: pass_unsupported +$p0, expected >= 10"
log "from $GEN6: $u unreachables from the router kernel, no echo at a sink; pass_unsupported +$p0"
# The longer prefix without a source route: XDP, to the plain route's sink.
expect_xdp 6 "$D5L" 3000 "$SNK"
wait_prefixes_match
verify_clean "with a source-specific route"
ip -n "$RTR" -6 route del 2001:db8:f5::/48 from "$GEN6B/128" via "$SNK2_6" metric 100
expect_xdp 6 "$D5" 3000 "$SNK"
wait_lookup "$D5" '.action == "forward" and .egress.name == "'"$R_SNK"'"'
wait_prefixes_match
verify_clean "source-specific route removed"

log "PASS: bridge port, disable_ipv6 and source-specific routes as the kernel"
