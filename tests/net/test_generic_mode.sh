#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The forwarder also works attached in generic (skb) mode: status and
# iproute2 report generic mode on every port, and IPv4 and IPv6 traffic is
# forwarded by xfib (counters grow, the router kernel's do not), with the
# MACs rewritten and the TTL decremented.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

XFIB_MODE=generic
topo_up

st=$(rctl status -j)
jqe '(.interfaces | length) == 2 and all(.interfaces[]; .mode == "generic" and .prog_id > 0)' \
	<<<"$st" >/dev/null || fail "status does not show two generic ports: $(jq -c .interfaces <<<"$st")"
# iproute2's JSON: xdp.mode 2 is XDP_ATTACHED_SKB (generic), 1 native.
for p in $(router_ports); do
	m=$(ip -n "$RTR" -j -d link show dev "$p" | jq '.[0].xdp.mode')
	[ "$m" = 2 ] || fail "$p: XDP attach mode $m, expected 2 (generic)"
done

ping_both 20
forwarded_by xdp 40 "generic mode"

capture_start "$SNK" "$SNK_IF" "icmp and src $GEN4 and dst $SNK4 and icmp[icmptype] == icmp-echo"
ping_all "$GEN" 4 "$SNK4" 1 -t 9
capture_wait
check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 8

log "PASS: generic mode forwards"
