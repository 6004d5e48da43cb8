# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# IPv4 route scenarios of tests/net/test_replay.sh (sourced by it: s, e,
# sx, port_up, scenario and check come from there). Ports: va
# 198.18.201.1/24, vb .202, vc .203, vd (no address).

v4_add_del() {
	scenario "ipv4: add, replace, change, delete, types"
	s route add 198.19.1.0/24 via 198.18.201.2
	e route add 198.19.1.0/24 via 198.18.201.2
	e route add 198.19.1.0/24 via 198.18.201.3
	s route add 198.19.1.0/24 via 198.18.202.2 metric 20
	s route add 198.19.1.0/24 dev va metric 30
	s route del 198.19.1.0/24
	s route del 198.19.1.0/24
	s route del 198.19.1.0/24 dev va metric 30
	e route del 198.19.1.0/24
	s route add 198.19.1.0/24 via 198.18.201.2 dev va onlink
	s route replace 198.19.1.0/24 via 198.18.202.2
	s route change 198.19.1.0/24 via 198.18.201.9
	e route change 198.19.9.0/24 via 198.18.201.9
	e route add 198.19.9.0/24 via 198.18.250.1
	s route add blackhole 198.19.2.0/24
	s route add unreachable 198.19.3.0/24
	s route add prohibit 198.19.4.0/24
	s route add throw 198.19.5.0/24
	s route replace unreachable 198.19.2.0/24
	s route replace 198.19.3.0/24 via 198.18.201.2
	s route replace blackhole 198.19.4.0/24
	s route replace 198.19.5.0/24 dev vb
	for p in 1 2 3 4 5; do
		s route del "198.19.$p.0/24"
	done
}

v4_alias() {
	scenario "ipv4: several routes of one key"
	s route add 198.19.10.0/24 via 198.18.201.2
	s route append 198.19.10.0/24 via 198.18.202.2
	s route append 198.19.10.0/24 dev vc
	e route append 198.19.10.0/24 via 198.18.202.2
	s route prepend 198.19.10.0/24 via 198.18.203.2
	s route append 198.19.10.0/24 via 198.18.201.2 proto static
	s route append blackhole 198.19.10.0/24
	s route replace 198.19.10.0/24 via 198.18.202.3
	s route del 198.19.10.0/24 via 198.18.202.3
	s route del 198.19.10.0/24 via 198.18.201.2 proto static
	s route prepend blackhole 198.19.10.0/24 proto static
	s route del 198.19.10.0/24
	s route del blackhole 198.19.10.0/24
	s route del 198.19.10.0/24 dev vc
	s route del 198.19.10.0/24
	s route del 198.19.10.0/24
	e route del 198.19.10.0/24
	s route add 198.19.11.0/24 via 198.18.201.2 metric 5
	s route append 198.19.11.0/24 via 198.18.202.2 metric 5
	s route prepend 198.19.11.0/24 via 198.18.203.2 metric 10
	s route prepend 198.19.11.0/24 via 198.18.203.3 metric 5
	s route del 198.19.11.0/24 via 198.18.203.3 metric 5
	s route del 198.19.11.0/24 via 198.18.201.2 metric 5
	s route del 198.19.11.0/24 metric 5
	s route del 198.19.11.0/24
	s route add 198.19.12.0/24 via 198.18.201.2 src 198.18.201.1
	s route append 198.19.12.0/24 via 198.18.201.2 src 198.18.202.1
	s route append 198.19.12.0/24 via 198.18.201.2 mtu 1300
	s route del 198.19.12.0/24 via 198.18.201.2 src 198.18.201.1
	s route del 198.19.12.0/24 via 198.18.201.2 src 198.18.202.1
	s route del 198.19.12.0/24
	s route add 198.19.13.0/24 via 198.18.201.2 table local
	s route append 198.19.13.0/24 via 198.18.202.2 table local
	s route add local 198.19.13.5 dev lo table local
	s route del 198.19.13.0/24 table local
	s route del local 198.19.13.5 dev lo table local
	s route del 198.19.13.0/24 table local
}

