#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibctl verify checks the policy rules' walk with the flows the rules
# select on, not only with the destination sweep's (no source, no
# transport, one ingress port).
#
# The router gets a rule set of every selector xfib evaluates, in both
# families: from, iif, ipproto with a dport range, ipproto with a sport
# range, tos (IPv4) / dsfield (IPv6), not, goto; each rule's table sends
# 198.19.0.0/16 (2001:db8:ff00::/40) out of another port than main does.
# verify must pass with 0 mismatches and report a non-zero number of rule
# flows checked in both families.
#
# Then verify must fail where only a flow can show it: the dport range
# of the "ipproto tcp dport 1000-1999" rule is rewritten to 1000-1499 in
# the half of the pinned xfib_rules map that is published (what a
# daemon bug writing a wrong range would do; xfib_rules_active is left
# alone, so xfibctl and the dataplane read the rule as it now is). The
# destination sweep asks with no protocol and no ports, so rule 120
# matches none of its questions on either side, and it stays clean. The
# flows are made from the rules xfib publishes and from the kernel's, so
# they probe the edges of 1000-1499 and of 1000-1999: TCP to port 1500
# (just past the range xfib holds) and to 1999 (the kernel's last port)
# is answered by table 120 in the kernel and not in xfib. verify must
# exit 1 with mismatches in the IPv4 rule flows only, each naming a TCP
# flow to one of those ports, and its line must reproduce with `ip route
# get`. A new xfibd republishes the rules: clean again.
#
# Last, a rule xfib's copy holds as one that never matches: the
# XFIB_RULE_F_MATCH_NONE flag set on rule 120 in the published half (its
# selectors then give no flows of their own from xfib's copy). The
# flows are also made from the kernel's own rules (ip rule, over
# rtnetlink), so TCP to port 1000 or 1999 is still asked, and verify
# must report those flows, and only them.
#
# shellcheck disable=SC2016 # jq programs name jq variables
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v bpftool >/dev/null 2>&1 || skip "missing tool: bpftool (scripts/install-deps.sh)"

topo_create 0
topo_add_sink2
RIP="ip -n $RTR"

# ---- routes and rules -------------------------------------------------------
# Main sends the test destinations to the sink; each rule's table
# elsewhere (sink2, or back to gen), some with holes of their own.
D4=198.19.0.0/16 D6=2001:db8:ff00::/40
$RIP route add $D4 via "$SNK4"
$RIP -6 route add $D6 via "$SNK6"
$RIP route add 198.19.128.0/17 via "$SNK2_4"
$RIP -6 route add 2001:db8:ff80::/41 via "$SNK2_6"
table() { # TABLE V4_GW V6_GW
	$RIP route add $D4 via "$2" table "$1"
	$RIP -6 route add $D6 via "$3" table "$1"
}
table 100 "$SNK2_4" "$SNK2_6"
$RIP route add blackhole 198.19.64.0/18 table 100
$RIP -6 route add blackhole 2001:db8:ff40::/42 table 100
$RIP route add 198.19.0.0/17 via "$SNK2_4" table 110
$RIP -6 route add 2001:db8:ff00::/41 via "$SNK2_6" table 110
table 120 "$SNK2_4" "$SNK2_6"
$RIP route add unreachable 198.19.32.0/20 table 120
$RIP -6 route add unreachable 2001:db8:ff20::/44 table 120
table 130 "$GEN4" "$GEN6"
table 140 "$GEN4" "$GEN6"
table 160 "$SNK2_4" "$SNK2_6"
table 170 "$GEN4" "$GEN6"

