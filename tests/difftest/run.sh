#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Differential packet test: the kernel is the oracle. Sends crafted and
# mutated frames (tests/difftest/cases.py) through a namespaced router
# once without xfib and once with it, and compares everything that comes
# out anywhere: at the sinks, and back at the generator (ICMP errors and
# the router's replies), frame by frame (tests/difftest/compare.py).
#
#   run.sh [-n FRAMES] [-s SEED] [-c CHUNK] [-p PROOF_CHUNKS] [-o I,J,...] [-N|-R|-B]
#
# FRAMES (default 20000) go in chunks of CHUNK (default 50000). Each chunk
# is sent with the router's ports detached (kernel), then attached to xfib
# (xfibd running) twice, once with the automatic lookup algorithms
# (bsearch4, bsearch6) and once with dir24_8 and trie6 forced, and each
# xfib capture must equal the kernel's. In the first
# PROOF_CHUNKS chunks (default 1) the comparison proves itself first: a
# second kernel run (after the xfib one) must equal the first, and a run
# with dt_plant.bpf.c on the generator port (one payload byte changed in
# every 97th UDP frame) must differ on exactly the planted frames.
# -o sends only the listed frames (to look at a difference again).
#
# -N, the NAT run: the router gets a home router's stateful nftables
# ruleset (dt_nat_router: forward policy drop, invalid dropped,
# established and related accepted, new flows from the LAN ports r-gen and
# r-sink3 to the WAN port r-sink, masquerade out of r-sink, a fixed source
# address for the network behind gen, a port forward of r-sink's address,
# port 8080, to sink2's, port 5201), xfib runs in conntrack gate mode for
# both families, and the frames are the NAT frames (natcases.py), each
# sent from the host its sender is on. Before every run conntrack is
# emptied and the entries of the frames' flows are created again
# (dt_ct.c) and checked (conntrack -L), so that each run starts from the
# same state.
#
# -R, the policy-routing run: the router gets a rule set with every
# selector and action xfib walks, and tables the rules reach
# (dt_rules_router), before both runs; the frames are rulecases.py's,
# each rule deciding some of them, some sent into r-sink3. Before any
# frame, xfibctl rules -j must equal ip -j rule, with every rule walked
# in XDP (none left to the kernel).
#
# -B, the bridge run: r-sink and r-sink2 are the members of a Linux
# bridge, br-lan, which has their addresses (both networks) and r-sink's
# MAC (the router's to both sinks); the router's neighbours of the sinks are on the bridge, whose
# forwarding database holds the sinks' MACs as static entries (the hosts
# never send: nothing would be learned). What xfib routes to the sinks
# leaves by the member the bridge names. The frames are the plain run's.
#
#   gen0 ---- r-gen [router] r-sink ---- sink0 (sink,  1500)
#   (MTU 2000)               r-sink2 --- sink0 (sink2, 1500)
#                            r-sink3 --- sink0 (sink3, MTU 1280)
#
# The hosts have no addresses and no IPv6: they only capture. The router
# has permanent neighbours for them, no neighbour probes (an unresolved
# neighbour fails at once, the same way each run), no ICMP rate limits,
# no redirects, and fragment reassembly timeouts of 1 s.
set -euo pipefail
DT_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/netns.sh
. "$DT_DIR/../lib/netns.sh"

FRAMES=20000 SEED=1 CHUNK=50000 PROOF=1 ONLY="" NAT=0 RULES=0 BRIDGE=0
while getopts "n:s:c:p:o:NRB" opt; do
	case $opt in
	n) FRAMES=$OPTARG ;;
	s) SEED=$OPTARG ;;
	c) CHUNK=$OPTARG ;;
	p) PROOF=$OPTARG ;;
	o) ONLY=$OPTARG ;;
	N) NAT=1 ;;
	R) RULES=1 ;;
	B) BRIDGE=1 ;;
	*) echo "usage: $0 [-n FRAMES] [-s SEED] [-c CHUNK] [-p PROOF_CHUNKS] [-o I,J,...] [-N|-R|-B]" >&2
	   exit 2 ;;
	esac
done