v4_nested() {
	scenario "ipv4: nested prefixes, default routes, metrics, MTU"
	s route add default via 198.18.201.2
	s route add 198.19.0.0/16 via 198.18.202.2
	s route add 198.19.20.0/24 via 198.18.203.2
	s route add blackhole 198.19.20.128/25
	s route add 198.19.20.200/32 via 198.18.201.5
	s route add 198.19.20.0/24 via 198.18.201.3 metric 50
	s route del 198.19.20.0/24 via 198.18.203.2
	s route add 198.19.20.0/24 via 198.18.203.2 metric 60
	s route del 198.19.20.0/24 metric 50
	s route replace default via 198.18.202.9
	s route add default via 198.18.203.9 metric 100
	s route del default via 198.18.202.9
	s route add unreachable 198.19.20.0/25
	s route del 198.19.20.128/25
	s route add 198.19.21.0/24 via 198.18.201.2 mtu 1400
	s route change 198.19.21.0/24 via 198.18.201.2 mtu 1280
	s route add 198.19.21.0/24 via 198.18.201.2 mtu lock 1300 metric 7
	s route del 198.19.21.0/24 metric 7
	s route add 198.19.21.128/25 via 198.18.202.2 advmss 1200
	s route flush root 198.19.0.0/16
	s route del default
}

v4_multipath() {
	scenario "ipv4: multipath"
	s route add 198.19.30.0/24 nexthop via 198.18.201.2 nexthop via 198.18.202.2
	s route replace 198.19.30.0/24 nexthop via 198.18.201.2 weight 3 nexthop via 198.18.203.2
	s route replace 198.19.30.0/24 via 198.18.201.4
	s route append 198.19.30.0/24 nexthop via 198.18.202.2 nexthop via 198.18.203.2
	s route prepend 198.19.30.0/24 nexthop dev va nexthop dev vb weight 2
	s route add 198.19.31.0/24 nexthop via 198.18.201.2 nexthop via 198.18.202.2 nexthop via 198.18.203.2
	s link set vc down
	port_up vc 203
	s route add 198.19.32.0/24 metric 10 nexthop via 198.18.201.2 nexthop via 198.18.202.2
	s link set vb-p down
	s link set vb-p up
	s route del 198.19.30.0/24
	s route del 198.19.30.0/24
	s route del 198.19.30.0/24
	s route flush root 198.19.0.0/16
}

v4_addr() {
	scenario "ipv4: addresses, shared subnets, metrics, secondaries"
	s addr add 198.18.210.1/24 dev va
	s addr add 198.18.210.11/24 dev va
	s addr add 198.18.210.1/24 dev vb
	s addr add 198.18.210.11/24 dev vb
	s addr del 198.18.210.11/24 dev vb
	s neigh replace 198.18.210.11 lladdr 02:00:00:00:00:11 dev vb nud permanent
	s addr del 198.18.210.1/24 dev va
	s addr del 198.18.210.1/24 dev vb
	s neigh del 198.18.210.11 dev vb
	s addr add 198.18.211.1/24 dev va metric 257
	s addr add 198.18.211.1/24 dev vb metric 257
	s addr del 198.18.211.1/24 dev vb metric 257
	s addr change 198.18.211.1/24 dev va metric 100
	s addr add 198.18.212.1/24 dev va noprefixroute
	s route add 198.18.212.0/24 dev vb
	s addr del 198.18.212.1/24 dev va
	s route del 198.18.212.0/24 dev vb
	sx net.ipv4.conf.va.promote_secondaries=1
	s addr add 198.18.213.1/24 dev va
	s addr add 198.18.213.2/24 dev va
	s addr add 198.18.213.3/24 dev va
	s addr del 198.18.213.1/24 dev va
	sx net.ipv4.conf.va.promote_secondaries=0
	s addr del 198.18.213.2/24 dev va
	s addr add 198.18.214.1/32 dev lo
	s addr add 198.18.215.5/24 dev va broadcast 198.18.215.100
	s addr add 198.18.216.1 peer 198.18.216.2 dev vb
	s route add 198.19.40.0/24 via 198.18.216.2
	s addr del 198.18.216.1 peer 198.18.216.2 dev vb
	s addr del 198.18.214.1/32 dev lo
	s addr del 198.18.215.5/24 dev va
	s addr del 198.18.211.1/24 dev va
}

