#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# wg-quick's rules ("lookup main suppress_prefixlength 0", then "not
# fwmark 0xca6c lookup 51820") over a main table too large for a copy of
# it in the rules' range pool, forwarded in XDP in both families. Main
# holds XFIB_WG_ROUTES4 (default 270,000) IPv4 and XFIB_WG_ROUTES6
# (67,000) IPv6 /32s and /128s, every other address, so a copy would
# take 2n + 1 ranges: more than half of xfib_tpool4's 2^20 and
# xfib_tpool6's 2^18, a block of the whole pool, which no rebuild and no
# table 51820 beside it leaves free (fib_tables.c); a rule that needs the
# copy (suppress_prefixlength 1, of a source no packet here has) shows
# it "not mirrored: too large". With suppress_prefixlength 0 on main's
# own instance (its default routes' answers have nexthops of their own):
#  - a destination only main's default route covers leaves by table
#    51820's port (sink2), a destination of a more specific route of
#    main by main's (sink), both XDP-forwarded, the router kernel's
#    forwarding counters flat; xfibctl rules and lookup say so;
#  - while echoes to the default-only destination stream, main's default
#    route is deleted, added again, made multipath, a nexthop object, a
#    group object, and a gateway again: the default-only address is on
#    the loopback of both sinks, and the sink's kernel gets none of its
#    echoes (no packet ever leaves by main's default port), sink2 every
#    one, all XDP-forwarded, the router kernel forwarding none.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N4=${XFIB_WG_ROUTES4:-270000}
N6=${XFIB_WG_ROUTES6:-67000}
((2 * N4 + 1 > (1 << 19) && 2 * N6 + 1 > (1 << 17))) ||
	skip "XFIB_WG_ROUTES4=$N4 XFIB_WG_ROUTES6=$N6: a copy of main would fit"

topo_create 0
topo_add_sink2
RIP="ip -n $RTR"
# Permanent neighbours: no change below waits for one.
neighbours_permanent
# A second gateway on the sink's port, for main's multipath default.
SNK4B="$NET4_S.3" SNK6B="$NET6_S::3"
ip -n "$SNK" addr add "$SNK4B/24" dev "$SNK_IF"
ip -n "$SNK" addr add "$SNK6B/64" dev "$SNK_IF" nodad
$RIP neigh replace "$SNK4B" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
$RIP -6 neigh replace "$SNK6B" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent

# Main's size, in the kernel before xfibd starts: its first dump reads
# it in one go. Every other address of 100.64.0.0/10 and 2001:db8:f0::/48.
t0=$(now_ms)
awk -v n="$N4" -v gw="$SNK4" 'BEGIN {
	for (i = 0; i < n; i++) {
		a = 2 * i
		printf "route add 100.%d.%d.%d/32 via %s\n", 64 + int(a / 65536),
			int(a / 256) % 256, a % 256, gw
	}
}' >"$XFIB_TMP/main4"
awk -v n="$N6" -v gw="$SNK6" 'BEGIN {
	for (i = 0; i < n; i++) {
		a = 2 * i
		printf "route add 2001:db8:f0::%x:%x/128 via %s\n", int(a / 65536),
			a % 65536, gw
	}
}' >"$XFIB_TMP/main6"
$RIP -batch "$XFIB_TMP/main4"
$RIP -6 -batch "$XFIB_TMP/main6"
log "main: $N4 IPv4 and $N6 IPv6 routes installed in $(($(now_ms) - t0)) ms"
XFIBD_SYNC_TIMEOUT=60 xfibd_start
attach_all
wait_until 60 status_is ".ipv4.routes >= $N4 and .ipv6.routes >= $N6" ||
	fail "main not mirrored: $(rctl status -j | jq -c '{ipv4: .ipv4.routes, ipv6: .ipv6.routes}')"
log "xfibd mirrors main: $(rctl status -j | jq -c '[.ipv4.algorithm, .ipv4.routes, .ipv6.algorithm, .ipv6.routes]')"

# ---- wg-quick -------------------------------------------------------------

