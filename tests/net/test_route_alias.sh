#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Several IPv4 routes of one key (table, prefix, TOS, metric): the kernel
# keeps them all, in order ("ip route append" at the end, "prepend" in
# front, "replace" in place of the first), forwards by the first, and a
# delete removes only the one it names. xfib must answer with the same
# one, after every change, through live notifications, through a resync
# (mark and sweep, also after notifications were lost) and after a
# restart.
#
# Three gateways: A (sink), C (a second address of the sink, also on
# r-sink) and B (sink2). 198.19.20.1 is an address of both sinks, so an
# echo to it shows by where it arrives which route forwarded it.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create 0
topo_add_sink2
ip -n "$SNK" addr add "$NET4_S.3/24" dev "$SNK_IF"
ip -n "$SNK" addr add 198.19.20.1/32 dev lo
ip -n "$SNK2" addr add 198.19.20.1/32 dev lo
# A spare port whose flap makes xfibd resync.
ip -n "$RTR" link add r-spare type veth peer name r-spare-p
ip -n "$RTR" link set r-spare-p up
ip -n "$RTR" link set r-spare up
A=$SNK4 B=$SNK2_4 C=$NET4_S.3
P=198.19.20.0/24 D=198.19.20.1

xfibd_start
attach_all
resolve_neighbours
nping "$RTR" -q -c 1 "$C" >/dev/null || fail "router cannot reach $C"

r() { ip -n "$RTR" "$@" || fail "ip $*"; }

# kernel_first: the gateway of the first route of P in the kernel's list.
kernel_first() {
	ip -n "$RTR" -4 route show "$P" | sed -n '1s/.* via \([0-9.]*\) .*/\1/p'
}

# expect_first GW WHAT: the kernel and xfib forward D via GW, and an echo
# to D is XDP-forwarded to the namespace behind GW; verify agrees.
expect_first() {
	local gw=$1 ns=$SNK
	[ "$gw" != "$B" ] || ns=$SNK2
	[ "$(kernel_first)" = "$gw" ] || fail "$2: the kernel's first route is via $(kernel_first), expected $gw"
	wait_lookup "$D" ".gateway == \"$gw\" and .verdict == \"match\"" 5
	expect_xdp 4 "$D" 3000 "$ns"
	verify_clean "$2"
}

r route add "$P" via "$A"
expect_first "$A" "one route"
r route append "$P" via "$B"
expect_first "$A" "appended a second: the first still forwards"
r route prepend "$P" via "$C"
expect_first "$C" "prepended a third: it forwards"
r route replace "$P" via "$B" dev "$R_SNK2" onlink
# Not the route via B that is already there: that one differs (onlink).
[ "$(ip -n "$RTR" -4 route show "$P" | wc -l)" = 3 ] || fail "replace: $(ip -n "$RTR" route show "$P")"
expect_first "$B" "replaced the first"
r route del "$P" via "$B" dev "$R_SNK2" onlink
expect_first "$A" "deleted the first by its attributes"
r route prepend "$P" via "$C"
r route del "$P" via "$A"
expect_first "$C" "deleted the middle one"
r route del "$P"
expect_first "$B" "deleted without naming one: the kernel's first goes"

# ---- resync: the order comes from the dump ----------------------------
r route prepend "$P" via "$A"
r route append "$P" via "$C"
expect_first "$A" "before the resync"
resyncs=$(rctl status -j | jq '.daemon.resyncs')
# A port coming up makes xfibd read the kernel's tables again.
r link set r-spare down
r link set r-spare up
deadline=$((SECONDS + 10))
until (($(rctl status -j | jq '.daemon.resyncs') > resyncs)); do
	((SECONDS < deadline)) || fail "no resync after r-spare came up"
	sleep 0.1
done
expect_first "$A" "after a resync"
r route del "$P" via "$A"
expect_first "$B" "a delete after the resync"

# ---- restart: a fresh dump ----------------------------------------------
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
r route del "$P" via "$C"
r route prepend "$P" via "$A"
xfibd_start
expect_first "$A" "after a restart with changes in between"

# ---- lost notifications -------------------------------------------------
# A tiny receive buffer: the flood overruns it, the order changes within
# it, and xfibd only learns the result from its resync.
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --rcvbuf 4096
batch="$XFIB_TMP/flood.batch"
for i in $(seq 0 4095); do
	echo "route add 198.19.$((64 + i / 64)).$((i % 64 * 4))/30 via $A"
done >"$batch"
sed 's/^route add/route del/; s/ via .*//' "$batch" >"$batch.del"
{
	cat "$batch" "$batch.del"
	echo "route prepend $P via $B dev $R_SNK2 onlink"
	cat "$batch" "$batch.del"
	echo "route del $P via $A"
	cat "$batch" "$batch.del"
	echo "route prepend $P via $C"
	cat "$batch" "$batch.del"
	echo "route del $P via $C"
	cat "$batch"
} >"$batch.all"
r -batch "$batch.all"
deadline=$((SECONDS + 20))
until (($(rctl status -j | jq '.daemon.resyncs') > 0)); do
	((SECONDS < deadline)) || fail "no resync after the flood"
	sleep 0.1
done
# The last resync may still be due (they are a second apart): wait until
# the mirror holds every prefix the kernel does.
wait_prefixes_match 20
expect_first "$B" "after lost notifications and a resync"
r route append "$P" via "$A"
r route del "$P" via "$B" dev "$R_SNK2" onlink
expect_first "$B" "after the flood, live again"

log "PASS: duplicate IPv4 routes: the kernel's first one forwards, live, after resyncs and a restart"
