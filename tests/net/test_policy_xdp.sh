#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Policy routing forwarded in XDP: the rule sets routers get from the
# software their operators install, with traffic that must leave by the
# port the kernel's rules pick, forwarded by xfib (its counter grows, the
# router kernel's IpForwDatagrams does not), and xfibctl lookup naming the
# rule and agreeing with the kernel:
#
#  - multi-homing: "from <gen's subnet> lookup 100", table 100 sending a
#    prefix main sends to the sink to sink2 instead; five more uplinks'
#    rules before it, read as one run on the source; a source outside the
#    subnets still follows main; the rule deleted, main again;
#  - Tailscale: fwmark rules (no netfilter rule marks packets here, so
#    they match nothing) and "lookup 52" before main;
#  - wg-quick: "lookup main suppress_prefixlength 0" then "not fwmark
#    0xca6c lookup 51820": main's specific routes stay, its default route
#    gives way to table 51820's;
#  - xfibctl verify clean under the Tailscale and wg-quick sets (its sweep
#    walks the rules, as the kernel's answers do);
#  - a rule xfib leaves to the kernel (fwmark, once a netfilter rule can
#    set marks) sends only the packets that reach it to the kernel;
#  - a second uplink's large table: "from <gen's subnet> lookup 200",
#    table 200 just past the size at which a table leaves the ranges for
#    an instance of its own (dir24_8, trie6; include/xfib/tables.h),
#    forwarded in XDP through it, a route of it changed under traffic
#    followed without a lost echo, xfibctl verify clean, no instance left
#    behind by a rebuild or a new xfibd; shrunk, the table goes back to
#    the ranges and its instances go.
# Both families. The address 198.18.99.1 (2001:db8:99::1) is on the
# loopback of both sinks: which one answers tells the rules' choice.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v bpftool >/dev/null || skip "missing tool: bpftool"

topo_up sink2
RIP="ip -n $RTR"
sinks_share 198.18.99 2001:db8:99
A4=$SHARED4 A6=$SHARED6
# A second source on gen, outside gen's subnet, routed back by main.
ip -n "$GEN" addr add 198.18.98.2/32 dev lo
ip -n "$GEN" -6 addr add 2001:db8:98::2/128 dev lo
$RIP route add 198.18.98.0/24 via "$GEN4"
$RIP -6 route add 2001:db8:98::/48 via "$GEN6"

# ---- multi-homing -------------------------------------------------------
expect_xdp 4 $A4 5000 "$SNK"
expect_xdp 6 $A6 5000 "$SNK"
$RIP route add 198.18.99.0/24 via "$SNK2_4" table 100
$RIP -6 route add 2001:db8:99::/48 via "$SNK2_6" table 100
$RIP rule add from "$NET4_G.0/24" lookup 100 pref 100
$RIP -6 rule add from "$NET6_G::/64" lookup 100 pref 100
expect_xdp 4 $A4 5000 "$SNK2"
expect_xdp 6 $A6 5000 "$SNK2"
lookup_names_rule $A4 "$GEN4" 100
lookup_names_rule $A6 "$GEN6" 100
# More uplinks, whose subnets the generator is not in: their rules, 100's
# and main's (every source) are one run on the source (xfibctl rules
# says so), which the walk
# bisects instead of reading each rule; the packets go on at 100's, or,
# from outside every subnet, past the run to main.
for i in 1 2 3 4 5; do
	$RIP route add 198.18.99.0/24 via "$SNK4" table $((100 + i))
	$RIP -6 route add 2001:db8:99::/48 via "$SNK6" table $((100 + i))
	$RIP rule add from "198.18.$((90 + i)).0/24" lookup $((100 + i)) pref $((90 + i))
	$RIP -6 rule add from "2001:db8:$((90 + i))::/48" lookup $((100 + i)) pref $((90 + i))
done
one_run() {
	rctl rules -j | jq -e '[.ipv4, .ipv6][] | [.rules[] | select(.xfib.run)] |
		length == 1 and .[0].priority == 91 and .[0].xfib.run.rules >= 7' >/dev/null
}
wait_until 5 one_run || fail "the six from-rules and main are not one run: $(rctl rules)"
expect_xdp 4 $A4 5000 "$SNK2"
expect_xdp 6 $A6 5000 "$SNK2"
lookup_names_rule $A4 "$GEN4" 100
# From outside the rules' subnets: main.
expect_xdp 4 $A4 5000 "$SNK" -I 198.18.98.2
expect_xdp 6 $A6 5000 "$SNK" -I 2001:db8:98::2
for i in 1 2 3 4 5; do
	$RIP rule del pref $((90 + i))
	$RIP -6 rule del pref $((90 + i))
done
# A route added to table 100 under the rule is followed.
$RIP route add "$SNK4/32" via "$SNK2_4" table 100
ip -n "$SNK2" addr add "$SNK4/32" dev lo
expect_xdp 4 "$SNK4" 5000 "$SNK2"
ip -n "$SNK2" addr del "$SNK4/32" dev lo
$RIP route del "$SNK4/32" via "$SNK2_4" table 100
expect_xdp 4 "$SNK4" 5000 "$SNK"
$RIP rule del pref 100
$RIP -6 rule del pref 100
expect_xdp 4 $A4 5000 "$SNK"
expect_xdp 6 $A6 5000 "$SNK"
log "multi-homing: from-rules forwarded in XDP"