((NAT + RULES + BRIDGE < 2)) || { echo "$0: one of -N, -R and -B" >&2; exit 2; }
# Proofs need the whole chunk (the planted frames among others).
[ -z "$ONLY" ] || PROOF=0

PASS_OBJ=$XFIB_BUILD/tests/dt_pass.bpf.o
PLANT_OBJ=$XFIB_BUILD/tests/dt_plant.bpf.o
DT_CT=$XFIB_BUILD/tests/dt_ct

xfib_init
command -v python3 >/dev/null || skip "missing tool: python3"
for f in "$PASS_OBJ" "$PLANT_OBJ" "$DT_CT"; do
	[ -f "$f" ] || fail "$f not built (make difftest, or make test)"
done
if ((NAT)); then
	# shellcheck source=tests/lib/nf.sh
	. "$DT_DIR/../lib/nf.sh"
	nf_tools nft conntrack
fi

dt() { python3 "$DT_DIR/difftest.py" --config "$XFIB_TMP/topo.json" "$@"; }

# shellcheck disable=SC2034 # the variables are for the tests
dt_add_sink3() {
	SNK3="$XFIB_TAG-0-sink3" R_SNK3=r-sink3 SNK3_IF=sink0
	add_ns "$SNK3"
	link_ns "$SNK3" "$SNK3_IF" "$RTR" "$R_SNK3"
	router_sysctls "$RTR" "$R_SNK3"
	ip -n "$RTR" addr add 198.18.4.1/24 dev "$R_SNK3"
	ip -n "$RTR" addr add 2001:db8:4::1/64 dev "$R_SNK3" nodad
	ip -n "$RTR" link set dev "$R_SNK3" mtu 1280
	ip -n "$SNK3" link set dev "$SNK3_IF" mtu 1280
	SNK3_MAC=$(mac_of "$SNK3" "$SNK3_IF")
	R_SNK3_MAC=$(mac_of "$RTR" "$R_SNK3")
}

# shellcheck disable=SC2034 # the variables are for the tests
# dt_macs: fixed MACs on every port, so a seed gives the same frames byte
# for byte in every run (random mutations also change MAC bytes).
dt_macs() {
	local ns dev mac
	while read -r ns dev mac; do
		ip -n "$ns" link set dev "$dev" address "$mac" || fail "MAC of $ns/$dev"
	done <<-EOF
		$GEN $GEN_IF 02:00:00:00:01:02
		$RTR $R_GEN 02:00:00:00:01:01
		$SNK $SNK_IF 02:00:00:00:02:02
		$RTR $R_SNK 02:00:00:00:02:01
		$SNK2 $SNK2_IF 02:00:00:00:03:02
		$RTR $R_SNK2 02:00:00:00:03:01
		$SNK3 $SNK3_IF 02:00:00:00:04:02
		$RTR $R_SNK3 02:00:00:00:04:01
	EOF
	GEN_MAC=$(mac_of "$GEN" "$GEN_IF") R_GEN_MAC=$(mac_of "$RTR" "$R_GEN")
	SNK_MAC=$(mac_of "$SNK" "$SNK_IF") R_SNK_MAC=$(mac_of "$RTR" "$R_SNK")
	SNK2_MAC=$(mac_of "$SNK2" "$SNK2_IF") R_SNK2_MAC=$(mac_of "$RTR" "$R_SNK2")
	SNK3_MAC=$(mac_of "$SNK3" "$SNK3_IF") R_SNK3_MAC=$(mac_of "$RTR" "$R_SNK3")
}

# dt_host NS DEV: a capture-only host port: no addresses, no IPv6, GRO
# off, dt_pass attached.
dt_host() {
	ip -n "$1" addr flush dev "$2"
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip netns exec "$1" ethtool -K "$2" gro off >/dev/null
	ip -n "$1" link set dev "$2" xdpdrv obj "$PASS_OBJ" sec xdp ||
		fail "attach dt_pass to $1/$2"
}

