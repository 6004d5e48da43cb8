#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An nftables forward chain with policy drop on the router, xfib
# attached: pings and UDP from gen arrive nowhere, in both families, and
# xfib counts them as pass_netfilter; accept rules for sink's prefixes
# let exactly those through (the kernel forwards them), not sink2's.
# Then the options: --netfilter=ignore forwards whatever the rules say
# (sink2 gets the echoes the kernel would drop), --netfilter=pass keeps
# even a ruleset the gate could stand in for with the kernel. Last, a
# netdev ingress chain on the ingress port keeps that port's packets with
# the kernel, whose chain drops those to sink2.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/nf.sh
. "$(dirname "$0")/../lib/nf.sh"
xfib_init
nf_tools nft

topo_create 0
topo_add_sink2
xfibd_start
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
expect_xdp 4 "$SNK2_4"
expect_xdp 6 "$SNK2_6"

# udp_in NS: UDP datagrams NS's kernel received (delivered or not), v4 + v6.
udp_in() {
	# shellcheck disable=SC2016
	in_ns "$1" awk '
		$1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Udp:" && hdr { n += $col["InDatagrams"] + $col["NoPorts"] + $col["InErrors"] }
		$1 == "Udp6InDatagrams" || $1 == "Udp6NoPorts" || $1 == "Udp6InErrors" { n += $2 }
		END { print n }
	' /proc/net/snmp /proc/net/snmp6
}

# udp_burst DST: 50 datagrams from gen to DST port 9.
udp_burst() {
	ip netns exec "$GEN" bash -c "for i in \$(seq 50); do echo x >/dev/udp/$1/9; done" 2>/dev/null || true
}

# nothing_arrives NS DST4 DST6: pings and UDP to NS's addresses get nothing
# there, and xfib forwarded none of them.
nothing_arrives() {
	local ns=$1 e0 u0 x0 n0 fam dst out
	e0=$(icmp_in_echos "$ns")
	u0=$(udp_in "$ns")
	x0=$(($(counter forwarded_v4) + $(counter forwarded_v6)))
	n0=$(counter pass_netfilter)
	for fam in 4 6; do
		dst=$2
		[ "$fam" = 4 ] || dst=$3
		out=$(nping "$GEN" "-$fam" -q -c 10 -i 0.05 "$dst" 2>&1) || true
		grep -q ' 0 received' <<<"$out" || fail "ping -$fam $dst crossed a policy drop: $out"
		udp_burst "$dst"
	done
	sleep 0.2
	[ "$(icmp_in_echos "$ns")" = "$e0" ] || fail "echoes arrived in $ns"
	[ "$(udp_in "$ns")" = "$u0" ] || fail "UDP arrived in $ns: $(($(udp_in "$ns") - u0)) datagrams"
	[ $(($(counter forwarded_v4) + $(counter forwarded_v6))) = "$x0" ] ||
		fail "xfib forwarded packets the rules drop"
	(($(counter pass_netfilter) - n0 >= 120)) ||
		fail "pass_netfilter grew by $(($(counter pass_netfilter) - n0)), expected >= 120"
	log "nothing arrived in $ns"
}

# kernel_pings FAMILY DST: every echo answered, forwarded by the kernel.
kernel_pings() {
	local c=forwarded_v$1 kf=kfwd$1 x0 k0
	x0=$(counter "$c")
	k0=$("$kf" "$RTR")
	ping_all "$GEN" "$1" "$2" 20
	[ "$(counter "$c")" = "$x0" ] || fail "xfib forwarded pings to $2 in pass mode"
	(($("$kf" "$RTR") - k0 >= 40)) || fail "the kernel did not forward the pings to $2"
}

ip netns exec "$RTR" nft add table inet fw
ip netns exec "$RTR" nft add chain inet fw forward \
	'{ type filter hook forward priority filter; policy drop; }'
wait_nf_mode 4 pass
wait_nf_mode 6 pass
rctl status | grep -A 2 '^netfilter'
nothing_arrives "$SNK" "$SNK4" "$SNK6"
nothing_arrives "$SNK2" "$SNK2_4" "$SNK2_6"

# Accept sink's prefixes, both ways: exactly those get through.
for r in "ip daddr $NET4_S.0/24" "ip saddr $NET4_S.0/24" \
	"ip6 daddr $NET6_S::/64" "ip6 saddr $NET6_S::/64"; do
	# shellcheck disable=SC2086 # the rule's words
	ip netns exec "$RTR" nft add rule inet fw forward $r accept