# ---- a large table ---------------------------------------------------------
# 1500 prefixes: past where a table's choice leaves the ranges (1260
# with the 5% hysteresis, fib_select.c), with some room. Host routes
# in a /17 of the test range no traffic here goes to, by the sink, and the
# shared prefix by sink2. At 830 or fewer, the ranges again.
BIG=1500
big_routes() { # VERB FAM FIRST COUNT
	python3 - "$@" "$SNK4" "$SNK6" <<-'EOF'
		import sys
		verb, fam, first, count, gw4, gw6 = sys.argv[1:7]
		for i in range(int(first), int(first) + int(count)):
		    if fam == "4":
		        print("route %s 198.19.%d.%d/32 via %s table 200" % (verb, 128 + i // 256, i % 256, gw4))
		    else:
		        print("route %s 2001:db8:200:%x::/64 via %s table 200" % (verb, i, gw6))
	EOF
}
table200() { # FAM: rule 100's table, as rules -j says
	rctl rules -j "-$1" | jq -c "[.ipv$1.rules[] | select(.priority == 100)][0].xfib.table"
}
table200_is() { # FAM ALGO STATE
	[ "$(table200 "$1" | jq -r '.algo + " " + .state')" = "$2 $3" ]
}
# tbl24s_are N: N tbl24 maps linked in each family's outer map (main
# runs bsearch here: table 200's instance alone, none left behind by a
# rebuild), and xfibd holds as many per family.
tbl24s_are() {
	local m n
	for m in xfib_dir24_tbl24 xfib_trie6_tbl24; do
		n=$(bpftool -j map dump pinned "$PIN/$m" | jq length)
		[ "$n" = "$1" ] || return 1
	done
	[ "$(xfibd_tbl24_maps "$XFIBD_PID")" = $((2 * $1)) ]
}
for fam in 4 6; do
	big_routes add $fam 0 $BIG | ip -n "$RTR" -$fam -batch -
done
$RIP route add 198.18.99.0/24 via "$SNK2_4" table 200
$RIP -6 route add 2001:db8:99::/48 via "$SNK2_6" table 200
$RIP rule add from "$NET4_G.0/24" lookup 200 pref 100
$RIP -6 rule add from "$NET6_G::/64" lookup 200 pref 100
wait_until 20 table200_is 4 dir24_8 xdp || fail "ipv4 table 200: $(table200 4)"
wait_until 20 table200_is 6 trie6 xdp || fail "ipv6 table 200: $(table200 6)"
rctl rules -4 | grep -q "table 200: $((BIG + 1)) routes in XDP by its own dir24_8 instance" ||
	fail "rules text of table 200: $(rctl rules -4 | grep 'lookup 200')"
rctl status -j | jq -e '.ipv6.tables[] | select(.table == 200 and .algo == "trie6" and .mem_bytes > 0)' >/dev/null ||
	fail "status of table 200: $(rctl status -j | jq -c .ipv6.tables)"
expect_xdp 4 $A4 5000 "$SNK2"
expect_xdp 6 $A6 5000 "$SNK2"
lookup_names_rule $A4 "$GEN4" 100
lookup_names_rule $A6 "$GEN6" 100
verify_clean "a large table"
# The shared prefix moved to the sink under traffic: every echo answered
# (both sinks answer), and the next ones XDP-forwarded to the sink.
stream_start big4 4 $A4 -c 30 -i 0.05
stream_start big6 6 $A6 -c 30 -i 0.05
sleep 0.5
$RIP route replace 198.18.99.0/24 via "$SNK4" table 200
$RIP -6 route replace 2001:db8:99::/48 via "$SNK6" table 200
stream_answered big4 30 "ipv4 across table 200's change"
stream_answered big6 30 "ipv6 across table 200's change"
expect_xdp 4 $A4 5000 "$SNK"
expect_xdp 6 $A6 5000 "$SNK"
wait_until 10 tbl24s_are 1 || fail "tbl24 maps after table 200's rebuilds: $(bpftool -j map dump pinned "$PIN/xfib_dir24_tbl24" | jq -c 'map(.value)'), xfibd holds $(xfibd_tbl24_maps "$XFIBD_PID")"
# A new xfibd: the instances the old one published are cleared once the
# descriptors are the kernel's, and built again.
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" || true
xfibd_start
wait_until 20 table200_is 4 dir24_8 xdp || fail "ipv4 table 200 after a restart: $(table200 4)"
wait_until 20 table200_is 6 trie6 xdp || fail "ipv6 table 200 after a restart: $(table200 6)"
wait_until 10 tbl24s_are 1 || fail "tbl24 maps after a restart: $(bpftool -j map dump pinned "$PIN/xfib_dir24_tbl24" | jq -c 'map(.value)'), xfibd holds $(xfibd_tbl24_maps "$XFIBD_PID")"
expect_xdp 4 $A4 5000 "$SNK"
expect_xdp 6 $A6 5000 "$SNK"
# Shrunk to 700 prefixes: the ranges again, still forwarded.
for fam in 4 6; do
	big_routes del $fam 700 $((BIG - 700)) | ip -n "$RTR" -$fam -batch -
done
wait_until 20 table200_is 4 bsearch4 xdp || fail "ipv4 table 200 shrunk: $(table200 4)"
wait_until 20 table200_is 6 bsearch6 xdp || fail "ipv6 table 200 shrunk: $(table200 6)"
wait_until 10 tbl24s_are 0 || fail "the instances stay after table 200 shrank: $(bpftool -j map dump pinned "$PIN/xfib_dir24_tbl24" | jq -c 'map(.value)')"
expect_xdp 4 $A4 5000 "$SNK"
expect_xdp 6 $A6 5000 "$SNK"
$RIP rule del pref 100
$RIP -6 rule del pref 100
$RIP route flush table 200
$RIP -6 route flush table 200
log "a large table: its own instance, forwarded in XDP, changed under traffic, back to ranges"

# ---- Tailscale -----------------------------------------------------------
for fam in 4 6; do
	$RIP -$fam rule add pref 5210 fwmark 0x80000/0xff0000 table main
	$RIP -$fam rule add pref 5230 fwmark 0x80000/0xff0000 table default
	$RIP -$fam rule add pref 5250 fwmark 0x80000/0xff0000 type unreachable
	$RIP -$fam rule add pref 5270 table 52
done
$RIP route add 198.18.99.0/24 via "$SNK2_4" table 52
$RIP -6 route add 2001:db8:99::/48 via "$SNK2_6" table 52
expect_xdp 4 $A4 5000 "$SNK2"
expect_xdp 6 $A6 5000 "$SNK2"
expect_xdp 4 "$SNK4" 5000 "$SNK"
expect_xdp 6 "$SNK6" 5000 "$SNK"
lookup_names_rule $A4 "$GEN4" 5270
lookup_names_rule "$SNK4" "$GEN4" 32766
# verify walks the rules too: main alone would send table 52's prefix to
# the sink, where the kernel's rules send it to sink2.
verify_clean "Tailscale's rules"
for fam in 4 6; do
	for p in 5210 5230 5250 5270; do $RIP -$fam rule del pref $p; done
done
log "Tailscale's rules forwarded in XDP"

# ---- wg-quick ------------------------------------------------------------
# Main's default route to the sink; table 51820's to sink2.
wgquick_rules
ip -n "$SNK2" addr add 198.18.97.1/32 dev lo
ip -n "$SNK2" addr add 2001:db8:97::1/128 dev lo
# By main's default: given way to the tunnel's.
expect_xdp 4 198.18.97.1 5000 "$SNK2"
expect_xdp 6 2001:db8:97::1 5000 "$SNK2"
lookup_names_rule 198.18.97.1 "$GEN4" 32765
# By a specific route of main: main.
expect_xdp 4 $A4 5000 "$SNK"
expect_xdp 6 $A6 5000 "$SNK"
lookup_names_rule $A4 "$GEN4" 32764
verify_clean "wg-quick's rules"
log "wg-quick's rules forwarded in XDP"

# ---- a rule only the kernel can evaluate ---------------------------------
# Once netfilter can mark packets before routing, the fwmark rule is the
# kernel's: packets that reach it go to the kernel (pass_rule), which
# still follows the rules. (This ruleset's chain is one the conntrack gate
# cannot stand in for either: other packets go to the kernel as
# pass_netfilter, which is not what is checked here.)
ip netns exec "$RTR" nft -f - <<'EOF'
table inet xfibmark {
	chain pre { type filter hook prerouting priority mangle; meta l4proto udp meta mark set 0x1; }
}
EOF
t0=$(now_ms)
until [ "$(rctl rules -j | jq -r '[.ipv4.rules[] | select(.priority == 32765)][0].xfib.class')" = kernel ]; do
	(($(now_ms) - t0 < 10000)) || fail "the fwmark rule is not the kernel's with a marking ruleset"
	sleep 0.1
done
snapshot
p0=$(counter pass_rule)
e0=$(icmp_in_echos "$SNK2")
ping_all "$GEN" 4 198.18.97.1 5
deltas
p1=$(counter pass_rule)
e1=$(icmp_in_echos "$SNK2")
((D_X4 == 0)) || fail "xfib forwarded $D_X4 packets past a rule only the kernel can evaluate"
((p1 - p0 >= 5)) || fail "pass_rule +$((p1 - p0)), not the 5 echoes ($(stats_line))"
((D_K4 >= 5)) || fail "the kernel did not forward (IpForwDatagrams +$D_K4)"
((e1 - e0 >= 5)) || fail "the kernel's rules were not followed: sink2 got $((e1 - e0)) echoes"
ip netns exec "$RTR" nft delete table inet xfibmark
expect_xdp 4 198.18.97.1 5000 "$SNK2"
log "a rule the kernel keeps sends its packets to the kernel"