# dt_bridge: the bridge run's br-lan, r-sink and r-sink2 its members.
# Sets NB_SNK and NB_SNK2, the devices of the sinks' neighbours.
dt_bridge() {
	local r=(ip -n "$RTR")
	"${r[@]}" addr flush dev "$R_SNK"
	"${r[@]}" addr flush dev "$R_SNK2"
	"${r[@]}" link add br-lan address "$R_SNK_MAC" type bridge stp_state 0 ||
		fail "bridge br-lan"
	"${r[@]}" link set "$R_SNK" master br-lan
	"${r[@]}" link set "$R_SNK2" master br-lan
	"${r[@]}" link set br-lan up
	"${r[@]}" addr add "$R_SNK4/24" dev br-lan
	"${r[@]}" addr add "$R_SNK2_4/24" dev br-lan
	"${r[@]}" addr add "$R_SNK6/64" dev br-lan nodad
	"${r[@]}" addr add "$R_SNK2_6/64" dev br-lan nodad
	router_sysctls "$RTR" br-lan
	bridge -n "$RTR" fdb replace "$SNK_MAC" dev "$R_SNK" master static &&
		bridge -n "$RTR" fdb replace "$SNK2_MAC" dev "$R_SNK2" master static ||
		fail "the sinks' FDB entries"
	NB_SNK=br-lan NB_SNK2=br-lan
	# What sink2 sees the router as: the bridge, whose MAC is r-sink's.
	R_SNK2_MAC=$R_SNK_MAC
}

dt_router() {
	local p n r=(ip -n "$RTR")
	ip netns exec "$RTR" sh -e -c '
		sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_ratemask=0
		sysctl -qw net.ipv4.icmp_msgs_per_sec=100000000
		sysctl -qw net.ipv4.icmp_msgs_burst=100000000
		sysctl -qw net.ipv6.icmp.ratelimit=0 net.ipv6.icmp.ratemask=
		sysctl -qw net.ipv4.ipfrag_time=1 net.ipv6.ip6frag_time=1
		sysctl -qw net.ipv6.auto_flowlabels=0
		sysctl -qw net.ipv4.conf.all.send_redirects=0
		sysctl -qw net.ipv4.conf.default.send_redirects=0
	' || fail "router sysctls"
	for p in $DT_PORTS ${NB_SNK:+br-lan}; do
		for n in ipv4 ipv6; do
			ip netns exec "$RTR" sysctl -qw "net.$n.neigh.$p.mcast_solicit=0" \
				"net.$n.neigh.$p.ucast_solicit=0" "net.$n.neigh.$p.app_solicit=0"
		done
		ip netns exec "$RTR" sysctl -qw "net.ipv4.conf.$p.send_redirects=0"
	done
	"${r[@]}" link set dev "$R_GEN" mtu 2000
	ip -n "$GEN" link set dev "$GEN_IF" mtu 2000
	for n in "$GEN4 $GEN6 $GEN_MAC $R_GEN" "$SNK4 $SNK6 $SNK_MAC ${NB_SNK:-$R_SNK}" \
		"$SNK2_4 $SNK2_6 $SNK2_MAC ${NB_SNK2:-$R_SNK2}" \
		"198.18.4.2 2001:db8:4::2 $SNK3_MAC $R_SNK3"; do
		# shellcheck disable=SC2086 # four words intended
		set -- $n
		"${r[@]}" neigh replace "$1" lladdr "$3" dev "$4" nud permanent
		"${r[@]}" -6 neigh replace "$2" lladdr "$3" dev "$4" nud permanent
	done
	"${r[@]}" route add 198.18.5.0/24 via "$SNK4"
	"${r[@]}" route add 198.18.6.0/24 via 198.18.4.2
	"${r[@]}" route add 198.18.7.0/24 nexthop via "$SNK4" nexthop via "$SNK2_4"
	"${r[@]}" route add 198.18.8.0/24 via "$SNK4" mtu 1400
	"${r[@]}" route add blackhole 198.18.9.0/24
	"${r[@]}" route add unreachable 198.18.10.0/24
	"${r[@]}" route add prohibit 198.18.11.0/24
	"${r[@]}" route add throw 198.18.12.0/24
	"${r[@]}" route add 198.19.0.0/16 via "$GEN4"
	"${r[@]}" -6 route add 2001:db8:5::/64 via "$SNK6"
	"${r[@]}" -6 route add 2001:db8:6::/64 via 2001:db8:4::2
	"${r[@]}" -6 route add 2001:db8:7::/64 nexthop via "$SNK6" nexthop via "$SNK2_6"
	"${r[@]}" -6 route add 2001:db8:8::/64 via "$SNK6" mtu 1400
	"${r[@]}" -6 route add blackhole 2001:db8:9::/64
	"${r[@]}" -6 route add unreachable 2001:db8:a::/64
	"${r[@]}" -6 route add prohibit 2001:db8:b::/64
	"${r[@]}" -6 route add throw 2001:db8:c::/64
	"${r[@]}" -6 route add 2001:db8:e::/64 via "$GEN6"
}

