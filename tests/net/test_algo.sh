#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Lookup algorithms on a live router:
#  - a small table runs bsearch4/bsearch6;
#  - the operator forces dir24_8, dxr/trie6, poptrie6 and back, repeatedly,
#    while pings flow and routes churn: no echo to an unchanged route is
#    lost, every one is XDP-forwarded, and the kernel forwards none;
#  - in-place updates of dir24_8/trie6/poptrie6 reflect route add/del
#    (without a new generation), and so do dxr's rebuilds;
#  - automatic selection moves to dir24_8/trie6 once the table grows past
#    the crossing point, after the evaluation interval, and back once it
#    shrinks.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

algo_of() { rctl status -j | jq -r ".ipv$1.algorithm"; }
algo_is() { [ "$(algo_of "$1")" = "$2" ]; }

topo_create
# Selection re-evaluates 1 s after the first change (or after 100 changes).
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --eval-ms 1000
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

[ "$(algo_of 4)" = bsearch4 ] || fail "small IPv4 table runs $(algo_of 4), not bsearch4"
[ "$(algo_of 6)" = bsearch6 ] || fail "small IPv6 table runs $(algo_of 6), not bsearch6"

# Destinations behind the sink, for the in-place update checks.
ip -n "$SNK" addr add 198.19.1.1/32 dev lo
ip -n "$SNK" addr add 2001:db8:f1::1/128 dev lo nodad

# ---- forced switches under traffic and churn -----------------------------
snapshot
stream_start ping4 4 "$SNK4" -c 400 -i 0.01
stream_start ping6 6 "$SNK6" -c 400 -i 0.01
for round in 1 2 3; do
	# Each family goes through both of its large-table algorithms.
	a4=dir24_8 a6=trie6
	((round != 2)) || a4=dxr a6=poptrie6
	rctl algo ipv4 "$a4" >/dev/null || fail "forcing $a4 failed"
	rctl algo ipv6 "$a6" >/dev/null || fail "forcing $a6 failed"
	[ "$(algo_of 4)" = "$a4" ] || fail "round $round: ipv4 runs $(algo_of 4), not $a4"
	[ "$(algo_of 6)" = "$a6" ] || fail "round $round: ipv6 runs $(algo_of 6), not $a6"
	# Churn other prefixes while the instance is live (in-place updates).
	for i in $(seq 1 20); do
		ip -n "$RTR" route add "198.19.$((100 + i)).0/24" via "$SNK4"
		ip -n "$RTR" -6 route add "2001:db8:ff$i::/48" via "$SNK6"
	done
	rctl algo ipv4 bsearch4 >/dev/null || fail "forcing bsearch4 failed"
	rctl algo ipv6 bsearch6 >/dev/null || fail "forcing bsearch6 failed"
	for i in $(seq 1 20); do
		ip -n "$RTR" route del "198.19.$((100 + i)).0/24"
		ip -n "$RTR" -6 route del "2001:db8:ff$i::/48"
	done
done
for f in 4 6; do
	stream_answered "ping$f" 400 "IPv$f across algorithm switches"
done
deltas
forwarded_by xdp 800 "echoes across algorithm switches"
swaps=$(rctl status -j | jq '.ipv4.swaps')
((swaps >= 5)) || fail "only $swaps IPv4 swaps recorded"
log "no loss over $swaps IPv4 swaps with churn"

# ---- in-place updates of dir24_8 / trie6 -----------------------------------
rctl algo ipv4 dir24_8 >/dev/null
rctl algo ipv6 trie6 >/dev/null
gen4=$(rctl status -j | jq '.ipv4.generation')
ip -n "$RTR" route add 198.19.1.0/24 via "$SNK4"
ip -n "$RTR" -6 route add 2001:db8:f1::/48 via "$SNK6"
wait_xdp_ping 4 198.19.1.1 1000 >/dev/null || fail "route add not forwarded by dir24_8 within 1 s"
wait_xdp_ping 6 2001:db8:f1::1 1000 >/dev/null || fail "route add not forwarded by trie6 within 1 s"
[ "$(rctl status -j | jq '.ipv4.generation')" = "$gen4" ] ||
	fail "dir24_8 rebuilt for a route add instead of updating in place"
(($(rctl status -j | jq '.ipv4.updates') > 0)) || fail "no in-place update counted"
# A more specific route splits the /24 into a tbl8 group.
ip -n "$RTR" route add blackhole 198.19.1.0/25
sleep 0.3
d0=$(counter drop_blackhole)
nping "$GEN" -4 -q -c 3 -i 0.05 198.19.1.1 >/dev/null 2>&1 || true
(($(counter drop_blackhole) - d0 >= 3)) || fail "blackhole /25 inside the /24 not applied in place"
ip -n "$RTR" route del blackhole 198.19.1.0/25
wait_xdp_ping 4 198.19.1.1 1000 >/dev/null || fail "/25 removal not applied within 1 s"
ip -n "$RTR" route del 198.19.1.0/24
ip -n "$RTR" -6 route del 2001:db8:f1::/48
sleep 0.3
n0=$(counter pass_no_route)
nping "$GEN" -4 -q -c 2 -i 0.05 198.19.1.1 >/dev/null 2>&1 || true
(($(counter pass_no_route) - n0 >= 2)) || fail "deleted route still in dir24_8"

