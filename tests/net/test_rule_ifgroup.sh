#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# suppress_ifgroup forwarded in XDP as the kernel judges it: "lookup main
# suppress_ifgroup 5" (priority 100) before "lookup 100" (200), main
# sending the shared prefix to the sink, table 100 to sink2. While the
# router's sink port is in group 0, main answers; in group 5 (ip link set
# ... group 5), main's answer is suppressed and table 100's taken. Each
# time, both families: the echo reaches the sink the kernel's own lookup
# (ip route get ... from ... iif ...) names, forwarded by xfib (its
# counter grows, the router kernel's IpForwDatagrams does not), and
# xfibctl lookup names the rule and agrees with the kernel. The group
# changed under a stream of echoes: none lost, and the next ones follow
# the group. Then IPv4 multipath in main: the group of the first path's
# device decides, whichever path a flow takes (fib_info_nhc(fi, 0)):
# with the sink port first, every flow goes to table 100; with it second,
# none does. The same for a nexthop object group (its first member in
# the order of NHA_GROUP), replaced in place.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up sink2
RIP="ip -n $RTR"
sinks_share 198.18.99 2001:db8:99
A4=$SHARED4 A6=$SHARED6
$RIP route add 198.18.99.0/24 via "$SNK2_4" table 100
$RIP -6 route add 2001:db8:99::/48 via "$SNK2_6" table 100
for fam in 4 6; do
	$RIP -$fam rule add pref 100 lookup main suppress_ifgroup 5
	$RIP -$fam rule add pref 200 lookup 100
done

# class_of FAM PRIO: xfib's class of the rule.
class_of() {
	rctl rules -j "-$1" | jq -r --argjson p "$2" \
		"[.ipv$1.rules[] | select(.priority == \$p)][0].xfib.class"
}
for fam in 4 6; do
	wait_until 5 test "$(class_of $fam 100)" = exact ||
		fail "ipv$fam: suppress_ifgroup's rule is $(class_of $fam 100), not exact"
done

# kernel_dev FAM DST SRC: the device the router kernel routes DST from
# SRC entering by r-gen by.
kernel_dev() {
	$RIP "-$1" -j route get "$2" from "$3" iif "$R_GEN" | jq -r '.[0].dev'
}

# expect_choice GROUP RULE DEV SINK: the sink port in GROUP, the kernel
# sends gen's echoes by DEV, xfib forwards them to SINK and xfibctl
# lookup names rule RULE, in both families.
expect_choice() {
	local group=$1 rule=$2 dev=$3 sink=$4
	[ "$(kernel_dev 4 $A4 "$GEN4")" = "$dev" ] ||
		fail "group $group: the kernel routes $A4 by $(kernel_dev 4 $A4 "$GEN4"), not $dev"
	[ "$(kernel_dev 6 $A6 "$GEN6")" = "$dev" ] ||
		fail "group $group: the kernel routes $A6 by $(kernel_dev 6 $A6 "$GEN6"), not $dev"
	expect_xdp 4 $A4 5000 "$sink"
	expect_xdp 6 $A6 5000 "$sink"
	lookup_names_rule $A4 "$GEN4" "$rule"
	lookup_rule6 "$rule"
}

# lookup_rule6 RULE: xfibctl lookup names rule RULE for gen's IPv6 echo.
# The kernel's answer it compares with (bpf_fib_lookup()) suppresses no
# IPv6 lookup (fib6_rule_action_alt() leaves no route to judge), so a
# suppressed answer is left to the kernel's own lookup (deferred).
lookup_rule6() {
	local out
	out=$(rctl lookup -j $A6 --from "$GEN6" --iif "$R_GEN")
	[ "$(jq -r '.rules.priority // "none"' <<<"$out")" = "$1" ] ||
		fail "lookup $A6 from $GEN6: rule $(jq -c .rules <<<"$out"), want priority $1"
	case "$(jq -r .verdict <<<"$out")" in
	match) ;;
	deferred) [ "$1" = 200 ] || fail "lookup $A6: deferred, unsuppressed: $out" ;;
	*) fail "lookup $A6 from $GEN6: xfib and the kernel disagree: $(jq -c '{nexthop,kernel_fib,verdict}' <<<"$out")" ;;
	esac
}

# ---- a single path ---------------------------------------------------------
expect_choice 0 100 "$R_SNK" "$SNK"
$RIP link set dev "$R_SNK" group 5
expect_choice 5 200 "$R_SNK2" "$SNK2"
verify_clean "suppress_ifgroup, the sink port in group 5"
$RIP link set dev "$R_SNK" group 0
expect_choice 0 100 "$R_SNK" "$SNK"
log "suppress_ifgroup: main's answer by a port of the group gives way to table 100"

