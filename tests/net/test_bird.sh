#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A real routing daemon as the route source. BIRD 2 in the sink namespace
# announces thousands of prefixes over eBGP (IPv4 and IPv6 sessions) to a
# BIRD 2 in the router namespace, whose kernel protocol installs them in
# table main; xfibd mirrors them and xfib forwards traffic to them by XDP
# (xfib's counters move, the router kernel's forwarding counters stay
# flat, the sink receives frames with the router's MAC and TTL - 1).
# Withdrawing routes at the source (birdc disable of one static protocol,
# then of all) removes them from the kernel and the dataplane: lookup
# shows no route and the traffic goes to the kernel.
#
#   gen -- router (BIRD AS 65001, xfibd) -- sink (BIRD AS 65002)
#
# Each BIRD runs with its own configuration and control socket in the
# test's scratch directory.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
if ! command -v bird >/dev/null || ! command -v birdc >/dev/null; then
	"$XFIB_TOP/scripts/install-deps.sh" >/dev/null 2>&1 || true
	command -v bird >/dev/null && command -v birdc >/dev/null ||
		skip "bird2 not installed and cannot be (scripts/install-deps.sh)"
fi

# Announced: NA IPv4 /28s in 198.19.0.0/16 (half by static_a, half by
# static_b) and NB IPv6 /48s in 2001:db8:f000::/36 (static6).
NA=4096
NB=1024
DST_A4=198.19.0.1      # in static_a's first prefix
DST_B4=198.19.255.241  # in static_b's last prefix
DST6=2001:db8:f000::1

topo_create
xfibd_start
attach_all
resolve_neighbours
BASE4=$(rctl status -j | jq .ipv4.routes)
BASE6=$(rctl status -j | jq .ipv6.routes)
# The sink answers for one address of some announced prefixes.
ip -n "$SNK" addr add "$DST_A4/32" dev lo
ip -n "$SNK" addr add "$DST_B4/32" dev lo
ip -n "$SNK" addr add "$DST6/128" dev lo

# ---- the two BIRDs -------------------------------------------------------------
SOCK_R="$XFIB_TMP/bird-rtr.ctl"
SOCK_S="$XFIB_TMP/bird-sink.ctl"

# The router: BGP in, kernel table main out. No direct or device routes
# are exported: the kernel has those.
cat >"$XFIB_TMP/bird-rtr.conf" <<EOF
router id $R_SNK4;
protocol device { scan time 5; }
protocol kernel kernel4 { ipv4 { export where source = RTS_BGP; }; }
protocol kernel kernel6 { ipv6 { export where source = RTS_BGP; }; }
template bgp peer {
	local as 65001;
	connect delay time 1;
	connect retry time 1;
}
protocol bgp up4 from peer {
	neighbor $SNK4 as 65002;
	ipv4 { import all; export none; };
}
protocol bgp up6 from peer {
	neighbor $SNK6 as 65002;
	ipv6 { import all; export none; };
}
EOF

# The source: static routes announced with itself as next hop; nothing
# goes into the sink's kernel (no kernel protocol).
{
	echo "router id $SNK4;"
	echo "protocol device { scan time 5; }"
	for p in a b; do
		echo "protocol static static_$p {"
		echo "	ipv4;"
		start=0
		[ "$p" = a ] || start=$((NA / 2))
		for i in $(seq "$start" $((start + NA / 2 - 1))); do
			echo "	route 198.19.$((i / 16)).$((i % 16 * 16))/28 blackhole;"
		done
		echo "}"
	done
	echo "protocol static static6 {"
	echo "	ipv6;"
	for i in $(seq 0 $((NB - 1))); do
		printf '\troute 2001:db8:f%03x::/48 blackhole;\n' "$i"
	done
	echo "}"
	cat <<EOF
template bgp peer {
	local as 65002;
	connect delay time 1;
	connect retry time 1;
}
protocol bgp down4 from peer {
	neighbor $R_SNK4 as 65001;
	ipv4 { import none; export all; next hop self; };
}
protocol bgp down6 from peer {
	neighbor $R_SNK6 as 65001;
	ipv6 { import none; export all; next hop self; };
}
EOF
} >"$XFIB_TMP/bird-sink.conf"

# start_bird NS CONF SOCK LOG: BIRD in the foreground, in the background.
start_bird() {
	ip netns exec "$1" bird -f -c "$2" -s "$3" >>"$4" 2>&1 &
	XFIB_PIDS+=("$!")
}
start_bird "$RTR" "$XFIB_TMP/bird-rtr.conf" "$SOCK_R" "$XFIB_TMP/bird-rtr.log"
start_bird "$SNK" "$XFIB_TMP/bird-sink.conf" "$SOCK_S" "$XFIB_TMP/bird-sink.log"
birdc_r() { ip netns exec "$RTR" birdc -s "$SOCK_R" "$@"; }
birdc_s() { ip netns exec "$SNK" birdc -s "$SOCK_S" "$@"; }

bgp_up() {
	birdc_r show protocols up4 2>/dev/null | grep -q Established &&
		birdc_r show protocols up6 2>/dev/null | grep -q Established
}
wait_until 30 bgp_up ||
	fail "BGP sessions not established: $(birdc_r show protocols 2>&1 | tr '\n' '|')"