# The NAT run's addresses and ports (dt_nat_router, natcases.py).
NAT_SNAT4=198.18.2.100 NAT_SNAT6=2001:db8:2::100
NAT_LAN4=198.19.0.0/16 NAT_LAN6=2001:db8:e::/64
NAT_PUBLIC_PORT=8080 NAT_SERVER_PORT=5201

# dt_nat_router: the NAT run's ruleset: a home router with LAN ports r-gen
# and r-sink3, WAN port r-sink and a server on sink2. The barriers
# (wire.py: UDP from port 7 to port 9) are let through everywhere.
dt_nat_router() {
	ip netns exec "$RTR" nft -f - <<-NFT || fail "loading the NAT ruleset"
	table inet dt_nat {
		chain forward {
			type filter hook forward priority filter; policy drop;
			ct state invalid drop
			ct state established,related accept
			iifname { "$R_GEN", "$R_SNK3" } oifname "$R_SNK" accept
			ct status dnat accept
			udp sport 7 udp dport 9 accept comment "the test's barriers"
		}
		chain prerouting {
			type nat hook prerouting priority dstnat;
			iifname "$R_SNK" ip daddr $R_SNK4 meta l4proto { tcp, udp } \
				th dport $NAT_PUBLIC_PORT dnat ip to $SNK2_4:$NAT_SERVER_PORT
			iifname "$R_SNK" ip6 daddr $R_SNK6 meta l4proto { tcp, udp } \
				th dport $NAT_PUBLIC_PORT dnat ip6 to [$SNK2_6]:$NAT_SERVER_PORT
		}
		chain postrouting {
			type nat hook postrouting priority srcnat;
			oifname "$R_SNK" ip saddr $NAT_LAN4 snat ip to $NAT_SNAT4
			oifname "$R_SNK" ip6 saddr $NAT_LAN6 snat ip6 to $NAT_SNAT6
			oifname "$R_SNK" masquerade
		}
	}
	NFT
	# Without an entry, a TCP segment without SYN is invalid (the kernel
	# would otherwise pick the connection up: state that a later frame of
	# the run could meet). Checksums are not checked by conntrack: with
	# the check, xfib forwards what conntrack would call invalid (a bad
	# TCP/UDP checksum of an established flow; README.md, Netfilter).
	# IPv6's conntrack reassembly gives up after a second, as IPv4's.
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0 \
		net.netfilter.nf_conntrack_checksum=0 \
		net.netfilter.nf_conntrack_frag6_timeout=1 || fail "conntrack sysctls"
}

# ct_reset: conntrack emptied, the chunk's entries created and checked.
ct_reset() {
	ip netns exec "$RTR" conntrack -F 2>/dev/null || fail "conntrack -F"
	dt ctlines --frames "$XFIB_TMP/frames.pkl" | ip netns exec "$RTR" "$DT_CT" ||
		fail "creating the conntrack entries"
	ip netns exec "$RTR" conntrack -L 2>/dev/null |
		dt ctcheck --frames "$XFIB_TMP/frames.pkl" ||
		fail "conntrack -L does not list the entries as created"
}

