#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibctl verify and xfibctl lookup against the kernel's FIB.
#
# The router gets a few hundred routes of every kind xfib mirrors (via
# gateways on two sinks, connected, blackhole, unreachable, prohibit,
# throw, local addresses, nested prefixes, an IPv4 route via an IPv6
# gateway, a link-local gateway, metrics, multipath) and one it hands to
# the kernel (a TOS-specific route). With each lookup algorithm, verify finds no mismatch among
# the prefix boundaries and 100000 random addresses per family. lookup
# prints the expected nexthop, egress, gateway and action. Then one
# nexthop entry is corrupted in the pinned maps behind xfibd's back:
# verify must fail and name the mismatch; a restarted xfibd repairs it.
#
# The jq programs name jq variables ($a4, $s2, ...), hence single quotes:
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v bpftool >/dev/null 2>&1 || skip "missing tool: bpftool (scripts/install-deps.sh)"

RANDOM_N=100000

topo_create 0
topo_add_sink2

# ---- routes -------------------------------------------------------------
# Gateways: A on r-sink, B on r-sink2. Prefixes outside the test ranges
# are only looked up, never sent to.
A4=$SNK4 B4=$SNK2_4 A6=$SNK6 B6=$SNK2_6
gen_routes() {
	local i gw4 gw6 other4 other6 h
	echo "4 route add default via $A4"
	echo "4 route add 128.0.0.0/1 via $B4"
	echo "6 route add default via $A6"
	for i in $(seq 0 99); do
		if ((i % 2)); then gw4=$B4 other4=$A4 gw6=$B6 other6=$A6
		else gw4=$A4 other4=$B4 gw6=$A6 other6=$B6; fi
		h=$(printf '%x' $((0x8000 + i)))
		echo "4 route add 10.$i.0.0/16 via $gw4"
		echo "6 route add 2001:db8:$h::/48 via $gw6"
		((i < 50)) || continue
		# Nested: a /24 the other way, a /25 refused, a /32 back again.
		echo "4 route add 10.$i.$((i + 1)).0/24 via $other4"
		echo "6 route add 2001:db8:$h:1::/64 via $other6"
		case $((i % 3)) in
		0) echo "4 route add blackhole 10.$i.$((i + 1)).128/25"
		   echo "6 route add blackhole 2001:db8:$h:1::/120" ;;
		1) echo "4 route add unreachable 10.$i.$((i + 1)).128/25"
		   echo "6 route add unreachable 2001:db8:$h:1::/120" ;;
		2) echo "4 route add prohibit 10.$i.$((i + 1)).128/25"
		   echo "6 route add prohibit 2001:db8:$h:1::/120" ;;
		esac
		echo "4 route add 10.$i.$((i + 1)).200/32 via $gw4"
		echo "6 route add 2001:db8:$h:1::c8/128 via $gw6"
	done
	for i in $(seq 0 19); do
		# Connected: on-link prefixes without an address.
		echo "4 route add 172.16.$i.0/24 dev $R_SNK2"
		echo "6 route add 2001:db8:9000:$i::/64 dev $R_SNK2"
		# Local addresses (local and, for IPv4, broadcast routes).
		echo "4 address add 198.18.250.$((i + 1))/32 dev lo"
		echo "6 address add 2001:db8:fe::$((i + 1))/128 dev lo"
	done
	echo "4 address add 198.18.40.1/24 dev $R_SNK"
	echo "4 route add throw 10.99.5.0/24"
	echo "6 route add throw 2001:db8:8005::/64"
	echo "4 route add 10.150.0.0/16 via $A4 metric 10"
	echo "4 route add 10.150.0.0/16 via $B4 metric 20"
	echo "4 route add 10.201.0.0/16 via inet6 $A6 dev $R_SNK"
	echo "6 route add 2001:db8:a000::/48 via fe80::99 dev $R_SNK"
	# Multipath: the kernel's path is one of the group's members.
	echo "4 route add 10.200.0.0/16 nexthop via $A4 nexthop via $B4"
	echo "6 route add 2001:db8:b000::/48 nexthop via $A6 nexthop via $B6"
	# TOS-specific: xfib hands it to the kernel ("deferred").
	echo "4 route add 10.202.0.0/16 tos 0x10 via $A4"
}
gen_routes >"$XFIB_TMP/routes"
for f in 4 6; do
	sed -n "s/^$f //p" "$XFIB_TMP/routes" >"$XFIB_TMP/routes$f.batch"
	ip -n "$RTR" "-$f" -batch "$XFIB_TMP/routes$f.batch" || fail "installing the IPv$f test routes"
done
N4=$(ip -n "$RTR" -4 route show table all | wc -l)
N6=$(ip -n "$RTR" -6 route show table all | wc -l)
log "router: $N4 IPv4 and $N6 IPv6 routes (all tables)"

