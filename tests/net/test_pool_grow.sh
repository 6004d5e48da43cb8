#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# dir24_8 and trie6 group pools that run out while routes are added:
#  - a small table gets the smallest pool, one chunk of 1024 groups
#    (include/xfib/tbl8_pool.h);
#  - 1100 prefixes that each need a group of their own exhaust it: the
#    live pool grows in place, new chunks in its slot's next entries, with
#    no rebuild (generation and swaps unchanged, the log says "grown in
#    place" and never "rebuilding"), while pings to an unchanged route
#    flow, every echo answered and XDP-forwarded;
#  - the outer maps hold the live pools' chunks, all in the live slot, and
#    no others;
#  - a route added after the growth takes a group past the first chunk:
#    packets to it are forwarded by XDP over the new chunk, and the tables
#    verify clean against the kernel;
#  - with another algorithm published, a released pool leaves no chunk in
#    the outer maps (the grown pool, and a one-chunk pool released where
#    the grown one's placeholders remain), and a rebuild holds its own.
# The growth prefixes (10.0.0.0/8, fd00::/8) carry no traffic.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=1100
CHUNK=1024

cap_of() { rctl status -j | jq ".ipv$1.capacity"; }

# pool_entries MAP: "KEY ID" for each entry of a pool's outer map (bpftool
# prints raw keys and values as little-endian hex bytes).
pool_entries() {
	bpftool -j map dump pinned "$PIN/$1" | jq -r '
		def le: if type == "array" then to_entries | map((.value |
			ltrimstr("0x") | explode | reduce .[] as $c (0;
			. * 16 + (if $c >= 97 then $c - 87 else $c - 48 end))) *
			pow(256; .key)) | add else . end;
		.[] | "\(.key | le) \(.inner_map_id // (.value | le))"'
}

# pool_live MAP GROUPS SLOT: the chunk maps in MAP are those of one pool
# of GROUPS groups, all in slot SLOT, first to last; other entries are
# empty or hold the placeholder of a retired pool.
pool_live() {
	local key id name chunks=0 spares=0 slots=""
	while read -r key id; do
		name=$(bpftool -j map show id "$id" | jq -r .name)
		case $name in
		xfib_tbl8) chunks=$((chunks + 1)) slots+="$((key / CHUNK)) " ;;
		xfib_tbl8_none) spares=$((spares + 1)) ;;
		*) fail "$1[$key] holds map $id named $name" ;;
		esac
	done < <(pool_entries "$1")
	((chunks == $2 / CHUNK)) || fail "$1 holds $chunks chunks, the live pool has $(($2 / CHUNK))"
	[ "$(tr ' ' '\n' <<<"$slots" | sort -u | grep .)" = "$3" ] ||
		fail "$1: chunks in slots $slots, the live slot is $3"
	log "$1: $chunks chunks in slot $3, $spares entries hold the placeholder"
}
# active_slot 4|6: the slot of the family's published instance (byte 1 of
# its xfib_active word).
active_slot() {
	bpftool -j map lookup pinned "$PIN/xfib_active" key $(($1 == 4 ? 0 : 1)) 0 0 0 |
		jq -r '.value[1]' | xargs printf '%d\n'
}
grown() { (($(cap_of 4) > CHUNK && $(cap_of 6) > CHUNK)); }

topo_create
xfibd_start
attach_all
resolve_neighbours
rctl algo ipv4 dir24_8 >/dev/null || fail "forcing dir24_8 failed"
rctl algo ipv6 trie6 >/dev/null || fail "forcing trie6 failed"
[ "$(cap_of 4)" = "$CHUNK" ] || fail "small dir24_8 pool holds $(cap_of 4) groups, not $CHUNK"
[ "$(cap_of 6)" = "$CHUNK" ] || fail "small trie6 pool holds $(cap_of 6) groups, not $CHUNK"
st0=$(rctl status -j)

# Each /25 splits its own /24 (one dir24_8 group); each /56 splits its own
# /48 (one trie6 group at that level, plus a few shared above it).
batch="$XFIB_TMP/grow.batch"
for i in $(seq 0 $((N - 1))); do
	echo "route add 10.$((i / 256)).$((i % 256)).0/25 via $SNK4"
	printf 'route add fd00:0:%x::/56 via %s\n' "$i" "$SNK6"
done >"$batch"

snapshot
stream_start ping4 4 "$SNK4" -c 300 -i 0.01
stream_start ping6 6 "$SNK6" -c 300 -i 0.01
ip -n "$RTR" -batch "$batch"
wait_until 20 grown ||
	fail "pools did not grow: capacity $(cap_of 4)/$(cap_of 6), $(rctl status -j | jq -c '{v4: .ipv4 | {algorithm, routes, ranges, capacity}, v6: .ipv6 | {algorithm, routes, ranges, capacity}}')"
