#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Route changes made with iproute2 reach the dataplane within a second:
#   ip route add     -> traffic to the new prefix is XDP-forwarded
#   ip route replace -> it goes to the new nexthop (a second sink)
#   ip route del     -> it is no longer forwarded: the router kernel
#                       answers "unreachable" and pass_no_route moves.
# Both sinks own the destination address, so pings succeed on either path;
# each sink's ICMP echo counter tells which path a packet took.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

LIMIT_MS=1000
topo_up sink2

P4="198.19.$((16 * TOPO_ID + 5)).0/24" D4="198.19.$((16 * TOPO_ID + 5)).1"
P6="2001:db8:f$((16 * TOPO_ID + 5))::/64" D6="2001:db8:f$((16 * TOPO_ID + 5))::1"
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add "$D4/32" dev lo
	ip -n "$ns" addr add "$D6/128" dev lo nodad
done

# unreachable_now FAMILY DST: one ping is refused by the router kernel.
unreachable_now() {
	local out
	out=$(nping "$GEN" "-$1" -c 1 -W 0.3 "$2" 2>&1) && return 1
	grep -qi unreachable <<<"$out"
}

for fam in 4 6; do
	if [ "$fam" = 4 ]; then
		p=$P4 d=$D4 via1=$SNK4 via2=$SNK2_4
	else
		p=$P6 d=$D6 via1=$SNK6 via2=$SNK2_6
	fi
	unreachable_now "$fam" "$d" || fail "$d reachable before its route was added"

	log "ip route add $p via $via1"
	ip -n "$RTR" route add "$p" via "$via1"
	ms=$(wait_xdp_ping "$fam" "$d" "$LIMIT_MS" "$SNK") ||
		fail "after route add, $d not XDP-forwarded to sink within $LIMIT_MS ms ($(stats_line))"
	log "route add: XDP-forwarded to sink after $ms ms"
	rctl status -j | jqe --arg f "ipv$fam" '.[$f].routes > 0' >/dev/null

	log "ip route replace $p via $via2"
	ip -n "$RTR" route replace "$p" via "$via2"
	ms=$(wait_xdp_ping "$fam" "$d" "$LIMIT_MS" "$SNK2") ||
		fail "after route replace, $d not XDP-forwarded to sink2 within $LIMIT_MS ms ($(stats_line))"
	log "route replace: XDP-forwarded to sink2 after $ms ms"
	# And only there: a burst leaves the first sink untouched.
	e1=$(icmp_in_echos "$SNK")
	e2=$(icmp_in_echos "$SNK2")
	snapshot
	ping_all "$GEN" "$fam" "$d" 20
	deltas
	[ $(($(icmp_in_echos "$SNK2") - e2)) -ge 20 ] || fail "burst to $d did not reach sink2"
	[ "$(icmp_in_echos "$SNK")" -eq "$e1" ] || fail "after replace, echoes to $d still reach sink"
	(( D_X4 + D_X6 >= 40 && D_K4 + D_K6 == 0 )) ||
		fail "burst to $d after replace not XDP-forwarded"

	log "ip route del $p"
	nr0=$(counter pass_no_route)
	ip -n "$RTR" route del "$p"
	t0=$(now_ms)
	until unreachable_now "$fam" "$d" && [ "$(counter pass_no_route)" -gt "$nr0" ]; do
		[ $(($(now_ms) - t0)) -lt "$LIMIT_MS" ] ||
			fail "after route del, $d still forwarded after $LIMIT_MS ms ($(stats_line))"
	done
	log "route del: unreachable, pass_no_route moved after $(($(now_ms) - t0)) ms"
	# It stays that way: nothing answered, nothing forwarded by xfib or
	# the router kernel. (The kernel rate-limits its ICMP errors, so not
	# every one of these gets an "unreachable".)
	snapshot
	e1=$(icmp_in_echos "$SNK")
	e2=$(icmp_in_echos "$SNK2")
	out=$(nping "$GEN" "-$fam" -c 5 -i 0.05 -W 0.3 "$d" 2>&1) &&
		fail "$d answered after route del: $out"
	deltas
	(( D_X4 + D_X6 + D_K4 + D_K6 == 0 )) || fail "traffic to $d forwarded after route del"
	(( $(icmp_in_echos "$SNK") == e1 && $(icmp_in_echos "$SNK2") == e2 )) ||
		fail "echoes to $d reached a sink after route del"
done

log "PASS: route add/replace/del reflected within $LIMIT_MS ms"