log "BGP sessions established"

# kroutes FAMILY PREFIX: routes BIRD installed in the router's table main.
kroutes() { ip -n "$RTR" "-$1" route show table main proto bird | grep -c "^$2" || true; }

# wait_routes V4 V6: the kernel has V4 and V6 BIRD routes, and xfib's
# published instances hold the base tables plus those.
wait_routes() {
	local deadline=$((SECONDS + 60)) st
	while :; do
		st=$(rctl status -j)
		if [ "$(kroutes 4 198.19.)" -eq "$1" ] && [ "$(kroutes 6 2001:db8:f)" -eq "$2" ] &&
			[ "$(jq .ipv4.routes <<<"$st")" -eq $((BASE4 + $1)) ] &&
			[ "$(jq .ipv6.routes <<<"$st")" -eq $((BASE6 + $2)) ]; then
			return 0
		fi
		((SECONDS < deadline)) || fail "expected $1 + $2 BIRD routes: kernel $(kroutes 4 198.19.) + $(kroutes 6 2001:db8:f), xfib $(jq -c '[.ipv4.routes, .ipv6.routes]' <<<"$st") (base $BASE4, $BASE6)"
		sleep 0.5
	done
}
t0=$(now_ms)
wait_routes "$NA" "$NB"
log "$NA + $NB routes from BIRD in the kernel and the dataplane after $(($(now_ms) - t0)) ms: $(rctl status -j | jq -c '[.ipv4.algorithm, .ipv6.algorithm]')"

# Every prefix agrees with the kernel's FIB.
out=$(rctl verify --random 20000 2>&1) || fail "verify after the BGP load: $(tail -n 25 <<<"$out")"

# ---- forwarded by XDP --------------------------------------------------------
expect_xdp 4 "$DST_A4" 3000 "$SNK"
expect_xdp 4 "$DST_B4" 3000 "$SNK"
expect_xdp 6 "$DST6" 3000 "$SNK"
ping_both 20 "$DST_A4" "$DST6"
forwarded_by xdp 40 "BGP routes"
capture_start "$SNK" "$SNK_IF" "icmp and dst $DST_B4 and icmp[icmptype] == icmp-echo"
ping_all "$GEN" 4 "$DST_B4" 1 -t 17
capture_wait
check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 16
capture_start "$SNK" "$SNK_IF" "icmp6 and dst $DST6 and ip6[40] == 128"
ping_all "$GEN" 6 "$DST6" 1 -t 17
capture_wait
check_frame "$CAP_TEXT" "$R_SNK_MAC" "$SNK_MAC" 16
rctl lookup -j "$DST_B4" | jqe --arg s "$SNK4" --arg d "$R_SNK" \
	'.action == "forward" and .gateway == $s and .egress.name == $d' >/dev/null ||
	fail "lookup $DST_B4: $(rctl lookup -j "$DST_B4")"

# ---- withdrawn at the source: gone from the dataplane ------------------------
birdc_s disable static_b >/dev/null || fail "birdc disable static_b"
wait_routes $((NA / 2)) "$NB"
log "static_b withdrawn: $((NA / 2)) IPv4 prefixes left"
rctl lookup -j "$DST_B4" | jqe '.action == "pass" and .reason == "pass_no_route" and
	.nexthop.kind == "none" and (.kernel | has("error"))' >/dev/null ||
	fail "lookup $DST_B4 after the withdrawal: $(rctl lookup -j "$DST_B4")"
# Its traffic goes to the kernel (which has no route either); the rest
# stays on the fast path.
nr0=$(counter pass_no_route)
snapshot
nping "$GEN" -4 -c 3 -i 0.2 "$DST_B4" >/dev/null 2>&1 && fail "$DST_B4 still answers after the withdrawal"
nr1=$(counter pass_no_route)
deltas
((nr1 - nr0 >= 3 && D_X4 == 0)) || fail "withdrawn $DST_B4: pass_no_route +$((nr1 - nr0)), forwarded +$D_X4"
expect_xdp 4 "$DST_A4" 3000 "$SNK"

birdc_s disable static_a >/dev/null || fail "birdc disable static_a"
birdc_s disable static6 >/dev/null || fail "birdc disable static6"
wait_routes 0 0
for a in "$DST_A4" "$DST6"; do
	rctl lookup -j "$a" | jqe '.reason == "pass_no_route"' >/dev/null ||
		fail "lookup $a after withdrawing everything: $(rctl lookup -j "$a")"
done
wait_xdp_ping 4 "$DST_A4" 500 >/dev/null && fail "$DST_A4 still XDP-forwarded after the withdrawal"
out=$(rctl verify --random 20000 2>&1) || fail "verify after the withdrawal: $(tail -n 25 <<<"$out")"

# And announced again: back on the fast path.
birdc_s enable static_a >/dev/null || fail "birdc enable static_a"
wait_routes $((NA / 2)) 0
expect_xdp 4 "$DST_A4" 3000 "$SNK"
log "PASS: $NA + $NB BGP routes from BIRD mirrored and XDP-forwarded; withdrawals leave the dataplane"
