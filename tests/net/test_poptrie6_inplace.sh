#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# poptrie6 applies route changes in place: with poptrie6 serving IPv6
# (forced) over a table of a few thousand /56s,
#  - ip route add / replace / del of a /64 that carries traffic: the
#    ping is XDP-forwarded to the sink, then to the second sink, then no
#    longer forwarded (the router kernel answers "unreachable");
#  - batches of hundreds of /56s added and deleted;
# and all of it without a rebuild: the IPv6 generation and swap count do
# not move while the update count grows, xfibd never logs a fallback to a
# rebuild, and xfibctl verify finds no mismatch on poptrie6.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

LIMIT_MS=1000
topo_up sink2

P6="2001:db8:f$((16 * TOPO_ID + 5))::/64" D6="2001:db8:f$((16 * TOPO_ID + 5))::1"
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add "$D6/128" dev lo nodad
done

unreachable_now() {
	local out
	out=$(nping "$GEN" -6 -c 1 -W 0.3 "$D6" 2>&1) && return 1
	grep -qi unreachable <<<"$out"
}
field() { jq ".ipv6.$1" <<<"$2"; }

rctl algo ipv6 poptrie6 >/dev/null || fail "forcing poptrie6 failed"
wait_until 10 status_is '.ipv6.algorithm == "poptrie6"' ||
	fail "ipv6 not on poptrie6: $(rctl status -j | jq -c .ipv6)"
routes56 add 0 3000
wait_prefixes_match 30
st0=$(rctl status -j)
log "poptrie6 with $(field routes "$st0") prefixes: generation $(field generation "$st0"), swaps $(field swaps "$st0"), updates $(field updates "$st0")"

unreachable_now || fail "$D6 reachable before its route was added"
ip -n "$RTR" route add "$P6" via "$SNK6"
ms=$(wait_xdp_ping 6 "$D6" "$LIMIT_MS" "$SNK") ||
	fail "after route add, $D6 not XDP-forwarded to sink within $LIMIT_MS ms ($(stats_line))"
log "route add: XDP-forwarded to sink after $ms ms"

ip -n "$RTR" route replace "$P6" via "$SNK2_6"
ms=$(wait_xdp_ping 6 "$D6" "$LIMIT_MS" "$SNK2") ||
	fail "after route replace, $D6 not XDP-forwarded to sink2 within $LIMIT_MS ms ($(stats_line))"
log "route replace: XDP-forwarded to sink2 after $ms ms"

routes56 add 3000 3500
routes56 del 1000 2000
wait_prefixes_match 30
verify_clean "after batches of /56s"

ip -n "$RTR" route del "$P6"
wait_until 5 unreachable_now || fail "$D6 still reachable after its route was deleted"
log "route del: unreachable"

wait_prefixes_match 30
st=$(rctl status -j)
[ "$(field algorithm "$st")" = '"poptrie6"' ] || fail "ipv6 left poptrie6: $(field algorithm "$st")"
for k in generation swaps; do
	[ "$(field "$k" "$st")" = "$(field "$k" "$st0")" ] ||
		fail "ipv6 $k $(field "$k" "$st0") -> $(field "$k" "$st"): the changes went by a rebuild"
done
(($(field updates "$st") >= $(field updates "$st0") + 1503)) ||
	fail "ipv6 updates $(field updates "$st0") -> $(field updates "$st"), want 1503 more"
! grep -q "instead of updating in place" "$XFIBD_LOG" ||
	fail "xfibd fell back to a rebuild: $(grep "instead of updating" "$XFIBD_LOG" | head -n 3)"
out=$(rctl verify --random 50000 2>&1) || fail "verify on poptrie6: $(tail -n 20 <<<"$out")"
grep -q "ipv6: poptrie6.* 0 mismatched" <<<"$out" || fail "verify did not check ipv6 on poptrie6: $out"
log "PASS: poptrie6 route changes in place ($(field updates "$st0") -> $(field updates "$st") updates, generation $(field generation "$st"), memory $(field memory "$st"))"
