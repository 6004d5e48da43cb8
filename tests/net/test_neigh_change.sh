#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A neighbour's MAC changes: the sink gets a new MAC address and the
# router learns it, once by `ip neigh replace ... lladdr` and once by
# re-resolving (the stale entry deleted, the kernel asks again). Frames
# then reach the sink with the new destination MAC, forwarded by xfib
# (forwarded counter grows, the router kernel's forwarding counter does
# not).
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up

# new_sink_mac MAC: the sink's port takes MAC (no gratuitous ARP/NA: the
# router keeps the old one until told).
new_sink_mac() {
	ip -n "$SNK" link set dev "$SNK_IF" address "$1"
	SNK_MAC=$(mac_of "$SNK" "$SNK_IF")
	[ "$SNK_MAC" = "$1" ] || fail "sink MAC is $SNK_MAC, wanted $1"
	log "sink MAC now $SNK_MAC"
}

# router_neigh_mac ADDR: the router kernel's MAC for ADDR.
router_neigh_mac() {
	ip -n "$RTR" -j neigh show to "$1" dev "$R_SNK" | jq -r '.[0].lladdr // empty'
}

# check_new_mac FAMILY DST: traffic to DST is XDP-forwarded with the
# current sink MAC as destination.
check_new_mac() {
	local fam=$1 dst=$2 filter
	expect_xdp "$fam" "$dst" 3000 "$SNK"
	if [ "$fam" = 4 ]; then
		filter="icmp and dst $dst and icmp[icmptype] == icmp-echo"
	else
		filter="icmp6 and dst $dst and ip6[40] == 128"
	fi
	snapshot
	capture_start "$SNK" "$SNK_IF" "$filter"
	ping_all "$GEN" "$fam" "$dst" 5
	capture_wait
	check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 63
	deltas
	[ $((D_X4 + D_X6)) -ge 10 ] || fail "pings to $dst with the new MAC not forwarded by xfib"
	[ $((D_K4 + D_K6)) -eq 0 ] || fail "pings to $dst with the new MAC forwarded by the router kernel"
}

# 1. Explicit update: ip neigh replace with the new lladdr.
new_sink_mac 02:00:5e:10:00:01
ip -n "$RTR" neigh replace "$SNK4" lladdr "$SNK_MAC" dev "$R_SNK" nud reachable
ip -n "$RTR" neigh replace "$SNK6" lladdr "$SNK_MAC" dev "$R_SNK" nud reachable
check_new_mac 4 "$SNK4"
check_new_mac 6 "$SNK6"

# re_resolved FAMILY DST: one ping from gen makes the router kernel
# resolve DST again (that ping is the kernel's to forward: it queues it
# while it asks), and the kernel now knows the sink's new MAC. xfib's
# time to follow is measured from there, not from the kernel's ARP or
# neighbour solicitation.
re_resolved() {
	# Its answer may come late under load: what counts is the entry.
	nping "$GEN" "-$1" -c 1 "$2" >/dev/null || true
	wait_until 5 neigh_mac_is "$2" "$SNK_MAC" ||
		fail "router did not re-resolve $2: $(router_neigh_mac "$2")"
}
neigh_mac_is() { [ "$(router_neigh_mac "$1")" = "$2" ]; }

# 2. Re-resolution: the router forgets the sink, the kernel resolves it
# again (ARP / neighbour solicitation) on the next packet, xfib follows.
new_sink_mac 02:00:5e:10:00:02
ip -n "$RTR" neigh del "$SNK4" dev "$R_SNK"
ip -n "$RTR" neigh del "$SNK6" dev "$R_SNK"
re_resolved 4 "$SNK4"
check_new_mac 4 "$SNK4"
re_resolved 6 "$SNK6"
check_new_mac 6 "$SNK6"

log "PASS: MAC changes reach the dataplane (replace and re-resolve)"
