#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Golden tests of xfibctl's output. On a fixed router (topology 0 with a
# gateway route, a route via an unresolved gateway, a blackhole and an
# unreachable route, exactly 5 pings per family XDP-forwarded) every
# command's text output, every -h, and the messages and exit codes of bad
# invocations are compared with tests/golden/cli/*.txt, after volatile
# fields are normalised (pin directory, pid, times, durations, rates,
# generations, indexes, MACs by name); every -j output is parsed by
# python3's JSON parser and its key fields checked with jq.
#
# The goldens are the specification: after an intended change of the
# output, regenerate them and review the diff:
#
#   UPDATE_GOLDEN=1 tests/net/test_cli_golden.sh && git diff tests/golden
set -euo pipefail
# Sanitized (make test-san), every command's run is leak-checked here.
XFIB_CTL_LEAK_CHECK=1
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v python3 >/dev/null || skip "missing tool: python3 (scripts/install-deps.sh)"

GOLDEN="$XFIB_TOP/tests/golden/cli"
UPDATE=${UPDATE_GOLDEN:-0}
OUTDIR="$XFIB_TMP/golden"
mkdir -p "$OUTDIR"
[ "$UPDATE" = 1 ] && mkdir -p "$GOLDEN"

topo_create
# Routes of every kind, in place before xfibd's first dump.
GW4_NET=198.18.100.0/24 GW6_NET=2001:db8:100::/48
ip -n "$RTR" route add "$GW4_NET" via "$SNK4"
ip -n "$RTR" -6 route add "$GW6_NET" via "$SNK6"
ip -n "$RTR" route add 198.18.102.0/24 via "$NET4_S.9" # nobody answers there
ip -n "$RTR" route add blackhole 198.18.101.0/24
ip -n "$RTR" -6 route add unreachable 2001:db8:101::/48
# The router's link-local addresses add their local routes once their
# duplicate address detection is done: wait, so the table is fixed.
wait_ipv6_ready "$RTR"
xfibd_start
# Neighbours resolved by the kernel before any port is attached, so the
# counters below count exactly the pings sent after the attach.
resolve_neighbours

# wait_neigh_valid ADDR MAC: xfib's neighbour array has ADDR valid at MAC.
neigh_valid() {
	rctl neighbours -j | jqe --arg a "$1" --arg m "$2" \
		'any(.[]; .address == $a and .lladdr == $m and .state == "valid")' >/dev/null
}
wait_neigh_valid() {
	wait_until 5 neigh_valid "$1" "$2" || fail "neighbour $1 not valid in xfib: $(rctl neighbours)"
}
wait_neigh_valid "$SNK4" "$SNK_MAC"
wait_neigh_valid "$SNK6" "$SNK_MAC"
wait_neigh_valid "$GEN4" "$GEN_MAC"
wait_neigh_valid "$GEN6" "$GEN_MAC"
attach_all
N=5
ping_all "$GEN" 4 "$SNK4" "$N"
ping_all "$GEN" 6 "$SNK6" "$N"

# ---- normalising and comparing ------------------------------------------------

# norm: volatile fields replaced by <NAME> tokens; MACs by the port they
# belong to. Neighbour and nexthop indexes depend on the kernel's dump
# order, so they are masked and those listings sorted (the JSON checks
# below follow the indexes instead).
norm() {
	sed -E \
		-e "s|$PIN|<PIN>|g" \
		-e "s/$R_GEN_MAC/<R_GEN_MAC>/g; s/$R_SNK_MAC/<R_SNK_MAC>/g" \
		-e "s/$GEN_MAC/<GEN_MAC>/g; s/$SNK_MAC/<SNK_MAC>/g" \
		-e 's/\(pid [0-9]+\)/(pid <PID>)/' \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?/<TIME>/g' \
		-e 's/generation [0-9]+/generation <N>/g; s/[0-9]+ swaps/<N> swaps/' \
		-e 's/built in [0-9]+ us/built in <N> us/' \
		-e 's/: [0-9]+\.[0-9] s left$/: <SECS> s left/' \
		-e 's/^(ecmp hash: +seed) 0x[0-9a-f]{8} /\1 <SEED> /' \
		-e 's/ in [0-9.]+ s \([0-9]+\/s\)/ in <SECS> s (<RATE>\/s)/' \
		-e 's/^(neigh|nexthop) [0-9]+ /\1 <I> /; s/ neigh [0-9]+ / neigh <I> /; s/\(nexthop [0-9]+\)/(nexthop <I>)/' \
		-e 's/^(nexthop|neighbour):( +)[0-9]+,/\1:\2<I>,/' \
		-e 's/^route back: nexthop [0-9]+,/route back: nexthop <I>,/' \
		-e 's/^kernel: ( +)[^;]+; xfib_fwd loaded <TIME> (with|without) conntrack kfuncs, [0-9]+ instructions verified \([0-9.]+% of the limit\)$/kernel: \1<RELEASE>; xfib_fwd loaded <TIME> \2 conntrack kfuncs, <N> instructions verified (<P>% of the limit)/' \
		-e 's/^mirror: ( +)[0-9]+ links, [0-9]+ neighbours, [0-9]+ nexthops/mirror: \1<N> links, <N> neighbours, <N> nexthops/' \
		-e 's/^(  [^ ]+: rx) [0-9]+ packets \([0-9]+ bytes\): forwarded [0-9]+, to kernel [0-9]+, dropped [0-9]+; tx [0-9]+ packets \([0-9]+ bytes\)$/\1 <N> packets (<N> bytes): forwarded <N>, to kernel <N>, dropped <N>; tx <N> packets (<N> bytes)/'
}

