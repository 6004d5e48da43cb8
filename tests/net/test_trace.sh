#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibctl trace with real traffic: forwarded packets show the ingress
# port, addresses, protocol, route, nexthop, egress port and MACs; a
# reason filter picks TTL-1 packets handed to the kernel; --rate bounds
# what a flood produces, -n stops the trace; a second trace is refused
# while one runs, and the filter is off once the trace ends.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up
SNK_MAC=$(mac_of "$SNK" "$SNK_IF")
R_SNK_MAC=$(mac_of "$RTR" "$R_SNK")
OUT="$XFIB_TMP/trace"

# trace_bg ARGS...: xfibctl trace in the background, output in $OUT;
# TRACE_PID.
trace_bg() {
	nsenter --net="/run/netns/$RTR" -- "$XFIBCTL" --pin-dir "$PIN" trace "$@" \
		>"$OUT" 2>"$OUT.err" &
	TRACE_PID=$!
	XFIB_PIDS+=("$TRACE_PID")
}

# trace_on: 1 while the dataplane's filter is on.
trace_on() {
	bpftool map dump pinned "$PIN/xfib_trace_cfg" -j | jq -r '.[0].formatted.value.on // .[0].value.on'
}

trace_is_on() { [ "$(trace_on)" = 1 ]; }

# until_done PID SECS: waits for the trace to end by itself.
until_done() {
	local pid=$1 deadline=$((SECONDS + $2))
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS < deadline)) || fail "trace still running after $2 s: $(cat "$OUT.err")"
		sleep 0.05
	done
	wait "$pid" || fail "trace exit $?: $(cat "$OUT.err")"
}

# ---- forwarded packets, -j, -n --------------------------------------------------

nping "$GEN" -4 -q -i 0.02 -c 300 "$SNK4" >/dev/null 2>&1 &
PING_PID=$!
XFIB_PIDS+=("$PING_PID")
trace_bg -j -n 5 --dev "$R_GEN" --dst "$NET4_S.0/24"
until_done "$TRACE_PID" 10
kill "$PING_PID" 2>/dev/null || true
log "trace -j -n 5: $(head -n 1 "$OUT")"
[ "$(wc -l <"$OUT")" -eq 5 ] || fail "trace -n 5: $(wc -l <"$OUT") events"
jqe -s --arg in "$R_GEN" --arg out "$R_SNK" --arg src "$GEN4" --arg dst "$SNK4" \
	--arg route "$NET4_S.0/24" --arg dmac "$SNK_MAC" --arg smac "$R_SNK_MAC" '
	all(.[]; .ifname == $in and .family == "ipv4" and .src == $src and
	    .dst == $dst and .protocol == 1 and .len == 98 and .ttl == 64 and
	    .action == "forward" and .reason == "forwarded_v4" and
	    .route == $route and (.nexthop | type) == "number" and
	    .egress == $out and .dst_mac == $dmac and .src_mac == $smac and
	    .time > 1e9)' <"$OUT" >/dev/null || fail "trace -j: unexpected events: $(cat "$OUT")"
grep -q '^5 packets traced' "$OUT.err" || fail "trace summary: $(cat "$OUT.err")"
[ "$(trace_on)" = 0 ] || fail "trace filter still on after -n 5"

# ---- a reason: TTL 1 to the kernel, in text ------------------------------------------

nping "$GEN" -6 -q -i 0.05 -c 100 -t 1 "$SNK6" >/dev/null 2>&1 &
PING_PID=$!
XFIB_PIDS+=("$PING_PID")
trace_bg -n 2 --reason pass_ttl,drop
until_done "$TRACE_PID" 10
kill "$PING_PID" 2>/dev/null || true
log "trace --reason pass_ttl: $(head -n 1 "$OUT")"
[ "$(grep -c " $R_GEN ipv6 icmp6 $GEN6 > $SNK6 len 118 ttl 1: pass pass_ttl\$" "$OUT")" -eq 2 ] ||
	fail "trace --reason pass_ttl: $(cat "$OUT")"

# ---- --rate under a flood, one trace at a time, SIGINT ---------------------------------

nping "$GEN" -4 -q -i 0.002 -c 2000 "$SNK4" >/dev/null 2>&1 &
PING_PID=$!
XFIB_PIDS+=("$PING_PID")
t0=$(now_ms)
trace_bg -j --rate 5/s --family ipv4
wait_until 5 trace_is_on || fail "trace did not turn the filter on"
rc=0
rctl trace -n 1 >/dev/null 2>"$XFIB_TMP/second.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "another trace runs" "$XFIB_TMP/second.err" ||
	fail "second trace: exit $rc, $(cat "$XFIB_TMP/second.err")"
sleep 2
kill -INT "$TRACE_PID"
# The trace ran from its start to now: 2 s and what the steps before the
# sleep took, longer on a busy machine. It may print 5 events a second
# of that and a burst of 10.
ms=$(($(now_ms) - t0))
until_done "$TRACE_PID" 5
kill "$PING_PID" 2>/dev/null || true
n=$(wc -l <"$OUT")
log "trace --rate 5/s over $ms ms of 500 pps: $n events; $(cat "$OUT.err")"
((n >= 5 && n <= 5 * ms / 1000 + 10)) || fail "trace --rate 5/s: $n events in $ms ms"
sampled=$(sed -n 's/.* \([0-9]*\) left out by sampling.*/\1/p' "$OUT.err")
((sampled > 100)) || fail "trace --rate 5/s: only $sampled packets left out: $(cat "$OUT.err")"
[ "$(trace_on)" = 0 ] || fail "trace filter still on after SIGINT"
log "ok"
