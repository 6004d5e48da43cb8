# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# IPv6 route scenarios of tests/net/test_replay.sh. Ports: va
# 2001:db8:201::1/64, vb :202, vc :203, vd (no address).

v6_add_del() {
	scenario "ipv6: add, replace, change, delete, types"
	s -6 route add 2001:db8:1001::/48 via 2001:db8:201::2
	e -6 route add 2001:db8:1001::/48 via 2001:db8:201::2
	s -6 route add 2001:db8:1001::/48 via 2001:db8:202::2 metric 100
	s -6 route replace 2001:db8:1001::/48 via 2001:db8:203::2
	s -6 route add 2001:db8:1001:1::/64 dev va
	s -6 route add blackhole 2001:db8:1002::/48
	s -6 route add unreachable 2001:db8:1003::/48
	s -6 route add prohibit 2001:db8:1004::/48
	s -6 route replace blackhole 2001:db8:1003::/48
	s -6 route replace 2001:db8:1004::/48 via 2001:db8:202::7
	s -6 route add 2001:db8:1005::/48 via fe80::5 dev vb
	s -6 route add 2001:db8:1006::/48 via 2001:db8:201::2 mtu 1400
	s -6 route change 2001:db8:1006::/48 via 2001:db8:201::2 mtu 1300
	s -6 route add 2001:db8:1007::/48 via 2001:db8:201::2 metric 10
	s -6 route add 2001:db8:1007::/48 via 2001:db8:202::2 metric 5
	s -6 route del 2001:db8:1007::/48 metric 5
	s -6 route add default via 2001:db8:203::9
	s -6 route add 2001:db8:1000::/36 via 2001:db8:202::9
	s -6 route del default
	e -6 route del 2001:db8:1008::/48
	s -6 route del 2001:db8:1001::/48 metric 100
	s -6 route flush root 2001:db8:1000::/36
}

v6_multipath() {
	scenario "ipv6: siblings, non-siblings of one metric"
	s -6 route add 2001:db8:1010::/48 nexthop via 2001:db8:201::2 nexthop via 2001:db8:202::2
	s -6 route append 2001:db8:1010::/48 via 2001:db8:203::2
	s -6 route del 2001:db8:1010::/48 via 2001:db8:202::2
	s -6 route replace 2001:db8:1010::/48 via 2001:db8:201::9
	s -6 route add 2001:db8:1011::/48 dev va
	e -6 route add 2001:db8:1011::/48 dev vb
	s -6 route append 2001:db8:1011::/48 dev vb
	s -6 route del 2001:db8:1011::/48 dev va
	s -6 route add 2001:db8:1012::/48 via 2001:db8:201::2
	s -6 route append 2001:db8:1012::/48 via 2001:db8:202::2
	s -6 route append 2001:db8:1012::/48 via fe80::3 dev vc
	s link set vb down
	port_up vb 202
	s -6 route add 2001:db8:1013::/48 nexthop via 2001:db8:201::2 weight 5 nexthop via 2001:db8:203::2
	s link set vc-p down
	s link set vc-p up
	s -6 route flush root 2001:db8:1000::/36
}

v6_expiry() {
	scenario "ipv6: expiring routes"
	s -6 route add 2001:db8:1020::/48 via 2001:db8:202::2
	s -6 route add 2001:db8:1020::/64 via 2001:db8:201::2 expires 2
	kernel_leaves_via 2001:db8:1020::1 2001:db8:202::2
	s -6 route add 2001:db8:1021::/64 via 2001:db8:201::2 metric 10 expires 2
	s -6 route add 2001:db8:1021::/64 via 2001:db8:202::2 metric 20
	kernel_leaves_via 2001:db8:1021::1 2001:db8:202::2
	s -6 route add 2001:db8:1022::/64 via 2001:db8:201::2 expires 3
	s -6 route replace 2001:db8:1022::/64 via 2001:db8:201::2 expires 100
	s -6 route add 2001:db8:1023::/64 via 2001:db8:201::2 expires 100
	s -6 route replace 2001:db8:1023::/64 via 2001:db8:203::2
	s -6 route flush root 2001:db8:1000::/36
}

v6_addr_link() {
	scenario "ipv6: shared addresses, links"
	s -6 addr add 2001:db8:1030::1/64 dev va nodad
	s -6 addr add 2001:db8:1030::1/64 dev vb nodad
	s -6 addr del 2001:db8:1030::1/64 dev vb
	s -6 neigh replace 2001:db8:1030::1 lladdr 02:00:00:00:00:30 dev vb nud permanent
	s -6 addr del 2001:db8:1030::1/64 dev va
	s -6 neigh del 2001:db8:1030::1 dev vb
	s -6 addr add 2001:db8:1031::1/64 dev va nodad metric 300
	s -6 addr add 2001:db8:1031::5/64 dev vb nodad
	s -6 addr del 2001:db8:1031::1/64 dev va
	s -6 addr del 2001:db8:1031::5/64 dev vb
	s -6 route add 2001:db8:1032::/48 via 2001:db8:201::2
	s -6 route add 2001:db8:1033::/48 dev va
	sx net.ipv6.conf.all.ignore_routes_with_linkdown=1 net.ipv6.conf.va.ignore_routes_with_linkdown=1
	s link set va-p down
	s link set va-p up
	sx net.ipv6.conf.all.ignore_routes_with_linkdown=0 net.ipv6.conf.va.ignore_routes_with_linkdown=0
	s link set va down
	port_up va 201
	s -6 route flush root 2001:db8:1000::/36
}

# shellcheck disable=SC2034 # read by test_replay.sh
REPLAY_V6="v6_add_del v6_multipath v6_expiry v6_addr_link"