xfibd_start
attach_all
resolve_neighbours

# ---- verify with each algorithm ---------------------------------------------

# verify_clean ALGO4 ALGO6: no mismatch, and plenty actually compared.
verify_clean() {
	local out rc=0
	out=$(rctl verify --random "$RANDOM_N" -j) || rc=$?
	[ "$rc" -eq 0 ] || fail "verify ($1/$2) exited $rc: $(jq -c '.mismatches[:3]' <<<"$out" 2>/dev/null || echo "$out")"
	jqe --arg a4 "$1" --arg a6 "$2" --argjson n "$RANDOM_N" '
		.ipv4.algorithm == $a4 and .ipv6.algorithm == $a6 and
		.ipv4.mismatched == 0 and .ipv6.mismatched == 0 and
		.ipv4.prefixes >= 300 and .ipv6.prefixes >= 300 and
		.ipv4.checked >= $n and .ipv6.checked >= $n and
		.ipv4.matched > $n / 2 and .ipv6.matched > $n / 2 and
		.ipv4.deferred > 0 and .ipv6.deferred > 0 and
		.ipv4.checked == .ipv4.matched + .ipv4.deferred + .ipv4.mismatched and
		.ipv6.checked == .ipv6.matched + .ipv6.deferred + .ipv6.mismatched and
		.mismatches == []' <<<"$out" >/dev/null ||
		fail "verify ($1/$2): $(jq -c 'del(.mismatches)' <<<"$out")"
	log "verify $1/$2: $(jq -c '{s: .seconds, v4: .ipv4 | del(.algorithm),
		v6: .ipv6 | del(.algorithm)}' <<<"$out")"
}

rctl algo ipv4 dir24_8 >/dev/null || fail "algo ipv4 dir24_8"
rctl algo ipv6 trie6 >/dev/null || fail "algo ipv6 trie6"
verify_clean dir24_8 trie6
rctl algo ipv4 dxr >/dev/null || fail "algo ipv4 dxr"
rctl algo ipv6 poptrie6 >/dev/null || fail "algo ipv6 poptrie6"
verify_clean dxr poptrie6
# xfibctl routes walks the live tables: poptrie6's nodes and skip nodes
# give the same prefixes as bsearch6's ranges.
rctl routes -f ipv6 >"$XFIB_TMP/routes.poptrie6" || fail "routes on poptrie6"
rctl algo ipv4 bsearch4 >/dev/null || fail "algo ipv4 bsearch4"
rctl algo ipv6 bsearch6 >/dev/null || fail "algo ipv6 bsearch6"
verify_clean bsearch4 bsearch6
rctl routes -f ipv6 >"$XFIB_TMP/routes.bsearch6" || fail "routes on bsearch6"
diff "$XFIB_TMP/routes.bsearch6" "$XFIB_TMP/routes.poptrie6" >&2 ||
	fail "xfibctl routes differs between bsearch6 and poptrie6"
# The 100 /48s alternate between two gateways: at least one line each.
n=$(wc -l <"$XFIB_TMP/routes.bsearch6")
((n > 100)) || fail "xfibctl routes listed only $n IPv6 prefixes"
log "xfibctl routes: the same $n IPv6 prefixes from poptrie6 and bsearch6"
rctl algo ipv4 auto >/dev/null || fail "algo ipv4 auto"
rctl algo ipv6 auto >/dev/null || fail "algo ipv6 auto"
AUTO4=$(rctl status -j | jq -r .ipv4.algorithm)
AUTO6=$(rctl status -j | jq -r .ipv6.algorithm)
verify_clean "$AUTO4" "$AUTO6"

# Text output: a summary line per family, the default ingress port.
TXT=$(rctl verify) || fail "verify (text) exited $?"
grep -q "^ipv4: .* 0 mismatched$" <<<"$TXT" || fail "verify text: $TXT"
grep -q "^ipv6: .* 0 mismatched$" <<<"$TXT" || fail "verify text: $TXT"
grep -q "kernel lookups from $R_GEN\$" <<<"$TXT" || fail "verify text (ingress): $TXT"
rctl verify --iif "$R_SNK" -j | jqe --arg p "$R_SNK" '.iif == $p' >/dev/null ||
	fail "verify --iif $R_SNK not used"

# ---- lookup --------------------------------------------------------------------

