#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# IPv4 and IPv6 traffic between gen and sink crosses the router through
# xfib: the forwarded counters grow by every packet while the router
# kernel's forwarding counters stay flat, and the frames that reach each
# end carry the router's egress MAC as source, the receiver's MAC as
# destination and the TTL / hop limit decremented by one.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=50
topo_up

# Attached natively by default (iproute2: xdp.mode 1 = XDP_ATTACHED_DRV).
rctl status -j | jqe '(.interfaces | length) == 2 and
	all(.interfaces[]; .mode == "native" and .prog_id > 0)' >/dev/null ||
	fail "status: $(rctl status -j | jq -c .interfaces)"
for p in $(router_ports); do
	m=$(ip -n "$RTR" -j -d link show dev "$p" | jq '.[0].xdp.mode')
	[ "$m" = 1 ] || fail "$p: XDP attach mode $m, expected 1 (native)"
done

# Bulk: N echoes each way per family, every one answered.
snapshot
B4=$(xcounter "$RTR" "$PIN" forwarded_v4 bytes)
B6=$(xcounter "$RTR" "$PIN" forwarded_v6 bytes)
ping_all "$GEN" 4 "$SNK4" "$N"
ping_all "$GEN" 6 "$SNK6" "$N"
ping_all "$SNK" 4 "$GEN4" "$N"
ping_all "$SNK" 6 "$GEN6" "$N"
deltas
# Each echo and each reply crosses the router once: 4N per family.
[ "$D_X4" -ge $((4 * N)) ] || fail "forwarded_v4 grew by $D_X4, expected >= $((4 * N))"
[ "$D_X6" -ge $((4 * N)) ] || fail "forwarded_v6 grew by $D_X6, expected >= $((4 * N))"
[ "$D_K4" -eq 0 ] || fail "router kernel forwarded $D_K4 IPv4 datagrams (IpForwDatagrams), expected 0"
[ "$D_K6" -eq 0 ] || fail "router kernel forwarded $D_K6 IPv6 datagrams (Ip6OutForwDatagrams), expected 0"
# Default ping: 56 data bytes -> 98-byte IPv4 and 118-byte IPv6 frames.
DB4=$(($(xcounter "$RTR" "$PIN" forwarded_v4 bytes) - B4))
DB6=$(($(xcounter "$RTR" "$PIN" forwarded_v6 bytes) - B6))
[ "$DB4" -ge $((4 * N * 98)) ] || fail "forwarded_v4 bytes grew by $DB4, expected >= $((4 * N * 98))"
[ "$DB6" -ge $((4 * N * 118)) ] || fail "forwarded_v6 bytes grew by $DB6, expected >= $((4 * N * 118))"

# What arrives: one echo request at the sink and its reply at gen, sent
# with TTL / hop limit 17 (the sink answers with its default 64).
snapshot
capture_start "$SNK" "$SNK_IF" "icmp and src $GEN4 and dst $SNK4 and icmp[icmptype] == icmp-echo"
ping_all "$GEN" 4 "$SNK4" 1 -t 17
capture_wait
check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 16

capture_start "$GEN" "$GEN_IF" "icmp and src $SNK4 and dst $GEN4 and icmp[icmptype] == icmp-echoreply"
ping_all "$GEN" 4 "$SNK4" 1
capture_wait
check_frame "$CAP_TEXT" "$R_GEN_MAC" "$GEN_MAC" 63

capture_start "$SNK" "$SNK_IF" "icmp6 and src $GEN6 and dst $SNK6 and ip6[40] == 128"
ping_all "$GEN" 6 "$SNK6" 1 -t 17
capture_wait
check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 16

capture_start "$GEN" "$GEN_IF" "icmp6 and src $SNK6 and dst $GEN6 and ip6[40] == 129"
ping_all "$GEN" 6 "$SNK6" 1
capture_wait
check_frame "$CAP_TEXT" "$R_GEN_MAC" "$GEN_MAC" 63

# The captured frames were xfib's, not the kernel's.
deltas
(( D_X4 >= 4 && D_X6 >= 4 )) || fail "captured pings not counted as forwarded"
(( D_K4 == 0 && D_K6 == 0 )) || fail "captured pings were forwarded by the router kernel"

log "PASS: v4 and v6 XDP-forwarded both ways, MACs and TTL rewritten"
