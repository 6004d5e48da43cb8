#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibctl flows on a router with a stateful nftables ruleset (forward
# policy drop, invalid dropped, established accepted, masquerade out of
# r-sink2), xfib attached with the default --netfilter=conntrack.
#  - Running flows: a masqueraded TCP flow per family (gen to sink2), a
#    plain TCP flow, a UDP flow answered datagram for datagram and a ping
#    stream (gen to sink), and a masqueraded ping stream (gen to sink2). Each is listed once with its tuple (gen's and
#    sink2's own view of the ports: ss), conntrack's state, the fast path
#    yes once xfibd has made it liberal, for the masqueraded ones the
#    router's r-sink2 address and port as their source NAT, and each
#    direction's destination routed (translated for the replies of the
#    masqueraded flows), egress port and counter.
#  - Flows the gate does not forward, with the program's reasons: a UDP
#    flow not replied (pass_ct_new), an idle TCP connection, established
#    but never made liberal, for no packet of it has reached XDP since
#    (pass_ct_learn), the router's own connection with the ftp helper
#    (pass_ct_nat), an entry in zone 5 (pass_ct_new).
#  - An entry to an address of sink's net nobody answers for: its original
#    direction pass_neigh out of r-sink.
#  - -4 and -6 list their family's flows only; the text lists the same
#    flows as -j, with the same NAT and egress ports.
#  - Through a two-way multipath route, 32 UDP flows that differ only in
#    their source port: each is listed leaving by the member the
#    dataplane's flow hash gives its addresses, protocol and ports, and
#    its datagrams arrive at that member's sink.
#  - With the ruleset gone (mode forward), the same entries are listed as
#    forwarded without conntrack; with a netdev ingress chain on r-gen,
#    the plain flow's original direction, which enters by r-gen, goes to
#    the kernel (pass_netfilter), its replies do not.
# shellcheck disable=SC2016 # the $names in single quotes are jq's
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/nf.sh
. "$(dirname "$0")/../lib/nf.sh"
xfib_init
nf_tools nft conntrack socat ss python3

topo_up sink2
hosts_fill_checksums "$GEN:$GEN_IF" "$SNK:$SNK_IF" "$SNK2:$SNK2_IF"

# The helper is set in the output hook, for the router's own connections:
# off the forward path, it leaves the families in gate mode.
ip netns exec "$RTR" nft -f - <<NFT || fail "loading the ruleset"
table inet fw {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state invalid counter drop
		ct state established,related accept
		icmp type echo-request accept
		icmpv6 type echo-request accept
		tcp dport { 5201, 5202, 5203, 5204 } accept
		udp dport { 5300, 5301 } accept
	}
	chain postrouting {
		type nat hook postrouting priority srcnat;
		oifname "$R_SNK2" masquerade
	}
}
table inet helpers {
	ct helper ftp-standard {
		type "ftp" protocol tcp;
	}
	chain output {
		type filter hook output priority filter;
		tcp dport 21 ct helper set "ftp-standard"
	}
}
NFT
wait_nf_mode 4 gate
wait_nf_mode 6 gate
# The entry of a UDP flow not replied lives through the test however slow.
ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_udp_timeout=300

# trickle NS DST PORT: a TCP connection from NS to DST:PORT carrying 100
# bytes every 50 ms for two minutes (ended at exit).
trickle() {
	local ns=$1 dst=$2 port=$3 tcp=TCP
	[[ $dst != *:* ]] || { tcp=TCP6; dst="[$dst]"; }
	for _ in $(seq 2400); do head -c 100 /dev/zero; sleep 0.05; done |
		ip netns exec "$ns" socat -u - "$tcp:$dst:$port" 2>/dev/null &
	XFIB_PIDS+=("$!")
}

NF_PORT=5201 nf_serve "$SNK" socat -u TCP-LISTEN:5201,reuseaddr OPEN:/dev/null
NF_PORT=5202 nf_serve "$SNK2" socat -u TCP-LISTEN:5202,reuseaddr OPEN:/dev/null
NF_PORT=5203 nf_serve "$SNK2" socat -u TCP6-LISTEN:5203,reuseaddr OPEN:/dev/null
NF_PORT=5204 nf_serve "$SNK" socat -u TCP-LISTEN:5204,reuseaddr OPEN:/dev/null
NF_PORT=21 nf_serve "$SNK2" socat -u TCP-LISTEN:21,reuseaddr OPEN:/dev/null
# One peer, no fork: a forked child would outlive the test.
ip netns exec "$SNK" socat UDP-LISTEN:5300,reuseaddr EXEC:cat &
XFIB_PIDS+=("$!")
until ip netns exec "$SNK" ss -Hlun "sport = :5300" | grep -q .; do sleep 0.05; done