# ---- the group changed under traffic -----------------------------------------
# Both sinks answer: no echo may be lost while the decision moves.
stream_start g4 4 $A4 -c 40 -i 0.05
stream_start g6 6 $A6 -c 40 -i 0.05
sleep 0.5
$RIP link set dev "$R_SNK" group 5
stream_answered g4 40 "ipv4 across the group change"
stream_answered g6 40 "ipv6 across the group change"
expect_choice 5 200 "$R_SNK2" "$SNK2"
stream_start b4 4 $A4 -c 40 -i 0.05
stream_start b6 6 $A6 -c 40 -i 0.05
sleep 0.5
$RIP link set dev "$R_SNK" group default
stream_answered b4 40 "ipv4 across the group change back"
stream_answered b6 40 "ipv6 across the group change back"
expect_choice 0 100 "$R_SNK" "$SNK"
log "suppress_ifgroup: a group changed under traffic is followed, no echo lost"

# ---- IPv4 multipath: the first path's device ----------------------------------
$RIP link set dev "$R_SNK" group 5
# first path by the sink port (group 5): suppressed, whatever path a flow
# would take
$RIP route replace 198.18.99.0/24 nexthop via "$SNK4" dev "$R_SNK" \
	nexthop via "$SNK2_4" dev "$R_SNK2"
[ "$(kernel_dev 4 $A4 "$GEN4")" = "$R_SNK2" ] ||
	fail "multipath, the sink port first: the kernel routes $A4 by $(kernel_dev 4 $A4 "$GEN4")"
expect_xdp 4 $A4 5000 "$SNK2"
lookup_names_rule $A4 "$GEN4" 200
for port in 1 2 3 4 5 6 7 8; do
	out=$(rctl lookup -j $A4 --from "$GEN4" --iif "$R_GEN" --proto udp \
		--sport $((40000 + port)) --dport 5001)
	[ "$(jq -r '.rules.priority' <<<"$out")" = 200 ] ||
		fail "multipath, the sink port first, flow from port $((40000 + port)): rule $(jq -c .rules <<<"$out")"
done
# first path by sink2's port (group 0): never suppressed, even for the
# flows on the sink port's path
$RIP route replace 198.18.99.0/24 nexthop via "$SNK2_4" dev "$R_SNK2" \
	nexthop via "$SNK4" dev "$R_SNK"
main_flows=0
for port in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	out=$(rctl lookup -j $A4 --from "$GEN4" --iif "$R_GEN" --proto udp \
		--sport $((40000 + port)) --dport 5001)
	[ "$(jq -r '.rules.priority' <<<"$out")" = 100 ] ||
		fail "multipath, sink2's port first, flow from port $((40000 + port)): rule $(jq -c .rules <<<"$out")"
	[ "$(jq -r '.egress.name' <<<"$out")" != "$R_SNK" ] || main_flows=$((main_flows + 1))
done
((main_flows > 0)) ||
	fail "multipath, sink2's port first: no flow of 16 on the sink port's path"
# Echoes XDP-forwarded by main's group, to whichever sink the flow hashes to.
expect_xdp 4 $A4 5000
log "suppress_ifgroup: an IPv4 multipath route by its first path's device ($main_flows of 16 flows on the later path in the group, not suppressed)"

# ---- IPv4 by a nexthop object group: its first member's device ----------------
# nh_entries[0], in the order of NHA_GROUP; the group replaced in place
# with its members the other way round.
$RIP nexthop add id 41 via "$SNK4" dev "$R_SNK"
$RIP nexthop add id 42 via "$SNK2_4" dev "$R_SNK2"
$RIP nexthop add id 40 group 41/42
$RIP route replace 198.18.99.0/24 nhid 40
[ "$(kernel_dev 4 $A4 "$GEN4")" = "$R_SNK2" ] ||
	fail "nexthop group, the sink port first: the kernel routes $A4 by $(kernel_dev 4 $A4 "$GEN4")"
expect_xdp 4 $A4 5000 "$SNK2"
lookup_names_rule $A4 "$GEN4" 200
$RIP nexthop replace id 40 group 42/41
# rule_prio PORT: the rule xfibctl lookup names for gen's UDP flow from PORT.
rule_prio() {
	rctl lookup -j $A4 --from "$GEN4" --iif "$R_GEN" --proto udp --sport "$1" \
		--dport 5001 | jq -r '.rules.priority'
}
wait_until 5 test "$(rule_prio 40001)" = 100 ||
	fail "nexthop group, sink2's port first: rule $(rule_prio 40001), not main's"
for port in 40002 40003 40004 40005 40006 40007 40008; do
	[ "$(rule_prio $port)" = 100 ] ||
		fail "nexthop group, sink2's port first, flow from port $port: rule $(rule_prio $port)"
done
expect_xdp 4 $A4 5000
$RIP nexthop replace id 40 group 41/42
wait_until 5 test "$(rule_prio 40001)" = 200 ||
	fail "nexthop group, the sink port first again: rule $(rule_prio 40001)"
expect_xdp 4 $A4 5000 "$SNK2"
$RIP link set dev "$R_SNK" group 0
expect_xdp 4 $A4 5000
log "suppress_ifgroup: an IPv4 route by a nexthop object group, by its first member's device"