stream_answered ping4 300 "IPv4 across the pool growth"
stream_answered ping6 300 "IPv6 across the pool growth"
deltas
forwarded_by xdp 600 "echoes across the pool growth"
st=$(rctl status -j)
[ "$(jq -r '.ipv4.algorithm' <<<"$st")" = dir24_8 ] || fail "ipv4 left dir24_8"
[ "$(jq -r '.ipv6.algorithm' <<<"$st")" = trie6 ] || fail "ipv6 left trie6"
for f in ipv4 ipv6; do
	for k in generation swaps; do
		[ "$(jq ".$f.$k" <<<"$st")" = "$(jq ".$f.$k" <<<"$st0")" ] ||
			fail "$f $k $(jq ".$f.$k" <<<"$st0") -> $(jq ".$f.$k" <<<"$st"): the pool grew by a rebuild"
	done
	(($(jq ".$f.memory" <<<"$st") > $(jq ".$f.memory" <<<"$st0"))) ||
		fail "$f memory did not grow with the pool"
done
for a in dir24_8 trie6; do
	grep -q "$a group pool full .*grown in place" "$XFIBD_LOG" ||
		fail "xfibd logged no in-place growth of the $a pool"
done
! grep -E "group pool full .*(rebuilding|failed)" "$XFIBD_LOG" ||
	fail "a pool was rebuilt or failed to grow"
# Groups in use past the first chunk: the next one handed out is there.
(($(jq '.ipv4.ranges' <<<"$st") >= N)) || fail "dir24_8 uses $(jq '.ipv4.ranges' <<<"$st") groups, want >= $N"
(($(jq '.ipv6.ranges' <<<"$st") >= N)) || fail "trie6 uses $(jq '.ipv6.ranges' <<<"$st") groups, want >= $N"
log "grown: $(jq -c '{v4: .ipv4 | {ranges, capacity, memory}, v6: .ipv6 | {ranges, capacity, memory}}' <<<"$st")"
pool_live xfib_dir24_tbl8 "$(jq '.ipv4.capacity' <<<"$st")" "$(active_slot 4)"
pool_live xfib_trie6_tbl8 "$(jq '.ipv6.capacity' <<<"$st")" "$(active_slot 6)"

# New routes after the growth: their groups come from past the first chunk.
ip -n "$SNK" addr add 198.19.200.1/32 dev lo
ip -n "$SNK" addr add 2001:db8:fe00::1/128 dev lo nodad
ip -n "$RTR" route add 198.19.200.0/25 via "$SNK4"
ip -n "$RTR" -6 route add 2001:db8:fe00::/56 via "$SNK6"
wait_xdp_ping 4 198.19.200.1 2000 >/dev/null ||
	fail "198.19.200.0/25 (a group in the second chunk) not forwarded by XDP"
wait_xdp_ping 6 2001:db8:fe00::1 2000 >/dev/null ||
	fail "2001:db8:fe00::/56 (a group in the second chunk) not forwarded by XDP"
# The /24 and /48 around them have no route: their other halves must miss.
n0=$(counter pass_no_route)
nping "$GEN" -4 -q -c 2 -i 0.05 198.19.200.129 >/dev/null 2>&1 || true
(($(counter pass_no_route) - n0 >= 2)) || fail "198.19.200.129 found a route in its group"
verify_clean "after the growth"

# Released pools leave nothing behind: with another algorithm published,
# the outer maps hold no chunk (each released entry holds the placeholder),
# whether the released pool was the grown one or, after the growth routes
# are gone, a one-chunk pool whose slot still has a placeholder past it.
away() {
	rctl algo ipv4 bsearch4 >/dev/null || fail "forcing bsearch4 failed"
	rctl algo ipv6 bsearch6 >/dev/null || fail "forcing bsearch6 failed"
	pool_live xfib_dir24_tbl8 0 ""
	pool_live xfib_trie6_tbl8 0 ""
}
# back GROUPS: dir24_8 and trie6 rebuilt, with pools of GROUPS groups.
back() {
	local st
	rctl algo ipv4 dir24_8 >/dev/null || fail "forcing dir24_8 again failed"
	rctl algo ipv6 trie6 >/dev/null || fail "forcing trie6 again failed"
	st=$(rctl status -j)
	[ "$(jq '.ipv4.capacity' <<<"$st")" = "$1" ] && [ "$(jq '.ipv6.capacity' <<<"$st")" = "$1" ] ||
		fail "rebuilt pools hold $(jq -c '[.ipv4.capacity, .ipv6.capacity]' <<<"$st") groups, want $1"
	pool_live xfib_dir24_tbl8 "$1" "$(active_slot 4)"
	pool_live xfib_trie6_tbl8 "$1" "$(active_slot 6)"
}
away
back "$(jq '.ipv4.capacity' <<<"$st")"
sed 's/^route add/route del/' "$batch" | ip -n "$RTR" -batch -
away
back "$CHUNK"
away
back "$CHUNK"
wait_xdp_ping 4 198.19.200.1 2000 >/dev/null || fail "198.19.200.0/25 not forwarded by XDP after the rebuilds"
wait_xdp_ping 6 2001:db8:fe00::1 2000 >/dev/null || fail "2001:db8:fe00::/56 not forwarded by XDP after the rebuilds"
log "PASS: pools grew under traffic; groups past the first chunk forward; released pools leave no chunk behind"
