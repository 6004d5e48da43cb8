#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Policy routing the mirror does not model must get the kernel's answer:
# a rule before "lookup local" that selects by source hands the family to
# the kernel (status: fallback policy_rules, rules_fallback order), which
# then forwards by its rules; removing the rule brings the fast path back.
# The other family is not affected.
#
# Then the rule mirror (xfib_rules, xfibctl rules): the rule sets real
# routers get (wg-quick, Tailscale, source-based multi-homing, a rule per
# address) and every selector and action at least once, IPv4 and IPv6.
# After adds, deletes, rules of one priority, and replaces (a delete and
# an add: all the kernel does for one), rules -j must equal ip -j rule
# (every key, in the kernel's order), and each rule must have its class;
# an iif rule follows the device of its name coming and going. With
# "lookup local" first, the family stays XDP's (its rules are walked,
# from the rule after it): fwmark selectors are decided for mark 0 (no
# netfilter rule marks packets here), suppress_ifgroup is walked (the
# port's group: net/test_rule_ifgroup).
# Past the 128 rules xfib_rules holds, the family goes to the kernel
# (policy_rules, too_many).
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up sink2
ip -n "$SNK2" addr add "$SNK4/32" dev lo 2>/dev/null || true

# Table 100 sends the sink's address to sink2 instead, for gen's traffic,
# by a rule before "lookup local" (moved from priority 0 to 50).
ip -n "$RTR" route add "$SNK4/32" via "$SNK2_4" table 100
ip -n "$RTR" rule add lookup local priority 50
ip -n "$RTR" rule del priority 0
ip -n "$RTR" rule add from "$NET4_G.0/24" lookup 100 priority 10

wait_until 5 status_is '.ipv4.fallback == "policy_rules"' ||
	fail "status does not show the policy-rules fallback: $(rctl status -j | jq -c .ipv4)"
[ "$(rctl status -j | jq -r '.ipv4.algorithm')" = none ] || fail "ipv4 still has an instance"
[ "$(rctl status -j | jq -r '.ipv6.fallback')" = none ] || fail "ipv6 affected by an IPv4 rule"
rctl status | grep -q "policy rules" || fail "text status does not say why"
rctl status | grep -q 'the first policy rule is not "lookup local" for every packet' ||
	fail "text status does not say which rule: $(rctl status)"
[ "$(rctl status -j | jq -r '.ipv4.rules_fallback')" = order ] ||
	fail "status rules_fallback: $(rctl status -j | jq -c .ipv4)"

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

ip -n "$RTR" rule del from "$NET4_G.0/24" lookup 100 priority 10
wait_until 5 status_is '.ipv4.algorithm == "bsearch4"' ||
	fail "fast path not back after the rule went: $(rctl status -j | jq -c .ipv4)"
expect_xdp 4 "$SNK4" 3000 "$SNK"
ip -n "$RTR" rule add lookup local priority 0
ip -n "$RTR" rule del priority 50
log "policy rules hand IPv4 to the kernel and back"

# ---- the rule mirror ------------------------------------------------------------

