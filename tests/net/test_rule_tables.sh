#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The tables policy rules reach, mirrored for the XDP rule walk
# (include/xfib/tables.h), in both families: each table a rule looks up
# (100, 52, 51820, and a copy of main for "lookup main
# suppress_prefixlength 8"; "lookup main suppress_prefixlength 0" takes
# no slot: main's own instance, with its default route's answer marked)
# gets a slot whose published ranges equal
# what longest-prefix match over `ip route show table N` gives
# (tests/lib/tables_ref.py computes them on its own): the same prefix
# count, the same number of ranges, and, read back from the pinned pool,
# the same starts, prefix lengths and nexthops. A throw route answers "no
# route" for its whole prefix, unreachable and blackhole routes their
# nexthop kinds, a multipath route a group. Routes added and deleted in a table rebuild it (a new
# descriptor generation); a rule added for a table that already has
# routes brings them in; a rule deleted frees the slot; a table with a
# source-specific IPv6 route is left to the kernel; one larger than the
# ranges are chosen for gets an instance of its own (trie6, in the table
# slot's map-in-map slot: include/xfib/tables.h). The rules say walk,
# from the rule after "lookup local", and the family keeps its XDP
# instance.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v bpftool >/dev/null || skip "missing tool: bpftool"
REF="$(dirname "$0")/../lib/tables_ref.py"

topo_up sink2
RIP="ip -n $RTR"

# ---- what xfibctl and the maps say --------------------------------------------

# tbl FAM PRIO: the .xfib.table object of the first rule of priority PRIO.
tbl() {
	rctl rules -j "-$1" | jq -c --argjson p "$2" \
		"[.ipv$1.rules[] | select(.priority == \$p)][0].xfib.table"
}
# tbl_field FAM PRIO FIELD
tbl_field() { tbl "$1" "$2" | jq -r ".$3"; }
fam_idx() { [ "$1" = 4 ] && echo 0 || echo 1; }
# le32 N: the four bytes of N, little-endian, as bpftool takes a key.
le32() { printf '%d %d %d %d' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
# map_value MAP INDEX: the formatted value of an array map's entry.
map_value() {
	# shellcheck disable=SC2046
	bpftool -j map lookup pinned "$PIN/$1" key $(le32 "$2") | jq -c '.formatted.value'
}
desc() { map_value xfib_tables $(($(fam_idx "$1") * 16 + $2)); }
info() { map_value xfib_table_info $(($(fam_idx "$1") * 16 + $2)); }

# kernel_ref FAM TABLE: tables_ref.py's ranges of the kernel's table.
kernel_ref() { $RIP "-$1" -j route show table "$2" | python3 "$REF" "$1"; }
kernel_prefixes_of() { $RIP "-$1" -j route show table "$2" | jq '[.[].dst] | unique | length'; }

# table_is FAM PRIO STATE ROUTES RANGES: rule PRIO's table is published
# so.
table_is() {
	[ "$(tbl "$1" "$2" | jq -c '[.state, .routes, .ranges]')" = "[\"$3\",$4,$5]" ]
}
# wait_table FAM PRIO TABLE: rule PRIO's table is published READY with
# the kernel table's prefixes and ranges.
wait_table() {
	local want_r want_n
	want_r=$(kernel_prefixes_of "$1" "$3")
	want_n=$(kernel_ref "$1" "$3" | wc -l)
	wait_until 10 table_is "$1" "$2" xdp "$want_r" "$want_n" && return
	fail "ipv$1 rule $2 (table $3): $(tbl "$1" "$2"), want $want_r routes, $want_n ranges in XDP"
}

# nh_kind IDX: KIND := the kind of nexthop IDX (xfib_nexthops), as a
# word; each index read once (they do not change meaning while used).
declare -A NH_KIND=()
nh_kind() {
	[ -n "${NH_KIND[$1]:-}" ] || NH_KIND[$1]=$(nh_kind_read "$1")
	KIND=${NH_KIND[$1]}
}
nh_kind_read() {
	case $(map_value xfib_nexthops "$1" | jq -r .kind) in
	0) echo none ;; 1) echo gateway ;; 2) echo connected ;; 3) echo blackhole ;;
	4) echo local ;; 5) echo unreachable ;; 6) echo unsupported ;; 7) echo group ;;
	*) echo "?" ;;
	esac
}

