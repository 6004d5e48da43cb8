#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A home router's ruleset in nftables, xfib attached with the default
# --netfilter=conntrack: forward policy drop, invalid dropped and counted,
# established and related accepted, the LAN (gen, sink) out to the WAN
# (sink2) accepted, masquerade out of the WAN port, and a port forward:
# WAN port 8080 of the router to sink's 5201, both families.
#
#  - the port forward: 5 MB from the LAN server to a WAN client through the
#    router's WAN address, the server seeing the client's own address;
#  - masquerade: a 20 MB upload from gen to sink2, which sees the router's
#    address, a UDP stream answered datagram for datagram, and ping
#    streams (the echo identifier translated as conntrack says);
#  - all of it forwarded in XDP with conntrack's NAT after the first round
#    trips (the kernel forwards the handshake, the close and what comes
#    before xfibd prepared the flow), and no packet of it forwarded in XDP
#    without the NAT;
#  - unsolicited traffic from the WAN never reaches the LAN: a TCP
#    connection and pings to the LAN hosts' own addresses, and to a WAN
#    port with no forward;
#  - with 3 s conntrack timeouts, a masqueraded TCP trickle of 6 s, all in
#    XDP, keeps its one entry (the dataplane refreshes it);
#  - with nf_conntrack_acct=1 the family goes to the kernel, and
#    conntrack's per-entry counters count every packet of a masqueraded
#    ping stream;
#  - conntrack -D mid-flow: with nf_conntrack_tcp_loose=0 the kernel calls
#    the flow's next segments invalid and drops them; XDP forwards none of
#    them from 50 ms after the deletion on, and the receiver gets nothing
#    more.
# The fast-path shares measured are printed at the end.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/nf.sh
. "$(dirname "$0")/../lib/nf.sh"
xfib_init
nf_tools nft conntrack socat ss

topo_up sink2
hosts_fill_checksums "$GEN:$GEN_IF" "$SNK:$SNK_IF" "$SNK2:$SNK2_IF"

ip netns exec "$RTR" nft -f - <<NFT || fail "loading the ruleset"
table inet home {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state invalid counter drop comment "invalid"
		ct state established,related accept
		iifname { "$R_GEN", "$R_SNK" } oifname "$R_SNK2" accept
		ct status dnat accept
	}
	chain prerouting {
		type nat hook prerouting priority dstnat;
		iifname "$R_SNK2" meta nfproto ipv4 tcp dport 8080 dnat ip to $SNK4:5201
		iifname "$R_SNK2" meta nfproto ipv6 tcp dport 8080 dnat ip6 to [$SNK6]:5201
	}
	chain postrouting {
		type nat hook postrouting priority srcnat;
		oifname "$R_SNK2" masquerade
	}
}
NFT

# nf_invalid_drops: packets the invalid rule dropped.
nf_invalid_drops() {
	ip netns exec "$RTR" nft -j list chain inet home forward |
		jq '[.nftables[].rule? | select(.comment == "invalid") | .expr[] |
			.counter?.packets // empty] | add'
}

# peer_of FILE: the address socat wrote on FILE's first line, in short form.
peer_of() {
	python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1].strip("[]")))' \
		"$(head -n 1 "$1")" 2>/dev/null || echo "'$(head -n 1 "$1")'"
}

# nat_snapshot / nat_check WHAT FAM: the counters around a NATed flow:
# at least 90% of its packets forwarded in XDP with the NAT, the kernel's
# beyond those it forwarded while xfibd prepared the flow a few dozen at
# most, none forwarded in XDP without the NAT, no invalid packet.
nat_snapshot() {
	X0=$(counter "forwarded_nat_v$1")
	P0=$(counter "forwarded_v$1")
	K0=$("kfwd$1" "$RTR")
	L0=$(counter pass_ct_learn)
	I0=$(nf_invalid_drops)
}

nat_check() {
	local what=$1 fam=$2 dx dk dl
	dx=$(($(counter "forwarded_nat_v$fam") - X0))
	dk=$(($("kfwd$fam" "$RTR") - K0))
	dl=$(($(counter pass_ct_learn) - L0))
	share "$what" "$dx" "$dk"
	((dk - dl <= 40 && SHARE >= 90)) ||
		fail "$what: xfib +$dx with NAT, kernel +$dk ($dl while learning): not kept in XDP ($(stats_line))"
	(($(counter "forwarded_v$fam") == P0)) ||
		fail "$what: $(($(counter "forwarded_v$fam") - P0)) packets forwarded in XDP without the NAT"
	[ "$(nf_invalid_drops)" = "$I0" ] ||
		fail "$what: the router dropped $(($(nf_invalid_drops) - I0)) invalid packets"
}