# rules_json FAM: xfibctl's rules of family FAM (4, 6) without its own
# fields; kernel_rules FAM: ip -j rule's. One compact line each.
rules_json() { rctl rules -j "-$1" | jq -c ".ipv$1.rules | map(del(.xfib))"; }
kernel_rules() { ip -n "$RTR" "-$1" -j rule | jq -c .; }
rules_same() { [ "$(rules_json "$1")" = "$(kernel_rules "$1")" ]; }
# wait_rules_same FAM WHAT: equal within 10 s (a busy machine running
# other tests), else fail naming WHAT, with the rules that differ.
wait_rules_same() {
	wait_until 10 rules_same "$1" && return
	diff <(rules_json "$1" | jq -c '.[]') <(kernel_rules "$1" | jq -c '.[]') >&2 || true
	fail "ipv$1 after $2: rules -j differs from ip -j rule (< xfibctl, > ip)"
}
# class_of FAM PRIO: "CLASS REASON" of the first rule of priority PRIO.
class_of() {
	rctl rules -j "-$1" | jq -r --argjson p "$2" \
		"[.ipv$1.rules[] | select(.priority == \$p)][0].xfib | \"\(.class) \(.reason // \"\")\""
}
# has_class FAM PRIO CLASS [WORD]: its class is CLASS, and its reason
# starts with WORD (exact rules have none, but "matches every ...").
has_class() {
	case $(class_of "$1" "$2") in
	"$3 ${4:-}"*) return 0 ;;
	*) return 1 ;;
	esac
}
expect_class() {
	has_class "$@" || fail "ipv$1 rule $2: '$(class_of "$1" "$2")', want '$3 ${4:-}'"
}
# xfib_field FAM PRIO FIELD: a field of xfib's object of rule PRIO.
xfib_field() {
	rctl rules -j "-$1" | jq --argjson p "$2" \
		"[.ipv$1.rules[] | select(.priority == \$p)][0].xfib.$3"
}
fam_line() { rctl rules -j | jq -c "[.ipv$1.xdp, .ipv$1.fallback]"; }

for fam in 4 6; do
	wait_rules_same $fam start
	[ "$(fam_line $fam)" = '[true,"none"]' ] ||
		fail "ipv$fam: the default rules said to send it to the kernel: $(fam_line $fam)"
done

RIP="ip -n $RTR"
for fam in 4 6; do
	# wg-quick: its table and its fwmark (51820), and main without its
	# default route.
	$RIP -$fam rule add not fwmark 0xca6c table 51820 pref 32000
	$RIP -$fam rule add table main suppress_prefixlength 0 pref 32001
	# Tailscale.
	$RIP -$fam rule add pref 5210 fwmark 0x80000/0xff0000 table main
	$RIP -$fam rule add pref 5230 fwmark 0x80000/0xff0000 table default
	$RIP -$fam rule add pref 5250 fwmark 0x80000/0xff0000 type unreachable
	$RIP -$fam rule add pref 5270 table 52
done
# A table per uplink by source, a rule per address.
$RIP rule add pref 1000 from 198.18.60.0/24 table 100
$RIP rule add pref 1001 from 198.18.61.0/24 table 101
$RIP rule add pref 1002 from "$R_GEN4" table 101
$RIP -6 rule add pref 1000 from 2001:db8:60::/48 table 100
$RIP -6 rule add pref 1002 from "$R_GEN6" table 101
# Every selector and action.
for fam in 4 6; do
	$RIP -$fam rule add pref 2000 iif "$R_GEN" table 100
	$RIP -$fam rule add pref 2001 iif lo table 100
	$RIP -$fam rule add pref 2002 iif xr-late table 100
	$RIP -$fam rule add pref 2003 oif "$R_SNK" table 100
	$RIP -$fam rule add pref 2004 not oif "$R_SNK" table 100
	$RIP -$fam rule add pref 2005 tos 0x10 table 100
	$RIP -$fam rule add pref 2006 ipproto tcp dport 443 table 100
	$RIP -$fam rule add pref 2007 ipproto udp sport 1000-2000 table 100
	$RIP -$fam rule add pref 2008 uidrange 0-100 table 100
	$RIP -$fam rule add pref 2009 uidrange 1000-2000 table 100
	$RIP -$fam rule add pref 2010 l3mdev type prohibit
	$RIP -$fam rule add pref 2011 tun_id 7 table 100
	$RIP -$fam rule add pref 2012 fwmark 0x5/0 table 100
	$RIP -$fam rule add pref 2013 goto 2020
	$RIP -$fam rule add pref 2014 goto 2099
	$RIP -$fam rule add pref 2015 type nop
	$RIP -$fam rule add pref 2016 table 100 suppress_ifgroup 5
	$RIP -$fam rule add pref 2017 type blackhole protocol static
	$RIP -$fam rule add pref 2018 not iif lo type unreachable
	$RIP -$fam rule add pref 2020 dsfield 0x08 type prohibit
