#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Policy rules changed under traffic: ping streams from gen in both
# families run while rules are added, deleted, replaced (a delete and an
# add of another table at the same priority), several removed at once,
# and a table's route replaced and deleted under its rule. Every echo of
# the streams is answered (gen's kernel counts a reply for each echo
# sent: no loss in xfib's swaps of rules and tables). After each change,
# within 5 s, the echoes reach the sink the kernel's rules pick (ip route
# get) and no other, forwarded in XDP: xfib's counter grows, the router
# kernel's IpForwDatagrams does not. At the end, xfibctl rules -j equals
# ip -j rule. The address 198.18.99.1 (2001:db8:99::1) is on the
# loopback of both sinks: which one gets the echoes tells the path. The
# router's neighbours are permanent, so no change waits for a neighbour.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up sink2
A4=198.18.99.1 A6=2001:db8:99::1
declare -A DST=([4]=$A4 [6]=$A6) SRC=([4]=$GEN4 [6]=$GEN6)
declare -A FROM=([4]="$NET4_G.0/24" [6]="$NET6_G::/64")
declare -A NET=([4]=198.18.99.0/24 [6]=2001:db8:99::/48)
declare -A VIA_S=([4]=$SNK4 [6]=$SNK6) VIA_S2=([4]=$SNK2_4 [6]=$SNK2_6)
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add "$A4/32" dev lo
	ip -n "$ns" addr add "$A6/128" dev lo
done
RIP="ip -n $RTR"
neighbours_permanent
for f in 4 6; do
	$RIP "-$f" route add "${NET[$f]}" via "${VIA_S[$f]}"
	$RIP "-$f" route add "${NET[$f]}" via "${VIA_S2[$f]}" table 100
	$RIP "-$f" route add "${NET[$f]}" via "${VIA_S[$f]}" table 200
done
# Main's new route published before the streams start.
wait_prefixes_match

# icmp_stat FAM NS NAME: an ICMP counter of NS's kernel (Icmp: column
# NAME, or snmp6's NAME).
icmp_stat() {
	# shellcheck disable=SC2016
	if [ "$1" = 4 ]; then
		in_ns "$2" awk -v k="$3" '
			$1 == "Icmp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
			$1 == "Icmp:" && hdr { print $col[k]; exit }' /proc/net/snmp
	else
		in_ns "$2" awk -v k="$3" '$1 == k { print $2 }' /proc/net/snmp6
	fi
}
echos() { icmp_stat "$1" "$2" "$([ "$1" = 4 ] && echo InEchos || echo Icmp6InEchos)"; }
replies() { icmp_stat "$1" "$GEN" "$([ "$1" = 4 ] && echo InEchoReps || echo Icmp6InEchoReplies)"; }

# kernel_pick FAM: the sink the router kernel's rules pick for the
# streams' echoes.
kernel_pick() {
	local dev
	dev=$($RIP "-$1" -j route get "${DST[$1]}" from "${SRC[$1]}" iif "$R_GEN" | jq -r '.[0].dev')
	case $dev in
	"$R_SNK") echo "$SNK" ;;
	"$R_SNK2") echo "$SNK2" ;;
	*) echo "dev $dev" ;;
	esac
}

# on_path FAM NS: since the last call, the stream's echoes reached NS
# (3 or more) and not the other sink, forwarded by xfib, and the router
# kernel forwarded none.
declare -A LAST=()
on_path() {
	local fam=$1 ns=$2 other=$SNK2 now a0 b0 k0 x0 a b k x
	[ "$ns" = "$SNK" ] || other=$SNK
	now="$(echos "$fam" "$ns") $(echos "$fam" "$other") $("kfwd$fam" "$RTR") $(counter "forwarded_v$fam")"
	read -r a0 b0 k0 x0 <<<"${LAST[$fam]:-- - - -}"
	LAST[$fam]=$now
	read -r a b k x <<<"$now"
	# (An echo and its reply are counted by xfib and at the sink at
	# different moments: at least one of each pair in the window.)
	[ "$a0" != - ] && ((a - a0 >= 3 && b == b0 && k == k0 && x - x0 >= a - a0))
}

