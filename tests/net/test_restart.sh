#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibd stopped with SIGTERM under a steady flow, the kernel FIB changed
# while it is away, then a new xfibd:
#
# - the flow to an unchanged route loses nothing (every echo answered,
#   counted by ping at gen) and never goes through the router kernel: the
#   stopped daemon renewed its lease on the way out, and the new one
#   syncs within it (pass_stale stays 0);
# - the stopped daemon says so in status, the ports stay attached;
# - the new xfibd adopts the pinned maps and reconciles: a route added
#   while it was down is forwarded, a route deleted is not (the kernel
#   answers), a neighbour whose MAC changed gets frames with the new MAC,
#   and the routes through a link set down are gone (the kernel removed
#   them without a word while nobody listened);
# - as soon as it reports synced, verify finds no mismatch.
#
# The reconcile time (start to synced, and the daemon's own sync time) is
# logged.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create 0
topo_add_sink2
# A third sink, whose link goes down while xfibd is away.
n4=$((16 * TOPO_ID + 4))
SNK3="$XFIB_TAG-$TOPO_ID-sink3" R_SNK3=r-sink3
SNK3_4="198.18.$n4.2" SNK3_6="2001:db8:$n4::2"
add_ns "$SNK3"
link_ns "$SNK3" sink0 "$RTR" "$R_SNK3"
router_sysctls "$RTR" "$R_SNK3"
ip -n "$RTR" addr add "198.18.$n4.1/24" dev "$R_SNK3"
ip -n "$RTR" addr add "2001:db8:$n4::1/64" dev "$R_SNK3" nodad
host_if "$SNK3" sink0 "198.18.$n4" "2001:db8:$n4"
wait_ipv6_ready "$RTR" "$SNK3"

xfibd_start
attach_all
mode=()
[ -z "${XFIB_MODE:-}" ] || mode=(--mode "$XFIB_MODE")
rctl attach "${mode[@]}" "$R_SNK3" || fail "attach $R_SNK3"
resolve_neighbours
for a in "$SNK3_4" "$SNK3_6"; do
	for _ in 1 2 3 4 5; do nping "$GEN" -c 1 "$a" >/dev/null 2>&1 && break; done
done

# Destinations on the sinks' loopbacks, one /24 and /64 each:
#   10 steady flow (unchanged)   11 deleted while down   12 added while down
#   13 via sink2 (its MAC changes while down)   14 via sink3 (link down)
dst4() { echo "198.19.$1.1"; }
dst6() { echo "2001:db8:f$1::1"; }
set_route() { # set_route add|del N GW4 GW6
	ip -n "$RTR" route "$1" "198.19.$2.0/24" via "$3"
	ip -n "$RTR" -6 route "$1" "2001:db8:f$2::/64" via "$4"
}
on_lo() { # on_lo NS N
	ip -n "$1" addr add "$(dst4 "$2")/32" dev lo
	ip -n "$1" addr add "$(dst6 "$2")/128" dev lo nodad
}
for n in 10 11 12; do on_lo "$SNK" "$n"; done
on_lo "$SNK2" 13
on_lo "$SNK3" 14
set_route add 10 "$SNK4" "$SNK6"
set_route add 11 "$SNK4" "$SNK6"
set_route add 13 "$SNK2_4" "$SNK2_6"
set_route add 14 "$SNK3_4" "$SNK3_6"
for n in 10 11; do
	expect_xdp 4 "$(dst4 $n)" 3000 "$SNK"
	expect_xdp 6 "$(dst6 $n)" 3000 "$SNK"
done
expect_xdp 4 "$(dst4 13)" 3000 "$SNK2"
expect_xdp 6 "$(dst6 13)" 3000 "$SNK2"
expect_xdp 4 "$(dst4 14)" 3000 "$SNK3"
expect_xdp 6 "$(dst6 14)" 3000 "$SNK3"
verify_clean "before the restart"

# The steady flow: 50 echoes/s per family, a fixed count, every one must
# come back (ping waits for the last replies).
COUNT=750
snapshot
S0_K4=$S_K4 S0_K6=$S_K6
stream_start stream4 4 "$(dst4 10)" -i 0.02 -c "$COUNT" -W 2
stream_start stream6 6 "$(dst6 10)" -i 0.02 -c "$COUNT" -W 2
sleep 1

check_flowing "xfibd running"
stale0=$(counter pass_stale)

OLD=$XFIBD_PID
log "SIGTERM xfibd (pid $OLD)"
kill -TERM "$OLD"
rc=0
wait "$OLD" || rc=$?
[ "$rc" = 0 ] || fail "xfibd exited with status $rc on SIGTERM"
grep -q "stopping on signal 15" "$XFIBD_LOG" || fail "xfibd did not log its stop"
rctl status -j | jqe '.daemon.running == false' >/dev/null ||
	fail "status after SIGTERM: $(rctl status -j | jq -c .daemon)"
rctl status -j | jqe '.interfaces | length == 4' >/dev/null ||
	fail "ports lost after SIGTERM: $(rctl status -j | jq -c .interfaces)"