# dt_rules_router: the policy-routing run's rules and tables (the
# networks: rulecases.py). Main gets a default route to the sink.
dt_rules_router() {
	local fam r via_s via_s2 via_s3 via_g half second
	local -A src_in=([4]=198.19.16.0/20 [6]=2001:db8:e:0:1::/80)
	local -A src_not=([4]=198.19.32.0/20 [6]=2001:db8:e:0:2::/80)
	for fam in 4 6; do
		if [ $fam = 4 ]; then
			via_s=$SNK4 via_s2=$SNK2_4 via_s3=198.18.4.2 via_g=$GEN4
			half=25 second=198.18.22.128/25
		else
			via_s=$SNK6 via_s2=$SNK2_6 via_s3=2001:db8:4::2 via_g=$GEN6
			half=65 second=2001:db8:16:0:8000::/65
		fi
		r=(ip -n "$RTR" "-$fam")
		# n NET [LEN]: network NET of rulecases.py in this family.
		n() { if [ $fam = 4 ]; then echo "198.18.$1.0/${2:-24}"; else
			printf '2001:db8:%x::/%s\n' "$1" "${2:-64}"; fi; }
		"${r[@]}" route add default via "$via_s"
		"${r[@]}" route add "$(n 16)" via "$via_s2" table 100
		"${r[@]}" route add throw "$(n 17)" table 100
		"${r[@]}" route add "$(n 5)" via "$via_s3" table 100
		"${r[@]}" route add "$(n 17)" via "$via_g" table 210
		"${r[@]}" route add "$(n 18 $half)" via "$via_s2" table 300
		"${r[@]}" route add "$(n 19)" via "$via_s2" table 400
		"${r[@]}" route add "$(n 5)" via "$via_s2" table 400
		"${r[@]}" route add "$(n 19)" via "$via_s3" table 410
		"${r[@]}" route add default via "$via_s3" table 420
		"${r[@]}" route add "$(n 20)" via "$via_s2" table 500
		"${r[@]}" route add "$(n 21)" via "$via_s2" table 600
		"${r[@]}" route add "$(n 21)" via "$via_g" table 610
		"${r[@]}" route add "$(n 22)" via "$via_s2" table 710
		"${r[@]}" route add default via "$via_g" table 720
		"${r[@]}" route add default via "$via_s3" table 910
		"${r[@]}" route add throw "$(n 26)" table 910
		"${r[@]}" rule add pref 50 fwmark 0x1 lookup 100
		"${r[@]}" rule add pref 200 from "${src_in[$fam]}" lookup 100
		"${r[@]}" rule add pref 210 from "${src_in[$fam]}" lookup 210
		"${r[@]}" rule add pref 300 to "$(n 18)" lookup 300
		"${r[@]}" rule add pref 400 iif "$R_SNK3" lookup 400
		"${r[@]}" rule add pref 410 iif "$R_GEN" to "$(n 19)" lookup 410
		"${r[@]}" rule add pref 420 iif "$R_SNK2" lookup 420
		"${r[@]}" rule add pref 500 tos 0x10 lookup 500
		"${r[@]}" rule add pref 600 ipproto udp dport 5000-5999 lookup 600
		"${r[@]}" rule add pref 610 ipproto tcp sport 1000-1999 lookup 610
		"${r[@]}" rule add pref 700 not from "${src_not[$fam]}" to "$(n 22)" goto 720
		"${r[@]}" rule add pref 705 nop
		"${r[@]}" rule add pref 710 to "$(n 22)" lookup 710
		"${r[@]}" rule add pref 720 to "$second" lookup 720
		"${r[@]}" rule add pref 800 to "$(n 23)" blackhole
		"${r[@]}" rule add pref 810 to "$(n 24)" unreachable
		"${r[@]}" rule add pref 820 to "$(n 25)" prohibit
		"${r[@]}" rule add pref 900 lookup main suppress_prefixlength 0
		"${r[@]}" rule add pref 910 lookup 910
	done 2>&1 | { ! grep . >&2; } || fail "installing the rule set"
}

# rules_walked FAM: xfibctl rules -j equals ip -j rule, and every rule is
# walked in XDP.
rules_walked() {
	local x k
	x=$(rctl rules -j "-$1" | jq -c ".ipv$1.rules")
	k=$(ip -n "$RTR" "-$1" -j rule | jq -c .)
	[ "$(jq -c 'map(del(.xfib))' <<<"$x")" = "$k" ] &&
		[ "$(jq '[.[] | select(.xfib.class == "kernel")] | length' <<<"$x")" = 0 ]
}