# stats_norm: counts of the forwarded rows are exact (the pings above);
# the rest move with the hosts' neighbour discovery and are masked.
# Generations and swaps are masked as in norm.
stats_norm() {
	# shellcheck disable=SC2016 # awk program
	awk '$1 ~ /^forwarded_v[46]$/ || NR == 1 { print; next }
	     /^xfib_(packets|bytes)_total\{reason="forwarded_v[46]"\}/ { print; next }
	     # the text columns: "%-26s %14llu %16llu  %s"
	     /^[a-z0-9_]+ +[0-9]+ +[0-9]+  / {
		printf "%-26s %14s %16s  %s\n", $1, "<N>", "<N>", substr($0, 61); next }
	     /^xfib_((packets|bytes|swaps)_total|generation)\{/ { sub(/ [0-9]+$/, " <N>"); print; next }
	     # per port: neighbour discovery moves them too
	     /^xfib_port_[a-z_]+_total\{/ { sub(/ [0-9]+$/, " <N>"); print; next }
	     { print }'
}

# Outputs that differ, one per line. A file, not an array: golden often
# runs at the end of a pipeline, in a subshell.
DIFFS="$OUTDIR/differs"
: >"$DIFFS"
# golden NAME: stdin, normalised, against tests/golden/cli/NAME.txt.
golden() {
	local name=$1 out="$OUTDIR/$1.txt" want="$GOLDEN/$1.txt"
	norm >"$out"
	[ -s "$out" ] || fail "$name: no output"
	if [ "$UPDATE" = 1 ]; then
		cp "$out" "$want"
		log "updated $want"
	elif [ ! -f "$want" ]; then
		echo "$name (no golden file; UPDATE_GOLDEN=1 writes it)" >>"$DIFFS"
	elif ! diff -u "$want" "$out" >"$OUTDIR/$name.diff"; then
		cat "$OUTDIR/$name.diff"
		echo "$name" >>"$DIFFS"
	fi
}

# run NAME ARGS...: xfibctl ARGS must succeed; its output compared.
run() {
	local name=$1 out
	shift
	out=$(rctl "$@") || fail "xfibctl $*: exit $?"
	golden "$name" <<<"$out"
}

# run_sorted NAME ARGS...: the same, lines sorted after normalising.
run_sorted() {
	local name=$1 out
	shift
	out=$(rctl "$@") || fail "xfibctl $*: exit $?"
	# IPv6 link-local and multicast neighbours come and go with the
	# kernels' own neighbour discovery and MLD, and their addresses
	# derive from random MACs.
	norm <<<"$out" | grep -vE '(^| )(fe80|ff02):' | LC_ALL=C sort | golden "$name"
}

# json NAME JQ ARGS...: xfibctl ARGS -j is one valid JSON document (by
# python3's parser, not jq's lenient one) and JQ holds on it.
json() {
	local name=$1 filter=$2 out
	shift 2
	out=$(rctl "$@" -j) || fail "xfibctl $* -j: exit $?"
	python3 -m json.tool >/dev/null <<<"$out" || fail "xfibctl $* -j: not JSON: $out"
	jqe --arg rg "$R_GEN" --arg rs "$R_SNK" --arg s4 "$SNK4" --arg s6 "$SNK6" \
		--arg g4 "$GEN4" --arg g6 "$GEN6" --arg smac "$SNK_MAC" \
		--arg gmac "$GEN_MAC" --arg rsmac "$R_SNK_MAC" "$filter" <<<"$out" >/dev/null ||
		fail "xfibctl $* -j ($name): not /$filter/: $out"
	JSON=$out
}

# ---- help ------------------------------------------------------------------------
rctl -h | golden help
CMDS=$(rctl -h | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
for c in $CMDS; do
	rctl "$c" -h | golden "help-$c"
done
[ "$(wc -w <<<"$CMDS")" -eq 13 ] || fail "xfibctl -h lists $(wc -w <<<"$CMDS") commands, expected 13"

# ---- show commands: text and JSON ----------------------------------------------
run status status
json status '.daemon.running and .daemon.synced and .daemon.table == 254 and
	.lease.valid and .lease.given and .lease.seconds == 30 and .lease.left_ms > 0 and
	.lease.expired_ms == 0 and .lease.pid == .daemon.pid and .lease.renewals > 0 and
	.hash_seed.origin == "random" and (.hash_seed.seed | type) == "number" and
	([.interfaces[].name] | sort) == ([$rg, $rs] | sort) and
	all(.interfaces[]; .xdp_redirect_target == true and (has("no_redirect_reason") | not)) and
	.ipv4.algorithm == "bsearch4" and .ipv6.algorithm == "bsearch6" and
	.ipv4.routes > 0 and .ipv6.routes > 0 and .ipv4.fallback == "none" and
	.netfilter.option == "conntrack" and .netfilter.checked > 0 and
	all(.netfilter.ipv4, .netfilter.ipv6; .mode == "forward" and .rules == false) and
	all(.xfrm.ipv4, .xfrm.ipv6; .mode == "forward" and .reason == "" and .checked > 0 and
		.forward_policies == 0 and .output_policies == 0 and .states == 0) and
	.kernel.release != "" and .kernel.program.conntrack_kfuncs == true and
	.kernel.program.udp_stream_time == true and
	.kernel.program.verified_insns > 0 and .kernel.program.loaded > 0 and
	.kernel.lacks == []' status

rctl stats | stats_norm | golden stats
rctl stats --prometheus | stats_norm | golden stats-prometheus
# Each ping crosses twice: 2N frames of 98 (IPv4) and 118 bytes (IPv6).
json stats ".forwarded_v4.packets == $((2 * N)) and .forwarded_v4.bytes == $((2 * N * 98)) and
	.forwarded_v6.packets == $((2 * N)) and .forwarded_v6.bytes == $((2 * N * 118)) and
	all(.[]; (.packets | type) == \"number\" and (.bytes | type) == \"number\")" stats
# The same counters, in the same order, as the text.
[ "$(jq -r 'keys_unsorted[]' <<<"$JSON")" = "$(rctl stats | awk 'NR > 1 { print $1 }')" ] ||
	fail "stats -j and stats list different counters"
out=$(rctl stats -i 0.2 -c 1 -j) || fail "stats -i 0.2 -c 1 -j: exit $?"
[ "$(wc -l <<<"$out")" -eq 1 ] || fail "stats -i 0.2 -c 1 -j: $(wc -l <<<"$out") lines"
python3 -m json.tool >/dev/null <<<"$out" || fail "stats -i -j: not JSON: $out"
jqe '.interval > 0 and (.rates | type) == "object"' <<<"$out" >/dev/null ||
	fail "stats -i -j: $out"

run algo algo
json algo '.ipv4.algorithm == "bsearch4" and
	(.ipv4.preferences | keys) == ["bsearch4", "dir24_8", "dxr"] and
	(.ipv6.preferences | keys) == ["bsearch6", "poptrie6", "trie6"]' algo
json algo-ipv6 '(keys | sort) == ["ipv6", "pin_dir"]' algo ipv6

run lookup-connected4 lookup "$SNK4"
json lookup-connected4 '.action == "forward" and .nexthop.kind == "connected" and
	.egress.name == $rs and .egress.attached and .neighbour.dst_mac == $smac and
	.neighbour.src_mac == $rsmac and .kernel.prefix == "198.18.2.0/24"' lookup "$SNK4"
run lookup-gateway6 lookup 2001:db8:100::7
json lookup-gateway6 '.action == "forward" and .nexthop.kind == "gateway" and
	.gateway == $s6 and .neighbour.dst_mac == $smac and
	.kernel.prefix == "2001:db8:100::/48"' lookup 2001:db8:100::7
run lookup-unresolved lookup 198.18.102.1
json lookup-unresolved '.action == "pass" and .reason == "pass_neigh" and
	.neighbour.state == "invalid"' lookup 198.18.102.1
run lookup-blackhole lookup 198.18.101.1 -i "$R_SNK"
json lookup-blackhole '.action == "drop" and .reason == "drop_blackhole" and
	.iif == $rs' lookup 198.18.101.1 -i "$R_SNK"
run lookup-from lookup "$SNK4" --from "$GEN4" -i "$R_GEN"
json lookup-from '.action == "forward" and .from.address == $g4 and
	.from.iif == $rg and .from.rp_filter == "off" and
	.from.route_back.kind == "connected" and .from.route_back.dev == $rg' \
	lookup "$SNK4" --from "$GEN4" -i "$R_GEN"
run lookup-unreachable lookup 2001:db8:101::1
run lookup-noroute lookup 198.19.200.1
json lookup-noroute '.action == "pass" and .reason == "pass_no_route" and
	.nexthop.kind == "none"' lookup 198.19.200.1

run verify verify
json verify '.ipv4.mismatched == 0 and .ipv6.mismatched == 0 and
	.ipv4.checked > 0 and .ipv6.checked > 0 and .mismatches == []' verify --random 100

run_sorted neighbours neighbours
run_sorted neighbours-ipv4 neighbours -f ipv4
run_sorted neighbours-sink neigh --dev "$R_SNK"
json neighbours 'all(.[]; (.index | type) == "number" and .index > 0) and
	any(.[]; .address == $s4 and .dev == $rs and .lladdr == $smac and
		.src_mac == $rsmac and .state == "valid") and
	any(.[]; .address == $g6 and .dev == $rg and .lladdr == $gmac) and
	any(.[]; .address == "198.18.2.9" and .state == "invalid")' neighbours
NEIGH=$JSON
[ "$(jq length <<<"$NEIGH")" -eq "$(rctl neighbours | wc -l)" ] ||
	fail "neighbours: text and JSON list different numbers of entries"
json neighbours-ipv6 'length > 0 and all(.[]; .family == "ipv6")' neighbours --family inet6
json neighbours-sink 'length > 0 and all(.[]; .dev == $rs)' neighbours -d "$R_SNK"

run_sorted nexthops nexthops
run_sorted nexthops-ipv6 nexthops -f ipv6
run_sorted nexthops-gen nexthops -d "$R_GEN"
json nexthops 'any(.[]; .kind == "local" and .dev == null) and
	any(.[]; .kind == "blackhole" and .dev == null and .neigh == null) and
	any(.[]; .kind == "unreachable") and
	any(.[]; .kind == "connected" and .family == "ipv4" and .dev == $rs) and
	any(.[]; .kind == "gateway" and .gateway == $s4 and .dev == $rs and
		.neigh.lladdr == $smac and .neigh.state == "valid")' nexthops
NH=$JSON
[ "$(jq length <<<"$NH")" -eq "$(rctl nexthops | wc -l)" ] ||
	fail "nexthops: text and JSON list different numbers of entries"
# Every gateway's neighbour index names that gateway in the neighbour array.
jqe --argjson ne "$NEIGH" 'all(.[] | select(.kind == "gateway");
	. as $h | any($ne[]; .index == $h.neigh.index and .address == $h.gateway and
		.dev == $h.dev and .lladdr == $h.neigh.lladdr))' <<<"$NH" >/dev/null ||
	fail "nexthops -j: a gateway's neighbour index does not match neighbours -j"
# ... and the nexthop lookup reports is the one of the array.
idx=$(rctl lookup -j 198.18.100.1 | jq .nexthop.index)
jqe --argjson i "$idx" --arg s4 "$SNK4" 'any(.[]; .index == $i and .gateway == $s4)' \
	<<<"$NH" >/dev/null || fail "lookup 198.18.100.1: nexthop $idx is not the gateway $SNK4 in nexthops -j"
json nexthops-ipv6 'length > 0 and all(.[]; .family == "ipv6")' nexthops -f ipv6
json nexthops-gen 'length > 0 and all(.[]; .dev == $rg)' nexthops -d "$R_GEN"

# The live table as prefixes: the routes above, each with its nexthop.
run_sorted routes routes
run_sorted routes-ipv4 routes -f ipv4
json routes 'any(.[]; .prefix == "198.18.101.0/24" and .kind == "blackhole") and
	any(.[]; .prefix == "2001:db8:101::/48" and .kind == "unreachable") and
	any(.[]; .kind == "gateway") and all(.[]; (.nexthop | type) == "number")' routes
ROUTES=$JSON
# Longest-prefix match over the listed prefixes is the dataplane's answer.
for a in 198.18.100.1 198.18.101.1 198.18.102.1 "$SNK4" 2001:db8:100::1 2001:db8:101::1 "$SNK6"; do
	want=$(rctl lookup -j "$a" | jq .nexthop.index)
	got=$(python3 -c '
import ipaddress, json, sys
a = ipaddress.ip_address(sys.argv[1])
best = max((r for r in json.loads(sys.argv[2])
            if ipaddress.ip_network(r["prefix"]).version == a.version
            and a in ipaddress.ip_network(r["prefix"])),
           key=lambda r: ipaddress.ip_network(r["prefix"]).prefixlen, default=None)
print(best["nexthop"] if best else 0)' "$a" "$ROUTES")
	[ "$got" = "$want" ] || fail "routes -j: $a matches nexthop $got, lookup says $want"
done

# The policy rules: the kernel's defaults, all exact, the families
# forwarded in XDP; with -j the keys and values of ip -j rule.
run rules rules
run rules-ipv6 rules -6
json rules '.ipv4.xdp and .ipv6.xdp and .ipv4.fallback == "none" and
	.ipv4.count == 3 and .ipv4.total == 3 and .ipv6.count == 2 and
	([.ipv4.rules[].priority] == [0, 32766, 32767]) and
	([.ipv6.rules[].priority] == [0, 32766]) and
	all(.ipv4.rules[], .ipv6.rules[]; .xfib.class == "exact")' rules
for f in 4 6; do
	got=$(rctl rules -j "-$f" | jq -c ".ipv$f.rules | map(del(.xfib))")
	want=$(ip -n "$RTR" "-$f" -j rule | jq -c .)
	[ "$got" = "$want" ] || fail "rules -j -$f: $got; ip -j rule: $want"
done
json rules-ipv4 '(keys | sort) == ["ipv4"]' rules -4

# Conntrack's flows: none, on a router without a ruleset; the families'
# mode forward.
run flows flows
run flows-ipv6 flows -6
json flows '. == []' flows

# ---- errors: one line naming the object and the cause, and the exit code -----------
errors() {
	local args rc
	for args in "$@"; do
		rc=0
		# shellcheck disable=SC2086 # the argument lists are split on purpose
		rctl $args >/dev/null 2>"$XFIB_TMP/err" || rc=$?
		printf '$ xfibctl %s\n%s\nexit %d\n' "$args" "$(cat "$XFIB_TMP/err")" "$rc"
	done
}
errors "bogus" "n" "st" "--bogus status" "status --bogus" "status extra" \
	"attach" "attach --mode turbo $R_SNK" "attach nosuch0" "detach nosuch0" \
	"stats -i" "stats -i 0" "stats -c 2" "stats --prometheus -j" \
	"algo ipv9" "algo ipv4 trie6" "algo ipv4 dir24_8 extra" \
	"lookup" "lookup 198.18.1.300" "lookup $SNK4 -i nosuch0" "lookup $SNK4 $SNK6" \
	"verify --random lots" "verify --rule-flows -1" "verify -i nosuch0" \
	"neighbours -f ipx" "neighbours -d nosuch0" "nexthops --dev" "nexthops extra" \
	"rules extra" "ru -5" "flows extra" "flows -f ipv4" |
	golden errors

if [ -s "$DIFFS" ]; then
	sed 's/^/differs from its golden file: /' "$DIFFS" >&2
	fail "$(wc -l <"$DIFFS") outputs differ from tests/golden/cli (UPDATE_GOLDEN=1 to regenerate after an intended change)"
fi
# Every golden file was compared: none is left over from a removed case.
if [ "$UPDATE" != 1 ]; then
	for f in "$GOLDEN"/*.txt; do
		[ -e "$OUTDIR/$(basename "$f")" ] || fail "$f: no output compared with it (remove it, or UPDATE_GOLDEN=1)"
	done
fi
[ "$UPDATE" = 1 ] && log "goldens written to $GOLDEN: review them with git diff"
log "PASS: every command's text output matches its golden, every -j output parses and says what it must"