done
sleep 0.3
if [ "$(nf_mode 4)" != pass ] || [ "$(nf_mode 6)" != pass ]; then
	fail "stateless accept rules: modes $(nf_mode 4)/$(nf_mode 6), expected pass/pass"
fi
kernel_pings 4 "$SNK4"
kernel_pings 6 "$SNK6"
nothing_arrives "$SNK2" "$SNK2_4" "$SNK2_6"
log "accept rules for one prefix let exactly it through"

# --netfilter=ignore: xfib forwards as if there were no rules.
kill "$XFIBD_PID"
wait "$XFIBD_PID" || true
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --netfilter=ignore
wait_nf_mode 4 forward
wait_nf_mode 6 forward
rctl status | grep -q 'ipv4: forward, rules ignored (rules: nftables, 1 chain)' ||
	fail "status does not say the rules are ignored: $(rctl status | grep -A 4 '^netfilter')"
expect_xdp 4 "$SNK2_4" 3000 "$SNK2"
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"
log "--netfilter=ignore forwards what the rules drop"

# --netfilter=pass: even rules the gate could stand in for go to the kernel.
kill "$XFIBD_PID"
wait "$XFIBD_PID" || true
ip netns exec "$RTR" nft flush chain inet fw forward
ip netns exec "$RTR" nft add rule inet fw forward ct state established,related accept
ip netns exec "$RTR" nft add rule inet fw forward icmp type echo-request accept
ip netns exec "$RTR" nft add rule inet fw forward icmpv6 type echo-request accept
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --netfilter=pass
wait_nf_mode 4 pass
wait_nf_mode 6 pass
rctl status -j | jqe '.netfilter.option == "pass" and .netfilter.ipv4.reason == "--netfilter=pass"' \
	>/dev/null || fail "status: $(rctl status -j | jq -c .netfilter)"
kernel_pings 4 "$SNK2_4"
kernel_pings 6 "$SNK2_6"
log "--netfilter=pass keeps the family with the kernel"

# Without an option, the same rules gate.
kill "$XFIBD_PID"
wait "$XFIBD_PID" || true
xfibd_start
wait_nf_mode 4 gate
wait_nf_mode 6 gate

# A netdev ingress chain on r-gen, dropping what goes to sink2, and no
# other rules: the families forward, but every packet entering r-gen goes
# to the kernel, which runs the chain.
ip netns exec "$RTR" nft delete table inet fw
ip netns exec "$RTR" nft -f - <<NFT || fail "loading the netdev chain"
table netdev edge {
	chain in {
		type filter hook ingress device "$R_GEN" priority 0;
		ip daddr $SNK2_4 drop
		ip6 daddr $SNK2_6 drop
	}
}
NFT
wait_nf_mode 4 forward
wait_nf_mode 6 forward
deadline=$((SECONDS + 5))
until rctl status -j | jqe --arg p "$R_GEN" \
	'.netfilter.ports == [{name: $p, ifindex: .netfilter.ports[0].ifindex, ingress: true, egress: false}]' \
	>/dev/null; do
	((SECONDS < deadline)) || fail "status does not list $R_GEN: $(rctl status -j | jq -c .netfilter)"
	sleep 0.1
done
rctl status | grep -q "ports with ingress/egress rules, their packets to the kernel: $R_GEN (ingress)" ||
	fail "status text: $(rctl status | grep -A 4 '^netfilter')"
# Echo requests enter r-gen (the kernel forwards them), replies enter
# r-sink (xfib forwards them).
for fam in 4 6; do
	dst=$SNK4 kf=kfwd$fam
	[ "$fam" = 4 ] || dst=$SNK6
	k0=$("$kf" "$RTR")
	x0=$(counter "forwarded_v$fam")
	ping_all "$GEN" "$fam" "$dst" 20
	(($("$kf" "$RTR") - k0 >= 20)) || fail "IPv$fam echo requests into $R_GEN not forwarded by the kernel"
	(($(counter "forwarded_v$fam") - x0 >= 20)) || fail "IPv$fam echo replies into $R_SNK not forwarded by xfib"
done
nothing_arrives "$SNK2" "$SNK2_4" "$SNK2_6"
ip netns exec "$RTR" nft delete table netdev edge
expect_xdp 4 "$SNK2_4" 3000 "$SNK2"
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"
log "a netdev ingress chain keeps its port's packets with the kernel"
log "PASS: policy drop holds with xfib attached; the options do what they say"