# lookup_is ADDR JQ_EXPR: lookup -j ADDR satisfies JQ_EXPR.
lookup_is() {
	local out
	out=$(rctl lookup -j "$1") || fail "lookup $1 exited $?"
	jqe --arg a4 "$A4" --arg b4 "$B4" --arg a6 "$A6" --arg b6 "$B6" \
		--arg s "$R_SNK" --arg s2 "$R_SNK2" "$2" <<<"$out" >/dev/null ||
		fail "lookup $1: expected $2, got $(jq -c . <<<"$out")"
}
FWD_GW='.verdict == "match" and .action == "forward" and .nexthop.kind == "gateway" and
	.neighbour.state == "valid" and .egress.up and .egress.attached'
# 10.3.0.0/16 via B (odd), 10.4.5.0/24 via B (nested, the other way than
# 10.4.0.0/16 via A), 10.4.5.200/32 via A again.
lookup_is 10.3.7.7 "$FWD_GW"' and .gateway == $b4 and .egress.name == $s2 and
	.kernel.prefix == "10.3.0.0/16" and .kernel.table == "main"'
lookup_is 10.4.5.7 "$FWD_GW"' and .gateway == $b4 and .egress.name == $s2 and
	.kernel.prefix == "10.4.5.0/24"'
lookup_is 10.4.5.200 "$FWD_GW"' and .gateway == $a4 and .egress.name == $s and
	.kernel.prefix == "10.4.5.200/32"'
lookup_is 2001:db8:8003::1 "$FWD_GW"' and .gateway == $b6 and .egress.name == $s2 and
	.kernel.prefix == "2001:db8:8003::/48"'
lookup_is 10.150.1.1 "$FWD_GW"' and .gateway == $a4' # lower metric wins
lookup_is 10.201.0.1 '.verdict == "match" and .nexthop.kind == "gateway" and .gateway == $a6'
lookup_is 2001:db8:a000::1 '.verdict == "match" and .nexthop.kind == "gateway" and
	.gateway == "fe80::99" and .egress.name == $s'
lookup_is "$SNK2_4" '.verdict == "match" and .action == "forward" and
	.nexthop.kind == "connected" and .egress.name == $s2 and .gateway == null and
	.kernel_fib.result == "success"'
lookup_is 172.16.3.9 '.verdict == "match" and .nexthop.kind == "connected" and
	.egress.name == $s2 and .action == "pass" and .reason == "pass_neigh"'
lookup_is 10.0.1.130 '.verdict == "match" and .nexthop.kind == "blackhole" and
	.action == "drop" and .kernel_fib.result == "blackhole"'
lookup_is 2001:db8:8001:1::5 '.verdict == "match" and .nexthop.kind == "unreachable" and
	.action == "pass" and .reason == "pass_unreachable"'
lookup_is 198.18.250.3 '.verdict == "match" and .nexthop.kind == "local" and
	.reason == "pass_local" and .kernel.type == "local" and
	.kernel.prefix == "198.18.250.3/32"'
lookup_is 10.200.1.1 '.verdict == "match" and .group.members == 2 and
	.nexthop.kind == "gateway" and .action == "forward"'
lookup_is 2001:db8:b000::1 '.verdict == "match" and .group.members == 2 and
	.nexthop.kind == "gateway" and .action == "forward"'
lookup_is 10.202.1.1 '.verdict == "deferred" and .nexthop.kind == "unsupported" and
	.reason == "pass_unsupported"'
TXT=$(rctl lookup 10.3.7.7) || fail "lookup (text) exited $?"
if ! grep -q "^gateway: *$B4\$" <<<"$TXT" || ! grep -q "^egress: *$R_SNK2 " <<<"$TXT" ||
	! grep -q "^action: *forward\$" <<<"$TXT"; then
	fail "lookup text: $TXT"
fi

# Errors: a malformed address fails (1), a missing one is a usage error (2).
rc=0
ERR=$(rctl lookup 10.1.2.300 2>&1 >/dev/null) || rc=$?
[ "$rc" -eq 2 ] || fail "lookup of a malformed address exited $rc, expected 2 (usage)"
[ "$ERR" = "xfibctl: lookup 10.1.2.300: not an IPv4 or IPv6 address" ] ||
	fail "lookup of a malformed address said: $ERR"
rc=0
rctl lookup >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "lookup without an address exited $rc, expected 2"
rc=0
rctl verify --random lots >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "verify --random lots exited $rc, expected 2"

# ---- verify can fail ---------------------------------------------------------------
# The nexthop of 10.3.0.0/16 (via B on r-sink2), rewritten to leave by
# r-sink: what a daemon bug writing a wrong ifindex would do.
NH=$(rctl lookup -j 10.3.7.7 | jqe '.nexthop.index') || fail "no nexthop for 10.3.7.7"
R_SNK_IDX=$(ip -n "$RTR" -j link show dev "$R_SNK" | jq '.[0].ifindex')
ENTRY=$(bpftool -j map lookup pinned "$PIN/xfib_nexthops" key "$NH" 0 0 0) ||
	fail "bpftool map lookup xfib_nexthops[$NH]"