done
$RIP rule add pref 2019 to 198.18.70.0/24 realms 3/4 table 100
$RIP -6 rule add pref 2019 to 2001:db8:70::/48 table 100

for fam in 4 6; do
	wait_rules_same $fam "adding the rule sets"
	[ "$(fam_line $fam)" = '[true,"none"]' ] ||
		fail "ipv$fam: rules before main after local, but rules -j says $(fam_line $fam)"
	[ "$(rctl rules -j | jq -c "[.ipv$fam.walk, .ipv$fam.first]")" = '[true,1]' ] ||
		fail "ipv$fam: rules before main, but no walk: $(rctl rules -j | jq -c "[.ipv$fam.walk, .ipv$fam.first]")"
	# Every forwarded packet's mark is 0: not fwmark 0xca6c matches it,
	# fwmark 0x80000/0xff0000 does not.
	expect_class $fam 32000 exact "matches every"
	expect_class $fam 32001 exact
	expect_class $fam 5210 exact
	expect_class $fam 5230 exact
	expect_class $fam 5250 exact
	expect_class $fam 5270 exact
	expect_class $fam 1000 exact
	expect_class $fam 1002 exact
	expect_class $fam 2000 exact
	expect_class $fam 2001 never "iif lo"
	expect_class $fam 2002 never "iif names no device"
	expect_class $fam 2003 never oif
	expect_class $fam 2004 exact "matches every"
	expect_class $fam 2005 exact
	expect_class $fam 2006 exact
	expect_class $fam 2007 exact
	expect_class $fam 2008 exact
	expect_class $fam 2009 never uidrange
	expect_class $fam 2010 kernel l3mdev
	expect_class $fam 2011 kernel tun_id
	expect_class $fam 2012 exact
	expect_class $fam 2013 exact
	expect_class $fam 2014 exact
	expect_class $fam 2015 exact
	expect_class $fam 2016 exact
	expect_class $fam 2017 exact
	expect_class $fam 2018 exact "matches every"
	expect_class $fam 2020 exact
	# A goto names the index of its target's first rule; one without a
	# target names none.
	idx=$(rctl rules -j "-$fam" | jq "[.ipv$fam.rules[].priority] | index(2020)")
	[ "$(xfib_field $fam 2013 goto_index)" = "$idx" ] ||
		fail "ipv$fam: goto 2020 names index $(xfib_field $fam 2013 goto_index), 2020 is $idx"
	[ "$(xfib_field $fam 2014 goto_index)" = null ] ||
		fail "ipv$fam: goto 2099 (no such rule) names index $(xfib_field $fam 2014 goto_index)"
	# An iif is resolved to the ifindex of the device of its name.
	[ "$(xfib_field $fam 2000 iif_index)" = \
		"$(ip -n "$RTR" -j link show dev "$R_GEN" | jq '.[0].ifindex')" ] ||
		fail "ipv$fam: iif $R_GEN resolved to $(xfib_field $fam 2000 iif_index)"
	status_is ".ipv$fam.fallback == \"none\"" ||
		fail "ipv$fam: rules walked, but status shows a fallback: $(rctl status -j | jq -c .ipv$fam)"
done
expect_class 4 2019 kernel realms
expect_class 6 2019 exact

# A device an iif rule names comes, then goes: the rule follows it.
ip -n "$RTR" link add xr-late type veth peer name xr-late-p
for fam in 4 6; do
	wait_until 5 has_class $fam 2002 exact ||
		fail "ipv$fam: iif xr-late: '$(class_of $fam 2002)' after the device came"
	[ "$(xfib_field $fam 2002 iif_index)" = \
		"$(ip -n "$RTR" -j link show dev xr-late | jq '.[0].ifindex')" ] ||
		fail "ipv$fam: iif xr-late resolved to $(xfib_field $fam 2002 iif_index)"
	wait_rules_same $fam "adding the device an iif names"
