#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A router whose LAN is a Linux bridge, as home routers and hypervisors
# build it: br-lan with the LAN address, member ports r-sink (host h1,
# the topology's sink) and r-lan2 (host h2), and the WAN port r-gen. The
# members are attached, not the bridge. Both families:
#  - WAN to each LAN host and back is forwarded in XDP, the kernel's
#    forwarding counters flat; the frames carry the bridge's MAC out of
#    the member the bridge's FDB names, the WAN port's back, TTL - 1;
#    each member counts what it took and sent;
#  - LAN-to-LAN traffic is bridged by the kernel, untouched;
#  - with a 4 s ageing time, a busy host's FDB entry does not age out
#    although the bridge sees none of its routed frames;
#  - a host that moves to another member is followed;
#  - a member down, or out of STP's forwarding state, gets nothing from
#    XDP, and what comes in by the latter goes to the kernel;
#  - a bridge-family netfilter chain sends the bridge's routed traffic
#    to the kernel, whose bridge hooks see it;
#  - with a home router's stateful ruleset (masquerade out of the WAN),
#    LAN flows are forwarded in XDP with conntrack's NAT.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/nf.sh
. "$(dirname "$0")/../lib/nf.sh"
xfib_init
nf_tools nft conntrack bridge

topo_create 0
BR=br-lan
H2="$XFIB_TAG-0-lan2" H3="$XFIB_TAG-0-lan3"
H2_4=$NET4_S.3 H2_6=$NET6_S::3
R=(ip -n "$RTR")

# The LAN: r-sink gives its addresses to the bridge and joins it, with a
# second member to h2. No STP: members forward as soon as they are up.
# The bridge's MAC is set, as routers set it: otherwise it is its
# members' lowest, and changes when a member with a lower one joins.
"${R[@]}" addr flush dev "$R_SNK"
"${R[@]}" link add "$BR" address 02:00:00:00:b0:01 type bridge stp_state 0
"${R[@]}" link set "$R_SNK" master "$BR"
add_ns "$H2"
link_ns "$H2" lan0 "$RTR" r-lan2
"${R[@]}" link set r-lan2 master "$BR"
"${R[@]}" link set "$BR" up
"${R[@]}" addr add "$R_SNK4/24" dev "$BR"
"${R[@]}" addr add "$R_SNK6/64" dev "$BR" nodad
router_sysctls "$RTR" "$BR"

# lan_host NS: h2's addresses on NS's lan0, routes by the bridge, GRO on.
lan_host() {
	ip -n "$1" addr add "$H2_4/24" dev lan0
	ip -n "$1" addr add "$H2_6/64" dev lan0 nodad
	ip -n "$1" route add default via "$R_SNK4"
	ip -n "$1" -6 route add default via "$R_SNK6"
	ip netns exec "$1" ethtool -K lan0 gro on >/dev/null
}
lan_host "$H2"
wait_ipv6_ready "$RTR" "$H2"
BR_MAC=$(mac_of "$RTR" "$BR")
H2_MAC=$(mac_of "$H2" lan0)

xfibd_start
rctl attach "$R_GEN" "$R_SNK" r-lan2 || fail "attach the WAN port and the bridge's members"
for dst in "$SNK4" "$SNK6" "$H2_4" "$H2_6"; do
	fam=4
	[[ $dst != *:* ]] || fam=6
	expect_xdp "$fam" "$dst"
done

# pstat PORT JQ: a value of PORT's entry in stats --ports -j.
pstat() {
	rctl stats --ports -j | jqe -r --arg p "$1" ".[] | select(.ifname == \$p) | $2" ||
		fail "stats --ports -j: no $2 for $1"
}

# ---- the frames ----------------------------------------------------------