# path_is NS WHAT: in both families the kernel's rules pick NS, and
# within 5 s the streams take that path, in XDP.
path_is() {
	local f
	for f in 4 6; do
		[ "$(kernel_pick $f)" = "$1" ] ||
			fail "$2: the kernel's rules pick $(kernel_pick $f) for ipv$f, not $1"
		LAST[$f]=""
		wait_until 5 on_path $f "$1" ||
			fail "$2: ipv$f echoes not XDP-forwarded to $1 alone (last: ${LAST[$f]}; $(stats_line))"
	done
	log "$2: both families XDP-forwarded to $1"
}

# rules_json FAM, kernel_rules FAM: as test_rules.sh.
rules_json() { rctl rules -j "-$1" | jq -c ".ipv$1.rules | map(del(.xfib))"; }
kernel_rules() { $RIP "-$1" -j rule | jq -c .; }
rules_same() { [ "$(rules_json "$1")" = "$(kernel_rules "$1")" ]; }

# both ARGS...: "ip ARGS" in both families ({} in ARGS: the family's
# network of gen).
both() {
	local f
	for f in 4 6; do
		$RIP "-$f" "${@//\{\}/${FROM[$f]}}"
	done
}

# all_replied FAM N: gen's kernel got N echo replies since the start.
declare -A R0=()
all_replied() { (($(replies "$1") - R0[$1] == $2)); }
for f in 4 6; do R0[$f]=$(replies $f); done
stream_start s4 4 "$A4" -i 0.02
stream_start s6 6 "$A6" -i 0.02
path_is "$SNK" "main"

both rule add from {} lookup 100 pref 300
path_is "$SNK2" "rule added (from gen's network, table 100)"
both rule del pref 300
path_is "$SNK" "rule deleted"
both rule add from {} lookup 100 pref 300
path_is "$SNK2" "rule added again"
# A replace is a delete and an add: table 200 sends to the sink.
both rule del pref 300
both rule add from {} lookup 200 pref 300
path_is "$SNK" "rule of priority 300 replaced (table 200)"
# Several before it, removed at once.
for f in 4 6; do
	$RIP "-$f" -batch - <<-EOF
		rule add iif $R_GEN lookup 100 pref 250
		rule add to ${NET[$f]} lookup 100 pref 260
		rule add from ${FROM[$f]} lookup 100 pref 270
	EOF
done
path_is "$SNK2" "three rules added (iif, to, from; table 100)"
$RIP -4 rule del pref 250
$RIP -6 rule del pref 250
path_is "$SNK2" "the first of them deleted"
for f in 4 6; do
	$RIP "-$f" -batch - <<-EOF
		rule del pref 260
		rule del pref 270
	EOF
done
path_is "$SNK" "the others deleted at once (table 200 again)"
# Table 200's route replaced under its rule, then deleted (main).
for f in 4 6; do
	$RIP "-$f" route replace "${NET[$f]}" via "${VIA_S2[$f]}" table 200
done
path_is "$SNK2" "table 200's route replaced (to sink2)"
for f in 4 6; do
	$RIP "-$f" route del "${NET[$f]}" table 200
done
path_is "$SNK" "table 200's route deleted (main)"
for f in 4 6; do
	$RIP "-$f" route add "${NET[$f]}" via "${VIA_S2[$f]}" table 200
done
path_is "$SNK2" "table 200's route added again"
both rule del pref 300
path_is "$SNK" "the last rule deleted"

for f in 4 6; do
	stream_finish "s$f"
	((PING_TX >= 100)) || fail "stream ipv$f sent only $PING_TX echoes"
	# ping counts an echo in flight when it ends as lost: gen's kernel
	# counts every reply that came back.
	wait_until 5 all_replied $f "$PING_TX" ||
		fail "ipv$f: $(($(replies $f) - R0[$f])) replies for the $PING_TX echoes of the stream (ping: $PING_RX)"
	wait_until 10 rules_same $f || {
		diff <(rules_json $f | jq -c '.[]') <(kernel_rules $f | jq -c '.[]') >&2 || true
		fail "ipv$f: xfibctl rules -j differs from ip -j rule (< xfibctl, > ip)"
	}
done
log "PASS: rules and tables changed under traffic, every echo answered, forwarded in XDP"
