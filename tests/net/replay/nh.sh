# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Nexthop object scenarios of tests/net/test_replay.sh.

nh_single() {
	scenario "nexthop objects: single, device-only, blackhole"
	s nexthop add id 1 via 198.18.201.2 dev va
	s nexthop add id 2 via 198.18.202.2 dev vb
	s nexthop add id 3 dev vc
	s nexthop add id 4 blackhole
	e nexthop add id 1 via 198.18.203.2 dev vc
	e nexthop add id 5 via 198.18.250.2 dev va
	s route add 198.19.80.0/24 nhid 1
	s route add 198.19.81.0/24 nhid 3
	s route add 198.19.82.0/24 nhid 4
	s route add 198.19.83.0/24 nhid 1 mtu 1300
	s nexthop replace id 1 via 198.18.201.9 dev va
	s nexthop replace id 1 via 198.18.202.9 dev vb
	s route replace 198.19.80.0/24 nhid 2
	s route append 198.19.80.0/24 nhid 1
	s route prepend 198.19.80.0/24 via 198.18.203.2
	s route del 198.19.80.0/24 nhid 2
	s nexthop del id 1
	s nexthop replace id 4 via 198.18.201.3 dev va
	s nexthop replace id 4 blackhole
	s nexthop del id 3
	s nexthop del id 2
	s nexthop del id 4
	s route flush root 198.19.0.0/16
}

nh_groups() {
	scenario "nexthop objects: groups"
	s nexthop add id 11 via 198.18.201.2 dev va
	s nexthop add id 12 via 198.18.202.2 dev vb
	s nexthop add id 13 via 198.18.203.2 dev vc
	s nexthop add id 14 blackhole
	s nexthop add id 20 group 11/12
	s nexthop add id 21 group 11,3/12/13,2
	e nexthop add id 22 group 11/14
	s nexthop add id 23 group 14
	e nexthop add id 24 group 11/99
	s route add 198.19.90.0/24 nhid 20
	s route add 198.19.91.0/24 nhid 21
	s route add 198.19.92.0/24 nhid 23
	s route add 198.19.93.0/24 nhid 20 metric 7
	s nexthop replace id 20 group 12/13
	s nexthop replace id 21 group 11
	e nexthop replace id 20 via 198.18.201.2 dev va
	e nexthop replace id 11 group 12
	s nexthop replace id 11 via 198.18.201.7 dev va
	s nexthop replace id 14 via 198.18.203.7 dev vc
	s nexthop del id 12
	s nexthop del id 13
	s nexthop del id 11
	s nexthop add id 11 via 198.18.201.2 dev va
	s nexthop add id 12 via 198.18.202.2 dev vb
	s nexthop add id 25 group 11/12 type resilient buckets 8
	s route add 198.19.94.0/24 nhid 25
	s nexthop add id 26 via 198.18.201.2 fdb
	s nexthop add id 27 group 11,200/12,56
	s route add 198.19.95.0/24 nhid 27
	s nexthop del id 25
	s nexthop flush
	s route flush root 198.19.0.0/16
}

nh_v6() {
	scenario "nexthop objects: IPv6, mixed families"
	s nexthop add id 31 via 2001:db8:201::2 dev va
	s nexthop add id 32 via 2001:db8:202::2 dev vb
	s nexthop add id 33 group 31/32
	s -6 route add 2001:db8:1040::/48 nhid 31
	s -6 route add 2001:db8:1041::/48 nhid 33
	s route add 198.19.96.0/24 nhid 31
	s route add 198.19.97.0/24 nhid 33
	s nexthop replace id 31 via 2001:db8:203::2 dev vc
	s nexthop replace id 33 group 32
	s -6 route replace 2001:db8:1040::/48 nhid 32
	s nexthop add id 34 via fe80::7 dev va
	s -6 route add 2001:db8:1042::/48 nhid 34
	s -6 route add 2001:db8:1043::/48 nhid 34
	s -6 route append 2001:db8:1043::/48 via 2001:db8:202::5
	s nexthop del id 31
	s nexthop del id 34
	s nexthop flush
	s route flush root 198.19.0.0/16
	s -6 route flush root 2001:db8:1000::/36
}

nh_link() {
	scenario "nexthop objects: links down, without carrier"
	s nexthop add id 41 via 198.18.201.2 dev va
	s nexthop add id 42 via 198.18.202.2 dev vb
	s nexthop add id 43 group 41/42
	s route add 198.19.98.0/24 nhid 43
	s route add 198.19.99.0/24 nhid 41
	s link set va down
	port_up va 201
	s nexthop add id 41 via 198.18.201.2 dev va
	s nexthop replace id 43 group 41/42
	s route add 198.19.99.0/24 nhid 41
	s link set vb-p down
	s link set vb-p up
	s nexthop add id 42 via 198.18.202.2 dev vb
	s route replace 198.19.98.0/24 via 198.18.202.2
	s route replace 198.19.98.0/24 nhid 42
	s route replace 198.19.98.0/24 nexthop via 198.18.201.2 nexthop via 198.18.203.2
	s route replace 198.19.98.0/24 nhid 41
	s link set vd down
	s link set vd up
	s nexthop flush
	s route flush root 198.19.0.0/16
}

nh_batch() {
	scenario "nexthop objects: many at once"
	{
		for i in $(seq 1 100); do
			echo "nexthop add id $((1000 + i)) via 198.18.20$((1 + i % 3)).$((10 + i)) dev v$(echo abc | cut -c$((1 + i % 3)))"
		done
		for i in $(seq 1 50); do
			echo "nexthop add id $((2000 + i)) group $((1000 + i))/$((1050 + i))"
			echo "route add 198.19.$((100 + i)).0/24 nhid $((2000 + i))"
			echo "route add 198.19.$((160 + i)).0/24 nhid $((1000 + i))"
		done
	} >"$XFIB_TMP/nh.batch"
	s -batch "$XFIB_TMP/nh.batch"
	s nexthop replace id 1001 via 198.18.202.99 dev vb
	s nexthop del id 1051
	s nexthop flush
	s route flush root 198.19.0.0/16
}

# shellcheck disable=SC2034 # read by test_replay.sh
REPLAY_NH="nh_single nh_groups nh_v6 nh_link nh_batch"
