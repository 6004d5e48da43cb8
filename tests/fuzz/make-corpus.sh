#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Records the netlink fuzzer's seed corpus: in a namespace of its own,
# nlcapture (NLCAPTURE, built by make fuzz) records what xfibd would
# receive while iproute2 plays one scenario per corpus file: links,
# addresses, IPv4 and IPv6 routes of every type, multipath, nexthop
# objects and groups, neighbours, forwarding settings, rules, expiring
# routes, and a start-up dump of all of it.
#   tests/fuzz/make-corpus.sh DIR     (root; writes DIR/*.nl)
set -euo pipefail
out=${1:?usage: make-corpus.sh DIR}
cap=${NLCAPTURE:-build/fuzz/nlcapture}
[ -x "$cap" ] || { echo "make-corpus: $cap not built (make fuzz)" >&2; exit 1; }
mkdir -p "$out"
ns="xfib-corpus-$$"
ip netns add "$ns"
trap 'kill $cpid 2>/dev/null; ip netns del "$ns" 2>/dev/null' EXIT
cpid=""
r() { ip -n "$ns" "$@"; }

# capture NAME [--dump] FUNC: FUNC's netlink traffic into DIR/NAME.nl.
capture() {
	local name=$1 dump=() fifo
	shift
	[ "$1" = --dump ] && { dump=(--dump); shift; }
	rm -f "$out/$name.nl"
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	ip netns exec "$ns" "$cap" "${dump[@]}" "$out/$name.nl" >"$fifo" &
	cpid=$!
	read -r _ <"$fifo"
	rm -f "$fifo"
	"$@"
	sleep 0.2
	kill -TERM "$cpid"
	wait "$cpid"
	echo "$name: $(stat -c %s "$out/$name.nl") bytes"
}

setup() {
	r link set lo up
	r link add a0 type veth peer name a1
	r link add b0 type veth peer name b1
	r link set a0 up; r link set a1 up; r link set b0 up; r link set b1 up
	r addr add 198.18.1.1/24 dev a0
	r addr add 198.18.2.1/24 dev b0
	r addr add 2001:db8:1::1/64 dev a0 nodad
	r addr add 2001:db8:2::1/64 dev b0 nodad
	r neigh add 198.18.1.2 lladdr 02:00:00:00:01:02 dev a0 nud permanent
	r neigh add 198.18.2.2 lladdr 02:00:00:00:02:02 dev b0 nud permanent
	r neigh add 2001:db8:1::2 lladdr 02:00:00:00:01:02 dev a0 nud permanent
	r neigh add 2001:db8:2::2 lladdr 02:00:00:00:02:02 dev b0 nud permanent
}

links() {
	r link add c0 type veth peer name c1
	r link set c0 up
	r link set c0 mtu 1400
	r link set c0 address 02:00:00:00:0c:00
	r link set c0 down
	r link set c0 name c9
	r link add br0 type bridge
	r link set c9 master br0
	r link set c9 nomaster
	r link del br0
	r link del c9
}

addrs() {
	r addr add 198.18.3.1/24 dev a0
	r addr add 198.18.3.9/24 dev b0
	r addr add 198.18.4.1/24 broadcast 198.18.4.255 dev a0 metric 257
	r addr add 2001:db8:3::1/64 dev a0 nodad
	r addr del 198.18.3.9/24 dev b0
	r addr del 198.18.3.1/24 dev a0
	r addr del 198.18.4.1/24 dev a0
	r addr del 2001:db8:3::1/64 dev a0
}

routes4() {
	r route add 198.19.1.0/24 via 198.18.1.2
	r route replace 198.19.1.0/24 via 198.18.2.2
	r route append 198.19.1.0/24 via 198.18.1.2
	r route add 198.19.1.0/24 via 198.18.2.2 metric 50
	r route add 198.19.2.0/24 via 198.18.1.2 mtu 1300
	r route add blackhole 198.19.3.0/24
	r route add unreachable 198.19.4.0/24
	r route add prohibit 198.19.5.0/24
	r route add throw 198.19.6.0/24
	r route add 198.19.7.0/24 via inet6 2001:db8:1::2 dev a0
	r route add 198.19.8.0/24 dev b0 tos 0x10 via 198.18.2.2
	r route add 198.19.9.0/24 via 198.18.1.2 table 100
	r route add 198.19.10.0/24 dev a0 scope link
	r route del 198.19.1.0/24 via 198.18.1.2
	r route flush 198.19.0.0/16
}