done
ip -n "$RTR" link del xr-late
for fam in 4 6; do
	wait_until 5 has_class $fam 2002 never ||
		fail "ipv$fam: iif xr-late: '$(class_of $fam 2002)' after the device went"
done

# Deletes, and rules of one priority, in the order the kernel keeps.
$RIP rule del pref 5230
$RIP -6 rule del pref 2005
$RIP rule del pref 2013
$RIP rule add pref 3000 from 198.18.62.0/24 table 102
$RIP rule add pref 3000 from 198.18.63.0/24 table 103
$RIP rule add pref 3000 from 198.18.62.0/24 table 104
$RIP -6 rule add pref 3000 from 2001:db8:63::/48 table 103
$RIP -6 rule add pref 3000 from 2001:db8:62::/48 table 102
wait_rules_same 4 "deletes and rules of one priority"
wait_rules_same 6 "deletes and rules of one priority"
# Replaces: a rule deleted and added again with another table.
printf '%s\n' \
	"rule del pref 1001 from 198.18.61.0/24 table 101" \
	"rule add pref 1001 from 198.18.61.0/24 table 105" \
	"rule del pref 3000 from 198.18.63.0/24 table 103" \
	"rule add pref 3000 from 198.18.63.0/24 table 106" |
	ip -n "$RTR" -batch -
printf '%s\n' \
	"rule del pref 1000 from 2001:db8:60::/48 table 100" \
	"rule add pref 1000 from 2001:db8:60::/48 table 107" |
	ip -n "$RTR" -6 -batch -
wait_rules_same 4 "replacing rules"
wait_rules_same 6 "replacing rules"

# Rules after main only: the families are XDP's again, as before.
for fam in 4 6; do
	for p in $(ip -n "$RTR" -$fam -j rule | jq -r '.[].priority' | sort -un); do
		case $p in 0 | 32766 | 32767) continue ;; esac
		while ip -n "$RTR" -$fam rule del pref "$p" 2>/dev/null; do :; done
	done
	$RIP -$fam rule add pref 40000 not fwmark 0xca6c table 51820
	wait_rules_same $fam "leaving rules after main only"
	[ "$(fam_line $fam)" = '[true,"none"]' ] ||
		fail "ipv$fam: only rules after main, but rules -j says $(fam_line $fam)"
done
wait_until 5 status_is '.ipv4.fallback == "none" and .ipv6.fallback == "none" and
	(.ipv4 | has("rules_fallback") | not)' ||
	fail "rules after main only, but status: $(rctl status -j | jq -c '[.ipv4, .ipv6] | map({fallback, rules_fallback})')"
expect_xdp 4 "$SNK4" 3000 "$SNK"

# More rules than xfib_rules holds, if after main: the family goes to the
# kernel, and status says why.
for i in $(seq 1 130); do
	echo "rule add pref $((40000 + i)) from 198.18.$((64 + i / 100)).$((i % 100)) table 100"
done | ip -n "$RTR" -batch -
wait_until 5 status_is '.ipv4.fallback == "policy_rules" and .ipv4.rules_fallback == "too_many" and
	.ipv4.rules_total == 134 and .ipv6.fallback == "none"' ||
	fail "134 rules: status $(rctl status -j | jq -c '[.ipv4, .ipv6] | map({fallback, rules_fallback, rules_total})')"
rctl status | grep -q "134 policy rules, more than the 128 xfib holds" ||
	fail "status text does not say there are too many rules: $(rctl status)"
[ "$(rctl rules -j -4 | jq -c '.ipv4 | [.xdp, .fallback, .count, .total]')" = '[false,"too_many",128,134]' ] ||
	fail "rules -j on 134 rules: $(rctl rules -j -4 | jq -c '.ipv4 | [.xdp, .fallback, .count, .total]')"
[ "$(rules_json 4)" = "$(kernel_rules 4 | jq -c '.[:128]')" ] ||
	fail "the 128 rules listed of 134 are not the kernel's first 128"
log "PASS: policy rules hand IPv4 to the kernel and back; the rule mirror equals ip rule and classifies every rule"