$RIP rule add pref 100 from 198.18.200.0/24 lookup 100
$RIP rule add pref 110 iif "$R_SNK" lookup 110
$RIP rule add pref 120 ipproto tcp dport 1000-1999 lookup 120
$RIP rule add pref 130 ipproto udp sport 5000-5099 lookup 130
$RIP rule add pref 140 tos 0x10 lookup 140
$RIP rule add pref 150 not from 198.18.202.0/24 goto 170
$RIP rule add pref 160 lookup 160
$RIP rule add pref 170 from 198.18.204.0/23 lookup 170
$RIP -6 rule add pref 100 from 2001:db8:200::/48 lookup 100
$RIP -6 rule add pref 110 iif "$R_SNK" lookup 110
$RIP -6 rule add pref 120 ipproto tcp dport 1000-1999 lookup 120
$RIP -6 rule add pref 130 ipproto udp sport 5000-5099 lookup 130
$RIP -6 rule add pref 140 dsfield 0x20 lookup 140
$RIP -6 rule add pref 150 not from 2001:db8:202::/48 goto 170
$RIP -6 rule add pref 160 lookup 160
$RIP -6 rule add pref 170 from 2001:db8:204::/47 lookup 170

xfibd_start
attach_all
walked() {
	rctl rules -j | jqe '[.ipv4, .ipv6][] | .walk == true and .fallback == "none" and
		([.rules[] | select(.priority >= 100 and .priority <= 170)] | length == 8)' >/dev/null
}
wait_until 10 walked || fail "the rules are not walked: $(rctl rules -j | jq -c '[.ipv4, .ipv6][] | {walk, fallback}')"

# ---- clean ----------------------------------------------------------------------
# verify_rules_clean: 0 mismatches in the sweep and in the rule flows of
# both families, and rule flows actually checked. Sets OUT.
verify_rules_clean() {
	local rc=0
	OUT=$(rctl verify --random 2000 -j) || rc=$?
	[ "$rc" -eq 0 ] || fail "verify${1:+ ($1)} exited $rc: $(jq -c '.mismatches[:3]' <<<"$OUT" 2>/dev/null || echo "$OUT")"
	jqe '[.ipv4, .ipv6][] | .mismatched == 0 and .checked > 0 and
		.rule_flows.flows > 0 and .rule_flows.combinations >= .rule_flows.flows and
		.rule_flows.destinations_per_flow == 8 and
		.rule_flows.checked == .rule_flows.flows * 8 and
		.rule_flows.mismatched == 0 and
		.rule_flows.matched > .rule_flows.checked / 2 and
		.rule_flows.checked == .rule_flows.matched + .rule_flows.deferred + .rule_flows.mismatched' \
		<<<"$OUT" >/dev/null || fail "verify${1:+ ($1)}: $(jq -c 'del(.mismatches)' <<<"$OUT")"
	log "verify${1:+ ($1)}: $(jq -c '{s: .seconds, v4: .ipv4.rule_flows, v6: .ipv6.rule_flows}' <<<"$OUT")"
}
verify_rules_clean "the rule set"
TXT=$(rctl verify) || fail "verify (text) exited $?"
for fam in ipv4 ipv6; do
	grep -Eq "^$fam rule flows: [1-9][0-9]* of [0-9]+ from the rules' selectors, 8 destinations each: [1-9][0-9]* checked, .* 0 mismatched\$" <<<"$TXT" ||
		fail "verify text has no $fam rule flows line: $TXT"
done
grep -Eq "^[0-9]+ addresses and [1-9][0-9]* rule flow queries in " <<<"$TXT" ||
	fail "verify text total: $TXT"
# Bounded: --rule-flows caps the flows per family; 0 turns them off.
rctl verify --rule-flows 10 --flow-dests 2 -j | jqe '[.ipv4, .ipv6][] |
	.rule_flows.flows <= 10 and .rule_flows.checked == .rule_flows.flows * 2' >/dev/null ||
	fail "verify --rule-flows 10 --flow-dests 2: $(rctl verify --rule-flows 10 --flow-dests 2 -j | jq -c '[.ipv4, .ipv6][] | .rule_flows')"
rctl verify --rule-flows 0 -j | jqe '[.ipv4, .ipv6][] | .rule_flows.flows == 0 and .rule_flows.checked == 0' >/dev/null ||
	fail "verify --rule-flows 0 still checks rule flows"
# What the flows cost: the same sweep without them and with them.
t_off=$(rctl verify --random 2000 --rule-flows 0 -j | jq .seconds)
t_on=$(rctl verify --random 2000 -j | jq .seconds)
log "verify --random 2000: ${t_off} s without rule flows, ${t_on} s with them"

