#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Bounded torture (TORTURE_SECONDS, default 60): while gen pings the sink
# over an unchanged route, the four churn loops of tests/lib/churn.sh
# (routes, nexthop objects, link flaps, neighbour flaps) change the
# router's kernel state at once, with xfibd's receive buffer deliberately
# small so notifications are lost and xfibd must resync.
# Afterwards: overruns and resyncs happened, no echo was lost, xfibctl
# verify finds 0 mismatches, and the neighbours and nexthop objects in the
# maps equal the kernel's.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/churn.sh
. "$(dirname "$0")/../lib/churn.sh"
xfib_init

SECS=${TORTURE_SECONDS:-60}

topo_create 0
topo_add_sink2
churn_add_flap_port
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --rcvbuf 4096
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

snapshot
nping "$GEN" -4 -q -c $((SECS * 50)) -i 0.02 "$SNK4" >"$XFIB_TMP/ping4" 2>&1 &
ping_pid=$!
XFIB_PIDS+=("$ping_pid")
churn_run "$SECS"
log "churn over: $(grep -c . "$CHURN_LOG" || true) lines of expected errors in $CHURN_LOG"
wait "$ping_pid" || true

wait_settled 30
st=$SETTLED_STATUS
resyncs=$(jq '.daemon.resyncs' <<<"$st")
overruns=$(jq '.daemon.overruns' <<<"$st")
log "settled: resyncs $resyncs, overruns $overruns, routes v4 $(jq '.ipv4.routes' <<<"$st") v6 $(jq '.ipv6.routes' <<<"$st")"
((resyncs > 0 && overruns > 0)) || fail "no overrun or resync: the torture did not torture"
kill -0 "$XFIBD_PID" || fail "xfibd died"

out=$(rctl verify --random 200000 2>&1) || fail "verify: $(tail -n 25 <<<"$out")"
log "verify: $(tail -n 2 <<<"$out" | tr '\n' ' ')"

check_neighbours_equal
log "neighbours equal to the kernel's"
check_nhobj_groups
((NHOBJ_ROUTES > 0)) || fail "no route by nexthop object survived the churn"
log "$NHOBJ_ROUTES routes by nexthop object have the kernel's group"

rcvd=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$XFIB_TMP/ping4")
[ "${rcvd:-0}" -eq $((SECS * 50)) ] ||
	fail "${rcvd:-0}/$((SECS * 50)) echoes over the unchanged route answered"
deltas
((D_K4 == 0)) || fail "the kernel forwarded $D_K4 IPv4 packets: the unchanged route left the fast path"
log "PASS: $SECS s of churn, $resyncs resyncs, verify clean, no echo lost"
