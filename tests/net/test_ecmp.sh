#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Multipath routes, forwarded by XDP with a flow hash:
#  - IPv4 RTA_MULTIPATH with weights 1:3, IPv6 built by "ip -6 route
#    append" (siblings), IPv6 RTA_MULTIPATH 1:1;
#  - nexthop objects: a group 1:1 by nhid, replaced by a one-member group,
#    then a member deleted (the kernel silently deletes the routes that
#    used it), and a blackhole object.
# Each case sends 256 UDP flows (4 datagrams each) from gen to an address
# both sinks hold; captures at both sinks check that every flow stayed on
# one path, that the split follows the weights (binomial bounds), that no datagram
# was lost, and the MACs and TTL of the frames; the router kernel's
# forwarding counters stay flat. Ends with xfibctl verify.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
python3_resolve

FLOWS=256
PKTS=4
flows_py="$XFIB_TOP/tests/lib/flows.py"

topo_up sink2
# gen's flows are to be forwarded in XDP.
hosts_fill_checksums "$GEN:$GEN_IF"

# The flow destinations exist on both sinks.
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add 198.19.20.1/32 dev lo
	ip -n "$ns" addr add 198.19.21.1/32 dev lo
	ip -n "$ns" addr add 2001:db8:f20::1/128 dev lo nodad
	ip -n "$ns" addr add 2001:db8:f21::1/128 dev lo nodad
done

# cap_start NS FILE: captures datagrams to port 9 on the sink's port.
# cap_listening NS FILE: waits until that capture listens (both captures
# start at once, then each is waited for).
cap_start() {
	ip netns exec "$1" timeout 60 tcpdump -U -n -i sink0 -w "$2" \
		'udp dst port 9' 2>"$2.err" &
	XFIB_PIDS+=($!)
	CAP_PIDS+=($!)
}
cap_listening() {
	for _ in $(seq 50); do
		grep -q 'listening on' "$2.err" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "tcpdump did not start in $1: $(cat "$2.err")"
}