trickle "$GEN" "$SNK4" 5201
trickle "$GEN" "$SNK2_4" 5202
trickle "$GEN" "$SNK2_6" 5203
trickle "$RTR" "$SNK2_4" 21
for i in $(seq 2400); do echo "$i"; sleep 0.05; done |
	ip netns exec "$GEN" socat - "UDP:$SNK4:5300" >/dev/null 2>&1 &
XFIB_PIDS+=("$!")
stream_start ping4 4 "$SNK4" -c 2400 -i 0.05
stream_start pingm4 4 "$SNK2_4" -c 2400 -i 0.05
# Not replied: nothing listens on sink's port 5301.
echo x | ip netns exec "$GEN" socat -u - "UDP:$SNK4:5301"
# Connected, then idle: both ends only read.
ip netns exec "$GEN" socat -u "TCP:$SNK4:5204" OPEN:/dev/null &
XFIB_PIDS+=("$!")
# Established and assured: in zone 5, and to a host of sink's net nobody
# answers for.
ip netns exec "$RTR" conntrack -I -p tcp -s "$GEN4" -d "$SNK4" --sport 1111 --dport 2222 \
	--state ESTABLISHED -u SEEN_REPLY,ASSURED -t 300 -w 5 >/dev/null 2>&1 ||
	fail "conntrack -I of an entry in zone 5"
ip netns exec "$RTR" conntrack -I -p tcp -s "$GEN4" -d "$NET4_S.9" --sport 1112 --dport 80 \
	--state ESTABLISHED -u SEEN_REPLY,ASSURED -t 300 >/dev/null 2>&1 ||
	fail "conntrack -I of an entry to $NET4_S.9"

# jqf ARGS...: jq with the topology's addresses as variables.
jqf() {
	jqe --arg g4 "$GEN4" --arg g6 "$GEN6" --arg s4 "$SNK4" --arg s24 "$SNK2_4" \
		--arg s26 "$SNK2_6" --arg r24 "$R_SNK2_4" --arg r26 "$R_SNK2_6" \
		--arg rg "$R_GEN" --arg rs "$R_SNK" --arg rs2 "$R_SNK2" "$@"
}

# The flows, by what selects each in flows -j.
MASQ4='.protocol == "tcp" and .dst == $s24 and .dport == 5202'
MASQ6='.protocol == "tcp" and .dst == $s26 and .dport == 5203'
PLAIN='.protocol == "tcp" and .dst == $s4 and .dport == 5201'
UDP='.protocol == "udp" and .dst == $s4 and .dport == 5300'
ECHO='.protocol == "icmp" and .src == $g4 and .dst == $s4'
MECHO='.protocol == "icmp" and .src == $g4 and .dst == $s24'
UNREPLIED='.protocol == "udp" and .dst == $s4 and .dport == 5301'
HELPER='.protocol == "tcp" and .dst == $s24 and .dport == 21'
ZONE='.protocol == "tcp" and .sport == 1111 and .dport == 2222'
NONEIGH='.protocol == "tcp" and .sport == 1112 and .dport == 80'
IDLE='.protocol == "tcp" and .dst == $s4 and .dport == 5204'

# learned: every running flow is in the fast path.
learned() {
	FLOWS=$(rctl flows -j) || return 1
	local s
	for s in "$MASQ4" "$MASQ6" "$PLAIN" "$UDP" "$ECHO" "$MECHO"; do
		jqf "any(.[]; ($s) and .fast_path)" <<<"$FLOWS" >/dev/null || return 1
	done
}
wait_until 15 learned || fail "flows not all in the fast path after 15 s: $(rctl flows)"
python3 -m json.tool >/dev/null <<<"$FLOWS" || fail "flows -j: not JSON: $FLOWS"
log "every running flow in the fast path"

# one SELECT: the one flow of FLOWS that SELECT picks (fails unless one).
one() {
	local n
	n=$(jqf "[.[] | select($1)] | length" <<<"$FLOWS")
	[ "$n" = 1 ] || fail "flows -j lists $n flows where $1, not 1: $FLOWS"
	jqf -c ".[] | select($1)" <<<"$FLOWS"
}

