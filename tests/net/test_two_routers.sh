#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Two routers on one host, each with its own xfibd and xfibctl using the
# automatic per-namespace pin directory (no --pin-dir): the directories
# differ, each dataplane sees only its own routes and counts only its own
# traffic, both forward at the same time, and stopping one leaves the
# other forwarding.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

# start_router ID: topology ID with the automatic pin dir instead of the
# unique one topo_create picked; sets AUTO_DIR.
start_router() {
	local id=$1 dir
	topo_create "$id"
	use_auto_pin_dir
	attach_all
	dir=$(rctl status -j | jq -r .pin_dir) || fail "status -j in router $id"
	case $dir in
	/sys/fs/bpf/xfib-ns[0-9]*) ;;
	*) fail "router $id: automatic pin dir is '$dir', expected /sys/fs/bpf/xfib-ns<cookie>" ;;
	esac
	[ -d "$dir" ] || fail "router $id: $dir does not exist after attach"
	xfibd_start
	resolve_neighbours
	expect_xdp 4 "$SNK4"
	expect_xdp 6 "$SNK6"
	AUTO_DIR=$dir
}

# Router 1 (topology 1) and router 2 (topology 2), saved by name.
start_router 1
R1=$RTR G1=$GEN S1_4=$SNK4 S1_6=$SNK6 DIR1=$AUTO_DIR PID1=$XFIBD_PID
start_router 2
R2=$RTR G2=$GEN S2_4=$SNK4 S2_6=$SNK6 DIR2=$AUTO_DIR PID2=$XFIBD_PID
log "router 1: $R1 pins in $DIR1; router 2: $R2 pins in $DIR2"
[ "$DIR1" != "$DIR2" ] || fail "both routers use $DIR1"

# Each status shows its own daemon, ports and pin dir.
for r in 1 2; do
	ns=R$r pid=PID$r dir=DIR$r
	st=$(xctl "${!ns}" "" status -j)
	jqe --arg d "${!dir}" --argjson p "${!pid}" '
		.pin_dir == $d and .daemon.running and .daemon.pid == $p and
		(.interfaces | length) == 2' <<<"$st" >/dev/null ||
		fail "router $r status: $(jq -c '{pin_dir, daemon, interfaces}' <<<"$st")"
done

# A route only router 2 has: its route count grows, router 1's does not.
routes() { xctl "$1" "" status -j | jq ".ipv4.routes + .ipv6.routes"; }
n1=$(routes "$R1")
n2=$(routes "$R2")
ip -n "$R2" route add 198.19.99.0/24 via "$S2_4"
ip -n "$R2" -6 route add 2001:db8:f99::/64 via "$S2_6"
for _ in $(seq 30); do
	[ "$(routes "$R2")" -ge $((n2 + 2)) ] && break
	sleep 0.1
done
[ "$(routes "$R2")" -ge $((n2 + 2)) ] || fail "router 2 did not mirror its new routes"
[ "$(routes "$R1")" -eq "$n1" ] || fail "router 1's route count changed with router 2's routes"

# Simultaneous traffic, different amounts; each counts its own.
c() { xcounter "$1" "" "$2"; }
a4=$(c "$R1" forwarded_v4) a6=$(c "$R1" forwarded_v6)
b4=$(c "$R2" forwarded_v4) b6=$(c "$R2" forwarded_v6)
k1=$(kfwd4 "$R1") k2=$(kfwd4 "$R2")
ping_all "$G1" 4 "$S1_4" 30 &
j1=$!
ping_all "$G2" 4 "$S2_4" 60 &
j2=$!
ping_all "$G1" 6 "$S1_6" 30 &
j3=$!
ping_all "$G2" 6 "$S2_6" 60 &
j4=$!
XFIB_PIDS+=("$j1" "$j2" "$j3" "$j4")
for j in "$j1" "$j2" "$j3" "$j4"; do
	wait "$j" || fail "a concurrent ping lost echoes"
done
d1_4=$(($(c "$R1" forwarded_v4) - a4)) d1_6=$(($(c "$R1" forwarded_v6) - a6))
d2_4=$(($(c "$R2" forwarded_v4) - b4)) d2_6=$(($(c "$R2" forwarded_v6) - b6))
log "router 1 forwarded v4 +$d1_4 v6 +$d1_6; router 2 forwarded v4 +$d2_4 v6 +$d2_6"
# Exactly 2 frames per echo: nothing else crosses the routers (neighbour
# discovery and multicast are never forwarded).
(( d1_4 == 60 && d1_6 == 60 )) || fail "router 1 counted v4 +$d1_4 v6 +$d1_6, expected 60 each"
(( d2_4 == 120 && d2_6 == 120 )) || fail "router 2 counted v4 +$d2_4 v6 +$d2_6, expected 120 each"
k1=$(($(kfwd4 "$R1") - k1)) k2=$(($(kfwd4 "$R2") - k2))
(( k1 == 0 && k2 == 0 )) || fail "router kernels forwarded: router 1 +$k1, router 2 +$k2"

# Stopping router 1's daemon does not disturb router 2's, and router 1's
# dataplane goes on forwarding.
kill -TERM "$PID1"
rc=0
wait "$PID1" || rc=$?
[ "$rc" -eq 0 ] || fail "xfibd of router 1 exited $rc on SIGTERM, expected 0"
xctl "$R1" "" status -j | jqe '.daemon.running == false' >/dev/null || fail "router 1 still shows a daemon"
xctl "$R2" "" status -j | jqe --argjson p "$PID2" '.daemon.running and .daemon.pid == $p' >/dev/null ||
	fail "router 2 lost its daemon when router 1's stopped"
b4=$(c "$R2" forwarded_v4) a4=$(c "$R1" forwarded_v4)
ping_all "$G2" 4 "$S2_4" 10
ping_all "$G1" 4 "$S1_4" 10
[ $(($(c "$R2" forwarded_v4) - b4)) -eq 20 ] || fail "router 2 stopped forwarding"
[ $(($(c "$R1" forwarded_v4) - a4)) -eq 20 ] || fail "router 1's dataplane stopped with its daemon"

log "PASS: two routers, two pin dirs, no interference"