# port_forward FAM: a WAN client (sink2) downloads 5 MB from the LAN server
# (sink) through port 8080 of the router's WAN address.
port_forward() {
	local fam=$1 pub=$R_SNK2_4 client=$SNK2_4 tcp=TCP got="$XFIB_TMP/pf-$1" peer
	[ "$fam" = 4 ] || { pub="[$R_SNK2_6]"; client=$SNK2_6; tcp=TCP6; }
	NF_PORT=5201 nf_serve "$SNK" socat "$tcp-LISTEN:5201,reuseaddr" \
		"SYSTEM:echo \$SOCAT_PEERADDR; head -c 5000000 /dev/zero"
	nat_snapshot "$fam"
	timeout 300 ip netns exec "$SNK2" socat -u "$tcp:$pub:8080" "OPEN:$got,creat,trunc" ||
		fail "IPv$fam port forward: connecting to $pub:8080 failed"
	wait "$SERVE_PID" 2>/dev/null || true
	peer=$(peer_of "$got")
	[ "$peer" = "$client" ] ||
		fail "IPv$fam port forward: the server saw '$peer', not the client's $client"
	(($(stat -c %s "$got") > 5000000)) ||
		fail "IPv$fam port forward: $(stat -c %s "$got") bytes arrived"
	nat_check "port forward IPv$fam, 5 MB from the LAN server" "$fam"
	log "IPv$fam port forward: the server saw $peer"
}

# masq_upload FAM: gen sends 20 MB to sink2, masqueraded.
masq_upload() {
	local fam=$1 dst=$SNK2_4 me=$R_SNK2_4 tcp=TCP got="$XFIB_TMP/up-$1" peer
	[ "$fam" = 4 ] || { dst="[$SNK2_6]"; me=$R_SNK2_6; tcp=TCP6; }
	rm -f "$got"
	NF_PORT=5202 nf_serve "$SNK2" socat -u "$tcp-LISTEN:5202,reuseaddr" \
		"SYSTEM:echo \$SOCAT_PEERADDR >$got; wc -c >>$got"
	nat_snapshot "$fam"
	head -c 20000000 /dev/zero | timeout 300 ip netns exec "$GEN" socat -u - "$tcp:$dst:5202" ||
		fail "IPv$fam masqueraded upload to $dst failed"
	nf_receiver_ends "IPv$fam masqueraded upload"
	peer=$(peer_of "$got")
	[ "$peer" = "$me" ] || fail "IPv$fam masquerade: sink2 saw '$peer', not $me"
	[ "$(sed -n 2p "$got")" = 20000000 ] ||
		fail "IPv$fam masqueraded upload: $(sed -n 2p "$got") of 20000000 bytes arrived"
	nat_check "masqueraded upload IPv$fam, 20 MB" "$fam"
}

# masq_udp FAM: a UDP stream from gen to an echo server on sink2, 300
# datagrams about 10 ms apart, every one answered; once conntrack holds
# the flow as replied (the first answer) it is forwarded in XDP with the
# NAT: at least 95% of its packets.
masq_udp() {
	local fam=$1 dst=$SNK2_4 port=$((5300 + $1)) x0 got
	[ "$fam" = 4 ] || dst=$SNK2_6
	# One answer per datagram (socat's fork and a pipe to cat would
	# merge datagrams that come close together).
	ip netns exec "$SNK2" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", int(sys.argv[2])))
while True:
    data, peer = s.recvfrom(64)
    s.sendto(data, peer)
' "$fam" "$port" &
	XFIB_PIDS+=("$!")
	until ip netns exec "$SNK2" ss -Hlun "sport = :$port" | grep -q .; do sleep 0.05; done
	x0=$(counter "forwarded_nat_v$fam")
	got=$(ip netns exec "$GEN" python3 - "$dst" "$port" <<'PY'
import socket, sys, time
dst = sys.argv[1]
fam = socket.AF_INET6 if ':' in dst else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(0.005)
s.connect((dst, int(sys.argv[2])))
# Every datagram is sent, 10 ms apart at most, whatever the machine's
# load; the answers may take up to 5 s after the last.
sent, got, last = 0, set(), 0.0
while len(got) < 300 and (sent < 300 or time.time() - last < 5):
    if sent < 300:
        s.send(b'%d' % sent)
        sent += 1
        last = time.time()
    try:
        got.add(int(s.recv(64)))
    except (socket.timeout, ValueError):
        pass
    time.sleep(0.005)
print(len(got))
if len(got) < 300:
    sys.stderr.write("unanswered: %s\n" % sorted(set(range(300)) - got))
PY
)
	[ "$got" = 300 ] || fail "IPv$fam masqueraded UDP: $got of 300 datagrams answered"
	(($(counter "forwarded_nat_v$fam") - x0 >= 570)) ||
		fail "IPv$fam masqueraded UDP: only $(($(counter "forwarded_nat_v$fam") - x0)) packets NAT-forwarded in XDP ($(stats_line))"
	log "IPv$fam masqueraded UDP: 300 answered, $(($(counter "forwarded_nat_v$fam") - x0)) packets NAT-forwarded in XDP"
}