routes6() {
	r -6 route add 2001:db8:f1::/48 via 2001:db8:1::2
	r -6 route append 2001:db8:f1::/48 via 2001:db8:2::2
	r -6 route add 2001:db8:f2::/48 via fe80::2 dev a0
	r -6 route add 2001:db8:f3::/48 via 2001:db8:1::2 metric 10
	r -6 route add 2001:db8:f3::/48 via 2001:db8:2::2 metric 20
	r -6 route add blackhole 2001:db8:f4::/48
	r -6 route add unreachable 2001:db8:f5::/48
	r -6 route add 2001:db8:f6::/48 from 2001:db8:1::/64 via 2001:db8:1::2
	r -6 route add 2001:db8:f7::1 via 2001:db8:1::2 expires 2
	r -6 route del 2001:db8:f1::/48 via 2001:db8:2::2
	for p in f1 f2 f3 f3 f4 f5; do r -6 route del "2001:db8:$p::/48"; done
	r -6 route del 2001:db8:f6::/48 from 2001:db8:1::/64
}

multipath() {
	r route add 198.19.20.0/24 nexthop via 198.18.1.2 weight 1 nexthop via 198.18.2.2 weight 3
	r route replace 198.19.20.0/24 nexthop via 198.18.1.2 nexthop via 198.18.2.2 dev b0 onlink
	r -6 route add 2001:db8:f8::/48 nexthop via 2001:db8:1::2 nexthop via 2001:db8:2::2
	r link set b0 down
	r link set b0 up
	r route del 198.19.20.0/24
	r -6 route del 2001:db8:f8::/48
}

nexthops() {
	r nexthop add id 1 via 198.18.1.2 dev a0
	r nexthop add id 2 via 198.18.2.2 dev b0
	r nexthop add id 3 via 2001:db8:1::2 dev a0
	r nexthop add id 4 blackhole
	r nexthop add id 10 group 1/2
	r nexthop add id 11 group 1,3/2,1
	r nexthop add id 12 group 3
	r route add 198.19.30.0/24 nhid 10
	r -6 route add 2001:db8:f9::/48 nhid 12
	r route add 198.19.31.0/24 nhid 4
	r nexthop replace id 10 group 2
	r nexthop replace id 1 via 198.18.2.2 dev b0
	r nexthop del id 2
	r link set a0 down
	r link set a0 up
	r nexthop flush
}

neighbours() {
	r neigh add 198.18.1.5 lladdr 02:00:00:00:01:05 dev a0
	r neigh change 198.18.1.5 lladdr 02:00:00:00:01:06 dev a0 nud stale
	r neigh replace 198.18.1.5 lladdr 02:00:00:00:01:07 dev a0 nud noarp
	r neigh add 2001:db8:1::5 lladdr 02:00:00:00:01:05 dev a0 nud reachable
	r neigh add 198.18.1.6 dev a0 nud failed 2>/dev/null || true
	r neigh del 198.18.1.5 dev a0
	r neigh del 2001:db8:1::5 dev a0
	r neigh flush dev b0
}

netconf() {
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.a0.rp_filter=1
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.a0.rp_filter=0
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.b0.forwarding=0
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.ignore_routes_with_linkdown=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.a0.disable_ipv6=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.a0.disable_ipv6=0
}

rules() {
	r rule add from 198.18.1.0/24 lookup 100
	r -6 rule add to 2001:db8::/32 lookup 100 pref 50
	r rule del from 198.18.1.0/24 lookup 100
	r -6 rule del to 2001:db8::/32 lookup 100 pref 50
}

setup
capture links links
capture addrs addrs
capture routes4 routes4
capture routes6 routes6
capture multipath multipath
capture nexthops nexthops
capture neighbours neighbours
capture netconf netconf
capture rules rules
# The start-up dump of a full state. Links that went down lost their IPv6
# addresses (keep_addr_on_down is off by default).
r addr replace 2001:db8:1::1/64 dev a0 nodad
r addr replace 2001:db8:2::1/64 dev b0 nodad
r nexthop add id 1 via 198.18.1.2 dev a0
r nexthop add id 2 via 198.18.2.2 dev b0
r nexthop add id 10 group 1/2
r route add 198.19.30.0/24 nhid 10
r route add 198.19.20.0/24 nexthop via 198.18.1.2 nexthop via 198.18.2.2
r -6 route add 2001:db8:f7::1 via 2001:db8:1::2 expires 30
ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
capture dump --dump true