# dt_config: the topology as difftest.py reads it.
dt_config() {
	local addrs
	addrs=$(ip -n "$RTR" -j addr show | jq -c '[.[].addr_info[].local]')
	jq -n --argjson addrs "$addrs" \
		--arg gen "$GEN" --arg snk "$SNK" --arg snk2 "$SNK2" --arg snk3 "$SNK3" \
		--arg rtr "$RTR" --arg gen_mac "$GEN_MAC" --arg r_gen "$R_GEN_MAC" \
		--arg sink "$SNK_MAC" --arg r_sink "$R_SNK_MAC" \
		--arg sink2 "$SNK2_MAC" --arg r_sink2 "$R_SNK2_MAC" \
		--arg sink3 "$SNK3_MAC" --arg r_sink3 "$R_SNK3_MAC" \
		--arg public4 "$R_SNK4" --arg public6 "$R_SNK6" \
		--arg server4 "$SNK2_4" --arg server6 "$SNK2_6" \
		--arg snat4 "$NAT_SNAT4" --arg snat6 "$NAT_SNAT6" \
		--argjson public_port "$NAT_PUBLIC_PORT" \
		--argjson server_port "$NAT_SERVER_PORT" --argjson nat "$NAT" '
	def nets(f): {gen: (1 | f), sink: (2 | f), sink2: (3 | f), sink3: (4 | f),
		routed: (5 | f), routed3: (6 | f), mpath: (7 | f), mtu: (8 | f),
		blackhole: (9 | f), unreach: (10 | f), prohibit: (11 | f),
		throw: (12 | f), unrouted: (13 | f), remote: (14 | f)};
	{
		ns: {rtr: $rtr},
		capture: {gen: [$gen, "gen0"], sink: [$snk, "sink0"],
			  sink2: [$snk2, "sink0"], sink3: [$snk3, "sink0"]},
		mac: {gen: $gen_mac, r_gen: $r_gen, sink: $sink, r_sink: $r_sink,
		      sink2: $sink2, r_sink2: $r_sink2, sink3: $sink3,
		      r_sink3: $r_sink3},
		net4: nets("198.18.\(.)"),
		net6: nets("2001:db8:\("0123456789abcdef"[.:. + 1])"),
		mtu: {gen: 2000, sink: 1500, sink3: 1280, route: 1400},
		mpath: ["198.18.7.0/24", "2001:db8:7::/64"],
		unique_src: {"4": "198.19.0.0/16", "6": "2001:db8:e::/64"},
		router_addrs: $addrs
	} + if $nat == 0 then {} else {
		nat: {wan: "sink", public: [$public4, $public6],
		      public_port: $public_port, server: [$server4, $server6],
		      server_port: $server_port, snat_to: [$snat4, $snat6]}
	} end' >"$XFIB_TMP/topo.json"
}

# ---- modes --------------------------------------------------------------

no_xdp_on_router() {
	local p
	for p in $DT_PORTS; do
		! xdp_prog_on "$RTR" "$p" || fail "an XDP program is still on $RTR/$p"
	done
}

algo_of() { rctl status -j | jq -r ".ipv$1.algorithm"; }

# set_algos MODE: xfib runs the automatic choice (bsearch4 and bsearch6
# for this small table); xfib-tries forces dir24_8 and trie6.
set_algos() {
	local a4=auto a6=auto w4=bsearch4 w6=bsearch6 deadline=$((SECONDS + 10))
	[ "$1" = xfib ] || { a4=dir24_8 a6=trie6 w4=dir24_8 w6=trie6; }
	rctl algo ipv4 "$a4" >/dev/null || fail "xfibctl algo ipv4 $a4"
	rctl algo ipv6 "$a6" >/dev/null || fail "xfibctl algo ipv6 $a6"
	until [ "$(algo_of 4)" = "$w4" ] && [ "$(algo_of 6)" = "$w6" ]; do
		((SECONDS < deadline)) || fail "algorithms $(algo_of 4) $(algo_of 6), not $w4 $w6"
		sleep 0.1
	done
}