# masq_pings FAM: a ping stream from gen to sink2 through masquerade, in
# XDP after its first echoes with conntrack's NAT both ways (nf_pings),
# and conntrack's entry says sink2 saw the router's address.
masq_pings() {
	local fam=$1 dst=$SNK2_4 me=$R_SNK2_4 src=$GEN4 p=icmp
	[ "$fam" = 4 ] || { dst=$SNK2_6; me=$R_SNK2_6; src=$GEN6; p=icmpv6; }
	nf_pings "$fam" "$dst" "forwarded_nat_v$fam"
	ct_entries "$RTR" -p "$p" -s "$src" | grep -q "src=$dst dst=$me " ||
		fail "IPv$fam pings: conntrack did not masquerade them: $(ct_entries "$RTR" -p "$p" -s "$src")"
	log "IPv$fam pings through masquerade: sink2 answered $me"
}

# unsolicited: from the WAN, nothing reaches the LAN hosts: not TCP or
# pings to their own addresses, not TCP to a WAN port without a forward.
unsolicited() {
	local hits="$XFIB_TMP/hits" fam dst out
	rm -f "$hits"
	NF_PORT=5205 nf_serve "$GEN" socat "TCP6-LISTEN:5205,fork,reuseaddr,ipv6only=0" \
		"SYSTEM:echo hit >>$hits"
	NF_PORT=5206 nf_serve "$SNK" socat "TCP6-LISTEN:5206,fork,reuseaddr,ipv6only=0" \
		"SYSTEM:echo hit >>$hits"
	for dst in "$GEN4:5205" "[$GEN6]:5205" "$R_SNK2_4:5206" "[$R_SNK2_6]:5206" "$R_SNK2_4:8081"; do
		if timeout 5 ip netns exec "$SNK2" socat -u OPEN:/dev/null \
			"TCP:$dst,connect-timeout=2" 2>/dev/null; then
			fail "from the WAN, TCP to $dst connected"
		fi
	done
	for fam in 4 6; do
		dst=$GEN4
		[ "$fam" = 4 ] || dst=$GEN6
		out=$(nping "$SNK2" "-$fam" -q -c 5 -i 0.1 "$dst" 2>&1) || true
		grep -q ' 0 received' <<<"$out" || fail "from the WAN, pings reached $dst: $out"
	done
	[ ! -s "$hits" ] || fail "from the WAN, $(wc -l <"$hits") connections reached a LAN host"
	log "from the WAN: nothing reached the LAN"
}

# nat_keepalive: with an established timeout of 3 s, a masqueraded TCP
# trickle of 6 s keeps its entry (the same id from start to end), though
# the kernel sees none of its packets but the first and last few.
nat_keepalive() {
	local got="$XFIB_TMP/ka" id0 id1 n x0
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=3
	sleep 1.2 # xfibd reads the sysctls every second
	NF_PORT=5208 nf_serve "$SNK2" socat -u TCP-LISTEN:5208,reuseaddr "OPEN:$got,creat,trunc"
	x0=$(counter forwarded_nat_v4)
	for _ in $(seq 60); do head -c 1000 /dev/zero; sleep 0.1; done |
		ip netns exec "$GEN" socat -u - "TCP:$SNK2_4:5208" &
	n=$!
	XFIB_PIDS+=("$n")
	sleep 1
	id0=$(ct_id "$RTR" -p tcp --orig-port-dst 5208 --state ESTABLISHED)
	wait "$n" || fail "masqueraded keepalive client"
	nf_receiver_ends "masqueraded keepalive"
	id1=$(ct_id "$RTR" -p tcp --orig-port-dst 5208)
	[ "$(stat -c %s "$got")" = 60000 ] ||
		fail "masqueraded keepalive: $(stat -c %s "$got") of 60000 bytes arrived"
	if [ -z "$id0" ] || [ "$id0" != "$id1" ]; then
		fail "the masqueraded trickle's conntrack entry changed over 6 s: '$id0' -> '$id1'"
	fi
	(($(counter forwarded_nat_v4) - x0 >= 60)) ||
		fail "masqueraded keepalive: only $(($(counter forwarded_nat_v4) - x0)) packets NAT-forwarded in XDP"
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=432000
	log "masqueraded keepalive: entry $id0 lived through 6 s with a 3 s timeout"
}