# expect WHAT SELECT JQ [ARGS...]: the flow SELECT picks satisfies JQ.
expect() {
	local what=$1 flow
	flow=$(one "$2")
	shift 2
	jqf "$@" <<<"$flow" >/dev/null || fail "$what: not ${*: -1}: $flow"
	log "$what: $(jq -c '{fast_path, reason, nat, o: .original.reason, r: .reply.reason}' <<<"$flow")"
}

# A flow's ports as gen and sink2 see them: gen's local port to DST:PORT,
# and the peer port sink2 sees on PORT (the masquerading router's).
local_port() {
	ip netns exec "$GEN" ss -Htn state established "dport = :$1" |
		awk '{ print $3 }' | sed 's/.*://'
}
peer_port() {
	ip netns exec "$SNK2" ss -Htn state established "sport = :$1" |
		awk '{ print $4 }' | sed 's/.*://'
}
GP4=$(local_port 5202) GP6=$(local_port 5203) SP4=$(peer_port 5202) SP6=$(peer_port 5203)
if [ -z "$GP4" ] || [ -z "$GP6" ] || [ -z "$SP4" ] || [ -z "$SP6" ]; then
	fail "ports of the masqueraded flows: gen '$GP4' '$GP6', sink2 '$SP4' '$SP6'"
fi

common='.netfilter == "gate" and .fast_path and .reason == null and .conntrack and
	.replied and .assured and .zone == 0 and .helper == null and .timeout > 0'
expect "masqueraded TCP IPv4" "$MASQ4" --argjson gp "$GP4" --argjson sp "$SP4" \
	"$common"' and .family == "ipv4" and .src == $g4 and .sport == $gp and
	.state == "established" and .liberal and
	.nat.snat == {address: $r24, port: $sp} and .nat.dnat == null and
	.original == {dst: $s24, action: "forward", reason: "forwarded_nat_v4",
		egress: {ifindex: .original.egress.ifindex, name: $rs2}} and
	.reply.dst == $g4 and .reply.reason == "forwarded_nat_v4" and .reply.egress.name == $rg'
expect "masqueraded TCP IPv6" "$MASQ6" --argjson gp "$GP6" --argjson sp "$SP6" \
	"$common"' and .family == "ipv6" and .src == $g6 and .sport == $gp and .liberal and
	.nat.snat == {address: $r26, port: $sp} and .nat.dnat == null and
	.original.dst == $s26 and .original.reason == "forwarded_nat_v6" and
	.original.egress.name == $rs2 and
	.reply.dst == $g6 and .reply.reason == "forwarded_nat_v6" and .reply.egress.name == $rg'
expect "plain TCP" "$PLAIN" "$common"' and .src == $g4 and .state == "established" and
	.liberal and .nat == null and
	.original.dst == $s4 and .original.reason == "forwarded_v4" and .original.egress.name == $rs and
	.reply.dst == $g4 and .reply.reason == "forwarded_v4" and .reply.egress.name == $rg'
expect "UDP" "$UDP" '.fast_path and .reason == null and .replied and .state == null and
	.liberal == null and .nat == null and
	.original.reason == "forwarded_v4" and .original.egress.name == $rs and
	.reply.reason == "forwarded_v4" and .reply.egress.name == $rg'
expect "ping stream" "$ECHO" '.fast_path and .replied and .id > 0 and .sport == null and
	.original.reason == "forwarded_v4" and .original.egress.name == $rs and
	.reply.reason == "forwarded_v4" and .reply.egress.name == $rg'
expect "masqueraded ping stream" "$MECHO" '.fast_path and .replied and .id > 0 and
	.nat.snat.address == $r24 and .nat.dnat == null and
	.original.dst == $s24 and .original.reason == "forwarded_nat_v4" and
	.original.egress.name == $rs2 and
	.reply.dst == $g4 and .reply.reason == "forwarded_nat_v4" and .reply.egress.name == $rg'

# The flows the gate leaves to the kernel, each direction counted by the
# gate's reason where its route forwards.
expect "UDP not replied" "$UNREPLIED" '(.fast_path | not) and .reason == "pass_ct_new" and
	(.replied | not) and (.why | test("not replied")) and
	.original.reason == "pass_ct_new" and .original.egress.name == $rs'
expect "the router's connection with a helper" "$HELPER" '(.fast_path | not) and
	.reason == "pass_ct_nat" and .helper == "ftp" and (.why | test("helper ftp")) and
	.src == $r24'
expect "entry in zone 5" "$ZONE" '(.fast_path | not) and .reason == "pass_ct_new" and
	.zone == 5 and (.why | test("zone 5")) and .original.reason == "pass_ct_new"'