kfwd() { echo $(($(kfwd4 "$RTR") + $(kfwd6 "$RTR"))); }
xfwd() {
	echo $(($(counter forwarded_v4) + $(counter forwarded_v6) +
		$(counter forwarded_nat_v4) + $(counter forwarded_nat_v6)))
}

# run_mode MODE OUT: sends the chunk's frames with the router in MODE
# (kernel, plant, xfib or xfib-tries) and captures into OUT.
run_mode() {
	local m=$1 out=$2 k0 x0 p
	case $m in
	kernel) no_xdp_on_router ;;
	plant)
		no_xdp_on_router
		ip -n "$RTR" link set dev "$R_GEN" xdpdrv obj "$PLANT_OBJ" sec xdp ||
			fail "attach dt_plant to $R_GEN" ;;
	xfib | xfib-tries)
		no_xdp_on_router
		set_algos "$m"
		# shellcheck disable=SC2086 # the port list is words
		rctl attach $DT_PORTS || fail "xfibctl attach $DT_PORTS"
		for p in $DT_PORTS; do
			xdp_prog_on "$RTR" "$p" || fail "no XDP program on $p after attach"
		done ;;
	esac
	((NAT == 0)) || ct_reset
	k0=$(kfwd)
	x0=$(xfwd)
	n4=$(counter forwarded_nat_v4)
	n6=$(counter forwarded_nat_v6)
	log "chunk $CHUNK_NO: $m"
	dt run --frames "$XFIB_TMP/frames.pkl" --settle "$SETTLE" "$out" ||
		fail "difftest run ($m)"
	RUN_K=$(($(kfwd) - k0))
	RUN_X=$(($(xfwd) - x0))
	RUN_N4=$(($(counter forwarded_nat_v4) - n4))
	RUN_N6=$(($(counter forwarded_nat_v6) - n6))
	log "chunk $CHUNK_NO: $m: router kernel forwarded $RUN_K, xfib forwarded $RUN_X" \
		"${NAT_LOG:+(with NAT: IPv4 $RUN_N4, IPv6 $RUN_N6)}"
	case $m in
	kernel | plant) ((RUN_X == 0)) || fail "xfib forwarded $RUN_X frames in a $m run" ;;
	esac
	case $m in
	plant) ip -n "$RTR" link set dev "$R_GEN" xdpdrv off ;;
	xfib | xfib-tries)
		# shellcheck disable=SC2086 # the port list is words
		rctl detach $DT_PORTS || fail "xfibctl detach $DT_PORTS" ;;
	esac
}

# ---- main ---------------------------------------------------------------

topo_create 0
topo_add_sink2
dt_add_sink3
dt_macs
DT_PORTS="$R_GEN $R_SNK $R_SNK2 $R_SNK3"
for h in "$GEN $GEN_IF" "$SNK $SNK_IF" "$SNK2 $SNK2_IF" "$SNK3 $SNK3_IF"; do
	# shellcheck disable=SC2086 # two words intended
	dt_host $h
done
((BRIDGE == 0)) || dt_bridge
dt_router
((NAT == 0)) || dt_nat_router
((RULES == 0)) || dt_rules_router
wait_ipv6_ready "$RTR"
dt_config
xfibd_start
wait_prefixes_match
GEN_ARGS=() SETTLE=0 NAT_LOG=""
if ((NAT)); then
	NAT_LOG=1
	# Before any frame: xfib runs its conntrack gate.
	wait_nf_mode 4 gate
	wait_nf_mode 6 gate
	# IPv6 reassembly queues of conntrack (which the run cannot count)
	# send their errors after a second (nf_conntrack_frag6_timeout).
	GEN_ARGS=(--nat) SETTLE=1.5
	# Random frames have a flow each, numbered within their chunk
	# (natcases.RANDOM_FLOWS).
	((CHUNK <= 9000)) || CHUNK=9000
fi
if ((RULES)); then
	GEN_ARGS=(--rules)
	for f in 4 6; do
		wait_until 10 rules_walked $f || {
			rctl rules "-$f" >&2
			fail "ipv$f: the rules are not all walked in XDP, or differ from the kernel's"
		}
	done
fi