rctl status -j | jqe --argjson p "$OLD" '.lease.valid and .lease.pid == $p and .lease.left_ms > 5000' >/dev/null ||
	fail "SIGTERM did not leave a full lease: $(rctl status -j | jq -c .lease)"
check_flowing "xfibd stopped"

log "changing the kernel's state while no xfibd runs"
set_route del 11 "$SNK4" "$SNK6"
set_route add 12 "$SNK4" "$SNK6"
NEW_MAC=02:00:5e:10:00:0d
ip -n "$SNK2" link set dev "$SNK2_IF" address "$NEW_MAC"
ip -n "$RTR" neigh replace "$SNK2_4" lladdr "$NEW_MAC" dev "$R_SNK2" nud reachable
ip -n "$RTR" neigh replace "$SNK2_6" lladdr "$NEW_MAC" dev "$R_SNK2" nud reachable
ip -n "$RTR" link set dev "$R_SNK3" down
[ -z "$(ip -n "$RTR" -4 route show 198.19.14.0/24)" ] || fail "kernel kept 198.19.14.0/24 through a down link"
# Nobody tells the dataplane: it keeps its last state meanwhile, for the
# lease.
lookup_is "$(dst4 11)" '.action == "forward"' ||
	fail "the dataplane changed without a daemon: $(rctl -j lookup "$(dst4 11)" | jq -c '{action, reason}')"
check_flowing "kernel changed, xfibd stopped"

log "starting a new xfibd"
t0=$(now_ms)
xfibd_start
t_sync=$(($(now_ms) - t0))
# Synced means reconciled: the dataplane answers as the kernel does.
verify_clean "right after the restart"
own=$(grep 'sync (start) done' "$XFIBD_LOG" | tail -n 1 | sed -n 's/.*done in \([0-9]*\) ms.*/\1/p')
grep -q "adopted .* from the pinned maps" "$XFIBD_LOG" || fail "the new xfibd did not adopt the pinned maps"
log "restart: synced $t_sync ms after start (status polling), the daemon's own sync took ${own:-?} ms"

# Route added while down: forwarded.
expect_xdp 4 "$(dst4 12)" 3000 "$SNK"
expect_xdp 6 "$(dst6 12)" 3000 "$SNK"

# Route deleted, and routes through the link set down: the kernel's
# answer (no route), nothing forwarded.
for n in 11 14; do
	lookup_is "$(dst4 $n)" '.reason == "pass_no_route"' ||
		fail "$(dst4 $n) after the restart: $(rctl -j lookup "$(dst4 $n)" | jq -c '{nexthop, action, reason}')"
	lookup_is "$(dst6 $n)" '.reason == "pass_no_route"' ||
		fail "$(dst6 $n) after the restart: $(rctl -j lookup "$(dst6 $n)" | jq -c '{nexthop, action, reason}')"
done
nr0=$(counter pass_no_route)
for n in 11 14; do
	nping "$GEN" -4 -c 1 "$(dst4 $n)" >/dev/null 2>&1 && fail "echo to $(dst4 $n) answered after its route went away"
	nping "$GEN" -6 -c 1 "$(dst6 $n)" >/dev/null 2>&1 && fail "echo to $(dst6 $n) answered after its route went away"
done
nr=$(($(counter pass_no_route) - nr0))
((nr == 4)) || fail "4 echoes to removed routes: pass_no_route +$nr"
log "removed routes: 4 echoes passed to the kernel (no route)"

# Neighbour MAC changed while down: frames carry the new MAC.
expect_xdp 4 "$(dst4 13)" 3000 "$SNK2"
capture_start "$SNK2" "$SNK2_IF" "icmp and dst $(dst4 13) and icmp[icmptype] == icmp-echo"
ping_all "$GEN" 4 "$(dst4 13)" 1
capture_wait
check_frame "$CAP_TEXT" "$R_SNK2_MAC" "$NEW_MAC" 63
capture_start "$SNK2" "$SNK2_IF" "icmp6 and dst $(dst6 13) and ip6[40] == 128"
ping_all "$GEN" 6 "$(dst6 13)" 1
capture_wait
check_frame "$CAP_TEXT" "$R_SNK2_MAC" "$NEW_MAC" 63

# The steady flow crossed stop, changes and restart without losing a
# packet, and the router kernel forwarded nothing in the whole run.
for f in 4 6; do
	stream_answered "stream$f" "$COUNT" "steady flow v$f across SIGTERM and restart"
done
k4=$(($(kfwd4 "$RTR") - S0_K4))
k6=$(($(kfwd6 "$RTR") - S0_K6))
((k4 == 0 && k6 == 0)) || fail "the router kernel forwarded v4 +$k4 v6 +$k6 during the run"
stale=$(($(counter pass_stale) - stale0))
((stale == 0)) || fail "$stale packets went to the kernel for want of a lease across the restart"
verify_clean "end"
rctl status -j | jqe --argjson pid "$XFIBD_PID" '.daemon.pid == $pid and .daemon.synced' >/dev/null ||
	fail "status at the end: $(rctl status -j | jq -c .daemon)"

log "PASS: SIGTERM and restart under a steady flow: $COUNT/$COUNT per family; added, deleted, MAC and link changes reconciled"