capture_start "$SNK" "$SNK_IF" "icmp and dst host $SNK4"
nping "$GEN" -4 -c 1 "$SNK4" >/dev/null || fail "ping h1"
capture_wait
check_frame "$CAP_TEXT" "$BR_MAC" "$SNK_MAC" 63
capture_start "$GEN" "$GEN_IF" "icmp6 and src host $H2_6 and ip6[40] == 129"
nping "$GEN" -6 -c 1 "$H2_6" >/dev/null || fail "ping h2"
capture_wait
check_frame "$CAP_TEXT" "$R_GEN_MAC" "$GEN_MAC" 63

# ---- per member, both ways ------------------------------------------------

N=20
for fam in 4 6; do
	for hp in "$SNK:$R_SNK" "$H2:r-lan2"; do
		port=${hp#*:}
		dst=$SNK4
		[ "$port" = "$R_SNK" ] || dst=$H2_4
		[ "$fam" = 4 ] || { dst=$SNK6; [ "$port" = "$R_SNK" ] || dst=$H2_6; }
		t0=$(pstat "$port" ".tx.packets")
		r0=$(pstat "$port" ".received_as.forwarded_v$fam.packets")
		snapshot
		ping_all "$GEN" "$fam" "$dst" "$N"
		deltas
		dx=D_X$fam
		((${!dx} == 2 * N && D_K4 == 0 && D_K6 == 0)) ||
			fail "IPv$fam WAN <-> $port: xfib +${!dx}, kernel +$D_K4/+$D_K6, expected $((2 * N)) in XDP"
		dt=$(($(pstat "$port" ".tx.packets") - t0))
		dr=$(($(pstat "$port" ".received_as.forwarded_v$fam.packets") - r0))
		((dt == N && dr == N)) ||
			fail "IPv$fam via $port: sent +$dt, forwarded in +$dr, expected $N each"
	done
done
log "each member sent the echoes and took the replies in XDP"

# ---- LAN to LAN: bridged, not routed -------------------------------------

n0=$(counter pass_not_for_us)
snapshot
ping_all "$SNK" 4 "$H2_4" "$N"
ping_all "$SNK" 6 "$H2_6" "$N"
deltas
((D_X4 == 0 && D_X6 == 0 && D_K4 == 0 && D_K6 == 0)) ||
	fail "LAN-to-LAN traffic was routed: xfib +$D_X4/+$D_X6, kernel +$D_K4/+$D_K6"
(($(counter pass_not_for_us) - n0 >= 4 * N)) ||
	fail "LAN-to-LAN frames did not go to the bridge as not for the router"
log "LAN-to-LAN: bridged by the kernel"

# ---- ageing: a busy host's entry stays --------------------------------------

"${R[@]}" link set "$BR" type bridge ageing_time 400
f0=$(counter pass_fdb)
l0=$(counter pass_bridge_learn)
stream_start age 4 "$SNK4" -c 160 -i 0.05
snapshot
stream_answered age 160 "pings to h1 over 8 s, twice the 4 s ageing time"
deltas
fdb=$(bridge -n "$RTR" fdb show br "$BR")
grep -qi "^$SNK_MAC dev $R_SNK master" <<<"$fdb" ||
	fail "h1's FDB entry aged out: $(tr '\n' ';' <<<"$fdb")"
((D_K4 == 0 && $(counter pass_fdb) == f0 && $(counter pass_bridge_learn) == l0)) ||
	fail "h1's traffic left XDP while its FDB entry should have been renewed: kernel +$D_K4, pass_fdb +$(($(counter pass_fdb) - f0)), pass_bridge_learn +$(($(counter pass_bridge_learn) - l0))"
log "ageing: h1's entry renewed through 8 s (twice its ageing time) of XDP-only traffic"
"${R[@]}" link set "$BR" type bridge ageing_time 30000

# ---- a host moves to another member -------------------------------------

add_ns "$H3"
link_ns "$H3" lan0 "$RTR" r-lan3
"${R[@]}" link set r-lan3 master "$BR"
ip netns exec "$H3" ethtool -K lan0 gro on >/dev/null
rctl attach r-lan3 || fail "attach r-lan3"
# h2 goes to h3's port, its MAC and addresses with it; its old port
# stays up, with another MAC and no address. So that its first frame
# there is IP (the bridge learns from any frame it sees: an ARP request,
# an MLD report), it knows the router's MAC already and has IPv6 off
# until then.
# The router's neighbour entries for h2 are made permanent: what is
# tested is the bridge's move, not whether the router's probes of h2's
# MAC, should one be running, reach it while it moves.
"${R[@]}" neigh replace "$H2_4" lladdr "$H2_MAC" dev "$BR" nud permanent
"${R[@]}" -6 neigh replace "$H2_6" lladdr "$H2_MAC" dev "$BR" nud permanent
ip -n "$H2" addr flush dev lan0
ip -n "$H2" link set lan0 address 02:00:00:00:42:42
ip netns exec "$H3" sysctl -qw net.ipv6.conf.lan0.disable_ipv6=1
ip -n "$H3" link set lan0 address "$H2_MAC"
ip -n "$H3" addr add "$H2_4/24" dev lan0
ip -n "$H3" route add default via "$R_SNK4"
ip -n "$H3" neigh add "$R_SNK4" lladdr "$BR_MAC" dev lan0 nud permanent
l0=$(counter pass_bridge_learn)
nping "$H3" -4 -c 1 "$GEN4" >/dev/null ||
	fail "h2 on its new port cannot reach the WAN ($(stats_line))"
(($(counter pass_bridge_learn) == l0 + 1)) ||
	fail "h2's first frame on its new port was not left to the bridge to learn: pass_bridge_learn +$(($(counter pass_bridge_learn) - l0))"
ip netns exec "$H3" sysctl -qw net.ipv6.conf.lan0.disable_ipv6=0
ip -n "$H3" addr add "$H2_6/64" dev lan0 nodad
ip -n "$H3" -6 route add default via "$R_SNK6"
wait_ipv6_ready "$H3"
t2=$(pstat r-lan2 ".tx.packets")
t3=$(pstat r-lan3 ".tx.packets")
expect_xdp 4 "$H2_4"
expect_xdp 6 "$H2_6"
(($(pstat r-lan2 ".tx.packets") == t2 && $(pstat r-lan3 ".tx.packets") > t3)) ||
	fail "after the move, r-lan2 sent +$(($(pstat r-lan2 ".tx.packets") - t2)), r-lan3 +$(($(pstat r-lan3 ".tx.packets") - t3))"
log "h2 followed to r-lan3"

# ---- a member down, a member blocked ----------------------------------------

t3=$(pstat r-lan3 ".tx.packets")
"${R[@]}" link set r-lan3 down
out=$(nping "$GEN" -4 -q -c 3 -i 0.1 "$H2_4" 2>&1) || true
grep -q ' 0 received' <<<"$out" || fail "h2 answered behind a member that is down: $out"
(($(pstat r-lan3 ".tx.packets") == t3)) || fail "XDP sent to a member that is down"
"${R[@]}" link set r-lan3 up
expect_xdp 4 "$H2_4"
log "member down: nothing from XDP; up: XDP again"

# A member out of STP's forwarding state: disabled (with the bridge's STP
# off, the kernel puts a port set to blocking back to forwarding at once;
# xfib treats every state but forwarding alike).
bridge -n "$RTR" link set dev "$R_SNK" state 0 || fail "disable $R_SNK"
t1=$(pstat "$R_SNK" ".tx.packets")
f0=$(counter pass_fdb)
b0=$(pstat "$R_SNK" ".received_as.pass_bridge.packets")
out=$(nping "$GEN" -4 -q -c 3 -i 0.1 "$SNK4" 2>&1) || true
grep -q ' 0 received' <<<"$out" || fail "h1 answered behind a disabled member: $out"
out=$(nping "$SNK" -4 -q -c 3 -i 0.1 "$GEN4" 2>&1) || true
grep -q ' 0 received' <<<"$out" || fail "h1 reached the WAN by a disabled member: $out"
(($(pstat "$R_SNK" ".tx.packets") == t1)) || fail "XDP sent to a disabled member"
(($(counter pass_fdb) >= f0 + 3)) || fail "routes to a disabled member were not left to the kernel"
(($(pstat "$R_SNK" ".received_as.pass_bridge.packets") >= b0 + 3)) ||
	fail "frames in by a disabled member were not left to the bridge"
bridge -n "$RTR" link set dev "$R_SNK" state 3 || fail "enable $R_SNK"
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
log "member disabled: the kernel's; forwarding again: XDP's"

# ---- bridge-family netfilter ----------------------------------------------------

ip netns exec "$RTR" nft -f - <<'NFT' || fail "loading a bridge table"
table bridge brf {
	chain in {
		type filter hook input priority 0;
		counter comment "seen"
	}
}
NFT
# routed_by_kernel: an echo to h1 and its reply forwarded by the kernel,
# none in XDP (xfibd reads nftables again on its change notification).
routed_by_kernel() {
	snapshot
	nping "$GEN" -4 -c 1 "$SNK4" >/dev/null 2>&1 || return 1
	deltas
	((D_X4 == 0 && D_K4 == 2))
}
wait_until 5 routed_by_kernel ||
	fail "with a bridge input chain, routed traffic of the bridge stayed in XDP"
seen=$(ip netns exec "$RTR" nft -j list table bridge brf |
	jq '[.nftables[].rule? | .expr[]? | .counter?.packets // empty] | add')
((seen > 0)) || fail "the bridge's input chain saw no frame"
ip netns exec "$RTR" nft delete table bridge brf
expect_xdp 4 "$SNK4"
log "bridge-family chains: the kernel routes through the bridge; without them XDP again"

# ---- a home router's stateful ruleset ------------------------------------------

hosts_fill_checksums "$GEN:$GEN_IF" "$SNK:$SNK_IF"
ip netns exec "$RTR" nft -f - <<NFT || fail "loading the home router ruleset"
table inet home {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state invalid drop
		ct state established,related accept
		iifname "$BR" oifname "$R_GEN" accept
	}
	chain postrouting {
		type nat hook postrouting priority srcnat;
		oifname "$R_GEN" masquerade
	}
}
NFT
wait_nf_mode 4 gate
wait_nf_mode 6 gate
for fam in 4 6; do
	dst=$GEN4 me=$R_GEN4
	[ "$fam" = 4 ] || { dst=$GEN6; me=$R_GEN6; }
	c=forwarded_nat_v$fam kf=kfwd$fam
	x0=$(counter "$c")
	k0=$("$kf" "$RTR")
	nping "$SNK" "-$fam" -q -c 200 -i 0.01 "$dst" >"$XFIB_TMP/home$fam.out" 2>&1 &
	XFIB_STREAMS[home$fam]=$!
	XFIB_PIDS+=("$!")
	wait_until 10 counter_reached "$c" $((x0 + 8)) ||
		fail "IPv$fam LAN flow through the bridge: never NAT-forwarded in XDP ($(stats_line))"
	k1=$("$kf" "$RTR")
	stream_answered "home$fam" 200 "IPv$fam pings from h1 to the WAN"
	late=$(($("$kf" "$RTR") - k1))
	share "LAN ping stream IPv$fam through the bridge" $(($(counter "$c") - x0)) $(($("$kf" "$RTR") - k0))
	((late == 0)) || fail "IPv$fam LAN flow: +$late forwarded by the kernel after XDP took it"
	# Echo requests only: not a neighbour probe the router may send.
	if [ "$fam" = 4 ]; then
		capture_start "$GEN" "$GEN_IF" "icmp and icmp[icmptype] == icmp-echo"
	else
		capture_start "$GEN" "$GEN_IF" "icmp6 and ip6[40] == 128"
	fi
	nping "$SNK" "-$fam" -c 1 "$dst" >/dev/null || fail "IPv$fam ping from h1"
	capture_wait
	[[ $CAP_TEXT == *"$me > $dst"* ]] ||
		fail "IPv$fam: the WAN saw the echo not from $me: $CAP_TEXT"
done
log "home ruleset: LAN flows masqueraded in XDP through the bridge"