expect "idle TCP" "$IDLE" '(.fast_path | not) and .reason == "pass_ct_learn" and
	.state == "established" and .assured and (.liberal | not) and
	(.why | test("not liberal")) and
	.original.reason == "pass_ct_learn" and .original.egress.name == $rs and
	.reply.reason == "pass_ct_learn" and .reply.egress.name == $rg'
# Whether the gate forwards it depends on the flags conntrack gives an
# entry made over ctnetlink; the route is the dataplane's either way.
expect "entry to nobody" "$NONEIGH" '.original.dst == "'"$NET4_S.9"'" and
	.original.reason == "pass_neigh" and .original.egress.name == $rs and
	.reply.egress.name == $rg'

# Sorted: by family, protocol, addresses and ports.
jqf 'map([(if .family == "ipv4" then 0 else 1 end),
	({"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58}[.protocol])]) as $k | $k == ($k | sort)' \
	<<<"$FLOWS" >/dev/null || fail "flows -j not sorted by family and protocol: $FLOWS"

# -4 and -6.
V4=$(rctl flows -4 -j) V6=$(rctl flows -j -6)
jqf "all(.[]; .family == \"ipv4\") and any(.[]; $MASQ4) and any(.[]; $PLAIN) and
	any(.[]; $ECHO) and (any(.[]; $MASQ6) | not)" <<<"$V4" >/dev/null ||
	fail "flows -4: $V4"
jqf "all(.[]; .family == \"ipv6\") and any(.[]; $MASQ6) and (any(.[]; $MASQ4) | not)" \
	<<<"$V6" >/dev/null || fail "flows -6: $V6"
log "-4 and -6: $(jq length <<<"$V4") and $(jq length <<<"$V6") flows"

# The text: a line per family, then per flow its tuple and state, its NAT,
# the fast path and both directions.
FLOWS=$(rctl flows -j)
TEXT=$(rctl flows)
printf '%s\n' "$TEXT"
n4=$(jq '[.[] | select(.family == "ipv4")] | length' <<<"$FLOWS")
grep -qE "^ipv4: netfilter gate \(.*\), $n4 flows\$" <<<"$TEXT" || fail "flows: no ipv4 line for $n4 flows"
[ "$(grep -cE '^(tcp|udp|icmp|icmpv6) ' <<<"$TEXT")" = "$(jq length <<<"$FLOWS")" ] ||
	fail "flows lists $(grep -cE '^(tcp|udp|icmp|icmpv6) ' <<<"$TEXT") flows, flows -j $(jq length <<<"$FLOWS")"
grep -A4 -F "tcp $GEN4:$GP4 -> $SNK2_4:5202: established, replied, assured, liberal, " <<<"$TEXT" >"$XFIB_TMP/masq4" ||
	fail "flows: no line for the masqueraded IPv4 flow"
for want in "  nat:       snat $GEN4:$GP4 -> $R_SNK2_4:$SP4" "  fast path: yes" \
	"  original:  forwarded_nat_v4 out $R_SNK2" "  reply:     forwarded_nat_v4 to $GEN4 out $R_GEN"; do
	grep -qxF "$want" "$XFIB_TMP/masq4" || fail "flows: masqueraded IPv4 flow without '$want': $(cat "$XFIB_TMP/masq4")"
done
grep -A3 -F "tcp [$GEN6]:$GP6 -> [$SNK2_6]:5203: " <<<"$TEXT" | grep -qxF "  nat:       snat [$GEN6]:$GP6 -> [$R_SNK2_6]:$SP6" ||
	fail "flows: the masqueraded IPv6 flow's NAT"
grep -A3 -F "tcp $GEN4:1112 -> $NET4_S.9:80: " <<<"$TEXT" |
	grep -qxF "  original:  pass_neigh out $R_SNK: neighbour not resolved" ||
	fail "flows: the entry to $NET4_S.9 not pass_neigh out of $R_SNK"

# A multipath route: conntrack entries for 32 UDP flows from gen to one
# address, source ports 20000 to 20031 (flows.py's), established; then
# the flows themselves, captured at both sinks.
ip -n "$RTR" route add 198.19.20.0/24 nexthop via "$SNK4" nexthop via "$SNK2_4"
wait_lookup 198.19.20.1 '.group.members == 2'
for p in $(seq 20000 20031); do
	ip netns exec "$RTR" conntrack -I -p udp -s "$GEN4" -d 198.19.20.1 --sport "$p" \
		--dport 9 -u SEEN_REPLY,ASSURED -t 300 >/dev/null 2>&1 ||
		fail "conntrack -I of the UDP flow from port $p"
done
FLOWS=$(rctl flows -4 -j)
# sports_by PORT: the source ports flows says leave by PORT, sorted.
sports_by() {
	jq -c --arg p "$1" '[.[] | select(.dst == "198.19.20.1" and .fast_path and
		.original.reason == "forwarded_v4" and .original.egress.name == $p) |
		.sport] | sort' <<<"$FLOWS"
}
want1=$(sports_by "$R_SNK") want2=$(sports_by "$R_SNK2")
[ "$(jq -n --argjson a "$want1" --argjson b "$want2" '$a + $b | length')" = 32 ] ||
	fail "flows -4 does not list the 32 multipath flows forwarded: $want1 $want2"
