#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Gateways the kernel allows beyond a same-family address:
#  - an IPv4 route via an IPv6 gateway (RFC 5549, RTA_VIA): the packet
#    leaves with the MAC of the IPv6 neighbour;
#  - an IPv6 route via the sink's link-local address;
#  - an IPv4 route with a smaller route MTU: larger packets go to the
#    kernel (which answers "fragmentation needed"), smaller are forwarded.
# Each is XDP-forwarded with the kernel's forwarding counters flat.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up
ip -n "$SNK" addr add 198.19.9.1/32 dev lo
ip -n "$SNK" addr add 2001:db8:f9::1/128 dev lo nodad
ip -n "$SNK" addr add 198.19.10.1/32 dev lo
# A known link-local address (the test's veths may have none of their own).
ll=fe80::5:2
ip -n "$SNK" addr add "$ll/64" dev "$SNK_IF" nodad

ip -n "$RTR" route add 198.19.9.0/24 via inet6 "$SNK6" dev "$R_SNK"
ip -n "$RTR" -6 route add 2001:db8:f9::/48 via "$ll" dev "$R_SNK"
ip -n "$RTR" route add 198.19.10.0/24 via "$SNK4" mtu lock 1280

expect_xdp 4 198.19.9.1 3000 "$SNK"
expect_xdp 6 2001:db8:f9::1 3000 "$SNK"
nh=$(rctl lookup -j 198.19.9.1)
[ "$(jq -r '.nexthop.gateway // .gateway' <<<"$nh")" = "$SNK6" ] ||
	fail "IPv4 via IPv6: lookup shows $(jq -c . <<<"$nh")"

# Frames at the sink carry its MAC and the router's, for both.
ping_both 10 198.19.9.1 2001:db8:f9::1
forwarded_by xdp 20 "via the gateways"

# Route MTU 1280: 1200-byte pings forwarded, 1400-byte ones to the kernel.
expect_xdp 4 198.19.10.1 3000 "$SNK"
m0=$(counter pass_mtu)
snapshot
ping_all "$GEN" 4 198.19.10.1 5 -s 1200
deltas
((D_X4 >= 10)) || fail "1200-byte packets under a 1280 route MTU not XDP-forwarded"
# The first one reaches the router; its ICMP answer then makes the
# sender's own stack refuse the next ones (path MTU learnt).
nping "$GEN" -4 -c 3 -i 0.1 -M do -s 1400 198.19.10.1 >"$XFIB_TMP/big" 2>&1 || true
(($(counter pass_mtu) - m0 >= 1)) || fail "1400-byte packets over a 1280 route MTU not passed to the kernel ($(stats_line))"
grep -qiE "frag needed|mtu = 1280|Message too long" "$XFIB_TMP/big" ||
	fail "no fragmentation-needed answer from the kernel: $(cat "$XFIB_TMP/big")"
log "PASS: IPv4 via IPv6 gateway, IPv6 link-local gateway, route MTU"
