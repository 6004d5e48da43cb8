#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Addresses and subnets held by two ports at once. The kernel then keeps
# one connected, local and broadcast route per port under the same key
# (the first forwards), and removing an address from one port removes
# only that port's routes: the address stays the router's while the
# other port holds it. xfib must follow: a packet to an address the
# router still holds is the router's, never forwarded out of the port
# that gave it up, even with a neighbour entry for it there. A port that
# loses its last IPv4 address loses its IPv4 routes, which the kernel
# does without a message.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create 0
topo_add_sink2
xfibd_start
attach_all
resolve_neighbours

r() { ip -n "$RTR" "$@" || fail "ip $*"; }

# expect_local ADDR WHAT: the router's own address in xfib and the kernel,
# and a ping from gen to it is answered by the router itself.
expect_local() {
	local e0
	wait_lookup "$1" '.nexthop.kind == "local" and .verdict == "match"' 5
	e0=$(icmp_in_echos "$RTR")
	ping_all "$GEN" "$([[ $1 == *:* ]] && echo 6 || echo 4)" "$1" 3
	(($(icmp_in_echos "$RTR") >= e0 + 3)) || fail "$2: echoes to $1 did not reach the router"
	verify_clean "$2"
}

# Two ports in one subnet, each with two addresses of it.
for p in "$R_SNK" "$R_SNK2"; do
	r addr add 198.18.104.1/24 dev "$p"
	r addr add 198.18.104.11/24 dev "$p"
	r addr add 2001:db8:104::1/64 dev "$p" nodad
done
[ "$(ip -n "$RTR" route show table local 198.18.104.11 | wc -l)" = 2 ] ||
	fail "the kernel does not hold two local routes for 198.18.104.11"
expect_local 198.18.104.11 "an address on two ports"
wait_lookup 198.18.104.50 '.nexthop.kind == "connected" and .egress.name == "r-sink" and .verdict == "match"' 5

# One port gives an address up; the router still holds it on the other.
# A neighbour entry for it on the first port must not make xfib forward
# the router's own packets there.
r addr del 198.18.104.11/24 dev "$R_SNK2"
r neigh replace 198.18.104.11 lladdr "$SNK2_MAC" dev "$R_SNK2" nud permanent
expect_local 198.18.104.11 "the address given up by one port"
r -6 addr del 2001:db8:104::1/64 dev "$R_SNK2"
r -6 neigh replace 2001:db8:104::1 lladdr "$SNK2_MAC" dev "$R_SNK2" nud permanent
expect_local 2001:db8:104::1 "the IPv6 address given up by one port"

# The primary address goes from the first port, its secondary with it:
# the subnet is reached by the second port now.
r addr del 198.18.104.1/24 dev "$R_SNK"
expect_local 198.18.104.1 "the primary address left on the second port"
wait_lookup 198.18.104.50 '.nexthop.kind == "connected" and .egress.name == "r-sink2" and .verdict == "match"' 5
verify_clean "the subnet by the second port"

# Addresses with a metric: the prefix route takes it, the broadcast
# route stays per port.
for p in "$R_SNK" "$R_SNK2"; do
	r addr add 198.18.105.1/24 dev "$p" metric 257
done
r addr del 198.18.105.1/24 dev "$R_SNK2" metric 257
wait_lookup 198.18.105.255 '.nexthop.kind == "local" and .verdict == "match"' 5
wait_lookup 198.18.105.9 '.nexthop.kind == "connected" and .egress.name == "r-sink" and .verdict == "match"' 5
verify_clean "an address with a metric given up by one port"

# The last IPv4 addresses of r-sink2 go: the kernel flushes the IPv4
# routes through it without a message. 198.19.30.1 is an address of
# sink2; a packet to it must now get the kernel's "no route".
ip -n "$SNK2" addr add 198.19.30.1/32 dev lo
r route add 198.19.30.0/24 via "$SNK2_4"
r route add 198.19.31.0/24 dev "$R_SNK2"
expect_xdp 4 198.19.30.1 3000 "$SNK2"
r -4 addr flush dev "$R_SNK2"
[ -z "$(ip -n "$RTR" -4 route show dev "$R_SNK2")" ] ||
	fail "the kernel kept IPv4 routes via $R_SNK2: $(ip -n "$RTR" -4 route show dev "$R_SNK2")"
wait_lookup 198.19.30.1 '.nexthop.kind == "none" and .verdict == "match"' 5
wait_lookup 198.19.31.1 '.nexthop.kind == "none" and .verdict == "match"' 5
e0=$(icmp_in_echos "$SNK2")
nping "$GEN" -4 -c 2 -i 0.2 198.19.30.1 >/dev/null 2>&1 && fail "198.19.30.1 answered after its route was flushed"
(($(icmp_in_echos "$SNK2") == e0)) || fail "echoes reached sink2 by a flushed route"
verify_clean "a port without IPv4 addresses"
# Its IPv6 routes stay.
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"

log "PASS: shared subnets and addresses follow the kernel's routes"
