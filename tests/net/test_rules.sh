#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Policy routing the mirror does not model must get the kernel's answer:
# a rule before "lookup main" that selects by source hands the family to
# the kernel (status: fallback policy_rules), which then forwards by its
# rules; removing the rule brings the fast path back. The other family is
# not affected.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up sink2
ip -n "$SNK2" addr add "$SNK4/32" dev lo 2>/dev/null || true

# Table 100 sends the sink's address to sink2 instead, for gen's traffic.
ip -n "$RTR" route add "$SNK4/32" via "$SNK2_4" table 100
ip -n "$RTR" rule add from "$NET4_G.0/24" lookup 100 priority 100

wait_until 5 status_is '.ipv4.fallback == "policy_rules"' ||
	fail "status does not show the policy-rules fallback: $(rctl status -j | jq -c .ipv4)"
[ "$(rctl status -j | jq -r '.ipv4.algorithm')" = none ] || fail "ipv4 still has an instance"
[ "$(rctl status -j | jq -r '.ipv6.fallback')" = none ] || fail "ipv6 affected by an IPv4 rule"
rctl status | grep -q "policy rules" || fail "text status does not say why"

# The kernel forwards by its rule: echoes reach sink2, not the sink.
snapshot
r0=$(ip -n "$SNK2" -j -s link show dev "$SNK2_IF" | jq '.[0].stats64.rx.packets')
nping "$GEN" -4 -q -c 5 -i 0.05 "$SNK4" >/dev/null 2>&1 || true
r1=$(ip -n "$SNK2" -j -s link show dev "$SNK2_IF" | jq '.[0].stats64.rx.packets')
deltas
((D_X4 == 0)) || fail "xfib forwarded $D_X4 packets while the rule is in force"
((D_K4 >= 5)) || fail "the kernel did not forward (IpForwDatagrams +$D_K4)"
((r1 - r0 >= 5)) || fail "the kernel's rule was not followed: sink2 got $((r1 - r0)) frames"
expect_xdp 6 "$SNK6"

ip -n "$RTR" rule del from "$NET4_G.0/24" lookup 100 priority 100
wait_until 5 status_is '.ipv4.algorithm == "bsearch4"' ||
	fail "fast path not back after the rule went: $(rctl status -j | jq -c .ipv4)"
expect_xdp 4 "$SNK4" 3000 "$SNK"
log "PASS: policy rules hand IPv4 to the kernel and back"