# 198.18.99.1 (2001:db8:99::1): main's /24 (/48) to the sink. 198.18.97.1
# (2001:db8:97::1): only main's default route covers it. Both on both
# sinks: which one answers tells the path.
sinks_share 198.18.99 2001:db8:99
A4=$SHARED4 A6=$SHARED6
D4=198.18.97.1 D6=2001:db8:97::1
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add "$D4/32" dev lo
	ip -n "$ns" addr add "$D6/128" dev lo
done
wgquick_rules

# rule_xfib FAM PRIO: the .xfib object of the rule of priority PRIO.
rule_xfib() {
	rctl rules -j "-$1" | jq -c --argjson p "$2" "[.ipv$1.rules[] | select(.priority == \$p)][0].xfib"
}
for fam in 4 6; do
	wait_until 10 eval '[ "$(rule_xfib '$fam' 32764 | jq -c "[.class, .table.slot, .table.default_mark, .table.state]")" = "[\"exact\",0,true,\"xdp\"]" ]' ||
		fail "ipv$fam: suppress_prefixlength 0 is not walked on main's instance: $(rule_xfib $fam 32764)"
done
rctl rules -4 | grep -q "suppress_prefixlength 0.*\[exact; table main: the XDP instance" ||
	fail "rules text: $(rctl rules -4 | grep suppress)"
expect_xdp 4 "$D4" 5000 "$SNK2"
expect_xdp 6 "$D6" 5000 "$SNK2"
expect_xdp 4 "$A4" 5000 "$SNK"
expect_xdp 6 "$A6" 5000 "$SNK"
lookup_names_rule "$D4" "$GEN4" 32765
lookup_names_rule "$A4" "$GEN4" 32764
rctl lookup -j "$D4" --from "$GEN4" --iif "$R_GEN" | jqe '.rules.suppressed == true' >/dev/null ||
	fail "lookup $D4 does not say main's default was suppressed: $(rctl lookup -j "$D4" --from "$GEN4" --iif "$R_GEN" | jq -c .rules)"
rctl lookup "$D4" --from "$GEN4" --iif "$R_GEN" | grep -q "^rules: .*priority 32765.*suppressed (suppress_prefixlength)" ||
	fail "lookup $D4: $(rctl lookup "$D4" --from "$GEN4" --iif "$R_GEN" | grep rules)"
log "wg-quick's rules over a full main forwarded in XDP"

# ---- main's default route changed under traffic ------------------------------

# dflt_is FAM KIND [GATEWAY]: the default route nexthops of family FAM
# (xfibctl nexthops: default_route) are one, of KIND (and GATEWAY), or
# none for KIND none.
dflt_is() {
	local want
	if [ "$2" = none ]; then
		want='length == 0'
	elif [ "$2" = group ]; then
		want='length == 1 and .[0].kind == "group"'
	else
		want="length == 1 and .[0].kind == \"$2\" and .[0].gateway == \"$3\""
	fi
	# A group has no family: its members do.
	rctl nexthops -j | jqe --arg f "ipv$1" '. as $all | [.[] | select(.default_route and
		(.family == $f or (.kind == "group" and any(.group.members[];
			.nexthop as $m | any($all[]; .index == $m and .family == $f)))))] |
		'"$want" >/dev/null
}
# change WHAT FAM KIND [GATEWAY] -- COMMAND...: runs COMMAND, waits until
# xfib's default route nexthops of FAM say so, lets the echoes run a
# little in that state.
change() {
	local what=$1 fam=$2 kind=$3 gw=""
	shift 3
	if [ "$1" != -- ]; then
		gw=$1
		shift
	fi
	shift
	"$@" || fail "$what: $*"
	wait_until 10 dflt_is "$fam" "$kind" "$gw" ||
		fail "$what: xfib's default route nexthops: $(rctl nexthops -j | jq -c '[.[] | select(.default_route)]')"
	sleep 0.3
}