# acct_exact: with nf_conntrack_acct=1 conntrack counts every packet of a
# flow, which it could not do for packets forwarded in XDP: the family goes
# to the kernel (pass), and a masqueraded ping stream of 20 echoes shows 20
# packets each way in its entry.
acct_exact() {
	local x0 out
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_acct=1
	wait_nf_mode 4 pass
	ip netns exec "$RTR" conntrack -D -p icmp >/dev/null 2>&1 || true
	x0=$(($(counter forwarded_nat_v4) + $(counter forwarded_v4)))
	out=$(nping "$GEN" -4 -q -c 20 -i 0.05 "$SNK2_4" 2>&1) ||
		fail "pings through masquerade with conntrack accounting: $out"
	(($(counter forwarded_nat_v4) + $(counter forwarded_v4) == x0)) ||
		fail "with nf_conntrack_acct=1, XDP forwarded packets conntrack does not count"
	out=$(ct_entries "$RTR" -p icmp -s "$GEN4" -o extended)
	grep -q 'packets=20 .*packets=20 ' <<<"$out" ||
		fail "conntrack accounting: not 20 packets each way: $out"
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_acct=0
	wait_nf_mode 4 gate
	log "nf_conntrack_acct=1: the kernel's, and its entry counted all 20 echoes each way"
}

# deleted_mid_flow: a masqueraded TCP trickle, gen to sink2, 1000 bytes
# every 20 ms, in XDP; conntrack -D of its entry stops it for good.
deleted_mid_flow() {
	local got="$XFIB_TMP/trickle" x1 a b s0 s1 n
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0
	NF_PORT=5207 nf_serve "$SNK2" socat -u TCP-LISTEN:5207,reuseaddr "OPEN:$got,creat,trunc"
	for _ in $(seq 200); do head -c 1000 /dev/zero; sleep 0.02; done |
		ip netns exec "$GEN" socat -u - "TCP:$SNK2_4:5207" 2>/dev/null &
	n=$!
	XFIB_PIDS+=("$n")
	sleep 1.5
	x1=$(counter forwarded_nat_v4)
	sleep 0.3
	(($(counter forwarded_nat_v4) > x1)) ||
		fail "the trickle is not NAT-forwarded in XDP before the deletion ($(stats_line))"
	ip netns exec "$RTR" conntrack -D -p tcp --orig-port-dst 5207 >/dev/null 2>&1 ||
		fail "conntrack -D found no entry for the trickle"
	sleep 0.05
	a=$(counter forwarded_nat_v4)
	s0=$(stat -c %s "$got")
	sleep 1
	b=$(counter forwarded_nat_v4)
	s1=$(stat -c %s "$got")
	((b == a)) || fail "after conntrack -D, XDP NAT-forwarded $((b - a)) more packets"
	((s1 == s0)) || fail "after conntrack -D, $((s1 - s0)) more bytes reached sink2"
	kill "$n" 2>/dev/null || true
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_tcp_loose=1
	log "conntrack -D mid-flow: nothing more in XDP after 50 ms, nothing more at sink2 ($s0 bytes)"
}

wait_nf_mode 4 gate
wait_nf_mode 6 gate
port_forward 4
port_forward 6
masq_upload 4
masq_upload 6
masq_udp 4
masq_udp 6
masq_pings 4
masq_pings 6
unsolicited
nat_keepalive
acct_exact
deleted_mid_flow
cat "$XFIB_TMP/shares"
log "PASS: a home router's NAT and stateful firewall, forwarded in XDP"
