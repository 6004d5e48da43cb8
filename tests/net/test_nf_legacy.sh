#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/net/test_nf_stateful.sh with legacy iptables and ip6tables
# (Debian's iptables-legacy) instead of nftables: the same stateful
# firewall, the same checks. x_tables sends no notifications; xfibd
# reads the tables every second.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/nf.sh
. "$(dirname "$0")/../lib/nf.sh"
xfib_init
nf_tools iptables-legacy ip6tables-legacy conntrack socat ss

topo_create 0
topo_add_sink2
hosts_fill_checksums "$GEN:$GEN_IF" "$SNK:$SNK_IF" "$SNK2:$SNK2_IF"
xfibd_start
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

# ipt 4|6 ARGS...: iptables-legacy or ip6tables-legacy in the router.
ipt() {
	local cmd=iptables-legacy
	[ "$1" = 4 ] || cmd=ip6tables-legacy
	shift
	ip netns exec "$RTR" "$cmd" "$@"
}

for fam in 4 6; do
	icmp=(-p icmp --icmp-type echo-request)
	[ "$fam" = 4 ] || icmp=(-p ipv6-icmp --icmpv6-type echo-request)
	ipt "$fam" -P FORWARD DROP
	ipt "$fam" -A FORWARD -m conntrack --ctstate INVALID -j DROP
	ipt "$fam" -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
	ipt "$fam" -A FORWARD "${icmp[@]}" -j ACCEPT
	ipt "$fam" -A FORWARD -p tcp --dport 5201 -j ACCEPT
	ipt "$fam" -t nat -A POSTROUTING -o "$R_SNK2" -j MASQUERADE
done || fail "loading the rules"

# nf_invalid_drops: packets the invalid rules (rule 1 of FORWARD) dropped.
nf_invalid_drops() {
	echo $(($(ipt 4 -vxn -L FORWARD 1 | awk '{ print $1 }') +
		$(ipt 6 -vxn -L FORWARD 1 | awk '{ print $1 }')))
}

nf_stateful_suite "ipt 4 -I FORWARD 1 -s $GEN4 -j DROP" "ipt 4 -D FORWARD -s $GEN4 -j DROP"
log "PASS: a stateful legacy iptables firewall holds with xfib attached"