# Bytes 4..7: ifindex, little endian (struct xfib_nexthop).
read -r -a KEY <<<"$(jq -r '.key | join(" ")' <<<"$ENTRY")"
read -r -a VAL <<<"$(jq -r --argjson i "$R_SNK_IDX" '.value |
	.[4:8] = [($i % 256), (($i / 256 | floor) % 256), 0, 0] | map(tostring) |
	join(" ")' <<<"$ENTRY")"
bpftool map update pinned "$PIN/xfib_nexthops" key "${KEY[@]}" value "${VAL[@]}" ||
	fail "bpftool map update xfib_nexthops[$NH]"
log "corrupted nexthop $NH: ifindex -> $R_SNK_IDX ($R_SNK)"

rc=0
OUT=$(rctl verify --random "$RANDOM_N" -j) || rc=$?
[ "$rc" -eq 1 ] || fail "verify with a corrupted nexthop exited $rc, expected 1"
jqe --arg s "$R_SNK" --arg s2 "$R_SNK2" --argjson nh "$NH" '
	.ipv4.mismatched > 0 and .ipv6.mismatched == 0 and
	(.mismatches | length) > 0 and
	all(.mismatches[]; .family == "ipv4" and .xfib.nexthop == $nh and
		.xfib.dev == $s and .kernel.dev == $s2)' <<<"$OUT" >/dev/null ||
	fail "verify with a corrupted nexthop: $(jq -c '{v4: .ipv4, v6: .ipv6, m: .mismatches[:2]}' <<<"$OUT")"
rc=0
TXT=$(rctl verify) || rc=$?
[ "$rc" -eq 1 ] || fail "verify (text) with a corrupted nexthop exited $rc, expected 1"
grep -q "^mismatch: ipv4 10\.3\..*: xfib gateway $B4 dev $R_SNK (nexthop $NH), kernel success via $B4 dev $R_SNK2\$" <<<"$TXT" ||
	fail "verify text does not name the mismatch: $(head -n 3 <<<"$TXT")"
grep -q "^ipv4: .* [1-9][0-9]* mismatched\$" <<<"$TXT" || fail "verify text summary: $TXT"
log "verify caught it: $(head -n 1 <<<"$TXT")"

# A restarted xfibd republishes from the kernel's state: clean again.
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start
verify_clean "$AUTO4" "$AUTO6"
lookup_is 10.3.7.7 "$FWD_GW"' and .egress.name == $s2'

# The forwarder skips an IPv4 source's lookup (on ports without
# rp_filter) where xfib_nonlocal4 rules a local answer out: for a local
# /32, by its hashed bit (include/xfib/maps.h, XFIB_NONLOCAL4_SLOT_BIT).
# Set behind xfibd's back, the router's own 198.18.250.3 would be
# forwarded from: verify names it.
a=$(((198 << 24) + (18 << 16) + (250 << 8) + 3))
BIT=$((65536 + ((a * 0x9e3779b1) & 0xffffffff) / 65536))
W=$((BIT / 64))
bpftool map update pinned "$PIN/xfib_nonlocal4" key $((W % 256)) $((W / 256)) 0 0 \
	value 255 255 255 255 255 255 255 255 || fail "bpftool map update xfib_nonlocal4[$W]"
log "set xfib_nonlocal4 word $W (bit $BIT: 198.18.250.3's slot)"
rc=0
OUT=$(rctl verify --random "$RANDOM_N" -j) || rc=$?
[ "$rc" -eq 1 ] || fail "verify with a set xfib_nonlocal4 word exited $rc, expected 1"
jqe '.ipv4.mismatched > 0 and .ipv6.mismatched == 0 and
	any(.mismatches[]; .address == "198.18.250.3") and
	all(.mismatches[]; .family == "ipv4" and .xfib.kind == "local" and
		.source == "ruled out as local by xfib_nonlocal4")' <<<"$OUT" >/dev/null ||
	fail "verify with a set xfib_nonlocal4 word: $(jq -c '{v4: .ipv4, v6: .ipv6, m: .mismatches[:2]}' <<<"$OUT")"
TXT=$(rctl verify) && fail "verify (text) with a set xfib_nonlocal4 word exited 0"
grep -q "^mismatch: ipv4 198\.18\.250\.3: xfib local .*; as a source, ruled out as local by xfib_nonlocal4\$" <<<"$TXT" ||
	fail "verify text does not name the local address ruled out: $(head -n 3 <<<"$TXT")"
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start
verify_clean "$AUTO4" "$AUTO6"

log "PASS: verify clean with dir24_8, dxr, trie6, poptrie6, bsearch4, bsearch6 and auto; lookup answers; a corrupted nexthop and a local address ruled out as a source are caught"