v4_last_addr() {
	scenario "ipv4: a port loses its last address"
	s route add 198.19.41.0/24 via 198.18.203.2
	s route add 198.19.42.0/24 dev vc
	s route add 198.19.43.0/24 nexthop via 198.18.203.2 nexthop via 198.18.201.2
	s route add 198.19.44.0/24 via 198.18.203.2 table local
	s addr add 198.18.217.1/24 dev vc
	s addr del 198.18.217.1/24 dev vc
	s -4 addr flush dev vc
	s addr add 198.18.203.1/24 dev vc
	s route add 198.19.42.0/24 dev vc
	s route flush root 198.19.0.0/16
}

v4_link() {
	scenario "ipv4: links down, up, without carrier"
	s route add 198.19.50.0/24 via 198.18.201.2
	s route append 198.19.50.0/24 via 198.18.202.2
	s route add 198.19.51.0/24 dev va
	s route add 198.19.52.0/24 via 198.18.201.7 metric 5
	s route add 198.19.52.0/24 via 198.18.202.7 metric 9
	s link set va-p down
	sx net.ipv4.conf.all.ignore_routes_with_linkdown=1 net.ipv4.conf.va.ignore_routes_with_linkdown=1
	s route add 198.19.53.0/24 via 198.18.201.8
	sx net.ipv4.conf.all.ignore_routes_with_linkdown=0 net.ipv4.conf.va.ignore_routes_with_linkdown=0
	s link set va-p up
	s link set va down
	port_up va 201
	e route add 198.19.50.0/24 via 198.18.201.2
	s route prepend 198.19.50.0/24 via 198.18.201.2
	s link set va-p down
	s link set va down
	port_up va 201
	s link set va-p up
	s link set vd down
	s link set vd up
	s route flush root 198.19.0.0/16
}

v4_misc() {
	scenario "ipv4: TOS, via IPv6 gateways, policy rules, a resync, a batch"
	s route add 198.19.60.0/24 tos 0x10 via 198.18.201.2
	s route add 198.19.60.0/24 via 198.18.202.2
	s route del 198.19.60.0/24 tos 0x10
	s route add 198.19.61.0/24 via inet6 2001:db8:201::2 dev va
	s route append 198.19.61.0/24 via 198.18.202.2
	s route replace 198.19.61.0/24 via inet6 fe80::2 dev vb
	s rule add from 198.18.201.0/24 lookup 100 priority 100
	s route add 198.19.62.0/24 via 198.18.203.2
	s rule del priority 100
	s route add 198.19.63.0/24 via 198.18.201.2
	s route prepend 198.19.63.0/24 via 198.18.202.2
	s link set vd down
	s link set vd up
	s route del 198.19.63.0/24 via 198.18.202.2
	for i in $(seq 0 199); do
		echo "route add 198.19.$((64 + i / 64)).$((i % 64 * 4))/30 via 198.18.20$((1 + i % 3)).2"
	done >"$XFIB_TMP/v4.batch"
	s -batch "$XFIB_TMP/v4.batch"
	s route flush root 198.19.0.0/16
}

# Seeded random changes over two prefixes, three metrics and four
# nexthops: whatever the kernel accepts or refuses, in whatever order its
# routes of one key end up.
v4_random() {
	local i op pfx via met
	local ops=(add append prepend replace del del change)
	local vias=("via 198.18.201.2" "via 198.18.202.2" "dev vc" "via 198.18.201.3 dev va onlink")
	scenario "ipv4: 120 seeded random changes of few keys"
	RANDOM=15
	T_OK=0
	for ((i = 0; i < 120; i++)); do
		op=${ops[RANDOM % ${#ops[@]}]}
		pfx=198.19.$((110 + RANDOM % 2)).0/24
		via=${vias[RANDOM % ${#vias[@]}]}
		met=$((RANDOM % 3 * 10))
		# shellcheck disable=SC2086 # $via is words on purpose
		t route "$op" "$pfx" $via metric "$met"
	done
	log "$T_OK of 120 random changes accepted by the kernel"
	s route flush root 198.19.0.0/16
}

# shellcheck disable=SC2034 # read by test_replay.sh
REPLAY_V4="v4_add_del v4_alias v4_nested v4_multipath v4_addr v4_last_addr v4_link v4_misc v4_random"
