#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Martian sources through policy rules, on a port without rp_filter. A
# kernel that has rules of its own (any rule ever added or deleted:
# fib4_has_custom_rules()) looks each received IPv4 source up through
# them even with rp_filter off (fib_validate_source() goes on to
# __fib_validate_source()), and drops a source whose route back is local,
# broadcast, anycast or multicast as a martian, in whichever table the
# rules lead that lookup to. xfib must hand such a packet to the kernel
# (pass_local_source) rather than forward it.
#
# The router has "to 198.18.76.0/22 lookup 100", a rule the reversed flow
# of the source check matches (its destination is the packet's source)
# and the packets themselves, to the sink, do not. Table 100 holds a local
# /32, a local /24 and a unicast route:
#
#   local32   198.18.77.7   table 100: local 198.18.77.7        martian
#   local24   198.18.78.9   table 100: local 198.18.78.0/24     martian
#   unicast   198.18.79.5   table 100: 198.18.79.0/24 via gen   forwarded
#   fallback  198.18.77.8   no route in 100, main's via gen     forwarded
#
# gen sends N raw echo requests from each source to the sink
# (tests/lib/rawsend.py), first to the router's kernel alone, then with
# xfib attached; each source must arrive at the sink as without xfib,
# the martians counted pass_local_source and forwarded by neither, the
# others forwarded in XDP with the kernel's forwarding counter flat.
# Then the local route and the rule come and go, and xfib follows.
#
# The sink counts arrivals per source (nft counters in its input hook).
# After each source's frames gen sends rawsend.py's two markers from its
# own address, echo replies counted apart: one xfib forwards in XDP, one
# with an IP option it hands to the kernel, which forwards it. Once both
# have arrived the router has dealt with every frame before them, on
# either path (why: tests/net/test_rp_filter.sh, whose barrier this is).
# The router's forwarding counters take the markers out.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v nft >/dev/null || skip "missing tool: nft (scripts/install-deps.sh)"
python3_resolve

N=20
RAWSEND="$XFIB_TOP/tests/lib/rawsend.py"

topo_create
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=1
# What the router's kernel forwards reaches the sink's ring, as what XDP
# redirects does (test_rp_filter says why).
ip netns exec "$RTR" ethtool -K "$R_SNK" tso off >/dev/null
ip -n "$RTR" route add 198.18.76.0/22 via "$GEN4" dev "$R_GEN"
ip -n "$RTR" rule add pref 100 to 198.18.76.0/22 lookup 100
ip -n "$RTR" route add local 198.18.77.7 dev lo table 100
ip -n "$RTR" route add local 198.18.78.0/24 dev lo table 100
ip -n "$RTR" route add 198.18.79.0/24 via "$GEN4" dev "$R_GEN" table 100

declare -A SRC=([local32]=198.18.77.7 [local24]=198.18.78.9
	[unicast]=198.18.79.5 [fallback]=198.18.77.8)
CASES="local32 local24 unicast fallback"

# The sink's counters: one per source, and the marker's (gen's address).
{
	echo "table ip rpf {"
	echo "	chain in {"
	echo "		type filter hook input priority 0;"
	for c in $CASES; do
		echo "		ip saddr ${SRC[$c]} icmp type echo-request counter"
	done
	echo "		ip saddr $GEN4 icmp type echo-reply counter"
	echo "	}"
	echo "}"
} | ip netns exec "$SNK" nft -f - || fail "nft counters on the sink"

# sink_count SRC: echo requests from SRC the sink received (from gen's
# address: the markers, echo replies).
sink_count() {
	ip netns exec "$SNK" nft -j list chain ip rpf in |
		jq --arg s "$1" '[.nftables[].rule? // empty | select(.expr[0].match.right == $s) |
			.expr[] | .counter? // empty | .packets] | add // 0'
}
marker_arrived() { [ "$(sink_count "$GEN4")" -ge "$1" ]; }

# snap: xfib's forwarded_v4, pass_local_source and pass_ip_options, the
# router kernel's forwarded datagrams (S_XF S_LSRC S_OPT S_KF).
snap() {
	S_XF=$(counter forwarded_v4)
	S_LSRC=$(counter pass_local_source)
	S_OPT=$(counter pass_ip_options)
	S_KF=$(kfwd4 "$RTR")
}