# ---- a rule xfib gets wrong --------------------------------------------------------
# Where a rule's fields are in struct xfib_rule_set (include/xfib/rules.h),
# by the forwarder's BTF: RULE (rule[]'s offset), RULE_SIZE, and in a rule
# DPORT (dport_lo, then dport_hi: u16s, little endian here) and FLAGS (a
# u16). Key: family * 2 + half (IPv4: 0).
BTF=$(bpftool -j btf dump file "$XFIB_BUILD/xfib_fwd.bpf.o") || fail "bpftool btf dump"
btf_off() { # STRUCT MEMBER: the member's byte offset
	jq -e --arg s "$1" --arg m "$2" '[.types[] | select(.kind == "STRUCT" and .name == $s) |
		.members[] | select(.name == $m) | .bits_offset / 8][0]' <<<"$BTF" ||
		fail "no $1.$2 in the forwarder's BTF"
}
RULE=$(btf_off xfib_rule_set rule) DPORT=$(btf_off xfib_rule dport_lo)
FLAGS=$(btf_off xfib_rule flags)
RULE_SIZE=$(jq -e '[.types[] | select(.kind == "STRUCT" and .name == "xfib_rule") | .size][0]' <<<"$BTF") ||
	fail "no struct xfib_rule in the forwarder's BTF"
# rule120_patch FIELD WANT AT BYTE...: in the IPv4 half xfibd published,
# the bytes of rule 120 at FIELD (its offset in a rule) must be WANT
# ("0x.. 0x.."); BYTE... are written from FIELD + AT on. Sets HALF, IDX.
rule120_patch() {
	local field=$1 want=$2 at=$3 entry off
	local -a key val
	shift 3
	HALF=$(bpftool -j map lookup pinned "$PIN/xfib_rules_active" key 0 0 0 0 | jqe '.formatted.value.half') ||
		fail "bpftool map lookup xfib_rules_active[0]"
	entry=$(bpftool -j map lookup pinned "$PIN/xfib_rules" key "$HALF" 0 0 0) ||
		fail "bpftool map lookup xfib_rules[$HALF]"
	IDX=$(jq '.formatted.value.rule | map(.priority) | index(120)' <<<"$entry")
	[[ $IDX =~ ^[0-9]+$ ]] || fail "no rule of priority 120 in the published IPv4 half $HALF"
	off=$((RULE + RULE_SIZE * IDX + field))
	[ "$(jq -r --argjson o $off --argjson n "$(wc -w <<<"$want")" \
		'.value[$o:$o + $n] | join(" ")' <<<"$entry")" = "$want" ] ||
		fail "rule $IDX's bytes at $off are not $want: $(jq -c ".formatted.value.rule[$IDX]" <<<"$entry")"
	read -r -a key <<<"$(jq -r '.key | join(" ")' <<<"$entry")"
	read -r -a val <<<"$(jq -r --argjson o $((off + at)) '.value | .[$o:$o + ($ARGS.positional | length)] =
		$ARGS.positional | join(" ")' --args "$@" <<<"$entry")"
	bpftool map update pinned "$PIN/xfib_rules" key "${key[@]}" value "${val[@]}" ||
		fail "bpftool map update xfib_rules[$HALF]"
}
# dport 1000-1999 (0x03e8, 0x07cf) to 1000-1499 (0x05db).
rule120_patch "$DPORT" "0xe8 0x03 0xcf 0x07" 2 0xdb 0x05
rctl rules -4 | grep -q "ipproto tcp dport 1000-1499 lookup 120" ||
	fail "the rewritten range is not what xfib publishes: $(rctl rules -4 | grep 'lookup 120')"
log "rule $IDX of the published IPv4 half $HALF: dport 1000-1999 rewritten to 1000-1499"

