#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfib demo (make demo): builds gen -- router -- sink in three throw-away
# network namespaces, runs xfibd in the router, attaches the XDP forwarder
# to the router's ports, adds routes with plain iproute2, sends traffic and
# shows that xfib forwarded it while the router kernel's own forwarding
# counter stayed flat. Everything is removed on exit, however it exits.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, XDP, bpffs): sudo make demo" >&2
	exit 1
fi
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../tests/lib/netns.sh"
XFIB_PIN_PREFIX=xfib-demo
xfib_init

say() { printf '\n== %s\n' "$*"; }
show() {
	printf '$ %s\n' "$*"
	"$@"
}

say "Topology: three namespaces joined by veth pairs"
topo_create 0
cat <<EOF
  $GEN ($GEN4, $GEN6)
    | $GEN_IF -- $R_GEN
  $RTR (forwarding on, rp_filter off)
    | $R_SNK -- $SNK_IF
  $SNK ($SNK4, $SNK6)
EOF

say "Start xfibd in the router; it mirrors the kernel's routes, neighbours and links into BPF maps"
echo "$ nsenter --net=/run/netns/$RTR xfibd --pin-dir $PIN &"
xfibd_start
echo "$ nsenter --net=/run/netns/$RTR xfibctl --pin-dir $PIN attach $(router_ports | xargs)"
attach_all

say "Add routes behind the sink with iproute2 (xfibd picks them up from netlink)"
ip -n "$SNK" addr add 198.19.0.1/32 dev lo
ip -n "$SNK" addr add 2001:db8:ff00::1/128 dev lo nodad
show ip -n "$RTR" route add 198.19.0.0/24 via "$SNK4"
show ip -n "$RTR" -6 route add 2001:db8:ff00::/64 via "$SNK6"
# The first packets resolve the neighbours through the kernel.
resolve_neighbours
expect_xdp 4 198.19.0.1 3000 "$SNK" >/dev/null
expect_xdp 6 2001:db8:ff00::1 3000 "$SNK" >/dev/null

say "Send traffic from gen: 500 pings per family to the new prefixes"
snapshot
for dst in 198.19.0.1 2001:db8:ff00::1; do
	ip netns exec "$GEN" ping -q -c 500 -i 0.002 -W 1 "$dst" | grep -E 'transmitted|rtt'
done
deltas >/dev/null

say "An exception: TTL 1 is passed to the kernel (pass_ttl), which answers"
ip netns exec "$GEN" ping -c 1 -t 1 -W 1 198.19.0.1 | grep -i 'exceeded' || true

say "xfibctl status"
rctl status
say "xfibctl stats"
rctl stats

say "What happened"
printf '  forwarded by XDP:      IPv4 %6d packets   IPv6 %6d packets\n' "$D_X4" "$D_X6"
printf '  forwarded by kernel:   IpForwDatagrams +%d   Ip6OutForwDatagrams +%d\n' "$D_K4" "$D_K6"
cat <<EOF
  Every echo and reply crossed the router in the XDP program on its ports:
  it looked the destination up in the table xfibd built from the kernel's
  routes, rewrote the MACs, decremented the TTL and redirected the frame to
  the egress port, so the router kernel's forwarding counters did not move.
  Routes stay managed with iproute2 (or a routing daemon); whatever XDP
  should not handle (TTL expiry, unresolved neighbours, local traffic) is
  passed to the kernel, and counted in 'xfibctl stats' by reason.
EOF
if ((D_X4 < 1000 || D_X6 < 1000 || D_K4 != 0 || D_K6 != 0)); then
	echo "demo: unexpected counters: the traffic was not forwarded by xfib" >&2
	exit 1
fi
say "Cleaning up (namespaces, daemon, pinned maps)"