failed=0 NAT_V4=0 NAT_V6=0
t_start=$SECONDS
first=0
CHUNK_NO=0
while ((first < FRAMES)); do
	n=$((FRAMES - first < CHUNK ? FRAMES - first : CHUNK))
	CHUNK_NO=$((CHUNK_NO + 1))
	if [ -n "$ONLY" ]; then
		dt gen "${GEN_ARGS[@]}" --seed "$SEED" --only "$ONLY" "$XFIB_TMP/frames.pkl" ||
			fail "difftest gen"
	else
		dt gen "${GEN_ARGS[@]}" --seed "$SEED" --first "$first" --count "$n" \
			"$XFIB_TMP/frames.pkl" || fail "difftest gen"
	fi
	run_mode kernel "$XFIB_TMP/kernel.pkl"
	K_FWD=$RUN_K
	# The rules decide the crafted frames as meant (not a vacuous pass).
	if ((RULES && CHUNK_NO == 1)) && [ -z "$ONLY" ]; then
		dt rulecheck --frames "$XFIB_TMP/frames.pkl" "$XFIB_TMP/kernel.pkl" ||
			fail "chunk $CHUNK_NO: the rules do not decide the frames as rulecases.py says"
	fi
	if ((CHUNK_NO <= PROOF)); then
		run_mode plant "$XFIB_TMP/plant.pkl"
	fi
	run_mode xfib "$XFIB_TMP/xfib.pkl"
	X_FWD=$RUN_X X_NAT="$RUN_N4 $RUN_N6"
	run_mode xfib-tries "$XFIB_TMP/xfib-tries.pkl"
	X2_FWD=$RUN_X X2_NAT="$RUN_N4 $RUN_N6"
	if ((CHUNK_NO <= PROOF)); then
		run_mode kernel "$XFIB_TMP/kernel2.pkl"
		dt compare --frames "$XFIB_TMP/frames.pkl" --names kernel,kernel2 \
			--label "chunk $CHUNK_NO: kernel vs kernel" \
			"$XFIB_TMP/kernel.pkl" "$XFIB_TMP/kernel2.pkl" || failed=1
		dt compare --frames "$XFIB_TMP/frames.pkl" --names kernel,plant \
			--expect plant --max 3 --label "chunk $CHUNK_NO: kernel vs planted" \
			"$XFIB_TMP/kernel.pkl" "$XFIB_TMP/plant.pkl" || failed=1
	fi
	for x in xfib xfib-tries; do
		dt compare --frames "$XFIB_TMP/frames.pkl" --names "kernel,$x" \
			--label "chunk $CHUNK_NO: kernel vs $x" \
			"$XFIB_TMP/kernel.pkl" "$XFIB_TMP/$x.pkl" || failed=1
	done
	# Not a vacuous pass: xfib forwarded most of what the kernel did.
	for x in "$X_FWD" "$X2_FWD"; do
		((x * 2 >= K_FWD && x > 0)) ||
			fail "chunk $CHUNK_NO: xfib forwarded $x frames, the kernel $K_FWD without it"
	done
	# And in the NAT run, it translated frames of both families.
	for x in "$X_NAT" "$X2_NAT"; do
		# shellcheck disable=SC2086 # two numbers
		set -- $x
		if ((NAT)) && [ -z "$ONLY" ] && (($1 == 0 || $2 == 0)); then
			fail "chunk $CHUNK_NO: xfib forwarded $1 IPv4 and $2 IPv6 frames with NAT"
		fi
	done
	# shellcheck disable=SC2086 # two numbers
	set -- $X_NAT
	NAT_V4=$((NAT_V4 + $1)) NAT_V6=$((NAT_V6 + $2))
	[ -z "$ONLY" ] || break
	first=$((first + n))
done
log "$FRAMES frames (seed $SEED) in $((SECONDS - t_start)) s"
((NAT == 0)) ||
	log "NAT run: xfib forwarded $NAT_V4 IPv4 and $NAT_V6 IPv6 frames with NAT (one xfib run)"
((failed == 0)) || fail "the router behaves differently with xfib (see above)"
log "PASS: kernel and xfib forward, answer and drop alike"
