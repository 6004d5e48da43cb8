#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A stateful nftables firewall on the router (forward policy drop;
# invalid dropped and counted; established and related accepted; echo
# requests and TCP port 5201 accepted; masquerade out of r-sink2), xfib
# attached with the default --netfilter=conntrack. Both families:
#  - ping streams are XDP-forwarded after their first packets;
#  - 100 MB TCP transfers go through XDP, the kernel's forwarding
#    counters nearly flat, no packet of theirs is invalid and the
#    connections close;
#  - TCP to a port the rules do not allow gets nothing through;
#  - masqueraded flows are forwarded in XDP with conntrack's NAT, both ways;
#  - with 3 s conntrack timeouts, fast-pathed ping and TCP flows keep
#    their entries;
#  - a drop rule inserted under an established flow stops it.
# The fast-path shares measured are printed at the end.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/nf.sh
. "$(dirname "$0")/../lib/nf.sh"
xfib_init
nf_tools nft conntrack socat ss

topo_create 0
topo_add_sink2
hosts_fill_checksums "$GEN:$GEN_IF" "$SNK:$SNK_IF" "$SNK2:$SNK2_IF"
xfibd_start
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

ip netns exec "$RTR" nft -f - <<NFT || fail "loading the ruleset"
table inet fw {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state invalid counter drop comment "invalid"
		ct state established,related accept
		icmp type echo-request accept
		icmpv6 type echo-request accept
		tcp dport 5201 accept
	}
	chain postrouting {
		type nat hook postrouting priority srcnat;
		oifname "$R_SNK2" masquerade
	}
}
NFT

# nf_invalid_drops: packets the invalid rule dropped.
nf_invalid_drops() {
	ip netns exec "$RTR" nft -j list chain inet fw forward |
		jq '[.nftables[].rule? | select(.comment == "invalid") | .expr[] |
			.counter?.packets // empty] | add'
}

nf_stateful_suite "ip netns exec $RTR nft insert rule inet fw forward ip saddr $GEN4 drop" \
	"ip netns exec $RTR nft flush chain inet fw forward && ip netns exec $RTR nft -f - <<<'
table inet fw {
	chain forward {
		ct state invalid counter drop comment \"invalid\"
		ct state established,related accept
		icmp type echo-request accept
		icmpv6 type echo-request accept
		tcp dport 5201 accept
	}
}'"
log "PASS: a stateful nftables firewall holds with xfib attached"