if [ "$want1" = "[]" ] || [ "$want2" = "[]" ]; then
	fail "flows lists every multipath flow on one member: $want1 $want2"
fi
cap1="$XFIB_TMP/mp1.pcap" cap2="$XFIB_TMP/mp2.pcap" caps=()
for c in "$SNK:$cap1" "$SNK2:$cap2"; do
	ip netns exec "${c%%:*}" timeout 30 tcpdump -U -n -i sink0 -w "${c#*:}" \
		'udp dst port 9' 2>"${c#*:}.err" &
	XFIB_PIDS+=("$!")
	caps+=("$!")
	wait_until 5 grep -q 'listening on' "${c#*:}.err" || fail "tcpdump did not start"
done
ip netns exec "$GEN" python3 "$XFIB_TOP/tests/lib/flows.py" send 198.19.20.1 32 1 20000
# mp_frames: datagrams captured at both sinks.
mp_frames() {
	python3 "$XFIB_TOP/tests/lib/flows.py" count "$cap1" "$cap2" | jq -s 'map(.frames) | add'
}
mp_all_captured() { (($(mp_frames) >= 32)); }
wait_until 10 mp_all_captured || fail "$(mp_frames) of 32 datagrams captured"
kill -INT "${caps[@]}"
wait "${caps[@]}" 2>/dev/null || true
got1=$(python3 "$XFIB_TOP/tests/lib/flows.py" count "$cap1" | jq -c '.ports | keys | map(tonumber) | sort')
got2=$(python3 "$XFIB_TOP/tests/lib/flows.py" count "$cap2" | jq -c '.ports | keys | map(tonumber) | sort')
if [ "$got1" != "$want1" ] || [ "$got2" != "$want2" ]; then
	fail "multipath: flows says $want1 leave by $R_SNK and $want2 by $R_SNK2; sink got $got1, sink2 $got2"
fi
log "multipath: the member flows names is the one each flow's datagrams took ($(jq length <<<"$want1") and $(jq length <<<"$want2") flows)"

# Without the ruleset: every flow forwarded without asking conntrack.
ip netns exec "$RTR" nft flush ruleset
wait_nf_mode 4 forward
wait_nf_mode 6 forward
FLOWS=$(rctl flows -j)
expect "plain TCP, mode forward" "$PLAIN" '.netfilter == "forward" and .fast_path and
	(.why | test("netfilter forward")) and .original.reason == "forwarded_v4"'
expect "zone 5, mode forward" "$ZONE" '.netfilter == "forward" and .fast_path and
	.original.reason == "forwarded_v4"'
grep -qE '^ipv6: netfilter forward \(' <<<"$(rctl flows -6)" || fail "flows -6: no forward line"

ip netns exec "$RTR" nft -f - <<NFT || fail "loading the netdev chain"
table netdev edge {
	chain in {
		type filter hook ingress device "$R_GEN" priority 0;
		ip daddr 198.18.200.1 drop
	}
}
NFT
wait_until 5 status_is '.netfilter.ports | length == 1' || fail "status lists no port with rules"
FLOWS=$(rctl flows -j)
expect "plain TCP, ingress rules on $R_GEN" "$PLAIN" '.fast_path and
	.original.reason == "pass_netfilter" and .original.egress.name == $rs and
	.reply.reason == "forwarded_v4" and .reply.egress.name == $rg'
pp=$(one "$PLAIN" | jq .sport)
rctl flows | grep -A4 -F "tcp $GEN4:$pp -> $SNK4:5201: " |
	grep -qxF "  original:  pass_netfilter out $R_SNK: $R_GEN has ingress rules" ||
	fail "flows: the plain flow's original direction not passed for $R_GEN's ingress rules: $(rctl flows)"
log "PASS: xfibctl flows lists conntrack's flows with the gate's verdict, NAT and egress"