rc=0
OUT=$(rctl verify --random 2000 -j) || rc=$?
[ "$rc" -eq 1 ] || fail "verify with a rewritten dport range exited $rc, expected 1"
jqe --arg s2 "$R_SNK2" '.ipv4.mismatched == 0 and .ipv6.mismatched == 0 and
	.ipv4.rule_flows.mismatched > 0 and .ipv6.rule_flows.mismatched == 0 and
	(.mismatches | length) > 0 and
	all(.mismatches[]; .family == "ipv4" and .flow.ipproto == 6 and
		(.flow.dport == 1500 or .flow.dport == 1999) and
		(.kernel.dev == $s2 or .kernel.result == "unreachable"))' <<<"$OUT" >/dev/null ||
	fail "verify with a rewritten dport range: $(jq -c '{v4: .ipv4, v6: .ipv6.rule_flows, m: .mismatches[:2]}' <<<"$OUT")"
log "verify found it: $(jq -c '{sweep: .ipv4.mismatched, rule_flows: .ipv4.rule_flows.mismatched, first: .mismatches[0]}' <<<"$OUT")"
# Sweep alone: blind to it.
rctl verify --random 2000 --rule-flows 0 >/dev/null ||
	fail "the destination sweep alone saw the rewritten dport range"

rc=0
TXT=$(rctl verify) || rc=$?
[ "$rc" -eq 1 ] || fail "verify (text) with a rewritten dport range exited $rc, expected 1"
# Table 120 forwards by sink2 except for its unreachable /20: a line of
# the first kind.
re='^mismatch: ipv4 (198\.19\.[0-9.]+)( from [0-9.]+)? (iif [a-z0-9-]+ ipproto tcp sport [0-9]+ dport (1500|1999)( tos 0x[0-9a-f]+)?): xfib .*, kernel success via '"${SNK2_4//./\\.}"' dev '"$R_SNK2"'$'
LINE=
while read -r l; do
	[[ $l =~ $re ]] && LINE=$l && break
done < <(grep "^mismatch: " <<<"$TXT")
[[ $LINE =~ $re ]] || fail "verify text does not name the flow: $(head -n 3 <<<"$TXT")"
# The line's flow, asked of the kernel as an operator would.
# shellcheck disable=SC2086 # the flow's words
GET=$($RIP route get "${BASH_REMATCH[1]}" ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}) ||
	fail "ip route get ${BASH_REMATCH[1]}${BASH_REMATCH[2]} ${BASH_REMATCH[3]} failed"
grep -q "via $SNK2_4 dev $R_SNK2 table 120" <<<"$GET" ||
	fail "ip route get of the mismatch's flow: $GET"
log "reproduced: ${LINE%%: xfib*} -> $(head -n 1 <<<"$GET")"

# A new xfibd publishes the rules again from the kernel's.
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start
wait_until 10 walked || fail "the rules are not walked after a restart"
verify_rules_clean "after a restart"

# ---- a rule xfib holds as never matching -------------------------------------------
# The rule's flags: XFIB_RULE_F_DPORT (0x0200) here, to which
# XFIB_RULE_F_MATCH_NONE (0x8000) is added.
rule120_patch "$FLAGS" "0x00 0x02" 1 0x82
log "rule $IDX of the published IPv4 half $HALF: marked as never matching"
rc=0
OUT=$(rctl verify --random 2000 -j) || rc=$?
[ "$rc" -eq 1 ] || fail "verify with a rule marked as never matching exited $rc, expected 1"
jqe '.ipv4.mismatched == 0 and .ipv6.mismatched == 0 and
	.ipv4.rule_flows.mismatched > 0 and .ipv6.rule_flows.mismatched == 0 and
	(.mismatches | length) > 0 and
	all(.mismatches[]; .family == "ipv4" and .flow.ipproto == 6 and
		(.flow.dport == 1000 or .flow.dport == 1999))' <<<"$OUT" >/dev/null ||
	fail "verify with a rule marked as never matching: $(jq -c '{v4: .ipv4, v6: .ipv6.rule_flows, m: .mismatches[:2]}' <<<"$OUT")"
log "verify found it: $(jq -c '{sweep: .ipv4.mismatched, rule_flows: .ipv4.rule_flows.mismatched, first: .mismatches[0].flow}' <<<"$OUT")"
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start
wait_until 10 walked || fail "the rules are not walked after a restart"
verify_rules_clean "after another restart"

log "PASS: verify checks rule flows in both families; a rewritten dport range is caught by the flows alone and reproduces with ip route get; a rule xfib holds as never matching is caught by the kernel's rules' flows"