# replies FAM: echo replies gen's kernel got.
replies() {
	if [ "$1" = 4 ]; then kicmp "$GEN" InEchoReps; else kicmp6 "$GEN" Icmp6InEchoReplies; fi
}
all_replied() { (($(replies "$1") - $2 == $3)); }
rep4=$(replies 4)
rep6=$(replies 6)
e_snk0=$(icmp_in_echos "$SNK")
e_snk2_0=$(icmp_in_echos "$SNK2")
snapshot
stream_start wg4 4 "$D4" -i 0.01 -w 120
stream_start wg6 6 "$D6" -i 0.01 -w 120
sleep 0.5
for fam in 4 6; do
	if [ $fam = 4 ]; then gw=$SNK4 gwb=$SNK4B; else gw=$SNK6 gwb=$SNK6B; fi
	change "ipv$fam default deleted" $fam none -- $RIP -$fam route del default
	change "ipv$fam default added" $fam gateway "$gw" -- $RIP -$fam route add default via "$gw"
	change "ipv$fam default multipath" $fam group -- \
		$RIP -$fam route replace default nexthop via "$gw" nexthop via "$gwb"
	$RIP nexthop add id ${fam}1 via "$gw" dev "$R_SNK"
	$RIP nexthop add id ${fam}2 via "$gwb" dev "$R_SNK"
	$RIP nexthop add id ${fam}3 group ${fam}1/${fam}2
	change "ipv$fam default by a nexthop object" $fam gateway "$gw" -- \
		$RIP -$fam route replace default nhid ${fam}1
	change "ipv$fam default's object changed" $fam gateway "$gwb" -- \
		$RIP nexthop replace id ${fam}1 via "$gwb" dev "$R_SNK"
	change "ipv$fam default by a group object" $fam group -- \
		$RIP -$fam route replace default nhid ${fam}3
	change "ipv$fam default by a gateway again" $fam gateway "$gw" -- \
		$RIP -$fam route replace default via "$gw"
	for id in 3 2 1; do $RIP nexthop del id ${fam}$id; done
done
stream_finish wg4
tx4=$PING_TX
stream_finish wg6
tx6=$PING_TX
# Each echo answered (the last ones' replies may be on their way).
wait_until 5 all_replied 4 "$rep4" "$tx4" || true
wait_until 5 all_replied 6 "$rep6" "$tx6" || true
rx4=$(($(replies 4) - rep4))
rx6=$(($(replies 6) - rep6))
deltas
e_snk=$(($(icmp_in_echos "$SNK") - e_snk0))
e_snk2=$(($(icmp_in_echos "$SNK2") - e_snk2_0))
log "sink got $e_snk echoes, sink2 $e_snk2; ipv4 $rx4/$tx4, ipv6 $rx6/$tx6 answered"
((e_snk == 0)) || fail "$e_snk echoes to $D4 or $D6 left by main's default route (the sink's port)"
((tx4 > 200 && tx6 > 200)) || fail "too few echoes sent to tell: $tx4, $tx6"
((rx4 == tx4 && rx6 == tx6)) || fail "echoes lost: ipv4 $rx4/$tx4, ipv6 $rx6/$tx6"
((e_snk2 >= tx4 + tx6)) || fail "sink2 got $e_snk2 echoes of $((tx4 + tx6))"
((D_K4 == 0 && D_K6 == 0)) || fail "the router kernel forwarded $D_K4 (ipv4), $D_K6 (ipv6) packets"
((D_X4 >= 2 * tx4 && D_X6 >= 2 * tx6)) || fail "xfib forwarded $D_X4 (ipv4), $D_X6 (ipv6) for $tx4, $tx6 echoes"
expect_xdp 4 "$A4" 5000 "$SNK"
expect_xdp 6 "$A6" 5000 "$SNK"
log "main's default deleted, re-added, multipath, by objects: suppressed throughout"

# ---- a copy of this main does not fit --------------------------------------------

$RIP rule add from 192.0.2.0/24 table main suppress_prefixlength 1 pref 32000
$RIP -6 rule add from 2001:db8:ffff::/48 table main suppress_prefixlength 1 pref 32000
for fam in 4 6; do
	wait_until 30 eval '[ "$(rule_xfib '$fam' 32000 | jq -c "[.table.main_copy, .table.state]")" = "[true,\"kernel\"]" ]' ||
		fail "ipv$fam: the copy of main is not too large: $(rule_xfib $fam 32000)"
done
rctl rules -4 | grep -q "table main (copy): not mirrored: too large" ||
	fail "rules text of the copy: $(rctl rules -4 | grep 32000)"
expect_xdp 4 "$D4" 5000 "$SNK2"
expect_xdp 6 "$D6" 5000 "$SNK2"
log "PASS: a copy of main is too large; suppress_prefixlength 0 forwarded in XDP by main's own instance"