# flows FAMILY DST SHARE1 WHAT: sends the flows and checks that sink 1 got
# SHARE1 percent of them (and sink 2 the rest), each flow on one sink.
flows() {
	local fam=$1 dst=$2 share1=$3 what=$4 f1 f2 c1 c2 n1 n2 p1 p2 lo hi ttl
	# Both sinks' neighbours usable in the dataplane (the kernel may have
	# let one lapse; a ping through it has the kernel resolve it).
	if [ "$fam" = 4 ]; then
		expect_xdp 4 "$SNK4"
		expect_xdp 4 "$SNK2_4"
	else
		expect_xdp 6 "$SNK6"
		expect_xdp 6 "$SNK2_6"
	fi
	f1=$(mktemp "$XFIB_TMP/s1.XXXXXX")
	f2=$(mktemp "$XFIB_TMP/s2.XXXXXX")
	CAP_PIDS=()
	cap_start "$SNK" "$f1"
	cap_start "$SNK2" "$f2"
	cap_listening "$SNK" "$f1"
	cap_listening "$SNK2" "$f2"
	snapshot
	ip netns exec "$GEN" "$PYTHON3" -S "$flows_py" send "$dst" "$FLOWS" "$PKTS"
	# tcpdump may lag behind on a busy machine: wait for every datagram
	# (or 10 s), then stop it.
	for _ in $(seq 50); do
		n1=$("$PYTHON3" -S "$flows_py" frames "$f1" "$f2")
		((n1 >= FLOWS * PKTS)) && break
		sleep 0.2
	done
	sleep 0.2
	kill -INT "${CAP_PIDS[@]}" 2>/dev/null || true
	wait "${CAP_PIDS[@]}" 2>/dev/null || true
	deltas
	{ read -r c1 && read -r c2; } < <("$PYTHON3" -S "$flows_py" count "$f1" "$f2") ||
		fail "$what: flows.py count $f1 $f2"
	# What the checks below read of the captures, in one jq: frames and
	# flows (source ports) per sink, each flow whole on one sink (1 or
	# 0), the MACs and TTLs of each sink's frames.
	local whole m1 m2 t1 t2
	read -r n1 n2 p1 p2 whole m1 t1 m2 t2 < <(jq -rn --argjson a "$c1" \
		--argjson b "$c2" --argjson k "$PKTS" '
		($a.ports | keys) as $pa | ($b.ports | keys) as $pb |
		[$a.frames, $b.frames, ($a.ports | length), ($b.ports | length),
		 (if (($pa - ($pa - $pb)) | length) == 0 and
		     ([$a.ports[], $b.ports[]] | all(. == $k)) then 1 else 0 end),
		 ($a.macs | join(",") | if . == "" then "-" else . end),
		 ($a.ttls | map(tostring) | join(",") | if . == "" then "-" else . end),
		 ($b.macs | join(",") | if . == "" then "-" else . end),
		 ($b.ttls | map(tostring) | join(",") | if . == "" then "-" else . end)] |
		@tsv') && [ -n "$t2" ] || fail "$what: reading the counts: $c1 $c2"

	# Nothing lost, nothing forwarded by the kernel.
	((n1 + n2 == FLOWS * PKTS)) ||
		fail "$what: $((n1 + n2)) of $((FLOWS * PKTS)) datagrams arrived"
	local dx=$D_X4 dk=$D_K4
	[ "$fam" = 4 ] || { dx=$D_X6; dk=$D_K6; }
	((dx >= FLOWS * PKTS && dk == 0)) ||
		fail "$what: xfib forwarded +$dx, kernel +$dk (of $((FLOWS * PKTS))); counters: $(stats_line)"
	# Each flow whole on one sink.
	((whole == 1)) ||
		fail "$what: a flow was split between the sinks or lost datagrams"
	# The split by flows, as the weights give it. The flow hash's seed is
	# drawn at random per router, so the count of flows on a path is
	# binomial: the bounds are 4.5 standard deviations either side (a
	# right split falls outside once in 150,000 checks; at 256 flows a 1:1
	# split is still far outside 1:3's bounds, and 1:3 outside 1:1's).
	n1=$p1 n2=$p2
	read -r lo hi < <(awk -v n="$FLOWS" -v p="$share1" 'BEGIN {
		p /= 100; m = n * p; d = 4.5 * sqrt(n * p * (1 - p))
		lo = int(m - d); if (lo < 0) lo = 0; if (lo < m - d) lo++
		hi = int(m + d); if (hi > n) hi = n
		print lo, hi }')
	log "$what: $n1 flows to sink 1, $n2 to sink 2 (sink 1 expected $lo..$hi)"
	((n1 + n2 == FLOWS && n1 >= lo && n1 <= hi)) ||
		fail "$what: $n1/$n2 flows, sink 1 should get $share1% ($lo..$hi)"
	# Which flows took sink 1, for comparing runs (same_paths).
	jq -c '.ports | keys' <<<"$c1" >"$XFIB_TMP/paths.$what"
	# Rewritten by XDP: the router's MAC to the sink's, TTL 64 - 1.
	ttl=63
	((n1 == 0)) || [ "$m1 $t1" = "$R_SNK_MAC>$SNK_MAC $ttl" ] ||
		fail "$what: sink 1 frames: $(jq -c '{macs, ttls}' <<<"$c1"), expected $R_SNK_MAC>$SNK_MAC ttl $ttl"
	((n2 == 0)) || [ "$m2 $t2" = "$R_SNK2_MAC>$SNK2_MAC $ttl" ] ||
		fail "$what: sink 2 frames: $(jq -c '{macs, ttls}' <<<"$c2"), expected $R_SNK2_MAC>$SNK2_MAC ttl $ttl"
}

# same_paths WHAT1 WHAT2: both runs sent every flow the same way.
same_paths() {
	cmp -s "$XFIB_TMP/paths.$1" "$XFIB_TMP/paths.$2" ||
		fail "flows changed paths between \"$1\" and \"$2\""
}

# wait_lookup ADDR JQ: until xfibctl lookup -j ADDR satisfies JQ (5 s).
wait_lookup() {
	local out
	for _ in $(seq 50); do
		out=$(rctl lookup -j "$1" 2>/dev/null) || true
		jqe "$2" <<<"$out" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "lookup $1: expected $2, got: $out"
}

log "IPv4 multipath, weights 1:3"
ip -n "$RTR" route add 198.19.20.0/24 \
	nexthop via "$SNK4" weight 1 nexthop via "$SNK2_4" weight 3
wait_lookup 198.19.20.1 '.group.members == 2'
# The group in the map: 64 and 192 of 256 buckets, to the two gateways.
g=$(rctl lookup -j 198.19.20.1 | jq '.group.nexthop')
rctl nexthops -j | jqe --argjson g "$g" --arg a "$SNK4" --arg b "$SNK2_4" '
	(map({(.index | tostring): .}) | add) as $nh |
	(.[] | select(.index == $g) | .group.members) as $m |
	($m | map(.buckets) | sort) == [64, 192] and
	([$m[] | {gw: $nh[.nexthop | tostring].gateway, b: .buckets}] | sort_by(.b)) ==
	[{gw: $a, b: 64}, {gw: $b, b: 192}]' >/dev/null ||
	fail "group $g in xfibctl nexthops: $(rctl nexthops -j | jq -c --argjson g "$g" '.[] | select(.index == $g)')"
rctl nexthops | grep -Eq "^nexthop $g group index [0-9]+ buckets [0-9]+:(64 [0-9]+:192|192 [0-9]+:64)\$" ||
	fail "xfibctl nexthops text: $(rctl nexthops | grep "^nexthop $g ")"
flows 4 198.19.20.1 25 "ipv4 1:3"

log "IPv6 siblings by append"
ip -n "$RTR" -6 route add 2001:db8:f20::/48 via "$SNK6"
ip -n "$RTR" -6 route append 2001:db8:f20::/48 via "$SNK2_6"
wait_lookup 2001:db8:f20::1 '.group.members == 2'
flows 6 2001:db8:f20::1 50 "ipv6 append"

log "IPv6 multipath: one path deleted, then the other"
ip -n "$RTR" -6 route del 2001:db8:f20::/48 via "$SNK2_6"
wait_lookup 2001:db8:f20::1 '.group == null and .gateway == "'"$SNK6"'"'
flows 6 2001:db8:f20::1 100 "ipv6 after deleting a path"
ip -n "$RTR" -6 route del 2001:db8:f20::/48
ip -n "$RTR" -6 route add 2001:db8:f20::/48 \
	nexthop via "$SNK6" weight 1 nexthop via "$SNK2_6" weight 1
wait_lookup 2001:db8:f20::1 '.group.members == 2'
flows 6 2001:db8:f20::1 50 "ipv6 1:1"

log "nexthop objects"
ip -n "$RTR" nexthop add id 1 via "$SNK4" dev "$R_SNK"
ip -n "$RTR" nexthop add id 2 via "$SNK2_4" dev "$R_SNK2"
ip -n "$RTR" nexthop add id 3 via "$SNK6" dev "$R_SNK"
ip -n "$RTR" nexthop add id 4 via "$SNK2_6" dev "$R_SNK2"
ip -n "$RTR" nexthop add id 10 group 1/2
ip -n "$RTR" nexthop add id 11 group 3,3/4
ip -n "$RTR" route add 198.19.21.0/24 nhid 10
ip -n "$RTR" route add 198.19.22.0/24 nhid 1
ip -n "$RTR" -6 route add 2001:db8:f21::/48 nhid 11
wait_lookup 198.19.21.1 '.group.members == 2'
wait_lookup 2001:db8:f21::1 '.group.members == 2'
flows 4 198.19.21.1 50 "nhid group 1:1"
flows 6 2001:db8:f21::1 75 "nhid group 3:1"

# A group replaced: the routes keep their nexthop, its members change.
ip -n "$RTR" nexthop replace id 10 group 2
wait_lookup 198.19.21.1 '.gateway == "'"$SNK2_4"'" and .group.members == 1'
flows 4 198.19.21.1 0 "nhid group replaced by member 2"

# Deleting nexthop 1: the kernel drops it from its groups and deletes the
# routes that use it, without announcing those deletions.
ip -n "$RTR" nexthop replace id 10 group 1/2
wait_lookup 198.19.21.1 '.group.members == 2'
ip -n "$RTR" nexthop del id 1
wait_lookup 198.19.21.1 '.group.members == 1 and .gateway == "'"$SNK2_4"'"'
wait_lookup 198.19.22.1 '.nexthop.kind == "none"'
ip -n "$RTR" route show 198.19.22.0/24 | grep -q . &&
	fail "the kernel kept the route of a deleted nexthop: the test's premise is wrong"
flows 4 198.19.21.1 0 "nhid group after member deletion"

# A blackhole object: dropped by XDP, counted.
ip -n "$RTR" nexthop add id 20 blackhole
ip -n "$RTR" route add 198.19.23.0/24 nhid 20
wait_lookup 198.19.23.1 '.action == "drop"'
b0=$(counter drop_blackhole)
snapshot
ip netns exec "$GEN" "$PYTHON3" -S "$flows_py" send 198.19.23.1 16 2
deltas
(($(counter drop_blackhole) - b0 == 32 && D_K4 == 0)) ||
	fail "blackhole nexthop: dropped $(($(counter drop_blackhole) - b0)) of 32, kernel forwarded $D_K4"

# A restarted xfibd adopts the groups in the pinned maps: while it is
# down and after it is back, the flows keep their split.
log "kill -9 xfibd and restart it"
kill -KILL "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
flows 4 198.19.20.1 25 "ipv4 1:3 without xfibd"
xfibd_start
flows 4 198.19.20.1 25 "ipv4 1:3 after restart"
flows 6 2001:db8:f21::1 75 "nhid group 3:1 after restart"
same_paths "ipv4 1:3" "ipv4 1:3 without xfibd"
same_paths "ipv4 1:3" "ipv4 1:3 after restart"
same_paths "nhid group 3:1" "nhid group 3:1 after restart"

rctl verify --random 20000 >"$XFIB_TMP/verify" ||
	fail "verify: $(cat "$XFIB_TMP/verify")"
log "PASS: multipath routes and nexthop objects forwarded by flow, split by weight"