# send CASE: N echo requests from the case's source, then the markers;
# once both are in, sets ARR (arrived at the sink), XF, LSRC, KF, the
# markers' forwarding left out (MARKERS: xdp, one each way; or kernel,
# both by the kernel).
send() {
	local src=${SRC[$1]} a0 m0 x0 l0 o0 k0
	snap
	x0=$S_XF l0=$S_LSRC o0=$S_OPT k0=$S_KF
	a0=$(sink_count "$src")
	m0=$(sink_count "$GEN4")
	ip netns exec "$GEN" "$PYTHON3" -S "$RAWSEND" "$GEN_IF" "$R_GEN_MAC" \
		"$src" "$SNK4" "$N" "$GEN4" || fail "rawsend from $src"
	wait_until 10 marker_arrived $((m0 + 2)) ||
		fail "$1: the markers from $GEN4 did not reach the sink ($(($(sink_count "$GEN4") - m0)) of 2)"
	snap
	ARR=$(($(sink_count "$src") - a0))
	XF=$((S_XF - x0)) LSRC=$((S_LSRC - l0)) KF=$((S_KF - k0))
	if [ "$MARKERS" = xdp ]; then
		((S_OPT - o0 == 1)) ||
			fail "$1: pass_ip_options +$((S_OPT - o0)), the marker with an option +1"
		XF=$((XF - 1)) KF=$((KF - 1))
	else
		KF=$((KF - 2))
	fi
}

# What the kernel's full source check says: N arrive, or none.
expect_arrival() {
	case $1 in
	local32 | local24) echo 0 ;;
	*) echo "$N" ;;
	esac
}

xfibd_start
MARKERS=kernel
for c in $CASES; do
	send "$c"
	log "kernel alone, $c (${SRC[$c]}): $ARR/$N arrived, kernel forwarded $KF"
	((XF == 0 && LSRC == 0)) || fail "kernel alone: xfib forwarded $XF, passed $LSRC"
	((ARR == $(expect_arrival "$c") && KF == ARR)) ||
		fail "kernel alone, $c: $ARR/$N arrived, kernel forwarded $KF, expected $(expect_arrival "$c")"
done

attach_all
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=0
resolve_neighbours
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=1
MARKERS=xdp
# expect_xfib CASE: as the kernel alone, the martians handed to it by xfib.
expect_xfib() {
	send "$1"
	local what="with xfib, $1 (${SRC[$1]})"
	log "$what: $ARR/$N arrived, xfib forwarded $XF, pass_local_source $LSRC, kernel forwarded $KF"
	if [ "$(expect_arrival "$1")" = 0 ]; then
		((ARR == 0 && LSRC == N && XF == 0 && KF == 0)) ||
			fail "$what: $ARR/$N arrived, pass_local_source $LSRC, xfib forwarded $XF, kernel $KF; expected 0, $N, 0, 0"
	else
		((ARR == N && XF == N && KF == 0 && LSRC == 0)) ||
			fail "$what: $ARR/$N arrived, xfib forwarded $XF, kernel $KF, pass_local_source $LSRC; expected $N, $N, 0, 0"
	fi
}
for c in $CASES; do
	expect_xfib "$c"
done

# xfibctl lookup walks the same rules back.
lookup_from() { rctl lookup "$SNK4" --from "$1" --iif "$R_GEN" -j | jq -r .reason; }
reason_is() { [ "$(lookup_from "$1")" = "$2" ]; }
for c in $CASES; do
	want=forwarded_v4
	[ "$(expect_arrival "$c")" != 0 ] || want=pass_local_source
	reason_is "${SRC[$c]}" "$want" ||
		fail "xfibctl lookup --from ${SRC[$c]}: $(lookup_from "${SRC[$c]}"), expected $want"
done

# The local /32 goes: the source is forwarded (the kernel agrees: its
# route back is main's unicast one); back, a martian again.
ip -n "$RTR" route del local 198.18.77.7 dev lo table 100
wait_until 5 reason_is 198.18.77.7 forwarded_v4 ||
	fail "lookup --from 198.18.77.7 without the local route: $(lookup_from 198.18.77.7)"
SRC[gone32]=198.18.77.7
expect_xfib gone32
ip -n "$RTR" route add local 198.18.77.7 dev lo table 100
wait_until 5 reason_is 198.18.77.7 pass_local_source ||
	fail "lookup --from 198.18.77.7 with the local route back: $(lookup_from 198.18.77.7)"
expect_xfib local32

# Without the rule no lookup reaches table 100: the kernel (still with
# rules of its own, so still looking sources up) finds main's unicast
# route back for every source, and so does xfib.
ip -n "$RTR" rule del pref 100
wait_until 5 reason_is 198.18.78.9 forwarded_v4 ||
	fail "lookup --from 198.18.78.9 without the rule: $(lookup_from 198.18.78.9)"
SRC[norule24]=198.18.78.9
expect_xfib norule24
log "PASS"