# ---- dxr: every change rebuilds the standby slot ---------------------------
rctl algo ipv4 dxr >/dev/null
gen4=$(rctl status -j | jq '.ipv4.generation')
ip -n "$RTR" route add 198.19.1.0/24 via "$SNK4"
wait_xdp_ping 4 198.19.1.1 1000 >/dev/null || fail "route add not forwarded by dxr within 1 s"
(($(rctl status -j | jq '.ipv4.generation') > gen4)) || fail "dxr did not publish a new slot"
# A /25 inside the /24: its chunk gets a run of ranges.
ip -n "$RTR" route add blackhole 198.19.1.0/25
sleep 0.3
d0=$(counter drop_blackhole)
nping "$GEN" -4 -q -c 3 -i 0.05 198.19.1.1 >/dev/null 2>&1 || true
(($(counter drop_blackhole) - d0 >= 3)) || fail "blackhole /25 inside the /24 not applied by dxr"
ip -n "$RTR" route del blackhole 198.19.1.0/25
wait_xdp_ping 4 198.19.1.1 1000 >/dev/null || fail "/25 removal not applied by dxr within 1 s"
ip -n "$RTR" route del 198.19.1.0/24
sleep 0.3
n0=$(counter pass_no_route)
nping "$GEN" -4 -q -c 2 -i 0.05 198.19.1.1 >/dev/null 2>&1 || true
(($(counter pass_no_route) - n0 >= 2)) || fail "deleted route still in dxr"

# ---- poptrie6: changes in place, no new generation ------------------------
rctl algo ipv6 poptrie6 >/dev/null
wait_until 5 algo_is 6 poptrie6 || fail "ipv6 not on poptrie6 after 5 s: $(algo_of 6)"
gen6=$(rctl status -j | jq '.ipv6.generation')
upd6=$(rctl status -j | jq '.ipv6.updates')
ip -n "$RTR" -6 route add 2001:db8:f1::/48 via "$SNK6"
wait_xdp_ping 6 2001:db8:f1::1 1000 >/dev/null || fail "route add not forwarded by poptrie6 within 1 s"
[ "$(rctl status -j | jq '.ipv6.generation')" = "$gen6" ] ||
	fail "poptrie6 rebuilt for a route add instead of updating in place"
(($(rctl status -j | jq '.ipv6.updates') > upd6)) || fail "no poptrie6 in-place update counted"
# counted_by6 COUNTER: an echo request to 2001:db8:f1::1 moves COUNTER.
counted_by6() {
	local c0
	c0=$(counter "$1")
	nping "$GEN" -6 -q -c 1 2001:db8:f1::1 >/dev/null 2>&1 || true
	(($(counter "$1") > c0))
}
# A /64 inside the /48: a path of nodes down to it.
ip -n "$RTR" -6 route add blackhole 2001:db8:f1::/64
wait_until 2 counted_by6 drop_blackhole || fail "blackhole /64 inside the /48 not applied by poptrie6 within 2 s"
ip -n "$RTR" -6 route del blackhole 2001:db8:f1::/64
wait_xdp_ping 6 2001:db8:f1::1 1000 >/dev/null || fail "/64 removal not applied by poptrie6 within 1 s"
ip -n "$RTR" -6 route del 2001:db8:f1::/48
wait_until 2 counted_by6 pass_no_route || fail "deleted route still in poptrie6 after 2 s"

# ---- automatic selection by scale ----------------------------------------
rctl algo ipv4 auto >/dev/null
rctl algo ipv6 auto >/dev/null
[ "$(algo_of 4)" = bsearch4 ] || fail "auto with a small table: $(algo_of 4)"
batch="$XFIB_TMP/routes.batch"
for b in $(seq 0 255); do
	for a in $(seq 0 15); do
		echo "route add 198.19.$b.$((a * 16))/28 via $SNK4"
	done
done >"$batch"
ip -n "$RTR" -batch "$batch"
# 4096 changes: evaluated at once (> 100 changes), well past the crossing.
wait_until 10 algo_is 4 dir24_8 ||
	fail "4096 prefixes still on $(algo_of 4) after 10 s: $(rctl algo ipv4)"
log "4096 IPv4 prefixes: switched to dir24_8 ($(rctl status -j | jq -c '.ipv4.preferences'))"
wait_xdp_ping 4 "$SNK4" 1000 >/dev/null || fail "not forwarding after the automatic switch"
sed 's/^route add/route del/; s/ via .*//' "$batch" >"$batch.del"
ip -n "$RTR" -batch "$batch.del"
wait_until 10 algo_is 4 bsearch4 ||
	fail "back to a small table but still $(algo_of 4) after 10 s"
log "PASS: forced and automatic switches, in-place updates, no loss"