# pool_matches FAM PRIO TABLE: the descriptor names 2^log2n ranges of the
# pool whose starts and lengths are the reference's, padded with the
# last; each nexthop of the kind its answer needs, the same answer the
# same nexthop.
pool_check() {
	local fam=$1 prio=$2 table=$3 slot d off log2n n i e start plen nh want got
	local -a ref b
	local -A nh_of
	slot=$(tbl_field "$fam" "$prio" slot)
	d=$(desc "$fam" "$slot")
	[ "$(jq .state <<<"$d")" = 1 ] || fail "ipv$fam table $table: descriptor $d is not READY"
	off=$(jq .off <<<"$d")
	log2n=$(jq .log2n <<<"$d")
	mapfile -t ref < <(kernel_ref "$fam" "$table")
	n=${#ref[@]}
	((1 << log2n >= n && (log2n == 0 || 1 << (log2n - 1) < n))) ||
		fail "ipv$fam table $table: 2^$log2n ranges for $n"
	for ((i = 0; i < 1 << log2n; i++)); do
		read -r start plen want <<<"${ref[$((i < n ? i : n - 1))]}"
		if [ "$fam" = 4 ]; then
			e=$(map_value xfib_tpool4 $((off + i)))
			[ "$(jq .start <<<"$e")" = "$start" ] ||
				fail "ipv4 table $table range $i: start $(jq .start <<<"$e"), want $start"
			nh=$(($(jq .nh_plen <<<"$e") & 0xffffff))
			[ $(($(jq .nh_plen <<<"$e") >> 24)) = "$plen" ] ||
				fail "ipv4 table $table range $i: /$(($(jq .nh_plen <<<"$e") >> 24)), want /$plen"
		else
			# The raw bytes: jq's numbers are doubles, too short
			# for the 64-bit halves.
			# shellcheck disable=SC2046
			mapfile -t b < <(bpftool -j map lookup pinned "$PIN/xfib_tpool6" \
				key $(le32 $((off + i))) | jq -r '.value[]' | sed 's/^0x//')
			e=$(printf '%s' "${b[7]}" "${b[6]}" "${b[5]}" "${b[4]}" "${b[3]}" "${b[2]}" "${b[1]}" "${b[0]}" \
				"${b[15]}" "${b[14]}" "${b[13]}" "${b[12]}" "${b[11]}" "${b[10]}" "${b[9]}" "${b[8]}")
			nh=$((16#${b[19]}${b[18]}${b[17]}${b[16]}))
			got=$((16#${b[20]}))
			[ "$e" = "$start" ] ||
				fail "ipv6 table $table range $i: start $e, want $start"
			[ "$got" = "$plen" ] ||
				fail "ipv6 table $table range $i: /$got, want /$plen"
		fi
		nh_kind "$nh"
		case $want in
		none) [ "$nh" = 0 ] || fail "ipv$fam table $table range $i: nexthop $nh, want none" ;;
		unreachable | blackhole | local)
			[ "$KIND" = "$want" ] ||
				fail "ipv$fam table $table range $i: a $KIND nexthop, want $want" ;;
		group:*) [ "$KIND" = group ] ||
			fail "ipv$fam table $table range $i: a $KIND nexthop for $want" ;;
		*) [ "$KIND" = gateway ] || [ "$KIND" = connected ] ||
			fail "ipv$fam table $table range $i: a $KIND nexthop for $want" ;;
		esac
		if [ -n "${nh_of[$want]:-}" ] && [ "$want" != none ]; then
			[ "${nh_of[$want]}" = "$nh" ] ||
				fail "ipv$fam table $table: $want is nexthop ${nh_of[$want]} and $nh"
		fi
		nh_of[$want]=$nh
	done
}

# ---- the tables and their rules -------------------------------------------------

G4=$SNK4 G4B=$SNK2_4 G6=$SNK6 G6B=$SNK2_6
$RIP route add 198.18.100.0/24 via "$G4" table 100
$RIP route add 198.18.100.128/25 via "$G4B" table 100
$RIP route add default via "$G4B" table 100
$RIP route add 198.18.101.0/24 table 100 nexthop via "$G4" nexthop via "$G4B"
$RIP route add 198.18.52.0/22 via "$G4" table 52
$RIP route add throw 198.18.52.0/24 table 52
$RIP route add unreachable 198.18.53.0/24 table 52
$RIP route add blackhole 198.18.54.0/24 table 52
$RIP -6 route add 2001:db8:100::/48 via "$G6" table 100
$RIP -6 route add 2001:db8:100:8000::/49 via "$G6B" table 100
$RIP -6 route add default via "$G6B" table 100
$RIP -6 route add 2001:db8:101::/48 table 100 nexthop via "$G6" nexthop via "$G6B"
$RIP -6 route add 2001:db8:52::/46 via "$G6" table 52
$RIP -6 route add throw 2001:db8:52::/48 table 52
$RIP -6 route add unreachable 2001:db8:53::/48 table 52
$RIP -6 route add blackhole 2001:db8:54::/48 table 52
for fam in 4 6; do
	$RIP -$fam rule add pref 100 from "$( [ $fam = 4 ] && echo 198.18.60.0/24 || echo 2001:db8:60::/48)" table 100
	$RIP -$fam rule add pref 101 ipproto udp table 52
	$RIP -$fam rule add pref 102 not fwmark 0xca6c table 51820
	$RIP -$fam rule add pref 103 table main suppress_prefixlength 0
	$RIP -$fam rule add pref 107 table main suppress_prefixlength 8
done
# Main's default routes, whose nexthops the walk tells by their index.
$RIP route add default via "$G4"
$RIP -6 route add default via "$G6"

for fam in 4 6; do
	wait_table $fam 100 100
	wait_table $fam 101 52
	wait_table $fam 107 main
	[ "$(tbl_field $fam 107 main_copy)" = true ] || fail "ipv$fam: suppress_prefixlength 8's table is no copy of main: $(tbl $fam 107)"
	[ "$(tbl $fam 103 | jq -c '[.slot, .main_copy, .default_mark, .state]')" = '[0,false,true,"xdp"]' ] ||
		fail "ipv$fam: suppress_prefixlength 0 is not on main's own instance with the mark: $(tbl $fam 103)"
	# Main's default route answers by a nexthop of its own, marked.
	d=$(rctl -j lookup "$([ $fam = 4 ] && echo 198.18.222.1 || echo 2001:db8:222::1)" | jq .nexthop.index)
	[ "$(rctl nexthops -j | jq --argjson i "$d" '.[] | select(.index == $i) | .default_route')" = true ] ||
		fail "ipv$fam: the default route's nexthop $d is not marked: $(rctl nexthops -j | jq -c --argjson i "$d" '.[] | select(.index == $i)')"
	[ "$(tbl_field $fam 102 state)" = empty ] || fail "ipv$fam: table 51820 without routes: $(tbl $fam 102)"
	pool_check $fam 100 100
	pool_check $fam 101 52
	# Without netfilter marking packets, fwmark is decided for mark 0.
	[ "$(rctl rules -j -$fam | jq -r '[.ipv'$fam'.rules[] | select(.priority == 102)][0].xfib.class')" = exact ] ||
		fail "ipv$fam: not fwmark 0xca6c is not exact without netfilter marks"
	[ "$(rctl rules -j | jq -c "[.ipv$fam.xdp, .ipv$fam.fallback, .ipv$fam.walk, .ipv$fam.first]")" = '[true,"none",true,1]' ] ||
		fail "ipv$fam: rules -j says $(rctl rules -j | jq -c "[.ipv$fam.xdp, .ipv$fam.fallback, .ipv$fam.walk, .ipv$fam.first]")"
	status_is ".ipv$fam.fallback == \"none\"" || fail "ipv$fam: status $(rctl status -j | jq -c .ipv$fam)"
done
rctl rules -4 | grep -q "table 100: 4 routes, $(kernel_ref 4 100 | wc -l) ranges in XDP" ||
	fail "rules text does not show table 100: $(rctl rules -4)"
rctl rules -4 | grep -q "suppress_prefixlength 0.*table main: the XDP instance, .*default routes' answers marked" ||
	fail "rules text does not show main's instance for suppress_prefixlength 0: $(rctl rules -4)"
log "tables 100, 52 and a copy of main mirrored with their ranges; suppress_prefixlength 0 on main's instance"

# ---- changes --------------------------------------------------------------------

for fam in 4 6; do
	slot=$(tbl_field $fam 100 slot)
	gen=$(desc $fam "$slot" | jq .gen)
	if [ $fam = 4 ]; then
		$RIP route add 198.18.100.64/26 via "$G4B" table 100
		$RIP route add 198.18.77.0/24 via "$G4" table 51820
	else
		$RIP -6 route add 2001:db8:100:4000::/50 via "$G6B" table 100
		$RIP -6 route add 2001:db8:77::/48 via "$G6" table 51820
	fi
	wait_table $fam 100 100
	wait_table $fam 102 51820
	(($(desc $fam "$slot" | jq .gen) > gen)) || fail "ipv$fam: table 100 changed, its descriptor did not"
	pool_check $fam 100 100
	if [ $fam = 4 ]; then
		$RIP route del 198.18.100.128/25 table 100
	else
		$RIP -6 route del 2001:db8:100:8000::/49 table 100
	fi
	wait_table $fam 100 100
	# A table with routes before a rule reaches it: they come with it.
	if [ $fam = 4 ]; then
		$RIP route add 198.18.30.0/24 via "$G4" table 300
		$RIP route add unreachable 198.18.31.0/24 table 300
	else
		$RIP -6 route add 2001:db8:30::/48 via "$G6" table 300
		$RIP -6 route add unreachable 2001:db8:31::/48 table 300
	fi
	$RIP -$fam rule add pref 104 iif "$R_GEN" table 300
	wait_table $fam 104 300
	pool_check $fam 104 300
	slot=$(tbl_field $fam 104 slot)
	$RIP -$fam rule del pref 104
	wait_until 10 eval '[ "$(info $fam "$slot" | jq .table)" = 0 ]' ||
		fail "ipv$fam: table 300's slot $slot not freed after its rule went: $(info $fam "$slot")"
done
log "tables rebuilt on route changes; a rule's new table loaded, a deleted rule's slot freed"

# ---- tables left to the kernel ---------------------------------------------------

# An IPv6 source-specific route: the kernel backtracks where xfib cannot.
$RIP -6 route add 2001:db8:57::/48 from 2001:db8:60::/48 via "$G6" table 57
$RIP -6 rule add pref 105 table 57
wait_until 10 eval '[ "$(tbl_field 6 105 state)" = kernel ]' ||
	fail "ipv6 table 57 with a source-specific route: $(tbl 6 105)"
rctl rules -6 | grep -q "table 57: not mirrored: a source-specific route" ||
	fail "rules text for table 57: $(rctl rules -6 | grep 'lookup 57')"
[ "$(rctl rules -j -6 | jq -r '[.ipv6.rules[] | select(.priority == 105)][0].xfib.class')" = exact ] ||
	fail "a rule to a table left to the kernel is not exact (the walk reads the state)"

# Too large for the IPv6 pool's ranges (2^18): every other /128 of a
# /111 makes two ranges each. Far past where the choice leaves the
# ranges: a trie6 instance of its own, in one of its slot's two
# map-in-map slots (XFIB_TABLE_INST_SLOT: 2 + 2 * (slot - 1) + 0 or 1).
python3 -c '
import ipaddress
base = int(ipaddress.IPv6Address("2001:db8:f0::"))
for i in range(132000):
    print("route add blackhole %s/128 table 200" % ipaddress.IPv6Address(base + 2 * i))' |
	ip -n "$RTR" -6 -batch -
$RIP -6 rule add pref 106 table 200
wait_until 30 eval '[ "$(tbl 6 106 | jq -r ".state + \" \" + .algo")" = "xdp trie6" ]' ||
	fail "ipv6 table 200 of 132000 routes: $(tbl 6 106)"
rctl rules -6 | grep -q "table 200: 132000 routes in XDP by its own trie6 instance" ||
	fail "rules text for table 200: $(rctl rules -6 | grep 'lookup 200')"
slot=$(tbl_field 6 106 slot)
[ "$(info 6 "$slot" | jq '[.state, .algo, .routes]' -c)" = '[3,4,132000]' ] ||
	fail "xfib_table_info of table 200: $(info 6 "$slot")"
d=$(desc 6 "$slot")
[ "$(jq -c '[.state, .algo]' <<<"$d")" = '[3,4]' ] &&
	(($(jq .off <<<"$d") >> 1 == slot)) ||
	fail "table 200's descriptor names no instance of its slot: $d"
# Answered as the kernel answers: verify checks every table a rule
# reaches, this one through its instance.
verify_clean "a table with an instance of its own"
# The others stay as they were.
wait_table 6 100 100
status_is '.ipv6.fallback == "none"' || fail "ipv6: status $(rctl status -j | jq -c .ipv6)"
# A unicast route in the local table, with rules between local and main:
# slot 0 (main merged with local) cannot stand for local in the walk.
$RIP route add 198.18.88.0/24 via "$G4" table local
wait_until 10 status_is '.ipv4.fallback == "policy_rules" and .ipv4.rules_fallback == "local_routes"' ||
	fail "a unicast route in the local table: status $(rctl status -j | jq -c .ipv4)"
[ "$(rctl rules -j -4 | jq -c '[.ipv4.xdp, .ipv4.fallback]')" = '[false,"local_routes"]' ] ||
	fail "rules -j with a unicast local route: $(rctl rules -j -4 | jq -c '[.ipv4.xdp, .ipv4.fallback]')"
status_is '.ipv6.fallback == "none"' || fail "ipv6 affected by an IPv4 local route"
$RIP route del 198.18.88.0/24 table local
wait_until 10 status_is '.ipv4.fallback == "none"' ||
	fail "the local route went, the fallback stayed: $(rctl status -j | jq -c .ipv4)"

# A netfilter rule that marks packets before routing: fwmark rules are
# the kernel's again; without it, decided for mark 0.
if command -v nft >/dev/null; then
	ip netns exec "$RTR" nft -f - <<-'EOF'
		table inet xfibmark {
			chain pre { type filter hook prerouting priority mangle; meta mark set 0x1; }
		}
	EOF
	for fam in 4 6; do
		wait_until 10 eval '[ "$(rctl rules -j -'$fam' | jq -r "[.ipv'$fam'.rules[] | select(.priority == 102)][0].xfib | .class + \" \" + .reason")" = "kernel fwmark: netfilter or tc may mark packets before routing, which xfib does not follow" ]' ||
			fail "ipv$fam: fwmark rule with a marking prerouting chain: $(rctl rules -j -$fam | jq -c '.ipv'$fam'.rules[] | select(.priority == 102) | .xfib')"
	done
	ip netns exec "$RTR" nft delete table inet xfibmark
	wait_until 10 eval '[ "$(rctl rules -j -4 | jq -r "[.ipv4.rules[] | select(.priority == 102)][0].xfib.class")" = exact ]' ||
		fail "the marking chain went, the fwmark rule stayed the kernel's"
	log "fwmark rules follow whether netfilter marks before routing"
fi
log "PASS: rules' tables mirrored in both families, rebuilt, loaded and freed; an unsupported one left to the kernel, a large one served by its own instance"
